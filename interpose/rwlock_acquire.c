/*
 * rwlock_acquire.c - the rwlock family's acquisition paths: everything the
 * entry points' fast paths (rwlock.c) do not take for granted, and the
 * checked paths that replace them once a thread is asynchronously
 * cancelable, or that an observer wraps (rwlock.c says when each runs).
 * glibc's semantics are kept here (rwlock.c lists them); the algorithm is
 * called through ls_rwg (shim_rwlock.h), the read holds are rwlock_held.h's.
 *
 * Asynchronous cancellation (shim_cancel.c): once a thread has made itself
 * asynchronously cancelable, every call takes the checked path (the entry
 * points below), where such a thread runs the call with its type deferred, and
 * waits in slices (the algorithm's timed operation or the fallback, 1 ms
 * doubling to 16 ms) with pthread_testcancel between two, holding nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "bind.h"
#include "fork.h"
#include "pool.h"
#include "rwlock_acquire.h"
#include "rwlock_held.h"
#include "shim_cancel.h"
#include "shim_rwlock.h"
#include "wait.h"

/* ---- acquisitions ---- */

/* Does the shim count this lock's recursive reads (rwlock.h)? Under the
 * default kind, whatever the policy. */
static inline bool counts_recursion(struct ls_rwlock *l, unsigned how)
{
	return !(how & LS_RW_PREFER_WRITER) ||
	       ((ls_rwg.map ? ls_rwmap_caps(l) : ls_rwg.rw->caps) & LS_RWCAP_EXCLUSIVE);
}

enum op { LOCK, TRY, TIMED };
struct timed_arg {
	clockid_t clock;
	const struct timespec *abs; /* NULL: no limit (glibc) */
};

/* An asynchronously cancelable thread never waits inside an algorithm: it
 * waits in slices, and between two, holding nothing, lets a pending cancel
 * act (mutex.c does the same). deadline: UINT64_MAX for none. */
static int sliced(void *st, bool write, unsigned how, uint64_t deadline, void **token)
{
	const struct ls_rwalgo *a = ls_rwg.rw;
	for (uint64_t slice = LS_SLICE_MIN_NS;; slice = slice < LS_SLICE_MAX_NS ? 2 * slice : slice) {
		uint64_t end = ls_now_ns() + slice;
		if (end > deadline)
			end = deadline;
		int r;
		if (write)
			r = a->timedwrlock ? a->timedwrlock(st, how, end)
					   : ls_rw_timed_fallback(a, st, how, true, end, token);
		else
			r = a->timedrdlock ? a->timedrdlock(st, how, end, token)
					   : ls_rw_timed_fallback(a, st, how, false, end, token);
		if (r != ETIMEDOUT)
			return r;
		if (end == deadline)
			return ETIMEDOUT;
		pthread_testcancel();
	}
}

/* The algorithm's part of an acquisition: 0, or EBUSY / ETIMEDOUT / EAGAIN. */
static int attempt(void *st, bool write, unsigned how, enum op op, const struct timed_arg *t, void **token)
{
	const struct ls_rwalgo *a = ls_rwg.rw;
	if (op == LOCK && LS_LIKELY(!ls_async_cancel)) {
		if (write) {
			a->wrlock(st, how);
			return 0;
		}
		return a->rdlock(st, how, token);
	}
	int r = write ? a->trywrlock(st, how) : a->tryrdlock(st, how, token);
	if (r != EBUSY || op == TRY)
		return r;
	uint64_t deadline = UINT64_MAX;
	if (op == TIMED && t->abs) {
		if ((r = ls_deadline_ns(t->clock, t->abs, &deadline)))
			return r;
	}
	if (LS_UNLIKELY(ls_async_cancel))
		return sliced(st, write, how, deadline, token);
	if (deadline == UINT64_MAX) { /* a timed call with a NULL timespec */
		if (write) {
			a->wrlock(st, how);
			return 0;
		}
		return a->rdlock(st, how, token);
	}
	if (write)
		return a->timedwrlock ? a->timedwrlock(st, how, deadline)
				      : ls_rw_timed_fallback(a, st, how, true, deadline, token);
	return a->timedrdlock ? a->timedrdlock(st, how, deadline, token)
			      : ls_rw_timed_fallback(a, st, how, false, deadline, token);
}

static inline __attribute__((always_inline)) int rd_acquire(struct ls_rwlock *l, enum op op,
							    const struct timed_arg *t)
{
	int w = ls_rw_load_writer(l);
	if (LS_UNLIKELY(w != 0) && w == ls_self_tid())
		return op == TRY ? EBUSY : EDEADLK;
	unsigned how = ls_rw_how(l);
	uint32_t gen = ls_rw_gen_stamp(l);
	if (LS_UNLIKELY(ls_rd.one.lock != NULL) && counts_recursion(l, how)) {
		struct ls_rdentry *e = ls_rd_current(l, gen);
		int r = !e ? -1 : e->extra >= LS_RW_MAX_RECURSION - 1 ? EAGAIN : 0;
		if (r == 0)
			e->extra++;
		ls_rd_settle();
		if (r >= 0)
			return r;
	}
	void *token = NULL;
	bool ext = ls_rwg.rw_ext;
	void *st = ls_rw_state_enter(l, ext);
	int r = attempt(st, false, how, op, t, &token);
	if (LS_UNLIKELY(r)) {
		ls_rw_state_leave(st, ext);
		return r;
	}
	ls_rd_push(l, token, gen);
	return 0;
}

static inline __attribute__((always_inline)) int wr_acquire(struct ls_rwlock *l, enum op op,
							    const struct timed_arg *t)
{
	int tid = ls_self_tid();
	if (LS_UNLIKELY(ls_rw_load_writer(l) == tid))
		return op == TRY ? EBUSY : EDEADLK;
	bool ext = ls_rwg.rw_ext;
	void *st = ls_rw_state_enter(l, ext);
	int r = attempt(st, true, ls_rw_how(l), op, t, NULL);
	if (LS_UNLIKELY(r)) {
		ls_rw_state_leave(st, ext);
		return r;
	}
	ls_rw_store_writer(l, tid);
	return 0;
}

/* The same with the calling thread's cancel type deferred: it is
 * asynchronously cancelable (shim_cancel.c). */
static __attribute__((noinline)) int acquire_async(struct ls_rwlock *l, bool write, enum op op,
						   const struct timed_arg *t)
{
	int old = ls_cancel_defer();
	int r = write ? wr_acquire(l, op, t) : rd_acquire(l, op, t);
	ls_cancel_restore(old);
	return r;
}

/* ---- the general and checked paths (rwlock_acquire.h) ---- */

/* -- read -- */

/* Everything the fast read lock does not take for granted: a read lock by
 * a thread that holds some read lock or this lock's write lock, of a
 * write-held lock, of a process-shared lock. */
__attribute__((noinline)) int ls_rw_rdlock_general(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (l->shared)
		return ls_rwreal.rw.rdlock(rw);
	return rd_acquire(l, LOCK, NULL);
}

/* The checked read lock: any thread, any rwlock, once initialised. */
int ls_rw_rdlock_checked(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (ls_rw_is_glibc(l))
		return ls_rwreal.rw.rdlock(rw);
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async(l, false, LOCK, NULL);
	return rd_acquire(l, LOCK, NULL);
}

int ls_rw_tryrdlock_fast(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (l->shared)
		return ls_rwreal.rw.tryrdlock(rw);
	return rd_acquire(l, TRY, NULL);
}

int ls_rw_tryrdlock_checked(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (ls_rw_is_glibc(l))
		return ls_rwreal.rw.tryrdlock(rw);
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async(l, false, TRY, NULL);
	return rd_acquire(l, TRY, NULL);
}

/* The timed variants (checked, whatever the entries): EINVAL before
 * anything else, as glibc; like glibc 2.36, the clock is checked only with
 * a timespec (NULL: no limit, any clock). */
static int timed(pthread_rwlock_t *rw, bool write, clockid_t clock, const struct timespec *abs)
{
	if (abs && (!ls_valid_clock(clock) || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L))
		return EINVAL;
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	struct timed_arg t = {clock, abs};
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async(l, write, TIMED, &t);
	return write ? wr_acquire(l, TIMED, &t) : rd_acquire(l, TIMED, &t);
}

int ls_rw_timedrdlock_checked(pthread_rwlock_t *rw, const struct timespec *abs)
{
	if (ls_rw_is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.timedrdlock(rw, abs);
	return timed(rw, false, CLOCK_REALTIME, abs);
}

int ls_rw_clockrdlock_checked(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abs)
{
	if (ls_rw_is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.clockrdlock(rw, clock, abs);
	return timed(rw, false, clock, abs);
}

/* -- write -- */

__attribute__((noinline)) int ls_rw_wrlock_general(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (l->shared)
		return ls_rwreal.rw.wrlock(rw);
	return wr_acquire(l, LOCK, NULL);
}

int ls_rw_wrlock_checked(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (ls_rw_is_glibc(l))
		return ls_rwreal.rw.wrlock(rw);
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async(l, true, LOCK, NULL);
	return wr_acquire(l, LOCK, NULL);
}

int ls_rw_trywrlock_fast(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (l->shared)
		return ls_rwreal.rw.trywrlock(rw);
	return wr_acquire(l, TRY, NULL);
}

int ls_rw_trywrlock_checked(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (ls_rw_is_glibc(l))
		return ls_rwreal.rw.trywrlock(rw);
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async(l, true, TRY, NULL);
	return wr_acquire(l, TRY, NULL);
}

int ls_rw_timedwrlock_checked(pthread_rwlock_t *rw, const struct timespec *abs)
{
	if (ls_rw_is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.timedwrlock(rw, abs);
	return timed(rw, true, CLOCK_REALTIME, abs);
}

int ls_rw_clockwrlock_checked(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abs)
{
	if (ls_rw_is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.clockwrlock(rw, clock, abs);
	return timed(rw, true, clock, abs);
}

/* -- unlock -- */

static __attribute__((noinline)) int release(struct ls_rwlock *l)
{
	int w = ls_rw_load_writer(l);
	if (w != 0 && w == ls_self_tid()) {
		/* before the release: afterwards the lock may be gone */
		ls_rw_store_writer(l, 0);
		bool ext = ls_rwg.rw_ext;
		void *st = ls_rw_state_release(l, ext);
		ls_rwg.wrunlock(st);
		ls_rw_state_leave(st, ext); /* compares the block only */
		return 0;
	}
	/* fork: settles a generation not settled yet (rwlock_held.c) */
	if (LS_UNLIKELY(ls_fork_stamp() & LS_FORK_PENDING))
		ls_fork_resolve();
	struct ls_rdentry *e = ls_rd_current(l, ls_rw_gen(l));
	if (LS_UNLIKELY(!e) || e->extra) {
		if (e)
			e->extra--;
		/* else not held by the caller: see "unlock" above */
		ls_rd_settle();
		return 0;
	}
	void *token = e->token;
	ls_rd_remove(e);
	ls_rd_settle();
	bool ext = ls_rwg.rw_ext;
	void *st = ls_rw_state_release(l, ext);
	ls_rwg.rw->rdunlock(st, token);
	ls_rw_state_leave(st, ext); /* compares the block only */
	return 0;
}

__attribute__((noinline)) int ls_rw_unlock_general(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (l->shared)
		return ls_rwreal.rw.unlock(rw);
	return release(l);
}

int ls_rw_unlock_checked(pthread_rwlock_t *rw)
{
	if (ls_rw_is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.unlock(rw);
	return LS_CANCEL_DEFERRED(release((struct ls_rwlock *)rw));
}
