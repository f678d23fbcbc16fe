/*
 * mutex_types - what each mutex type does, as glibc 2.36 does it:
 * NORMAL/DEFAULT and ADAPTIVE_NP (plain locks), RECURSIVE (owner and depth:
 * lock, trylock, timedlock and clocklock by the owner all add a level, only
 * the last unlock releases), ERRORCHECK (the owner's relock fails instead of
 * deadlocking and does not add a level). The error codes themselves are in
 * mutex_errors.c.
 */
#include "check.h"

/* A thread that blocks in pthread_mutex_lock and records when it got it. */
struct waiter {
	pthread_mutex_t *m;
	atomic_int started, acquired;
	pthread_t t;
};
static void *waiter_fn(void *p)
{
	struct waiter *w = p;
	atomic_store_explicit(&w->started, 1, memory_order_release);
	int rc = pthread_mutex_lock(w->m);
	atomic_store_explicit(&w->acquired, 1, memory_order_release);
	if (rc == 0)
		rc = pthread_mutex_unlock(w->m);
	return (void *)(intptr_t)rc;
}
static void waiter_start(struct waiter *w, pthread_mutex_t *m)
{
	w->m = m;
	atomic_init(&w->started, 0);
	atomic_init(&w->acquired, 0);
	w->t = spawn(waiter_fn, w);
	await_at_least(&w->started, 1);
	/* Give it a chance to block; the test can only miss a bug if it has
	 * not yet reached pthread_mutex_lock, never fail without one. */
	for (int i = 0; i < 50; i++)
		sched_yield();
}
static void waiter_not_yet(struct waiter *w)
{
	for (int i = 0; i < 20; i++)
		sched_yield();
	if (atomic_load_explicit(&w->acquired, memory_order_acquire))
		FAIL("a waiter acquired the mutex while it was still held");
}
static void waiter_done(struct waiter *w)
{
	CHECK_RC((int)(intptr_t)join(w->t), 0);
	CHECK(atomic_load(&w->acquired));
}

/* The behaviour shared by NORMAL, DEFAULT and ADAPTIVE_NP mutexes. */
static void plain(pthread_mutex_t *m)
{
	CHECK_RC(probe(m), 0);
	CHECK_RC(pthread_mutex_lock(m), 0);
	CHECK_RC(probe(m), EBUSY);
	CHECK_RC(pthread_mutex_trylock(m), EBUSY); /* even for the owner */
	CHECK_RC(pthread_mutex_unlock(m), 0);
	CHECK_RC(probe(m), 0);
	CHECK_RC(pthread_mutex_trylock(m), 0);
	CHECK_RC(probe(m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS);
	CHECK_RC(pthread_mutex_timedlock(m, &far), 0);
	CHECK_RC(probe(m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	far = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	CHECK_RC(pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &far), 0);
	CHECK_RC(probe(m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(m), 0);

	/* A blocked waiter gets the mutex when it is released. */
	struct waiter w;
	CHECK_RC(pthread_mutex_lock(m), 0);
	waiter_start(&w, m);
	waiter_not_yet(&w);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	waiter_done(&w);
	CHECK_RC(probe(m), 0);
	CHECK_RC(pthread_mutex_destroy(m), 0);
}

static void normal(void)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_NORMAL);
	plain(&m);
}

static void default_type(void)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_DEFAULT);
	plain(&m);
	CHECK_RC(pthread_mutex_init(&m, NULL), 0); /* NULL attributes: default */
	plain(&m);
}

static void adaptive(void)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_ADAPTIVE_NP);
	plain(&m);
}

static void recursive(void)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_RECURSIVE);
	struct timespec far_rt = deadline_in(CLOCK_REALTIME, FAR_NS);
	struct timespec far_mono = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	struct timespec past = {0, 0};

	/* Each way of locking by the owner adds a level. */
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_trylock(&m), 0);
	CHECK_RC(pthread_mutex_timedlock(&m, &far_rt), 0);
	CHECK_RC(pthread_mutex_timedlock(&m, &past), 0); /* owner: no wait */
	CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &far_mono), 0);
	CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_REALTIME, &far_rt), 0);
	/* 7 levels: the first 6 unlocks keep it held. */
	for (int i = 0; i < 6; i++) {
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(probe(&m), EBUSY);
	}
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(probe(&m), 0);

	/* Another thread's lock waits for the last unlock. */
	struct waiter w;
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	waiter_start(&w, &m);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	waiter_not_yet(&w);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	waiter_not_yet(&w);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	waiter_done(&w);

	/* After the waiter's turn, the owner starts from depth 0 again. */
	CHECK_RC(pthread_mutex_trylock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(probe(&m), 0);
	CHECK_RC(pthread_mutex_destroy(&m), 0);
}

/* Many levels deep, then back. */
static void recursive_deep(void)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_RECURSIVE);
	enum { DEPTH = 100000 };
	for (int i = 0; i < DEPTH; i++)
		CHECK_RC(pthread_mutex_lock(&m), 0);
	for (int i = 0; i < DEPTH - 1; i++)
		CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(probe(&m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(probe(&m), 0);
}

static void errorcheck(void)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	/* The owner's relock fails rather than deadlocking, and adds no level. */
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_lock(&m), EDEADLK);
	CHECK_RC(pthread_mutex_trylock(&m), EBUSY);
	CHECK_RC(probe(&m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(probe(&m), 0);

	/* Ownership moves with the lock: another thread's lock makes it the
	 * owner, and then main's unlock is refused. */
	CHECK_RC(in_thread(lock_fn, &m), 0); /* the thread exits holding it */
	CHECK_RC(pthread_mutex_unlock(&m), EPERM);
	CHECK_RC(probe(&m), EBUSY);

	pthread_mutex_t n;
	init_type(&n, PTHREAD_MUTEX_ERRORCHECK);
	struct waiter w;
	CHECK_RC(pthread_mutex_lock(&n), 0);
	waiter_start(&w, &n);
	waiter_not_yet(&w);
	CHECK_RC(pthread_mutex_unlock(&n), 0);
	waiter_done(&w);
	CHECK_RC(pthread_mutex_lock(&n), 0);
	CHECK_RC(pthread_mutex_unlock(&n), 0);
	CHECK_RC(pthread_mutex_destroy(&n), 0);
}

/* Destroy and init again with another type: the new type applies. */
static void reinit(void)
{
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_RECURSIVE);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_destroy(&m), 0);

	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_lock(&m), EDEADLK);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), EPERM);
	CHECK_RC(pthread_mutex_destroy(&m), 0);

	init_type(&m, PTHREAD_MUTEX_NORMAL);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_trylock(&m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_destroy(&m), 0);

	init_type(&m, PTHREAD_MUTEX_RECURSIVE);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_trylock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(probe(&m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(probe(&m), 0);
	CHECK_RC(pthread_mutex_destroy(&m), 0);
}

static const struct test_case cases[] = {
    {"normal", normal},
    {"default", default_type},
    {"adaptive", adaptive},
    {"recursive", recursive},
    {"recursive-deep", recursive_deep},
    {"errorcheck", errorcheck},
    {"reinit", reinit},
    {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
