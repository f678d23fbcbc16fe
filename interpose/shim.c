/*
 * shim.c - what every family of the shim shares (shim.h), below them all:
 * the configuration the mutex entry points read (ls_g) and glibc's own
 * functions (ls_real), which config.c fills; the calling thread's id, and
 * fork; deadlines; the out-of-line state blocks of mutexes. shim_rwlock.c
 * adds the rwlock and spinlock families' share.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pool.h"
#include "shim.h"
#include "wait.h"

struct ls_global ls_g = {.fast_kind = -1};
struct ls_glibc ls_real;
int (*ls_real_setcanceltype)(int, int *);

/* ---- readiness (shim.h) ---- */

/* The configuration, registered by config.c (LS_REGISTER_CONFIG): exactly
 * one. */
extern const struct ls_config *const __start_ls_config[] __attribute__((weak, visibility("hidden")));
extern const struct ls_config *const __stop_ls_config[] __attribute__((weak, visibility("hidden")));

static __thread int in_init;

void ls_init(void)
{
	int expected = 0;
	if (atomic_compare_exchange_strong_explicit(&ls_g.ready, &expected, 1, memory_order_acquire,
						    memory_order_acquire)) {
		if (!__start_ls_config || __stop_ls_config - __start_ls_config != 1) {
			ls_say("lockswap: %d configurations are registered (valid: 1)",
			       __start_ls_config ? (int)(__stop_ls_config - __start_ls_config) : 0);
			_exit(2);
		}
		const struct ls_config *c = __start_ls_config[0];
		in_init = 1;
		c->configure();
		in_init = 0;
		/* release: publishes ls_g and ls_real to every acquire of ready */
		atomic_store_explicit(&ls_g.ready, 2, memory_order_release);
		c->start();
		return;
	}
	if (in_init) {
		/* dlvsym or getenv took a pthread mutex: cannot happen with
		 * glibc 2.36, and would deadlock, so say so. */
		ls_say("lockswap: pthread call during initialisation; aborting");
		abort();
	}
	while (atomic_load_explicit(&ls_g.ready, memory_order_acquire) != 2)
		sched_yield();
}

__attribute__((constructor)) static void ctor(void)
{
	ls_init();
}

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

/* ---- out-of-line state of a mutex ---- */

/* The pool frees the block of a mutex that is gone without destroy
 * (pool.h, "Reclaiming"): first what its state holds, as destroy would. */
static void mutex_ext_reclaim(struct ls_ext_head *h)
{
	const struct ls_algo *a = h->kind;
	if (a->destroy)
		a->destroy((struct ls_ext *)h + 1);
}

/* A fresh block for m, initialised for algorithm a; NULL only if wait is
 * false and no memory can be had without the pool's reserve (pool.h). The
 * size fits a block: configuration refuses an algorithm whose state does
 * not. Reclaimable: attach it with ls_ext_attach (which marks it attached)
 * and take it back with ls_ext_take. */
struct ls_ext *ls_mutex_ext_new(struct ls_mutex *m, const struct ls_algo *a, bool wait)
{
	size_t size = sizeof(struct ls_ext) + a->state_size;
	struct ls_ext *e = ls_ext_alloc_for(&m->alg.ext, size, wait);
	if (e) {
		/* relaxed atomic: a stale copy of another mutex may read it */
		__atomic_store_n(&e->h.owner, (const void *)&m->alg.ext, __ATOMIC_RELAXED);
		e->h.kind = a;
		e->h.reclaim = ls_ext_reclaim_id(mutex_ext_reclaim);
		e->h.idle = 1; /* every use enters it (shim.h) */
		/* relaxed: a hint; a fresh block outlives the pool's next look */
		atomic_store_explicit(&e->h.used, 1, memory_order_relaxed);
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

__attribute__((noinline)) void *ls_mutex_ext_enter_slow(struct ls_mutex *m, ls_algo_of_fn *algo_of)
{
	for (;;) {
		ls_mutex_ext_attach(m, algo_of(m));
		/* the pool may have freed it since (an idle lock's block): again */
		struct ls_ext *e = (struct ls_ext *)ls_ext_enter(&m->alg.ext);
		if (e)
			return e + 1;
	}
}

__attribute__((noinline)) void ls_mutex_ext_unlock_slow(struct ls_mutex *m, ls_algo_of_fn *algo_of,
							void (*unlock)(void *))
{
	void *st = ls_mutex_ext_enter(m, algo_of);
	unlock(st);
	ls_mutex_ext_leave(st);
	ls_mutex_ext_leave(st); /* the lock's hold, if this thread has one */
}
