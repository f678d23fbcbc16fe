/*
 * tp_space - queue nodes used by the time-published locks, the experiment of
 * TR 867 section 4.5 (../shared/papers/000_9c294dcad948dd76.txt; bounds in
 * appendix A: CLH-TP worst case O(T^2) nodes in a queue, expected O(T)).
 *
 *   tp_space -a ALGO [-t THREADS] [-n ITERS] [-p PATIENCE_NS] [-w WAIT]
 *            [-m contend|held]
 *
 *   contend  THREADS threads make ITERS timedlock() calls each (deadline
 *            now + PATIENCE_NS, default 15 us as in the paper), retried on
 *            ETIMEDOUT, with empty critical and non-critical sections;
 *   held     the lock is held by the main thread throughout, so every call
 *            times out (the paper's "presetting the lock to held").
 * Prints "tp_space: algo=... mode=... threads=T attempts=... timeouts=...
 * max_nodes=N per_thread=N/T" and checks N <= T*T + 2T + 2 (the appendix-A
 * bound: at most T^2 nodes queued, plus the holder's, the dummy and one
 * being allocated per thread); node counting is exact (ls_node_stats), and
 * every node must be back at the end. Exit 0 pass, 1 fail, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "pool.h"
#include "wait.h"

#define OPT_PROG "tp_space"
#include "opts.h"

static const struct ls_algo *algo;
static void *L;
static unsigned long iters = 20000;
static uint64_t patience = 15000;
static _Atomic long attempts, timeouts;
static _Atomic int go;

static void *worker(void *arg)
{
	(void)arg;
	long a = 0, t = 0;
	while (!atomic_load(&go)) {
	}
	for (unsigned long i = 0; i < iters; i++) {
		a++;
		if (algo->timedlock(L, ls_now_ns() + patience) == 0)
			algo->unlock(L);
		else
			t++;
	}
	atomic_fetch_add(&attempts, a);
	atomic_fetch_add(&timeouts, t);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *name = NULL, *mode = "contend";
	unsigned threads = 4;
	ls_wait_cfg.policy = LS_WAIT_SPIN;
	int c, bad = 0;
	opterr = 0;
	while ((c = getopt(argc, argv, "a:t:n:p:m:w:")) != -1) {
		if (opt_algo_wait(c, optarg, &name))
			continue;
		if (c == 't')
			threads = (unsigned)opt_number("t", optarg, 1, 256);
		else if (c == 'n')
			iters = opt_number("n", optarg, 1, 1000000000);
		else if (c == 'p')
			patience = opt_number("p", optarg, 0, 100000000000ull);
		else if (c == 'm')
			mode = optarg;
		else
			bad = 1;
	}
	if (bad || optind != argc || !name || !(algo = ls_algo_find(name)) || !algo->timedlock ||
	    (strcmp(mode, "contend") && strcmp(mode, "held"))) {
		fprintf(stderr,
			"usage: tp_space -a ALGO(with timedlock) [-t 1..256] [-n ITERS] [-p PATIENCE_NS] "
			"[-w spin|yield|park] [-m contend|held]\n");
		return 2;
	}
	ls_node_counting = true;
	L = opt_state(algo);
	if (!L)
		opt_error("no memory for the lock's state");
	if (algo->init)
		algo->init(L);
	bool held = !strcmp(mode, "held");
	if (held)
		algo->lock(L);
	pthread_t *t = calloc(threads, sizeof *t);
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	atomic_store(&go, 1);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	struct ls_node_stats ns;
	ls_node_stats(&ns);
	if (held)
		algo->unlock(L);
	if (algo->destroy)
		algo->destroy(L);
	struct ls_node_stats end;
	ls_node_stats(&end);
	long bound = (long)threads * threads + 2 * threads + 2;
	printf(
	    "tp_space: algo=%s mode=%s threads=%u patience_ns=%llu attempts=%ld timeouts=%ld max_nodes=%ld "
	    "per_thread=%.2f bound=%ld\n",
	    algo->name, mode, threads, (unsigned long long)patience, atomic_load(&attempts),
	    atomic_load(&timeouts), ns.max_in_use, (double)ns.max_in_use / threads, bound);
	int rc = 0;
	if (ns.max_in_use > bound) {
		printf("tp_space: FAIL %ld nodes in use at once, above the bound %ld\n", ns.max_in_use,
		       bound);
		rc = 1;
	}
	if (end.in_use != 0) {
		printf("tp_space: FAIL %ld node(s) still in use at the end\n", end.in_use);
		rc = 1;
	}
	if (held && atomic_load(&timeouts) != atomic_load(&attempts)) {
		printf("tp_space: FAIL a timedlock succeeded on a held lock\n");
		rc = 1;
	}
	return rc;
}
