/*
 * misuse - what glibc 2.36 does with the misuses it tolerates: an unlock of
 * an unlocked mutex, an unlock too many, a condition wait on a mutex the
 * caller does not hold (issue 25).
 *
 *   NORMAL (static initialiser, zeroed memory, default and explicit
 *   attributes, ADAPTIVE_NP): the unlock returns 0 and the mutex goes on
 *   working: exclusion, trylock, and a thread blocked in lock gets it.
 *   ERRORCHECK and RECURSIVE: EPERM, and nothing changes.
 *   A condition wait on a NORMAL mutex that is not held waits as usual and
 *   returns (ETIMEDOUT at its deadline, 0 when signalled) holding the
 *   mutex; on an ERRORCHECK or RECURSIVE one it returns EPERM at once, the
 *   mutex not held.
 *
 * Not checked: pthread_mutex_destroy after such a misuse. glibc's then
 * returns EBUSY for ever (an unlock of an unlocked mutex, or a condition
 * wait on one, leaves its user count __nusers off by one); lockswap's
 * returns 0.
 */
#include "check.h"

#define COUNT 1000

/* The NORMAL-like mutexes a program can have. */
enum { STATIC, ZEROED, DEFAULT_ATTR, NORMAL_TYPE, DEFAULT_TYPE, ADAPTIVE, NKINDS };

static void make(pthread_mutex_t *m, int kind)
{
	static const pthread_mutex_t init = PTHREAD_MUTEX_INITIALIZER;
	switch (kind) {
	case STATIC:
		*m = init;
		break;
	case ZEROED:
		memset(m, 0, sizeof *m);
		break;
	case DEFAULT_ATTR:
		CHECK_RC(pthread_mutex_init(m, NULL), 0);
		break;
	case NORMAL_TYPE:
		init_type(m, PTHREAD_MUTEX_NORMAL);
		break;
	case DEFAULT_TYPE:
		init_type(m, PTHREAD_MUTEX_DEFAULT);
		break;
	default:
		init_type(m, PTHREAD_MUTEX_ADAPTIVE_NP);
		break;
	}
}

/* ---- "goes on working" ---- */

struct shared {
	pthread_mutex_t *m;
	long counter;
	atomic_int inside;
};

static void *adder(void *p)
{
	struct shared *s = p;
	for (int i = 0; i < COUNT; i++) {
		CHECK_RC(pthread_mutex_lock(s->m), 0);
		CHECK_EQ(atomic_fetch_add(&s->inside, 1), 0);
		s->counter++;
		atomic_fetch_sub(&s->inside, 1);
		CHECK_RC(pthread_mutex_unlock(s->m), 0);
	}
	return NULL;
}

static void works(pthread_mutex_t *m)
{
	CHECK_RC(probe(m), 0); /* free */
	CHECK_RC(pthread_mutex_lock(m), 0);
	CHECK_RC(probe(m), EBUSY); /* held */
	CHECK_RC(pthread_mutex_unlock(m), 0);
	struct shared s = {.m = m};
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		t[i] = spawn(adder, &s);
	for (int i = 0; i < 3; i++)
		join(t[i]);
	CHECK_EQ(s.counter, 3 * COUNT);
	CHECK_RC(probe(m), 0);
}

/* ---- NORMAL ---- */

static void normal_unlocked(void)
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		make(&m, k);

		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		works(&m);
	}
}

static void normal_twice(void)
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		make(&m, k);

		CHECK_RC(pthread_mutex_lock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		works(&m);
		CHECK_RC(pthread_mutex_lock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		works(&m);
	}
}

/* A thread blocked in lock when the holder unlocks (a hand-over, for a
 * queue lock), then the former holder unlocks twice more. */
struct blocked {
	pthread_mutex_t *m;
	atomic_int started, got;
};

static void *blocked_fn(void *p)
{
	struct blocked *b = p;
	atomic_store(&b->started, 1);
	CHECK_RC(pthread_mutex_lock(b->m), 0);
	atomic_store(&b->got, 1);
	CHECK_RC(pthread_mutex_unlock(b->m), 0);
	return NULL;
}

static void normal_after_handover(void)
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		make(&m, k);

		struct blocked b = {.m = &m};
		CHECK_RC(pthread_mutex_lock(&m), 0);
		pthread_t t = spawn(blocked_fn, &b);
		await_at_least(&b.started, 1);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		join(t);
		CHECK_EQ(atomic_load(&b.got), 1);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		works(&m);
	}
}

/* ---- ERRORCHECK, RECURSIVE ---- */

static void owners_eperm(void)
{
	static const int types[] = {PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_RECURSIVE};
	for (int i = 0; i < 2; i++) {
		pthread_mutex_t m;
		init_type(&m, types[i]);
		CHECK_RC(pthread_mutex_unlock(&m), EPERM);
		CHECK_RC(pthread_mutex_lock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), EPERM);
		CHECK_RC(pthread_mutex_unlock(&m), EPERM);
		works(&m);
		CHECK_RC(pthread_mutex_destroy(&m), 0);
	}
}

/* ---- condition waits on a mutex the caller does not hold ---- */

static void cond_normal_timeout(void)
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		pthread_cond_t c = PTHREAD_COND_INITIALIZER;
		make(&m, k);

		struct timespec ts = deadline_in(CLOCK_REALTIME, 2000000);
		CHECK_RC(pthread_cond_timedwait(&c, &m, &ts), ETIMEDOUT);
		CHECK_RC(probe(&m), EBUSY); /* it returns holding the mutex */
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		works(&m);
		CHECK_RC(pthread_cond_destroy(&c), 0);
	}
}

struct waiter {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	atomic_int done;
	int rc, held;
};

static void *waiter_fn(void *p)
{
	struct waiter *w = p;
	w->rc = pthread_cond_wait(w->c, w->m);
	w->held = probe(w->m);
	if (w->rc == 0)
		CHECK_RC(pthread_mutex_unlock(w->m), 0);
	atomic_store(&w->done, 1);
	return NULL;
}

static void cond_normal_signal(void)
{
	pthread_mutex_t m;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	make(&m, DEFAULT_ATTR);
	struct waiter w = {.m = &m, .c = &c};
	pthread_t t = spawn(waiter_fn, &w);
	/* a signal before the wait is lost: signal until it returns */
	while (!atomic_load(&w.done)) {
		CHECK_RC(pthread_cond_signal(&c), 0);
		sched_yield();
	}
	join(t);
	CHECK_RC(w.rc, 0);
	CHECK_RC(w.held, EBUSY); /* it returned holding the mutex */
	works(&m);
	CHECK_RC(pthread_cond_destroy(&c), 0);
}

static void cond_owners_eperm(void)
{
	static const int types[] = {PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_RECURSIVE};
	for (int i = 0; i < 2; i++) {
		pthread_mutex_t m;
		pthread_cond_t c = PTHREAD_COND_INITIALIZER;
		init_type(&m, types[i]);
		struct timespec ts = deadline_in(CLOCK_REALTIME, FAR_NS);
		CHECK_RC(pthread_cond_wait(&c, &m), EPERM);
		CHECK_RC(pthread_cond_timedwait(&c, &m, &ts), EPERM);
		CHECK_RC(probe(&m), 0); /* not held */
		works(&m);
		CHECK_RC(pthread_mutex_destroy(&m), 0);
		CHECK_RC(pthread_cond_destroy(&c), 0);
	}
}

static const struct test_case cases[] = {
    {"normal-unlocked", normal_unlocked},
    {"normal-twice", normal_twice},
    {"normal-after-handover", normal_after_handover},
    {"owners-eperm", owners_eperm},
    {"cond-normal-timeout", cond_normal_timeout},
    {"cond-normal-signal", cond_normal_signal},
    {"cond-owners-eperm", cond_owners_eperm},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
