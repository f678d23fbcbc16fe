/*
 * rwlock_map - rwlocks (and mutexes beside them) created in known places,
 * for LOCKSWAP_ALGO_MAP's rwlock rules (tests/algo-map.bats): the test names
 * these places in rules and reads which rule chose how many rwlocks
 * (LOCKSWAP_VERBOSE's report at exit, and the profile). Every case checks
 * that each rwlock excludes writers from readers and from each other, so a
 * wrong binding that breaks a lock fails here too. Natively (glibc) every
 * case passes and prints the same.
 *
 *   rwlock_map functions   HOT rwlocks from rw_make_hot (pthread_rwlock_init),
 *                          COLD from rw_make_cold, and HOT mutexes from
 *                          mx_make: one program, both families
 *   rwlock_map static      PTHREAD_RWLOCK_INITIALIZER rwlocks first used
 *                          (rdlock) in rw_use_hot; zeroed ones first used
 *                          (tryrdlock) in rw_use_cold
 *   rwlock_map lines       prints "line: N" for its one pthread_rwlock_init
 *   rwlock_map module LIB  a dlopen'ed library (tests/doubles-map/) makes
 *                          its rwlocks; then the program makes one in
 *                          rw_make_hot
 *   rwlock_map fork        rw_make_hot before fork; in the child,
 *                          rw_make_hot again and a static rwlock's first use
 *                          in rw_use_cold
 *   rwlock_map timeouts    HOT rwlocks from rw_make_hot, COLD from
 *                          rw_make_cold, each write-held by the main thread
 *                          while another thread's timedrdlock of it times
 *                          out: every one contended, whatever the timing
 */
#include "check.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <sys/wait.h>

#define HOT 2
#define COLD 3
#define SET_MAX 8
#define THREADS 4
#define ROUNDS 300

static pthread_rwlock_t hot[HOT + 1], cold[COLD];
static pthread_mutex_t mx[HOT];

/* Each rwlock guards two counters a writer moves together; a reader sees
 * them equal. */
static struct {
	long a, b;
} counts[SET_MAX];
struct work {
	pthread_rwlock_t *l;
	int n;
};

static void *hammer_fn(void *p)
{
	struct work *w = p;
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < w->n; i++) {
			if (r % 3 == 0) {
				CHECK_RC(pthread_rwlock_wrlock(&w->l[i]), 0);
				long a = counts[i].a;
				if (r % 64 == 0)
					sched_yield();
				counts[i].a = a + 1;
				counts[i].b++;
			} else {
				CHECK_RC(pthread_rwlock_rdlock(&w->l[i]), 0);
				CHECK_EQ(counts[i].a, counts[i].b);
			}
			CHECK_RC(pthread_rwlock_unlock(&w->l[i]), 0);
		}
	return NULL;
}

static void hammer(pthread_rwlock_t *l, int n)
{
	struct work w = {l, n};
	pthread_t t[THREADS];
	CHECK(n <= SET_MAX);
	memset(counts, 0, sizeof counts);
	for (int i = 0; i < THREADS; i++)
		t[i] = spawn(hammer_fn, &w);
	for (int i = 0; i < THREADS; i++)
		join(t[i]);
	for (int i = 0; i < n; i++)
		CHECK_EQ(counts[i].a, (long)THREADS * ((ROUNDS + 2) / 3));
}

static __attribute__((noinline)) void rw_make_hot(pthread_rwlock_t *l, int n)
{
	for (int i = 0; i < n; i++)
		CHECK_RC(pthread_rwlock_init(&l[i], NULL), 0);
}

static __attribute__((noinline)) void rw_make_cold(pthread_rwlock_t *l, int n)
{
	for (int i = 0; i < n; i++)
		CHECK_RC(pthread_rwlock_init(&l[i], NULL), 0);
}

static __attribute__((noinline)) void mx_make(pthread_mutex_t *m, int n)
{
	for (int i = 0; i < n; i++)
		CHECK_RC(pthread_mutex_init(&m[i], NULL), 0);
}

static void functions(void)
{
	rw_make_hot(hot, HOT);
	rw_make_cold(cold, COLD);
	mx_make(mx, HOT);
	hammer(hot, HOT);
	hammer(cold, COLD);
	for (int i = 0; i < HOT; i++) {
		CHECK_RC(pthread_mutex_lock(&mx[i]), 0);
		CHECK_RC(pthread_mutex_unlock(&mx[i]), 0);
		CHECK_RC(pthread_mutex_destroy(&mx[i]), 0);
		CHECK_RC(pthread_rwlock_destroy(&hot[i]), 0);
	}
	for (int i = 0; i < COLD; i++)
		CHECK_RC(pthread_rwlock_destroy(&cold[i]), 0);
}

static pthread_rwlock_t s_hot[HOT] = {PTHREAD_RWLOCK_INITIALIZER, PTHREAD_RWLOCK_INITIALIZER};
static pthread_rwlock_t s_cold[COLD]; /* zeroed memory */

static __attribute__((noinline)) void rw_use_hot(pthread_rwlock_t *l)
{
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
}

static __attribute__((noinline)) void rw_use_cold(pthread_rwlock_t *l)
{
	CHECK_RC(pthread_rwlock_tryrdlock(l), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
}

static void statics(void)
{
	for (int i = 0; i < HOT; i++)
		rw_use_hot(&s_hot[i]);
	for (int i = 0; i < COLD; i++)
		rw_use_cold(&s_cold[i]);
	hammer(s_hot, HOT);
	hammer(s_cold, COLD);
}

static void lines(void)
{
	pthread_rwlock_t l;
	printf("line: %d\n", __LINE__ + 1);
	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	hammer(&l, 1);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

static const char *lib;
static void module(void)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		FAIL("dlopen %s: %s", lib, dlerror());
	pthread_rwlock_t *(*made)(int *) = (pthread_rwlock_t * (*)(int *)) dlsym(h, "algo_map_dl_make_rw");
	CHECK(made != NULL);
	int n;
	pthread_rwlock_t *l = made(&n);
	hammer(l, n);
	rw_make_hot(hot, 1);
	hammer(hot, 1);
}

static pthread_rwlock_t f_static = PTHREAD_RWLOCK_INITIALIZER;
static void forked(void)
{
	rw_make_hot(hot, 1);
	hammer(hot, 1);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		rw_make_hot(hot + 1, 2);
		rw_use_cold(&f_static);
		hammer(hot, 3);
		hammer(&f_static, 1);
		exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	hammer(hot, 1);
}

/* CLOCK_REALTIME 1 ms from now: a deadline that passes. */
static void *timeout_fn(void *p)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return (void *)(intptr_t)pthread_rwlock_timedrdlock(p, &ts);
}

static void timeouts(void)
{
	rw_make_hot(hot, HOT);
	rw_make_cold(cold, COLD);
	for (int i = 0; i < HOT + COLD; i++) {
		pthread_rwlock_t *l = i < HOT ? &hot[i] : &cold[i - HOT];
		CHECK_RC(pthread_rwlock_wrlock(l), 0);
		CHECK_EQ(in_thread(timeout_fn, l), ETIMEDOUT);
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	}
}

static const struct test_case cases[] = {{"functions", functions},
					 {"static", statics},
					 {"lines", lines},
					 {"module", module},
					 {"fork", forked},
					 {"timeouts", timeouts},
					 {0, 0}};

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "module"))
		lib = argv[2];
	return run_case(cases, argc > 2 ? 2 : argc, argv);
}
