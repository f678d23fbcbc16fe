/*
 * rwlock.c - the pthread_rwlock_* entry points.
 *
 * The layout of a pthread_rwlock_t, its out-of-line state and the
 * configuration are shim_rwlock.h's; the general and checked paths are
 * rwlock_acquire.c's, the calling thread's read holds rwlock_held.c's, an
 * algorithm per rwlock bind.h's.
 *
 * glibc 2.36's semantics, kept here whatever the algorithm (rwlock.h says
 * what the algorithms see):
 *   write holder   rdlock, wrlock and their timed variants: EDEADLK;
 *                  tryrdlock, trywrlock: EBUSY.
 *   reader         wrlock by a thread that holds a read lock waits for
 *                  itself, as in glibc (trywrlock: EBUSY, timed: ETIMEDOUT).
 *   recursion      under the default kind a thread may take a read lock it
 *                  holds again, even while a writer waits: the shim counts
 *                  it (per thread: rwlock_held.h) and calls no algorithm; EAGAIN
 *                  past glibc's limit (2^28 - 1 holds). Under
 *                  PREFER_WRITER_NONRECURSIVE_NP every read goes to the
 *                  algorithm with writer preference asked for, so a reader
 *                  waits behind a waiting writer even if it holds the lock
 *                  (glibc deadlocks there; a timed attempt times out).
 *   preference     the kind's (ls_rw_how, shim_rwlock.h; rwlock.h,
 *                  PREFERENCE): reader preference for the default kind,
 *                  writer preference for PREFER_WRITER_NONRECURSIVE_NP;
 *                  under LOCKSWAP_RWPOLICY=algorithm the algorithm's own
 *                  policy for the default kind.
 *   timed          EINVAL first (with a timespec: a clock other than
 *                  CLOCK_REALTIME and CLOCK_MONOTONIC, tv_nsec outside
 *                  [0, 1e9)), even when the lock is free; then EDEADLK;
 *                  then an attempt; then ETIMEDOUT for a deadline already
 *                  past. A NULL timespec waits without limit, whatever the
 *                  clock, as in glibc 2.36. A CLOCK_REALTIME deadline is
 *                  converted to a CLOCK_MONOTONIC one when the wait starts,
 *                  by ls_deadline_ns: a time past 64 bits of nanoseconds
 *                  (tv_sec up to LONG_MAX) never comes. A timed writer
 *                  waits in the algorithm's own timed writer, keeping
 *                  readers out as an untimed one (rwlock.h).
 *   unlock         by the write holder: a write unlock; by a thread holding
 *                  a read lock: a read unlock (the last of its recursive
 *                  holds releases the algorithm's); by any other thread: 0
 *                  and nothing changes. glibc would decrement its reader
 *                  count there: it releases one of another thread's read
 *                  holds, or, on an unheld rwlock, leaves a count of -1
 *                  that makes every later writer wait for ever (issue 25:
 *                  misuse must not hang).
 *   destroy        always 0, as glibc's (which does nothing): a held lock
 *                  stays as it is and keeps working; a free one gives its
 *                  out-of-line block back and stays usable (zero state).
 *   init           the kind in __flags as glibc stores it; process-shared
 *                  rwlocks are glibc's (their state must live in the shared
 *                  memory and work across processes).
 *
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "bind.h"
#include "pool.h"
#include "rwlock.h"
#include "rwlock_acquire.h"
#include "rwlock_held.h"
#include "shim_cancel.h"
#include "shim_rwlock.h"

/* ---- the entry points ----
 *
 * Each exported pthread_rwlock_* is one indirect jump through `entry`,
 * whose targets are chosen once, when the configuration is read:
 *   before     the *_first functions: initialise, then jump again;
 *   glibc's    under the passthrough (LOCKSWAP_RWALGO=pthread, the default)
 *              glibc's own functions: the program runs glibc's code and
 *              pays one jump per call, nothing else;
 *   lockswap's the fast functions (compiled once for inline and once for
 *              out-of-line state), which take for granted what holds until
 *              a thread of the process makes itself asynchronously
 *              cancelable; ls_rw_async_on (shim_cancel.c) then swaps them for the
 *              checked functions, which test everything on every call (as
 *              the mutexes' LS_KIND_SLOW does). An observer (the profiler)
 *              is given the checked functions to wrap, and the entries jump
 *              to its wrappers (observe.h).
 * Why not an IFUNC, which could bind the program straight to glibc's
 * functions: ld.so relocates a library bound at load time (BIND_NOW, as
 * Debian builds libcrypto.so.3) before the preloaded liblockswap.so, so it
 * would call the resolver before liblockswap's own relocations are done,
 * and print "Relink ... for IFUNC symbol" on stderr in every such program
 * (results/rwlock/README.md shows it).
 *
 * The jump's load is relaxed on x86-64: there every load is an acquire in
 * the hardware, and the compiler cannot move the callee's loads of the
 * configuration above the load of the callee's address; C11's acquire would
 * cost an instruction more (GCC 12: mov, then jmp, instead of jmp *mem). */
#if defined(__x86_64__)
#define ENTRY_ORDER __ATOMIC_RELAXED
#else
#define ENTRY_ORDER __ATOMIC_ACQUIRE
#endif
#define ENTRY(op) ((__typeof__(entry.op))__atomic_load_n(&entry.op, ENTRY_ORDER))

static struct ls_rwlock_ops entry; /* (below, with its first targets) */
static int unlock_write_in(pthread_rwlock_t *rw);
static int unlock_write_ext(pthread_rwlock_t *rw);
static int unlock_write_map(pthread_rwlock_t *rw);

/* -- read -- */

/* The fast read lock: the caller holds no read lock (so none of this one),
 * the lock is neither write-held (so not by the caller) nor
 * process-shared, and its life is stamped (shim_rwlock.h). The hold is
 * registered before the call, which writes its token in place: the call
 * then keeps nothing of ours alive. */
static inline __attribute__((always_inline)) int rdlock_fast(pthread_rwlock_t *rw, bool ext)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	uint32_t gen = ls_rw_gen(l);
	if (LS_UNLIKELY((__atomic_load_n(&l->writer_shared, __ATOMIC_RELAXED) | (uintptr_t)ls_rd.one.lock) !=
			    0 ||
			!gen))
		return ls_rw_rdlock_general(rw);
	/* (not before: a process-shared rwlock's first word is glibc's) */
	void *st = ls_rw_state_fast_enter(l, ext);
	if (ext && LS_UNLIKELY(!st))
		return ls_rw_rdlock_general(rw);
	ls_rd.one.token = NULL;
	ls_rd.one.gen = gen;
	ls_rd.one.lock = l;
	int r = ls_rwg.rdlock(st, ls_rw_how(l), &ls_rd.one.token);
	if (LS_UNLIKELY(r)) {
		ls_rd.one.lock = NULL;
		if (ext)
			ls_hold_drop_top(); /* st's (pool.h) */
	}
	return r;
}

/* The fast read lock under a map whose table is below 4 GiB: as
 * rdlock_fast, for a bound rwlock (one without its binding takes the general
 * path, which binds it), calling its entry's operation on the rwlock. */
static __attribute__((noinline)) int rdlock_fast_map(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
	uint32_t gen = ls_rw_gen(l);
	if (LS_UNLIKELY((__atomic_load_n(&l->writer_shared, __ATOMIC_RELAXED) | (uintptr_t)ls_rd.one.lock) !=
			    0 ||
			!w || !gen))
		return ls_rw_rdlock_general(rw);
	ls_rd.one.token = NULL;
	ls_rd.one.gen = gen;
	ls_rd.one.lock = l;
	int r = ((const struct ls_bind *)(uintptr_t)w)
		    ->op.rw.rdlock(l->alg.state, ls_rw_how(l), &ls_rd.one.token);
	if (LS_UNLIKELY(r))
		ls_rd.one.lock = NULL;
	return r;
}

static __attribute__((noinline)) int rdlock_fast_in(pthread_rwlock_t *rw)
{
	return rdlock_fast(rw, false);
}

static __attribute__((noinline)) int rdlock_fast_ext(pthread_rwlock_t *rw)
{
	return rdlock_fast(rw, true);
}

/* -- write -- */

/* The fast write lock: the lock is neither write-held nor process-shared
 * (so the caller is not its writer). */
static inline __attribute__((always_inline)) int wrlock_fast(pthread_rwlock_t *rw, bool ext)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (LS_UNLIKELY(!ls_rw_plain(l)))
		return ls_rw_wrlock_general(rw);
	void *st = ls_rw_state_fast_enter(l, ext); /* (not before: see rdlock_fast) */
	if (ext && LS_UNLIKELY(!st))
		return ls_rw_wrlock_general(rw);
	ls_rwg.wrlock(st, ls_rw_how(l));
	ls_rw_store_writer(l, ls_self_tid());
	return 0;
}

/* The fast write lock under a map whose table is below 4 GiB: as
 * wrlock_fast, for a bound rwlock, through its entry. */
static __attribute__((noinline)) int wrlock_fast_map(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
	if (LS_UNLIKELY(!ls_rw_plain(l) || !w))
		return ls_rw_wrlock_general(rw);
	((const struct ls_bind *)(uintptr_t)w)->op.rw.wrlock(l->alg.state, ls_rw_how(l));
	ls_rw_store_writer(l, ls_self_tid());
	return 0;
}

static __attribute__((noinline)) int wrlock_fast_in(pthread_rwlock_t *rw)
{
	return wrlock_fast(rw, false);
}

static __attribute__((noinline)) int wrlock_fast_ext(pthread_rwlock_t *rw)
{
	return wrlock_fast(rw, true);
}

/* -- unlock -- */

/* The fast unlock: the caller's only read hold, of this lock's life, not
 * recursive (so the lock is neither write-held nor process-shared); the
 * rest, a write unlock first, out of line (so that the read path saves no
 * register). */
static inline __attribute__((always_inline)) int unlock_fast(pthread_rwlock_t *rw, bool ext)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (LS_LIKELY(ls_rd.one.lock == l && ls_rd.one.gen == ls_rw_gen(l))) {
		/* l is lockswap's (so its first word is ours): a block was
		 * attached when it was taken */
		void *st = ls_rw_state_fast_held(l, ext);
		if (!ext || LS_LIKELY(st != NULL)) {
			void *token = ls_rd.one.token;
			ls_rd.one.lock = NULL;
			ls_rwg.rdunlock(st, token);
			ls_rw_state_leave(st, ext); /* compares the block only */
			return 0;
		}
	}
	return ext ? unlock_write_ext(rw) : unlock_write_in(rw);
}

/* The write unlock by its writer of a lock that is not process-shared;
 * anything else is general. */
static inline __attribute__((always_inline)) int unlock_write(pthread_rwlock_t *rw, bool ext)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	uint64_t ws = __atomic_load_n(&l->writer_shared, __ATOMIC_RELAXED);
	if (ws == 0 || ws != (uint32_t)ls_self_tid())
		return ls_rw_unlock_general(rw);
	/* before the release: afterwards the lock may be gone */
	ls_rw_store_writer(l, 0);
	void *st = ls_rw_state_release(l, ext);
	ls_rwg.wrunlock(st);
	ls_rw_state_leave(st, ext); /* compares the block only */
	return 0;
}

/* The write unlock under a map whose table is below 4 GiB (a write-held
 * rwlock is bound). */
static __attribute__((noinline)) int unlock_write_map(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	uint64_t ws = __atomic_load_n(&l->writer_shared, __ATOMIC_RELAXED);
	if (ws == 0 || ws != (uint32_t)ls_self_tid())
		return ls_rw_unlock_general(rw);
	ls_rw_store_writer(l, 0); /* before the release: afterwards the lock may be gone */
	uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
	((const struct ls_bind *)(uintptr_t)w)->op.rw.wrunlock(l->alg.state);
	return 0;
}

static __attribute__((noinline)) int unlock_write_in(pthread_rwlock_t *rw)
{
	return unlock_write(rw, false);
}

static __attribute__((noinline)) int unlock_write_ext(pthread_rwlock_t *rw)
{
	return unlock_write(rw, true);
}

/* The fast unlock under a map whose table is below 4 GiB: a read hold's
 * rwlock was bound when it was taken. */
static __attribute__((noinline)) int unlock_fast_map(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (LS_LIKELY(ls_rd.one.lock == l && ls_rd.one.gen == ls_rw_gen(l))) {
		void *token = ls_rd.one.token;
		ls_rd.one.lock = NULL;
		uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
		((const struct ls_bind *)(uintptr_t)w)->op.rw.rdunlock(l->alg.state, token);
		return 0;
	}
	return unlock_write_map(rw);
}

static __attribute__((noinline)) int unlock_fast_in(pthread_rwlock_t *rw)
{
	return unlock_fast(rw, false);
}

static __attribute__((noinline)) int unlock_fast_ext(pthread_rwlock_t *rw)
{
	return unlock_fast(rw, true);
}

/* ---- init / destroy ---- */

static int init_rwlock(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	int kind = PTHREAD_RWLOCK_DEFAULT_NP, pshared = PTHREAD_PROCESS_PRIVATE;
	if (attr) {
		pthread_rwlockattr_getkind_np(attr, &kind);
		pthread_rwlockattr_getpshared(attr, &pshared);
	}
	if (!ls_rwg.rw_on || pshared != PTHREAD_PROCESS_PRIVATE)
		return ls_rwreal.rw.init(rw, attr);

	/* Memory that held one of our rwlocks (destroyed, or reused without
	 * destroy): its out-of-line block is kept if the new rwlock runs the
	 * same algorithm (under a map: its old binding's), else it goes back
	 * to the pool. A pointer outside the region, or a binding word that
	 * names no entry, is garbage and what it would point to is never
	 * read. Relaxed: init of memory no other thread may use meanwhile. */
	const struct ls_rwalgo *a = ls_rwg.rw;
	bool ext = ls_rwg.rw_ext;
	const struct ls_bind *b = NULL;
	if (ls_rwg.map) {
		b = ls_bind_checked(&ls_bind_rwlocks, atomic_load_explicit(&l->bind, memory_order_relaxed));
		a = b ? b->algo.rw : NULL;
		ext = b && b->ext;
	}
	struct ls_rwext *old = NULL;
	if (ext) {
		/* taken, or left to the pool, as a mutex's (mutex.c) */
		struct ls_ext_head *e = atomic_load_explicit(&l->alg.ext, memory_order_relaxed);
		if (ls_ext_adoptable(&l->alg.ext, e, a) && ls_ext_take(&l->alg.ext, NULL) == e)
			old = (struct ls_rwext *)e;
	}
	memset(l, 0, sizeof *l);
	l->flags = (uint32_t)kind; /* as glibc: the kind itself */
	l->gen = ls_rw_gen_new();  /* a new life: no read hold of an earlier one counts */
	if (ls_rwg.map) {
		/* its binding: the rule the caller's stack matches (bind.h) */
		const struct ls_rwalgo *olda = a;
		b = ls_bind_match(&ls_bind_rwlocks);
		a = b->algo.rw;
		ext = b->ext;
		if (old && a != olda) {
			ls_ext_free(old, ls_rw_ext_size(olda));
			old = NULL;
		}
	}
	int r = 0;
	if (old) {
		memset(old + 1, 0, a->state_size);
		if (a->init)
			a->init(old + 1);
		ls_ext_attach(&l->alg.ext, &old->h, ls_rw_ext_size(a), NULL);
	} else if (ext) {
		/* As for mutexes (mutex.c): where failing is allowed, no
		 * memory without the pool's reserve is ENOMEM, and the rwlock
		 * is still valid, like a static initialiser (it attaches its
		 * block at first use). */
		struct ls_rwext *e = ls_rw_ext_new(l, a, false);
		if (e) /* marked attached: reclaimable (pool.h) */
			ls_ext_attach(&l->alg.ext, &e->h, ls_rw_ext_size(a), NULL);
		else
			r = ENOMEM;
	} else if (a->init) {
		a->init(l->alg.state);
	}
	if (ls_rwg.map) {
		atomic_store_explicit(&l->bind, ls_bind_word(&ls_bind_rwlocks, b), memory_order_relaxed);
		ls_bind_count(&ls_bind_rwlocks, b);
	}
	return r;
}

static int init_checked(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	return LS_CANCEL_DEFERRED(init_rwlock(rw, attr));
}

static int destroy_rwlock(struct ls_rwlock *l)
{
	const struct ls_rwalgo *a = ls_rwg.rw;
	bool ext = ls_rwg.rw_ext;
	if (ls_rwg.map) {
		/* the rwlock's own algorithm (bind.h) */
		uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
		if (!w)
			return 0; /* never initialised nor used: nothing to give back */
		const struct ls_bind *b = ls_bind_at(&ls_bind_rwlocks, w);
		a = b->algo.rw;
		ext = b->ext;
	}
	void *st = l->alg.state;
	if (ext) {
		/* entered (shim_rwlock.h), so that the pool leaves it alone */
		struct ls_rwext *e = (struct ls_rwext *)ls_ext_enter(&l->alg.ext);
		if (!e)
			return 0; /* never used here (or being freed): nothing to give back */
		st = e + 1;
	}
	if (a->trywrlock(st, 0)) {
		if (ext)
			ls_rw_ext_leave(st);
		return 0; /* held or waited for: glibc's destroy changes nothing either */
	}
	a->wrunlock(st);
	if (a->destroy)
		a->destroy(st);
	if (ext) {
		struct ls_ext_head *e = ls_ext_take(&l->alg.ext, NULL); /* as a mutex's */
		ls_rw_ext_leave(st);					/* before it can be reused */
		if (e)
			ls_ext_free(e, ls_rw_ext_size(a));
	}
	return 0;
}

static int destroy_checked(pthread_rwlock_t *rw)
{
	if (ls_rw_is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.destroy(rw);
	return LS_CANCEL_DEFERRED(destroy_rwlock((struct ls_rwlock *)rw));
}

/* ---- choosing the entries ---- */

/* Before the configuration: initialise, then jump again. */
#define FIRST(op, params, args)                                                                              \
	static int op##_first params                                                                         \
	{                                                                                                    \
		ls_ensure_init();                                                                            \
		return ENTRY(op) args;                                                                       \
	}
FIRST(init, (pthread_rwlock_t * rw, const pthread_rwlockattr_t *a), (rw, a))
FIRST(destroy, (pthread_rwlock_t * rw), (rw))
FIRST(rdlock, (pthread_rwlock_t * rw), (rw))
FIRST(tryrdlock, (pthread_rwlock_t * rw), (rw))
FIRST(timedrdlock, (pthread_rwlock_t * rw, const struct timespec *t), (rw, t))
FIRST(clockrdlock, (pthread_rwlock_t * rw, clockid_t c, const struct timespec *t), (rw, c, t))
FIRST(wrlock, (pthread_rwlock_t * rw), (rw))
FIRST(trywrlock, (pthread_rwlock_t * rw), (rw))
FIRST(timedwrlock, (pthread_rwlock_t * rw, const struct timespec *t), (rw, t))
FIRST(clockwrlock, (pthread_rwlock_t * rw, clockid_t c, const struct timespec *t), (rw, c, t))
FIRST(unlock, (pthread_rwlock_t * rw), (rw))

static struct ls_rwlock_ops entry = {
    init_first,	  destroy_first,   rdlock_first,      tryrdlock_first,	 timedrdlock_first, clockrdlock_first,
    wrlock_first, trywrlock_first, timedwrlock_first, clockwrlock_first, unlock_first,
};

void ls_rw_entries(struct ls_rwlock_ops *o, bool fast)
{
	if (!ls_rwg.rw_on) {
		*o = ls_rwreal.rw;
		return;
	}
	bool ext = ls_rwg.rw_ext, map = ls_rwg.map && ls_rwg.map_near;
	*o = (struct ls_rwlock_ops){
	    .init = init_checked,
	    .destroy = destroy_checked,
	    .rdlock = !fast ? ls_rw_rdlock_checked
		      : map ? rdlock_fast_map
		      : ext ? rdlock_fast_ext
			    : rdlock_fast_in,
	    .tryrdlock = fast ? ls_rw_tryrdlock_fast : ls_rw_tryrdlock_checked,
	    .timedrdlock = ls_rw_timedrdlock_checked,
	    .clockrdlock = ls_rw_clockrdlock_checked,
	    .wrlock = !fast ? ls_rw_wrlock_checked
		      : map ? wrlock_fast_map
		      : ext ? wrlock_fast_ext
			    : wrlock_fast_in,
	    .trywrlock = fast ? ls_rw_trywrlock_fast : ls_rw_trywrlock_checked,
	    .timedwrlock = ls_rw_timedwrlock_checked,
	    .clockwrlock = ls_rw_clockwrlock_checked,
	    .unlock = !fast ? ls_rw_unlock_checked
		      : map ? unlock_fast_map
		      : ext ? unlock_fast_ext
			    : unlock_fast_in,
	};
}

/* release: pairs with the acquire of ls_g.ready in ls_ensure_init (the
 * *_first functions) and, on x86-64, with the hardware's (ENTRY_ORDER). */
#define PUBLISH(op) __atomic_store_n(&entry.op, o->op, __ATOMIC_RELEASE)

void ls_rw_publish(const struct ls_rwlock_ops *o)
{
	PUBLISH(init);
	PUBLISH(destroy);
	PUBLISH(rdlock);
	PUBLISH(tryrdlock);
	PUBLISH(timedrdlock);
	PUBLISH(clockrdlock);
	PUBLISH(wrlock);
	PUBLISH(trywrlock);
	PUBLISH(timedwrlock);
	PUBLISH(clockwrlock);
	PUBLISH(unlock);
}

/* A fast entry becomes the checked one (an observer's wrapper, or glibc's
 * function, stays). */
#define TO_CHECKED(op, from, to)                                                                             \
	do {                                                                                                 \
		__typeof__(entry.op) f_ = from;                                                              \
		__atomic_compare_exchange_n(&entry.op, &f_, to, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);  \
	} while (0)

void ls_rw_async_on(void)
{
	TO_CHECKED(rdlock, rdlock_fast_in, ls_rw_rdlock_checked);
	TO_CHECKED(rdlock, rdlock_fast_ext, ls_rw_rdlock_checked);
	TO_CHECKED(rdlock, rdlock_fast_map, ls_rw_rdlock_checked);
	TO_CHECKED(tryrdlock, ls_rw_tryrdlock_fast, ls_rw_tryrdlock_checked);
	TO_CHECKED(wrlock, wrlock_fast_in, ls_rw_wrlock_checked);
	TO_CHECKED(wrlock, wrlock_fast_ext, ls_rw_wrlock_checked);
	TO_CHECKED(wrlock, wrlock_fast_map, ls_rw_wrlock_checked);
	TO_CHECKED(trywrlock, ls_rw_trywrlock_fast, ls_rw_trywrlock_checked);
	TO_CHECKED(unlock, unlock_fast_in, ls_rw_unlock_checked);
	TO_CHECKED(unlock, unlock_fast_ext, ls_rw_unlock_checked);
	TO_CHECKED(unlock, unlock_fast_map, ls_rw_unlock_checked);
}

/* ---- the exported symbols: one jump each ---- */

#define EXPORT(op, v1, params, args)                                                                         \
	LS_EXPORT __attribute__((symver("pthread_rwlock_" #op "@@GLIBC_2.34"),                               \
				 symver("pthread_rwlock_" #op "@" v1))) int ls_pthread_rwlock_##op params    \
	{                                                                                                    \
		return ENTRY(op) args;                                                                       \
	}
EXPORT(init, "GLIBC_2.2.5", (pthread_rwlock_t * rw, const pthread_rwlockattr_t *a), (rw, a))
EXPORT(destroy, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
EXPORT(rdlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
EXPORT(tryrdlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
EXPORT(timedrdlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw, const struct timespec *t), (rw, t))
EXPORT(clockrdlock, "GLIBC_2.30", (pthread_rwlock_t * rw, clockid_t c, const struct timespec *t), (rw, c, t))
EXPORT(wrlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
EXPORT(trywrlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
EXPORT(timedwrlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw, const struct timespec *t), (rw, t))
EXPORT(clockwrlock, "GLIBC_2.30", (pthread_rwlock_t * rw, clockid_t c, const struct timespec *t), (rw, c, t))
EXPORT(unlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
