/*
 * cross_unlock - a NORMAL (or DEFAULT, ADAPTIVE_NP) mutex unlocked by a
 * thread other than the one that locked it. POSIX leaves it undefined, glibc
 * tolerates it, and real programs use mutexes as binary semaphores this way.
 */
#include "check.h"

/* Locked by one thread, unlocked by another while the locker is alive and
 * after it has exited; then usable as before. */
static pthread_mutex_t simple_m;
static atomic_int s_locked, s_unlocked;
static void *locker_waits(void *p)
{
	(void)p;
	CHECK_RC(pthread_mutex_lock(&simple_m), 0);
	atomic_store(&s_locked, 1);
	await_at_least(&s_unlocked, 1);
	/* Someone else released it: this thread can take it again. */
	CHECK_RC(pthread_mutex_lock(&simple_m), 0);
	CHECK_RC(pthread_mutex_unlock(&simple_m), 0);
	return NULL;
}
static void simple(void)
{
	static const int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_DEFAULT, PTHREAD_MUTEX_ADAPTIVE_NP};
	for (int t = 0; t < 3; t++) {
		init_type(&simple_m, types[t]);
		/* The locker is alive. */
		atomic_store(&s_locked, 0);
		atomic_store(&s_unlocked, 0);
		pthread_t th = spawn(locker_waits, NULL);
		await_at_least(&s_locked, 1);
		CHECK_RC(pthread_mutex_trylock(&simple_m), EBUSY);
		CHECK_RC(pthread_mutex_unlock(&simple_m), 0);
		atomic_store(&s_unlocked, 1);
		join(th);
		/* The locker has exited. */
		CHECK_RC(in_thread(lock_fn, &simple_m), 0);
		CHECK_RC(probe(&simple_m), EBUSY);
		CHECK_RC(pthread_mutex_unlock(&simple_m), 0);
		CHECK_RC(probe(&simple_m), 0);
		/* Locked by main, unlocked by another thread. */
		CHECK_RC(pthread_mutex_lock(&simple_m), 0);
		CHECK_RC(in_thread(unlock_fn, &simple_m), 0);
		CHECK_RC(probe(&simple_m), 0);
		/* Many times over, in the same mutex: each time a fresh locker
		 * and a fresh unlocker (a lock that ties its state to the
		 * thread that locked, a queue node, fails at the first; 50
		 * rounds reuse the threads' memory and ids many times over). */
		for (int i = 0; i < 50; i++) {
			CHECK_RC(in_thread(lock_fn, &simple_m), 0);
			CHECK_RC(in_thread(unlock_fn, &simple_m), 0);
		}
		CHECK_RC(probe(&simple_m), 0);
		CHECK_RC(pthread_mutex_destroy(&simple_m), 0);
	}
}

/* Two mutexes used as semaphores: T1 waits on P and releases Q, T2 waits
 * on Q and releases P; every unlock is by a thread that did not lock. The
 * turns strictly alternate, so the shared counter needs no other lock.
 * 500 rounds (sized: check.h): each is two hand-overs between threads,
 * a thousand in all, where a lost wake-up shows as a hang. */
static int rounds;
static pthread_mutex_t P, Q;
static long turns;
static void *t1(void *p)
{
	(void)p;
	for (int i = 0; i < rounds; i++) {
		CHECK_RC(pthread_mutex_lock(&P), 0); /* unlocked by main, then T2 */
		if (turns != 2L * i)
			FAIL("T1 at round %d sees %ld turns", i, turns);
		turns++;
		CHECK_RC(pthread_mutex_unlock(&Q), 0); /* locked by main, then T2 */
	}
	return NULL;
}
static void *t2(void *p)
{
	(void)p;
	for (int i = 0; i < rounds; i++) {
		CHECK_RC(pthread_mutex_lock(&Q), 0);
		if (turns != 2L * i + 1)
			FAIL("T2 at round %d sees %ld turns", i, turns);
		turns++;
		CHECK_RC(pthread_mutex_unlock(&P), 0);
	}
	return NULL;
}
static void semaphore(void)
{
	rounds = sized(500);
	init_type(&P, PTHREAD_MUTEX_NORMAL);
	CHECK_RC(pthread_mutex_init(&Q, NULL), 0);
	CHECK_RC(pthread_mutex_lock(&P), 0);
	CHECK_RC(pthread_mutex_lock(&Q), 0);
	pthread_t a = spawn(t1, NULL), b = spawn(t2, NULL);
	CHECK_RC(pthread_mutex_unlock(&P), 0); /* T1 goes first */
	join(a);
	join(b);
	CHECK_EQ(turns, 2L * rounds);
	/* T2 released P last; T2 took Q last and nobody released it. */
	CHECK_RC(probe(&P), 0);
	CHECK_RC(probe(&Q), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&Q), 0);
	CHECK_RC(probe(&Q), 0);
}

/* A handoff chain: each worker waits on its mutex, and hands the baton to
 * the next worker's mutex, which the previous holder had locked. 100 laps
 * (sized: check.h). */
enum { CHAIN = 4 };
static int laps;
static pthread_mutex_t chain[CHAIN];
static long chain_count;
static void *chain_fn(void *p)
{
	int me = (int)(intptr_t)p;
	for (int i = 0; i < laps; i++) {
		CHECK_RC(pthread_mutex_lock(&chain[me]), 0);
		chain_count++;
		CHECK_RC(pthread_mutex_unlock(&chain[(me + 1) % CHAIN]), 0);
	}
	return NULL;
}
static void handoff_chain(void)
{
	laps = sized(100);
	for (int i = 0; i < CHAIN; i++) {
		init_type(&chain[i], i % 2 ? PTHREAD_MUTEX_ADAPTIVE_NP : PTHREAD_MUTEX_NORMAL);
		CHECK_RC(pthread_mutex_lock(&chain[i]), 0);
	}
	pthread_t t[CHAIN];
	for (int i = 0; i < CHAIN; i++)
		t[i] = spawn(chain_fn, (void *)(intptr_t)i);
	CHECK_RC(pthread_mutex_unlock(&chain[0]), 0);
	for (int i = 0; i < CHAIN; i++)
		join(t[i]);
	CHECK_EQ(chain_count, (long)CHAIN * laps);
}

static const struct test_case cases[] = {
    {"simple", simple},
    {"semaphore", semaphore},
    {"chain", handoff_chain},
    {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
