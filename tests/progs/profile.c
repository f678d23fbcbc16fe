/*
 * profile - programs with known numbers of every kind of acquisition, for
 * the contention profiler's tests (tests/profile.bats). Each case does its
 * work, then prints what the profile must say, one line per field:
 *
 *	FILE ADDRESS INDEX FIELD OP VALUE
 *
 * FILE is "-" for the process's own profile or the pid of the fork child
 * whose profile (FILE.PID) it is; INDEX counts the records at ADDRESS in
 * creation order (a mutex destroyed and initialised again is two records);
 * FIELD is a column of the CSV profile; OP is "=", ">=" or "~" (the field
 * contains VALUE). Contention is forced, never hoped for: the holder waits
 * until the waiter sleeps inside its attempt (run under LOCKSWAP_WAIT=park).
 * Natively (glibc) every case runs too and prints the same lines.
 */
#include "check.h"

#include <stdbool.h>
#include <sys/wait.h>

static void expect(long pid, const void *addr, int index, const char *field, const char *op, long long value)
{
	if (pid)
		printf("%ld %#lx %d %s %s %lld\n", pid, (unsigned long)addr, index, field, op, value);
	else
		printf("- %#lx %d %s %s %lld\n", (unsigned long)addr, index, field, op, value);
}

static void expect_has(const void *addr, int index, const char *field, const char *text)
{
	printf("- %#lx %d %s ~ %s\n", (unsigned long)addr, index, field, text);
}

/* ---- forcing contention ---- */

enum { DO_LOCK, DO_TIMED_FAR, DO_TRY, DO_TIMED_2MS, DO_TIMED_PAST };

struct attempt {
	pthread_mutex_t *m;
	int how, rc;
	atomic_int tid, started;
};

static void *attempt_fn(void *p)
{
	struct attempt *a = p;
	struct timespec dl;
	atomic_store(&a->tid, (int)gettid());
	atomic_store(&a->started, 1);
	switch (a->how) {
	case DO_LOCK:
		a->rc = pthread_mutex_lock(a->m);
		break;
	case DO_TIMED_FAR:
		dl = deadline_in(CLOCK_REALTIME, FAR_NS);
		a->rc = pthread_mutex_timedlock(a->m, &dl);
		break;
	case DO_TRY:
		a->rc = pthread_mutex_trylock(a->m);
		break;
	case DO_TIMED_2MS:
		dl = deadline_in(CLOCK_REALTIME, 2 * MS);
		a->rc = pthread_mutex_timedlock(a->m, &dl);
		break;
	default:
		dl = deadline_in(CLOCK_REALTIME, -1 * MS);
		a->rc = pthread_mutex_timedlock(a->m, &dl);
		break;
	}
	if (a->rc == 0)
		CHECK_RC(pthread_mutex_unlock(a->m), 0);
	return NULL;
}

/* Sleeps ns, whatever signals arrive. */
static void pause_ns(int64_t ns)
{
	struct timespec until = deadline_in(CLOCK_MONOTONIC, ns);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

/* The caller takes m; another thread attempts `how`. A blocking attempt is
 * let through 2 ms after that thread is seen asleep inside it (its first
 * attempt found m held), so its wait is at least 2 ms however the threads
 * are scheduled: the profiler's clock started before it slept. (A timed
 * attempt's wait is not bounded below: the thread may be preempted between
 * reading the clock for its deadline and entering the call.) Returns the
 * other thread's result. */
static int while_held(pthread_mutex_t *m, int how)
{
	bool blocking = how == DO_LOCK || how == DO_TIMED_FAR;
	struct attempt a = {.m = m, .how = how};
	CHECK_RC(pthread_mutex_lock(m), 0);
	pthread_t t = spawn(attempt_fn, &a);
	if (blocking) {
		await_at_least(&a.started, 1);
		if (!await_sleeping(atomic_load(&a.tid), 60000))
			FAIL("the waiter never slept in its attempt");
		pause_ns(2 * MS);
	} else {
		join(t);
	}
	CHECK_RC(pthread_mutex_unlock(m), 0);
	if (blocking)
		join(t);
	return a.rc;
}

static void lock_n(pthread_mutex_t *m, int n)
{
	for (int i = 0; i < n; i++) {
		CHECK_RC(pthread_mutex_lock(m), 0);
		CHECK_RC(pthread_mutex_unlock(m), 0);
	}
}

static void init_attr(pthread_mutex_t *m, int pshared, int robust, int protocol)
{
	pthread_mutexattr_t a;
	CHECK_RC(pthread_mutexattr_init(&a), 0);
	CHECK_RC(pthread_mutexattr_setpshared(&a, pshared), 0);
	CHECK_RC(pthread_mutexattr_setrobust(&a, robust), 0);
	CHECK_RC(pthread_mutexattr_setprotocol(&a, protocol), 0);
	CHECK_RC(pthread_mutex_init(m, &a), 0);
	CHECK_RC(pthread_mutexattr_destroy(&a), 0);
}

/* ---- counts: every kind of acquisition, condvars, reuse, early exits ---- */

static pthread_mutex_t A = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t B, C, D, E, F, G, P, R, I;
static pthread_cond_t CV = PTHREAD_COND_INITIALIZER;
static int pred;

struct cond_waiter {
	atomic_int tid, started;
};
static void *cond_waiter_fn(void *p)
{
	struct cond_waiter *w = p;
	CHECK_RC(pthread_mutex_lock(&D), 0);
	atomic_store(&w->tid, (int)gettid());
	atomic_store(&w->started, 1);
	while (!pred)
		CHECK_RC(pthread_cond_wait(&CV, &D), 0);
	CHECK_RC(pthread_mutex_unlock(&D), 0);
	return NULL;
}

static atomic_int g_done;
static void *detached_fn(void *p)
{
	(void)p;
	lock_n(&G, 7);
	atomic_store(&g_done, 1);
	return NULL;
}

static __attribute__((noinline)) void make_e(void)
{
	init_type(&E, PTHREAD_MUTEX_NORMAL);
}

static void counts(void)
{
	struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS);

	/* A (static initialiser): uncontended lock, trylock, timedlock */
	lock_n(&A, 5);
	for (int i = 0; i < 3; i++) {
		CHECK_RC(pthread_mutex_trylock(&A), 0);
		CHECK_RC(pthread_mutex_unlock(&A), 0);
	}
	for (int i = 0; i < 2; i++) {
		CHECK_RC(pthread_mutex_timedlock(&A, &far), 0);
		CHECK_RC(pthread_mutex_unlock(&A), 0);
	}
	/* contended lock, trylock failure, two timeouts, contended timedlock;
	 * each thread exits before the program does */
	CHECK_RC(while_held(&A, DO_LOCK), 0);
	CHECK_RC(while_held(&A, DO_TRY), EBUSY);
	CHECK_RC(while_held(&A, DO_TIMED_2MS), ETIMEDOUT);
	CHECK_RC(while_held(&A, DO_TIMED_PAST), ETIMEDOUT);
	CHECK_RC(while_held(&A, DO_TIMED_FAR), 0);

	/* B recursive: inner relocks are not acquisitions; C errorcheck: the
	 * owner's EDEADLK and EBUSY are neither acquisitions nor failures */
	init_type(&B, PTHREAD_MUTEX_RECURSIVE);
	CHECK_RC(pthread_mutex_lock(&B), 0);
	CHECK_RC(pthread_mutex_lock(&B), 0);
	CHECK_RC(pthread_mutex_trylock(&B), 0);
	for (int i = 0; i < 3; i++)
		CHECK_RC(pthread_mutex_unlock(&B), 0);
	init_type(&C, PTHREAD_MUTEX_ERRORCHECK);
	CHECK_RC(pthread_mutex_lock(&C), 0);
	CHECK_RC(pthread_mutex_lock(&C), EDEADLK);
	CHECK_RC(pthread_mutex_trylock(&C), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&C), 0);

	/* glibc's own: process-shared (also contended), robust, PI */
	init_attr(&P, PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_STALLED, PTHREAD_PRIO_NONE);
	lock_n(&P, 2);
	CHECK_RC(pthread_mutex_trylock(&P), 0);
	CHECK_RC(pthread_mutex_unlock(&P), 0);
	CHECK_RC(while_held(&P, DO_LOCK), 0);
	init_attr(&R, PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_ROBUST, PTHREAD_PRIO_NONE);
	lock_n(&R, 1);
	init_attr(&I, PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_STALLED, PTHREAD_PRIO_INHERIT);
	lock_n(&I, 1);

	/* D and CV: one wait (signalled after the waiter sleeps in it, by a
	 * signaller that released D first), one timeout, signals and
	 * broadcasts nobody waits for */
	init_type(&D, PTHREAD_MUTEX_NORMAL);
	struct cond_waiter w = {0};
	pthread_t t = spawn(cond_waiter_fn, &w);
	await_at_least(&w.started, 1);
	if (!await_sleeping(atomic_load(&w.tid), 60000))
		FAIL("the condvar waiter never slept");
	pause_ns(1 * MS); /* its wait: at least 1 ms, however scheduled */
	CHECK_RC(pthread_mutex_lock(&D), 0);
	pred = 1;
	CHECK_RC(pthread_mutex_unlock(&D), 0);
	CHECK_RC(pthread_cond_signal(&CV), 0);
	join(t);
	CHECK_RC(pthread_mutex_lock(&D), 0);
	struct timespec soon = deadline_in(CLOCK_REALTIME, 1 * MS);
	CHECK_RC(pthread_cond_timedwait(&CV, &D, &soon), ETIMEDOUT);
	CHECK_RC(pthread_mutex_unlock(&D), 0);
	CHECK_RC(pthread_cond_broadcast(&CV), 0);
	CHECK_RC(pthread_cond_broadcast(&CV), 0);
	CHECK_RC(pthread_cond_signal(&CV), 0);

	/* E destroyed and initialised again; F initialised again without
	 * destroy: two records each */
	make_e();
	lock_n(&E, 2);
	CHECK_RC(pthread_mutex_destroy(&E), 0);
	make_e();
	lock_n(&E, 3);
	CHECK_RC(pthread_mutex_destroy(&E), 0);
	init_type(&F, PTHREAD_MUTEX_NORMAL);
	lock_n(&F, 1);
	init_type(&F, PTHREAD_MUTEX_NORMAL);
	lock_n(&F, 4);

	/* G: a detached thread that is gone (or going) when the program ends */
	init_type(&G, PTHREAD_MUTEX_NORMAL);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_t dt;
	CHECK_RC(pthread_create(&dt, &at, detached_fn, NULL), 0);
	await_at_least(&g_done, 1);

	/* lock: 5 + 5 by the holder in while_held + 1 by the contended waiter */
	expect(0, &A, 1, "lock", "=", 11);
	expect(0, &A, 1, "trylock", "=", 3);
	expect(0, &A, 1, "timedlock", "=", 3);
	expect(0, &A, 1, "contended", "=", 2);
	expect(0, &A, 1, "trylock_failed", "=", 1);
	expect(0, &A, 1, "timeouts", "=", 2);
	/* acquirers: main x11, waiter, main x4, timed waiter */
	expect(0, &A, 1, "handoffs", "=", 3);
	expect(0, &A, 1, "max_waiters", "=", 1);
	expect(0, &A, 1, "wait_ns", ">=", 2 * MS); /* the blocked waiter's */
	expect(0, &A, 1, "hold_max_ns", ">=", 2 * MS);
	expect_has(&A, 1, "origin", "first-use");
	expect_has(&A, 1, "stack", "counts");
	expect(0, &B, 1, "lock", "=", 1);
	expect(0, &B, 1, "trylock", "=", 0);
	expect(0, &C, 1, "lock", "=", 1);
	expect(0, &C, 1, "trylock", "=", 0);
	expect(0, &C, 1, "trylock_failed", "=", 0);
	expect(0, &P, 1, "lock", "=", 4);
	expect(0, &P, 1, "trylock", "=", 1);
	expect(0, &P, 1, "contended", "=", 1);
	expect(0, &P, 1, "glibc", "=", 1);
	expect_has(&P, 1, "type", "pshared");
	expect(0, &R, 1, "lock", "=", 1);
	expect_has(&R, 1, "type", "robust");
	expect(0, &I, 1, "lock", "=", 1);
	expect_has(&I, 1, "type", "pi");
	/* D: waiter, main, waiter's relock, main, main's relock after the timeout */
	expect(0, &D, 1, "lock", "=", 5);
	expect(0, &D, 1, "contended", "=", 0);
	expect(0, &D, 1, "handoffs", "=", 3);
	expect(0, &CV, 1, "waits", "=", 1);
	expect(0, &CV, 1, "timeouts", "=", 1);
	expect(0, &CV, 1, "signals", "=", 2);
	expect(0, &CV, 1, "broadcasts", "=", 2);
	expect(0, &CV, 1, "wait_ns", ">=", 1 * MS);
	expect(0, &E, 1, "lock", "=", 2);
	expect_has(&E, 1, "ended", "destroyed");
	expect_has(&E, 1, "origin", "init");
	expect_has(&E, 1, "stack", "make_e");
	expect(0, &E, 2, "lock", "=", 3);
	expect_has(&E, 2, "ended", "destroyed");
	expect(0, &F, 1, "lock", "=", 1);
	expect_has(&F, 1, "ended", "reused");
	expect(0, &F, 2, "lock", "=", 4);
	expect(0, &G, 1, "lock", "=", 7);
}

/* ---- fork: each child writes its own profile ---- */

static pthread_mutex_t FG = PTHREAD_MUTEX_INITIALIZER, FH, FK = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop, paused;

/* Contended acquisitions (and their stacks) while the program forks; paused
 * while a child runs, so that the child's own forced contention is not
 * starved of CPU on a busy machine. */
static void *hammer_fn(void *p)
{
	(void)p;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		lock_n(&FK, 10);
		while (atomic_load_explicit(&paused, memory_order_relaxed)) {
			struct timespec ms = {0, 1000000};
			nanosleep(&ms, NULL);
		}
	}
	return NULL;
}

static void fork_case(void)
{
	lock_n(&FG, 3);
	pthread_t h[2];
	for (int i = 0; i < 2; i++)
		h[i] = spawn(hammer_fn, NULL);
	for (int i = 0; i < 3; i++) {
		fflush(stdout);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			long me = (long)getpid();
			lock_n(&FG, 4);
			init_type(&FH, PTHREAD_MUTEX_NORMAL);
			lock_n(&FH, 2);
			CHECK_RC(while_held(&FG, DO_LOCK), 0);
			expect(me, &FG, 1, "lock", "=", 6);
			expect(me, &FG, 1, "contended", "=", 1);
			expect(me, &FH, 1, "lock", "=", 2);
			fflush(stdout);
			if (i == 0)
				exit(0);
			if (i == 1)
				_exit(0);
			_Exit(0);
		}
		atomic_store(&paused, 1);
		int st;
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			FAIL("child failed (status 0x%x)", st);
		atomic_store(&paused, 0);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		join(h[i]);
	lock_n(&FG, 2);
	expect(0, &FG, 1, "lock", "=", 5);
	expect(0, &FG, 1, "contended", "=", 0);
}

/* ---- 100,000 mutexes, used by two threads ---- */

#define MANY 100000
static pthread_mutex_t *many_m;

static void *many_try_fn(void *p)
{
	(void)p;
	for (int i = 0; i < MANY; i++) {
		CHECK_RC(pthread_mutex_trylock(&many_m[i]), 0);
		CHECK_RC(pthread_mutex_unlock(&many_m[i]), 0);
	}
	return NULL;
}

static void many(void)
{
	many_m = calloc(MANY, sizeof *many_m);
	CHECK(many_m != NULL);
	for (int i = 0; i < MANY; i++)
		CHECK_RC(pthread_mutex_init(&many_m[i], NULL), 0);
	for (int i = 0; i < MANY; i++)
		lock_n(&many_m[i], 1);
	join(spawn(many_try_fn, NULL));
	for (int i = 0; i < MANY; i++)
		CHECK_RC(pthread_mutex_destroy(&many_m[i]), 0);
	expect(0, &many_m[0], 1, "lock", "=", 1);
	expect(0, &many_m[MANY - 1], 1, "trylock", "=", 1);
	expect_has(&many_m[MANY / 2], 1, "ended", "destroyed");
	printf("rows lock=1 trylock=1 destroyed %d\n", MANY);
}

/* ---- allocation-heavy contention ---- */

/* 4 threads x 500: hundreds of contended acquisitions, each taking its
 * call site (libunwind) while the others allocate and free; the profile
 * test runs it under every algorithm. */
#define MALLOC_ROUNDS 500
static pthread_mutex_t MM = PTHREAD_MUTEX_INITIALIZER;
static void *volatile shared_block;

static void *malloc_fn(void *p)
{
	unsigned seed = (unsigned)(uintptr_t)p;
	for (int i = 0; i < MALLOC_ROUNDS; i++) {
		void *mine = malloc(16 + rand_r(&seed) % 4096);
		CHECK(mine != NULL);
		CHECK_RC(pthread_mutex_lock(&MM), 0);
		free(shared_block); /* freed by a thread that did not allocate it */
		shared_block = malloc(16 + rand_r(&seed) % 65536);
		CHECK(shared_block != NULL);
		CHECK_RC(pthread_mutex_unlock(&MM), 0);
		free(mine);
	}
	return NULL;
}

static void malloc_case(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		t[i] = spawn(malloc_fn, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < 4; i++)
		join(t[i]);
	free(shared_block);
	expect(0, &MM, 1, "lock", "=", 4 * MALLOC_ROUNDS);
}

/* ---- ten contended acquisitions by one thread, one after the other ---- */

static pthread_mutex_t SQ = PTHREAD_MUTEX_INITIALIZER;
static atomic_int sq_held, sq_done, sq_tid;

static void *seq_fn(void *p)
{
	(void)p;
	atomic_store(&sq_tid, (int)gettid());
	for (int i = 1; i <= 10; i++) {
		await_at_least(&sq_held, i); /* the main thread holds SQ */
		CHECK_RC(pthread_mutex_lock(&SQ), 0);
		CHECK_RC(pthread_mutex_unlock(&SQ), 0);
		atomic_store(&sq_done, i);
	}
	return NULL;
}

/* With LOCKSWAP_PROFILE_SAMPLE=3 the call sites count acquisitions 1, 4, 7
 * and 10 of the thread; the counts stay exact. */
static void sampled(void)
{
	pthread_t t = spawn(seq_fn, NULL);
	while (!atomic_load(&sq_tid))
		sched_yield();
	for (int i = 1; i <= 10; i++) {
		CHECK_RC(pthread_mutex_lock(&SQ), 0);
		atomic_store(&sq_held, i);
		if (!await_sleeping(atomic_load(&sq_tid), 60000))
			FAIL("the waiter never slept");
		CHECK_RC(pthread_mutex_unlock(&SQ), 0);
		await_at_least(&sq_done, i);
	}
	join(t);
	expect(0, &SQ, 1, "lock", "=", 20);
	expect(0, &SQ, 1, "contended", "=", 10);
	expect(0, &SQ, 1, "handoffs", "=", 19);
	const char *n = getenv("LOCKSWAP_PROFILE_SAMPLE");
	expect(0, &SQ, 1, "site_contended", "=", n && !strcmp(n, "3") ? 4 : 10);
	expect_has(&SQ, 1, "site_stack", "seq_fn");
}

/* ---- the ways a program ends ---- */

static pthread_mutex_t X = PTHREAD_MUTEX_INITIALIZER;

static void *exit_fn(void *p)
{
	(void)p;
	lock_n(&X, 3);
	expect(0, &X, 1, "lock", "=", 4);
	fflush(stdout);
	exit(0); /* from a thread, while main waits */
}

static void exit_thread(void)
{
	lock_n(&X, 1);
	join(spawn(exit_fn, NULL));
	FAIL("exit() in a thread returned");
}

static void ends_prologue(void)
{
	lock_n(&X, 2);
	expect(0, &X, 1, "lock", "=", 2);
	fflush(stdout);
}

static void underscore_exit(void)
{
	ends_prologue();
	_exit(0);
}

static void aborts(void)
{
	ends_prologue();
	abort();
}

static void terminated(void)
{
	ends_prologue();
	raise(SIGTERM);
}

/* ---- rwlocks: reads and writes apart (issue 19) ---- */

enum { RD_LOCK, RD_TRY, RD_TIMED_2MS, WR_LOCK, WR_TRY, WR_TIMED_2MS };

struct rw_attempt {
	pthread_rwlock_t *l;
	int how, rc;
	atomic_int tid, started;
};

static void *rw_attempt_fn(void *p)
{
	struct rw_attempt *a = p;
	struct timespec dl = deadline_in(CLOCK_REALTIME, 2 * MS);
	atomic_store(&a->tid, (int)gettid());
	atomic_store(&a->started, 1);
	switch (a->how) {
	case RD_LOCK:
		a->rc = pthread_rwlock_rdlock(a->l);
		break;
	case RD_TRY:
		a->rc = pthread_rwlock_tryrdlock(a->l);
		break;
	case RD_TIMED_2MS:
		a->rc = pthread_rwlock_timedrdlock(a->l, &dl);
		break;
	case WR_LOCK:
		a->rc = pthread_rwlock_wrlock(a->l);
		break;
	case WR_TRY:
		a->rc = pthread_rwlock_trywrlock(a->l);
		break;
	default:
		a->rc = pthread_rwlock_timedwrlock(a->l, &dl);
		break;
	}
	if (a->rc == 0)
		CHECK_RC(pthread_rwlock_unlock(a->l), 0);
	return NULL;
}

/* The caller holds l (for reading if `read`, else for writing); another
 * thread attempts `how`. A blocking attempt is let through 2 ms after that
 * thread is seen asleep inside it (its first try found l held), as in
 * while_held. Returns the other thread's result. */
static int rw_while_held(pthread_rwlock_t *l, bool read, int how)
{
	struct rw_attempt a = {.l = l, .how = how};
	CHECK_RC(read ? pthread_rwlock_rdlock(l) : pthread_rwlock_wrlock(l), 0);
	pthread_t t = spawn(rw_attempt_fn, &a);
	if (how == RD_LOCK || how == WR_LOCK) {
		await_at_least(&a.started, 1);
		if (!await_sleeping(atomic_load(&a.tid), 60000))
			FAIL("the waiter never slept in its attempt");
		pause_ns(2 * MS);
	} else {
		join(t);
	}
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	if (how == RD_LOCK || how == WR_LOCK)
		join(t);
	return a.rc;
}

static pthread_rwlock_t RW = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t RP, RK, RE;

static void rw_init(pthread_rwlock_t *l, int pshared, int kind)
{
	pthread_rwlockattr_t a;
	CHECK_RC(pthread_rwlockattr_init(&a), 0);
	CHECK_RC(pthread_rwlockattr_setpshared(&a, pshared), 0);
	CHECK_RC(pthread_rwlockattr_setkind_np(&a, kind), 0);
	CHECK_RC(pthread_rwlock_init(l, &a), 0);
	CHECK_RC(pthread_rwlockattr_destroy(&a), 0);
}

static void rw_n(pthread_rwlock_t *l, bool read, int n)
{
	for (int i = 0; i < n; i++) {
		CHECK_RC(read ? pthread_rwlock_rdlock(l) : pthread_rwlock_wrlock(l), 0);
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	}
}

static __attribute__((noinline)) void make_re(void)
{
	rw_init(&RE, PTHREAD_PROCESS_PRIVATE, PTHREAD_RWLOCK_DEFAULT_NP);
}

static void rwlock_case(void)
{
	struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS),
			mfar = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	struct timespec bad = {0, -1};

	/* RW (static initialiser): uncontended reads and writes of every kind */
	rw_n(&RW, true, 5);
	for (int i = 0; i < 3; i++) {
		CHECK_RC(pthread_rwlock_tryrdlock(&RW), 0);
		CHECK_RC(pthread_rwlock_unlock(&RW), 0);
	}
	CHECK_RC(pthread_rwlock_timedrdlock(&RW, &far), 0);
	CHECK_RC(pthread_rwlock_unlock(&RW), 0);
	CHECK_RC(pthread_rwlock_clockrdlock(&RW, CLOCK_MONOTONIC, &mfar), 0);
	CHECK_RC(pthread_rwlock_unlock(&RW), 0);
	rw_n(&RW, false, 4);
	for (int i = 0; i < 2; i++) {
		CHECK_RC(pthread_rwlock_trywrlock(&RW), 0);
		CHECK_RC(pthread_rwlock_unlock(&RW), 0);
	}
	CHECK_RC(pthread_rwlock_timedwrlock(&RW, &far), 0);
	CHECK_RC(pthread_rwlock_unlock(&RW), 0);
	CHECK_RC(pthread_rwlock_clockwrlock(&RW, CLOCK_MONOTONIC, &mfar), 0);
	CHECK_RC(pthread_rwlock_unlock(&RW), 0);
	/* a recursive read: two read acquisitions; the writer's own EDEADLK
	 * and EBUSY, and a bad timespec's EINVAL: none */
	CHECK_RC(pthread_rwlock_rdlock(&RW), 0);
	CHECK_RC(pthread_rwlock_rdlock(&RW), 0);
	CHECK_RC(pthread_rwlock_unlock(&RW), 0);
	CHECK_RC(pthread_rwlock_unlock(&RW), 0);
	CHECK_RC(pthread_rwlock_wrlock(&RW), 0);
	CHECK_RC(pthread_rwlock_rdlock(&RW), EDEADLK);
	CHECK_RC(pthread_rwlock_wrlock(&RW), EDEADLK);
	CHECK_RC(pthread_rwlock_tryrdlock(&RW), EBUSY);
	CHECK_RC(pthread_rwlock_trywrlock(&RW), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(&RW), 0);
	CHECK_RC(pthread_rwlock_timedrdlock(&RW, &bad), EINVAL);
	CHECK_RC(pthread_rwlock_timedwrlock(&RW, &bad), EINVAL);
	/* contention, forced: each holder's acquisition counts too */
	CHECK_RC(rw_while_held(&RW, false, RD_LOCK), 0);
	CHECK_RC(rw_while_held(&RW, false, RD_TRY), EBUSY);
	CHECK_RC(rw_while_held(&RW, false, RD_TIMED_2MS), ETIMEDOUT);
	CHECK_RC(rw_while_held(&RW, true, WR_LOCK), 0);
	CHECK_RC(rw_while_held(&RW, true, WR_TRY), EBUSY);
	CHECK_RC(rw_while_held(&RW, true, WR_TIMED_2MS), ETIMEDOUT);

	/* RP process-shared (glibc's whatever the algorithm), RK the _NP
	 * writer-preferring kind; RE destroyed and initialised again */
	rw_init(&RP, PTHREAD_PROCESS_SHARED, PTHREAD_RWLOCK_DEFAULT_NP);
	rw_n(&RP, true, 2);
	rw_n(&RP, false, 1);
	CHECK_RC(rw_while_held(&RP, false, RD_LOCK), 0);
	rw_init(&RK, PTHREAD_PROCESS_PRIVATE, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	rw_n(&RK, true, 3);
	rw_n(&RK, false, 2);
	/* a clock call without a timespec waits without limit, whatever the
	 * clock (glibc checks the clock only with one): a timed acquisition
	 * each (volatile: pthread.h calls the argument nonnull) */
	const struct timespec *volatile none = NULL;
	CHECK_RC(pthread_rwlock_clockrdlock(&RK, CLOCK_PROCESS_CPUTIME_ID, none), 0);
	CHECK_RC(pthread_rwlock_unlock(&RK), 0);
	CHECK_RC(pthread_rwlock_clockwrlock(&RK, CLOCK_PROCESS_CPUTIME_ID, none), 0);
	CHECK_RC(pthread_rwlock_unlock(&RK), 0);
	make_re();
	rw_n(&RE, true, 1);
	CHECK_RC(pthread_rwlock_destroy(&RE), 0);
	make_re();
	rw_n(&RE, false, 2);
	CHECK_RC(pthread_rwlock_destroy(&RE), 0);

	/* reads: 5 + 3 + 2 + 2 recursive + the read waiter + 3 holders for the
	 * write attempts; writes: 4 + 2 + 2 + 3 holders for the read
	 * attempts + 1 (the EDEADLK case's) + the write waiter */
	expect(0, &RW, 1, "read_lock", "=", 5 + 2 + 1 + 3);
	expect(0, &RW, 1, "read_trylock", "=", 3);
	expect(0, &RW, 1, "read_timedlock", "=", 2);
	expect(0, &RW, 1, "read_contended", "=", 1);
	expect(0, &RW, 1, "read_trylock_failed", "=", 1);
	expect(0, &RW, 1, "read_timeouts", "=", 1);
	expect(0, &RW, 1, "lock", "=", 4 + 1 + 3 + 1);
	expect(0, &RW, 1, "trylock", "=", 2);
	expect(0, &RW, 1, "timedlock", "=", 2);
	expect(0, &RW, 1, "contended", "=", 1);
	expect(0, &RW, 1, "trylock_failed", "=", 1);
	expect(0, &RW, 1, "timeouts", "=", 1);
	/* writers: main, ..., the write waiter: one hand-off */
	expect(0, &RW, 1, "handoffs", "=", 1);
	expect(0, &RW, 1, "max_waiters", "=", 1);
	expect(0, &RW, 1, "site_contended", "=", 2);
	expect_has(&RW, 1, "site_stack", "rw_attempt_fn");
	expect(0, &RW, 1, "read_wait_ns", ">=", 2 * MS); /* the blocked reader's */
	expect(0, &RW, 1, "wait_ns", ">=", 4 * MS);	 /* and the blocked writer's */
	expect(0, &RW, 1, "read_hold_ns", ">=", 2 * MS); /* held while the write timed out */
	expect(0, &RW, 1, "hold_ns", ">=", 4 * MS);
	expect_has(&RW, 1, "type", "rwlock");
	expect_has(&RW, 1, "origin", "first-use");
	expect(0, &RP, 1, "read_lock", "=", 3);
	expect(0, &RP, 1, "lock", "=", 2);
	expect(0, &RP, 1, "read_contended", "=", 1);
	expect(0, &RP, 1, "glibc", "=", 1);
	expect_has(&RP, 1, "type", "rwlock+pshared");
	expect(0, &RK, 1, "read_lock", "=", 3);
	expect(0, &RK, 1, "lock", "=", 2);
	expect(0, &RK, 1, "read_timedlock", "=", 1);
	expect(0, &RK, 1, "timedlock", "=", 1);
	expect_has(&RK, 1, "type", "rwlock+writer");
	expect_has(&RK, 1, "origin", "init");
	expect(0, &RE, 1, "read_lock", "=", 1);
	expect(0, &RE, 1, "lock", "=", 0);
	expect_has(&RE, 1, "ended", "destroyed");
	expect_has(&RE, 1, "stack", "make_re");
	expect(0, &RE, 2, "read_lock", "=", 0);
	expect(0, &RE, 2, "lock", "=", 2);
	expect_has(&RE, 2, "ended", "destroyed");
}

/* ---- spinlocks ---- */

static pthread_spinlock_t SP;

struct spin_attempt {
	pthread_spinlock_t *s;
	atomic_int tid, started;
};

static void *spin_attempt_fn(void *p)
{
	struct spin_attempt *a = p;
	atomic_store(&a->tid, (int)gettid());
	atomic_store(&a->started, 1);
	CHECK_RC(pthread_spin_lock(a->s), 0);
	CHECK_RC(pthread_spin_unlock(a->s), 0);
	return NULL;
}

static void *spin_try_fn(void *p)
{
	return (void *)(intptr_t)pthread_spin_trylock(p);
}

/* Nanoseconds of CPU time a thread has used. */
static int64_t cpu_ns(pthread_t t)
{
	clockid_t c;
	struct timespec ts;
	CHECK_RC(pthread_getcpuclockid(t, &c), 0);
	if (clock_gettime(c, &ts))
		FAIL("clock_gettime of a thread's CPU clock");
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void spin_case(void)
{
	CHECK_RC(pthread_spin_init(&SP, PTHREAD_PROCESS_PRIVATE), 0);
	for (int i = 0; i < 5; i++) {
		CHECK_RC(pthread_spin_lock(&SP), 0);
		CHECK_RC(pthread_spin_unlock(&SP), 0);
	}
	for (int i = 0; i < 3; i++) {
		CHECK_RC(pthread_spin_trylock(&SP), 0);
		CHECK_RC(pthread_spin_unlock(&SP), 0);
	}
	/* a failed trylock by another thread, then a waiter: it is let
	 * through once it sleeps in its attempt (lockswap's, under park) or
	 * has spun for 20 ms of its own CPU time (glibc's never sleeps): its
	 * first try found the spinlock held either way */
	CHECK_RC(pthread_spin_lock(&SP), 0);
	CHECK_EQ(in_thread(spin_try_fn, (void *)&SP), EBUSY);
	pthread_t t;
	struct spin_attempt a = {.s = &SP};
	t = spawn(spin_attempt_fn, &a);
	await_at_least(&a.started, 1);
	int64_t t0 = cpu_ns(t);
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", atomic_load(&a.tid));
	while (stat_state(path) != 'S' && cpu_ns(t) - t0 < 20 * MS) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	CHECK_RC(pthread_spin_unlock(&SP), 0);
	join(t);
	CHECK_RC(pthread_spin_destroy(&SP), 0);

	const void *sp = (const void *)&SP; /* pthread_spinlock_t is volatile */
	expect(0, sp, 1, "lock", "=", 5 + 1 + 1);
	expect(0, sp, 1, "trylock", "=", 3);
	expect(0, sp, 1, "trylock_failed", "=", 1);
	expect(0, sp, 1, "contended", "=", 1);
	expect(0, sp, 1, "handoffs", "=", 1);
	expect(0, sp, 1, "site_contended", "=", 1);
	expect_has(sp, 1, "site_stack", "spin_attempt_fn");
	expect_has(sp, 1, "type", "spin");
	expect_has(sp, 1, "origin", "init");
	expect_has(sp, 1, "ended", "destroyed");
}

static const struct test_case cases[] = {
    {"counts", counts},	     {"sampled", sampled},	   {"fork", fork_case},	       {"many", many},
    {"malloc", malloc_case}, {"exit_thread", exit_thread}, {"_exit", underscore_exit}, {"abort", aborts},
    {"sigterm", terminated}, {"rwlock", rwlock_case},	   {"spin", spin_case},	       {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
