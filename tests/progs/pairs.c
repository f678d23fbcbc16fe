/*
 * pairs.c - N uncontended lock/unlock pairs on one static mutex, nothing
 * else: the program that tests/fastpath.bats looks at under callgrind.
 *   pairs N [signal]   (signal: also pthread_cond_signal in the loop, for
 *                       the test that shows the analysis can see condvars)
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int signal = argc > 2 && !strcmp(argv[2], "signal");
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		if (signal)
			pthread_cond_signal(&c);
		pthread_mutex_unlock(&m);
	}
	return 0;
}
