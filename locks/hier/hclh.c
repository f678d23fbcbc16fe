/*
 * hclh.c - HCLH, the hierarchical CLH queue lock.
 *
 * Herlihy & Shavit, The Art of Multiprocessor Programming, ch. 7, section
 * 7.8.2 (Figs. 7.28-7.32, HCLHLock), ../shared/papers/004_c3117dc34b7d1b6f.txt;
 * due to Luchangco, Nussbaum and Shavit. The figure of the queues (7.28)
 * was lost in the text extraction; the listings and the prose are intact
 * and this follows them, with the changes below.
 *
 * One CLH queue per cluster (hier.h) and a global CLH queue. A thread
 * enqueues its node in its cluster's local queue and waits on its
 * predecessor's node until either the lock is its own (the predecessor is
 * of its cluster and neither tail-when-spliced nor successor-must-wait is
 * set) or it is the cluster master (no predecessor, or the predecessor has
 * tail-when-spliced set, or is of another cluster). The master splices the
 * whole local queue, up to the local tail it reads, onto the global queue
 * with one CAS, marks the last node it spliced tail-when-spliced, and waits
 * on its new global predecessor like any CLH waiter. Release clears the
 * node's successor-must-wait. Sequences of waiters of one cluster thus
 * follow each other in the global queue.
 *
 * Changes, and why:
 *   - Nodes come from ls_node_alloc and are freed, instead of being
 *     recycled through thread-local myNode/myPred (a thread holds any
 *     number of locks here, and unlock may come from another thread), and
 *     the queues start empty (NULL) so that all-zero is unlocked. A freed
 *     node must not be read again, yet a spliced node can have two readers:
 *     its successor in the global queue, and a thread that enqueued behind
 *     it in the local queue after the splice. So the master, after
 *     splicing, empties the local queue with a CAS from the last node it
 *     spliced; only if that fails (someone enqueued behind it) does it set
 *     tail-when-spliced, together with LREF: the node is then freed by
 *     whichever of its two readers is done last (GDONE, LDONE). The book
 *     leaves the local tail pointing at a spliced node, which its
 *     recycling can hand to a thread of the same cluster that enqueues it
 *     elsewhere; with threads that move between clusters that would
 *     deadlock. Everything else (the state bits, the splice, the spin
 *     conditions) is the book's.
 *   - The cluster id is the one read when the thread enqueues, so a thread
 *     that migrates keeps one cluster for one acquisition.
 *
 *	inline:	global		the global queue's tail, NULL when free
 *		lines		the block (hier.h): a local tail per cluster
 *	head:	holder		the holder's node, for unlock
 *		fastq		the node of the fast path and trylock
 *	node:	state		cluster (bits 0-7) | SMW (successor must wait)
 *				| TWS (tail when spliced) | LREF | LDONE | GDONE
 *				| OWN (fastq) | LS_PARKED
 *		gen		the fork generation it was enqueued in (fork.h;
 *				not fastq's, which is always the holder's)
 *
 * Transitions of a node: enqueued (cluster|SMW) -> spliced (in the global
 * queue; + TWS|LREF if it was the last spliced and a local successor
 * appeared) -> holder -> released (SMW cleared) -> freed by its global
 * successor once that has seen the release (GDONE), or by its owner's
 * unlock if it was still the global tail (the CAS to NULL), and, with
 * LREF, only once its local successor has read TWS (LDONE) too.
 *
 * Waiting policy: predicates over the node word with ls_wait_while_eq;
 * every change a waiter may wait for (SMW cleared, TWS set) is a CAS that
 * clears LS_PARKED and wakes all sleepers if it was set. trylock (and the
 * fast path of hier.h): a CAS of the lock's own node (fastq, in the head;
 * OWN: never freed) onto an empty global queue, bypassing the local
 * queues. fastq is ready (SMW | OWN) whenever the global queue is empty:
 * so from the block's attachment, and again once its global successor has
 * seen it released (global_done, the last reader: the queue is not empty
 * before then). A fast acquisition is then that CAS alone: nothing to claim
 * first, and nothing to give back after the release. No native timeout (a
 * CLH waiter cannot leave).
 *
 * After the release (lock.h): the release is the CAS that empties the
 * global queue, or the CAS that clears SMW in the holder's node (fastq is
 * in the block, and its global successor frees nothing then: it only makes
 * fastq ready, before it holds the lock); after either, the unlocker
 * touches only its own pool node (global_done) and the kernel (a futex
 * wake). A trylock of a free lock finds fastq ready: never EBUSY (the flag
 * fastq_busy that this replaces was cleared after the release, and a
 * trylock in between found the lock busy). Misuse: an unlock of a lock
 * never used (no block) returns at once; of a free one, its CAS finds the
 * global queue empty (the stale holder is not the tail) and it returns.
 *
 * fork() (fork.h): in a fork child, pool nodes stamped before the fork are
 * the holder's (the thread that forked, or one that is gone) and those of
 * waiters the fork left behind, which never release theirs. A thread
 * whose local predecessor is stale is its cluster's master at once (the
 * queue's head is gone); a master whose global predecessor is stale (the
 * first live one) waits on the holder's node instead (`holder`, which
 * nobody clears) and is its global successor (global_done); a releaser
 * whose global queue's tail is stale (every waiter is gone) empties the
 * queue. The tree is entered by slow paths only: no fast path pays.
 *
 * Without a block (no address space, hier.h): there is no fastq, and a
 * queue holder's node would have nowhere to be found by unlock (the 16
 * inline bytes are the global tail and the lines word), so the global
 * tail's word is a ticket lock instead (`tkt`, ls_tkt of queue/turn.h:
 * FIFO like the queue, no node) from the marker's attachment to destroy,
 * which zeroes it. The marker's holder is NULL: unlock's CAS of the tail
 * from it fails (a held ticket word is never 0; on a free word that is 0 it
 * succeeds and changes nothing), and its slow path sees the marker.
 */
#define LS_NODE_CLASS LS_NODES_HCLH /* pool.h: nodes reused only by this algorithm */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>

#include "fork.h"
#include "hier.h"
#include "lock.h"
#include "pool.h"
#include "queue/turn.h"
#include "wait.h"

#define CLUSTER 0xffu
#define SMW (1u << 8)
#define TWS (1u << 9)
#define LREF (1u << 10)
#define LDONE (1u << 11)
#define GDONE (1u << 12)
#define OWN (1u << 13) /* the lock's own fastq: never freed */

struct node {
	_Atomic uint32_t state;
	uint32_t gen;
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct local {
	struct node *_Atomic tail;
	char pad[LS_CACHELINE - sizeof(void *)];
};
_Static_assert(sizeof(struct local) == LS_CACHELINE, "one line per cluster");

struct head {
	struct ls_hier_head h;
	struct node *holder;
	struct node fastq; /* the fast path's node */
};

struct hclh {
	union {
		struct node *_Atomic global; /* with a block */
		_Atomic uint64_t tkt;	     /* with the marker `flat` */
	};
	ls_hier_lines_t lines;
};
_Static_assert(sizeof(struct hclh) <= LS_INLINE_STATE, "inline state");
_Static_assert(offsetof(struct hclh, lines) == LS_HIER_LINES_AT, "hier.h");

/* The marker of a lock without a block (hier.h). */
static const struct head flat = {.h = LS_HIER_FLAT_HEAD, .holder = NULL};

static uint64_t combine_ns = 0;

/* Sets and clears bits of a node word that a waiter may wait for; wakes
 * the sleepers. Returns the old value. `last`: the change releases the
 * lock (the test point, before the wake; lock.h). */
static uint32_t update(_Atomic uint32_t *w, uint32_t set, uint32_t clear, bool last)
{
	/* relaxed: the CAS below orders; a stale value only fails it */
	uint32_t old = atomic_load_explicit(w, memory_order_relaxed), v;
	LS_INJECT();
	do
		v = (old | set) & ~clear & ~LS_PARKED;
	/* (B) release: pairs with (A) in wait_pred */
	while (
	    !atomic_compare_exchange_weak_explicit(w, &old, v, memory_order_acq_rel, memory_order_relaxed));
	if (last)
		LS_TEST_POINT(LS_POINT_RELEASED);
	if (old & LS_PARKED)
		ls_futex_wake(w, INT_MAX);
	return old;
}

/* A new block: fastq is ready (see the file comment). */
static void init_block(struct ls_hier_head *hh)
{
	/* relaxed: the block is published by ls_hier_enter_attach's release CAS */
	atomic_store_explicit(&((struct head *)hh)->fastq.state, SMW | OWN, memory_order_relaxed);
}

/* The global successor is done with x (or x's owner, if x was the global
 * tail at its release). */
static void global_done(struct node *x)
{
	/* acquire: LREF was set before x was released (see hclh_lock_tree) */
	uint32_t v = atomic_load_explicit(&x->state, memory_order_acquire);
	if (v & OWN) {
		/* fastq, never in a local queue: no LREF. Its successor (us) is
		 * its last reader: ready again for the next fast path, which can
		 * come only once the queue is empty, after our own release.
		 * relaxed: ordered by that release and the fast path's CAS. */
		atomic_store_explicit(&x->state, SMW | OWN, memory_order_relaxed);
		return;
	}
	if (!(v & LREF) || (atomic_fetch_or_explicit(&x->state, GDONE, memory_order_acq_rel) & LDONE))
		ls_node_free(x);
}

/* x's local successor has read TWS. */
static void local_done(struct node *x)
{
	if (atomic_fetch_or_explicit(&x->state, LDONE, memory_order_acq_rel) & GDONE)
		ls_node_free(x);
}

/* Waits until x's word, without PARKED, satisfies `until`; returns it. */
#define WAIT_PRED(x, v, until)                                                                               \
	for (;;) {                                                                                           \
		/* (A) acquire: pairs with (B) in update */                                                  \
		v = atomic_load_explicit(&(x)->state, memory_order_acquire) & ~LS_PARKED;                    \
		if (until)                                                                                   \
			break;                                                                               \
		LS_INJECT();                                                                                 \
		ls_wait_while_eq(&(x)->state, v);                                                            \
	}

/* x was enqueued before the process forked (fastq never is stale: it is
 * the holder's). relaxed: both fields written before the swap or splice
 * that published x. */
static inline bool stale(struct node *x)
{
	return ls_fork_child() && !(atomic_load_explicit(&x->state, memory_order_relaxed) & OWN) &&
	       ls_fork_stale(__atomic_load_n(&x->gen, __ATOMIC_RELAXED));
}

static __attribute__((noinline)) void hclh_lock_tree(struct hclh *l, struct head *h)
{
	if (!h && (h = (struct head *)ls_hier_enter_attach(&l->lines, false, &flat, init_block)) == &flat) {
		ls_tkt_lock(&l->tkt);
		return;
	}
	unsigned c = ls_cluster_fold(ls_cluster(), h->h.nclusters);
	struct local *q = ls_hier_line(&h->h, 1 + c);
	struct node *n = ls_node_alloc(), *pred, *gpred, *ltail;
	uint32_t v;
	/* relaxed: published by the release of the exchange or CAS that enqueues the node */
	atomic_store_explicit(&n->state, c | SMW, memory_order_relaxed);
	n->gen = ls_fork_stamp();
	LS_INJECT();
	/* release: a successor that gets n sees its state; acquire: pairs with
	 * the release CAS below when we get NULL */
	pred = atomic_exchange_explicit(&q->tail, n, memory_order_acq_rel);
	if (pred)
		LS_TEST_POINT(LS_POINT_VISIBLE);
	if (pred && !stale(pred)) { /* behind a stale one: the master */
		/* waitForGrantOrClusterMaster (Fig. 7.31, line 11) */
		WAIT_PRED(pred, v, (v & CLUSTER) != c || (v & TWS) || !(v & SMW));
		if ((v & CLUSTER) == c && !(v & TWS)) {
			global_done(pred); /* released: we own the lock */
			h->holder = n;
			return;
		}
		local_done(pred); /* we are the cluster master */
	}
	/* Exercise 89's remedy for batches that are too short: while the lock
	 * is busy, the master lets its cluster-mates join its batch for up to
	 * LOCKSWAP_HCLH_COMBINE_NS before it splices (each pause a step of
	 * the waiting policy). */
	/* relaxed: a hint: how long to combine */
	if (combine_ns && atomic_load_explicit(&l->global, memory_order_relaxed)) {
		struct ls_spin sp = LS_SPIN_INIT;
		uint64_t until = ls_now_ns() + combine_ns;
		while (atomic_load_explicit(&l->global, memory_order_relaxed) && ls_now_ns() < until)
			if (ls_spin_step(&sp))
				break; /* park: the budgets are spent, splice and sleep */
	}
	/* Splice the local queue onto the global queue (lines 18-22). */
	LS_INJECT();
	/* relaxed: the CAS below orders; a stale value only fails it */
	gpred = atomic_load_explicit(&l->global, memory_order_relaxed);
	do
		ltail = atomic_load_explicit(&q->tail, memory_order_acquire);
	/* release: the spliced nodes' states are seen by the next splicer's
	 * waiters; acquire: gpred's state */
	while (!atomic_compare_exchange_weak_explicit(&l->global, &gpred, ltail, memory_order_acq_rel,
						      memory_order_relaxed));
	LS_INJECT();
	/* Empty the local queue, unless someone enqueued behind ltail: then it
	 * will read ltail's TWS (line 24) and ltail has two readers. ltail is
	 * not released before this: its owner waits for us, or is us. */
	struct node *expected = ltail;
	if (!atomic_compare_exchange_strong_explicit(&q->tail, &expected, NULL, memory_order_acq_rel,
						     memory_order_relaxed))
		update(&ltail->state, TWS | LREF, 0, false);
	if (gpred)
		LS_TEST_POINT(LS_POINT_VISIBLE);
	if (gpred && stale(gpred)) {
		/* relaxed: written before the fork by the holder, whose release
		 * (clearing SMW) orders the rest */
		struct node *hn = h->holder;
		if (hn)
			gpred = hn; /* else a holder that is gone: wait for ever */
	}
	if (gpred) {
		WAIT_PRED(gpred, v, !(v & SMW)); /* line 25 */
		global_done(gpred);
	}
	h->holder = n;
}

/* The fast path (hier.h) and trylock: the lock's own node onto an empty
 * global queue. It needs no cluster: it is in no local queue, and only
 * its global successor reads it (for SMW), before that successor holds
 * the lock; so by the time the queue is empty again nobody reads it, and
 * it is ready (see the file comment): nothing is written before the CAS,
 * which fails harmlessly if the queue is not empty. */
static inline bool global_try(struct hclh *l, struct head *h)
{
	struct node *expected = NULL;
	LS_INJECT();
	/* acquire: pairs with the release CAS in hclh_unlock; release: the
	 * node's ready state, for a successor */
	if (!atomic_compare_exchange_strong_explicit(&l->global, &expected, &h->fastq, memory_order_acq_rel,
						     memory_order_relaxed))
		return false;
	h->holder = &h->fastq;
	return true;
}

static void hclh_lock(void *state)
{
	struct hclh *l = state;
	struct head *h = (struct head *)ls_hier_try_enter(&l->lines);
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (LS_LIKELY(h) && ls_hier_fastpath &&
	    atomic_load_explicit(&l->global, memory_order_relaxed) == NULL && LS_LIKELY(global_try(l, h)))
		return;
	hclh_lock_tree(l, h);
}

static int hclh_trylock(void *state)
{
	struct hclh *l = state;
	struct head *h = (struct head *)ls_hier_enter(&l->lines);
	if (LS_UNLIKELY(!h) &&
	    (h = (struct head *)ls_hier_enter_attach(&l->lines, false, &flat, init_block)) == &flat)
		return ls_tkt_try(&l->tkt) ? 0 : EBUSY;
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (atomic_load_explicit(&l->global, memory_order_relaxed) != NULL || !global_try(l, h)) {
		ls_hier_leave(&h->h, &flat);
		return EBUSY;
	}
	return 0;
}

/* A pool node's release by the CAS that emptied the queue (or, on the
 * marker's zero word, nothing: n is NULL). */
static __attribute__((noinline)) void hclh_emptied(struct node *n)
{
	if (n)
		global_done(n);
}

/* The CAS found the queue's tail was `seen`, not the holder's node. */
static __attribute__((noinline)) void hclh_release(struct hclh *l, struct head *h, struct node *n,
						   struct node *seen)
{
	if (h == &flat) {
		ls_tkt_unlock(&l->tkt); /* nothing if it is free */
		return;
	}
	if (!seen)
		return; /* the queue is empty: the lock is free (lock.h, misuse) */
	while (stale(seen)) {
		/* Every waiter is gone (see the header): empty the queue.
		 * release: as unlock's CAS */
		if (atomic_compare_exchange_strong_explicit(&l->global, &seen, NULL, memory_order_release,
							    memory_order_relaxed)) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			hclh_emptied(n == &h->fastq ? NULL : n);
			return;
		}
	}
	/* (B): the global successor now frees n (Fig. 7.32, line 31), or
	 * makes fastq ready */
	update(&n->state, 0, SMW, true);
}

static void hclh_unlock(void *state)
{
	struct hclh *l = state;
	/* relaxed: the lock attached it, and this thread holds the lock */
	struct head *h = (struct head *)atomic_load_explicit(&l->lines, memory_order_relaxed);
	if (LS_UNLIKELY(!h))
		return; /* never locked: free (lock.h, misuse) */
	struct node *n = h->holder, *expected = n;
	/* No global successor: empty the queue. release: pairs with the
	 * acquire of the next splice or CAS that reads NULL. (Fails for the
	 * marker: see the file comment.) */
	if (LS_LIKELY(atomic_compare_exchange_strong_explicit(&l->global, &expected, NULL,
							      memory_order_release, memory_order_relaxed))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		/* fastq stays ready; a pool node is ours to finish with */
		if (LS_UNLIKELY(n != &h->fastq))
			hclh_emptied(n);
	} else {
		hclh_release(l, h, n, expected);
	}
	ls_hier_leave(&h->h, &flat); /* compares h only */
}

static void hclh_destroy(void *state)
{
	struct hclh *l = state;
	if (ls_hier_detach(&l->lines) == &flat.h)
		/* relaxed: destroy runs with the lock unheld and unused */
		atomic_store_explicit(&l->tkt, 0, memory_order_relaxed); /* the all-zero state */
}

static const struct ls_param hclh_params[] = {
    {"LOCKSWAP_HCLH_COMBINE_NS",
     "how long a cluster master waits for cluster-mates to join its batch "
     "before splicing it, while the lock is busy, in ns",
     &combine_ns, 0, 1000000000},
    LS_HIER_FASTPATH_PARAM,
    {0},
};

static const struct ls_algo hclh_algo = {
    .name = "hclh",
    .desc = "hierarchical CLH, local queues spliced by cluster masters (Herlihy & Shavit AMP 7.8.2)",
    .caps = LS_CAP_HIER | LS_CAP_QNODE,
    .rank = 73,
    .state_size = sizeof(struct hclh),
    .params = hclh_params,
    .destroy = hclh_destroy,
    .lock = hclh_lock,
    .trylock = hclh_trylock,
    .unlock = hclh_unlock,
};
LS_REGISTER_ALGO(hclh_algo);
