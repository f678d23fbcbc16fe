/*
 * demo.c - a small contended program for `make demo`: it knows nothing of
 * lockswap. THREADS threads share one mutex for SECONDS; each acquisition
 * updates two shared cache lines, then does about NCS_NS of local work.
 * Prints one line: "ops=N ops_per_s=X jain=J min=A max=B" and exits 1 if the
 * protected counter disagrees with the per-thread counts (a broken lock).
 *
 *   demo-contend THREADS SECONDS NCS_NS
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	long counter;
	char pad[56];
	long other;
} shared __attribute__((aligned(64)));
static atomic_int stop;
static long spins_per_us;

struct worker {
	pthread_t t;
	long ops;
	char pad[48];
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void local_work(long spins)
{
	for (volatile long i = 0; i < spins; i++) {
	}
}

static long ncs_spins;

static void *run(void *arg)
{
	struct worker *w = arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_mutex_lock(&lock);
		shared.counter++;
		shared.other += shared.counter & 1;
		pthread_mutex_unlock(&lock);
		w->ops++;
		local_work(ncs_spins);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: demo-contend THREADS SECONDS NCS_NS\n");
		return 2;
	}
	int n = atoi(argv[1]);
	double secs = atof(argv[2]);
	long ncs = atol(argv[3]);
	if (n < 1 || n > 1024 || secs <= 0 || ncs < 0) {
		fprintf(stderr, "demo-contend: bad arguments\n");
		return 2;
	}
	/* calibrate the local work loop: the fastest of five tries, so that a
	 * busy machine does not shorten the non-critical section */
	for (int i = 0; i < 5; i++) {
		double t0 = now();
		local_work(2000000);
		long r = (long)(2000000 / ((now() - t0) * 1e6));
		if (r > spins_per_us)
			spins_per_us = r;
	}
	ncs_spins = ncs * spins_per_us / 1000;

	struct worker *w = calloc((size_t)n, sizeof *w);
	for (int i = 0; i < n; i++)
		pthread_create(&w[i].t, NULL, run, &w[i]);
	struct timespec d = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
	double start = now();
	nanosleep(&d, NULL);
	atomic_store(&stop, 1);
	double el = now() - start;
	long total = 0, mn = -1, mx = 0;
	double sum = 0, sq = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		total += w[i].ops;
		mn = mn < 0 || w[i].ops < mn ? w[i].ops : mn;
		mx = w[i].ops > mx ? w[i].ops : mx;
		sum += (double)w[i].ops;
		sq += (double)w[i].ops * (double)w[i].ops;
	}
	printf("ops=%ld ops_per_s=%.0f jain=%.3f min=%ld max=%ld\n", total, (double)total / el,
	       sq > 0 ? sum * sum / (n * sq) : 0, mn, mx);
	if (shared.counter != total) {
		fprintf(stderr, "demo-contend: MUTUAL EXCLUSION VIOLATED: counter %ld != %ld acquisitions\n",
			shared.counter, total);
		return 1;
	}
	return 0;
}
