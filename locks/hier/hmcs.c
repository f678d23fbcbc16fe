/*
 * hmcs.c - HMCS, the hierarchical MCS lock, over two or three levels.
 *
 * Chabbi, Fagan, Mellor-Crummey, "High Performance Locks for Multi-level
 * NUMA Systems", PPoPP 2015: section 4 (the HMCS<n> algorithm: acquire and
 * release helpers over a tree of MCS locks, a pass count carried in the
 * status of the queue node, a threshold per level) and section 5 (its
 * properties). Not in ../shared/papers; written from the paper's
 * description.
 *
 * A tree of MCS locks (mcs_core.h's queue): one per cluster (the leaves), one
 * per group if the topology has a middle level (topo.h), and the root. A
 * thread enqueues its own node at its cluster's leaf. At the head of a
 * level's queue (no predecessor, or handed the level with ACQUIRE_PARENT) it
 * acquires the parent level with the level's own node (one per tree node,
 * embedded in its line), and so on up to the root; handed the level with a
 * count, the levels above are held already. To release a level, a holder
 * whose count is at most the level's pass bound and whose node has a linked
 * successor hands it the level with the count plus one (the parents stay
 * held, by the level's node); otherwise it empties the level's queue and
 * releases the parent level (or, with a successor, see the refinement).
 * Bounds: LOCKSWAP_COHORT_PASSES at the clusters,
 * LOCKSWAP_HMCS_GROUP_PASSES at the groups. Every level's queue is FIFO.
 *
 * One refinement, for the bound: a holder that has reached it with a
 * successor first queues its level again at the parent, with the level's
 * second node, then releases the parent, and hands its successor the level
 * with QUEUED (wait on that node). In the paper the successor climbs only
 * once it has woken up with ACQUIRE_PARENT, and meanwhile a cohort already
 * running can take the parent back and pass it on again: the other
 * clusters would wait for more than the bound. Hence two nodes per level
 * (q[2]), `cur` naming the one in use.
 *
 * After the release (lock.h). The paper releases the parent first and then
 * hands its own level on; the parent's release is the lock's (a fast-path
 * acquirer can then take the root, unlock and destroy the lock), so the
 * level's hand-on wrote into a block that another mutex could have reused
 * by then, and waited on it for ever. Here a holder without a successor
 * empties its level first and releases the parent last: the next thread to
 * arrive at the level climbs with the level's other node (the holder
 * switches `cur` before the CAS that empties the level, and switches back
 * if the CAS fails because a successor is linking in), so the node that
 * holds the parent is never queued twice. With a successor (a pass, or the
 * bound) the hand-over to it is the last access: until that successor has
 * released, the lock is not free, even once the parent has been released
 * by the bound's refinement. After its last store an unlock touches only
 * its own leaf node (freed) and the kernel (a futex wake).
 *
 * The fast path's node, fastq, is clean (linked 0, next NULL) whenever the
 * root's queue is empty: in a new block, after a release that emptied the
 * queue (nobody linked to it), and after a hand-over, before which the
 * releaser cleans it (its successor's link was its last access). So a fast
 * acquisition is one CAS of an empty root: nothing to claim first and
 * nothing to give back after the release, so a trylock of a free lock is
 * never EBUSY (the flag fastq_busy that this replaces was cleared after the
 * release). Misuse: an unlock of a lock never used (no block) returns at
 * once; one of a free lock finds the root's queue empty and returns (its
 * fast path's CAS fails on it; its tree path looks first).
 *
 *	inline:	root		the root's MCS tail
 *		lines		the block (hier.h): a line per cluster, then
 *				per group: { tail, qnode for the parent }
 *	head:	holder		the holder's leaf node (unlock may be another
 *				thread's)
 *		cluster		the holder's cluster
 *		fast		1: taken by the fast path (hier.h): the root
 *				alone, with fastq, the lock's own root node
 *	level:	tail		the level's MCS queue
 *		gen		line 1's: the fork generation the lock was
 *				last repaired in
 *		q[2], cur	its nodes in the parent's queue; the level's
 *				holder chooses cur, published with the level
 *	node:	status		WAIT, then a count 1..bound+1 (the level is
 *				yours, the parents held), ACQUIRE_PARENT (climb
 *				with q[cur]) or QUEUED (q[cur] is queued at
 *				the parent: wait on it)
 *		linked, next	mcs_core.h's
 *	(bit 31 of status and linked is LS_PARKED)
 *
 * Nodes: the leaf node is ls_node_alloc'ed per acquisition and freed by the
 * release of the leaf level (after the hand-over or the CAS); the tree's
 * own nodes and fastq live in the block and are reused by whichever thread
 * climbs next, each only after its previous successor's link is complete
 * (as in mcs.c). Waiting policy: ls_wait_while_eq / ls_word_publish
 * on status and linked, one waiter per word. trylock: the fast path's
 * attempt. No native timeout.
 *
 * fork() (fork.h). In a fork child the tree may hold, besides the lock's
 * holder and its path, waiters the fork left behind at every level, and
 * levels held by threads that were climbing (their level nodes queued at
 * the parent). Every acquisition and release that reaches the tree goes
 * through the child's repair first (ls_fork_repair: the first runs it, the
 * others wait; the head records its generation), so the repair sees the tree as the fork left it (a fast
 * path may have taken an empty root since): it keeps the holder's path,
 * each of its queues cut after the holder's node there (the leaf node and
 * the path's level nodes, or fastq at the root), and empties every other
 * queue. The holder is the fast path's if fastq is the root's tail (a
 * fast path of the child, or the forking thread's with nobody behind it)
 * or if `fast` says so (written before the fork: a root with waiters takes
 * no fast path); else the tree's (holder, cluster). A holder that is gone
 * keeps the lock, as under glibc.
 *
 * Without a block (no address space, hier.h): there is no fastq, and a
 * root holder's node would have nowhere to be found by unlock (the 16
 * inline bytes are the root's tail and the lines word), so the root's word
 * is a ticket lock instead (`tkt`, ls_tkt of queue/turn.h: FIFO
 * like the root's queue, no node) from the marker's attachment to
 * destroy, which zeroes it. The marker's `fast` is 1 and its fastq's
 * `linked` 1: unlock takes the fast path's branch for a holder with a
 * successor, which sees the marker, so neither the uncontended nor the
 * tree's unlock tests for it.
 */
#define LS_NODE_CLASS LS_NODES_HMCS /* pool.h: nodes reused only by this algorithm */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "fork.h"
#include "hier.h"
#include "lock.h"
#include "pool.h"
#include "queue/mcs_core.h"
#include "queue/turn.h"
#include "wait.h"

#define WAIT 0x7fffffffu
#define ACQUIRE_PARENT 0x7ffffffeu
#define QUEUED 0x7ffffffdu /* the parent is queued for: wait on q[cur] */
#define COHORT_START 1u
#define MAX_LEVELS 2 /* below the root */

_Static_assert(sizeof(struct ls_mcs_node) <= LS_NODE_SIZE - 8,
	       "the pool links free nodes in the last 8 bytes");

/* A level of the tree below the root. */
struct level {
	struct ls_mcs_node *_Atomic tail;
	struct ls_mcs_node q[2]; /* this level's nodes in its parent's queue */
	uint32_t cur;		 /* the one in use; the level's holder's */
	_Atomic uint32_t gen;	 /* line 1's only: the fork generation the lock was
				  * last repaired in (the head has no room left) */
};
_Static_assert(sizeof(struct level) == LS_CACHELINE, "one line per tree node");

struct head {
	struct ls_hier_head h; /* h.own[CLUSTER], h.own[FAST] (the header) */
	struct ls_mcs_node *holder;
	struct ls_mcs_node fastq; /* the fast path's node at the root */
};
enum { CLUSTER, FAST };
_Static_assert(sizeof(struct head) <= LS_CACHELINE, "the head is one line");

struct hmcs {
	union {
		struct ls_mcs_node *_Atomic root; /* with a block */
		_Atomic uint64_t tkt;		  /* with the marker `flat` */
	};
	ls_hier_lines_t lines;
};
_Static_assert(sizeof(struct hmcs) <= LS_INLINE_STATE, "inline state");
_Static_assert(offsetof(struct hmcs, lines) == LS_HIER_LINES_AT, "hier.h");

/* The marker of a lock without a block (hier.h). Its fastq has a
 * successor linked, as far as unlock can tell: see hmcs_unlock. */
static const struct head flat = {.h = {.ext = {.owner = NULL}, .own = {[FAST] = 1}}, .fastq = {.linked = 1}};

/* The levels of an acquisition by a thread of one cluster: its leaf, its
 * group if any, then the root (lv[n]). */
struct path {
	struct level *lv[MAX_LEVELS];
	unsigned n;
};

static uint64_t group_passes = 64;

/* Enqueues n on tail and links it; true if the queue was empty (n is at
 * its head and holds the level), false if n must wait (await). */
static bool arrive(struct ls_mcs_node *_Atomic *tail, struct ls_mcs_node *n)
{
	struct ls_mcs_node *pred = ls_mcs_enqueue(tail, n);
	if (!pred)
		return true;
	LS_TEST_POINT(LS_POINT_VISIBLE);
	ls_mcs_link(pred, n, WAIT);
	return false;
}

/* Waits for n's turn; returns the status it was handed. */
static uint32_t await(struct ls_mcs_node *n)
{
	return ls_mcs_await(n, WAIT);
}

static inline struct ls_mcs_node *_Atomic *tail_of(struct hmcs *l, const struct path *p, unsigned i)
{
	return i == p->n ? &l->root : &p->lv[i]->tail;
}

/* n has been handed level i with status st: climb to the root, unless
 * the levels above are held already (a count). */
static void climb(struct hmcs *l, const struct path *p, unsigned i, struct ls_mcs_node *n, uint32_t st)
{
	for (; i < p->n; i++) {
		if (st != COHORT_START && st != ACQUIRE_PARENT && st != QUEUED)
			return; /* passed inside the cohort: the parents are held */
		struct level *t = p->lv[i];
		/* relaxed: published by the grant (release) that hands the level on */
		atomic_store_explicit(&n->status, COHORT_START, memory_order_relaxed);
		n = &t->q[t->cur];
		if (st == QUEUED) /* the releaser queued n for us */
			st = await(n);
		else
			st = arrive(tail_of(l, p, i + 1), n) ? COHORT_START : await(n);
	}
}

/* Grants s the level (the lock's release if `last`). */
static inline void grant(struct ls_mcs_node *s, uint32_t v, bool last)
{
	if (last)
		ls_mcs_grant_release(s, v);
	else
		ls_mcs_grant(s, v);
}

/* Releases level i, held by n. `last`: its release (or the parent's) is
 * the lock's release, the last access to the block (see the header). */
static void release(struct hmcs *l, const struct path *p, unsigned i, struct ls_mcs_node *n, bool last)
{
	if (i == p->n) {
		if (ls_mcs_leave(&l->root, n)) {
			if (last)
				LS_TEST_POINT(LS_POINT_RELEASED);
		} else {
			grant(ls_mcs_successor(n), COHORT_START, last);
		}
		return;
	}
	struct level *t = p->lv[i];
	/* relaxed: our own node's status, written by the grant we acquired */
	uint32_t cur = atomic_load_explicit(&n->status, memory_order_relaxed) & ~LS_PARKED;
	uint32_t c = t->cur;
	struct ls_mcs_node *next = ls_mcs_linked_next(n);
	if (!next) {
		/* Empty the level, then release the parent (see the header):
		 * the level's next head climbs with the other node. */
		t->cur = 1 - c;
		if (ls_mcs_leave(&t->tail, n)) {
			release(l, p, i + 1, &t->q[c], last);
			return;
		}
		t->cur = c; /* a successor is linking in: the level is still ours */
		next = ls_mcs_successor(n);
	}
	if (cur <= (i == 0 ? ls_cohort_passes : group_passes)) {
		grant(next, cur + 1, last); /* the parents stay held */
		return;
	}
	/* The bound, with a successor: queue the cohort at the parent again
	 * with the other node before releasing it, so that the clusters that
	 * are already queued there go first and none that is not yet can
	 * overtake us while our successor wakes up. The lock is not free
	 * until that successor has released it. */
	arrive(tail_of(l, p, i + 1), &t->q[1 - c]); /* behind q[c] at least: never empty */
	release(l, p, i + 1, &t->q[c], false);
	t->cur = 1 - c;
	grant(next, QUEUED, last); /* (B) publishes cur */
}

/* The path of cluster c. */
static inline void path_of(struct head *h, unsigned c, struct path *p)
{
	p->n = 1;
	p->lv[0] = ls_hier_line(&h->h, 1 + c);
	if (h->h.ngroups) {
		unsigned g = ls_cluster_fold(ls_topo_group(c), h->h.ngroups);
		p->lv[p->n++] = ls_hier_line(&h->h, 1 + h->h.nclusters + g);
	}
}

/* ---- fork (see the header) ---- */

struct hmcs_fork {
	struct hmcs *l;
	struct head *h;
};

/* Cuts a queue after n (n its only node: its holder's). */
static void cut_after(struct ls_mcs_node *_Atomic *tail, struct ls_mcs_node *n)
{
	/* relaxed: published by the release of ls_fork_repair's lock; no
	 * thread of the child is in the tree */
	atomic_store_explicit(&n->linked, 0, memory_order_relaxed);
	atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
	atomic_store_explicit(tail, n, memory_order_relaxed);
}

static void hmcs_fork_repair(void *arg)
{
	struct hmcs *l = ((struct hmcs_fork *)arg)->l;
	struct head *h = ((struct hmcs_fork *)arg)->h;
	unsigned nlevels = h->h.nclusters + h->h.ngroups;
	struct level *path[MAX_LEVELS] = {NULL};
	struct path p = {.n = 0};
	/* acquire: pairs with a fast path's CAS; relaxed below: as cut_after */
	struct ls_mcs_node *root = atomic_load_explicit(&l->root, memory_order_acquire);
	if (root && root != &h->fastq) {
		if (h->h.own[FAST]) {
			cut_after(&l->root, &h->fastq);
		} else {
			path_of(h, h->h.own[CLUSTER], &p);
			struct ls_mcs_node *n = h->holder;
			for (unsigned i = 0; i < p.n; i++) {
				path[i] = p.lv[i];
				cut_after(&p.lv[i]->tail, n);
				n = &p.lv[i]->q[p.lv[i]->cur];
			}
			cut_after(&l->root, n);
		}
	}
	for (unsigned i = 0; i < nlevels; i++) {
		struct level *t = ls_hier_line(&h->h, 1 + i);
		bool on_path = false;
		for (unsigned k = 0; k < p.n; k++)
			on_path |= path[k] == t;
		if (!on_path)
			atomic_store_explicit(&t->tail, NULL, memory_order_relaxed);
	}
}

static __attribute__((noinline)) void hmcs_fork(struct hmcs *l, struct head *h)
{
	struct hmcs_fork f = {l, h};
	struct level *first = ls_hier_line(&h->h, 1);
	ls_fork_repair(&l->lines, &first->gen, hmcs_fork_repair, &f);
}

/* ---- the lock ---- */

static __attribute__((noinline)) void hmcs_lock_tree(struct hmcs *l, struct head *h)
{
	if (!h && (h = (struct head *)ls_hier_enter_attach(&l->lines, true, &flat, NULL)) == &flat) {
		ls_tkt_lock(&l->tkt);
		return;
	}
	if (LS_UNLIKELY(ls_fork_child()))
		hmcs_fork(l, h);
	unsigned c = ls_cluster_fold(ls_cluster(), h->h.nclusters);
	struct path p;
	path_of(h, c, &p);
	struct ls_mcs_node *n = ls_node_alloc();
	climb(l, &p, 0, n, arrive(&p.lv[0]->tail, n) ? COHORT_START : await(n));
	h->holder = n;
	h->h.own[CLUSTER] = c;
	h->h.own[FAST] = 0;
}

/* The fast path (hier.h) and trylock: fastq onto an empty root queue.
 * fastq is clean then (see the header): the CAS alone, which fails
 * harmlessly if the queue is not empty. */
static inline bool fast_try(struct hmcs *l, struct head *h)
{
	struct ls_mcs_node *expected = NULL;
	LS_INJECT();
	/* as the exchange in ls_mcs_enqueue */
	if (LS_LIKELY(atomic_compare_exchange_strong_explicit(&l->root, &expected, &h->fastq,
							      memory_order_acq_rel, memory_order_relaxed))) {
		h->h.own[FAST] = 1;
		return true;
	}
	return false;
}

static void hmcs_lock(void *state)
{
	struct hmcs *l = state;
	struct head *h = (struct head *)ls_hier_try_enter(&l->lines);
	if (LS_LIKELY(h) && ls_hier_fastpath && LS_LIKELY(fast_try(l, h)))
		return;
	hmcs_lock_tree(l, h);
}

static int hmcs_trylock(void *state)
{
	struct hmcs *l = state;
	struct head *h = (struct head *)ls_hier_enter(&l->lines);
	if (LS_UNLIKELY(!h) &&
	    (h = (struct head *)ls_hier_enter_attach(&l->lines, true, &flat, NULL)) == &flat)
		return ls_tkt_try(&l->tkt) ? 0 : EBUSY;
	if (fast_try(l, h))
		return 0;
	ls_hier_leave(&h->h, &flat);
	return EBUSY;
}

static __attribute__((noinline)) void hmcs_unlock_tree(struct hmcs *l, struct head *h)
{
	/* relaxed: the holder's own acquisition made it non-NULL */
	if (!atomic_load_explicit(&l->root, memory_order_relaxed))
		return; /* free: the holder field is stale (lock.h, misuse) */
	if (LS_UNLIKELY(ls_fork_child()))
		hmcs_fork(l, h);
	struct ls_mcs_node *n = h->holder;
	struct path p;
	path_of(h, h->h.own[CLUSTER], &p);
	release(l, &p, 0, n, true);
	ls_node_free(n);
}

/* The fast path's holder has a successor (or is linking one), or the root
 * is free (misuse); or h is the marker, whose fastq says so. */
static __attribute__((noinline)) void hmcs_unlock_handon(struct hmcs *l, struct head *h)
{
	if (h == &flat) {
		ls_tkt_unlock(&l->tkt); /* nothing if it is free */
		return;
	}
	if (LS_UNLIKELY(ls_fork_child())) {
		hmcs_fork(l, h);
		/* waiters the fork left behind are gone from the root */
		if (ls_mcs_leave(&l->root, &h->fastq)) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			return;
		}
	}
	/* Unlinked, and the CAS failed: a successor has swapped itself in
	 * (the root is not NULL), or the lock is free and the fast flag stale
	 * (lock.h, misuse). relaxed: a successor's swap, once made, stays. */
	if (!(atomic_load_explicit(&h->fastq.linked, memory_order_relaxed) & ~LS_PARKED) &&
	    !atomic_load_explicit(&l->root, memory_order_relaxed))
		return;
	struct ls_mcs_node *next = ls_mcs_successor(&h->fastq);
	/* Clean fastq for the next fast path before the hand-over: the
	 * successor's link was its last access (see the header). relaxed:
	 * published by the grant's release. */
	atomic_store_explicit(&h->fastq.linked, 0, memory_order_relaxed);
	atomic_store_explicit(&h->fastq.next, NULL, memory_order_relaxed);
	ls_mcs_grant_release(next, COHORT_START);
}

static void hmcs_unlock(void *state)
{
	struct hmcs *l = state;
	/* relaxed: the lock attached it, and this thread holds the lock */
	struct head *h = (struct head *)atomic_load_explicit(&l->lines, memory_order_relaxed);
	if (LS_UNLIKELY(!h))
		return; /* never locked: free (lock.h, misuse) */
	if (LS_UNLIKELY(!h->h.own[FAST]))
		hmcs_unlock_tree(l, h);
	/* The marker's fastq has linked == 1: no CAS of its word. */
	else if (LS_LIKELY(ls_mcs_leave(&l->root, &h->fastq)))
		LS_TEST_POINT(LS_POINT_RELEASED);
	else
		hmcs_unlock_handon(l, h);
	ls_hier_leave(&h->h, &flat.h); /* compares h only */
}

static void hmcs_destroy(void *state)
{
	struct hmcs *l = state;
	if (ls_hier_detach(&l->lines) == &flat.h)
		/* relaxed: destroy runs with the lock unheld and unused */
		atomic_store_explicit(&l->tkt, 0, memory_order_relaxed); /* the all-zero state */
}

static const struct ls_param hmcs_params[] = {
    LS_COHORT_PASSES_PARAM,
    {"LOCKSWAP_HMCS_GROUP_PASSES",
     "consecutive hand-offs of the root inside a group (the middle level, "
     "when there is one), count",
     &group_passes, 1, 1u << 30},
    LS_HIER_FASTPATH_PARAM,
    {0},
};

static const struct ls_algo hmcs_algo = {
    .name = "hmcs",
    .desc = "hierarchical MCS over 2-3 levels (Chabbi, Fagan & Mellor-Crummey, PPoPP 2015)",
    .caps = LS_CAP_HIER | LS_CAP_QNODE,
    .rank = 74,
    .state_size = sizeof(struct hmcs),
    .params = hmcs_params,
    .destroy = hmcs_destroy,
    .lock = hmcs_lock,
    .trylock = hmcs_trylock,
    .unlock = hmcs_unlock,
};
LS_REGISTER_ALGO(hmcs_algo);
