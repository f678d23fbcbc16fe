/*
 * compare_prog MODE - a program whose output or progress depends on its mutex
 * and condition variable being right, for tests/compare.bats. Its output is
 * the same on every correct run, so `lockswap compare --check stdout` can hold
 * every run to the native one.
 *
 *   held     a thread holds a mutex while another calls trylock on it, then
 *            several threads add to a counter under it; prints the trylock
 *            result (EBUSY when the lock is right) and the total. A lock that
 *            does not exclude prints "trylock of a held mutex: acquired".
 *   handoff  a consumer waits on a condition variable; once it is asleep
 *            (inside pthread_cond_wait, which released the mutex) the main
 *            thread hands it a value and signals. With lost wake-ups every
 *            thread sleeps for ever: a hang.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static long counter;
static int item;
static atomic_int waiting;

static void *try_held(void *arg)
{
	int *rc = arg;
	*rc = pthread_mutex_trylock(&m);
	if (*rc == 0)
		pthread_mutex_unlock(&m);
	return NULL;
}

static void *add(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&m);
		long v = counter;
		if (i % 100 == 0)
			sched_yield();
		counter = v + 1;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

static void *consume(void *arg)
{
	int *got = arg;
	pthread_mutex_lock(&m);
	atomic_store(&waiting, 1);
	while (item == 0)
		pthread_cond_wait(&c, &m);
	*got = item;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	if (argc == 2 && strcmp(argv[1], "held") == 0) {
		int rc = -1;
		pthread_mutex_lock(&m);
		pthread_create(&t[0], NULL, try_held, &rc);
		pthread_join(t[0], NULL);
		pthread_mutex_unlock(&m);
		printf("trylock of a held mutex: %s\n", rc == EBUSY ? "EBUSY"
							: rc == 0   ? "acquired"
								    : strerror(rc));
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, add, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("counter: %ld\n", counter);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "handoff") == 0) {
		int got = 0;
		pthread_create(&t[0], NULL, consume, &got);
		while (!atomic_load(&waiting))
			sched_yield();
		/* The consumer holds the mutex until pthread_cond_wait releases it:
		 * once this lock succeeds, it is asleep (or about to be). */
		pthread_mutex_lock(&m);
		item = 42;
		pthread_cond_signal(&c);
		pthread_mutex_unlock(&m);
		pthread_join(t[0], NULL);
		printf("handed over: %d\n", got);
		return 0;
	}
	fprintf(stderr, "usage: compare_prog held|handoff\n");
	return 2;
}
