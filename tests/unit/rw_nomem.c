/*
 * rw_nomem.c - a cluster-aware reader-writer lock (c-rw-wp, and its
 * compositions) first used when no address space is left: it gets no block
 * of per-cluster lines (locks/hier/hier.h, "No address space") and is then
 * its global ticket lock for writers and one inline indicator for readers,
 * until destroy. Nothing waits for memory, nothing fails.
 *
 *   rw_nomem -a RWALGO [-t THREADS(4)] [-n ITERS(4000)] [-T SECONDS(30)]
 *
 * The threads are started first (their stacks need address space) and wait;
 * then RLIMIT_AS (soft) is lowered to what the process has mapped and the
 * pool is drained with ls_ext_alloc (which never takes the reserve). The
 * threads then race on 3 fresh (all-zero) locks, under thread:2 clusters:
 * rdlock, tryrdlock, timedrdlock, wrlock and trywrlock at random, checking
 * that a writer is alone and a reader beside no writer. Checks: every lock
 * holds the flat marker; the write counts add up; a copy by value of an
 * unlocked flat lock works. Then the limit is restored, the blocks given
 * back, the locks destroyed, and the same workload runs again: each lock
 * has a block of its own. Prints one line per round; exit 0, 1 with a
 * message (a hang is reported after SECONDS), 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hier/hier.h"
#include "hier/topo.h"
#include "lock.h"
#include "pool.h"
#include "rwlock/rwlock.h"
#include "wait.h"

#define FAIL_PREFIX "rw_nomem: FAIL "
#include "fail.h"
#include "nomem.h"

#define NLOCKS 3
#define MAX_THREADS 16
#define MAX_BLOCKS (1u << 16)

struct rw {
	_Alignas(LS_CACHELINE) unsigned char state[LS_EXT_MAX];
	_Atomic int inside; /* readers, or -1: a writer */
	long writes;
};

static const struct ls_rwalgo *algo;
static struct rw locks[NLOCKS];
static unsigned nthreads = 4;
static long iters = 4000;
static _Atomic unsigned round_no, finished;
static void *blocks[MAX_BLOCKS]; /* taken, with their sizes */
static size_t block_sizes[MAX_BLOCKS];

static size_t inner_at; /* where the cluster-aware lock's state starts */

static bool flat(struct rw *l)
{
	return ls_hier_is_flat((struct ls_hier_head *)atomic_load(
	    (ls_hier_lines_t *)(void *)(l->state + inner_at + LS_HIER_LINES_AT)));
}

static void read_once(struct rw *l, unsigned how)
{
	void *token = NULL;
	int r = how == 0 ? algo->rdlock(l->state, 0, &token)
		: how == 1
		    ? algo->tryrdlock(l->state, 0, &token)
		    : (algo->timedrdlock
			   ? algo->timedrdlock(l->state, 0, ls_now_ns() + 100000, &token)
			   : ls_rw_timed_fallback(algo, l->state, 0, false, ls_now_ns() + 100000, &token));
	if (r == EBUSY || r == ETIMEDOUT)
		return;
	if (r)
		fail("a read acquisition returned %d", r);
	if (atomic_fetch_add(&l->inside, 1) < 0)
		fail("a reader beside a writer");
	atomic_fetch_sub(&l->inside, 1);
	algo->rdunlock(l->state, token);
}

static void write_once(struct rw *l, bool try)
{
	if (try) {
		if (algo->trywrlock(l->state, 0))
			return;
	} else {
		algo->wrlock(l->state, 0);
	}
	int none = 0;
	if (!atomic_compare_exchange_strong(&l->inside, &none, -1))
		fail("a writer beside %s", none < 0 ? "a writer" : "a reader");
	l->writes++;
	atomic_store(&l->inside, 0);
	algo->wrunlock(l->state);
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u | 1;
	for (unsigned r = 1; r <= 2; r++) {
		while (atomic_load(&round_no) < r)
			sched_yield();
		for (long i = 0; i < iters; i++) {
			seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
			struct rw *l = &locks[seed % NLOCKS];
			unsigned op = (seed >> 8) % 5;
			if (op < 3)
				read_once(l, op);
			else
				write_once(l, op == 4);
		}
		atomic_fetch_add(&finished, 1);
	}
	return NULL;
}

/* Starts round r and waits for the threads to finish it; checks the counts. */
static void run_round(unsigned r, int limit_s)
{
	unsigned target = nthreads * r;
	atomic_store(&round_no, r);
	for (int ms = 0; atomic_load(&finished) < target; ms++) {
		if (ms > limit_s * 1000)
			fail("round %u: %u of %u threads finished after %d s (a lost wake-up?)", r,
			     atomic_load(&finished) - nthreads * (r - 1), nthreads, limit_s);
		usleep(1000);
	}
	for (int k = 0; k < NLOCKS; k++)
		if (atomic_load(&locks[k].inside) != 0)
			fail("round %u: lock %d left occupied", r, k);
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	int limit_s = 30, c;
	while ((c = getopt(argc, argv, "a:t:n:T:")) != -1) {
		if (c == 'a')
			name = optarg;
		else if (c == 't')
			nthreads = (unsigned)atoi(optarg);
		else if (c == 'n')
			iters = atol(optarg);
		else if (c == 'T')
			limit_s = atoi(optarg);
		else
			name = NULL, optind = argc + 1;
	}
	char err[1400];
	if (!name || nthreads < 1 || nthreads > MAX_THREADS || iters < 1) {
		fprintf(stderr, "usage: rw_nomem -a RWALGO [-t 1..16] [-n ITERS] [-T SECONDS]\n");
		return 2;
	}
	if (!(algo = ls_rwalgo_lookup(name, err, sizeof err)) ||
	    ls_rwalgo_start(algo, NULL, err, sizeof err) ||
	    ls_topo_setup("thread:2", NULL, err, sizeof err)) {
		fprintf(stderr, "rw_nomem: %s\n", err);
		return 2;
	}
	/* A composition NAME+WRAPPER keeps NAME's state at its end. */
	const char *plus = strchr(name, '+');
	const struct ls_rwalgo *base = algo;
	if (plus) {
		char inner[64];
		snprintf(inner, sizeof inner, "%.*s", (int)(plus - name), name);
		base = ls_rwalgo_find(inner);
	}
	if (!(algo->caps & LS_RWCAP_HIER) || !base || algo->state_size > LS_EXT_MAX) {
		fprintf(stderr, "rw_nomem: -a: %s is not a cluster-aware rwlock algorithm\n", name);
		return 2;
	}
	inner_at = algo->state_size - base->state_size;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	pthread_t t[MAX_THREADS];
	for (unsigned i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)))
			fail("pthread_create");

	/* Round 1: no address space. */
	static const size_t sizes[] = {LS_EXT_MAX, LS_CACHELINE};
	struct nomem nm = {.blocks = blocks, .sizes = block_sizes, .max = MAX_BLOCKS};
	nomem_begin(&nm, sizes, sizeof sizes / sizeof sizes[0]);
	run_round(1, limit_s);
	long writes = 0;
	for (int k = 0; k < NLOCKS; k++) {
		if (!flat(&locks[k]))
			fail("lock %d has a block with no address space left", k);
		writes += locks[k].writes;
	}
	static struct rw copy;
	memcpy(copy.state, locks[0].state, sizeof copy.state);
	read_once(&copy, 0);
	write_once(&copy, false);
	if (copy.writes != 1 || !flat(&copy))
		fail("the copy of an unlocked flat lock did not work");
	printf("rw_nomem: round 1 (no address space): %s, every lock flat, %ld writes\n", name, writes);

	/* Round 2: address space back, locks destroyed: blocks again. */
	nomem_end(&nm);
	for (int k = 0; k < NLOCKS; k++)
		if (algo->destroy)
			algo->destroy(locks[k].state);
	run_round(2, limit_s);
	for (int k = 0; k < NLOCKS; k++)
		if (flat(&locks[k]))
			fail("lock %d is still flat after destroy with address space back", k);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("rw_nomem: round 2 (address space back): every lock has its lines\n");
	return 0;
}
