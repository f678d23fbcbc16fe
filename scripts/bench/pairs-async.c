/*
 * pairs-async - the uncontended cost of one lock+unlock pair, with or
 * without a thread that has made itself asynchronously cancelable, for
 * scripts/sweeps/bench-glibc. An ordinary pthread program.
 *
 *   pairs-async N [async]
 *
 * Creates and joins one thread (which, with "async", calls
 * pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS) first), then does N
 * lock/unlock pairs on one default mutex in the main thread, whose type
 * stays deferred. Under callgrind, run it with two values of N and divide
 * the difference of the instruction counts by the difference of N.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *other(void *arg)
{
	int old;
	if (arg)
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int async = argc > 2 && !strcmp(argv[2], "async");
	pthread_t t;
	if (pthread_create(&t, NULL, other, async ? &m : NULL) || pthread_join(t, NULL))
		return 1;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return 0;
}
