/* The library tests/progs/algo_map.c dlopens (case module): it makes its
 * mutexes (and, for tests/progs/rwlock_map.c, its rwlocks) in its own code,
 * for a MODULE rule (tests/algo-map.bats). */
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

/* Its rwlocks (tests/progs/rwlock_map.c, case module). */
static pthread_rwlock_t rw[N];

pthread_rwlock_t *algo_map_dl_make_rw(int *n)
{
	for (int i = 0; i < N; i++)
		pthread_rwlock_init(&rw[i], NULL);
	*n = N;
	return rw;
}
