/*
 * broken.so - a deliberately broken pthread, preloaded in place of
 * liblockswap to show that the end-to-end tests can fail: a test that passes
 * under it for the broken behaviour cannot detect that bug. BROKEN_DOUBLE
 * chooses the defect:
 *   nolock        mutex lock/trylock/timedlock/clocklock/unlock do nothing
 *   condspurious  cond wait/timedwait/clockwait return at once (a spurious
 *                 wake-up, as from an interrupted futex wait)
 *   condlost      cond signal/broadcast do nothing (lost wake-ups)
 *   condunlocked  cond timedwait/clockwait time out without re-acquiring
 *                 the mutex
 * Any other value, or none, passes everything to glibc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int is(const char *mode)
{
	const char *m = getenv("BROKEN_DOUBLE");
	return m && strcmp(m, mode) == 0;
}

#define NEXT(name, type) ((type)dlsym(RTLD_NEXT, name))

int pthread_mutex_lock(pthread_mutex_t *m)
{
	return is("nolock") ? 0 : NEXT("pthread_mutex_lock", int (*)(pthread_mutex_t *))(m);
}
int pthread_mutex_trylock(pthread_mutex_t *m)
{
	return is("nolock") ? 0 : NEXT("pthread_mutex_trylock", int (*)(pthread_mutex_t *))(m);
}
int pthread_mutex_unlock(pthread_mutex_t *m)
{
	return is("nolock") ? 0 : NEXT("pthread_mutex_unlock", int (*)(pthread_mutex_t *))(m);
}
int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
	return is("nolock") ? 0
			    : NEXT("pthread_mutex_timedlock",
				   int (*)(pthread_mutex_t *, const struct timespec *))(m, t);
}
int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t c, const struct timespec *t)
{
	return is("nolock") ? 0
			    : NEXT("pthread_mutex_clocklock",
				   int (*)(pthread_mutex_t *, clockid_t, const struct timespec *))(m, c, t);
}

static int spurious(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
	sched_yield();
	pthread_mutex_lock(m);
	return 0;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (is("condspurious"))
		return spurious(m);
	return NEXT("pthread_cond_wait", int (*)(pthread_cond_t *, pthread_mutex_t *))(c, m);
}
int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	if (is("condspurious"))
		return spurious(m);
	int rc = NEXT("pthread_cond_timedwait",
		      int (*)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *))(c, m, t);
	if (rc == ETIMEDOUT && is("condunlocked"))
		pthread_mutex_unlock(m);
	return rc;
}
int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t k, const struct timespec *t)
{
	if (is("condspurious"))
		return spurious(m);
	int rc = NEXT("pthread_cond_clockwait", int (*)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
							const struct timespec *))(c, m, k, t);
	if (rc == ETIMEDOUT && is("condunlocked"))
		pthread_mutex_unlock(m);
	return rc;
}
int pthread_cond_signal(pthread_cond_t *c)
{
	return is("condlost") ? 0 : NEXT("pthread_cond_signal", int (*)(pthread_cond_t *))(c);
}
int pthread_cond_broadcast(pthread_cond_t *c)
{
	return is("condlost") ? 0 : NEXT("pthread_cond_broadcast", int (*)(pthread_cond_t *))(c);
}
