/*
 * async_cancel - threads whose cancel type is asynchronous and the lock
 * calls, as glibc 2.36 does it:
 *   - a thread blocked in pthread_mutex_lock, timedlock or clocklock on a
 *     mutex another thread holds is cancelled at once, without the lock: the
 *     holder can join it before it unlocks, and the mutex works afterwards
 *     (every mutex type);
 *   - a thread that relocks a NORMAL mutex it holds (a self-deadlock) and
 *     is cancelled runs its cleanup handler, which unlocks the mutex; other
 *     threads then use it;
 *   - an asynchronously cancelable thread's lock calls exclude, its timed
 *     locks time out, its condvar waits return holding the mutex, and when
 *     cancelled in a condvar wait it holds the mutex in its cleanup handler.
 * Ordering between threads is by flags and joins; where a thread is meant
 * to be inside a lock call when cancelled, the test waits (a bounded while)
 * for it to sleep, but the outcome checked is the same either way.
 */
#include "check.h"

#include <sys/syscall.h>

enum { LOCK, TIMED, CLOCK };
static const int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_RECURSIVE};

static int lock_how(pthread_mutex_t *m, int how)
{
	struct timespec rt = deadline_in(CLOCK_REALTIME, FAR_NS), mono = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	return how == LOCK    ? pthread_mutex_lock(m)
	       : how == TIMED ? pthread_mutex_timedlock(m, &rt)
			      : pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &mono);
}

static void go_async(void)
{
	int old;
	CHECK_RC(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old), 0);
	CHECK_EQ(old, PTHREAD_CANCEL_DEFERRED);
}

/* After the drama: two threads take the mutex 200 times each, a plain
 * counter checks exclusion; another thread finds it free. */
static pthread_mutex_t *use_m;
static long use_count;
static void *use_fn(void *p)
{
	(void)p;
	for (int i = 0; i < 200; i++) {
		CHECK_RC(pthread_mutex_lock(use_m), 0);
		long c = use_count;
		for (int k = 0; k < 100; k++) /* a window for the other */
			atomic_signal_fence(memory_order_seq_cst);
		use_count = c + 1;
		CHECK_RC(pthread_mutex_unlock(use_m), 0);
	}
	return NULL;
}
static void expect_usable(pthread_mutex_t *m)
{
	use_m = m;
	use_count = 0;
	pthread_t a = spawn(use_fn, NULL), b = spawn(use_fn, NULL);
	join(a);
	join(b);
	CHECK_EQ(use_count, 400);
	CHECK_RC(probe(m), 0);
}

/* --- blocked behind another thread --- */

struct blocked {
	pthread_mutex_t *m;
	int how;
	atomic_int ready, got;
	pid_t tid;
};
static void *blocked_fn(void *p)
{
	struct blocked *b = p;
	b->tid = (pid_t)syscall(SYS_gettid);
	go_async();
	atomic_store(&b->ready, 1);
	int rc = lock_how(b->m, b->how);
	atomic_store(&b->got, 1); /* not reached: cancelled while waiting */
	CHECK_RC(rc, 0);
	return NULL;
}
static void blocked(void)
{
	/* lock for every type; timedlock and clocklock for NORMAL */
	for (int t = 0; t < 3; t++)
		for (int how = LOCK; how <= (t == 0 ? CLOCK : LOCK); how++) {
			pthread_mutex_t m;
			init_type(&m, types[t]);
			CHECK_RC(pthread_mutex_lock(&m), 0);
			struct blocked b = {.m = &m, .how = how};
			pthread_t th = spawn(blocked_fn, &b);
			await_at_least(&b.ready, 1);
			await_waiting(b.tid, 100);
			CHECK_RC(pthread_cancel(th), 0);
			/* joined while the mutex is still held: the cancel must act
			 * in the wait */
			CHECK(join(th) == PTHREAD_CANCELED);
			CHECK(!atomic_load(&b.got));
			CHECK_RC(pthread_mutex_unlock(&m), 0);
			expect_usable(&m);
			CHECK_RC(pthread_mutex_destroy(&m), 0);
		}
}

/* --- self-deadlock on a NORMAL mutex --- */

struct selfdl {
	pthread_mutex_t *m;
	int how;
	atomic_int ready, handler;
	pid_t tid;
};
static void unlock_handler(void *p)
{
	struct selfdl *s = p;
	CHECK_RC(pthread_mutex_unlock(s->m), 0);
	atomic_store(&s->handler, 1);
}
static void *selfdl_fn(void *p)
{
	struct selfdl *s = p;
	s->tid = (pid_t)syscall(SYS_gettid);
	CHECK_RC(pthread_mutex_lock(s->m), 0);
	pthread_cleanup_push(unlock_handler, s);
	go_async();
	atomic_store(&s->ready, 1);
	(void)lock_how(s->m, s->how); /* never returns */
	FAIL("relock of a NORMAL mutex returned");
	pthread_cleanup_pop(0);
	return NULL;
}
static void self_deadlock(void)
{
	for (int how = LOCK; how <= CLOCK; how++) {
		pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
		struct selfdl s = {.m = &m, .how = how};
		pthread_t th = spawn(selfdl_fn, &s);
		await_at_least(&s.ready, 1);
		await_waiting(s.tid, 100);
		CHECK_RC(pthread_cancel(th), 0);
		CHECK(join(th) == PTHREAD_CANCELED);
		CHECK(atomic_load(&s.handler));
		expect_usable(&m);
	}
}

/* --- what an asynchronously cancelable thread does when not cancelled --- */

static pthread_mutex_t c_m = PTHREAD_MUTEX_INITIALIZER;
static long c_count;
static void *contend_fn(void *p)
{
	intptr_t how = (intptr_t)p;
	go_async();
	for (int i = 0; i < 100; i++) {
		CHECK_RC(lock_how(&c_m, (int)((how + i) % 3)), 0);
		long c = c_count;
		if (i % 16 == 0)
			sched_yield();
		c_count = c + 1;
		CHECK_RC(pthread_mutex_unlock(&c_m), 0);
	}
	return NULL;
}

static pthread_mutex_t w_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t w_c = PTHREAD_COND_INITIALIZER;
static int w_flag, w_waiting;
static atomic_int w_timed_out;
static void *timed_and_wait_fn(void *p)
{
	(void)p;
	go_async();
	/* main holds w_m: a timed lock times out, and the mutex is free of us */
	struct timespec d = deadline_in(CLOCK_MONOTONIC, 20 * MS);
	CHECK_RC(pthread_mutex_clocklock(&w_m, CLOCK_MONOTONIC, &d), ETIMEDOUT);
	CHECK_RC(pthread_mutex_trylock(&w_m), EBUSY);
	atomic_store(&w_timed_out, 1);
	CHECK_RC(pthread_mutex_lock(&w_m), 0);
	w_waiting = 1;
	while (!w_flag)
		CHECK_RC(pthread_cond_wait(&w_c, &w_m), 0);
	CHECK_RC(pthread_mutex_unlock(&w_m), 0);
	return NULL;
}

static void not_cancelled(void)
{
	pthread_t t[3];
	for (intptr_t i = 0; i < 3; i++)
		t[i] = spawn(contend_fn, (void *)i);
	for (int i = 0; i < 3; i++)
		CHECK(join(t[i]) == NULL);
	CHECK_EQ(c_count, 300);

	CHECK_RC(pthread_mutex_lock(&w_m), 0);
	pthread_t w = spawn(timed_and_wait_fn, NULL);
	await_at_least(&w_timed_out, 1);
	CHECK_RC(pthread_mutex_unlock(&w_m), 0);
	lock_when_waiting(&w_m, &w_waiting, 1);
	w_flag = 1;
	CHECK_RC(pthread_cond_signal(&w_c), 0);
	CHECK_RC(pthread_mutex_unlock(&w_m), 0);
	CHECK(join(w) == NULL);
	CHECK_RC(probe(&w_m), 0);
}

/* --- cancelled in a condvar wait: the mutex is held in the handler --- */

static pthread_mutex_t cw_m;
static pthread_cond_t cw_c = PTHREAD_COND_INITIALIZER;
static int cw_waiting;
static pid_t cw_tid;
static int cw_relock;
static void cw_handler(void *p)
{
	(void)p;
	cw_relock = pthread_mutex_lock(&cw_m); /* ERRORCHECK: EDEADLK if held */
	CHECK_RC(pthread_mutex_unlock(&cw_m), 0);
}
static void *cw_fn(void *p)
{
	(void)p;
	go_async();
	CHECK_RC(pthread_mutex_lock(&cw_m), 0);
	pthread_cleanup_push(cw_handler, NULL);
	cw_tid = (pid_t)syscall(SYS_gettid);
	cw_waiting = 1;
	for (;;)
		pthread_cond_wait(&cw_c, &cw_m);
	pthread_cleanup_pop(0);
	return NULL;
}
static void in_cond_wait(void)
{
	init_type(&cw_m, PTHREAD_MUTEX_ERRORCHECK);
	pthread_t t = spawn(cw_fn, NULL);
	lock_when_waiting(&cw_m, &cw_waiting, 1);
	/* asleep in the wait, not between its unlock and its sleep: glibc
	 * pushes its own cleanup handler only after the unlock, so a cancel
	 * there (the thread is asynchronously cancelable) would run cw_handler
	 * without the mutex: glibc's window, not the behaviour checked here */
	CHECK(await_sleeping(cw_tid, 60000));
	CHECK_RC(pthread_cancel(t), 0);
	CHECK_RC(pthread_mutex_unlock(&cw_m), 0);
	CHECK(join(t) == PTHREAD_CANCELED);
	CHECK_RC(cw_relock, EDEADLK);
	expect_usable(&cw_m);
}

static const struct test_case cases[] = {
    {"blocked", blocked},
    {"self-deadlock", self_deadlock},
    {"not-cancelled", not_cancelled},
    {"in-cond-wait", in_cond_wait},
    {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
