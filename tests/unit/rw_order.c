/*
 * rw_order.c - the order in which a reader-writer lock serves queued
 * readers and writers: FIFO (mcs-rw), writer preference and the readers'
 * patience (c-rw-wp), cluster locality and the pass bound of a cohort
 * writer lock (c-rw-wp).
 *
 *   rw_order -a ALGO -o ORDER [-k own|reader|writer] [-c CLUSTERS] [-F] [-W] [-R]
 *            [-s MAX_SWITCHES] [-b BOUND] [-P PASSES] [-T SECONDS(30)]
 *
 * ORDER is a list of waiters, each a mode and a cluster: "r0w1w0" is a
 * reader of cluster 0, then a writer of cluster 1, then one of cluster 0.
 * Clusters are those of LOCKSWAP_CLUSTER=thread:CLUSTERS (locks/hier/topo.h),
 * where a thread's cluster is its ls_topo_thread_index (which the round-robin
 * rule sets at its first lookup): each waiter sets its own before it looks
 * (tests/unit/hier_order.c checks the rule itself). The main thread is in
 * cluster 0 and takes the write lock, with the hierarchical fast
 * path off (LOCKSWAP_HIER_FASTPATH=0), so that it holds its cluster's lock
 * as a waiter would. Then the waiters start one after another, each once
 * the previous one is asleep in futex(2), i.e. waiting (the policy is
 * park); the main thread unlocks; each waiter, once it has the lock, logs
 * itself and unlocks. Checks:
 *   every waiter got the lock (a lost wake-up is reported after SECONDS);
 *   -F  FIFO: a writer enters after every waiter that arrived before it and
 *       before every one that arrived after it (readers between two writers
 *       enter as a group, in any order among themselves);
 *   -W  writer preference: every writer enters before every reader;
 *   -R  no reader waits for a writer that arrived after it (the patience
 *       barrier of c-rw-wp, with LOCKSWAP_CRWWP_PATIENCE small);
 *   -s  at most MAX_SWITCHES hand-offs of the write lock between clusters
 *       (the main thread's, then the writers' acquisitions);
 *   -b  while a writer of another cluster than the holder's waits, the
 *       write lock is never handed inside the holder's cluster more than
 *       BOUND times in a row (LOCKSWAP_COHORT_PASSES = BOUND);
 *   -P  the lock's own bound, if not BOUND (to show that -b can fail).
 * The algorithm's other tunables are read from the environment, as the shim
 * reads them. -k says what every acquisition asks for (rwlock.h, PREFERENCE):
 * the algorithm's own policy (the default: the orders above are the
 * algorithms' own), reader preference (the default kind) or writer
 * preference (the _NP kind). Prints the order ("w0 r0 ..."). Exit 0, 1 with a message on a
 * failed check, 2 on bad usage. Nothing depends on timing to pass: the
 * waits for "asleep" poll /proc with 1 ms naps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hier/topo.h"
#include "lock.h"
#include "pool.h"
#include "rwlock/rwlock.h"
#include "wait.h"

#define FAIL_PREFIX "rw_order: FAIL "
#include "fail.h"
#define OPT_PROG "rw_order"
#include "opts.h"
#include "proctask.h"

#define MAX_WAITERS 32

static const struct ls_rwalgo *algo;
static void *state;
static unsigned how = LS_RW_OWN_POLICY;

struct waiter {
	pthread_t thread;
	char mode; /* 'r' or 'w' */
	unsigned cluster;
	_Atomic pid_t tid;
};
static struct waiter w[MAX_WAITERS];
static unsigned nwaiters, log_[MAX_WAITERS];
static _Atomic unsigned nlog;

static void usage(const char *msg)
{
	fprintf(stderr, "rw_order: %s\n", msg);
	exit(2);
}

static void nap_ms(int ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
}

static void *waiter(void *arg)
{
	struct waiter *me = arg;
	void *token = NULL;
	ls_topo_thread_index = me->cluster;
	if (ls_cluster() != me->cluster)
		fail("waiter is not in cluster %u", me->cluster);
	atomic_store_explicit(&me->tid, (pid_t)syscall(SYS_gettid), memory_order_release);
	if (me->mode == 'w')
		algo->wrlock(state, how);
	else if (algo->rdlock(state, how, &token))
		fail("rdlock failed");
	log_[atomic_fetch_add_explicit(&nlog, 1, memory_order_relaxed)] = (unsigned)(me - w);
	if (me->mode == 'w')
		algo->wrunlock(state);
	else
		algo->rdunlock(state, token);
	return NULL;
}

static unsigned number(const char *s)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v > 1000000)
		usage("a number option is not a number");
	return (unsigned)v;
}

/* The tunables, as the shim would set them (opts.h), then the test's own. */
static void params(long passes)
{
	opt_rwparams_env();
	for (size_t i = 0; i < ls_rwalgo_count(); i++)
		for (const struct ls_param *p = ls_rwalgo_at(i)->params; p && p->env; p++) {
			if (!strcmp(p->env, "LOCKSWAP_COHORT_PASSES") && passes >= 0)
				*p->value = (uint64_t)(passes ? passes : 1);
			if (!strcmp(p->env, "LOCKSWAP_HIER_FASTPATH"))
				*p->value = 0;
		}
}

int main(int argc, char **argv)
{
	const char *name = NULL, *order = NULL;
	unsigned ncl = 1;
	long max_sw = -1, bound = -1, passes = -1;
	int fifo = 0, wpref = 0, patient = 0, limit_ms = 30000, c;
	static const char *const kinds[] = {"own", "reader", "writer"};
	static const unsigned kind_how[] = {LS_RW_OWN_POLICY, 0, LS_RW_PREFER_WRITER};
	while ((c = getopt(argc, argv, "a:o:k:c:FWRs:b:P:T:")) != -1) {
		switch (c) {
		case 'a':
			name = optarg;
			break;
		case 'o':
			order = optarg;
			break;
		case 'k':
			how = kind_how[opt_choose("k", "preference", optarg, kinds, 3)];
			break;
		case 'c':
			ncl = number(optarg);
			break;
		case 'F':
			fifo = 1;
			break;
		case 'W':
			wpref = 1;
			break;
		case 'R':
			patient = 1;
			break;
		case 's':
			max_sw = number(optarg);
			break;
		case 'b':
			bound = number(optarg);
			break;
		case 'P':
			passes = number(optarg);
			break;
		case 'T':
			limit_ms = (int)number(optarg) * 1000;
			break;
		default:
			usage("usage: rw_order -a ALGO -o ORDER [-k own|reader|writer] [-c CLUSTERS] [-F] "
			      "[-W] [-R] [-s N] [-b N] "
			      "[-P N] "
			      "[-T S]");
		}
	}
	if (!name || !order)
		usage("-a and -o are required");
	char err[1400], spec[32];
	if (!(algo = ls_rwalgo_lookup(name, err, sizeof err)) || ls_rwalgo_start(algo, NULL, err, sizeof err))
		usage(err);
	if (ncl < 1 || ncl > 9)
		usage("-c: 1..9 clusters");
	size_t len = strlen(order);
	if (len == 0 || len % 2 || len / 2 > MAX_WAITERS)
		usage("-o: 1 to 32 waiters, each r or w and a cluster digit");
	nwaiters = (unsigned)len / 2;
	for (unsigned i = 0; i < nwaiters; i++) {
		w[i].mode = order[2 * i];
		w[i].cluster = (unsigned)(order[2 * i + 1] - '0');
		if ((w[i].mode != 'r' && w[i].mode != 'w') || w[i].cluster >= ncl)
			usage("-o: each waiter is r or w, then a cluster below -c");
	}
	snprintf(spec, sizeof spec, "thread:%u", ncl);
	if (ls_topo_setup(spec, NULL, err, sizeof err))
		usage(err);
	params(passes >= 0 ? passes : bound);
	ls_wait_cfg.policy = LS_WAIT_PARK;
	fail_prefix = FAIL_PREFIX;

	ls_topo_thread_index = 0;
	if (ls_cluster() != 0)
		fail("the main thread is not in cluster 0");
	if (!(state = ls_ext_alloc(algo->state_size)))
		usage("cannot allocate the lock");
	algo->wrlock(state, how);
	for (unsigned i = 0; i < nwaiters; i++) {
		if (pthread_create(&w[i].thread, NULL, waiter, &w[i]))
			usage("pthread_create failed");
		pid_t tid;
		int ms = 0;
		while (!(tid = atomic_load_explicit(&w[i].tid, memory_order_acquire)) ||
		       !proctask_in_futex(tid)) {
			if (++ms > limit_ms)
				fail("algo=%s: waiter %u (%c%u) is not asleep in futex(2) after %d ms", name,
				     i, w[i].mode, w[i].cluster, limit_ms);
			nap_ms(1);
		}
	}
	algo->wrunlock(state);
	for (int ms = 0; atomic_load_explicit(&nlog, memory_order_acquire) < nwaiters; ms++) {
		if (ms > limit_ms)
			fail("algo=%s: only %u of %u waiters got the lock after %d ms (a lost wake-up?)",
			     name, atomic_load(&nlog), nwaiters, limit_ms);
		nap_ms(1);
	}
	for (unsigned i = 0; i < nwaiters; i++)
		pthread_join(w[i].thread, NULL);

	/* pos[i]: when waiter i entered */
	unsigned pos[MAX_WAITERS];
	printf("order: w0");
	for (unsigned k = 0; k < nwaiters; k++) {
		pos[log_[k]] = k;
		printf(" %c%u", w[log_[k]].mode, w[log_[k]].cluster);
	}
	putchar('\n');
	for (unsigned i = 0; i < nwaiters; i++)
		for (unsigned j = i + 1; j < nwaiters; j++) {
			bool wi = w[i].mode == 'w', wj = w[j].mode == 'w';
			if (fifo && (wi || wj) && pos[j] < pos[i])
				fail("algo=%s: not FIFO: waiter %u (%c) entered before waiter %u (%c), which "
				     "arrived first",
				     name, j, w[j].mode, i, w[i].mode);
			if (wpref && wi != wj && pos[wi ? j : i] < pos[wi ? i : j])
				fail("algo=%s: not writer preference: a reader entered before a writer",
				     name);
			if (patient && !wi && wj && pos[j] < pos[i])
				fail("algo=%s: reader %u waited for writer %u, which arrived after it", name,
				     i, j);
		}

	/* the write lock's hand-offs between clusters: main, then the writers */
	unsigned seq[MAX_WAITERS + 1], n = 1, sw = 0, run = 0, worst = 0;
	seq[0] = 0;
	for (unsigned k = 0; k < nwaiters; k++)
		if (w[log_[k]].mode == 'w')
			seq[n++] = w[log_[k]].cluster;
	for (unsigned j = 1; j < n; j++) {
		bool other = false; /* a writer of another cluster still waits */
		for (unsigned k = j; k < n; k++)
			other |= seq[k] != seq[j - 1];
		sw += seq[j] != seq[j - 1];
		run = seq[j] == seq[j - 1] && other ? run + 1 : 0;
		if (run > worst)
			worst = run;
	}
	printf("switches=%u longest_local_run=%u\n", sw, worst);
	if (max_sw >= 0 && sw > (unsigned)max_sw)
		fail("algo=%s: %u hand-offs of the write lock to another cluster (at most %ld expected)",
		     name, sw, max_sw);
	if (bound >= 0 && worst > (unsigned)bound)
		fail("algo=%s: %u hand-offs in a row inside one cluster while another cluster waited (bound "
		     "%ld)",
		     name, worst, bound);
	return 0;
}
