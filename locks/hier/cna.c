/*
 * cna.c - CNA, the compact NUMA-aware lock.
 *
 * Dice & Kogan, "Compact NUMA-aware Locks", EuroSys 2019 (arXiv 1810.05600):
 * section 3 (the design: an MCS queue whose holder passes the lock to a
 * waiter of its own cluster, moving the waiters of other clusters it skips
 * to a secondary queue), section 4 (the code: cna_lock, find_successor,
 * cna_unlock) and the fairness rule of section 4 (the lock is
 * eventually handed to the secondary queue). Not in ../shared/papers;
 * written from the paper's description.
 *
 * The queue is mcs_core.h's (the MCS queue every MCS-based lock shares), with
 * more fields in the node. A releaser looks for a successor of its own
 * cluster in the main queue, moves the waiters it passes over to the end of
 * the secondary queue, and hands the lock to it together with the secondary
 * queue (its head travels with the lock, in the new holder's node; its tail
 * is kept in its head node). If there is none, or after
 * LOCKSWAP_COHORT_PASSES consecutive local hand-offs, the lock goes to the
 * other clusters: to the head of the secondary queue, with the rest of the
 * main queue spliced after its tail. The paper decides the latter by a
 * pseudo-random draw (a hand-off stays local with a probability just below
 * 1); here it is a count, so that the bound is exact and testable: a holder
 * that has reached it, with an empty secondary queue, skips its own cluster's
 * waiters (into the secondary queue) to reach one of another cluster. Only
 * the lock holder touches the secondary queue. The state stays two words:
 * nothing per cluster.
 *
 *	state:	tail, holder			as mcs.c
 *	node:	q.status	1: wait; 0: the lock is yours
 *		q.linked, q.next  mcs_core.h's: the successor sets next, then
 *				linked = 1 (its last access to this node)
 *		cluster		the owner's cluster, written before it enqueues
 *				(by trylock: once it holds the lock)
 *		passes		with the lock: consecutive local hand-offs
 *		sec_head	with the lock: the secondary queue, or NULL
 *		sec_tail	in the secondary queue's head: its tail
 *	(bit 31 of status and linked is LS_PARKED)
 *
 * Transitions of a node: enqueued (status 1) -> main queue -> [moved to
 * the secondary queue (next/linked rewritten by the holder, after its
 * successor's link is complete) -> back in the main queue, spliced] ->
 * holder (status 0, with passes and sec_head) -> freed by its owner's
 * release (or by whoever releases, if another thread unlocks).
 *
 * Nodes: ls_node_alloc per acquisition, freed by the release that hands
 * the lock on (the holder's node is never in either queue by then). Waiting
 * policy: ls_wait_while_eq / ls_word_publish on status and linked, one
 * waiter per word. trylock: a CAS on an empty queue. No native timeout.
 *
 * fork() (mcs_core.h): a fork child's first live waiter links behind the
 * holder; a hold taken before the fork drops its secondary queue (of
 * waiters the fork left behind) and goes to that waiter, or the queue
 * empties.
 *
 * Bounded work: a release looks at most at LOCKSWAP_CNA_SCAN waiters
 * (default 64) for one of the cluster it wants, then gives up as if there
 * were none. The paper walks the main queue to its end, and with the pass
 * bound reached and a single cluster it did so at every release (each
 * found nobody of another cluster, handed on with the count still past the
 * bound, and the next release walked again): O(waiters) per release.
 *
 * After the release (lock.h): the CAS that empties the queue, or the grant
 * to the next holder (hand), is the last access to the lock; the node is
 * freed after it. Misuse: the holder field is NULL in a lock never locked
 * and after a hand-over (cleared before it), and stale only after a
 * release that emptied the queue: the stale node is only read, the queue
 * is empty, and an unlock of a free lock returns.
 */
#define LS_NODE_CLASS LS_NODES_CNA /* pool.h: nodes reused only by this algorithm */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "hier.h"
#include "lock.h"
#include "pool.h"
#include "queue/mcs_core.h"
#include "wait.h"

enum { GRANTED = 0, WAITING = 1 };

/* How many waiters a release looks at (find): a bound on its work. */
static uint64_t scan_max = 64;

struct node {
	struct ls_mcs_node q; /* first: a queue node is a struct node */
	uint32_t cluster;
	uint32_t passes;
	struct node *sec_head;
	struct node *sec_tail;
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct cna {
	struct ls_mcs_node *_Atomic tail;
	struct node *holder;
};
_Static_assert(sizeof(struct cna) <= LS_INLINE_STATE, "inline state");

static inline struct node *node_of(struct ls_mcs_node *q)
{
	return (struct node *)q;
}

static __attribute__((noinline)) void cna_wait(struct cna *l, struct node *n, struct ls_mcs_node *pred)
{
	LS_TEST_POINT(LS_POINT_VISIBLE);
	if (LS_UNLIKELY(ls_mcs_stale(pred))) {
		/* relaxed: written before the fork; kept until we are granted */
		struct node *h = __atomic_load_n(&l->holder, __ATOMIC_RELAXED);
		ls_mcs_link_holder(h ? &h->q : NULL, &n->q, WAITING);
	} else {
		ls_mcs_link(pred, &n->q, WAITING);
	}
	/* passes and sec_head were written before the grant */
	ls_mcs_await(&n->q, WAITING);
	l->holder = n;
}

static inline __attribute__((always_inline)) void cna_acquire(struct cna *l, struct node *n, unsigned c)
{
	n->cluster = c;
	struct ls_mcs_node *pred = ls_mcs_enqueue(&l->tail, &n->q);
	if (LS_UNLIKELY(pred != NULL)) {
		cna_wait(l, n, pred); /* a tail call: the fast path stays a leaf */
		return;
	}
	n->passes = 0;
	n->sec_head = NULL;
	l->holder = n;
}

/* With a node cache refill or the cluster lookup's slow path: out of line,
 * so that the fast path below makes no call that returns. */
static __attribute__((noinline)) void cna_lock_slow(struct cna *l)
{
	unsigned c = ls_cluster();
	cna_acquire(l, ls_node_alloc(), c);
}

static void cna_lock(void *state)
{
	struct cna *l = state;
	unsigned c;
	if (ls_node_cache_empty() || !ls_cluster_fast(&c)) {
		cna_lock_slow(l);
		return;
	}
	cna_acquire(l, ls_node_alloc(), c); /* from the cache: no call */
}

static int cna_trylock(void *state)
{
	struct cna *l = state;
	struct node *n = node_of(ls_mcs_trylock(&l->tail));
	if (!n)
		return EBUSY;
	/* Only the holder reads these: nobody walks to the holder's node. */
	n->cluster = ls_cluster();
	n->passes = 0;
	n->sec_head = NULL;
	l->holder = n;
	return 0;
}

/* Gives the lock to x, with the secondary queue sec and the count. */
static void hand(struct node *x, struct node *sec, uint32_t passes)
{
	x->sec_head = sec;
	x->passes = passes;
	ls_mcs_grant_release(&x->q, GRANTED);
}

/* The successor of m in the main queue if m's link is complete, else NULL. */
static inline struct node *linked_next(struct node *m)
{
	return node_of(ls_mcs_linked_next(&m->q));
}

/* Makes x the successor of m, linked (holder only: a run of the secondary
 * queue or a splice of it, whose owners only watch `status`). */
static void set_next(struct node *m, struct node *x)
{
	/* relaxed: published by the grant (release) that hands the lock on */
	atomic_store_explicit(&m->q.next, &x->q, memory_order_relaxed);
	atomic_store_explicit(&m->q.linked, 1, memory_order_relaxed);
}

/* Moves the main-queue run first..last (linked) to the end of the
 * secondary queue *sh. Their owners only watch `status`, and each link in
 * the run is complete, so nobody else writes these next/linked fields. */
static void to_secondary(struct node **sh, struct node *first, struct node *last)
{
	/* relaxed: as in set_next */
	atomic_store_explicit(&last->q.next, NULL, memory_order_relaxed);
	atomic_store_explicit(&last->q.linked, 0, memory_order_relaxed);
	if (*sh)
		set_next((*sh)->sec_tail, first);
	else
		*sh = first;
	(*sh)->sec_tail = last;
}

/* The first node from succ on, among the first LOCKSWAP_CNA_SCAN that are
 * already linked, whose cluster is (want_local) or is not (!want_local)
 * `cluster`; the run before it is moved to the secondary queue. NULL (and
 * nothing moved) if none. */
static struct node *find(struct node **sh, struct node *succ, uint32_t cluster, bool want_local)
{
	struct node *prev = NULL;
	uint64_t seen = 0;
	for (struct node *x = succ; x && seen < scan_max; prev = x, x = linked_next(x), seen++) {
		LS_TEST_POINT(LS_POINT_SCAN);
		if ((x->cluster == cluster) == want_local) {
			if (prev)
				to_secondary(sh, succ, prev);
			return x;
		}
	}
	return NULL;
}

static __attribute__((noinline)) void cna_handover(struct cna *l, struct node *n)
{
	l->holder = NULL; /* until the next holder writes its own (lock.h, misuse) */
	struct node *succ = node_of(ls_mcs_successor(&n->q)), *sh = n->sec_head, *x;
	LS_INJECT();
	if (n->passes < ls_cohort_passes) {
		if ((x = find(&sh, succ, n->cluster, true)) != NULL) {
			hand(x, sh, n->passes + 1);
			goto done;
		}
	} else if (!sh) {
		/* The bound is reached and nobody was skipped yet: skip our
		 * own cluster's waiters to reach another cluster's. */
		if ((x = find(&sh, succ, n->cluster, false)) != NULL) {
			hand(x, sh, 0);
			goto done;
		}
		hand(succ, NULL, n->passes + 1); /* none waits, among those looked at */
		goto done;
	}
	if (sh) {
		/* Flush: the oldest skipped waiter first, then the main queue. */
		set_next(sh->sec_tail, succ);
		hand(sh, NULL, 0);
	} else {
		hand(succ, NULL, 0); /* of another cluster: none of ours was linked */
	}
done:
	ls_node_free(n);
}

/* The release of a hold taken before the process forked (mcs_core.h): its
 * secondary queue is of waiters the fork left behind, dropped; the lock
 * goes to the first live waiter of the main queue, or the queue empties. */
static __attribute__((noinline)) void cna_fork_release(struct cna *l, struct node *n)
{
	struct node *s = node_of(ls_mcs_fork_successor(&l->tail, &n->q));
	if (s) {
		l->holder = NULL;
		hand(s, NULL, 0);
	} else {
		LS_TEST_POINT(LS_POINT_RELEASED);
	}
	ls_node_free(n);
}

static __attribute__((noinline)) void cna_unlock_slow(struct cna *l, struct node *n)
{
	/* relaxed: the holder's own swap made it non-NULL */
	if (!atomic_load_explicit(&l->tail, memory_order_relaxed))
		return; /* free: n is stale (lock.h, misuse) */
	if (LS_UNLIKELY(ls_mcs_stale(&n->q))) {
		cna_fork_release(l, n);
		return;
	}
	struct node *sh = n->sec_head;
	struct ls_mcs_node *expected = &n->q;
	/* (D) acquire: pairs with (C) in ls_mcs_link */
	if (sh && (atomic_load_explicit(&n->q.linked, memory_order_acquire) & ~LS_PARKED) == 0) {
		/* No successor in the main queue: the secondary queue becomes
		 * the main queue (its tail has next == NULL, linked == 0). */
		struct node *st = sh->sec_tail;
		LS_INJECT();
		/* release: pairs with the acquire of the swap that gets st */
		if (atomic_compare_exchange_strong_explicit(&l->tail, &expected, &st->q, memory_order_acq_rel,
							    memory_order_relaxed)) {
			l->holder = NULL;
			hand(sh, NULL, 0);
			ls_node_free(n);
			return;
		}
	}
	cna_handover(l, n);
}

static void cna_unlock(void *state)
{
	struct cna *l = state;
	struct node *n = l->holder;
	if (LS_UNLIKELY(!n))
		return; /* never locked, or handed over: free (lock.h, misuse) */
	/* A stale n (after a release that emptied the queue) is only read
	 * (type-stable memory): the slow path finds the queue empty, and the
	 * CAS below fails on it. */
	if (LS_UNLIKELY(n->sec_head != NULL)) {
		cna_unlock_slow(l, n);
		return;
	}
	if (LS_LIKELY(ls_mcs_leave(&l->tail, &n->q))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		ls_node_free(n);
		return;
	}
	cna_unlock_slow(l, n);
}

static const struct ls_param cna_params[] = {
    LS_COHORT_PASSES_PARAM,
    {"LOCKSWAP_CNA_SCAN", "waiters a release looks at for one of the right cluster (bounds its work), count",
     &scan_max, 1, 1u << 20},
    {0},
};

static const struct ls_algo cna_algo = {
    .name = "cna",
    .desc = "compact NUMA-aware MCS lock, secondary queue (Dice & Kogan, EuroSys 2019)",
    .caps = LS_CAP_HIER | LS_CAP_QNODE,
    .rank = 75,
    .state_size = sizeof(struct cna),
    .params = cna_params,
    .lock = cna_lock,
    .trylock = cna_trylock,
    .unlock = cna_unlock,
};
LS_REGISTER_ALGO(cna_algo);
