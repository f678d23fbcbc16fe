/*
 * mcs.c - MCS queue lock.
 *
 * Herlihy & Shavit, The Art of Multiprocessor Programming, ch. 7, section
 * 7.5.3 (Figs. 7.12-7.14, MCSLock), ../shared/papers/004_c3117dc34b7d1b6f.txt.
 * A thread swaps its node into `tail`; if there was a predecessor it links
 * itself behind it and spins on its OWN node until the predecessor hands the
 * lock over. Unlock hands over to the successor, or, if there is none,
 * swings the tail back to NULL with a CAS; if that fails a successor is
 * between its swap and its link, and unlock waits for the link. FIFO.
 *
 *	state:	tail	the queue (mcs_core.h), NULL when free with no waiters
 *		holder	the holder's node, for unlock (which may run on
 *			another thread)
 *	node:	mcs_core.h's; status 1 while its owner waits, 0 once
 *		handed the lock
 *
 * The queue itself (enqueue, link, wait, hand-over, the wait for a
 * successor between its swap and its link) is mcs_core.h's, shared with
 * the other locks built on an MCS chain; this file is the lock around it.
 *
 * After the release (lock.h): the CAS that empties the queue, or the grant
 * to the successor, is the last access to the lock; then the releaser frees
 * its node. Misuse: `holder` is NULL in a lock never locked and after a
 * hand-over (cleared before it), and stale only after a release that
 * emptied the queue: a stale node is only read, and the tail is NULL, so
 * an unlock of a free lock returns.
 *
 * fork() (mcs_core.h): a fork child's first live waiter links behind the
 * holder; a hold taken before the fork is released with
 * ls_mcs_fork_successor (to that waiter, or the queue emptied). The nodes
 * of the waiters the fork left behind are never freed.
 *
 * Nodes: ls_node_alloc on each acquisition; each node is freed by the thread
 * that releases the lock it held (unlock), after the hand-over or the CAS.
 * Waiting policy: ls_wait_while_eq / ls_word_publish on status and linked,
 * one waiter per word; a thread that waited for the lock wakes its linked
 * successor as soon as it acquires, if it sleeps (ls_word_prewake: the
 * wake-up overlaps the critical section). No native timeout.
 */
#define LS_NODE_CLASS LS_NODES_MCS /* pool.h: nodes reused only by this algorithm */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "lock.h"
#include "pool.h"
#include "queue/mcs_core.h"
#include "wait.h"

enum { GRANTED = 0, WAITING = 1 };

_Static_assert(sizeof(struct ls_mcs_node) <= LS_NODE_SIZE - 8,
	       "the pool links free nodes in the last 8 bytes");

struct mcs {
	struct ls_mcs_node *_Atomic tail;
	struct ls_mcs_node *holder;
};
_Static_assert(sizeof(struct mcs) <= LS_INLINE_STATE, "inline state");

/* Contended acquisition: link behind pred, wait, then own. Behind a stale
 * pred (a fork child's first live waiter, mcs_core.h), link behind the
 * holder. */
static __attribute__((noinline)) void mcs_wait(struct mcs *l, struct ls_mcs_node *n, struct ls_mcs_node *pred)
{
	LS_TEST_POINT(LS_POINT_VISIBLE);
	if (LS_UNLIKELY(ls_mcs_stale(pred)))
		/* relaxed: written before the fork by the holder, which keeps
		 * it until it has granted us (mcs_fork_release) */
		ls_mcs_link_holder(__atomic_load_n(&l->holder, __ATOMIC_RELAXED), n, WAITING);
	else
		ls_mcs_link(pred, n, WAITING);
	ls_mcs_await(n, WAITING);
	l->holder = n;
	/* Keep the next waiter awake (wait.h): if our successor has linked
	 * and sleeps, wake it now, so that its wake-up overlaps our critical
	 * section. */
	struct ls_mcs_node *next = ls_mcs_linked_next(n);
	if (next)
		ls_word_prewake(&next->status);
}

/* Enqueue n; returns with the lock held. */
static inline __attribute__((always_inline)) void mcs_acquire(struct mcs *l, struct ls_mcs_node *n)
{
	struct ls_mcs_node *pred = ls_mcs_enqueue(&l->tail, n);
	if (LS_UNLIKELY(pred != NULL)) {
		mcs_wait(l, n, pred); /* a tail call: the fast path stays a leaf */
		return;
	}
	l->holder = n;
}

/* The lock with a node cache refill: out of line, so that the fast path
 * below makes no call that returns and needs no saved registers. */
static __attribute__((noinline)) void mcs_lock_refill(struct mcs *l)
{
	mcs_acquire(l, ls_node_alloc());
}

static void mcs_lock(void *state)
{
	struct mcs *l = state;
	if (ls_node_cache_empty()) {
		mcs_lock_refill(l);
		return;
	}
	mcs_acquire(l, ls_node_alloc()); /* from the cache: no call */
}

static int mcs_trylock(void *state)
{
	struct mcs *l = state;
	struct ls_mcs_node *n = ls_mcs_trylock(&l->tail);
	if (!n)
		return EBUSY;
	l->holder = n;
	return 0;
}

/* The release of a hold taken before the process forked (mcs_core.h):
 * to the first live waiter, or the queue emptied. */
static __attribute__((noinline)) void mcs_fork_release(struct mcs *l, struct ls_mcs_node *n)
{
	struct ls_mcs_node *s = ls_mcs_fork_successor(&l->tail, n);
	if (s) {
		l->holder = NULL;
		ls_mcs_grant_release(s, GRANTED);
	} else {
		LS_TEST_POINT(LS_POINT_RELEASED);
	}
	ls_node_free(n);
}

/* A successor has linked or is linking in: hand the lock to it; or the
 * lock is free and n stale (misuse). */
static __attribute__((noinline)) void mcs_handover(struct mcs *l, struct ls_mcs_node *n)
{
	/* relaxed: the holder's own swap made it non-NULL */
	if (!atomic_load_explicit(&l->tail, memory_order_relaxed))
		return; /* free: an unlock too many (lock.h) */
	if (LS_UNLIKELY(ls_mcs_stale(n))) {
		mcs_fork_release(l, n);
		return;
	}
	l->holder = NULL; /* until the successor writes its own */
	ls_mcs_grant_release(ls_mcs_successor(n), GRANTED);
	ls_node_free(n);
}

static void mcs_unlock(void *state)
{
	struct mcs *l = state;
	struct ls_mcs_node *n = l->holder;
	if (LS_UNLIKELY(!n))
		return; /* never locked, or handed over: free (lock.h, misuse) */
	/* A stale n (freed after a release that emptied the queue) is only
	 * read (type-stable memory), and its CAS fails on the empty queue. */
	if (LS_LIKELY(ls_mcs_leave(&l->tail, n))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		ls_node_free(n);
		return;
	}
	mcs_handover(l, n);
}

static const struct ls_algo mcs_algo = {
    .name = "mcs",
    .desc = "MCS queue lock (Herlihy & Shavit AMP 7.5.3)",
    .caps = LS_CAP_FIFO | LS_CAP_QNODE,
    .rank = 16,
    .state_size = sizeof(struct mcs),
    .lock = mcs_lock,
    .trylock = mcs_trylock,
    .unlock = mcs_unlock,
};
LS_REGISTER_ALGO(mcs_algo);
