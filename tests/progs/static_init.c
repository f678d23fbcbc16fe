/*
 * static_init - mutexes that were never passed to pthread_mutex_init: the
 * static initialisers (PTHREAD_MUTEX_INITIALIZER and the recursive,
 * errorcheck and adaptive _NP ones), a zero-filled mutex (memset, calloc,
 * .bss) and PTHREAD_COND_INITIALIZER. Each must have its type's behaviour
 * and exclude under contention.
 */
#include "check.h"

static pthread_mutex_t s_normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t s_recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t s_errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_mutex_t s_adaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t s_bss; /* zero, as the C standard says */

/* NORMAL behaviour on a mutex that was never initialised. */
static void as_normal(pthread_mutex_t *m)
{
	CHECK_RC(pthread_mutex_trylock(m), 0);
	CHECK_RC(pthread_mutex_trylock(m), EBUSY);
	CHECK_RC(probe(m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	CHECK_RC(probe(m), 0);
	contend(m, 4, 1000);
	CHECK_RC(probe(m), 0);
}

static void normal(void)
{
	/* The very first call on it is a lock, by another thread. */
	CHECK_RC(in_thread(lock_fn, &s_normal), 0);
	CHECK_RC(pthread_mutex_trylock(&s_normal), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&s_normal), 0); /* NORMAL: any thread */
	as_normal(&s_normal);
}

static void recursive(void)
{
	CHECK_RC(pthread_mutex_lock(&s_recursive), 0);
	CHECK_RC(pthread_mutex_lock(&s_recursive), 0);
	CHECK_RC(pthread_mutex_trylock(&s_recursive), 0);
	CHECK_RC(probe(&s_recursive), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&s_recursive), 0);
	CHECK_RC(pthread_mutex_unlock(&s_recursive), 0);
	CHECK_RC(probe(&s_recursive), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&s_recursive), 0);
	CHECK_RC(probe(&s_recursive), 0);
	CHECK_RC(pthread_mutex_unlock(&s_recursive), EPERM);
	contend(&s_recursive, 4, 1000);
}

static void errorcheck(void)
{
	CHECK_RC(pthread_mutex_unlock(&s_errorcheck), EPERM); /* first call: unlock */
	CHECK_RC(pthread_mutex_lock(&s_errorcheck), 0);
	CHECK_RC(pthread_mutex_lock(&s_errorcheck), EDEADLK);
	CHECK_RC(pthread_mutex_trylock(&s_errorcheck), EBUSY);
	CHECK_RC(in_thread(unlock_fn, &s_errorcheck), EPERM);
	CHECK_RC(pthread_mutex_unlock(&s_errorcheck), 0);
	CHECK_RC(pthread_mutex_unlock(&s_errorcheck), EPERM);
	contend(&s_errorcheck, 4, 1000);
}

static void adaptive(void)
{
	as_normal(&s_adaptive);
}

static void bss(void)
{
	as_normal(&s_bss);
}

static void memset_zero(void)
{
	pthread_mutex_t m;
	memset(&m, 0xa5, sizeof m); /* whatever was on the stack before */
	memset(&m, 0, sizeof m);
	as_normal(&m);
	pthread_mutex_t *h = calloc(1, sizeof *h);
	as_normal(h);
	free(h);
}

/* First use of a static mutex by a timed lock. */
static void first_use_timed(void)
{
	static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
	static pthread_mutex_t r = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	static pthread_mutex_t e = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS);
	struct timespec farm = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	CHECK_RC(pthread_mutex_timedlock(&a, &far), 0);
	CHECK_RC(probe(&a), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&a), 0);
	CHECK_RC(pthread_mutex_clocklock(&b, CLOCK_MONOTONIC, &farm), 0);
	CHECK_RC(probe(&b), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&b), 0);
	CHECK_RC(pthread_mutex_timedlock(&r, &far), 0);
	CHECK_RC(pthread_mutex_timedlock(&r, &far), 0);
	CHECK_RC(pthread_mutex_unlock(&r), 0);
	CHECK_RC(probe(&r), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&r), 0);
	CHECK_RC(pthread_mutex_clocklock(&e, CLOCK_REALTIME, &far), 0);
	CHECK_RC(pthread_mutex_clocklock(&e, CLOCK_REALTIME, &far), EDEADLK);
	CHECK_RC(pthread_mutex_unlock(&e), 0);
}

/* Destroy without any other use, then a static initialiser again. */
static void destroy_unused(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CHECK_RC(pthread_mutex_destroy(&m), 0);
	m = (pthread_mutex_t)PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_lock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_destroy(&m), 0);
}

/* PTHREAD_COND_INITIALIZER and a zeroed condvar, with static mutexes. */
static pthread_cond_t s_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t z_cond; /* zero */
struct cv {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	int flag;
};
static void *cv_signaller(void *p)
{
	struct cv *v = p;
	CHECK_RC(pthread_mutex_lock(v->m), 0);
	v->flag = 1;
	CHECK_RC(pthread_cond_signal(v->c), 0);
	CHECK_RC(pthread_mutex_unlock(v->m), 0);
	return NULL;
}
static void cond(void)
{
	static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;
	static pthread_mutex_t m2 = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	struct cv v[2] = {{&m1, &s_cond, 0}, {&m2, &z_cond, 0}};
	for (int i = 0; i < 2; i++) {
		CHECK_RC(pthread_mutex_lock(v[i].m), 0);
		pthread_t t = spawn(cv_signaller, &v[i]);
		while (!v[i].flag)
			CHECK_RC(pthread_cond_wait(v[i].c, v[i].m), 0);
		CHECK_RC(pthread_mutex_unlock(v[i].m), 0);
		join(t);
		struct timespec dl = deadline_in(CLOCK_REALTIME, 5 * MS);
		CHECK_RC(pthread_mutex_lock(v[i].m), 0);
		CHECK_RC(pthread_cond_timedwait(v[i].c, v[i].m, &dl), ETIMEDOUT);
		CHECK_RC(pthread_mutex_unlock(v[i].m), 0);
	}
}

static const struct test_case cases[] = {
    {"normal", normal},
    {"recursive", recursive},
    {"errorcheck", errorcheck},
    {"adaptive", adaptive},
    {"bss", bss},
    {"memset", memset_zero},
    {"first-use-timed", first_use_timed},
    {"destroy-unused", destroy_unused},
    {"cond", cond},
    {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
