/*
 * shim.c - what every family of the shim shares (shim.h, rwshim.h), below
 * them all: the configuration the entry points read (ls_g, ls_rwg) and
 * glibc's own functions (ls_real, ls_rwreal), which config.c fills; the
 * calling thread's id, and fork; deadlines; the out-of-line state blocks of
 * mutexes and rwlocks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pool.h"
#include "rwshim.h"
#include "shim.h"
#include "wait.h"

struct ls_global ls_g = {.fast_kind = -1};
struct ls_glibc ls_real;
int (*ls_real_setcanceltype)(int, int *);
struct ls_rwglobal ls_rwg;
struct ls_rwreal ls_rwreal;

/* ---- the calling thread ---- */

__thread int ls_tls_tid __attribute__((tls_model("initial-exec")));

int ls_self_tid_slow(void)
{
	return ls_tls_tid = (int)syscall(SYS_gettid);
}

/* fork: the child's only thread has a new tid (as in glibc, a mutex the
 * parent's thread owned is not owned by the child's). */
static void atfork_child(void)
{
	ls_tls_tid = 0;
}

static void atfork_child_all(void)
{
	atfork_child();
	ls_pool_fork_child();
}

__attribute__((constructor(101))) static void register_atfork(void)
{
	/* The pool's region lock is held across fork so that the child never
	 * inherits it held by a thread that does not exist there. */
	pthread_atfork(ls_pool_fork_prepare, ls_pool_fork_parent, atfork_child_all);
}

/* ---- deadlines ---- */

int ls_to_deadline(clockid_t clock, const struct timespec *abs, uint64_t *out)
{
	if (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L)
		return EINVAL;
	if (abs->tv_sec < 0)
		return ETIMEDOUT;
	uint64_t want = (uint64_t)abs->tv_sec * 1000000000u + (uint64_t)abs->tv_nsec;
	if (clock == CLOCK_MONOTONIC) {
		if (want <= ls_now_ns())
			return ETIMEDOUT;
		*out = want;
		return 0;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t rt = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	if (want <= rt)
		return ETIMEDOUT;
	*out = ls_now_ns() + (want - rt);
	return 0;
}

/* ---- out-of-line state of a mutex ---- */

/* A fresh block for m, initialised for algorithm a; NULL only if wait is
 * false and no memory can be had without the pool's reserve (pool.h). The
 * size fits a block: configuration refuses an algorithm whose state does
 * not. */
struct ls_ext *ls_mutex_ext_new(struct ls_mutex *m, const struct ls_algo *a, bool wait)
{
	size_t size = sizeof(struct ls_ext) + a->state_size;
	struct ls_ext *e = wait ? ls_ext_alloc_wait(size) : ls_ext_alloc(size);
	if (e) {
		/* relaxed atomic: a stale copy of another mutex may read it */
		__atomic_store_n(&e->h.owner, (const void *)&m->alg.ext, __ATOMIC_RELAXED);
		e->h.kind = a;
		if (a->init)
			a->init(e + 1);
	}
	return e;
}

/* On a lock path, which cannot fail: the pool's reserve, or a wait. */
void *ls_mutex_ext_attach(struct ls_mutex *m, const struct ls_algo *a)
{
	struct ls_ext *e = ls_mutex_ext_new(m, a, true);
	return (struct ls_ext *)ls_ext_attach(&m->alg.ext, &e->h, sizeof(struct ls_ext) + a->state_size,
					      NULL) +
	       1;
}

/* ---- out-of-line state of an rwlock (rwshim.h), for ls_rwg's algorithm ---- */

size_t ls_rw_ext_size(void)
{
	return sizeof(struct ls_rwext) + ls_rwg.rw_size;
}

struct ls_rwext *ls_rw_ext_new(struct ls_rwlock *l, bool wait)
{
	struct ls_rwext *e = wait ? ls_ext_alloc_wait(ls_rw_ext_size()) : ls_ext_alloc(ls_rw_ext_size());
	if (e) {
		/* relaxed atomic: a stale copy of another rwlock may read it */
		__atomic_store_n(&e->h.owner, (const void *)&l->alg.ext, __ATOMIC_RELAXED);
		e->h.kind = ls_rwg.rw;
		if (ls_rwg.rw->init)
			ls_rwg.rw->init(e + 1);
	}
	return e;
}

__attribute__((noinline)) void *ls_rw_ext_attach(struct ls_rwlock *l)
{
	struct ls_rwext *e = ls_rw_ext_new(l, true);
	return (struct ls_rwext *)ls_ext_attach(&l->alg.ext, &e->h, ls_rw_ext_size(), NULL) + 1;
}
