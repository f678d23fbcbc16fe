/*
 * mutex.c - the pthread_mutex_* entry points.
 *
 * Fast path (lock, trylock, unlock): a NORMAL mutex. One load of __kind,
 * compared with ls_g.fast_kind (0 once initialised, -1 before and under
 * passthrough), then a call into the algorithm (for out-of-line state, into
 * ls_ext_* which find the block). Everything else - types, glibc's mutexes,
 * initialisation - is on the slow path.
 *
 * POSIX and glibc semantics kept here, whatever the algorithm:
 *   RECURSIVE   owner tid + count; EAGAIN when the count would overflow;
 *               EPERM on unlock by a non-owner.
 *   ERRORCHECK  EDEADLK on relock; EPERM on unlock by a non-owner or of an
 *               unlocked mutex; trylock by the owner is EBUSY.
 *   NORMAL      no ownership: any thread may unlock (glibc tolerates it).
 *   timed       trylock first; then EINVAL for tv_nsec outside [0, 1e9),
 *               ETIMEDOUT for a deadline already past; clocklock accepts
 *               CLOCK_REALTIME and CLOCK_MONOTONIC only (EINVAL otherwise,
 *               checked first, as glibc does); a NULL timespec waits
 *               without limit, as glibc.
 *   destroy     EBUSY while locked, or while condvar waiters have released
 *               it (see "condvar users" below); then __kind = -1 as glibc
 *               does, so a use after destroy gets glibc's EINVAL.
 * A CLOCK_REALTIME deadline is converted to a CLOCK_MONOTONIC one when the
 * wait starts: a later step of the realtime clock does not move it. Every
 * timespec goes through ls_deadline_ns (wait.h): one past 64 bits of
 * nanoseconds (tv_sec up to LONG_MAX) never comes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "mutex.h"
#include "pool.h"
#include "shim.h"
#include "shim_cancel.h"
#include "wait.h"

static int self_tid(void)
{
	return ls_self_tid();
}

static inline int load_owner(struct ls_mutex *m)
{
	/* relaxed: read by other threads only to learn "not mine" (store_owner) */
	return __atomic_load_n(&m->owner, __ATOMIC_RELAXED);
}

static inline void store_owner(struct ls_mutex *m, int tid)
{
	/* relaxed: read by other threads only to learn "not mine" */
	__atomic_store_n(&m->owner, tid, __ATOMIC_RELAXED);
}

/* glibc's __nusers: condvar waiters (see "for the condition variable") */
static inline uint32_t cond_users(struct ls_mutex *m)
{
	/* relaxed: see "Condvar users" below: the mutex orders every change */
	return __atomic_load_n(&m->cond_users, __ATOMIC_RELAXED);
}

/* ---- out-of-line state ---- */

/* For ls_g's algorithm (map.c has its own, for each mutex's). */
static const struct ls_algo *g_algo(struct ls_mutex *m)
{
	(void)m;
	return ls_g.algo;
}

/* The fast path's operations for an algorithm whose state is out of line:
 * they get the inline bytes (at offset 24) and find the block from there,
 * entered while it is used (shim.h). On a lock path the word is NULL
 * (static initialiser, zeroed memory) or was stored by lockswap, for this
 * mutex or for the one it was copied from: either way a block of the
 * region, safe to read, so only pthread_mutex_init (which may meet
 * garbage) checks ls_ext_owns. */
static __attribute__((noinline)) void ext_lock_slow(void *inline_state)
{
	ls_g.algo->lock(ls_mutex_ext_enter(ls_mutex_of(inline_state), g_algo));
}

void ls_ext_lock(void *inline_state)
{
	/* the slow path apart, so that this one saves no register */
	struct ls_ext *e = (struct ls_ext *)ls_ext_try_enter(&ls_mutex_of(inline_state)->alg.ext);
	if (LS_LIKELY(e))
		ls_g.algo->lock(e + 1);
	else
		ext_lock_slow(inline_state);
}

int ls_ext_trylock(void *inline_state)
{
	int r = ls_g.algo->trylock(ls_mutex_ext_enter(ls_mutex_of(inline_state), g_algo));
	if (r)
		ls_hold_drop_top(); /* the state's (pool.h) */
	return r;
}

void ls_ext_unlock(void *inline_state)
{
	ls_mutex_ext_unlock(ls_mutex_of(inline_state), g_algo, ls_g.algo->unlock);
}

/* The state for an acquisition attempt, entered if out of line, and the
 * attempt's result, the state left if it failed. */
static inline void *state_enter(struct ls_mutex *m)
{
	return ls_g.ext ? ls_mutex_ext_enter(m, g_algo) : m->alg.state;
}

static inline int state_result(void *state, int r)
{
	if (r && ls_g.ext)
		ls_mutex_ext_leave(state);
	return r;
}

/* ---- the types' bookkeeping, shared by lock, trylock and the timed locks ---- */

/* LOCK_SLICED, TIMED_SLICED: for an asynchronously cancelable thread. */
enum how { LOCK, TRY, TIMED, LOCK_SLICED, TIMED_SLICED };
struct timed_arg {
	clockid_t clock;
	const struct timespec *abs;
};
static int algo_timedlock(void *state, clockid_t clock, const struct timespec *abs);
static int sliced(void *state, const struct timed_arg *t);

/* One acquisition attempt on the algorithm: 0, or EBUSY / ETIMEDOUT /
 * EINVAL. Through ls_g's operations, like the fast path (an observer
 * may wrap them; under a map, slow_lock and slow_trylock first give a
 * mutex used for the first time its binding). */
static inline __attribute__((always_inline)) int attempt(struct ls_mutex *m, enum how how,
							 const struct timed_arg *t)
{
	switch (how) {
	case LOCK:
		ls_g.slow_lock(m->alg.state);
		return 0;
	case TRY:
		return ls_g.slow_trylock(m->alg.state) ? EBUSY : 0;
	case TIMED:
		return ls_g.timedlock(m->alg.state, t->clock, t->abs);
	case LOCK_SLICED: {
		void *st = state_enter(m);
		return state_result(st, sliced(st, NULL));
	}
	default: {
		void *st = state_enter(m);
		return state_result(st, sliced(st, t));
	}
	}
}

/* RECURSIVE: the owner counts up (EAGAIN at overflow); ERRORCHECK: the
 * owner gets EDEADLK (EBUSY from trylock, as glibc); anyone else attempts
 * and becomes the owner. NORMAL and ADAPTIVE: just the attempt. */
static inline __attribute__((always_inline)) int acquire(struct ls_mutex *m, enum how how,
							 const struct timed_arg *t)
{
	int type = m->kind & KIND_TYPE_MASK, tid, r;
	if (type != PTHREAD_MUTEX_RECURSIVE && type != PTHREAD_MUTEX_ERRORCHECK)
		return attempt(m, how, t);
	tid = self_tid();
	if (load_owner(m) == tid) {
		if (type == PTHREAD_MUTEX_ERRORCHECK)
			return how == TRY ? EBUSY : EDEADLK;
		if (m->count + 1 == 0)
			return EAGAIN;
		m->count++;
		return 0;
	}
	if ((r = attempt(m, how, t)))
		return r;
	store_owner(m, tid);
	if (type == PTHREAD_MUTEX_RECURSIVE)
		m->count = 1;
	return 0;
}

/* An acquisition by an asynchronously cancelable thread (shim_cancel.c): the
 * whole call with its type deferred, and a wait in slices. */
static __attribute__((noinline)) int acquire_async(struct ls_mutex *m, enum how how,
						   const struct timed_arg *t)
{
	int old = ls_cancel_defer();
	int r = acquire(m, how, t);
	ls_cancel_restore(old);
	return r;
}

/* ls_async_on's hook (shim_cancel.c): the first time a thread makes itself
 * asynchronously cancelable, no mutex has the fast kind any more. Relaxed:
 * only this thread's own calls need to see it (shim_cancel.c). */
void ls_mutex_async_on(void)
{
	if (__atomic_load_n(&ls_g.fast_kind, __ATOMIC_RELAXED) != LS_KIND_SLOW)
		__atomic_store_n(&ls_g.fast_kind, LS_KIND_SLOW, __ATOMIC_RELAXED);
}

/* Once some thread has been asynchronously cancelable, every call comes
 * here (shim_cancel.c); a NORMAL mutex of a thread that is not goes straight to
 * the algorithm, as on the fast path (fast_kind is LS_KIND_SLOW only after
 * initialisation). */
static inline bool normal_after_async(const struct ls_mutex *m)
{
	return m->kind == 0 && ls_g.fast_kind == LS_KIND_SLOW && !ls_async_cancel;
}

/* ---- lock ---- */

static __attribute__((noinline)) int lock_general(pthread_mutex_t *mu)
{
	ls_ensure_init();
	if (ls_mutex_is_glibc(mu))
		return ls_real.mutex_lock(mu);
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async((struct ls_mutex *)mu, LOCK_SLICED, NULL);
	return acquire((struct ls_mutex *)mu, LOCK, NULL);
}

/* Small, so that the shortcut saves no registers; the rest in a tail call. */
static __attribute__((noinline)) int lock_slow(pthread_mutex_t *mu)
{
	struct ls_mutex *m = (struct ls_mutex *)mu;
	if (normal_after_async(m)) {
		ls_g.slow_lock(m->alg.state);
		return 0;
	}
	return lock_general(mu);
}

LS_EXPORT __attribute__((symver("pthread_mutex_lock@@GLIBC_2.2.5"))) int
ls_pthread_mutex_lock(pthread_mutex_t *mu)
{
	struct ls_mutex *m = (struct ls_mutex *)mu;
	if (LS_LIKELY(m->kind == ls_g.fast_kind)) {
		ls_g.lock(m->alg.state);
		return 0;
	}
	if (ls_g.passthrough) /* the baseline: interposition and glibc, nothing else */
		return ls_real.mutex_lock(mu);
	return lock_slow(mu);
}

/* ---- trylock ---- */

static __attribute__((noinline)) int trylock_general(pthread_mutex_t *mu)
{
	ls_ensure_init();
	if (ls_mutex_is_glibc(mu))
		return ls_real.mutex_trylock(mu);
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async((struct ls_mutex *)mu, TRY, NULL);
	return acquire((struct ls_mutex *)mu, TRY, NULL);
}

static __attribute__((noinline)) int trylock_slow(pthread_mutex_t *mu)
{
	struct ls_mutex *m = (struct ls_mutex *)mu;
	if (normal_after_async(m))
		return ls_g.slow_trylock(m->alg.state) ? EBUSY : 0;
	return trylock_general(mu);
}

LS_EXPORT __attribute__((symver("pthread_mutex_trylock@@GLIBC_2.34"),
			 symver("pthread_mutex_trylock@GLIBC_2.2.5"))) int
ls_pthread_mutex_trylock(pthread_mutex_t *mu)
{
	struct ls_mutex *m = (struct ls_mutex *)mu;
	if (LS_LIKELY(m->kind == ls_g.fast_kind))
		return ls_g.trylock(m->alg.state) ? EBUSY : 0;
	if (ls_g.passthrough)
		return ls_real.mutex_trylock(mu);
	return trylock_slow(mu);
}

/* ---- unlock ---- */

static int release(struct ls_mutex *m)
{
	switch (m->kind & KIND_TYPE_MASK) {
	case PTHREAD_MUTEX_RECURSIVE:
		if (load_owner(m) != self_tid())
			return EPERM;
		if (--m->count != 0)
			return 0;
		store_owner(m, 0);
		break;
	case PTHREAD_MUTEX_ERRORCHECK:
		if (load_owner(m) != self_tid())
			return EPERM;
		store_owner(m, 0);
		break;
	default:
		break;
	}
	ls_g.slow_unlock(m->alg.state);
	return 0;
}

static __attribute__((noinline)) int unlock_general(pthread_mutex_t *mu)
{
	ls_ensure_init();
	if (ls_mutex_is_glibc(mu))
		return ls_real.mutex_unlock(mu);
	return LS_CANCEL_DEFERRED(release((struct ls_mutex *)mu));
}

static __attribute__((noinline)) int unlock_slow(pthread_mutex_t *mu)
{
	struct ls_mutex *m = (struct ls_mutex *)mu;
	if (normal_after_async(m)) {
		ls_g.slow_unlock(m->alg.state);
		return 0;
	}
	return unlock_general(mu);
}

LS_EXPORT __attribute__((symver("pthread_mutex_unlock@@GLIBC_2.2.5"))) int
ls_pthread_mutex_unlock(pthread_mutex_t *mu)
{
	struct ls_mutex *m = (struct ls_mutex *)mu;
	if (LS_LIKELY(m->kind == ls_g.fast_kind)) {
		ls_g.unlock(m->alg.state);
		return 0;
	}
	if (ls_g.passthrough)
		return ls_real.mutex_unlock(mu);
	return unlock_slow(mu);
}

/* ---- timed ---- */

static bool valid_clock(clockid_t c)
{
	return ls_valid_clock(c);
}

static int algo_timedlock(void *state, clockid_t clock, const struct timespec *abs)
{
	if (!ls_g.algo->trylock(state))
		return 0;
	const struct ls_algo *a = ls_g.algo;
	if (!abs) { /* glibc: no limit */
		a->lock(state);
		return 0;
	}
	uint64_t deadline;
	int r = ls_deadline_ns(clock, abs, &deadline);
	if (r)
		return r;
	if (a->timedlock)
		return a->timedlock(state, deadline);
	return ls_timedlock_fallback(a, state, deadline);
}

/* An asynchronously cancelable thread never waits inside an algorithm
 * (shim_cancel.c): it waits in slices of the algorithm's timedlock (or the
 * trylock fallback), 1 ms doubling up to 16 ms, and between two, holding
 * nothing and in no queue, lets a pending cancel act. Returns 0, or for a
 * timed call ETIMEDOUT / EINVAL (checked once busy, as algo_timedlock). */
static int sliced(void *state, const struct timed_arg *t)
{
	const struct ls_algo *a = ls_g.algo;
	uint64_t deadline = UINT64_MAX;
	if (!a->trylock(state))
		return 0;
	if (t && t->abs) { /* NULL: no limit (glibc) */
		int r = ls_deadline_ns(t->clock, t->abs, &deadline);
		if (r)
			return r;
	}
	for (uint64_t slice = LS_SLICE_MIN_NS;; slice = slice < LS_SLICE_MAX_NS ? 2 * slice : slice) {
		uint64_t end = ls_now_ns() + slice;
		if (end > deadline)
			end = deadline;
		int r = a->timedlock ? a->timedlock(state, end) : ls_timedlock_fallback(a, state, end);
		if (r == 0)
			return 0;
		if (end == deadline)
			return ETIMEDOUT;
		pthread_testcancel();
	}
}

int ls_timedlock_inline(void *inline_state, clockid_t clock, const struct timespec *abs)
{
	void *st = state_enter(ls_mutex_of(inline_state));
	return state_result(st, algo_timedlock(st, clock, abs));
}

static int timed(pthread_mutex_t *mu, clockid_t clock, const struct timespec *abs)
{
	struct timed_arg t = {clock, abs};
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async((struct ls_mutex *)mu, TIMED_SLICED, &t);
	return acquire((struct ls_mutex *)mu, TIMED, &t);
}

LS_EXPORT __attribute__((symver("pthread_mutex_timedlock@@GLIBC_2.34"),
			 symver("pthread_mutex_timedlock@GLIBC_2.2.5"))) int
ls_pthread_mutex_timedlock(pthread_mutex_t *mu, const struct timespec *abs)
{
	ls_ensure_init();
	if (ls_mutex_is_glibc(mu))
		return ls_real.mutex_timedlock(mu, abs);
	return timed(mu, CLOCK_REALTIME, abs);
}

LS_EXPORT __attribute__((symver("pthread_mutex_clocklock@@GLIBC_2.34"),
			 symver("pthread_mutex_clocklock@GLIBC_2.30"))) int
ls_pthread_mutex_clocklock(pthread_mutex_t *mu, clockid_t clock, const struct timespec *abs)
{
	ls_ensure_init();
	if (ls_mutex_is_glibc(mu))
		return ls_real.mutex_clocklock(mu, clock, abs);
	if (!valid_clock(clock))
		return EINVAL;
	return timed(mu, clock, abs);
}

/* ---- init / destroy ---- */

static int init_mutex(pthread_mutex_t *mu, const pthread_mutexattr_t *attr)
{
	struct ls_mutex *m = (struct ls_mutex *)mu;
	int type = PTHREAD_MUTEX_NORMAL, pshared = PTHREAD_PROCESS_PRIVATE, robust = PTHREAD_MUTEX_STALLED,
	    protocol = PTHREAD_PRIO_NONE;
	if (attr) {
		pthread_mutexattr_gettype(attr, &type);
		pthread_mutexattr_getpshared(attr, &pshared);
		pthread_mutexattr_getrobust(attr, &robust);
		pthread_mutexattr_getprotocol(attr, &protocol);
	}
	if (ls_g.passthrough || pshared != PTHREAD_PROCESS_PRIVATE || robust != PTHREAD_MUTEX_STALLED ||
	    protocol != PTHREAD_PRIO_NONE)
		return ls_real.mutex_init(mu, attr);

	/* Re-initialising memory that held one of our mutexes (destroyed,
	 * or reused without destroy): its out-of-line block is kept if the
	 * new mutex runs the same algorithm (under a map: its old binding's),
	 * else it goes back to the pool. A pointer outside the region, or a
	 * binding word that names no entry, is garbage and what it would
	 * point to is never read. Relaxed: init of memory that no other
	 * thread may use meanwhile. */
	const struct ls_algo *a = ls_g.algo;
	bool ext = ls_g.ext;
	const struct ls_bind *b = NULL;
	if (LS_UNLIKELY(ls_g.map)) {
		b = ls_bind_checked(&ls_bind_mutexes, atomic_load_explicit(&m->bind, memory_order_relaxed));
		a = b ? b->algo.m : NULL;
		ext = b && b->ext;
	}
	struct ls_ext *old = NULL;
	if (ext) {
		/* taken from the word (and from the pool, which may be
		 * reclaiming it: then it is the pool's to free); one that is
		 * not adopted is left to the pool, which frees it once the
		 * word no longer holds it */
		struct ls_ext_head *e = atomic_load_explicit(&m->alg.ext, memory_order_relaxed);
		if (ls_ext_adoptable(&m->alg.ext, e, a) && ls_ext_take(&m->alg.ext, NULL) == e)
			old = (struct ls_ext *)e;
	}
	memset(m, 0, sizeof *m);
	m->kind = type & KIND_TYPE_MASK;
	if (LS_UNLIKELY(ls_g.map)) {
		/* its binding: the rule the caller's stack matches (bind.h) */
		const struct ls_algo *olda = a;
		b = ls_bind_match(&ls_bind_mutexes);
		a = b->algo.m;
		ext = b->ext;
		if (old && a != olda) {
			ls_ext_free(old, sizeof(struct ls_ext) + olda->state_size);
			old = NULL;
		}
	}
	int r = 0;
	if (old) {
		/* the state and the wrapper word before it (shim.h) */
		memset((char *)(old + 1) - LS_WRAP_WORD_SIZE, 0, LS_WRAP_WORD_SIZE + a->state_size);
		if (a->init)
			a->init(old + 1);
		ls_ext_attach(&m->alg.ext, &old->h, sizeof(struct ls_ext) + a->state_size, NULL);
	} else if (ext) {
		/* The out-of-line state is attached here, where failing is
		 * allowed: without memory for it (the pool's reserve is kept
		 * for lock paths) the mutex cannot honestly be said to exist,
		 * and POSIX's answer is ENOMEM. glibc never gives it (its
		 * mutex needs no memory); a program that ignores it still
		 * has a valid unlocked mutex, like a static initialiser,
		 * whose first lock attaches the state or waits for memory. */
		struct ls_ext *e = ls_mutex_ext_new(m, a, false);
		if (e) /* marked attached: reclaimable (pool.h) */
			ls_ext_attach(&m->alg.ext, &e->h, sizeof(struct ls_ext) + a->state_size, NULL);
		else
			r = ENOMEM;
	} else if (a->init) {
		a->init(m->alg.state);
	}
	if (LS_UNLIKELY(ls_g.map)) {
		/* the word, then the bit (bind.h, "Binding races") */
		atomic_store_explicit(&m->bind, (uint32_t)ls_bind_word(&ls_bind_mutexes, b),
				      memory_order_release);
		m->kind |= LS_KIND_BOUND;
		ls_bind_count(&ls_bind_mutexes, b);
	}
	if (r)
		return r;
	if (LS_UNLIKELY(ls_events.init))
		ls_events.init(LS_OBJ_MUTEX, mu);
	return 0;
}

LS_EXPORT __attribute__((symver("pthread_mutex_init@@GLIBC_2.2.5"))) int
ls_pthread_mutex_init(pthread_mutex_t *mu, const pthread_mutexattr_t *attr)
{
	ls_ensure_init();
	return LS_CANCEL_DEFERRED(init_mutex(mu, attr));
}

/* state: entered if ext (ls_map_target, state_enter); left here. */
static inline __attribute__((always_inline)) int destroy_algo(struct ls_mutex *m, const struct ls_algo *a,
							      void *state, bool ext)
{
	int r = 0;
	if (a->trylock(state)) {
		r = EBUSY;
		goto out;
	}
	/* read under the mutex, where waiters change it */
	bool users = cond_users(m) != 0;
	a->unlock(state);
	if (users) {
		r = EBUSY;
		goto out;
	}
	if (a->destroy)
		a->destroy(state);
	if (ext) {
		/* unless the pool is reclaiming it (then it frees it) */
		struct ls_ext_head *e = ls_ext_take(&m->alg.ext, NULL);
		ls_mutex_ext_leave(state); /* before it can be reused */
		if (e)
			ls_ext_free(e, sizeof(struct ls_ext) + a->state_size);
		ext = false;
	}
out:
	if (ext)
		ls_mutex_ext_leave(state);
	if (r)
		return r;
	m->kind = -1;
	if (LS_UNLIKELY(ls_events.destroy))
		ls_events.destroy(LS_OBJ_MUTEX, m);
	return 0;
}

static int destroy_mutex(struct ls_mutex *m)
{
	if (LS_UNLIKELY(ls_g.map)) {
		/* the mutex's own algorithm (bind_mutex.c) */
		const struct ls_algo *a;
		void *state;
		bool ext;
		if (ls_map_target(m, &a, &state, &ext))
			return destroy_algo(m, a, state, ext);
		/* never initialised nor used (a static initialiser): its state
		 * is all zero, unlocked, and no algorithm has seen it */
		m->kind = -1;
		if (LS_UNLIKELY(ls_events.destroy))
			ls_events.destroy(LS_OBJ_MUTEX, m);
		return 0;
	}
	return destroy_algo(m, ls_g.algo, state_enter(m), ls_g.ext);
}

LS_EXPORT __attribute__((symver("pthread_mutex_destroy@@GLIBC_2.2.5"))) int
ls_pthread_mutex_destroy(pthread_mutex_t *mu)
{
	ls_ensure_init();
	if (ls_mutex_is_glibc(mu))
		return ls_real.mutex_destroy(mu);
	return LS_CANCEL_DEFERRED(destroy_mutex((struct ls_mutex *)mu));
}

/* ---- for the condition variable ----
 *
 * Condvar users. glibc counts in __nusers every thread that holds the mutex
 * or waits on a condvar with it (its wait unlocks without decrementing), and
 * its destroy is EBUSY while the count is not 0. Holders are seen by
 * destroy's trylock here, so the word counts only the second kind: a waiter
 * adds itself before it releases the mutex and removes itself once it holds
 * it again (after a signal, a timeout or, in the cancellation handler, a
 * cancel). Every change is made by a holder of the mutex, and destroy reads
 * the count holding it, so the mutex orders them all; the accesses are
 * atomic anyway, for a non-owner's wait, which changes it and takes it back
 * without holding the mutex (ERRORCHECK: EPERM). For a mutex glibc owns the
 * word is glibc's own __nusers, which glibc also changes only under the
 * mutex: +1 before glibc's unlock and -1 after glibc's lock are exactly its
 * "unlock without decrementing". Not for robust mutexes, whose destroy
 * ignores the count, nor when glibc's unlock would refuse a non-owner (the
 * wait then returns EPERM having changed nothing).
 */

static bool counts_users(struct ls_mutex *m)
{
	if (!ls_mutex_is_glibc((pthread_mutex_t *)m))
		return true;
	if (m->kind & KIND_ROBUST)
		return false;
	/* glibc checks the owner for these (and for every PI mutex) */
	int type = m->kind & KIND_TYPE_MASK;
	if (type == PTHREAD_MUTEX_ERRORCHECK || type == PTHREAD_MUTEX_RECURSIVE || (m->kind & KIND_PI))
		return load_owner(m) == self_tid();
	return true;
}

int ls_mutex_unlock_for_wait(pthread_mutex_t *mu, uint32_t *saved)
{
	struct ls_mutex *m = (struct ls_mutex *)mu;
	*saved = 0;
	if (!ls_mutex_is_glibc(mu) && (m->kind & KIND_TYPE_MASK) == PTHREAD_MUTEX_RECURSIVE) {
		if (load_owner(m) != self_tid())
			return EPERM;
		*saved = m->count;
		m->count = 1;
	}
	if (!counts_users(m))
		return ls_pthread_mutex_unlock(mu);
	/* relaxed: see "Condvar users" above */
	__atomic_fetch_add(&m->cond_users, 1, __ATOMIC_RELAXED);
	int r = ls_pthread_mutex_unlock(mu);
	if (r)
		__atomic_fetch_sub(&m->cond_users, 1, __ATOMIC_RELAXED);
	return r;
}

int ls_mutex_relock_after_wait(pthread_mutex_t *mu, uint32_t saved)
{
	struct ls_mutex *m = (struct ls_mutex *)mu;
	int r = ls_pthread_mutex_lock(mu);
	if (r == 0 && saved)
		m->count = saved;
	if (r == 0 && !(ls_mutex_is_glibc(mu) && (m->kind & KIND_ROBUST)))
		__atomic_fetch_sub(&m->cond_users, 1, __ATOMIC_RELAXED);
	return r;
}
