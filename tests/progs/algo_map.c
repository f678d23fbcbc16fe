/*
 * algo_map - mutexes created in known places, for LOCKSWAP_ALGO_MAP
 * (tests/algo-map.bats): the test names these places in rules and reads
 * which rule chose how many mutexes (LOCKSWAP_VERBOSE's report at exit, and
 * the profile). Every case also checks mutual exclusion on the mutexes it
 * makes, so a wrong binding that breaks a lock fails here too. Natively
 * (glibc) every case passes and prints the same.
 *
 *   algo_map functions     HOT mutexes from make_hot (pthread_mutex_init),
 *                          COLD from make_cold; both static functions
 *   algo_map static        statically initialised mutexes, first used in
 *                          use_hot and use_cold
 *   algo_map lines         prints "line: N" for the line of its one
 *                          pthread_mutex_init, then uses that mutex
 *   algo_map module LIB    a dlopen'ed library (tests/doubles-map/) makes
 *                          its mutexes; then the program makes one of its own
 *   algo_map fork          make_hot before fork; in the child, make_hot again
 *                          and a static mutex's first use in use_cold
 *   algo_map race          RACE static mutexes, each first used by two
 *                          threads at once, one from use_hot, one from use_cold
 *   algo_map cond          one condvar used in turn with a mutex from make_hot
 *                          and one from make_cold: signal, broadcast, timeout
 *   algo_map many [N]      N mutexes (default 100000) from make_one, each
 *                          initialised, locked, unlocked and destroyed
 *   algo_map timeouts      HOT mutexes from make_hot, COLD from make_cold,
 *                          each held by the main thread while another
 *                          thread's timedlock of it times out: every one
 *                          contended, whatever the timing (for profiles)
 *   algo_map queues [N]    one mutex from make_hot, one from make_cold; 4
 *                          threads each make N acquisitions (default 1500)
 *                          of either, by lock, trylock or a timedlock of
 *                          0-20 us that may time out, now and then yielding
 *                          inside: two queue locks' nodes in one process
 *                          (mapped to two algorithms that take queue
 *                          nodes, the pool's classes keep them apart)
 */
#include "check.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <sys/wait.h>

#define HOT 3
#define COLD 5
#define RACE 64
#define THREADS 4
#define ROUNDS 500

static pthread_mutex_t hot[HOT], cold[COLD];

/* The n mutexes of a set, each locked in turn by THREADS threads, ROUNDS
 * times, each guarding a counter of its own: the counts are exact only if
 * each mutex excludes. */
#define SET_MAX RACE
static long counts[SET_MAX];
struct work {
	pthread_mutex_t *m;
	int n;
};

static void *hammer_fn(void *p)
{
	struct work *w = p;
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < w->n; i++) {
			CHECK_RC(pthread_mutex_lock(&w->m[i]), 0);
			long c = counts[i];
			if (r % 64 == 0)
				sched_yield();
			counts[i] = c + 1;
			CHECK_RC(pthread_mutex_unlock(&w->m[i]), 0);
		}
	return NULL;
}

static void hammer(pthread_mutex_t *m, int n)
{
	struct work w = {m, n};
	pthread_t t[THREADS];
	CHECK(n <= SET_MAX);
	memset(counts, 0, sizeof counts);
	for (int i = 0; i < THREADS; i++)
		t[i] = spawn(hammer_fn, &w);
	for (int i = 0; i < THREADS; i++)
		join(t[i]);
	for (int i = 0; i < n; i++)
		CHECK_EQ(counts[i], (long)THREADS * ROUNDS);
}

static __attribute__((noinline)) void make_hot(pthread_mutex_t *m, int n)
{
	for (int i = 0; i < n; i++)
		CHECK_RC(pthread_mutex_init(&m[i], NULL), 0);
}

static __attribute__((noinline)) void make_cold(pthread_mutex_t *m, int n)
{
	for (int i = 0; i < n; i++)
		CHECK_RC(pthread_mutex_init(&m[i], NULL), 0);
}

static void functions(void)
{
	make_hot(hot, HOT);
	make_cold(cold, COLD);
	hammer(hot, HOT);
	hammer(cold, COLD);
	for (int i = 0; i < HOT; i++)
		CHECK_RC(pthread_mutex_destroy(&hot[i]), 0);
	for (int i = 0; i < COLD; i++)
		CHECK_RC(pthread_mutex_destroy(&cold[i]), 0);
}

static pthread_mutex_t s_hot[HOT] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
				     PTHREAD_MUTEX_INITIALIZER};
static pthread_mutex_t s_cold[COLD]; /* zeroed memory */

static __attribute__((noinline)) void use_hot(pthread_mutex_t *m)
{
	CHECK_RC(pthread_mutex_lock(m), 0);
	CHECK_RC(pthread_mutex_unlock(m), 0);
}

/* first use by trylock (try) or lock */
static __attribute__((noinline)) void use_cold(pthread_mutex_t *m, bool try)
{
	CHECK_RC(try ? pthread_mutex_trylock(m) : pthread_mutex_lock(m), 0);
	CHECK_RC(pthread_mutex_unlock(m), 0);
}

static void statics(void)
{
	for (int i = 0; i < HOT; i++)
		use_hot(&s_hot[i]);
	for (int i = 0; i < COLD; i++)
		use_cold(&s_cold[i], true);
	hammer(s_hot, HOT);
	hammer(s_cold, COLD);
}

static void lines(void)
{
	pthread_mutex_t m;
	printf("line: %d\n", __LINE__ + 1);
	CHECK_RC(pthread_mutex_init(&m, NULL), 0);
	hammer(&m, 1);
	CHECK_RC(pthread_mutex_destroy(&m), 0);
}

static const char *lib;
static void module(void)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		FAIL("dlopen %s: %s", lib, dlerror());
	pthread_mutex_t *(*made)(int *) = (pthread_mutex_t * (*)(int *)) dlsym(h, "algo_map_dl_make");
	CHECK(made != NULL);
	int n;
	pthread_mutex_t *m = made(&n);
	hammer(m, n);
	make_hot(hot, 1);
	hammer(hot, 1);
}

static pthread_mutex_t f_static = PTHREAD_MUTEX_INITIALIZER;
static void forked(void)
{
	make_hot(hot, 1);
	hammer(hot, 1);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		make_hot(hot + 1, 2);
		use_cold(&f_static, true);
		hammer(hot, 3);
		hammer(&f_static, 1);
		exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	hammer(hot, 1);
}

static pthread_mutex_t r_static[RACE];
static pthread_barrier_t bar;
static void *race_hot(void *p)
{
	(void)p;
	for (int i = 0; i < RACE; i++) {
		pthread_barrier_wait(&bar);
		use_hot(&r_static[i]);
	}
	return NULL;
}

static void *race_cold(void *p)
{
	(void)p;
	for (int i = 0; i < RACE; i++) {
		pthread_barrier_wait(&bar);
		use_cold(&r_static[i], false);
	}
	return NULL;
}

static void race(void)
{
	pthread_barrier_init(&bar, NULL, 2);
	pthread_t a = spawn(race_hot, NULL), b = spawn(race_cold, NULL);
	join(a);
	join(b);
	hammer(r_static, RACE);
}

/* CLOCK_REALTIME 1 ms from now: a deadline for timed waits that time out. */
static struct timespec in_1ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn;
static void *cond_fn(void *p)
{
	pthread_mutex_t *m = p;
	CHECK_RC(pthread_mutex_lock(m), 0);
	turn++;
	CHECK_RC(pthread_cond_signal(&cv), 0);
	while (turn % 2)
		CHECK_RC(pthread_cond_wait(&cv, m), 0);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	return NULL;
}

/* The main thread waits with m while a thread signals it, holding m. */
static void cond_round(pthread_mutex_t *m)
{
	CHECK_RC(pthread_mutex_lock(m), 0);
	int at = turn;
	pthread_t t = spawn(cond_fn, m);
	while (turn == at)
		CHECK_RC(pthread_cond_wait(&cv, m), 0);
	turn++;
	CHECK_RC(pthread_cond_broadcast(&cv), 0);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	join(t);
	struct timespec ts = in_1ms();
	CHECK_RC(pthread_mutex_lock(m), 0);
	CHECK_RC(pthread_cond_timedwait(&cv, m, &ts), ETIMEDOUT);
	CHECK_RC(pthread_mutex_unlock(m), 0);
}

static void cond(void)
{
	make_hot(hot, 1);
	make_cold(cold, 1);
	for (int i = 0; i < 20; i++) {
		cond_round(&hot[0]);
		cond_round(&cold[0]);
	}
	CHECK_RC(pthread_mutex_destroy(&hot[0]), 0);
	CHECK_RC(pthread_mutex_destroy(&cold[0]), 0);
	CHECK_RC(pthread_cond_destroy(&cv), 0);
}

static long many_n = 100000;
static __attribute__((noinline)) void make_one(pthread_mutex_t *m)
{
	CHECK_RC(pthread_mutex_init(m, NULL), 0);
}

static void many(void)
{
	for (long i = 0; i < many_n; i++) {
		pthread_mutex_t m;
		make_one(&m);
		CHECK_RC(pthread_mutex_lock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_destroy(&m), 0);
	}
}

static void *timeout_fn(void *p)
{
	struct timespec ts = in_1ms();
	return (void *)(intptr_t)pthread_mutex_timedlock(p, &ts);
}

static void timeouts(void)
{
	make_hot(hot, HOT);
	make_cold(cold, COLD);
	for (int i = 0; i < HOT + COLD; i++) {
		pthread_mutex_t *m = i < HOT ? &hot[i] : &cold[i - HOT];
		CHECK_RC(pthread_mutex_lock(m), 0);
		CHECK_EQ(in_thread(timeout_fn, m), ETIMEDOUT);
		CHECK_RC(pthread_mutex_unlock(m), 0);
	}
}

static int queue_iters = 1500;
static long queue_counts[2], queue_got[2];

static void *queue_fn(void *p)
{
	unsigned seed = (unsigned)(uintptr_t)p;
	for (int i = 0; i < queue_iters; i++) {
		int k = rand_r(&seed) & 1, how = rand_r(&seed) % 3, rc;
		pthread_mutex_t *m = k ? &cold[0] : &hot[0];
		if (how == 0)
			rc = pthread_mutex_lock(m);
		else if (how == 1)
			while ((rc = pthread_mutex_trylock(m)) == EBUSY)
				sched_yield();
		else {
			struct timespec ts = deadline_in(CLOCK_REALTIME, rand_r(&seed) % 20000);
			rc = pthread_mutex_timedlock(m, &ts);
			if (rc == ETIMEDOUT)
				continue;
		}
		CHECK_RC(rc, 0);
		long v = queue_counts[k];
		if (rand_r(&seed) % 16 == 0)
			sched_yield();
		queue_counts[k] = v + 1;
		__atomic_fetch_add(&queue_got[k], 1, __ATOMIC_RELAXED);
		CHECK_RC(pthread_mutex_unlock(m), 0);
	}
	return NULL;
}

static void queues(void)
{
	make_hot(hot, 1);
	make_cold(cold, 1);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		t[i] = spawn(queue_fn, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < THREADS; i++)
		join(t[i]);
	/* queue_got counts atomically: equal unless two threads overlapped
	 * inside (the plain counter lost an update) */
	CHECK_EQ(queue_counts[0], queue_got[0]);
	CHECK_EQ(queue_counts[1], queue_got[1]);
	CHECK_RC(pthread_mutex_destroy(&hot[0]), 0);
	CHECK_RC(pthread_mutex_destroy(&cold[0]), 0);
}

static const struct test_case cases[] = {{"functions", functions},
					 {"static", statics},
					 {"lines", lines},
					 {"module", module},
					 {"fork", forked},
					 {"race", race},
					 {"cond", cond},
					 {"many", many},
					 {"timeouts", timeouts},
					 {"queues", queues},
					 {0, 0}};

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "module"))
		lib = argv[2];
	if (argc > 2 && !strcmp(argv[1], "many"))
		many_n = atol(argv[2]);
	if (argc > 2 && !strcmp(argv[1], "queues"))
		queue_iters = atoi(argv[2]);
	return run_case(cases, argc > 2 ? 2 : argc, argv);
}
