/*
 * condvar - pthread_cond_* as glibc 2.36 gives them: no lost wake-ups; a
 * wait returns only after a signal or broadcast issued after it started
 * waiting, a timeout or a cancellation (cancel.c), never because the thread
 * was interrupted; broadcast wakes every waiter; timed waits honour the
 * condvar's clock (pthread_condattr_setclock) or the clock given to
 * clockwait, and return ETIMEDOUT holding the mutex.
 *
 * "Is waiting" is established without sleeps: a waiter announces itself
 * under the mutex and then waits, so once another thread holds the mutex
 * and sees the announcement, the waiter is inside pthread_cond_wait.
 * Destroy with a waiter still blocked waits for it to leave and returns 0,
 * as glibc's does (destroy-waits).
 * Most waiters here wait ONCE, without a predicate loop, as SPLASH-2's
 * barrier does: a spurious return is then a visible failure.
 */
#include "check.h"

#include <signal.h>
#include <unistd.h>

/* m is an ERRORCHECK mutex: is the caller its owner? */
static void owns(pthread_mutex_t *m)
{
	CHECK_RC(pthread_mutex_lock(m), EDEADLK);
	CHECK_RC(pthread_mutex_trylock(m), EBUSY);
}

/* A waiter that waits once. how: 0 wait, 1 timedwait, 2 clockwait
 * (monotonic), 3 clockwait (realtime); all with deadlines never reached. */
struct waiter {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	int how;
	int *announced; /* incremented under m just before waiting */
	atomic_int returned;
	int rc;
	pid_t tid;
	pthread_t t;
};
static void *waiter_fn(void *p)
{
	struct waiter *w = p;
	w->tid = gettid();
	CHECK_RC(pthread_mutex_lock(w->m), 0);
	(*w->announced)++;
	struct timespec rt = deadline_in(CLOCK_REALTIME, FAR_NS), mono = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	switch (w->how) {
	case 0:
		w->rc = pthread_cond_wait(w->c, w->m);
		break;
	case 1:
		w->rc = pthread_cond_timedwait(w->c, w->m, &rt);
		break;
	case 2:
		w->rc = pthread_cond_clockwait(w->c, w->m, CLOCK_MONOTONIC, &mono);
		break;
	default:
		w->rc = pthread_cond_clockwait(w->c, w->m, CLOCK_REALTIME, &rt);
	}
	atomic_store_explicit(&w->returned, 1, memory_order_release);
	owns(w->m);
	CHECK_RC(pthread_mutex_unlock(w->m), 0);
	return NULL;
}
/* Start n waiters and return once all of them are inside the wait. */
static void start_waiters(struct waiter *w, int n, pthread_mutex_t *m, pthread_cond_t *c, int how,
			  int *announced)
{
	int before;
	CHECK_RC(pthread_mutex_lock(m), 0);
	before = *announced;
	CHECK_RC(pthread_mutex_unlock(m), 0);
	for (int i = 0; i < n; i++) {
		w[i] = (struct waiter){.m = m, .c = c, .how = how, .announced = announced};
		w[i].t = spawn(waiter_fn, &w[i]);
	}
	for (;;) {
		CHECK_RC(pthread_mutex_lock(m), 0);
		int all = *announced == before + n;
		CHECK_RC(pthread_mutex_unlock(m), 0);
		if (all)
			break;
		sched_yield();
	}
}
static void finish_waiter(struct waiter *w)
{
	join(w->t);
	CHECK(atomic_load(&w->returned));
	CHECK_RC(w->rc, 0);
}

/* --- signal: a ping-pong of 200 rounds, each side waiting in a loop. --- */
static pthread_mutex_t pp_m;
static pthread_cond_t pp_c = PTHREAD_COND_INITIALIZER;
static int pp_turn, pp_rounds = 100;
static void *pong(void *p)
{
	(void)p;
	CHECK_RC(pthread_mutex_lock(&pp_m), 0);
	for (int i = 0; i < pp_rounds; i++) {
		while (pp_turn != 1)
			CHECK_RC(pthread_cond_wait(&pp_c, &pp_m), 0);
		owns(&pp_m);
		pp_turn = 0;
		CHECK_RC(pthread_cond_signal(&pp_c), 0);
	}
	CHECK_RC(pthread_mutex_unlock(&pp_m), 0);
	return NULL;
}
static void signal_pingpong(void)
{
	init_type(&pp_m, PTHREAD_MUTEX_ERRORCHECK);
	pthread_t t = spawn(pong, NULL);
	CHECK_RC(pthread_mutex_lock(&pp_m), 0);
	for (int i = 0; i < pp_rounds; i++) {
		pp_turn = 1;
		CHECK_RC(pthread_cond_signal(&pp_c), 0);
		while (pp_turn != 0)
			CHECK_RC(pthread_cond_wait(&pp_c, &pp_m), 0);
		owns(&pp_m);
	}
	CHECK_RC(pthread_mutex_unlock(&pp_m), 0);
	join(t);
}

/* --- no lost wake-ups: a one-slot buffer, 3 producers, 3 consumers, and
 * pthread_cond_signal only. --- */
enum { PRODUCERS = 3, ITEMS = 400 };
static pthread_mutex_t pc_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pc_full = PTHREAD_COND_INITIALIZER, pc_empty = PTHREAD_COND_INITIALIZER;
static int pc_has, pc_slot;
static long pc_sum;
static void *producer(void *p)
{
	int base = (int)(intptr_t)p;
	for (int i = 1; i <= ITEMS; i++) {
		CHECK_RC(pthread_mutex_lock(&pc_m), 0);
		while (pc_has)
			CHECK_RC(pthread_cond_wait(&pc_empty, &pc_m), 0);
		pc_slot = base + i;
		pc_has = 1;
		CHECK_RC(pthread_cond_signal(&pc_full), 0);
		CHECK_RC(pthread_mutex_unlock(&pc_m), 0);
	}
	return NULL;
}
static void *consumer(void *p)
{
	(void)p;
	for (int i = 0; i < ITEMS; i++) {
		CHECK_RC(pthread_mutex_lock(&pc_m), 0);
		while (!pc_has)
			CHECK_RC(pthread_cond_wait(&pc_full, &pc_m), 0);
		pc_sum += pc_slot;
		pc_has = 0;
		CHECK_RC(pthread_cond_signal(&pc_empty), 0);
		CHECK_RC(pthread_mutex_unlock(&pc_m), 0);
	}
	return NULL;
}
static void no_lost_wakeup(void)
{
	pthread_t t[2 * PRODUCERS];
	for (int i = 0; i < PRODUCERS; i++) {
		t[i] = spawn(producer, (void *)(intptr_t)(i * 1000000));
		t[PRODUCERS + i] = spawn(consumer, NULL);
	}
	for (int i = 0; i < 2 * PRODUCERS; i++)
		join(t[i]);
	long want = 0;
	for (int i = 0; i < PRODUCERS; i++)
		want += (long)i * 1000000 * ITEMS + (long)ITEMS * (ITEMS + 1) / 2;
	CHECK_EQ(pc_sum, want);
}

/* --- no return without a signal --- */
static atomic_int handled;
static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&handled, 1, memory_order_release);
}
/* Interrupt w's thread with SIGUSR1 (handler without SA_RESTART) n times;
 * it must still be waiting after each. */
static void interrupt(struct waiter *w, int n)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: the futex wait returns EINTR */
	CHECK_RC(sigaction(SIGUSR1, &sa, NULL), 0);
	for (int i = 0; i < n; i++) {
		int before = atomic_load(&handled);
		CHECK_RC(pthread_kill(w->t, SIGUSR1), 0);
		await_at_least(&handled, before + 1);
		for (int k = 0; k < 10; k++)
			sched_yield();
		if (atomic_load_explicit(&w->returned, memory_order_acquire))
			FAIL("wait (how %d) returned %d without a signal, after %d interruptions", w->how,
			     w->rc, i + 1);
	}
}
static void no_spurious(void)
{
	pthread_mutex_t m;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	int announced = 0;
	/* Signals and broadcasts with nobody waiting are not remembered. */
	for (int i = 0; i < 5; i++) {
		CHECK_RC(pthread_cond_signal(&c), 0);
		CHECK_RC(pthread_cond_broadcast(&c), 0);
	}
	for (int how = 0; how < 4; how++) {
		struct waiter w;
		start_waiters(&w, 1, &m, &c, how, &announced);
		interrupt(&w, 100);
		/* Signal it, then a second waiter arrives after the signal. */
		CHECK_RC(pthread_mutex_lock(&m), 0);
		CHECK_RC(pthread_cond_signal(&c), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		finish_waiter(&w);
		start_waiters(&w, 1, &m, &c, how, &announced);
		interrupt(&w, 20);
		CHECK_RC(pthread_cond_broadcast(&c), 0);
		finish_waiter(&w);
	}
}

/* --- broadcast wakes all (20 rounds of 8 single waits) --- */
static void broadcast(void)
{
	pthread_mutex_t m;
	pthread_cond_t c;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	CHECK_RC(pthread_cond_init(&c, NULL), 0);
	int announced = 0;
	for (int r = 0; r < 20; r++) {
		struct waiter w[8];
		start_waiters(w, 8, &m, &c, r % 4, &announced);
		CHECK_RC(pthread_mutex_lock(&m), 0);
		CHECK_RC(pthread_cond_broadcast(&c), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		for (int i = 0; i < 8; i++)
			finish_waiter(&w[i]);
	}
	CHECK_RC(pthread_cond_destroy(&c), 0);
}

/* --- n signals wake n waiters (single waits) --- */
static void signal_each(void)
{
	pthread_mutex_t m;
	pthread_cond_t c;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	CHECK_RC(pthread_cond_init(&c, NULL), 0);
	int announced = 0;
	for (int r = 0; r < 10; r++) {
		struct waiter w[6];
		start_waiters(w, 6, &m, &c, r % 4, &announced);
		for (int i = 0; i < 6; i++) {
			CHECK_RC(pthread_mutex_lock(&m), 0);
			CHECK_RC(pthread_cond_signal(&c), 0);
			CHECK_RC(pthread_mutex_unlock(&m), 0);
		}
		for (int i = 0; i < 6; i++)
			finish_waiter(&w[i]);
	}
	/* Signalling without holding the mutex is allowed too. */
	struct waiter w[3];
	start_waiters(w, 3, &m, &c, 0, &announced);
	for (int i = 0; i < 3; i++)
		CHECK_RC(pthread_cond_signal(&c), 0);
	for (int i = 0; i < 3; i++)
		finish_waiter(&w[i]);
}

/* --- timeouts: ETIMEDOUT not before the deadline on the right clock, and
 * the mutex held on return --- */
static void expect_timeout(pthread_cond_t *c, pthread_mutex_t *m, int clockwait, clockid_t clk)
{
	struct timespec dl = deadline_in(clk, 3 * MS);
	if (clockwait)
		CHECK_RC(pthread_cond_clockwait(c, m, clk, &dl), ETIMEDOUT);
	else
		CHECK_RC(pthread_cond_timedwait(c, m, &dl), ETIMEDOUT);
	CHECK_REACHED(clk, dl);
	owns(m);
	CHECK_RC(probe(m), EBUSY);
	/* Deadlines already past, and negative tv_sec: ETIMEDOUT at once. */
	struct timespec past[] = {deadline_in(clk, -1 * MS), {0, 0}, {-1, 0}};
	for (int i = 0; i < 3; i++) {
		if (clockwait)
			CHECK_RC(pthread_cond_clockwait(c, m, clk, &past[i]), ETIMEDOUT);
		else
			CHECK_RC(pthread_cond_timedwait(c, m, &past[i]), ETIMEDOUT);
		owns(m);
	}
}
static void timedwait_realtime(void)
{
	pthread_mutex_t m;
	pthread_cond_t c;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	CHECK_RC(pthread_cond_init(&c, NULL), 0); /* CLOCK_REALTIME */
	CHECK_RC(pthread_mutex_lock(&m), 0);
	expect_timeout(&c, &m, 0, CLOCK_REALTIME);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	init_cond(&c, CLOCK_REALTIME);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	expect_timeout(&c, &m, 0, CLOCK_REALTIME);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
}
/* With CLOCK_MONOTONIC set by pthread_condattr_setclock, the deadline is
 * monotonic time (if it were read as CLOCK_REALTIME it would be decades
 * past, and the wait would return before the monotonic deadline). */
static void timedwait_monotonic(void)
{
	pthread_mutex_t m;
	pthread_cond_t c;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	init_cond(&c, CLOCK_MONOTONIC);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	expect_timeout(&c, &m, 0, CLOCK_MONOTONIC);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
}
/* clockwait uses its own clock whatever the condvar's. */
static void clockwait(void)
{
	pthread_mutex_t m;
	pthread_cond_t c[2];
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	init_cond(&c[0], CLOCK_REALTIME);
	init_cond(&c[1], CLOCK_MONOTONIC);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	for (int i = 0; i < 2; i++) {
		expect_timeout(&c[i], &m, 1, CLOCK_MONOTONIC);
		expect_timeout(&c[i], &m, 1, CLOCK_REALTIME);
	}
	CHECK_RC(pthread_mutex_unlock(&m), 0);
}
/* Invalid arguments: EINVAL, the mutex still held. */
static void timed_einval(void)
{
	pthread_mutex_t m;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	static const long bad_nsec[] = {1000000000, -1};
	for (int i = 0; i < 2; i++) {
		struct timespec dl = {now_ns(CLOCK_REALTIME) / 1000000000 + 3600, bad_nsec[i]};
		CHECK_RC(pthread_cond_timedwait(&c, &m, &dl), EINVAL);
		owns(&m);
		CHECK_RC(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &dl), EINVAL);
		owns(&m);
	}
	static const clockid_t bad_clock[] = {CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
					      CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME, -1};
	for (size_t i = 0; i < sizeof bad_clock / sizeof bad_clock[0]; i++) {
		struct timespec dl = deadline_in(CLOCK_MONOTONIC, 0);
		CHECK_RC(pthread_cond_clockwait(&c, &m, bad_clock[i], &dl), EINVAL);
		owns(&m);
	}
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	/* Waiting on an errorcheck mutex the caller does not hold: EPERM. */
	CHECK_RC(pthread_cond_wait(&c, &m), EPERM);
	struct timespec dl = deadline_in(CLOCK_REALTIME, FAR_NS);
	CHECK_RC(pthread_cond_timedwait(&c, &m, &dl), EPERM);
	CHECK_RC(probe(&m), 0);
}
/* Timed waits signalled before their deadline return 0. */
static void timed_signalled(void)
{
	pthread_mutex_t m;
	pthread_cond_t c[2];
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	init_cond(&c[0], CLOCK_REALTIME);
	init_cond(&c[1], CLOCK_MONOTONIC);
	int announced = 0;
	for (int k = 0; k < 2; k++) {
		for (int how = 1; how < 4; how++) {
			struct waiter w;
			if (how == 1 && k == 1)
				continue; /* timedwait's deadline must be on the condvar's clock */
			start_waiters(&w, 1, &m, &c[k], how, &announced);
			CHECK_RC(pthread_mutex_lock(&m), 0);
			CHECK_RC(pthread_cond_signal(&c[k]), 0);
			CHECK_RC(pthread_mutex_unlock(&m), 0);
			finish_waiter(&w);
		}
	}
}
/* A timedwait on a monotonic condvar, with a far monotonic deadline. */
static void *mono_waiter_fn(void *p)
{
	struct waiter *w = p;
	CHECK_RC(pthread_mutex_lock(w->m), 0);
	(*w->announced)++;
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	w->rc = pthread_cond_timedwait(w->c, w->m, &dl);
	atomic_store_explicit(&w->returned, 1, memory_order_release);
	CHECK_RC(pthread_mutex_unlock(w->m), 0);
	return NULL;
}
static void timed_signalled_monotonic(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c;
	init_cond(&c, CLOCK_MONOTONIC);
	int announced = 0;
	struct waiter w = {.m = &m, .c = &c, .announced = &announced};
	w.t = spawn(mono_waiter_fn, &w);
	for (;;) {
		CHECK_RC(pthread_mutex_lock(&m), 0);
		int in = announced;
		if (in)
			CHECK_RC(pthread_cond_signal(&c), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		if (in)
			break;
		sched_yield();
	}
	finish_waiter(&w);
}

/* --- waiters block in the kernel: the waiting thread ends up sleeping
 * (state S in /proc), not running. --- */
static void blocks(void)
{
	pthread_mutex_t m;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	int announced = 0;
	for (int how = 0; how < 4; how++) {
		struct waiter w;
		start_waiters(&w, 1, &m, &c, how, &announced);
		/* Poll for up to ~10 s: a sleeping waiter gets there at once; a
		 * spinning one never does. */
		if (!await_sleeping(w.tid, 10000))
			FAIL("waiter (how %d) still in state %c: not blocked in the kernel", how,
			     task_state(w.tid));
		CHECK_RC(pthread_cond_signal(&c), 0);
		finish_waiter(&w);
	}
}

/* --- every mutex type works with a condvar --- */
static void mutex_types(void)
{
	static const int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
				    PTHREAD_MUTEX_ADAPTIVE_NP};
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	for (int i = 0; i < 4; i++) {
		pthread_mutex_t m;
		init_type(&m, types[i]);
		/* Same condvar, another mutex once nobody waits: allowed. */
		CHECK_RC(pthread_mutex_lock(&m), 0);
		struct timespec dl = deadline_in(CLOCK_REALTIME, 2 * MS);
		CHECK_RC(pthread_cond_timedwait(&c, &m, &dl), ETIMEDOUT);
		CHECK_RC(probe(&m), EBUSY);
		if (types[i] == PTHREAD_MUTEX_RECURSIVE) {
			/* Still held at depth 1: one unlock releases it. */
			CHECK_RC(pthread_mutex_unlock(&m), 0);
			CHECK_RC(probe(&m), 0);
			CHECK_RC(pthread_mutex_lock(&m), 0);
		}
		CHECK_RC(pthread_mutex_unlock(&m), 0);
	}
}

/* --- after a broadcast, the woken waiters still exclude each other --- */
static pthread_mutex_t ex_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ex_c = PTHREAD_COND_INITIALIZER;
static int ex_go, ex_waiting;
static long ex_counter;
static atomic_int ex_inside;
static void *ex_fn(void *p)
{
	(void)p;
	CHECK_RC(pthread_mutex_lock(&ex_m), 0);
	ex_waiting++;
	while (!ex_go)
		CHECK_RC(pthread_cond_wait(&ex_c, &ex_m), 0);
	for (int i = 0; i < 100; i++) {
		if (atomic_fetch_add(&ex_inside, 1) != 0)
			FAIL("two threads inside after a broadcast");
		long v = ex_counter;
		sched_yield();
		ex_counter = v + 1;
		atomic_fetch_sub(&ex_inside, 1);
		CHECK_RC(pthread_mutex_unlock(&ex_m), 0);
		CHECK_RC(pthread_mutex_lock(&ex_m), 0);
	}
	CHECK_RC(pthread_mutex_unlock(&ex_m), 0);
	return NULL;
}
static void broadcast_exclusion(void)
{
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		t[i] = spawn(ex_fn, NULL);
	for (;;) {
		CHECK_RC(pthread_mutex_lock(&ex_m), 0);
		if (ex_waiting == 8) {
			ex_go = 1;
			CHECK_RC(pthread_cond_broadcast(&ex_c), 0);
			CHECK_RC(pthread_mutex_unlock(&ex_m), 0);
			break;
		}
		CHECK_RC(pthread_mutex_unlock(&ex_m), 0);
		sched_yield();
	}
	for (int i = 0; i < 8; i++)
		join(t[i]);
	CHECK_EQ(ex_counter, 800);
}

/* --- destroy after the waiters are woken, then reuse --- */
static void destroy_reuse(void)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	int announced = 0;
	for (int r = 0; r < 20; r++) {
		pthread_cond_t *c = malloc(sizeof *c);
		if (r % 2)
			init_cond(c, CLOCK_MONOTONIC);
		else
			CHECK_RC(pthread_cond_init(c, NULL), 0);
		struct waiter w[3];
		start_waiters(w, 3, &m, c, r % 2 ? 2 : 0, &announced);
		CHECK_RC(pthread_cond_broadcast(c), 0);
		CHECK_RC(pthread_cond_destroy(c), 0); /* waiters may still be leaving */
		memset(c, 0xff, sizeof *c);
		free(c);
		for (int i = 0; i < 3; i++)
			finish_waiter(&w[i]);
	}
}

/* --- destroy while a waiter is still blocked: glibc 2.36's destroy
 * waits until the waiter has left (its deadline; a signal from another
 * thread) and returns 0, never EBUSY --- */
struct dw {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	struct timespec dl; /* {0, 0}: an untimed wait */
	int announced, rc;
};
static void *dw_waiter(void *p)
{
	struct dw *d = p;
	CHECK_RC(pthread_mutex_lock(d->m), 0);
	d->announced = 1;
	d->rc = d->dl.tv_sec ? pthread_cond_timedwait(d->c, d->m, &d->dl) : pthread_cond_wait(d->c, d->m);
	CHECK_RC(pthread_mutex_unlock(d->m), 0);
	return NULL;
}
static void *dw_signaller(void *p)
{
	CHECK_RC(pthread_cond_signal(p), 0);
	return NULL;
}
static void destroy_waits(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	for (int r = 0; r < 4; r++) {
		pthread_cond_t *c = malloc(sizeof *c);
		CHECK(c);
		CHECK_RC(pthread_cond_init(c, NULL), 0);
		/* even rounds: a waiter whose deadline comes; odd: one that
		 * another thread signals, before or while destroy waits */
		struct dw d = {.m = &m, .c = c};
		if (r % 2 == 0)
			d.dl = deadline_in(CLOCK_REALTIME, 20 * MS);
		pthread_t w = spawn(dw_waiter, &d), s = 0;
		lock_when_waiting(&m, &d.announced, 1); /* the waiter is inside the wait */
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		if (r % 2)
			s = spawn(dw_signaller, c);
		CHECK_RC(pthread_cond_destroy(c), 0);
		if (r % 2 == 0)
			CHECK_REACHED(CLOCK_REALTIME, d.dl); /* not before the waiter left */
		else
			join(s);
		join(w);
		CHECK_RC(d.rc, r % 2 ? 0 : ETIMEDOUT);
		memset(c, 0xff, sizeof *c);
		free(c);
	}
}

static const struct test_case cases[] = {
    {"signal", signal_pingpong},
    {"no-lost-wakeup", no_lost_wakeup},
    {"no-spurious", no_spurious},
    {"broadcast", broadcast},
    {"signal-each", signal_each},
    {"timedwait-realtime", timedwait_realtime},
    {"timedwait-monotonic", timedwait_monotonic},
    {"clockwait", clockwait},
    {"timed-einval", timed_einval},
    {"timed-signalled", timed_signalled},
    {"timed-signalled-monotonic", timed_signalled_monotonic},
    {"blocks", blocks},
    {"mutex-types", mutex_types},
    {"broadcast-exclusion", broadcast_exclusion},
    {"destroy-reuse", destroy_reuse},
    {"destroy-waits", destroy_waits},
    {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
