/*
 * nolock.so - a broken "lock" for the tests: preloaded, it replaces every
 * pthread_mutex (rwlock, spinlock) acquire and release with a no-op that reports success, so
 * threads enter critical sections together. tests/lockbench.bats uses it to
 * prove that lockbench's mutual-exclusion check fails on a broken lock.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

int pthread_mutex_lock(pthread_mutex_t *m)
{
	(void)m;
	return 0;
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	(void)m;
	return 0;
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	(void)m;
	(void)abstime;
	return 0;
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
	(void)m;
	(void)clock;
	(void)abstime;
	return 0;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	(void)m;
	return 0;
}

/* The same for reader-writer locks and spinlocks (lockbench --lock). */
int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	(void)l;
	return 0;
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	(void)l;
	return 0;
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	(void)l;
	return 0;
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	(void)l;
	return 0;
}

int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	(void)l;
	return 0;
}

int pthread_spin_lock(pthread_spinlock_t *s)
{
	(void)s;
	return 0;
}

int pthread_spin_trylock(pthread_spinlock_t *s)
{
	(void)s;
	return 0;
}

int pthread_spin_unlock(pthread_spinlock_t *s)
{
	(void)s;
	return 0;
}
