/*
 * spin_semantics - pthread_spin_* as glibc 2.36 gives it: init stores the
 * unlocked state whatever pshared says, lock/trylock/unlock return 0 and
 * EBUSY, an unlock of a free spinlock is harmless, destroy changes
 * nothing, and the lock excludes under contention. (No case uses a zeroed
 * spinlock without init: glibc's x86-64 spinlock is free at 1, so zero is
 * a HELD spinlock there, while lockswap's algorithms take zero as free.) Every case passes natively
 * (tests/spin.bats); `all` runs them all in one process.
 */
#include "check.h"

static void *spin_try_fn(void *p)
{
	int r = pthread_spin_trylock(p);
	if (r == 0)
		CHECK_RC(pthread_spin_unlock(p), 0);
	return (void *)(intptr_t)r;
}
static int other_try(pthread_spinlock_t *s)
{
	return in_thread(spin_try_fn, (void *)s);
}

static void usable(pthread_spinlock_t *s)
{
	CHECK_RC(pthread_spin_lock(s), 0);
	CHECK_RC(pthread_spin_trylock(s), EBUSY); /* the holder too: no recursion */
	CHECK_RC(other_try(s), EBUSY);
	CHECK_RC(pthread_spin_unlock(s), 0);
	CHECK_RC(other_try(s), 0);
	CHECK_RC(pthread_spin_trylock(s), 0);
	CHECK_RC(other_try(s), EBUSY);
	CHECK_RC(pthread_spin_unlock(s), 0);
}

static void init(void)
{
	pthread_spinlock_t s;
	CHECK_RC(pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE), 0);
	usable(&s);
	CHECK_RC(pthread_spin_destroy(&s), 0);
	CHECK_RC(pthread_spin_init(&s, PTHREAD_PROCESS_SHARED), 0);
	usable(&s);
	CHECK_RC(pthread_spin_destroy(&s), 0);
	/* init stores the unlocked state, even over a held lock */
	CHECK_RC(pthread_spin_lock(&s), 0);
	CHECK_RC(pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE), 0);
	CHECK_RC(other_try(&s), 0);
}

/* Misuse glibc tolerates (issue 25): an unlock of a free spinlock, a
 * double unlock, an unlock by another thread, unlocks too many after a
 * hand-over to a thread blocked in pthread_spin_lock (which took the lock
 * and released it); destroy of a held one. */
static void *spin_unlock_fn(void *p)
{
	return (void *)(intptr_t)pthread_spin_unlock(p);
}
struct spin_blocked {
	pthread_spinlock_t *s;
	atomic_int started, got;
};
static void *spin_blocked_fn(void *p)
{
	struct spin_blocked *b = p;
	atomic_store(&b->started, 1);
	CHECK_RC(pthread_spin_lock(b->s), 0);
	atomic_store(&b->got, 1);
	CHECK_RC(pthread_spin_unlock(b->s), 0);
	return NULL;
}
static void misuse(void)
{
	pthread_spinlock_t s;
	CHECK_RC(pthread_spin_init(&s, 0), 0);
	CHECK_RC(pthread_spin_unlock(&s), 0);
	usable(&s);
	CHECK_RC(pthread_spin_lock(&s), 0);
	CHECK_RC(pthread_spin_unlock(&s), 0);
	CHECK_RC(pthread_spin_unlock(&s), 0);
	usable(&s);
	CHECK_RC(pthread_spin_lock(&s), 0);
	CHECK_RC(in_thread(spin_unlock_fn, (void *)&s), 0); /* glibc: any thread releases */
	CHECK_RC(other_try(&s), 0);
	usable(&s);
	struct spin_blocked b = {.s = &s};
	CHECK_RC(pthread_spin_lock(&s), 0);
	pthread_t t = spawn(spin_blocked_fn, &b);
	await_at_least(&b.started, 1);
	CHECK_RC(pthread_spin_unlock(&s), 0);
	join(t);
	CHECK_EQ(atomic_load(&b.got), 1);
	CHECK_RC(pthread_spin_unlock(&s), 0);
	CHECK_RC(pthread_spin_unlock(&s), 0);
	usable(&s);
	CHECK_RC(pthread_spin_lock(&s), 0);
	CHECK_RC(pthread_spin_destroy(&s), 0);
	CHECK_RC(other_try(&s), EBUSY);
	CHECK_RC(pthread_spin_unlock(&s), 0);
	usable(&s);
}

struct contend {
	pthread_spinlock_t s;
	long counter;
	atomic_int inside;
	int iters; /* 5000 a thread, sized (check.h) */
};
static void *contend_fn(void *p)
{
	struct contend *c = p;
	for (int i = 0; i < c->iters; i++) {
		if (i % 4 == 0) {
			while (pthread_spin_trylock(&c->s) == EBUSY)
				sched_yield();
		} else {
			CHECK_RC(pthread_spin_lock(&c->s), 0);
		}
		critical_section(&c->inside, &c->counter);
		CHECK_RC(pthread_spin_unlock(&c->s), 0);
	}
	return NULL;
}
static void exclusion(void)
{
	struct contend c = {.counter = 0, .iters = sized(5000)};
	CHECK_RC(pthread_spin_init(&c.s, 0), 0);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		t[i] = spawn(contend_fn, &c);
	for (int i = 0; i < 4; i++)
		join(t[i]);
	CHECK_EQ(c.counter, 4L * c.iters);
	CHECK_RC(pthread_spin_destroy(&c.s), 0);
}

static const struct test_case cases[] = {
    {"init", init},
    {"misuse", misuse},
    {"exclusion", exclusion},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "all")) {
		for (const struct test_case *c = cases; c->name; c++)
			c->fn();
		return 0;
	}
	return run_case(cases, argc, argv);
}
