/*
 * nomem.h - no address space left, for the unit programs that check what
 * the pool and the locks do without memory (hier_nomem, rw_nomem,
 * ext_reclaim refused): RLIMIT_AS lowered to the size the process has, then
 * every block the pool still has, of the sizes asked for, taken; and both
 * given back. Include after fail.h (fail() reports).
 */
#ifndef LS_TEST_NOMEM_H
#define LS_TEST_NOMEM_H

#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pool.h"

struct nomem {
	struct rlimit saved; /* the limit before */
	void **blocks;	     /* what was taken, and its sizes */
	size_t *sizes;
	size_t n, max;
};

/* The size of the address space, with plain syscalls (no malloc). */
static inline size_t nomem_as_size(void)
{
	char buf[128];
	int fd = open("/proc/self/statm", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		fail("cannot read /proc/self/statm");
	buf[n] = 0;
	return (size_t)strtoul(buf, NULL, 10) * (size_t)sysconf(_SC_PAGESIZE);
}

/* No address space left: the limit at the current size, then blocks of
 * each of the nsizes sizes taken (largest first, as given) until the pool
 * has none, into m->blocks (room for m->max). Threads that need a stack
 * must be made before. */
static inline void nomem_begin(struct nomem *m, const size_t *sizes, size_t nsizes)
{
	if (getrlimit(RLIMIT_AS, &m->saved))
		fail("getrlimit(RLIMIT_AS) failed");
	struct rlimit r = {nomem_as_size(), m->saved.rlim_max};
	if (setrlimit(RLIMIT_AS, &r))
		fail("setrlimit(RLIMIT_AS) failed");
	m->n = 0;
	for (size_t k = 0; k < nsizes; k++)
		while (m->n < m->max && (m->blocks[m->n] = ls_ext_alloc(sizes[k])))
			m->sizes[m->n++] = sizes[k];
	if (m->n == m->max)
		fail("the pool still gives blocks after %zu: is RLIMIT_AS enforced?", m->max);
}

/* Address space back: the limit as it was, the blocks given back. */
static inline void nomem_end(struct nomem *m)
{
	if (setrlimit(RLIMIT_AS, &m->saved))
		fail("cannot restore RLIMIT_AS");
	while (m->n) {
		m->n--;
		ls_ext_free(m->blocks[m->n], m->sizes[m->n]);
	}
}

#endif
