/* The library tests/progs/algo_map.c dlopens (case module): it makes its
 * mutexes in its own code, for a MODULE rule (tests/algo-map.bats). */
#include <pthread.h>

#define N 4
static pthread_mutex_t m[N];

pthread_mutex_t *algo_map_dl_make(int *n)
{
	for (int i = 0; i < N; i++)
		pthread_mutex_init(&m[i], NULL);
	*n = N;
	return m;
}
