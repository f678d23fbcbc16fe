/*
 * bench-pairs - the uncontended cost of one pthread_mutex_lock +
 * pthread_mutex_unlock pair, for scripts/sweeps/core-bench (or of a
 * pthread_rwlock_rdlock / _wrlock + _unlock pair, or a pthread_spin_lock +
 * _unlock pair, for scripts/sweeps/bench-rwlock). An ordinary pthread
 * program: run natively for glibc, or with liblockswap preloaded.
 *
 *   bench-pairs [--lock mutex|rd|wr|spin] N [REPS]
 *
 * Does REPS rounds of N lock/unlock pairs on one default mutex (rwlock,
 * spinlock) in the main thread (after one other thread has been created and
 * joined, so libc is in its multi-threaded mode, as in any program that uses
 * locks), and prints the median ns per pair over the rounds. Under callgrind,
 * run it with two values of N and divide the difference of the instruction
 * counts by the difference of N: start-up and exit cancel out.
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
static pthread_rwlock_t rw;
static pthread_spinlock_t sl;

enum kind { MUTEX, RD, WR, SPIN };

/* One pair of the kind; noinline keeps every kind's loop the same shape. */
static __attribute__((noinline)) void pairs(enum kind k, unsigned long n)
{
	int bad = 0;
	switch (k) {
	case MUTEX:
		for (unsigned long i = 0; i < n; i++)
			bad |= pthread_mutex_lock(&m) | pthread_mutex_unlock(&m);
		break;
	case RD:
		for (unsigned long i = 0; i < n; i++)
			bad |= pthread_rwlock_rdlock(&rw) | pthread_rwlock_unlock(&rw);
		break;
	case WR:
		for (unsigned long i = 0; i < n; i++)
			bad |= pthread_rwlock_wrlock(&rw) | pthread_rwlock_unlock(&rw);
		break;
	case SPIN:
		for (unsigned long i = 0; i < n; i++)
			bad |= pthread_spin_lock(&sl) | pthread_spin_unlock(&sl);
		break;
	}
	if (__builtin_expect(bad != 0, 0))
		abort();
}

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
	static const char *const kinds[] = {"mutex", "rd", "wr", "spin"};
	enum kind k = MUTEX;
	if (argc > 2 && !strcmp(argv[1], "--lock")) {
		size_t i = 0;
		while (i < 4 && strcmp(argv[2], kinds[i]))
			i++;
		if (i == 4) {
			fprintf(stderr,
				"bench-pairs: --lock: invalid value '%s' (expected mutex, rd, wr or spin)\n",
				argv[2]);
			return 2;
		}
		k = (enum kind)i;
		argc -= 2;
		argv += 2;
	}
	if (argc < 2 || argc > 3 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc == 2 ? stdout : stderr,
			"usage: bench-pairs [--lock mutex|rd|wr|spin] N [REPS]\n"
			"REPS (default 1) rounds of N uncontended lock/unlock pairs: pthread_mutex_lock\n"
			"(default), pthread_rwlock_rdlock or _wrlock, pthread_spin_lock, each with its\n"
			"unlock; prints the median ns per pair.\n");
		return argc == 2 ? 0 : 2;
	}
	unsigned long n = parse(argv[1], "N"), reps = argc > 2 ? parse(argv[2], "REPS") : 1;
	pthread_t t;
	if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL)) {
		fprintf(stderr, "bench-pairs: pthread_create failed\n");
		return 1;
	}
	if (pthread_mutex_init(&m, NULL) || pthread_rwlock_init(&rw, NULL) ||
	    pthread_spin_init(&sl, PTHREAD_PROCESS_PRIVATE))
		return 1;
	double *ns = malloc(reps * sizeof *ns);
	if (!ns)
		return 1;
	for (unsigned long r = 0; r < reps; r++) {
		uint64_t t0 = now_ns();
		pairs(k, n);
		ns[r] = (double)(now_ns() - t0) / (double)n;
	}
	qsort(ns, reps, sizeof *ns, cmp);
	printf("%.3f\n", ns[reps / 2]);
	pthread_mutex_destroy(&m);
	free(ns);
	return 0;
}
