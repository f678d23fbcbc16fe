/*
 * cond_users - pthread_mutex_destroy of a mutex that condition-variable
 * waiters have released, as glibc 2.36 does it. glibc counts in __nusers
 * every thread holding the mutex or waiting on a condvar with it (its wait
 * unlocks without decrementing), and destroy returns EBUSY while the count
 * is not 0; so:
 *   - while a thread waits in pthread_cond_wait, timedwait or clockwait
 *     (on a CLOCK_REALTIME or CLOCK_MONOTONIC condvar), destroy of its
 *     mutex returns EBUSY even though the mutex is unlocked, for NORMAL,
 *     RECURSIVE and ERRORCHECK mutexes; the mutex stays usable;
 *   - once every waiter has returned (signalled, timed out, or cancelled
 *     and its cleanup handler has unlocked) and unlocked, destroy returns 0.
 *
 * Waiting is established without sleeps: a waiter announces itself under
 * the mutex and then waits, so once another thread holds the mutex and
 * sees the announcement, the waiter is inside the wait.
 */
#include "check.h"

static const int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK};
static const clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC};

/* how: 0 wait, 1 timedwait (the condvar's clock), 2 clockwait monotonic,
 * 3 clockwait realtime. patience: FAR_NS, or a short timeout. */
struct waiter {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	clockid_t cclock;
	int how;
	int64_t patience;
	int *announced, *go;
	int rc;
	pthread_t t;
};

static void unlock_cleanup(void *p)
{
	struct waiter *w = p;
	CHECK_RC(pthread_mutex_unlock(w->m), 0);
}

static void *waiter_fn(void *p)
{
	struct waiter *w = p;
	CHECK_RC(pthread_mutex_lock(w->m), 0);
	pthread_cleanup_push(unlock_cleanup, w);
	(*w->announced)++;
	while (!*w->go) {
		clockid_t clock = w->how == 1 ? w->cclock : w->how == 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
		struct timespec d = deadline_in(clock, w->patience);
		if (w->how == 0)
			w->rc = pthread_cond_wait(w->c, w->m);
		else if (w->how == 1)
			w->rc = pthread_cond_timedwait(w->c, w->m, &d);
		else
			w->rc = pthread_cond_clockwait(w->c, w->m, clock, &d);
		if (w->rc == ETIMEDOUT)
			break;
		CHECK_RC(w->rc, 0);
	}
	pthread_cleanup_pop(0);
	CHECK_RC(pthread_mutex_unlock(w->m), 0);
	return NULL;
}

/* m is unlocked and has condvar users: destroy is EBUSY, and the mutex
 * still works (lock, trylock from another thread, unlock). */
static void expect_busy_and_usable(pthread_mutex_t *m, const char *what)
{
	int rc = pthread_mutex_destroy(m);
	if (rc != EBUSY)
		FAIL("%s: destroy returned %d (%s), expected EBUSY", what, rc, err_name(rc));
	CHECK_RC(pthread_mutex_lock(m), 0);
	CHECK_RC(probe(m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	CHECK_RC(probe(m), 0);
	CHECK_RC(pthread_mutex_destroy(m), EBUSY);
}

/* One waiter, every type x condvar clock x wait function: EBUSY while it
 * waits (also after another thread has locked and unlocked the mutex), 0
 * once it has been signalled and has unlocked. */
static void while_waiting(void)
{
	for (int t = 0; t < 3; t++)
		for (int k = 0; k < 2; k++)
			for (int how = 0; how < 4; how++) {
				pthread_mutex_t m;
				pthread_cond_t c;
				int announced = 0, go = 0;
				init_type(&m, types[t]);
				init_cond(&c, clocks[k]);
				struct waiter w = {&m, &c, clocks[k], how, FAR_NS, &announced, &go, -1, 0};
				w.t = spawn(waiter_fn, &w);
				lock_when_waiting(&m, &announced, 1);
				CHECK_RC(pthread_mutex_unlock(&m), 0);
				char what[64];
				snprintf(what, sizeof what, "type %d, clock %d, how %d", types[t],
					 (int)clocks[k], how);
				expect_busy_and_usable(&m, what);
				CHECK_RC(pthread_mutex_lock(&m), 0);
				go = 1;
				CHECK_RC(pthread_cond_signal(&c), 0);
				CHECK_RC(pthread_mutex_unlock(&m), 0);
				CHECK(join(w.t) == NULL);
				CHECK_RC(w.rc, 0);
				CHECK_RC(pthread_mutex_destroy(&m), 0);
				CHECK_RC(pthread_cond_destroy(&c), 0);
			}
}

/* Three waiters on two condvars: EBUSY until the last has left. */
static void several(void)
{
	for (int t = 0; t < 3; t++) {
		pthread_mutex_t m;
		pthread_cond_t c[2];
		int announced = 0, go[2] = {0, 0};
		init_type(&m, types[t]);
		init_cond(&c[0], CLOCK_REALTIME);
		init_cond(&c[1], CLOCK_MONOTONIC);
		struct waiter w[3];
		for (int i = 0; i < 3; i++) {
			w[i] = (struct waiter){
			    &m, &c[i / 2], clocks[i / 2], i, FAR_NS, &announced, &go[i / 2], -1, 0};
			w[i].t = spawn(waiter_fn, &w[i]);
			lock_when_waiting(&m, &announced, i + 1);
			CHECK_RC(pthread_mutex_unlock(&m), 0);
		}
		expect_busy_and_usable(&m, "three waiters");
		CHECK_RC(pthread_mutex_lock(&m), 0);
		go[0] = 1;
		CHECK_RC(pthread_cond_broadcast(&c[0]), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK(join(w[0].t) == NULL);
		CHECK(join(w[1].t) == NULL);
		expect_busy_and_usable(&m, "one waiter left");
		CHECK_RC(pthread_mutex_lock(&m), 0);
		go[1] = 1;
		CHECK_RC(pthread_cond_signal(&c[1]), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK(join(w[2].t) == NULL);
		CHECK_RC(pthread_mutex_destroy(&m), 0);
	}
}

/* A waiter that timed out, and one that was cancelled (its cleanup handler
 * unlocks), no longer count. */
static void timed_out_or_cancelled(void)
{
	for (int t = 0; t < 3; t++) {
		pthread_mutex_t m;
		pthread_cond_t c;
		int announced = 0, go = 0;
		init_type(&m, types[t]);
		init_cond(&c, CLOCK_MONOTONIC);
		struct waiter w = {&m, &c, CLOCK_MONOTONIC, 1, 1 * MS, &announced, &go, -1, 0};
		w.t = spawn(waiter_fn, &w);
		CHECK(join(w.t) == NULL);
		CHECK_RC(w.rc, ETIMEDOUT);
		CHECK_RC(pthread_mutex_destroy(&m), 0);

		init_type(&m, types[t]);
		announced = 0;
		w = (struct waiter){&m, &c, CLOCK_MONOTONIC, t, FAR_NS, &announced, &go, -1, 0};
		w.t = spawn(waiter_fn, &w);
		lock_when_waiting(&m, &announced, 1);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_destroy(&m), EBUSY);
		CHECK_RC(pthread_cancel(w.t), 0);
		CHECK(join(w.t) == PTHREAD_CANCELED);
		CHECK_RC(pthread_mutex_destroy(&m), 0);
		CHECK_RC(pthread_cond_destroy(&c), 0);
	}
}

static const struct test_case cases[] = {
    {"while-waiting", while_waiting},
    {"several", several},
    {"timed-out-or-cancelled", timed_out_or_cancelled},
    {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
