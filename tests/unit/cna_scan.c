/*
 * cna_scan.c - a release of cna looks at no more than LOCKSWAP_CNA_SCAN
 * waiters (issue 26: bounded work per release).
 *
 *   cna_scan [-n WAITERS(10)] [-s SCAN(4)] [-W SECONDS(30)]
 *
 * One cluster, LOCKSWAP_COHORT_PASSES 1: from the second release on, every
 * holder has reached the pass bound and looks for a waiter of another
 * cluster, of which there is none (the paper walks the whole queue for it,
 * at every release). WAITERS threads queue behind the main thread, each once
 * the previous one sleeps (policy park); then each, once it holds the lock,
 * counts the waiters its release looks at (LS_POINT_SCAN, in find()) and
 * unlocks. Every count must be at most SCAN, and every waiter must get the
 * lock. Links build/liblocks-inject.a (mk/unlock.mk).
 *
 * Output: "cna_scan: OK max=N" and exit 0; "cna_scan: FAIL ..." and exit 1;
 * bad usage: one line, exit 2.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hier/hier.h"
#include "hier/topo.h"
#include "lock.h"
#include "wait.h"

#define FAIL_PREFIX "cna_scan: FAIL "
#include "fail.h"

#define MAXW 64

static const struct ls_algo *algo;
static void *L;
static __thread int me = -1;
static __thread unsigned looked; /* SCAN points in this thread's release */
static _Atomic int parked[MAXW], done[MAXW];
static _Atomic unsigned worst;

void ls_test_point(enum ls_test_point id)
{
	if (id == LS_POINT_SCAN)
		looked++;
	else if (id == LS_POINT_PARKING && me >= 0)
		atomic_store(&parked[me], 1);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "cna_scan: FAIL watchdog expired (a waiter never got the lock)\n";
	if (write(1, msg, sizeof msg - 1) < 0) {
	}
	_exit(1);
}

static void *waiter(void *arg)
{
	me = (int)(intptr_t)arg;
	algo->lock(L);
	looked = 0;
	algo->unlock(L);
	unsigned w = atomic_load(&worst);
	while (looked > w && !atomic_compare_exchange_weak(&worst, &w, looked)) {
	}
	atomic_store(&done[me], 1);
	return NULL;
}

int main(int argc, char **argv)
{
	int c, n = 10, scan = 4, watchdog = 30;
	while ((c = getopt(argc, argv, "n:s:W:")) != -1) {
		int v = atoi(optarg);
		if (c == 'n' && v >= 1 && v <= MAXW)
			n = v;
		else if (c == 's' && v >= 1)
			scan = v;
		else if (c == 'W' && v >= 1)
			watchdog = v;
		else {
			fprintf(stderr, "usage: cna_scan [-n WAITERS(1..%d)] [-s SCAN(>= 1)] [-W SECONDS]\n",
				MAXW);
			return 2;
		}
	}
	char err[256];
	if (ls_topo_setup("thread:1", NULL, err, sizeof err))
		fail("topology: %s", err);
	algo = ls_algo_find("cna");
	if (!algo)
		fail("no cna");
	for (const struct ls_param *p = algo->params; p && p->env; p++)
		if (!strcmp(p->env, "LOCKSWAP_CNA_SCAN"))
			*p->value = (uint64_t)scan;
	ls_cohort_passes = 1;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	ls_wait_cfg.spin = 16;
	ls_wait_cfg.yield = 2;
	signal(SIGALRM, on_alarm);
	alarm((unsigned)watchdog);

	L = calloc(1, LS_CACHELINE);
	pthread_t t[MAXW];
	algo->lock(L);
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, waiter, (void *)(intptr_t)i))
			fail("pthread_create");
		while (!atomic_load(&parked[i])) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	}
	algo->unlock(L);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (atomic_load(&worst) > (unsigned)scan)
		fail("a release looked at %u waiters, more than LOCKSWAP_CNA_SCAN=%d", atomic_load(&worst),
		     scan);
	printf("cna_scan: OK max=%u\n", atomic_load(&worst));
	return 0;
}
