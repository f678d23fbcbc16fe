/*
 * peek.c - reading the process's own words without faulting, and a barrier
 * on all its threads (peek.h), for the pool's reclamation of the blocks of
 * locks that are gone (pool.h, "Reclaiming").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lock.h"
#include "peek.h"

enum { RECLAIM_AUTO, RECLAIM_ON, RECLAIM_OFF };
static int mode = RECLAIM_AUTO;

static int parse_reclaim(const char *value, char *err, size_t errlen)
{
	if (!strcmp(value, "auto"))
		mode = RECLAIM_AUTO;
	else if (!strcmp(value, "on"))
		mode = RECLAIM_ON;
	else if (!strcmp(value, "off"))
		mode = RECLAIM_OFF;
	else {
		snprintf(err, errlen, "LOCKSWAP_RECLAIM='%s' is not one of auto, on, off", value);
		return -1;
	}
	return 0;
}

static const struct ls_option reclaim_option = {
    .env = "LOCKSWAP_RECLAIM",
    .desc = "out-of-line state of locks freed without destroy: auto (default: reclaimed unless a seccomp "
	    "filter is on), on (also under a filter), off",
    .parse = parse_reclaim,
};
LS_REGISTER_OPTION(reclaim_option);

static pid_t self;
static int barrier_cmd; /* 0: not known yet; -1: none */
static int saved_errno;

/* Whether a seccomp filter is on (or /proc cannot tell): the Seccomp line
 * of /proc/self/status, "0" when there is none. */
static bool filtered(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	size_t n = 0;
	ssize_t r;
	while (n < sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	const char *s = strstr(buf, "\nSeccomp:");
	if (!s)
		return false; /* a kernel without seccomp */
	s += strlen("\nSeccomp:");
	while (*s == ' ' || *s == '\t')
		s++;
	return *s != '0';
}

bool ls_peek_begin(void)
{
	saved_errno = errno;
	if (mode == RECLAIM_OFF || (mode == RECLAIM_AUTO && filtered())) {
		errno = saved_errno;
		return false;
	}
	self = getpid(); /* not cached across calls: a fork child has its own */
	return true;
}

void ls_peek_end(void)
{
	errno = saved_errno;
}

/* A word that process_vm_readv could not read: gone if its page is not
 * mapped (mincore: ENOMEM), else mapped but unreadable. */
static uint8_t unread(uintptr_t addr)
{
	unsigned char v;
	uintptr_t page = addr & ~(uintptr_t)4095;
	if (mincore((void *)page, 4096, &v) < 0 && errno == ENOMEM)
		return LS_PEEK_GONE;
	return LS_PEEK_UNREADABLE;
}

bool ls_peek_words(const uintptr_t *addr, uintptr_t *val, uint8_t *how, unsigned n)
{
	static struct iovec local[LS_PEEK_MAX], remote[LS_PEEK_MAX]; /* under the caller's lock */
	unsigned i = 0;
	while (i < n) {
		unsigned k = n - i;
		for (unsigned j = 0; j < k; j++) {
			local[j] = (struct iovec){&val[i + j], sizeof *val};
			remote[j] = (struct iovec){(void *)addr[i + j], sizeof *val};
		}
		/* Elements are transferred whole and in order; the first one
		 * that cannot be read ends the call (-1 EFAULT if it is the
		 * first of all). */
		ssize_t r = process_vm_readv(self, local, k, remote, k, 0);
		if (r < 0 && errno != EFAULT)
			return false; /* ENOSYS, EPERM (a filter), ESRCH...: nothing known */
		unsigned done = r < 0 ? 0 : (unsigned)((size_t)r / sizeof *val);
		for (unsigned j = 0; j < done; j++)
			how[i + j] = LS_PEEK_READ;
		i += done;
		if (i < n) {
			how[i] = unread(addr[i]);
			i++;
		}
	}
	return true;
}

bool ls_peek_barrier(void)
{
	if (!barrier_cmd) {
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
			barrier_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
		} else {
			long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
			barrier_cmd = q > 0 && (q & MEMBARRIER_CMD_GLOBAL) ? MEMBARRIER_CMD_GLOBAL : -1;
		}
	}
	if (barrier_cmd < 0)
		return false;
	if (syscall(SYS_membarrier, barrier_cmd, 0, 0) == 0)
		return true;
	/* A process that forked from one that had registered: register it. */
	if (errno == EPERM && barrier_cmd == MEMBARRIER_CMD_PRIVATE_EXPEDITED &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
	    syscall(SYS_membarrier, barrier_cmd, 0, 0) == 0)
		return true;
	return false;
}
