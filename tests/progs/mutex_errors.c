/*
 * mutex_errors - every error code of the pthread_mutex_* calls, as glibc 2.36
 * gives them: EAGAIN (recursion count overflow), EDEADLK and EPERM
 * (errorcheck and recursive ownership), EBUSY (trylock, destroy of a locked
 * mutex), ETIMEDOUT (timedlock at an absolute CLOCK_REALTIME deadline,
 * clocklock on CLOCK_REALTIME or CLOCK_MONOTONIC), EINVAL (other clocks,
 * tv_nsec out of range while the mutex is busy).
 */
#include "check.h"

#include <limits.h>

static const int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
			    PTHREAD_MUTEX_ADAPTIVE_NP};
#define NTYPES (int)(sizeof types / sizeof types[0])

/* A helper thread holds a mutex until released, so that main sees it busy. */
struct holder {
	pthread_mutex_t *m;
	atomic_int locked, release;
	pthread_t t;
};
static void *holder_fn(void *p)
{
	struct holder *h = p;
	int rc = pthread_mutex_lock(h->m);
	atomic_store_explicit(&h->locked, 1, memory_order_release);
	await_at_least(&h->release, 1);
	if (rc == 0)
		rc = pthread_mutex_unlock(h->m);
	return (void *)(intptr_t)rc;
}
static void hold(struct holder *h, pthread_mutex_t *m)
{
	h->m = m;
	atomic_init(&h->locked, 0);
	atomic_init(&h->release, 0);
	h->t = spawn(holder_fn, h);
	await_at_least(&h->locked, 1);
}
static void unhold(struct holder *h)
{
	atomic_store_explicit(&h->release, 1, memory_order_release);
	CHECK_RC((int)(intptr_t)join(h->t), 0);
}

static void recursive_eagain(void)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_RECURSIVE);
	struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS);
	struct timespec farm = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	/* The recursion count is the unsigned __count field (glibc's, and
	 * lockswap keeps it there too): jump to the limit. */
	m.__data.__count = UINT_MAX;
	CHECK_RC(pthread_mutex_lock(&m), EAGAIN);
	CHECK_RC(pthread_mutex_trylock(&m), EAGAIN);
	CHECK_RC(pthread_mutex_timedlock(&m, &far), EAGAIN);
	CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &farm), EAGAIN);
	CHECK_EQ(m.__data.__count, UINT_MAX); /* a failed relock adds nothing */
	CHECK_RC(probe(&m), EBUSY);
	/* One below the limit, one more level still fits. */
	m.__data.__count = UINT_MAX - 1;
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_lock(&m), EAGAIN);
	m.__data.__count = 1;
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(probe(&m), 0);
	CHECK_RC(pthread_mutex_destroy(&m), 0);
}

static void errorcheck_edeadlk(void)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS);
	struct timespec farm = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	struct timespec past = {0, 0};
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_lock(&m), EDEADLK);
	CHECK_RC(pthread_mutex_timedlock(&m, &far), EDEADLK);
	CHECK_RC(pthread_mutex_timedlock(&m, &past), EDEADLK);
	CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &farm), EDEADLK);
	CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_REALTIME, &far), EDEADLK);
	CHECK_RC(pthread_mutex_trylock(&m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&m), 0); /* held once, released once */
	CHECK_RC(probe(&m), 0);
	CHECK_RC(pthread_mutex_destroy(&m), 0);
}

/* EPERM: unlock of an unlocked mutex, unlock by a thread that does not own
 * it. The mutex stays held by its owner. */
static void eperm(int type)
{
	pthread_mutex_t m;
	init_type(&m, type);
	CHECK_RC(pthread_mutex_unlock(&m), EPERM); /* never locked */
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(in_thread(unlock_fn, &m), EPERM);
	CHECK_RC(probe(&m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), EPERM); /* unlocked again */
	CHECK_RC(probe(&m), 0);

	/* Held by another thread: main is not the owner. */
	struct holder h;
	hold(&h, &m);
	CHECK_RC(pthread_mutex_unlock(&m), EPERM);
	CHECK_RC(pthread_mutex_trylock(&m), EBUSY);
	unhold(&h);
	CHECK_RC(pthread_mutex_unlock(&m), EPERM);
	CHECK_RC(pthread_mutex_destroy(&m), 0);
}
static void errorcheck_eperm(void)
{
	eperm(PTHREAD_MUTEX_ERRORCHECK);
}
static void recursive_eperm(void)
{
	eperm(PTHREAD_MUTEX_RECURSIVE);
}

static void trylock_ebusy(void)
{
	for (int i = 0; i < NTYPES; i++) {
		pthread_mutex_t m;
		init_type(&m, types[i]);
		struct holder h;
		hold(&h, &m);
		CHECK_RC(pthread_mutex_trylock(&m), EBUSY);
		CHECK_RC(pthread_mutex_trylock(&m), EBUSY);
		unhold(&h);
		CHECK_RC(pthread_mutex_trylock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_destroy(&m), 0);
	}
}

/* Busy mutex: a timed lock returns ETIMEDOUT, not before the deadline on
 * the clock it was given, and does not take the lock. A deadline 5 ms
 * ahead: "not before" holds or fails whatever the wait (a lock without a
 * timed path of its own polls until then, a CPU's worth). */
static void timeouts(int with_clocklock, clockid_t c)
{
	for (int i = 0; i < NTYPES; i++) {
		pthread_mutex_t m;
		init_type(&m, types[i]);
		struct holder h;
		hold(&h, &m);
		struct timespec dl = deadline_in(c, 5 * MS);
		if (with_clocklock)
			CHECK_RC(pthread_mutex_clocklock(&m, c, &dl), ETIMEDOUT);
		else
			CHECK_RC(pthread_mutex_timedlock(&m, &dl), ETIMEDOUT);
		CHECK_REACHED(c, dl);
		/* A deadline already past: ETIMEDOUT at once. */
		dl = deadline_in(c, -1 * MS);
		if (with_clocklock)
			CHECK_RC(pthread_mutex_clocklock(&m, c, &dl), ETIMEDOUT);
		else
			CHECK_RC(pthread_mutex_timedlock(&m, &dl), ETIMEDOUT);
		/* Negative tv_sec: long past. */
		dl = (struct timespec){.tv_sec = -1, .tv_nsec = 0};
		if (with_clocklock)
			CHECK_RC(pthread_mutex_clocklock(&m, c, &dl), ETIMEDOUT);
		else
			CHECK_RC(pthread_mutex_timedlock(&m, &dl), ETIMEDOUT);
		CHECK_RC(pthread_mutex_trylock(&m), EBUSY);
		unhold(&h);
		/* Free: a past deadline still locks. */
		dl = (struct timespec){0, 0};
		if (with_clocklock)
			CHECK_RC(pthread_mutex_clocklock(&m, c, &dl), 0);
		else
			CHECK_RC(pthread_mutex_timedlock(&m, &dl), 0);
		CHECK_RC(probe(&m), EBUSY);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_destroy(&m), 0);
	}
}
static void timedlock_etimedout(void)
{
	timeouts(0, CLOCK_REALTIME);
}
static void clocklock_realtime_etimedout(void)
{
	timeouts(1, CLOCK_REALTIME);
}
static void clocklock_monotonic_etimedout(void)
{
	timeouts(1, CLOCK_MONOTONIC);
}

/* A timed lock that is released before its deadline succeeds. */
struct timed_arg {
	pthread_mutex_t *m;
	int clocklock;
	clockid_t c;
	atomic_int started;
};
static void *timed_fn(void *p)
{
	struct timed_arg *a = p;
	struct timespec dl = deadline_in(a->c, FAR_NS);
	atomic_store_explicit(&a->started, 1, memory_order_release);
	int rc = a->clocklock ? pthread_mutex_clocklock(a->m, a->c, &dl) : pthread_mutex_timedlock(a->m, &dl);
	if (rc == 0)
		rc = pthread_mutex_unlock(a->m);
	return (void *)(intptr_t)rc;
}
static void timed_success(void)
{
	for (int i = 0; i < NTYPES; i++) {
		for (int k = 0; k < 3; k++) {
			pthread_mutex_t m;
			init_type(&m, types[i]);
			struct timed_arg a = {&m, k > 0, k == 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME, 0};
			CHECK_RC(pthread_mutex_lock(&m), 0);
			pthread_t t = spawn(timed_fn, &a);
			await_at_least(&a.started, 1);
			for (int y = 0; y < 20; y++)
				sched_yield();
			CHECK_RC(pthread_mutex_unlock(&m), 0);
			CHECK_RC((int)(intptr_t)join(t), 0);
			CHECK_RC(pthread_mutex_destroy(&m), 0);
		}
	}
}

/* clocklock accepts only CLOCK_REALTIME and CLOCK_MONOTONIC: EINVAL for
 * any other clock, even when the mutex is free (and it stays free). */
static void clocklock_einval_clock(void)
{
	static const clockid_t bad[] = {CLOCK_PROCESS_CPUTIME_ID,
					CLOCK_THREAD_CPUTIME_ID,
					CLOCK_MONOTONIC_RAW,
					CLOCK_REALTIME_COARSE,
					CLOCK_MONOTONIC_COARSE,
					CLOCK_BOOTTIME,
					CLOCK_TAI,
					-1,
					12345};
	for (int i = 0; i < NTYPES; i++) {
		pthread_mutex_t m;
		init_type(&m, types[i]);
		for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
			struct timespec dl = deadline_in(CLOCK_MONOTONIC, FAR_NS);
			CHECK_RC(pthread_mutex_clocklock(&m, bad[k], &dl), EINVAL);
			CHECK_RC(probe(&m), 0);
			struct holder h;
			hold(&h, &m);
			CHECK_RC(pthread_mutex_clocklock(&m, bad[k], &dl), EINVAL);
			unhold(&h);
		}
		CHECK_RC(pthread_mutex_destroy(&m), 0);
	}
}

/* tv_nsec outside [0, 1e9): EINVAL only when the lock is not free; a free
 * mutex is simply locked. */
static void einval_nsec(void)
{
	static const long bad[] = {1000000000, -1, 2000000000, LONG_MIN};
	for (int i = 0; i < NTYPES; i++) {
		pthread_mutex_t m;
		init_type(&m, types[i]);
		for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
			struct timespec dl = {.tv_sec = now_ns(CLOCK_REALTIME) / 1000000000 + 3600,
					      .tv_nsec = bad[k]};
			CHECK_RC(pthread_mutex_timedlock(&m, &dl), 0);
			CHECK_RC(pthread_mutex_unlock(&m), 0);
			CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &dl), 0);
			CHECK_RC(pthread_mutex_unlock(&m), 0);
			CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_REALTIME, &dl), 0);
			CHECK_RC(pthread_mutex_unlock(&m), 0);
			struct holder h;
			hold(&h, &m);
			CHECK_RC(pthread_mutex_timedlock(&m, &dl), EINVAL);
			CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &dl), EINVAL);
			CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_REALTIME, &dl), EINVAL);
			unhold(&h);
			CHECK_RC(probe(&m), 0);
		}
		CHECK_RC(pthread_mutex_destroy(&m), 0);
	}
}

/* destroy of a locked mutex: EBUSY, and the mutex is still usable. */
static void destroy_ebusy(void)
{
	for (int i = 0; i < NTYPES; i++) {
		pthread_mutex_t m;
		init_type(&m, types[i]);
		CHECK_RC(pthread_mutex_lock(&m), 0);
		if (types[i] == PTHREAD_MUTEX_RECURSIVE)
			CHECK_RC(pthread_mutex_lock(&m), 0);
		CHECK_RC(pthread_mutex_destroy(&m), EBUSY);
		CHECK_RC(probe(&m), EBUSY);
		if (types[i] == PTHREAD_MUTEX_RECURSIVE) {
			CHECK_RC(pthread_mutex_unlock(&m), 0);
			CHECK_RC(pthread_mutex_destroy(&m), EBUSY);
		}
		CHECK_RC(pthread_mutex_unlock(&m), 0);

		/* Held by another thread. */
		struct holder h;
		hold(&h, &m);
		CHECK_RC(pthread_mutex_destroy(&m), EBUSY);
		unhold(&h);
		CHECK_RC(pthread_mutex_destroy(&m), 0);
	}
}

static const struct test_case cases[] = {
    {"recursive-eagain", recursive_eagain},
    {"errorcheck-edeadlk", errorcheck_edeadlk},
    {"errorcheck-eperm", errorcheck_eperm},
    {"recursive-eperm", recursive_eperm},
    {"trylock-ebusy", trylock_ebusy},
    {"timedlock-etimedout", timedlock_etimedout},
    {"clocklock-realtime-etimedout", clocklock_realtime_etimedout},
    {"clocklock-monotonic-etimedout", clocklock_monotonic_etimedout},
    {"timed-success", timed_success},
    {"clocklock-einval-clock", clocklock_einval_clock},
    {"einval-nsec", einval_nsec},
    {"destroy-ebusy", destroy_ebusy},
    {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
