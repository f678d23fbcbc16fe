/*
 * profile_cond.c - the profiler's wrappers of condition variables (see
 * profile_cond.h): lockswap's own through the shim's events, glibc's
 * through glibc's functions. A wait counts in the condvar; the mutex it
 * releases and takes again counts in the mutex (through the mutex
 * operations for lockswap's, here for glibc's).
 */
#include <errno.h>

#include "observe.h"
#include "profile_cond.h"
#include "profile_event.h"
#include "profile_mutex.h"
#include "profile_records.h"

static struct ls_glibc real; /* the shim's, wrapped (its condvar functions) */

/* ---- signals and waits ---- */

static void cond_signalled(uintptr_t c, bool glibc, bool broadcast)
{
	struct pthr *t = ls_prof_enter();
	if (!t)
		return;
	struct tent *e = ls_prof_entry(t, c, PK_COND, glibc);
	if (e)
		BUMP(e->n[broadcast ? LS_PROF_BROADCAST : LS_PROF_SIGNAL], 1);
	ls_prof_guard_leave();
}

static void on_cond_signal(pthread_cond_t *c, bool broadcast)
{
	cond_signalled((uintptr_t)c, false, broadcast);
}

/* The wait itself runs outside the guard: a program's cleanup handlers
 * (cancellation) and signal handlers are recorded as usual. */
static uint64_t on_cond_wait_begin(pthread_cond_t *c)
{
	(void)c;
	return ls_prof_tls.guard ? 0 : ls_prof_now();
}

static void cond_waited(uintptr_t c, bool glibc, uint64_t t0, int r)
{
	uint64_t t1 = ls_prof_now();
	struct pthr *t;
	if (!t0 || !(t = ls_prof_enter()))
		return;
	struct tent *e = ls_prof_entry(t, c, PK_COND, glibc);
	if (e && (r == 0 || r == ETIMEDOUT)) {
		uint64_t d = ls_prof_since(t0, t1);
		BUMP(e->n[r ? LS_PROF_CTIMEOUT : LS_PROF_WAITS], 1);
		BUMP(e->wait_sum, d);
		RAISE(e->wait_max, d);
		ls_prof_hist_add(e, e->wait_h, d, true);
	}
	ls_prof_guard_leave();
}

static void on_cond_wait_end(pthread_cond_t *c, uint64_t token, int r)
{
	cond_waited((uintptr_t)c, false, token, r);
}

/* glibc's condvars release and retake the mutex inside glibc: the hold
 * ends before the wait and a new one (an uncontended lock acquisition, as
 * far as lockswap can see) begins after it. */
static uint64_t g_wait_begin(pthread_mutex_t *m)
{
	struct pthr *t = ls_prof_enter();
	if (!t)
		return 0;
	if (ls_prof_glibc_releases(m))
		ls_prof_released(t, (uintptr_t)m, PK_MUTEX, true);
	ls_prof_guard_leave();
	return ls_prof_now();
}

static void g_wait_end(pthread_cond_t *c, pthread_mutex_t *m, uint64_t t0, int r)
{
	cond_waited((uintptr_t)c, true, t0, r);
	struct pthr *t;
	if (t0 && (r == 0 || r == ETIMEDOUT || r == EOWNERDEAD) && (t = ls_prof_enter())) {
		ls_prof_uncontended(t, (uintptr_t)m, PK_MUTEX, true, LS_PROF_LOCK);
		ls_prof_guard_leave();
	}
}

static int g_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	uint64_t t0 = g_wait_begin(m);
	int r = real.cond_wait(c, m);
	g_wait_end(c, m, t0, r);
	return r;
}

static int g_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs)
{
	uint64_t t0 = g_wait_begin(m);
	int r = real.cond_timedwait(c, m, abs);
	g_wait_end(c, m, t0, r);
	return r;
}

static int g_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
			    const struct timespec *abs)
{
	uint64_t t0 = g_wait_begin(m);
	int r = real.cond_clockwait(c, m, clock, abs);
	g_wait_end(c, m, t0, r);
	return r;
}

static int g_cond_signal(pthread_cond_t *c)
{
	cond_signalled((uintptr_t)c, true, false);
	return real.cond_signal(c);
}

static int g_cond_broadcast(pthread_cond_t *c)
{
	cond_signalled((uintptr_t)c, true, true);
	return real.cond_broadcast(c);
}

/* ---- lives: glibc's condvars ---- */

static int g_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	int r = real.cond_init(c, a);
	if (r == 0)
		ls_prof_created((uintptr_t)c, PK_COND, true);
	return r;
}

static int g_cond_destroy(pthread_cond_t *c)
{
	int r = real.cond_destroy(c);
	if (r == 0)
		ls_prof_ended((uintptr_t)c);
	return r;
}

/* ---- installation ---- */

void ls_prof_cond_install(struct ls_observe *ob)
{
	real = ob->glibc;
	ob->glibc.cond_init = g_cond_init;
	ob->glibc.cond_destroy = g_cond_destroy;
	ob->glibc.cond_wait = g_cond_wait;
	ob->glibc.cond_timedwait = g_cond_timedwait;
	ob->glibc.cond_clockwait = g_cond_clockwait;
	ob->glibc.cond_signal = g_cond_signal;
	ob->glibc.cond_broadcast = g_cond_broadcast;
	ob->ev.cond_signal = on_cond_signal;
	ob->ev.cond_wait_begin = on_cond_wait_begin;
	ob->ev.cond_wait_end = on_cond_wait_end;
}
