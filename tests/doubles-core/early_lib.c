/*
 * libearly.so - a shared library whose constructor uses mutexes and a
 * condition variable, as real libraries do. It is a dependency of
 * tests/progs/early.c, so glibc runs this constructor before the constructor
 * of a library given in LD_PRELOAD (dependencies are initialised first); it
 * leaves some of the mutexes locked for the program to check.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

pthread_mutex_t early_lib_normal = PTHREAD_MUTEX_INITIALIZER; /* left locked */
pthread_mutex_t early_lib_recursive;			      /* init'ed here, left at depth 2 */
pthread_mutex_t early_lib_errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP; /* left locked */
int early_lib_status = -1; /* 0 when every call in the constructor behaved */

__attribute__((constructor)) static void early_lib_ctor(void)
{
	static pthread_mutex_t scratch = PTHREAD_MUTEX_INITIALIZER;
	static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
	pthread_mutexattr_t a;
	struct timespec past = {0, 0};
	int bad = 0;
	bad |= pthread_mutex_lock(&scratch) != 0;
	bad |= pthread_mutex_trylock(&scratch) != EBUSY;
	bad |= pthread_cond_signal(&cond) != 0;
	bad |= pthread_cond_timedwait(&cond, &scratch, &past) != ETIMEDOUT;
	bad |= pthread_mutex_unlock(&scratch) != 0;
	bad |= pthread_mutex_timedlock(&scratch, &past) != 0;
	bad |= pthread_mutex_unlock(&scratch) != 0;
	bad |= pthread_mutex_lock(&early_lib_normal) != 0;
	bad |= pthread_mutexattr_init(&a) != 0;
	bad |= pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE) != 0;
	bad |= pthread_mutex_init(&early_lib_recursive, &a) != 0;
	bad |= pthread_mutex_lock(&early_lib_recursive) != 0;
	bad |= pthread_mutex_lock(&early_lib_recursive) != 0;
	bad |= pthread_mutex_lock(&early_lib_errorcheck) != 0;
	bad |= pthread_mutex_lock(&early_lib_errorcheck) != EDEADLK;
	early_lib_status = bad;
}
