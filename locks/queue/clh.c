/*
 * clh.c - CLH queue lock, NULL-tail variant.
 *
 * Herlihy & Shavit, The Art of Multiprocessor Programming, ch. 7, section
 * 7.5.2 (Figs. 7.9-7.11, CLHLock), ../shared/papers/004_c3117dc34b7d1b6f.txt.
 * A thread swaps its node into `tail` and spins on its predecessor's node
 * until the predecessor marks it released; the queue is implicit, each
 * waiter knowing only its predecessor. FIFO.
 *
 * Variant. The book starts the tail at a dummy released node. Here the
 * all-zero state must be unlocked and a copied unlocked state must not share
 * a node with the original, so an empty queue is a NULL tail: a thread whose
 * swap returns NULL owns the lock at once, and unlock first tries to swing
 * the tail from its own node back to NULL (a CAS, as in MCS) before marking
 * its node released for a successor.
 *
 *	state:	tail	last node enqueued, NULL when free with no waiters
 *		holder	the holder's node, for unlock (which may run on
 *			another thread)
 *	node:	locked	its owner holds or waits for the lock: the fork
 *			generation it was enqueued in, stamped
 *			(ls_fork_odd_stamp: never 0); 0: released (bit 31 is
 *			LS_PARKED: the successor sleeps)
 *
 * Nodes come from ls_node_alloc, one per acquisition. Who frees which node:
 * the SUCCESSOR frees its predecessor's node once it has seen it released
 * (nobody else can reach it then); a releaser whose CAS finds no successor
 * frees its own node. The releaser's futex wake may land on a node already
 * freed and reused: type-stable memory makes that a spurious wake-up.
 *
 * After the release (lock.h): the CAS that empties the queue, or the store
 * into the holder's node, is the last access to the lock; then the node is
 * freed (by us, or by the successor) and a futex wake may land on it.
 * Misuse: `holder` is NULL in a lock never locked and after a hand-over
 * (the releaser clears it), and stale only after a release that emptied
 * the queue, where the CAS finds NULL: an unlock of a free lock returns.
 *
 * fork() (fork.h): in the child, the nodes stamped before the fork are the
 * holder's (at the head) and those of waiters that are gone, which never
 * release theirs; the first live waiter, the only one whose predecessor is
 * stale, watches the holder's node instead (l->holder) and frees it; a
 * holder whose node is stale empties the queue if its tail is stale (every
 * waiter is gone), else releases its node for that waiter, keeping
 * `holder` until the waiter writes its own. Stale waiters' nodes are never
 * freed.
 *
 * Waiting policy: ls_wait_while_eq on the predecessor's word, ls_word_publish
 * to release (one waiter per word, so no herd); a thread that waited for the
 * lock wakes a successor asleep on its node as soon as it acquires
 * (ls_word_prewake: the wake-up overlaps the critical section). No native
 * timeout (a CLH waiter cannot leave the queue; see the abortable locks).
 */
#define LS_NODE_CLASS LS_NODES_CLH /* pool.h: nodes reused only by this algorithm */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "fork.h"
#include "lock.h"
#include "pool.h"
#include "wait.h"

struct node {
	_Atomic uint32_t locked;
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct clh {
	struct node *_Atomic tail;
	struct node *holder;
};
_Static_assert(sizeof(struct clh) <= LS_INLINE_STATE, "inline state");

/* Stamped before this process forked (fork.h). */
static inline bool clh_stale(struct node *n)
{
	/* relaxed: stamped before the swap that published n */
	uint32_t v = atomic_load_explicit(&n->locked, memory_order_relaxed);
	return (v & ~LS_PARKED) && ls_fork_stale_odd(v);
}

/* Contended acquisition: wait for pred's release, then own. Behind a stale
 * pred (the first live waiter of a fork child), wait for the holder's. */
static __attribute__((noinline)) void clh_wait(struct clh *l, struct node *n, struct node *pred)
{
	LS_TEST_POINT(LS_POINT_VISIBLE);
	LS_INJECT();
	if (LS_UNLIKELY(clh_stale(pred))) {
		/* relaxed: written before the fork; kept until we write ours */
		struct node *h = __atomic_load_n(&l->holder, __ATOMIC_RELAXED);
		if (h)
			pred = h; /* else a holder that is gone: wait for ever */
	}
	/* (A) acquire: pairs with (B) in clh_unlock */
	uint32_t v = atomic_load_explicit(&pred->locked, memory_order_acquire) & ~LS_PARKED;
	if (v)
		ls_wait_while_eq(&pred->locked, v);
	LS_INJECT();
	ls_node_free(pred); /* released: we hold its last reference */
	l->holder = n;
	/* Keep the next waiter awake (wait.h): a successor asleep on our node
	 * is woken now, so that its wake-up overlaps our critical section. */
	ls_word_prewake(&n->locked);
}

/* Enqueue n; returns with the lock held. */
static inline __attribute__((always_inline)) void clh_acquire(struct clh *l, struct node *n)
{
	/* relaxed: published by the release of the exchange or CAS that enqueues the node */
	atomic_store_explicit(&n->locked, ls_fork_odd_stamp(), memory_order_relaxed);
	LS_INJECT();
	/* release: a successor that gets n from its swap sees it locked;
	 * acquire: pairs with the release CAS in clh_unlock when we get NULL. */
	struct node *pred = atomic_exchange_explicit(&l->tail, n, memory_order_acq_rel);
	if (LS_UNLIKELY(pred != NULL)) {
		clh_wait(l, n, pred); /* a tail call: the fast path stays a leaf */
		return;
	}
	l->holder = n;
}

/* The lock with a node cache refill: out of line, so that the fast path
 * below makes no call that returns and needs no saved registers. */
static __attribute__((noinline)) void clh_lock_refill(struct clh *l)
{
	clh_acquire(l, ls_node_alloc());
}

static void clh_lock(void *state)
{
	struct clh *l = state;
	if (ls_node_cache_empty()) {
		clh_lock_refill(l);
		return;
	}
	clh_acquire(l, ls_node_alloc()); /* from the cache: no call */
}

static int clh_trylock(void *state)
{
	struct clh *l = state;
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (atomic_load_explicit(&l->tail, memory_order_relaxed) != NULL)
		return EBUSY;
	struct node *n = ls_node_alloc(), *expected = NULL;
	/* relaxed: published by the release of the exchange or CAS that enqueues the node */
	atomic_store_explicit(&n->locked, ls_fork_odd_stamp(), memory_order_relaxed);
	LS_INJECT();
	/* as the exchange in clh_lock */
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &expected, n, memory_order_acq_rel,
						     memory_order_relaxed)) {
		ls_node_free(n);
		return EBUSY;
	}
	l->holder = n;
	return 0;
}

/* The release of a hold taken before the process forked: empties the
 * queue if every waiter in it is gone, else releases n for the first live
 * waiter, which watches it through `holder` (clh_wait). */
static __attribute__((noinline)) void clh_fork_release(struct clh *l, struct node *n)
{
	for (;;) {
		/* acquire: pairs with the release of the swap that enqueued it */
		struct node *t = atomic_load_explicit(&l->tail, memory_order_acquire), *e = t;
		if (!clh_stale(t))
			break;
		LS_INJECT();
		/* release: pairs with the acquire of the next swap or CAS that reads NULL */
		if (atomic_compare_exchange_strong_explicit(&l->tail, &e, NULL, memory_order_release,
							    memory_order_relaxed)) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			ls_node_free(n); /* no live waiter watches it */
			return;
		}
	}
	LS_INJECT();
	/* (B) release: pairs with (A); that waiter now frees n */
	ls_word_release(&n->locked, 0);
}

/* A successor has swapped itself in behind n (the CAS found `seen`). */
static __attribute__((noinline)) void clh_handover(struct clh *l, struct node *n, struct node *seen)
{
	if (!seen)
		return; /* the queue is empty: the lock is free, n stale (lock.h, misuse) */
	if (LS_UNLIKELY(clh_stale(n))) {
		clh_fork_release(l, n);
		return;
	}
	l->holder = NULL; /* until the successor writes its own: an unlock too many is harmless */
	LS_INJECT();
	/* (B) release: pairs with (A); the successor now frees n */
	ls_word_release(&n->locked, 0);
}

static void clh_unlock(void *state)
{
	struct clh *l = state;
	struct node *n = l->holder, *expected = n;
	if (LS_UNLIKELY(!n))
		return; /* never locked, or handed over: free (lock.h, misuse) */
	/* No successor: empty the queue. release: pairs with the acquire of
	 * the next swap or CAS that reads NULL. A stale n (the lock is free)
	 * is not the tail: the CAS fails on NULL. */
	if (LS_LIKELY(atomic_compare_exchange_strong_explicit(&l->tail, &expected, NULL, memory_order_release,
							      memory_order_relaxed))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		ls_node_free(n);
		return;
	}
	clh_handover(l, n, expected);
}

static const struct ls_algo clh_algo = {
    .name = "clh",
    .desc = "CLH queue lock, NULL-tail variant (Herlihy & Shavit AMP 7.5.2)",
    .caps = LS_CAP_FIFO | LS_CAP_QNODE,
    .rank = 15,
    .state_size = sizeof(struct clh),
    .lock = clh_lock,
    .trylock = clh_trylock,
    .unlock = clh_unlock,
};
LS_REGISTER_ALGO(clh_algo);
