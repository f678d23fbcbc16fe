/*
 * hier_order.c - the order in which a hierarchical lock serves queued
 * waiters of several clusters: the pass bound (fairness) and the locality.
 *
 *   hier_order -a ALGO -c CLUSTERS[/GROUPS] -o ORDER [-b BOUND] [-B GROUP_BOUND]
 *              [-P PASSES] [-s MAX_SWITCHES] [-g MAX_GROUP_SWITCHES] [-T SECONDS(30)]
 *
 * Clusters come from LOCKSWAP_CLUSTER=thread:CLUSTERS[/GROUPS] semantics
 * (locks/hier/topo.h): the k-th thread to ask is in cluster k mod CLUSTERS. The
 * main thread asks first (cluster 0) and takes the lock. Then one waiter
 * per character of ORDER (a cluster digit, 0-9) is started, in that order;
 * before each, threads that only ask for their cluster and exit move the
 * round-robin to the wanted cluster; each waiter starts only once the
 * previous one is asleep in futex(2), i.e. queued (the policy is park).
 * Then the main thread unlocks; each waiter, once it has the lock, logs
 * itself and unlocks. Checks:
 *   every waiter got the lock (a lost wake-up is reported after SECONDS);
 *   -b: while a waiter of another cluster than the holder's has not had
 *       the lock yet, the lock is never handed to the holder's cluster
 *       more than BOUND times in a row (LOCKSWAP_COHORT_PASSES = BOUND);
 *   -B: the same for groups (LOCKSWAP_HMCS_GROUP_PASSES = GROUP_BOUND),
 *       counting hand-offs between clusters of the same group;
 *   -s / -g: at most that many hand-offs go to another cluster / group;
 *   -P: the lock's own bound, if not BOUND (to show that the check fails).
 * The fast path (LOCKSWAP_HIER_FASTPATH) is off: the main thread's
 * acquisition climbs the hierarchy like the waiters'. Prints the order of
 * acquisitions as cluster digits. Exit 0, 1 with a message on a failed
 * check, 2 on bad usage. Waiting is by polling /proc with 1 ms naps;
 * nothing depends on timing to pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hier/hier.h"
#include "lock.h"
#include "pool.h"
#include "hier/topo.h"
#include "wait.h"

#define FAIL_PREFIX "hier_order: FAIL "
#include "fail.h"
#define OPT_PROG "hier_order"
#include "opts.h"

#define MAX_WAITERS 64

static const struct ls_algo *algo;
static void *state;
static int limit_ms = 30000;

struct waiter {
	pthread_t thread;
	unsigned cluster;
	_Atomic pid_t tid;
	_Atomic int acquired;
};
static struct waiter w[MAX_WAITERS];
static unsigned nwaiters, log_[MAX_WAITERS];
static _Atomic unsigned nlog;

static void nap_ms(int ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
}

/* True if thread tid is asleep in futex(2) (/proc/self/task/TID/stat
 * state 'S' and .../syscall SYS_futex). */
static int asleep_in_futex(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] != 'S')
		return 0;
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return strncmp(buf, "running", 7) != 0 && strtol(buf, NULL, 10) == SYS_futex;
}

static void *asker(void *arg)
{
	*(unsigned *)arg = ls_cluster();
	return NULL;
}

static void *waiter(void *arg)
{
	struct waiter *me = arg;
	unsigned c = ls_cluster();
	if (c != me->cluster)
		fail("waiter got cluster %u, expected %u (the round-robin rule of topo.h)", c, me->cluster);
	atomic_store_explicit(&me->tid, (pid_t)syscall(SYS_gettid), memory_order_release);
	algo->lock(state);
	log_[atomic_fetch_add_explicit(&nlog, 1, memory_order_relaxed)] = (unsigned)(me - w);
	atomic_store_explicit(&me->acquired, 1, memory_order_release);
	algo->unlock(state);
	return NULL;
}

static unsigned asked = 1; /* threads that have asked: the main thread */

/* The next thread to ask gets cluster want: let others ask until then. */
static void advance_to(unsigned want, unsigned nclusters)
{
	for (; asked % nclusters != want; asked++) {
		unsigned got;
		pthread_t t;
		if (pthread_create(&t, NULL, asker, &got))
			opt_error("pthread_create failed");
		pthread_join(t, NULL);
	}
	asked++; /* the waiter */
}

int main(int argc, char **argv)
{
	const char *name = NULL, *order = NULL, *clusters = NULL;
	long bound = -1, gbound = -1, max_sw = -1, max_gsw = -1, passes = -1;
	int c;
	while ((c = getopt(argc, argv, "a:c:o:b:B:P:s:g:T:")) != -1) {
		switch (c) {
		case 'a':
			name = optarg;
			break;
		case 'c':
			clusters = optarg;
			break;
		case 'o':
			order = optarg;
			break;
		case 'b':
			bound = (long)opt_number("b", optarg, 0, 1000000);
			break;
		case 'B':
			gbound = (long)opt_number("B", optarg, 0, 1000000);
			break;
		case 'P':
			passes = (long)opt_number("P", optarg, 0, 1000000);
			break;
		case 's':
			max_sw = (long)opt_number("s", optarg, 0, 1000000);
			break;
		case 'g':
			max_gsw = (long)opt_number("g", optarg, 0, 1000000);
			break;
		case 'T':
			limit_ms = (int)opt_number("T", optarg, 1, 3600) * 1000;
			break;
		default:
			opt_error(
			    "usage: hier_order -a ALGO -c CLUSTERS[/GROUPS] -o ORDER [-b N] [-B N] [-P N] "
			    "[-s N] [-g N] [-T S]");
		}
	}
	if (!name || !order || !clusters)
		opt_error("-a, -c and -o are required");
	if (!(algo = ls_algo_find(name)) || !(algo->caps & LS_CAP_HIER))
		opt_error("-a: '%s' is not a hierarchical algorithm", name);
	fail_algo(algo->name);
	char spec[64], err[1024];
	snprintf(spec, sizeof spec, "thread:%s", clusters);
	if (ls_topo_setup(spec, NULL, err, sizeof err))
		opt_error("%s", err);
	unsigned ncl = ls_topo_clusters();
	nwaiters = (unsigned)strlen(order);
	if (nwaiters == 0 || nwaiters > MAX_WAITERS)
		opt_error("-o: 1..%d waiters", MAX_WAITERS);
	for (unsigned i = 0; i < nwaiters; i++) {
		if (order[i] < '0' || (unsigned)(order[i] - '0') >= ncl)
			opt_error("-o: '%c' is not a cluster (0..%u)", order[i], ncl - 1);
		w[i].cluster = (unsigned)(order[i] - '0');
	}
	/* the tunables, as the shim would set them */
	if (passes < 0)
		passes = bound;
	for (const struct ls_param *p = algo->params; p && p->env; p++) {
		if (!strcmp(p->env, "LOCKSWAP_COHORT_PASSES") && passes >= 0)
			*p->value = (uint64_t)(passes ? passes : 1);
		if (!strcmp(p->env, "LOCKSWAP_HMCS_GROUP_PASSES") && gbound >= 0)
			*p->value = (uint64_t)(gbound ? gbound : 1);
		if (!strcmp(p->env, "LOCKSWAP_HIER_FASTPATH"))
			*p->value = 0;
	}
	ls_wait_cfg.policy = LS_WAIT_PARK;

	if (ls_cluster() != 0)
		fail("the first thread to ask is not in cluster 0");
	state = opt_state(algo);
	if (!state)
		opt_error("cannot allocate the lock");
	algo->lock(state);
	for (unsigned i = 0; i < nwaiters; i++) {
		advance_to(w[i].cluster, ncl);
		if (pthread_create(&w[i].thread, NULL, waiter, &w[i]))
			opt_error("pthread_create failed");
		pid_t tid;
		int ms = 0;
		while (!(tid = atomic_load_explicit(&w[i].tid, memory_order_acquire)) ||
		       !asleep_in_futex(tid)) {
			if (++ms > limit_ms)
				fail("waiter %u (cluster %u) is not asleep in futex(2) after %d ms", i,
				     w[i].cluster, limit_ms);
			nap_ms(1);
		}
	}
	algo->unlock(state);
	for (int ms = 0; atomic_load_explicit(&nlog, memory_order_acquire) < nwaiters; ms++) {
		if (ms > limit_ms)
			fail("only %u of %u waiters got the lock after %d ms (a lost wake-up?)",
			     atomic_load(&nlog), nwaiters, limit_ms);
		nap_ms(1);
	}
	for (unsigned i = 0; i < nwaiters; i++)
		pthread_join(w[i].thread, NULL);

	/* the acquisitions, by cluster: the main thread, then the log */
	unsigned seq[MAX_WAITERS + 1], n = nwaiters + 1;
	seq[0] = 0;
	for (unsigned i = 0; i < nwaiters; i++)
		seq[i + 1] = w[log_[i]].cluster;
	printf("order:");
	for (unsigned i = 0; i < n; i++)
		printf(" %u", seq[i]);
	unsigned sw = 0, gsw = 0, run = 0, grun = 0, worst = 0, gworst = 0;
	for (unsigned j = 1; j < n; j++) {
		unsigned a = seq[j - 1], b = seq[j];
		unsigned ga = ls_topo_group(a), gb = ls_topo_group(b);
		int other = 0, gother = 0; /* a waiter of another cluster/group is still waiting */
		for (unsigned k = j; k < n; k++) {
			other |= seq[k] != a;
			gother |= ls_topo_group(seq[k]) != ga;
		}
		sw += a != b;
		gsw += ga != gb;
		run = a == b && other ? run + 1 : 0;
		grun = ga == gb && a != b && gother ? grun + 1 : (ga == gb && gother ? grun : 0);
		if (run > worst)
			worst = run;
		if (grun > gworst)
			gworst = grun;
	}
	printf("\nswitches=%u group_switches=%u longest_local_run=%u longest_group_run=%u\n", sw, gsw, worst,
	       gworst);
	if (bound >= 0 && worst > (unsigned)bound)
		fail("%u hand-offs in a row inside one cluster while another cluster waited (bound %ld)",
		     worst, bound);
	if (gbound >= 0 && gworst > (unsigned)gbound)
		fail("%u hand-offs in a row between clusters of one group while another group waited (bound "
		     "%ld)",
		     gworst, gbound);
	if (max_sw >= 0 && sw > (unsigned)max_sw)
		fail("%u hand-offs to another cluster (at most %ld expected)", sw, max_sw);
	if (max_gsw >= 0 && gsw > (unsigned)max_gsw)
		fail("%u hand-offs to another group (at most %ld expected)", gsw, max_gsw);
	return 0;
}
