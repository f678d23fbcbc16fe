/*
 * profile_mutex.c - the profiler's wrappers of mutexes (see
 * profile_mutex.h): every lockswap mutex through the shim's mutex
 * operations, every mutex that goes to glibc (the pthread baseline and
 * process-shared, robust, PI and PP mutexes) through glibc's functions,
 * and the lives of lockswap's own mutexes and condvars through the shim's
 * events. Each acquisition tries first: if the try fails, the first
 * attempt "found it held" (contended).
 */
#include <errno.h>

#include "observe.h"
#include "profile_event.h"
#include "profile_mutex.h"
#include "profile_records.h"

/* ---- the shim's mutex operations (observe.h: mutex) ---- */

static struct ls_mutex_ops in; /* the shim's, wrapped */

static inline uintptr_t key_of(void *state)
{
	return (uintptr_t)ls_obs_mutex_of(state);
}

static void w_lock(void *st)
{
	struct pthr *t = ls_prof_enter();
	if (!t) {
		in.lock(st);
		return;
	}
	if (LS_LIKELY(in.trylock(st) == 0)) {
		ls_prof_uncontended(t, key_of(st), PK_MUTEX, false, LS_PROF_LOCK);
	} else {
		struct waiting w;
		ls_prof_wait_begin(t, key_of(st), PK_MUTEX, false, &w);
		in.lock(st);
		ls_prof_wait_end(t, &w, LS_PROF_LOCK, 0);
	}
	ls_prof_guard_leave();
}

static int w_trylock(void *st)
{
	struct pthr *t = ls_prof_enter();
	if (!t)
		return in.trylock(st);
	int r = in.trylock(st);
	if (r == 0)
		ls_prof_uncontended(t, key_of(st), PK_MUTEX, false, LS_PROF_TRY);
	else
		ls_prof_tryfailed(t, key_of(st), PK_MUTEX, false, LS_PROF_TRYFAIL);
	ls_prof_guard_leave();
	return r;
}

static int w_timedlock(void *st, clockid_t clock, const struct timespec *abs)
{
	struct pthr *t = ls_prof_enter();
	if (!t)
		return in.timedlock(st, clock, abs);
	int r = 0;
	if (in.trylock(st) == 0) {
		ls_prof_uncontended(t, key_of(st), PK_MUTEX, false, LS_PROF_TIMED);
	} else {
		struct waiting w;
		ls_prof_wait_begin(t, key_of(st), PK_MUTEX, false, &w);
		r = in.timedlock(st, clock, abs);
		ls_prof_wait_end(t, &w, LS_PROF_TIMED, r);
	}
	ls_prof_guard_leave();
	return r;
}

static void w_unlock(void *st)
{
	struct pthr *t = ls_prof_enter();
	if (t) {
		ls_prof_released(t, key_of(st), PK_MUTEX, false);
		ls_prof_guard_leave();
	}
	in.unlock(st);
}

/* ---- glibc's mutex functions (observe.h: glibc) ---- */

static struct ls_glibc real; /* the shim's, wrapped */

#define GLIBC_OWNER_CHECKED (16 | 32 | 64) /* robust, PI, PP: unlock checks the owner */

static bool acquired_rc(int r)
{
	return r == 0 || r == EOWNERDEAD;
}

/* A recursive mutex's inner relock by its owner is not an acquisition. */
static bool g_reentry(pthread_mutex_t *m)
{
	return (m->__data.__kind & 3) == PTHREAD_MUTEX_RECURSIVE && m->__data.__count > 1;
}

/* EBUSY from the owner of an error-checking mutex: its own, not contention. */
static bool g_own_errorcheck(pthread_mutex_t *m)
{
	return (m->__data.__kind & 3) == PTHREAD_MUTEX_ERRORCHECK && m->__data.__owner == ls_prof_tid();
}

bool ls_prof_glibc_releases(pthread_mutex_t *m)
{
	int kind = m->__data.__kind, type = kind & 3;
	if ((type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK ||
	     (kind & GLIBC_OWNER_CHECKED)) &&
	    m->__data.__owner != ls_prof_tid())
		return false;
	return !(type == PTHREAD_MUTEX_RECURSIVE && m->__data.__count > 1);
}

static int g_lock(pthread_mutex_t *m)
{
	struct pthr *t = ls_prof_enter();
	if (!t)
		return real.mutex_lock(m);
	int r = real.mutex_trylock(m);
	if (acquired_rc(r)) {
		if (!g_reentry(m))
			ls_prof_uncontended(t, (uintptr_t)m, PK_MUTEX, true, LS_PROF_LOCK);
	} else if (r == EBUSY && !g_own_errorcheck(m)) {
		struct waiting w;
		ls_prof_wait_begin(t, (uintptr_t)m, PK_MUTEX, true, &w);
		r = real.mutex_lock(m);
		ls_prof_wait_end(t, &w, LS_PROF_LOCK, acquired_rc(r) ? 0 : EINVAL);
	} else if (r == EBUSY) {
		r = real.mutex_lock(m); /* EDEADLK */
	}
	ls_prof_guard_leave();
	return r;
}

static int g_trylock(pthread_mutex_t *m)
{
	struct pthr *t = ls_prof_enter();
	if (!t)
		return real.mutex_trylock(m);
	int r = real.mutex_trylock(m);
	if (acquired_rc(r)) {
		if (!g_reentry(m))
			ls_prof_uncontended(t, (uintptr_t)m, PK_MUTEX, true, LS_PROF_TRY);
	} else if (r == EBUSY && !g_own_errorcheck(m)) {
		ls_prof_tryfailed(t, (uintptr_t)m, PK_MUTEX, true, LS_PROF_TRYFAIL);
	}
	ls_prof_guard_leave();
	return r;
}

/* timedlock (clock < 0) or clocklock. */
static int g_timed(pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
	struct pthr *t = ls_prof_enter();
	if (!t)
		return clock < 0 ? real.mutex_timedlock(m, abs) : real.mutex_clocklock(m, clock, abs);
	int r = real.mutex_trylock(m);
	if (acquired_rc(r)) {
		if (!g_reentry(m))
			ls_prof_uncontended(t, (uintptr_t)m, PK_MUTEX, true, LS_PROF_TIMED);
	} else if (r == EBUSY) {
		bool own = g_own_errorcheck(m);
		struct waiting w;
		if (!own)
			ls_prof_wait_begin(t, (uintptr_t)m, PK_MUTEX, true, &w);
		r = clock < 0 ? real.mutex_timedlock(m, abs) : real.mutex_clocklock(m, clock, abs);
		if (!own)
			ls_prof_wait_end(t, &w, LS_PROF_TIMED, acquired_rc(r) ? 0 : r);
	}
	ls_prof_guard_leave();
	return r;
}

static int g_timedlock(pthread_mutex_t *m, const struct timespec *abs)
{
	return g_timed(m, -1, abs);
}

static int g_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
	if (clock < 0) /* glibc's EINVAL, without confusing g_timed */
		return real.mutex_clocklock(m, clock, abs);
	return g_timed(m, clock, abs);
}

static int g_unlock(pthread_mutex_t *m)
{
	struct pthr *t = ls_prof_enter();
	if (t) {
		if (ls_prof_glibc_releases(m))
			ls_prof_released(t, (uintptr_t)m, PK_MUTEX, true);
		ls_prof_guard_leave();
	}
	return real.mutex_unlock(m);
}

/* ---- lives: lockswap's own mutexes and condvars, glibc's mutexes ---- */

/* lockswap's own mutexes and condvars (the shim's events) */
static void on_init(enum ls_obj kind, void *obj)
{
	ls_prof_created((uintptr_t)obj, kind == LS_OBJ_COND ? PK_COND : PK_MUTEX, false);
}

static void on_destroy(enum ls_obj kind, void *obj)
{
	(void)kind;
	ls_prof_ended((uintptr_t)obj);
}

static int g_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	int r = real.mutex_init(m, a);
	if (r == 0)
		ls_prof_created((uintptr_t)m, PK_MUTEX, true);
	return r;
}

static int g_mutex_destroy(pthread_mutex_t *m)
{
	int r = real.mutex_destroy(m);
	if (r == 0)
		ls_prof_ended((uintptr_t)m);
	return r;
}

/* ---- installation ---- */

void ls_prof_mutex_install(struct ls_observe *ob)
{
	in = ob->mutex;
	ob->mutex = (struct ls_mutex_ops){w_lock, w_trylock, w_unlock, w_timedlock};
	real = ob->glibc;
	ob->glibc.mutex_init = g_mutex_init;
	ob->glibc.mutex_destroy = g_mutex_destroy;
	ob->glibc.mutex_lock = g_lock;
	ob->glibc.mutex_trylock = g_trylock;
	ob->glibc.mutex_timedlock = g_timedlock;
	ob->glibc.mutex_clocklock = g_clocklock;
	ob->glibc.mutex_unlock = g_unlock;
	ob->ev.init = on_init;
	ob->ev.destroy = on_destroy;
}
