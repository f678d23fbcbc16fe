/*
 * profile_rwlock.c - the profiler's wrappers of reader-writer locks (see
 * profile_rwlock.h), every pthread_rwlock_* call (observe.h: rwlock).
 *
 * Whole calls, glibc's or the shim's: a try first (0: uncontended; EBUSY:
 * contention, unless the caller is the write holder, whose rdlock and
 * wrlock say EDEADLK and whose tries say EBUSY), then the call itself. A
 * read acquisition is any successful rdlock, tryrdlock or timed/clock
 * rdlock, recursive ones included (glibc's and lockswap's count alike); a
 * read hold runs per thread, from its first read hold of the lock to its
 * last release.
 */
#include <errno.h>
#include <time.h>

#include "observe.h"
#include "profile_event.h"
#include "profile_records.h"
#include "profile_rwlock.h"

static struct ls_rwlock_ops rwin; /* the shim's, wrapped */

enum { RW_LOCK, RW_TRY, RW_TIMED }; /* in the order of LS_PROF_LOCK, _TRY, _TIMED */

static bool rw_glibc(const pthread_rwlock_t *rw)
{
	return ls_prof.rw_passthrough || rw->__data.__shared != 0;
}

/* Whether the caller holds rw's write lock: __cur_writer is the writer's
 * tid in glibc's rwlocks and in lockswap's. */
static bool rw_own_write(pthread_rwlock_t *rw)
{
	return __atomic_load_n(&rw->__data.__cur_writer, __ATOMIC_RELAXED) == ls_prof_tid();
}

/* RW_TIMED: timedrdlock/timedwrlock (CLOCK_REALTIME) unless `clocked`,
 * clock*lock with `clock` (any value: glibc's own answer) if it is. */
static int rw_call(pthread_rwlock_t *rw, bool read, int op, bool clocked, clockid_t clock,
		   const struct timespec *abs)
{
	switch (op) {
	case RW_LOCK:
		return read ? rwin.rdlock(rw) : rwin.wrlock(rw);
	case RW_TRY:
		return read ? rwin.tryrdlock(rw) : rwin.trywrlock(rw);
	default:
		if (!clocked)
			return read ? rwin.timedrdlock(rw, abs) : rwin.timedwrlock(rw, abs);
		return read ? rwin.clockrdlock(rw, clock, abs) : rwin.clockwrlock(rw, clock, abs);
	}
}

static int rw_acquire(pthread_rwlock_t *rw, bool read, int op, bool clocked, clockid_t clock,
		      const struct timespec *abs)
{
	/* glibc checks a timed call's clock and timespec before anything
	 * else, and only with a timespec (NULL waits without limit, whatever
	 * the clock): so must the try that comes first */
	if (op == RW_TIMED && abs &&
	    ((clocked && clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC) || abs->tv_nsec < 0 ||
	     abs->tv_nsec >= 1000000000L))
		return rw_call(rw, read, op, clocked, clock, abs);
	struct pthr *t = ls_prof_enter();
	if (!t)
		return rw_call(rw, read, op, clocked, clock, abs);
	uintptr_t key = (uintptr_t)rw;
	bool glibc = rw_glibc(rw);
	int how = (read ? LS_PROF_RDLOCK : LS_PROF_LOCK) + op;
	int r = read ? rwin.tryrdlock(rw) : rwin.trywrlock(rw);
	if (r == 0) {
		ls_prof_uncontended(t, key, PK_RWLOCK, glibc, how);
	} else if (r == EBUSY && !rw_own_write(rw)) {
		if (op == RW_TRY) {
			ls_prof_tryfailed(t, key, PK_RWLOCK, glibc,
					  read ? LS_PROF_RDTRYFAIL : LS_PROF_TRYFAIL);
		} else {
			struct waiting w;
			ls_prof_wait_begin(t, key, PK_RWLOCK, glibc, &w);
			r = rw_call(rw, read, op, clocked, clock, abs);
			ls_prof_wait_end(t, &w, how, r == 0 || r == ETIMEDOUT ? r : EINVAL);
		}
	} else if (op != RW_TRY) {
		r = rw_call(rw, read, op, clocked, clock, abs); /* its own answer: EDEADLK, EAGAIN */
	}
	ls_prof_guard_leave();
	return r;
}

static int p_rdlock(pthread_rwlock_t *rw)
{
	return rw_acquire(rw, true, RW_LOCK, false, 0, NULL);
}
static int p_tryrdlock(pthread_rwlock_t *rw)
{
	return rw_acquire(rw, true, RW_TRY, false, 0, NULL);
}
static int p_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abs)
{
	return rw_acquire(rw, true, RW_TIMED, false, 0, abs);
}
static int p_clockrdlock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abs)
{
	return rw_acquire(rw, true, RW_TIMED, true, clock, abs);
}
static int p_wrlock(pthread_rwlock_t *rw)
{
	return rw_acquire(rw, false, RW_LOCK, false, 0, NULL);
}
static int p_trywrlock(pthread_rwlock_t *rw)
{
	return rw_acquire(rw, false, RW_TRY, false, 0, NULL);
}
static int p_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abs)
{
	return rw_acquire(rw, false, RW_TIMED, false, 0, abs);
}
static int p_clockwrlock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abs)
{
	return rw_acquire(rw, false, RW_TIMED, true, clock, abs);
}

/* The write holder's unlock ends the write hold; another thread's, one of
 * its read holds (none: a misuse, nothing to end). */
static int p_rwunlock(pthread_rwlock_t *rw)
{
	struct pthr *t = ls_prof_enter();
	if (t) {
		if (rw_own_write(rw))
			ls_prof_released(t, (uintptr_t)rw, PK_RWLOCK, rw_glibc(rw));
		else
			ls_prof_read_released(t, (uintptr_t)rw, rw_glibc(rw));
		ls_prof_guard_leave();
	}
	return rwin.unlock(rw);
}

static int p_rwinit(pthread_rwlock_t *rw, const pthread_rwlockattr_t *a)
{
	int r = rwin.init(rw, a);
	if (r == 0)
		ls_prof_created((uintptr_t)rw, PK_RWLOCK, rw_glibc(rw));
	return r;
}

static int p_rwdestroy(pthread_rwlock_t *rw)
{
	int r = rwin.destroy(rw);
	if (r == 0)
		ls_prof_ended((uintptr_t)rw);
	return r;
}

/* ---- installation ---- */

void ls_prof_rwlock_install(struct ls_observe *ob)
{
	rwin = ob->rwlock;
	ob->rwlock = (struct ls_rwlock_ops){p_rwinit,	   p_rwdestroy,	  p_rdlock,  p_tryrdlock,
					    p_timedrdlock, p_clockrdlock, p_wrlock,  p_trywrlock,
					    p_timedwrlock, p_clockwrlock, p_rwunlock};
}
