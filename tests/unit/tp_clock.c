/*
 * tp_clock - the time source of the time-published locks (locks/common/tpclock.c).
 *
 *   tp_clock            checks: the clock is calibrated to the TSC when the
 *                       TSC is invariant (else it is clock_gettime), it
 *                       never goes backwards on a thread, a timestamp read
 *                       on one core after another core published its own is
 *                       not earlier than that one by more than 1 ms, and the
 *                       scale agrees with CLOCK_MONOTONIC within 1%. The
 *                       bounds are loose on purpose: they catch a wrong
 *                       scale or an unsynchronised TSC, never a slow machine.
 *   tp_clock --measure  prints the measurements behind the defaults of the
 *                       thresholds (cost of each clock, cross-core skew and
 *                       transfer time, a waiter's publishing period when it
 *                       runs and how long it is stale when preempted).
 *   tp_clock --tsc-off  the same checks with LOCKSWAP_TP_CLOCK=1 semantics.
 * Exit status 0 on success, 1 on a failed check (the line says which).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "tpclock.h"
#include "wait.h"

static int failures;
#define CHECK(c, ...)                                                                                        \
	do {                                                                                                 \
		if (!(c)) {                                                                                  \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                          \
			printf(__VA_ARGS__);                                                                 \
			printf("\n");                                                                        \
			failures++;                                                                          \
		}                                                                                            \
	} while (0)

static void settle(void)
{
	uint64_t end = ls_now_ns() + 2000000000ull;
	while (!strcmp(ls_tp_clock_source(), "calibrating") || !strcmp(ls_tp_clock_source(), "unused")) {
		ls_tp_now();
		if (ls_now_ns() > end)
			break;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu % (int)sysconf(_SC_NPROCESSORS_ONLN), &s);
	pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* ---- cross-core: one thread publishes, the other reads and compares ---- */

static _Atomic uint64_t published;
static _Atomic int stop_flag, ready_count;
static int64_t min_age = INT64_MAX; /* reader's now - published value */
static bool ordered;		    /* reader orders its clock read after the load */

static void *publisher(void *arg)
{
	pin(*(int *)arg);
	atomic_fetch_add(&ready_count, 1);
	while (atomic_load(&ready_count) < 2)
		;
	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed))
		atomic_store_explicit(&published, ls_tp_now(), memory_order_release);
	return NULL;
}

static void *reader(void *arg)
{
	pin(*(int *)arg);
	atomic_fetch_add(&ready_count, 1);
	while (atomic_load(&ready_count) < 2)
		;
	uint64_t end = ls_now_ns() + 300000000ull;
	while (ls_now_ns() < end) {
		uint64_t v = atomic_load_explicit(&published, memory_order_acquire);
		if (!v)
			continue;
		if (ordered)
			_mm_lfence();
		int64_t age = (int64_t)(ls_tp_now() - v);
		if (age < min_age)
			min_age = age;
	}
	atomic_store(&stop_flag, 1);
	return NULL;
}

static int64_t cross_core(void)
{
	pthread_t a, b;
	int c0 = 0, c1 = 1;
	atomic_store(&published, 0);
	atomic_store(&stop_flag, 0);
	atomic_store(&ready_count, 0);
	min_age = INT64_MAX;
	pthread_create(&a, NULL, publisher, &c0);
	pthread_create(&b, NULL, reader, &c1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return min_age;
}

/* ls_tp_now() and CLOCK_MONOTONIC at (nearly) the same instant: a pair of
 * monotonic reads at most 20 us apart around the TSC read. */
static void bracket(uint64_t *m, uint64_t *t)
{
	for (int i = 0;; i++) {
		uint64_t a = ls_now_ns(), x = ls_tp_now(), b = ls_now_ns();
		if (b - a <= 20000 || i == 100000) {
			*m = a + (b - a) / 2;
			*t = x;
			return;
		}
	}
}

static void checks(void)
{
	settle();
	const char *src = ls_tp_clock_source();
	bool inv = ls_tp_tsc_invariant();
	printf("# clock source %s, TSC invariant %s, LOCKSWAP_TP_CLOCK=%llu\n", src, inv ? "yes" : "no",
	       (unsigned long long)ls_tp_clock_mode);
	if (ls_tp_clock_mode == 0 && inv)
		CHECK(!strcmp(src, "tsc"), "invariant TSC but source %s", src);
	else
		CHECK(!strcmp(src, "clock_gettime"), "expected clock_gettime, got %s", src);

	/* Monotonic on one thread. A migration between cores may show the
	 * TSCs' offset, which the locks tolerate (ls_tp_older takes a time
	 * ahead of `now` as fresh): allow 10 us, far above any sane offset. */
	uint64_t prev = ls_tp_now();
	int64_t worst = 0;
	for (int i = 0; i < 1000000; i++) {
		uint64_t t = ls_tp_now();
		if ((int64_t)(prev - t) > worst)
			worst = (int64_t)(prev - t);
		prev = t;
	}
	CHECK(worst <= 10000, "went backwards by %lld ns", (long long)worst);

	/* agrees with CLOCK_MONOTONIC: epoch within 1 ms, rate within 1% over
	 * 50 ms (each pair bracketed within 20 us, retried if preempted) */
	uint64_t m0, t0, m1, t1;
	bracket(&m0, &t0);
	struct timespec ts = {0, 50000000};
	nanosleep(&ts, NULL);
	bracket(&m1, &t1);
	int64_t off = (int64_t)(t0 - m0);
	CHECK(off < 1000000 && off > -1000000, "epoch differs from CLOCK_MONOTONIC by %lld ns",
	      (long long)off);
	double rate = (double)(t1 - t0) / (double)(m1 - m0);
	CHECK(rate > 0.99 && rate < 1.01, "rate %.5f against CLOCK_MONOTONIC", rate);

	/* cross-core: a reader never sees a value from the future beyond 1 ms */
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		int64_t m = cross_core();
		CHECK(m > -1000000, "a timestamp published on another core was %lld ns ahead", (long long)-m);
	}
	uint64_t khz = ls_tp_tsc_khz();
	if (khz)
		printf("# TSC %llu kHz\n", (unsigned long long)khz);
}

/* ---- measurements ---- */

#define CALLS 1000000
#define REPS 5

static double per_call(int which)
{
	double r[REPS];
	for (int k = 0; k < REPS; k++) {
		volatile uint64_t sink = 0;
		unsigned aux;
		uint64_t a = ls_now_ns();
		for (int i = 0; i < CALLS; i++) {
			switch (which) {
			case 0:
				sink += __rdtsc();
				break;
			case 1:
				sink += __rdtscp(&aux);
				break;
			case 2:
				sink += ls_now_ns();
				break;
			default:
				sink += ls_tp_now();
				break;
			}
		}
		r[k] = (double)(ls_now_ns() - a) / CALLS;
		(void)sink;
	}
	for (int i = 0; i < REPS; i++)
		for (int j = i + 1; j < REPS; j++)
			if (r[j] < r[i]) {
				double t = r[i];
				r[i] = r[j];
				r[j] = t;
			}
	return r[REPS / 2];
}

/* Round trip of a cache line between two pinned threads. */
static _Atomic uint64_t ping;
static void *ponger(void *arg)
{
	pin(1);
	(void)arg;
	for (uint64_t i = 1; i <= 200000; i++) {
		while (atomic_load_explicit(&ping, memory_order_acquire) != 2 * i - 1)
			;
		atomic_store_explicit(&ping, 2 * i, memory_order_release);
	}
	return NULL;
}

static double round_trip(void)
{
	pthread_t t;
	atomic_store(&ping, 0);
	pin(0);
	pthread_create(&t, NULL, ponger, NULL);
	uint64_t a = ls_now_ns();
	for (uint64_t i = 1; i <= 200000; i++) {
		atomic_store_explicit(&ping, 2 * i - 1, memory_order_release);
		while (atomic_load_explicit(&ping, memory_order_acquire) != 2 * i)
			;
	}
	uint64_t d = ls_now_ns() - a;
	pthread_join(t, NULL);
	return (double)d / 200000;
}

/* A waiter's loop as in the locks: read the clock, publish, relax. Records
 * every gap between consecutive publications longer than `thr` ns. */
#define NB 14
static const uint64_t bound[NB] = {1000,   1000,   2000,   5000,    10000,   20000,   50000,
				   100000, 200000, 500000, 1000000, 2000000, 5000000, UINT64_MAX};
static const char *const bound_name[NB] = {"<1us",   "<1us",   "<2us",	 "<5us", "<10us", "<20us", "<50us",
					   "<100us", "<200us", "<500us", "<1ms", "<2ms",  "<5ms",  ">=5ms"};

struct gaps {
	uint64_t iters, over, max;
	uint64_t *big;
	size_t nbig, capbig;
	uint64_t hist[NB]; /* gaps below each bound[] */
};

static _Atomic uint64_t sink_time;

static void publish_loop(struct gaps *g, uint64_t dur_ns, uint64_t thr)
{
	uint64_t end = ls_now_ns() + dur_ns, prev = ls_tp_now();
	while (prev < end) {
		uint64_t t = ls_tp_now();
		atomic_store_explicit(&sink_time, t, memory_order_relaxed);
		ls_cpu_relax();
		uint64_t d = t - prev;
		int b = 1;
		while (d >= bound[b])
			b++;
		g->hist[b]++;
		g->iters++;
		if (d > g->max)
			g->max = d;
		if (d > thr) {
			g->over++;
			if (g->nbig < g->capbig)
				g->big[g->nbig++] = d;
		}
		prev = t;
	}
}

static void *spinner(void *arg)
{
	struct gaps *g = arg;
	publish_loop(g, 2000000000ull, 100000);
	return NULL;
}

static void print_hist(const char *what, struct gaps *g)
{
	printf("%s: %llu iterations, max gap %.1f us;", what, (unsigned long long)g->iters, g->max / 1e3);
	for (int i = 1; i < NB; i++)
		if (g->hist[i])
			printf(" %s:%llu", bound_name[i], (unsigned long long)g->hist[i]);
	printf("\n");
}

static void measure(void)
{
	settle();
	printf("clock source: %s; TSC invariant: %s; TSC %llu kHz\n", ls_tp_clock_source(),
	       ls_tp_tsc_invariant() ? "yes" : "no", (unsigned long long)ls_tp_tsc_khz());
	printf("cost per call (median of %d x %d calls): rdtsc %.1f ns, rdtscp %.1f ns, "
	       "clock_gettime(MONOTONIC) %.1f ns, ls_tp_now %.1f ns\n",
	       REPS, CALLS, per_call(0), per_call(1), per_call(2), per_call(3));
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		int64_t worst = INT64_MAX;
		for (int i = 0; i < 5; i++) {
			int64_t m = cross_core();
			if (m < worst)
				worst = m;
		}
		printf(
		    "cross-core: smallest (reader now - value published on the other core) over 5 x 0.3 s: "
		    "%lld ns (negative: the reader's rdtsc ran before its load completed, or skew)\n",
		    (long long)worst);
		ordered = true;
		worst = INT64_MAX;
		for (int i = 0; i < 5; i++) {
			int64_t m = cross_core();
			if (m < worst)
				worst = m;
		}
		ordered = false;
		printf("cross-core, reader with lfence before its clock read: smallest %lld ns (negative = "
		       "skew)\n",
		       (long long)worst);
		printf("cache-line round trip between the two cores: %.0f ns\n", round_trip());
	}
	/* one running publisher (the machine's other core is free or noisy) */
	struct gaps g = {0};
	publish_loop(&g, 2000000000ull, UINT64_MAX);
	print_hist("publishing gaps, 1 thread, 2 s", &g);
	/* three publishers on two cores: each is preempted in turn */
	enum { N = 3 };
	struct gaps gs[N];
	pthread_t th[N];
	memset(gs, 0, sizeof gs);
	for (int i = 0; i < N; i++) {
		gs[i].capbig = 100000;
		gs[i].big = calloc(gs[i].capbig, sizeof(uint64_t));
		pthread_create(&th[i], NULL, spinner, &gs[i]);
	}
	uint64_t *all = calloc(N * 100000, sizeof(uint64_t));
	size_t n = 0;
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		char what[64];
		snprintf(what, sizeof what, "publishing gaps, 3 threads on 2 cores, thread %d", i);
		print_hist(what, &gs[i]);
		memcpy(all + n, gs[i].big, gs[i].nbig * sizeof(uint64_t));
		n += gs[i].nbig;
	}
	qsort(all, n, sizeof(uint64_t), cmp_u64);
	if (n)
		printf("gaps > 100 us with 3 threads on 2 cores (preemptions): %zu, p10 %.2f ms, median %.2f "
		       "ms, "
		       "p90 %.2f ms\n",
		       n, all[n / 10] / 1e6, all[n / 2] / 1e6, all[n * 9 / 10] / 1e6);
}

int main(int argc, char **argv)
{
	bool meas = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--measure"))
			meas = true;
		else if (!strcmp(argv[i], "--tsc-off"))
			ls_tp_clock_mode = 1;
		else {
			fprintf(stderr, "usage: tp_clock [--measure] [--tsc-off]\n");
			return 2;
		}
	}
	if (meas) {
		measure();
		return 0;
	}
	checks();
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
