/*
 * hier_nomem.c - a hierarchical lock first used when no address space is
 * left (locks/hier/hier.h, "No address space"): it gets no block of
 * per-cluster lines, and is then its top-level lock alone until destroy.
 *
 *   hier_nomem -a ALGO [-t THREADS(4)] [-n ITERS(3000)] [-l LOCKS(3)]
 *              [-c CLUSTERS(2)] [-w spin|yield|park] [-T SECONDS(30)]
 *
 * Round 1, no address space: the threads are created, RLIMIT_AS (soft) is
 * lowered to the size of the address space and the pool's current chunk
 * is used up with ls_ext_alloc (pool.h: it never takes the reserve, and
 * returns NULL once nothing else is left). Then the threads, started
 * together on LOCKS fresh (all-zero) locks, so that they race to attach
 * their lines, take a lock each iteration by lock() or by trylock() polled
 * under the waiting policy, check that nobody else is inside, bump its
 * counter and unlock it. Checks: the counters add up (mutual exclusion);
 * every lock holds its algorithm's flat marker (ls_hier_is_flat, and not
 * a block of its own); no queue node was used (the top-level lock alone
 * needs none); a copy by value of an unlocked flat lock works alone.
 * Round 2: every lock is destroyed, the limit is restored and the blocks
 * taken are given back; the same locks then serve the same workload and
 * each has attached a block of its own again.
 * ALGO: a lock with per-cluster lines (c-bo-mcs, c-tkt-tkt, hclh, hmcs;
 * hbo and cna keep nothing per cluster). Prints one line per round; exit
 * 0, 1 with a message on a failed check (a lost wake-up is reported after
 * SECONDS), 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "hier/hier.h"
#include "lock.h"
#include "pool.h"
#include "hier/topo.h"
#include "wait.h"

#define FAIL_PREFIX "hier_nomem: FAIL "
#include "fail.h"
#include "nomem.h"
#define OPT_PROG "hier_nomem"
#include "opts.h"

#define MAX_THREADS 64
#define MAX_LOCKS 64
#define MAX_TAKEN (1u << 16)

struct slot {
	_Alignas(LS_CACHELINE) unsigned char state[LS_INLINE_STATE];
	_Atomic int inside;
	long count;
};

static const struct ls_algo *algo;
static struct slot locks[MAX_LOCKS];
static unsigned nthreads = 4, nlocks = 3;
static unsigned long iters = 3000;
static int limit_s = 30;
static _Atomic int go, done;
static void *taken[MAX_TAKEN];
static size_t taken_sizes[MAX_TAKEN];
static struct nomem nm = {.blocks = taken, .sizes = taken_sizes, .max = MAX_TAKEN};

static ls_hier_lines_t *lines_of(struct slot *s)
{
	return (ls_hier_lines_t *)(void *)(s->state + LS_HIER_LINES_AT);
}

static void enter(struct slot *s)
{
	if (atomic_exchange_explicit(&s->inside, 1, memory_order_relaxed) != 0)
		fail("two threads inside lock %ld at once", (long)(s - locks));
	s->count++;
	atomic_store_explicit(&s->inside, 0, memory_order_relaxed);
}

static void *worker(void *arg)
{
	uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull | 1;
	while (!atomic_load_explicit(&go, memory_order_acquire))
		sched_yield();
	for (unsigned long i = 0; i < iters; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		struct slot *s = &locks[x % nlocks];
		if ((x >> 32) % 4 == 0) {
			struct ls_spin sp = LS_SPIN_INIT;
			while (algo->trylock(s->state) == EBUSY)
				if (ls_spin_step(&sp))
					sched_yield(); /* park: no word to sleep on */
		} else {
			algo->lock(s->state);
		}
		enter(s);
		algo->unlock(s->state);
	}
	atomic_fetch_add_explicit(&done, 1, memory_order_release);
	return NULL;
}

/* Runs the workload on the locks as they are; checks the counts. */
static void workload(void (*before_start)(void))
{
	pthread_t t[MAX_THREADS];
	atomic_store(&go, 0);
	atomic_store(&done, 0);
	for (unsigned i = 0; i < nlocks; i++)
		locks[i].count = 0;
	for (uintptr_t i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)))
			opt_error("pthread_create failed");
	if (before_start)
		before_start();
	atomic_store_explicit(&go, 1, memory_order_release);
	for (int ms = 0; atomic_load_explicit(&done, memory_order_acquire) < (int)nthreads; ms++) {
		if (ms > limit_s * 1000)
			fail("only %d of %u threads done after %d s (a lost wake-up?)", atomic_load(&done),
			     nthreads, limit_s);
		struct timespec nap = {0, 1000000};
		nanosleep(&nap, NULL);
	}
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	long sum = 0;
	for (unsigned i = 0; i < nlocks; i++)
		sum += locks[i].count;
	if (sum != (long)(nthreads * iters))
		fail("%ld acquisitions counted inside, %lu made: mutual exclusion broken", sum,
		     nthreads * iters);
}

/* No address space left: the limit at the current size, and whatever the
 * pool's current chunk still had carved out (large blocks, then lines). */
static void no_address_space(void)
{
	static const size_t sizes[] = {LS_EXT_MAX, LS_CACHELINE};
	nomem_begin(&nm, sizes, sizeof sizes / sizeof sizes[0]);
}

static void address_space_back(void)
{
	nomem_end(&nm);
}

int main(int argc, char **argv)
{
	const char *name = NULL, *clusters = "2";
	int c;
	while ((c = getopt(argc, argv, "a:t:n:l:c:w:T:")) != -1) {
		if (opt_algo_wait(c, optarg, &name))
			continue;
		switch (c) {
		case 't':
			nthreads = (unsigned)opt_number("t", optarg, 1, MAX_THREADS);
			break;
		case 'n':
			iters = (unsigned)opt_number("n", optarg, 1, 100000000);
			break;
		case 'l':
			nlocks = (unsigned)opt_number("l", optarg, 1, MAX_LOCKS);
			break;
		case 'c':
			clusters = optarg;
			break;
		case 'T':
			limit_s = (int)opt_number("T", optarg, 1, 3600);
			break;
		default:
			opt_error(
			    "usage: hier_nomem -a ALGO [-t THREADS] [-n ITERS] [-l LOCKS] [-c CLUSTERS] "
			    "[-w spin|yield|park] [-T SECONDS]");
		}
	}
	if (!name)
		opt_error("-a ALGO is required");
	if (!(algo = ls_algo_find(name)) || !(algo->caps & LS_CAP_HIER))
		opt_error("-a: '%s' is not a hierarchical algorithm", name);
	fail_algo(algo->name);
	static const char *const with_lines = " c-bo-mcs c-tkt-tkt hclh hmcs ";
	char padded[64];
	snprintf(padded, sizeof padded, " %s ", name);
	if (!strstr(with_lines, padded))
		opt_error("-a: '%s' keeps no per-cluster lines (valid:%s)", name, with_lines);
	char spec[64], err[1024];
	snprintf(spec, sizeof spec, "thread:%s", clusters);
	if (ls_topo_setup(spec, NULL, err, sizeof err))
		opt_error("%s", err);
	ls_node_counting = true; /* before the first node */

	/* Round 1: no address space when the locks are first used. */
	workload(no_address_space);
	struct ls_node_stats st;
	ls_node_stats(&st);
	for (unsigned i = 0; i < nlocks; i++) {
		ls_hier_lines_t *w = lines_of(&locks[i]);
		struct ls_hier_head *h = (struct ls_hier_head *)atomic_load(w);
		if (!ls_hier_is_flat(h) || ls_hier_load(w))
			fail("lock %u has %p attached with no address space left, not the flat marker", i,
			     (void *)h);
	}
	if (st.max_in_use != 0)
		fail("%ld queue nodes used at once by flat locks (their top-level locks need none)",
		     st.max_in_use);
	/* A copy by value of an unlocked flat lock is one too, and works. */
	static struct slot copy;
	memcpy(copy.state, locks[0].state, sizeof copy.state);
	for (int k = 0; k < 3; k++) {
		algo->lock(copy.state);
		if (algo->trylock(copy.state) != EBUSY)
			fail("trylock of a held copy of a flat lock succeeded");
		algo->unlock(copy.state);
	}
	if (algo->trylock(copy.state) != 0)
		fail("trylock of a free copy of a flat lock failed");
	algo->unlock(copy.state);
	if (!ls_hier_is_flat((struct ls_hier_head *)atomic_load(lines_of(&copy))))
		fail("a copy of a flat lock is not flat");
	algo->destroy(copy.state);

	/* Round 2: destroy, address space back, the same locks again. */
	for (unsigned i = 0; i < nlocks; i++)
		algo->destroy(locks[i].state);
	address_space_back(); /* and stdio may allocate again */
	printf("no address space: %u locks flat, %lu acquisitions, %ld queue nodes used\n", nlocks,
	       nthreads * iters, st.max_in_use);
	workload(NULL);
	for (unsigned i = 0; i < nlocks; i++)
		if (!ls_hier_load(lines_of(&locks[i])))
			fail("lock %u has no block of its own after destroy, with address space back", i);
	printf("address space back: %u locks with a block of their own\n", nlocks);
	for (unsigned i = 0; i < nlocks; i++)
		algo->destroy(locks[i].state);
	return 0;
}
