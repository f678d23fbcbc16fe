/*
 * cancel - pthread_cancel and the lock calls, as glibc 2.36 does it:
 *   - a thread cancelled while blocked in pthread_cond_wait, timedwait or
 *     clockwait is cancelled, and has re-acquired the mutex before its
 *     cleanup handlers run (the handler sees itself as the owner of an
 *     ERRORCHECK mutex, and another thread sees it busy);
 *   - a cancelled waiter does not consume a signal sent at the same time
 *     when another thread is waiting (POSIX);
 *   - pthread_mutex_lock, timedlock and clocklock are not cancellation
 *     points: a thread blocked in them takes the lock and runs on to the
 *     next cancellation point;
 *   - with cancellation disabled, a wait is not interrupted by a cancel.
 */
#include "check.h"

static void init_errorcheck(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	CHECK_RC(pthread_mutexattr_init(&a), 0);
	CHECK_RC(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), 0);
	CHECK_RC(pthread_mutex_init(m, &a), 0);
	CHECK_RC(pthread_mutexattr_destroy(&a), 0);
}

struct cw {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	int how; /* 0 wait, 1 timedwait, 2 clockwait monotonic, 3 clockwait realtime */
	int *announced;
	int handshake; /* handler waits for main to probe the mutex */
	atomic_int in_handler, probed, handler_done;
	int relock_rc, unlock_rc;
	int wait_rc;
	pthread_t t;
};

static void cleanup(void *p)
{
	struct cw *w = p;
	/* An ERRORCHECK relock tells whether this thread owns the mutex. */
	w->relock_rc = pthread_mutex_lock(w->m);
	atomic_store_explicit(&w->in_handler, 1, memory_order_release);
	if (w->handshake)
		await_at_least(&w->probed, 1);
	w->unlock_rc = pthread_mutex_unlock(w->m);
	atomic_store_explicit(&w->handler_done, 1, memory_order_release);
}

static void *cw_fn(void *p)
{
	struct cw *w = p;
	CHECK_RC(pthread_mutex_lock(w->m), 0);
	pthread_cleanup_push(cleanup, w);
	(*w->announced)++;
	struct timespec rt = deadline_in(CLOCK_REALTIME, FAR_NS), mono = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	switch (w->how) {
	case 0:
		w->wait_rc = pthread_cond_wait(w->c, w->m);
		break;
	case 1:
		w->wait_rc = pthread_cond_timedwait(w->c, w->m, &rt);
		break;
	case 2:
		w->wait_rc = pthread_cond_clockwait(w->c, w->m, CLOCK_MONOTONIC, &mono);
		break;
	default:
		w->wait_rc = pthread_cond_clockwait(w->c, w->m, CLOCK_REALTIME, &rt);
	}
	pthread_cleanup_pop(0);
	CHECK_RC(pthread_mutex_unlock(w->m), 0);
	return NULL;
}

static void start(struct cw *w, pthread_mutex_t *m, pthread_cond_t *c, int how, int *announced, int handshake)
{
	*w = (struct cw){.m = m, .c = c, .how = how, .announced = announced, .handshake = handshake};
	w->t = spawn(cw_fn, w);
}
/* Returns with m held once every started waiter is waiting. */
static void lock_when_waiting(pthread_mutex_t *m, int *announced, int n)
{
	for (;;) {
		CHECK_RC(pthread_mutex_lock(m), 0);
		if (*announced == n)
			return;
		CHECK_RC(pthread_mutex_unlock(m), 0);
		sched_yield();
	}
}
static void expect_cancelled(struct cw *w)
{
	void *ret = join(w->t);
	if (ret != PTHREAD_CANCELED)
		FAIL("waiter (how %d) was not cancelled (wait returned %d)", w->how, w->wait_rc);
	CHECK(atomic_load(&w->handler_done));
	if (w->relock_rc != EDEADLK)
		FAIL("cleanup handler (how %d): mutex not re-acquired before it ran (relock gave %d, %s)",
		     w->how, w->relock_rc, err_name(w->relock_rc));
	CHECK_RC(w->unlock_rc, 0);
}

/* Cancel a waiter blocked in each wait function. The mutex is held by main
 * when it cancels, so the waiter re-acquires it after main lets go. */
static void in_wait(void)
{
	pthread_mutex_t m;
	pthread_cond_t c[2];
	init_errorcheck(&m);
	CHECK_RC(pthread_cond_init(&c[0], NULL), 0);
	pthread_condattr_t a;
	CHECK_RC(pthread_condattr_init(&a), 0);
	CHECK_RC(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
	CHECK_RC(pthread_cond_init(&c[1], &a), 0);
	int announced = 0, started = 0;
	for (int k = 0; k < 2; k++) {
		for (int how = 0; how < 4; how++) {
			if (k == 1 && how == 1)
				continue; /* timedwait on a monotonic condvar: in_wait_monotonic */
			struct cw w;
			start(&w, &m, &c[k], how, &announced, 1);
			lock_when_waiting(&m, &announced, ++started);
			CHECK_RC(pthread_cancel(w.t), 0);
			CHECK_RC(pthread_mutex_unlock(&m), 0);
			/* While the handler runs, another thread sees the mutex busy. */
			await_at_least(&w.in_handler, 1);
			CHECK_RC(pthread_mutex_trylock(&m), EBUSY);
			atomic_store_explicit(&w.probed, 1, memory_order_release);
			expect_cancelled(&w);
			CHECK_RC(pthread_mutex_trylock(&m), 0);
			CHECK_RC(pthread_mutex_unlock(&m), 0);
		}
	}
}

/* A monotonic condvar's timedwait, cancelled. */
static void *mono_fn(void *p)
{
	struct cw *w = p;
	CHECK_RC(pthread_mutex_lock(w->m), 0);
	pthread_cleanup_push(cleanup, w);
	(*w->announced)++;
	struct timespec mono = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	w->wait_rc = pthread_cond_timedwait(w->c, w->m, &mono);
	pthread_cleanup_pop(0);
	CHECK_RC(pthread_mutex_unlock(w->m), 0);
	return NULL;
}
static void in_wait_monotonic(void)
{
	pthread_mutex_t m;
	pthread_cond_t c;
	init_errorcheck(&m);
	pthread_condattr_t a;
	CHECK_RC(pthread_condattr_init(&a), 0);
	CHECK_RC(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
	CHECK_RC(pthread_cond_init(&c, &a), 0);
	int announced = 0;
	struct cw w = {.m = &m, .c = &c, .how = 1, .announced = &announced};
	w.t = spawn(mono_fn, &w);
	lock_when_waiting(&m, &announced, 1);
	CHECK_RC(pthread_cancel(w.t), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	expect_cancelled(&w);
}

/* Cancel at any moment from the thread's start: whenever the cancellation
 * is acted upon (at the wait), the handler finds the mutex held. */
static void racing(void)
{
	pthread_mutex_t m;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	init_errorcheck(&m);
	for (int r = 0; r < 60; r++) {
		int announced = 0;
		struct cw w;
		start(&w, &m, &c, r % 4, &announced, 0);
		for (int y = 0; y < r % 5; y++)
			sched_yield();
		CHECK_RC(pthread_cancel(w.t), 0);
		expect_cancelled(&w);
		CHECK_RC(probe(&m), 0);
	}
}

/* POSIX: a thread cancelled while blocked in a wait does not consume a
 * signal sent at the same time if others are waiting. A and B wait; main
 * cancels A and signals; if A ended cancelled, B must have been woken. */
static void signal_not_consumed(void)
{
	pthread_mutex_t m;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	init_errorcheck(&m);
	for (int r = 0; r < 40; r++) {
		int announced = 0;
		struct cw a, b;
		start(&a, &m, &c, r % 4, &announced, 0);
		lock_when_waiting(&m, &announced, 1);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		start(&b, &m, &c, (r + 1) % 4, &announced, 0);
		lock_when_waiting(&m, &announced, 2);
		CHECK_RC(pthread_cancel(a.t), 0);
		CHECK_RC(pthread_cond_signal(&c), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		void *ra = join(a.t);
		if (ra != PTHREAD_CANCELED) {
			/* A took the signal and returned before acting on the
			 * cancel (it has no cancellation point after the wait):
			 * B needs a signal of its own. */
			CHECK_RC(a.wait_rc, 0);
			CHECK_RC(pthread_cond_signal(&c), 0);
		}
		void *rb = join(b.t);
		CHECK(rb == NULL);
		CHECK_RC(b.wait_rc, 0);
	}
}

/* pthread_mutex_lock, timedlock and clocklock are not cancellation points. */
struct locker {
	pthread_mutex_t *m;
	int how;
	atomic_int started, got, after;
	pid_t tid;
};
static void *locker_fn(void *p)
{
	struct locker *l = p;
	l->tid = gettid();
	atomic_store_explicit(&l->started, 1, memory_order_release);
	struct timespec rt = deadline_in(CLOCK_REALTIME, FAR_NS), mono = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	int rc = l->how == 0   ? pthread_mutex_lock(l->m)
		 : l->how == 1 ? pthread_mutex_timedlock(l->m, &rt)
			       : pthread_mutex_clocklock(l->m, CLOCK_MONOTONIC, &mono);
	CHECK_RC(rc, 0);
	atomic_store_explicit(&l->got, 1, memory_order_release);
	CHECK_RC(pthread_mutex_unlock(l->m), 0);
	pthread_testcancel();
	atomic_store_explicit(&l->after, 1, memory_order_release);
	return NULL;
}
static void lock_not_cancellation_point(void)
{
	static const int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_RECURSIVE};
	for (int t = 0; t < 3; t++) {
		for (int how = 0; how < 3; how++) {
			pthread_mutex_t m;
			pthread_mutexattr_t a;
			CHECK_RC(pthread_mutexattr_init(&a), 0);
			CHECK_RC(pthread_mutexattr_settype(&a, types[t]), 0);
			CHECK_RC(pthread_mutex_init(&m, &a), 0);
			struct locker l = {.m = &m, .how = how};
			CHECK_RC(pthread_mutex_lock(&m), 0);
			pthread_t th = spawn(locker_fn, &l);
			await_at_least(&l.started, 1);
			/* Cancel once it waits in the lock call: asleep in the
			 * kernel, or spinning and yielding there (under yield it
			 * never sleeps). */
			await_waiting(l.tid, 1000);
			CHECK_RC(pthread_cancel(th), 0);
			for (int y = 0; y < 20; y++)
				sched_yield();
			CHECK_RC(pthread_mutex_unlock(&m), 0);
			CHECK(join(th) == PTHREAD_CANCELED);
			if (!atomic_load(&l.got))
				FAIL("cancelled inside a lock call (type %d, how %d)", types[t], how);
			CHECK(!atomic_load(&l.after));
			CHECK_RC(probe(&m), 0);
		}
	}
}

/* A thread with a cancel already pending calls every lock and condvar call
 * that is not a cancellation point, starting with its very first lock (when
 * per-thread state may be set up): none of them acts on the cancel; the
 * first cancellation point after them does. */
static atomic_int pc_go;
static atomic_int pc_reached;
static void *pending_fn(void *p)
{
	(void)p;
	await_at_least(&pc_go, 1); /* no cancellation point in here */
	pthread_mutex_t m, r;
	pthread_cond_t c;
	pthread_mutexattr_t a;
	struct timespec rt = deadline_in(CLOCK_REALTIME, FAR_NS), mono = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	CHECK_RC(pthread_mutex_init(&m, NULL), 0);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_trylock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_timedlock(&m, &rt), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &mono), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutexattr_init(&a), 0);
	CHECK_RC(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), 0);
	CHECK_RC(pthread_mutex_init(&r, &a), 0);
	CHECK_RC(pthread_mutex_lock(&r), 0);
	CHECK_RC(pthread_mutex_lock(&r), 0);
	CHECK_RC(pthread_mutex_unlock(&r), 0);
	CHECK_RC(pthread_mutex_unlock(&r), 0);
	CHECK_RC(pthread_cond_init(&c, NULL), 0);
	CHECK_RC(pthread_cond_signal(&c), 0);
	CHECK_RC(pthread_cond_broadcast(&c), 0);
	CHECK_RC(pthread_cond_destroy(&c), 0);
	CHECK_RC(pthread_mutex_destroy(&r), 0);
	CHECK_RC(pthread_mutex_destroy(&m), 0);
	atomic_store(&pc_reached, 1);
	pthread_testcancel();
	FAIL("not cancelled at pthread_testcancel");
	return NULL;
}
static void pending(void)
{
	for (int i = 0; i < 20; i++) {
		atomic_store(&pc_go, 0);
		atomic_store(&pc_reached, 0);
		pthread_t t = spawn(pending_fn, NULL);
		CHECK_RC(pthread_cancel(t), 0);
		atomic_store(&pc_go, 1);
		CHECK(join(t) == PTHREAD_CANCELED);
		if (!atomic_load(&pc_reached))
			FAIL("cancelled inside a mutex or condvar call that is not a cancellation point");
	}
}

/* With cancellation disabled, a cancel does not end the wait; the thread is
 * cancelled at the first cancellation point after it enables it again. */
static pthread_mutex_t d_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t d_c = PTHREAD_COND_INITIALIZER;
static int d_flag, d_waiting;
static atomic_int d_returned;
static void *disabled_fn(void *p)
{
	(void)p;
	CHECK_RC(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL), 0);
	CHECK_RC(pthread_mutex_lock(&d_m), 0);
	d_waiting = 1;
	while (!d_flag)
		CHECK_RC(pthread_cond_wait(&d_c, &d_m), 0);
	CHECK_RC(pthread_mutex_unlock(&d_m), 0);
	atomic_store(&d_returned, 1);
	CHECK_RC(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL), 0);
	pthread_testcancel();
	FAIL("not cancelled at pthread_testcancel");
	return NULL;
}
static void disabled(void)
{
	pthread_t t = spawn(disabled_fn, NULL);
	for (;;) {
		CHECK_RC(pthread_mutex_lock(&d_m), 0);
		if (d_waiting)
			break;
		CHECK_RC(pthread_mutex_unlock(&d_m), 0);
		sched_yield();
	}
	CHECK_RC(pthread_cancel(t), 0);
	CHECK_RC(pthread_mutex_unlock(&d_m), 0);
	for (int y = 0; y < 50; y++)
		sched_yield();
	CHECK(!atomic_load(&d_returned));
	CHECK_RC(pthread_mutex_lock(&d_m), 0);
	d_flag = 1;
	CHECK_RC(pthread_cond_signal(&d_c), 0);
	CHECK_RC(pthread_mutex_unlock(&d_m), 0);
	CHECK(join(t) == PTHREAD_CANCELED);
	CHECK(atomic_load(&d_returned));
}

static const struct test_case cases[] = {
    {"in-wait", in_wait},
    {"in-wait-monotonic", in_wait_monotonic},
    {"racing", racing},
    {"signal-not-consumed", signal_not_consumed},
    {"lock-not-cancellation-point", lock_not_cancellation_point},
    {"pending", pending},
    {"disabled", disabled},
    {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
