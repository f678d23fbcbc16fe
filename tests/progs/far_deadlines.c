/*
 * far_deadlines - deadlines as far as a program may write them, and the
 * clock variants' checks with a NULL timespec, as glibc 2.36 gives them
 * (issue 32, item 2).
 *
 * A timed call whose deadline is decades or centuries away waits for the
 * lock like an untimed one: tv_sec near and past 2^64 / 1e9 (18446744073,
 * 18446744074), time(NULL) + 1e10, 1LL << 62 (a common "for ever") and
 * LONG_MAX, with a tv_nsec of 0 and of 999999999. Each case holds the lock
 * in one thread, starts the timed call in another, waits until that one is
 * waiting, releases, and checks that the call returned 0 (the lock), not
 * ETIMEDOUT, and not before the release:
 *   mutex        pthread_mutex_timedlock, clocklock on CLOCK_REALTIME and
 *                CLOCK_MONOTONIC;
 *   rwlock       timedrdlock, timedwrlock, clockrdlock and clockwrlock on
 *                both clocks, behind a writer; the write ones behind a
 *                reader too;
 *   cond         pthread_cond_timedwait (a condvar of either clock) and
 *                clockwait on both clocks, until a signal.
 * The clock variants with a NULL timespec:
 *   rwlock-null  pthread_rwlock_clockrdlock / clockwrlock check the clock
 *                only for a non-NULL timespec: with a clock glibc refuses
 *                and NULL they take a free lock, wait for a busy one, and
 *                give the write holder EDEADLK (with a timespec: EINVAL);
 *   mutex-null   pthread_mutex_clocklock checks the clock first, timespec
 *                or not (EINVAL); with a valid clock and NULL, and
 *                timedlock with NULL, it waits for a busy mutex.
 * (The headers declare these timespecs non-null; glibc takes NULL as "no
 * limit", and so must a library that stands in for it.)
 *
 * An ordinary program: every case passes natively (tests/deadlines.bats).
 */
#include "check.h"

#include <limits.h>
#include <stdbool.h>
#include <sys/syscall.h>

static const long long far_sec[] = {18446744073LL, 18446744074LL, 1LL << 62, LLONG_MAX, -2 /* now + 1e10 */};
static const long far_nsec[] = {0, 999999999};

/* What a waiter calls, with which lock. */
enum op {
	MUTEX_TIMED,
	MUTEX_CLOCK_RT,
	MUTEX_CLOCK_MONO,
	MUTEX_CLOCK_BAD_NULL, /* clocklock(42, NULL) */
	MUTEX_TIMED_NULL,
	MUTEX_CLOCK_MONO_NULL,
	RD_TIMED,
	WR_TIMED,
	RD_CLOCK_RT,
	RD_CLOCK_MONO,
	WR_CLOCK_RT,
	WR_CLOCK_MONO,
	RD_CLOCK_BAD_NULL, /* clockrdlock(42, NULL) */
	WR_CLOCK_BAD_NULL,
	COND_TIMED,
	COND_TIMED_MONO, /* a condvar of CLOCK_MONOTONIC */
	COND_CLOCK_RT,
	COND_CLOCK_MONO,
};
static const char *const op_name[] = {
    "pthread_mutex_timedlock",
    "pthread_mutex_clocklock(REALTIME)",
    "pthread_mutex_clocklock(MONOTONIC)",
    "pthread_mutex_clocklock(42, NULL)",
    "pthread_mutex_timedlock(NULL)",
    "pthread_mutex_clocklock(MONOTONIC, NULL)",
    "pthread_rwlock_timedrdlock",
    "pthread_rwlock_timedwrlock",
    "pthread_rwlock_clockrdlock(REALTIME)",
    "pthread_rwlock_clockrdlock(MONOTONIC)",
    "pthread_rwlock_clockwrlock(REALTIME)",
    "pthread_rwlock_clockwrlock(MONOTONIC)",
    "pthread_rwlock_clockrdlock(42, NULL)",
    "pthread_rwlock_clockwrlock(42, NULL)",
    "pthread_cond_timedwait",
    "pthread_cond_timedwait(MONOTONIC condvar)",
    "pthread_cond_clockwait(REALTIME)",
    "pthread_cond_clockwait(MONOTONIC)",
};
#define BAD_CLOCK ((clockid_t)42)
/* NULL, read at run time: the headers declare the argument non-null */
static const struct timespec *volatile no_limit;

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cv_rt, cv_mono;

struct waiter {
	enum op op;
	const struct timespec *ts;
	atomic_int tid, done, ack;
	int announced; /* under m: the condvar waiter is inside its wait */
	int rc;
};

static int call(struct waiter *w)
{
	const struct timespec *t = w->ts;
	switch (w->op) {
	case MUTEX_TIMED:
	case MUTEX_TIMED_NULL:
		return pthread_mutex_timedlock(&m, t);
	case MUTEX_CLOCK_RT:
		return pthread_mutex_clocklock(&m, CLOCK_REALTIME, t);
	case MUTEX_CLOCK_MONO:
	case MUTEX_CLOCK_MONO_NULL:
		return pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, t);
	case MUTEX_CLOCK_BAD_NULL:
		return pthread_mutex_clocklock(&m, BAD_CLOCK, t);
	case RD_TIMED:
		return pthread_rwlock_timedrdlock(&rw, t);
	case WR_TIMED:
		return pthread_rwlock_timedwrlock(&rw, t);
	case RD_CLOCK_RT:
		return pthread_rwlock_clockrdlock(&rw, CLOCK_REALTIME, t);
	case RD_CLOCK_MONO:
		return pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, t);
	case WR_CLOCK_RT:
		return pthread_rwlock_clockwrlock(&rw, CLOCK_REALTIME, t);
	case WR_CLOCK_MONO:
		return pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, t);
	case RD_CLOCK_BAD_NULL:
		return pthread_rwlock_clockrdlock(&rw, BAD_CLOCK, t);
	case WR_CLOCK_BAD_NULL:
		return pthread_rwlock_clockwrlock(&rw, BAD_CLOCK, t);
	case COND_TIMED:
	case COND_TIMED_MONO:
	case COND_CLOCK_RT:
	case COND_CLOCK_MONO: {
		CHECK_RC(pthread_mutex_lock(&m), 0);
		w->announced = 1;
		pthread_cond_t *c = w->op == COND_TIMED_MONO ? &cv_mono : &cv_rt;
		int r = w->op == COND_CLOCK_RT	   ? pthread_cond_clockwait(c, &m, CLOCK_REALTIME, t)
			: w->op == COND_CLOCK_MONO ? pthread_cond_clockwait(c, &m, CLOCK_MONOTONIC, t)
						   : pthread_cond_timedwait(c, &m, t);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		return r;
	}
	}
	return -1;
}

static bool is_mutex(enum op op)
{
	return op <= MUTEX_CLOCK_MONO_NULL;
}
static bool is_rwlock(enum op op)
{
	return op >= RD_TIMED && op <= WR_CLOCK_BAD_NULL;
}

static void release(enum op op)
{
	if (is_mutex(op))
		CHECK_RC(pthread_mutex_unlock(&m), 0);
	else if (is_rwlock(op))
		CHECK_RC(pthread_rwlock_unlock(&rw), 0);
}

static void *waiter_fn(void *p)
{
	struct waiter *w = p;
	atomic_store(&w->tid, (int)syscall(SYS_gettid));
	w->rc = call(w);
	atomic_store(&w->done, 1);
	await_at_least(&w->ack, 1); /* stay, so that its /proc entry stays */
	if (w->rc == 0)
		release(w->op);
	return NULL;
}

/* The lock (taken by the caller, for reading if `read_held`) is held; a
 * thread makes the call op with timespec ts; it must wait until the
 * release and then return 0. */
static void waits_for_release(enum op op, const struct timespec *ts, bool read_held)
{
	struct waiter w = {.op = op, .ts = ts};
	pthread_t t = spawn(waiter_fn, &w);
	while (!atomic_load(&w.tid))
		sched_yield();
	if (op >= COND_TIMED) {
		lock_when_waiting(&m, &w.announced, 1);
		CHECK_RC(pthread_cond_signal(op == COND_TIMED_MONO ? &cv_mono : &cv_rt), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
	} else {
		for (int n = 0; !await_waiting(w.tid, 10); n++) {
			if (atomic_load(&w.done))
				FAIL("%s with {%lld, %ld}, the lock held%s: returned %s before the release",
				     op_name[op], ts ? (long long)ts->tv_sec : 0, ts ? ts->tv_nsec : 0,
				     read_held ? " for reading" : "", err_name(w.rc));
			if (n > 1000)
				FAIL("%s never waited", op_name[op]);
		}
		if (atomic_load(&w.done))
			FAIL("%s with {%lld, %ld}: returned %s before the release", op_name[op],
			     ts ? (long long)ts->tv_sec : 0, ts ? ts->tv_nsec : 0, err_name(w.rc));
		release(op);
	}
	await_at_least(&w.done, 1);
	if (w.rc != 0)
		FAIL("%s with {%lld, %ld}%s: returned %s, expected 0 (the lock, once released)", op_name[op],
		     ts ? (long long)ts->tv_sec : 0, ts ? ts->tv_nsec : 0,
		     read_held ? ", behind a reader" : "", err_name(w.rc));
	atomic_store(&w.ack, 1);
	join(t);
}

static struct timespec far_ts(int i, int j)
{
	struct timespec t = {(time_t)far_sec[i], far_nsec[j]};
	if (far_sec[i] == -2)
		t.tv_sec = time(NULL) + 10000000000LL;
	return t;
}

static void each_far(enum op first, enum op last, bool read_held)
{
	for (int i = 0; i < (int)(sizeof far_sec / sizeof far_sec[0]); i++)
		for (int j = 0; j < 2; j++)
			for (int op = (int)first; op <= (int)last; op++) {
				struct timespec t = far_ts(i, j);
				if (is_mutex(op))
					CHECK_RC(pthread_mutex_lock(&m), 0);
				else if (is_rwlock(op))
					CHECK_RC(read_held ? pthread_rwlock_rdlock(&rw)
							   : pthread_rwlock_wrlock(&rw),
						 0);
				waits_for_release(op, &t, read_held);
			}
}

static void far_mutex(void)
{
	each_far(MUTEX_TIMED, MUTEX_CLOCK_MONO, false);
}

static void far_rwlock(void)
{
	each_far(RD_TIMED, WR_CLOCK_MONO, false);
	/* writers behind a reader */
	for (int i = 0; i < (int)(sizeof far_sec / sizeof far_sec[0]); i++) {
		static const enum op wr[] = {WR_TIMED, WR_CLOCK_RT, WR_CLOCK_MONO};
		for (int k = 0; k < 3; k++) {
			struct timespec t = far_ts(i, 0);
			CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
			waits_for_release(wr[k], &t, true);
		}
	}
}

static void far_cond(void)
{
	each_far(COND_TIMED, COND_CLOCK_MONO, false);
}

static void rwlock_null(void)
{
	/* free: taken */
	CHECK_RC(pthread_rwlock_clockrdlock(&rw, BAD_CLOCK, no_limit), 0);
	CHECK_RC(pthread_rwlock_unlock(&rw), 0);
	CHECK_RC(pthread_rwlock_clockwrlock(&rw, BAD_CLOCK, no_limit), 0);
	/* write-held by the caller: EDEADLK (a timespec: EINVAL first) */
	CHECK_RC(pthread_rwlock_clockrdlock(&rw, BAD_CLOCK, no_limit), EDEADLK);
	CHECK_RC(pthread_rwlock_clockwrlock(&rw, BAD_CLOCK, no_limit), EDEADLK);
	struct timespec t = deadline_in(CLOCK_REALTIME, FAR_NS);
	CHECK_RC(pthread_rwlock_clockwrlock(&rw, BAD_CLOCK, &t), EINVAL);
	CHECK_RC(pthread_rwlock_unlock(&rw), 0);
	/* busy: they wait */
	CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
	waits_for_release(RD_CLOCK_BAD_NULL, no_limit, false);
	CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
	waits_for_release(WR_CLOCK_BAD_NULL, no_limit, false);
	CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
	waits_for_release(WR_CLOCK_BAD_NULL, no_limit, true);
}

static void mutex_null(void)
{
	CHECK_RC(pthread_mutex_clocklock(&m, BAD_CLOCK, no_limit), EINVAL); /* free */
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_clocklock(&m, BAD_CLOCK, no_limit), EINVAL); /* (NORMAL: would deadlock) */
	waits_for_release(MUTEX_TIMED_NULL, no_limit, false);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	waits_for_release(MUTEX_CLOCK_MONO_NULL, no_limit, false);
}

static const struct test_case cases[] = {
    {"mutex", far_mutex},	  {"rwlock", far_rwlock},     {"cond", far_cond},
    {"rwlock-null", rwlock_null}, {"mutex-null", mutex_null}, {NULL, NULL},
};

int main(int argc, char **argv)
{
	init_cond(&cv_rt, CLOCK_REALTIME);
	init_cond(&cv_mono, CLOCK_MONOTONIC);
	return run_case(cases, argc, argv);
}
