/*
 * exclusion MODE [THREADS [ITERS]] - mutual exclusion under contention.
 *
 * THREADS threads (default 8) each enter a critical section ITERS times
 * (default 2000) through one mutex. Inside, a thread checks that it is alone
 * (an atomic occupancy count) and increments a plain counter with a
 * deliberately wide read-modify-write; at the end the counter must be
 * THREADS * ITERS. MODE picks the mutex and how it is acquired:
 *   normal, static, adaptive, errorcheck   lock/unlock of that type
 *   recursive                              lock twice, unlock twice
 *   trylock                                trylock until it succeeds
 *   timedlock                              timedlock, deadline never reached
 *   preempted                              lock/unlock; the holder yields the CPU
 *                                          inside every 8th time
 *   timedlock-short, clocklock-short       deadlines 0-2 or 0-64 us away, retried on
 *                                          ETIMEDOUT; the holder yields inside as in
 *                                          "preempted", so that waits do time out
 *   mixed                                  all of the above, in turn
 *
 * exclusion MODE:THREADS:ITERS... - each run in turn in this one process,
 * each on a fresh mutex, ITERS sized as the tests size a run (check.h:
 * sized(), TEST_ITERS_PERCENT); a failure names its run. "all" for MODE:
 * every mode, at THREADS and ITERS.
 */
#include "check.h"

#include <stdbool.h>

enum mode {
	NORMAL,
	STATIC,
	ADAPTIVE,
	ERRORCHECK,
	RECURSIVE,
	TRYLOCK,
	TIMEDLOCK,
	PREEMPTED,
	TIMED_SHORT,
	CLOCK_SHORT,
	MIXED
};
static const char *const mode_names[] = {"normal",	    "static",	       "adaptive",  "errorcheck",
					 "recursive",	    "trylock",	       "timedlock", "preempted",
					 "timedlock-short", "clocklock-short", "mixed"};

static enum mode mode;
static int nthreads = 8, iters = 2000;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static atomic_int inside;
static long counter;
static atomic_long timeouts;

static void acquire(enum mode how, unsigned *seed)
{
	int rc;
	struct timespec dl;
	switch (how) {
	case TRYLOCK:
		while ((rc = pthread_mutex_trylock(&m)) == EBUSY)
			sched_yield();
		break;
	case TIMEDLOCK:
		dl = deadline_in(CLOCK_REALTIME, FAR_NS);
		rc = pthread_mutex_timedlock(&m, &dl);
		break;
	case TIMED_SHORT:
	case CLOCK_SHORT:
		for (;;) {
			clockid_t c = how == TIMED_SHORT ? CLOCK_REALTIME : CLOCK_MONOTONIC;
			/* Half the deadlines pass at once, half within 64 us. */
			int r = rand_r(seed);
			dl = deadline_in(c, r & 1 ? r % 64000 : r % 2000);
			rc = how == TIMED_SHORT ? pthread_mutex_timedlock(&m, &dl)
						: pthread_mutex_clocklock(&m, c, &dl);
			if (rc != ETIMEDOUT)
				break;
			atomic_fetch_add_explicit(&timeouts, 1, memory_order_relaxed);
		}
		break;
	case RECURSIVE:
		rc = pthread_mutex_lock(&m);
		if (rc == 0)
			rc = pthread_mutex_lock(&m);
		break;
	default:
		rc = pthread_mutex_lock(&m);
	}
	if (rc != 0)
		FAIL("acquire (%s): %d (%s)", mode_names[how], rc, err_name(rc));
}

static void release(enum mode how)
{
	if (how == RECURSIVE)
		CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(intptr_t)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < iters; i++) {
		enum mode how = mode;
		if (mode == MIXED) {
			static const enum mode mix[] = {NORMAL, TRYLOCK, TIMEDLOCK, TIMED_SHORT, CLOCK_SHORT};
			how = mix[(i + (int)seed) % 5];
		}
		acquire(how, &seed);
		if (atomic_fetch_add_explicit(&inside, 1, memory_order_relaxed) != 0)
			FAIL("%s: two threads inside the critical section", mode_names[mode]);
		long v = counter;
		for (int k = 0; k < 64; k++)
			__asm__ __volatile__("" ::: "memory"); /* widen the window */
		/* The holder sometimes yields the CPU inside, so that the
		 * others do find it held (and, with short deadlines, time out
		 * and abandon their wait). */
		if (mode >= PREEMPTED && i % 8 == 0)
			sched_yield();
		counter = v + 1;
		atomic_fetch_sub_explicit(&inside, 1, memory_order_relaxed);
		release(how);
	}
	return NULL;
}

/* One run: nthreads x iters of mode on a fresh mutex (a static one for
 * "static"). */
static void run(void)
{
	static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	memcpy(&m, &fresh, sizeof m);
	counter = 0;
	atomic_store(&timeouts, 0);
	if (mode != STATIC) {
		pthread_mutexattr_t a;
		CHECK_RC(pthread_mutexattr_init(&a), 0);
		int type = mode == ADAPTIVE	? PTHREAD_MUTEX_ADAPTIVE_NP
			   : mode == ERRORCHECK ? PTHREAD_MUTEX_ERRORCHECK
			   : mode == RECURSIVE	? PTHREAD_MUTEX_RECURSIVE
						: PTHREAD_MUTEX_NORMAL;
		CHECK_RC(pthread_mutexattr_settype(&a, type), 0);
		CHECK_RC(pthread_mutex_init(&m, &a), 0);
		CHECK_RC(pthread_mutexattr_destroy(&a), 0);
	}
	CHECK_RC(pthread_barrier_init(&start, NULL, (unsigned)nthreads), 0);
	pthread_t *t = calloc((size_t)nthreads, sizeof *t);
	CHECK(t != NULL);
	for (int k = 0; k < nthreads; k++)
		t[k] = spawn(worker, (void *)(intptr_t)(k + 1));
	for (int k = 0; k < nthreads; k++)
		join(t[k]);
	if (counter != (long)nthreads * iters)
		FAIL("%s: counter %ld, expected %ld: updates were lost", mode_names[mode], counter,
		     (long)nthreads * iters);
	CHECK_RC(pthread_mutex_trylock(&m), 0);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	CHECK_RC(pthread_mutex_destroy(&m), 0);
	CHECK_RC(pthread_barrier_destroy(&start), 0);
	printf("%s: %d threads x %d: ok (%ld timeouts)\n", mode_names[mode], nthreads, iters,
	       atomic_load(&timeouts));
	fflush(stdout);
	free(t);
}

static int find_mode(const char *name, size_t len)
{
	size_t nmodes = sizeof mode_names / sizeof mode_names[0];
	for (size_t i = 0; i < nmodes; i++)
		if (strlen(mode_names[i]) == len && strncmp(name, mode_names[i], len) == 0)
			return (int)i;
	return -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: exclusion MODE [THREADS [ITERS]] | exclusion MODE:THREADS:ITERS...\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strchr(argv[1], ':')) {
		int i = find_mode(argv[1], strlen(argv[1]));
		if (i < 0)
			return usage();
		mode = (enum mode)i;
		if (argc > 2)
			nthreads = atoi(argv[2]);
		if (argc > 3)
			iters = atoi(argv[3]);
		CHECK(nthreads > 0 && nthreads <= 1024 && iters > 0);
		run();
		return 0;
	}
	/* MODE:THREADS:ITERS...: every word checked before the first run */
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 1; k < argc; k++) {
			const char *w = argv[k], *c = strchr(w, ':');
			int th, it, end = 0;
			if (!c || sscanf(c, ":%d:%d%n", &th, &it, &end) != 2 || c[end] != 0 || th <= 0 ||
			    th > 1024 || it <= 0) {
				fprintf(stderr, "exclusion: '%s' is not MODE:THREADS:ITERS\n", w);
				return usage();
			}
			bool all = (size_t)(c - w) == 3 && strncmp(w, "all", 3) == 0;
			int i = all ? 0 : find_mode(w, (size_t)(c - w));
			if (i < 0) {
				fprintf(stderr, "exclusion: unknown mode '%.*s'\n", (int)(c - w), w);
				return usage();
			}
			if (pass == 0)
				continue;
			nthreads = th;
			iters = sized(it);
			int last = all ? MIXED : i;
			for (; i <= last; i++) {
				mode = (enum mode)i;
				run();
			}
		}
	}
	return 0;
}
