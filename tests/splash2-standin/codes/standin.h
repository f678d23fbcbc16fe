/*
 * Shared by the stand-in apps (tests of splash2-runner; not SPLASH-2 code):
 * misbehaviour on request, and reports the tests read from the app's output.
 *
 * Each STANDIN_<WHAT> variable holds the thread count at which to misbehave,
 * or "any". Included by the m4 output of raytrace.c.in and barnes.c.in, so this
 * file is plain C and never seen by m4.
 */
#ifndef STANDIN_H
#define STANDIN_H

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline int standin_when(const char *var, int nthreads)
{
	const char *v = getenv(var);
	if (v == NULL || *v == '\0')
		return 0;
	return strcmp(v, "any") == 0 || atoi(v) == nthreads;
}

/* Count the processes whose command line (arguments joined by spaces) holds
 * STANDIN_COUNT_PROCS, and print the count. */
static inline void standin_count_procs(void)
{
	const char *want = getenv("STANDIN_COUNT_PROCS");
	if (want == NULL || *want == '\0')
		return;
	int count = 0;
	DIR *d = opendir("/proc");
	if (d == NULL)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || atoi(e->d_name) == (int)getpid())
			continue;
		char path[300], buf[4096];
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		for (size_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[n] = '\0';
		if (strstr(buf, want) != NULL)
			count++;
	}
	closedir(d);
	printf("standin: %d processes match '%s'\n", count, want);
}

static inline void standin_report(void)
{
	const char *algo = getenv("LOCKSWAP_ALGO");
	if (algo != NULL)
		printf("standin: LOCKSWAP_ALGO=%s\n", algo);
	standin_count_procs();
}

static pthread_mutex_t standin_never_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t standin_never_c = PTHREAD_COND_INITIALIZER;
static atomic_ulong standin_spins;

/* Called by every worker thread before it starts working. */
static inline void standin_misbehave(int nthreads)
{
	if (standin_when("STANDIN_HANG", nthreads)) {
		/* Nobody ever signals: every thread sleeps, the process uses no CPU. */
		pthread_mutex_lock(&standin_never_m);
		for (;;)
			pthread_cond_wait(&standin_never_c, &standin_never_m);
	}
	if (standin_when("STANDIN_SPIN", nthreads))
		/* Busy for ever, lightly: a millisecond's spin in every ten, so
		 * that the runner sees CPU time used (never a hang) while the
		 * machine's other work keeps its cores. */
		for (;;) {
			struct timespec t0, t, nap = {0, 9000000};
			clock_gettime(CLOCK_MONOTONIC, &t0);
			do {
				atomic_fetch_add_explicit(&standin_spins, 1, memory_order_relaxed);
				clock_gettime(CLOCK_MONOTONIC, &t);
			} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1000000);
			nanosleep(&nap, NULL);
		}
	if (standin_when("STANDIN_CRASH", nthreads))
		raise(SIGSEGV);
}

/* Called by main once the work is done. */
static inline void standin_exit(int nthreads)
{
	if (standin_when("STANDIN_FAIL", nthreads)) {
		fprintf(stderr, "standin: failing on request (STANDIN_FAIL)\n");
		exit(3);
	}
}

#endif
