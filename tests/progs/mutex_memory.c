/*
 * mutex_memory - where a pthread_mutex_t lives and how programs treat its
 * memory: copied by value while unlocked, freed and the memory reused
 * without pthread_mutex_destroy, 100,000 of them, a thread holding hundreds
 * at once, hundreds of threads created and exited. (Use before the
 * library's constructor is early.c.)
 *
 * The repetitions are sized() (check.h, TEST_ITERS_PERCENT; all of them
 * when it is unset): reuse's 1,000 rounds (and 20 on a stack buffer), the
 * 100,000 mutexes of many and many-held, the 400 threads of threads (and
 * their detached ones). Every case takes all its kinds of step at any
 * size; the size is how often.
 */
#include "check.h"

/* The type-specific behaviour that must survive copies and reuse. */
static void expect_type(pthread_mutex_t *m, int type)
{
	CHECK_RC(pthread_mutex_lock(m), 0);
	switch (type) {
	case PTHREAD_MUTEX_RECURSIVE:
		CHECK_RC(pthread_mutex_trylock(m), 0);
		CHECK_RC(pthread_mutex_unlock(m), 0);
		break;
	case PTHREAD_MUTEX_ERRORCHECK:
		CHECK_RC(pthread_mutex_lock(m), EDEADLK);
		CHECK_RC(in_thread(unlock_fn, m), EPERM);
		break;
	default:
		CHECK_RC(pthread_mutex_trylock(m), EBUSY);
	}
	CHECK_RC(probe(m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	CHECK_RC(probe(m), 0);
}

static const int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
			    PTHREAD_MUTEX_ADAPTIVE_NP};

/* Copied by value while unlocked: the copy is an independent unlocked mutex
 * of the same type, and so is the original. */
static void copy(void)
{
	for (int i = 0; i < 4; i++) {
		pthread_mutex_t a, b, c;
		init_type(&a, types[i]);
		contend(&a, 4, 500); /* used, by several threads, before the copy */
		b = a;
		CHECK_RC(pthread_mutex_lock(&a), 0);
		CHECK_RC(probe(&b), 0);
		CHECK_RC(pthread_mutex_lock(&b), 0);
		CHECK_RC(probe(&a), EBUSY);
		CHECK_RC(pthread_mutex_unlock(&a), 0);
		CHECK_RC(probe(&a), 0);
		CHECK_RC(probe(&b), EBUSY);
		CHECK_RC(pthread_mutex_unlock(&b), 0);
		expect_type(&b, types[i]);
		contend(&b, 4, 500);
		contend(&a, 4, 500);
		/* Copy a static initialiser never used, and copy back over. */
		c = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
		b = c;
		expect_type(&b, PTHREAD_MUTEX_NORMAL);
		a = b;
		expect_type(&a, PTHREAD_MUTEX_NORMAL);
		contend(&a, 3, 300);
		CHECK_RC(pthread_mutex_destroy(&a), 0);
		CHECK_RC(pthread_mutex_destroy(&b), 0);
	}
	/* memcpy into a heap block, the original goes out of scope. */
	pthread_mutex_t *h = malloc(sizeof *h);
	{
		pthread_mutex_t s;
		init_type(&s, PTHREAD_MUTEX_ERRORCHECK);
		contend(&s, 2, 200);
		memcpy(h, &s, sizeof s);
		memset(&s, 0x5a, sizeof s);
	}
	expect_type(h, PTHREAD_MUTEX_ERRORCHECK);
	contend(h, 4, 500);
	free(h);
}

/* Freed (or going out of scope) without destroy, the memory reused: first
 * for other data, then for a new mutex of another type. */
static void reuse(void)
{
	int rounds = sized(1000);
	for (int i = 0; i < rounds; i++) {
		int type = types[i % 4];
		pthread_mutex_t *m = malloc(sizeof *m);
		switch (i % 3) {
		case 0:
			init_type(m, type);
			break;
		case 1: { /* the static initialiser of that type */
			static const pthread_mutex_t inits[] = {
			    PTHREAD_MUTEX_INITIALIZER, PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
			    PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP, PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP};
			*m = inits[i % 4];
			break;
		}
		default: /* zeroed: a normal mutex */
			memset(m, 0, sizeof *m);
			type = PTHREAD_MUTEX_NORMAL;
		}
		expect_type(m, type);
		if (i % 100 == 0)
			contend(m, 3, 200);
		if (i % 7 == 0) { /* last seen locked by another thread */
			CHECK_RC(in_thread(lock_fn, m), 0);
			CHECK_RC(in_thread(unlock_fn, m),
				 type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP ? 0
												   : EPERM);
			if (type != PTHREAD_MUTEX_NORMAL && type != PTHREAD_MUTEX_ADAPTIVE_NP) {
				/* Owned by an exited thread: abandon it locked. */
				free(m);
				continue;
			}
		}
		free(m); /* no pthread_mutex_destroy */
		/* The block is reused for something else before the next mutex. */
		unsigned char *junk = malloc(sizeof(pthread_mutex_t));
		memset(junk, i & 0xff, sizeof(pthread_mutex_t));
		free(junk);
	}

	/* The same on a stack buffer, mutexes at varying offsets: 20 rounds
	 * (sized with the rounds above, at least 4: every offset then holds
	 * a mutex of each type in turn). */
	_Alignas(64) unsigned char buf[64 * sizeof(pthread_mutex_t)];
	int brounds = rounds / 50 < 4 ? 4 : rounds / 50;
	for (int round = 0; round < brounds; round++) {
		memset(buf, round * 37, sizeof buf);
		for (int k = 0; k < 60; k++) {
			pthread_mutex_t *m =
			    (pthread_mutex_t *)(buf + ((k + round) % 60) * sizeof(pthread_mutex_t));
			if (k % 2)
				init_type(m, types[(k + round) % 4]);
			else
				*m = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
			expect_type(m, k % 2 ? types[(k + round) % 4] : PTHREAD_MUTEX_NORMAL);
		}
		pthread_mutex_t *m = (pthread_mutex_t *)(buf + round * sizeof(pthread_mutex_t));
		contend(m, 3, 100);
	}
}

enum { MANY = 100000 };
static int many_n = MANY; /* sized(MANY); 7919, the sweeps' stride, is prime: a permutation */
static pthread_mutex_t *many_m;
static int many_count[MANY];
static void *many_busy_fn(void *p)
{
	(void)p;
	for (int i = 0; i < many_n; i++)
		CHECK_RC(pthread_mutex_trylock(&many_m[i]), EBUSY);
	return NULL;
}
static void *many_sweep_fn(void *p)
{
	int off = (int)(intptr_t)p;
	for (int k = 0; k < many_n; k++) {
		int i = (k * 7919 + off) % many_n;
		CHECK_RC(pthread_mutex_lock(&many_m[i]), 0);
		many_count[i]++;
		CHECK_RC(pthread_mutex_unlock(&many_m[i]), 0);
	}
	return NULL;
}
static void many_init(void)
{
	many_n = sized(MANY);
	memset(many_count, 0, sizeof many_count); /* many and many-held run in one process too */
	many_m = calloc(many_n, sizeof *many_m);  /* odd ones stay zeroed */
	for (int i = 0; i < many_n; i += 2)
		init_type(&many_m[i], i % 4 ? PTHREAD_MUTEX_NORMAL : PTHREAD_MUTEX_ERRORCHECK);
}
static void many_fini(int per_mutex)
{
	for (int i = 0; i < many_n; i++) {
		CHECK_EQ(many_count[i], per_mutex);
		CHECK_RC(pthread_mutex_destroy(&many_m[i]), 0);
	}
	free(many_m);
}
static void many_sweep(void)
{
	pthread_t t[4];
	for (int k = 0; k < 4; k++)
		t[k] = spawn(many_sweep_fn, (void *)(intptr_t)(k * 25013));
	for (int k = 0; k < 4; k++)
		join(t[k]);
}
/* 100,000 mutexes, each locked by one thread, then swept by 4 threads in
 * different orders. */
static void many(void)
{
	many_init();
	for (int i = 0; i < many_n; i++) {
		CHECK_RC(pthread_mutex_lock(&many_m[i]), 0);
		CHECK_RC(pthread_mutex_unlock(&many_m[i]), 0);
	}
	many_sweep();
	many_fini(4);
}
/* The same 100,000 mutexes all held by one thread at once (glibc needs
 * nothing per held mutex; a queue lock needs a node for each). */
static void many_held(void)
{
	many_init();
	for (int i = 0; i < many_n; i++)
		CHECK_RC(pthread_mutex_lock(&many_m[i]), 0);
	join(spawn(many_busy_fn, NULL));
	for (int i = 0; i < many_n; i++)
		CHECK_RC(pthread_mutex_unlock(&many_m[i]), 0);
	many_sweep();
	many_fini(4);
}

/* Threads each holding hundreds of mutexes at once, all taking them in the
 * same order (so they queue behind each other), releasing in reverse or in
 * the same order. */
enum { NEST = 500, NEST_THREADS = 4, NEST_ROUNDS = 4 };
static pthread_mutex_t nest_m[NEST];
static int nest_count[NEST];
static void *nest_fn(void *p)
{
	(void)p;
	for (int r = 0; r < NEST_ROUNDS; r++) {
		for (int i = 0; i < NEST; i++) {
			CHECK_RC(pthread_mutex_lock(&nest_m[i]), 0);
			nest_count[i]++;
		}
		for (int i = 0; i < NEST; i++)
			CHECK_RC(pthread_mutex_unlock(&nest_m[r % 2 ? i : NEST - 1 - i]), 0);
	}
	return NULL;
}
static void nested(void)
{
	for (int i = 0; i < NEST; i++)
		init_type(&nest_m[i], types[i % 4]);
	pthread_t t[NEST_THREADS];
	for (int k = 0; k < NEST_THREADS; k++)
		t[k] = spawn(nest_fn, NULL);
	for (int k = 0; k < NEST_THREADS; k++)
		join(t[k]);
	for (int i = 0; i < NEST; i++) {
		CHECK_EQ(nest_count[i], NEST_THREADS * NEST_ROUNDS);
		CHECK_RC(probe(&nest_m[i]), 0);
	}
}

/* Hundreds of threads created and exited, a few at a time, each using a
 * shared mutex under contention and one of its own; some detached. From
 * the second batch on, every thread runs on a stack and TLS block glibc
 * kept from an exited one, and every lock's per-thread state is set up
 * and torn down again: 50 batches (405 threads, sized(400) in batches of
 * 8 and one detached in ten batches) do that 50 times over; the 250 of
 * before took five times the processor time for the same paths. */
enum { BATCH = 8, THREADS = 400, PER_THREAD = 20 };
static pthread_mutex_t shared_m = PTHREAD_MUTEX_INITIALIZER;
static long shared_count;
static atomic_int detached_done;
static void *churn_fn(void *p)
{
	pthread_mutex_t own;
	init_type(&own, PTHREAD_MUTEX_ERRORCHECK);
	for (int i = 0; i < PER_THREAD; i++) {
		CHECK_RC(pthread_mutex_lock(&own), 0);
		CHECK_RC(pthread_mutex_lock(&shared_m), 0);
		shared_count++;
		CHECK_RC(pthread_mutex_unlock(&shared_m), 0);
		CHECK_RC(pthread_mutex_unlock(&own), 0);
	}
	if (p)
		atomic_fetch_add_explicit(&detached_done, 1, memory_order_release);
	return NULL;
}
static void threads(void)
{
	int detached = 0, batches = sized(THREADS) / BATCH;
	for (int b = 0; b < batches; b++) {
		pthread_t t[BATCH];
		for (int k = 0; k < BATCH; k++)
			t[k] = spawn(churn_fn, NULL);
		if (b % 10 == 0) {
			pthread_t d = spawn(churn_fn, (void *)1);
			CHECK_RC(pthread_detach(d), 0);
			detached++;
		}
		for (int k = 0; k < BATCH; k++)
			join(t[k]);
	}
	await_at_least(&detached_done, detached);
	CHECK_RC(pthread_mutex_lock(&shared_m), 0);
	CHECK_EQ(shared_count, (long)(BATCH * batches + detached) * PER_THREAD);
	CHECK_RC(pthread_mutex_unlock(&shared_m), 0);
}

static const struct test_case cases[] = {
    {"copy", copy},	{"reuse", reuse},     {"many", many}, {"many-held", many_held},
    {"nested", nested}, {"threads", threads}, {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
