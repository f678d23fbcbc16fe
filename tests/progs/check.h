/*
 * check.h - shared by the end-to-end test programs in tests/progs/.
 *
 * These are ordinary pthread programs: they know nothing of lockswap and must
 * pass natively (no LD_PRELOAD) against glibc, which is the specification.
 * A failed check prints file:line, the expression, what it gave and what was
 * expected, then exits with status 1. Every program takes a case name as its
 * first argument and runs only that case (see cases[] in each program).
 *
 * Ordering between threads is by joins, barriers and flags, never by sleeps.
 */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_mutex_clocklock, gettid, ... */
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline const char *err_name(int e)
{
	switch (e) {
	case 0:
		return "0";
	case EBUSY:
		return "EBUSY";
	case EINVAL:
		return "EINVAL";
	case EAGAIN:
		return "EAGAIN";
	case EDEADLK:
		return "EDEADLK";
	case EPERM:
		return "EPERM";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	case EOWNERDEAD:
		return "EOWNERDEAD";
	case ENOTRECOVERABLE:
		return "ENOTRECOVERABLE";
	case EINTR:
		return "EINTR";
	default:
		return "?";
	}
}

/* The case run_case is running, which FAIL names: a process runs several. */
static const char *check_case __attribute__((unused));

#define FAIL(...)                                                                                            \
	do {                                                                                                 \
		if (check_case)                                                                              \
			fprintf(stderr, "case %s: ", check_case);                                            \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                              \
		fprintf(stderr, __VA_ARGS__);                                                                \
		fputc('\n', stderr);                                                                         \
		exit(1);                                                                                     \
	} while (0)

/* An error-code-returning call must give exactly `want`. */
#define CHECK_RC(expr, want)                                                                                 \
	do {                                                                                                 \
		int rc_ = (expr);                                                                            \
		int want_ = (want);                                                                          \
		if (rc_ != want_)                                                                            \
			FAIL("%s returned %d (%s), expected %d (%s)", #expr, rc_, err_name(rc_), want_,      \
			     err_name(want_));                                                               \
	} while (0)

#define CHECK(cond)                                                                                          \
	do {                                                                                                 \
		if (!(cond))                                                                                 \
			FAIL("check failed: %s", #cond);                                                     \
	} while (0)

#define CHECK_EQ(a, b)                                                                                       \
	do {                                                                                                 \
		long long a_ = (long long)(a), b_ = (long long)(b);                                          \
		if (a_ != b_)                                                                                \
			FAIL("%s == %lld, expected %s == %lld", #a, a_, #b, b_);                             \
	} while (0)

/* Case table: main(argc, argv) runs the case named argv[1], or each case
 * named, in order, in this one process (tests/gcr.bats runs whole programs
 * so, under every algorithm, in few processes). */
struct test_case {
	const char *name;
	void (*fn)(void);
};

static inline int run_case(const struct test_case *cases, int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s CASE\ncases:", argv[0]);
		for (const struct test_case *c = cases; c->name; c++)
			fprintf(stderr, " %s", c->name);
		fputc('\n', stderr);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const struct test_case *c = cases;
		while (c->name && strcmp(c->name, argv[i]) != 0)
			c++;
		if (!c->name) {
			fprintf(stderr, "%s: unknown case '%s'\n", argv[0], argv[i]);
			return 2;
		}
		check_case = c->name;
		c->fn();
	}
	check_case = NULL;
	return 0;
}

/* A loop count as the run is sized (tests/helpers.bash, "Sizing runs by
 * policy"): n x TEST_ITERS_PERCENT / 100, but at least min(n, 50). The
 * tests set TEST_ITERS_PERCENT to 10 for a run under yield of an
 * algorithm whose waiting is locks/common/wait.c's alone; natively (unset),
 * n. For the loops whose every turn is a hand-over between threads, the
 * ones that a busy machine makes slow. */
static inline int sized(int n)
{
	const char *e = getenv("TEST_ITERS_PERCENT");
	long p = e ? strtol(e, NULL, 10) : 100;
	if (p < 1 || p > 100)
		p = 100;
	long m = n * p / 100, floor = n < 50 ? n : 50;
	return (int)(m < floor ? floor : m);
}

/* Threads. */
/* pthread_mutex_init with a mutex type (checked). */
static inline void init_type(pthread_mutex_t *m, int type)
{
	pthread_mutexattr_t a;
	CHECK_RC(pthread_mutexattr_init(&a), 0);
	CHECK_RC(pthread_mutexattr_settype(&a, type), 0);
	CHECK_RC(pthread_mutex_init(m, &a), 0);
	CHECK_RC(pthread_mutexattr_destroy(&a), 0);
}

static inline pthread_t spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int rc = pthread_create(&t, NULL, fn, arg);
	if (rc != 0)
		FAIL("pthread_create: %s", strerror(rc));
	return t;
}

static inline void *join(pthread_t t)
{
	void *ret;
	int rc = pthread_join(t, &ret);
	if (rc != 0)
		FAIL("pthread_join: %s", strerror(rc));
	return ret;
}

/* Runs fn(arg) in a new thread and returns its result as an int: the way to
 * ask "what does this call return when another thread makes it?". */
static inline int in_thread(void *(*fn)(void *), void *arg)
{
	return (int)(intptr_t)join(spawn(fn, arg));
}

static inline void *trylock_fn(void *m)
{
	return (void *)(intptr_t)pthread_mutex_trylock(m);
}
static inline void *unlock_fn(void *m)
{
	return (void *)(intptr_t)pthread_mutex_unlock(m);
}
static inline void *lock_fn(void *m)
{
	return (void *)(intptr_t)pthread_mutex_lock(m);
}

/* Contention: nthreads (at most 16) x iters increments of a counter through
 * m, checking that no two threads are ever inside at once and that no
 * increment is lost. */
struct contend_arg {
	pthread_mutex_t *m;
	int iters;
	long counter;
	atomic_int inside;
};
static inline void *contend_thread(void *p)
{
	struct contend_arg *c = p;
	for (int i = 0; i < c->iters; i++) {
		CHECK_RC(pthread_mutex_lock(c->m), 0);
		if (atomic_fetch_add_explicit(&c->inside, 1, memory_order_relaxed) != 0)
			FAIL("two threads inside the critical section");
		long v = c->counter;
		__asm__ __volatile__("" ::: "memory");
		c->counter = v + 1;
		atomic_fetch_sub_explicit(&c->inside, 1, memory_order_relaxed);
		CHECK_RC(pthread_mutex_unlock(c->m), 0);
	}
	return NULL;
}
static inline void contend(pthread_mutex_t *m, int nthreads, int iters)
{
	struct contend_arg c = {.m = m, .iters = iters};
	pthread_t t[16];
	if (nthreads > 16)
		FAIL("contend: %d threads, at most 16", nthreads);
	for (int i = 0; i < nthreads; i++)
		t[i] = spawn(contend_thread, &c);
	for (int i = 0; i < nthreads; i++)
		join(t[i]);
	CHECK_EQ(c.counter, (long)nthreads * iters);
}

/* pthread_mutex_trylock from another thread: EBUSY while m is held. When it
 * succeeds the other thread unlocks again, so the state is unchanged. */
static inline void *probe_fn(void *m)
{
	int rc = pthread_mutex_trylock(m);
	if (rc == 0) {
		int u = pthread_mutex_unlock(m);
		if (u != 0)
			FAIL("unlock after a successful probe: %d", u);
	}
	return (void *)(intptr_t)rc;
}
static inline int probe(pthread_mutex_t *m)
{
	return in_thread(probe_fn, m);
}

/* A condvar on the given clock (pthread_condattr_setclock). */
static inline void init_cond(pthread_cond_t *c, clockid_t clock)
{
	pthread_condattr_t a;
	CHECK_RC(pthread_condattr_init(&a), 0);
	CHECK_RC(pthread_condattr_setclock(&a, clock), 0);
	CHECK_RC(pthread_cond_init(c, &a), 0);
	CHECK_RC(pthread_condattr_destroy(&a), 0);
}

/* Returns with m held once *announced (written under m, just before a
 * thread waits on a condvar with m) has reached n: that thread is then
 * inside the wait. */
static inline void lock_when_waiting(pthread_mutex_t *m, int *announced, int n)
{
	for (;;) {
		CHECK_RC(pthread_mutex_lock(m), 0);
		if (*announced >= n)
			return;
		CHECK_RC(pthread_mutex_unlock(m), 0);
		sched_yield();
	}
}

/* Spins politely until *flag reaches at least v. */
static inline void await_at_least(atomic_int *flag, int v)
{
	while (atomic_load_explicit(flag, memory_order_acquire) < v)
		sched_yield();
}

/* Time. */
static inline int64_t ts_ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
static inline int64_t now_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return ts_ns(t);
}
static inline struct timespec ns_ts(int64_t ns)
{
	struct timespec t = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
	return t;
}
/* An absolute deadline `ns` from now on clock c. */
static inline struct timespec deadline_in(clockid_t c, int64_t ns)
{
	return ns_ts(now_ns(c) + ns);
}
/* After a timeout, the clock must have reached the deadline. */
#define CHECK_REACHED(c, dl)                                                                                 \
	do {                                                                                                 \
		int64_t n_ = now_ns(c), d_ = ts_ns(dl);                                                      \
		if (n_ < d_)                                                                                 \
			FAIL("timed out %lld ns before the deadline on clock %d", (long long)(d_ - n_),      \
			     (int)(c));                                                                      \
	} while (0)

/* The scheduler state in a /proc/.../stat file: 'R' running, 'S' sleeping
 * in the kernel, ... (its third field). */
static inline char stat_state(const char *path)
{
	char buf[512];
	FILE *f = fopen(path, "r");
	if (!f)
		FAIL("cannot open %s", path);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		FAIL("cannot parse %s", path);
	return p[2];
}

/* The scheduler state of one of this process's threads. */
static inline char task_state(pid_t tid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	return stat_state(path);
}
/* CPU time thread tid has used, in clock ticks (utime + stime of
 * /proc/.../stat). */
static inline unsigned long task_ticks(pid_t tid)
{
	char path[64], buf[512];
	unsigned long ut = 0, st = 0;
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		FAIL("cannot open %s", path);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	/* after ')': state(3) ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime(14) stime(15) */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		FAIL("cannot parse %s", path);
	return ut + st;
}

/* Involuntary context switches of thread tid so far (a sched_yield that
 * gives the CPU away counts here). */
static inline unsigned long task_nivcsw(pid_t tid)
{
	char path[64], line[256];
	unsigned long n = 0;
	snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		FAIL("cannot open %s", path);
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "nonvoluntary_ctxt_switches: %lu", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Waits (up to about `ms` milliseconds) for thread tid to be waiting: asleep
 * in the kernel, or busy in a lock call since this was called - it has used
 * a clock tick of CPU (spinning) or given the CPU away three times
 * (yielding). Progress, not a delay, ends the wait, so a spinning or
 * yielding waiter is found about as fast as a sleeping one. */
static inline int await_waiting(pid_t tid, int ms)
{
	unsigned long t0 = task_ticks(tid), c0 = task_nivcsw(tid);
	for (int i = 0; i < ms; i++) {
		if (task_state(tid) == 'S' || task_ticks(tid) > t0 || task_nivcsw(tid) >= c0 + 3)
			return 1;
		struct timespec t = {0, 1000000};
		nanosleep(&t, NULL);
	}
	return 0;
}

/* Waits (up to `ms` milliseconds of the monotonic clock, however loaded
 * the machine) for the thread or process whose stat file is path to be
 * asleep in the kernel; returns whether it got there. */
static inline int await_stat_sleeping(const char *path, int ms)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int64_t end = (int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec + (int64_t)ms * 1000000;
	while (stat_state(path) != 'S') {
		struct timespec t = {0, 1000000};
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if ((int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec >= end)
			return 0;
		nanosleep(&t, NULL);
	}
	return 1;
}

/* The same for one of this process's threads, and for a child process. */
static inline int await_sleeping(pid_t tid, int ms)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	return await_stat_sleeping(path, ms);
}
static inline int await_child_sleeping(pid_t pid, int ms)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	return await_stat_sleeping(path, ms);
}

/* The body of a critical section under test, for any kind of lock: fails
 * if another thread is inside (*inside counts them), and increments
 * *counter by a read and a write, which lose updates if two overlap. */
static inline void critical_section(atomic_int *inside, long *counter)
{
	if (atomic_fetch_add_explicit(inside, 1, memory_order_relaxed) != 0)
		FAIL("two threads inside the critical section");
	long v = *counter;
	__asm__ __volatile__("" ::: "memory");
	*counter = v + 1;
	atomic_fetch_sub_explicit(inside, 1, memory_order_relaxed);
}

#define MS 1000000LL
#define FAR_NS (3600LL * 1000000000) /* a deadline that is never reached */

#endif
