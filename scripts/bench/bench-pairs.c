/*
 * bench-pairs - the uncontended cost of one pthread_mutex_lock +
 * pthread_mutex_unlock pair, for scripts/sweeps/core-bench. An ordinary pthread
 * program: run natively for glibc, or with liblockswap preloaded.
 *
 *   bench-pairs N [REPS]
 *
 * Does REPS rounds of N lock/unlock pairs on one default mutex in the main
 * thread (after one other thread has been created and joined, so libc is in
 * its multi-threaded mode, as in any program that uses locks), and prints
 * the median ns per pair over the rounds. Under callgrind, run it with two
 * values of N and divide the difference of the instruction counts by the
 * difference of N: start-up and exit cancel out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t m;

static void *nothing(void *arg)
{
	return arg;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned long parse(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || errno || *end || v == 0 || v > 1000000000ul) {
		fprintf(stderr, "bench-pairs: %s: invalid value '%s' (expected an integer 1..1e9)\n", what,
			s);
		exit(2);
	}
	return v;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc == 2 ? stdout : stderr,
			"usage: bench-pairs N [REPS]\n"
			"REPS (default 1) rounds of N uncontended pthread_mutex_lock/unlock pairs;\n"
			"prints the median ns per pair.\n");
		return argc == 2 ? 0 : 2;
	}
	unsigned long n = parse(argv[1], "N"), reps = argc > 2 ? parse(argv[2], "REPS") : 1;
	pthread_t t;
	if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL)) {
		fprintf(stderr, "bench-pairs: pthread_create failed\n");
		return 1;
	}
	if (pthread_mutex_init(&m, NULL))
		return 1;
	double *ns = malloc(reps * sizeof *ns);
	if (!ns)
		return 1;
	for (unsigned long r = 0; r < reps; r++) {
		uint64_t t0 = now_ns();
		for (unsigned long i = 0; i < n; i++) {
			if (__builtin_expect(pthread_mutex_lock(&m) != 0, 0))
				abort();
			if (__builtin_expect(pthread_mutex_unlock(&m) != 0, 0))
				abort();
		}
		ns[r] = (double)(now_ns() - t0) / (double)n;
	}
	qsort(ns, reps, sizeof *ns, cmp);
	printf("%.3f\n", ns[reps / 2]);
	pthread_mutex_destroy(&m);
	free(ns);
	return 0;
}
