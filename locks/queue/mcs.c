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
 *	state:	tail	last node enqueued, NULL when free with no waiters
 *		holder	the holder's node, for unlock (which may run on
 *			another thread)
 *	node:	locked	1 while its owner waits; 0 once handed the lock
 *		linked	0 until the successor has set `next`, then 1
 *		next	the successor's node
 *	(bit 31 of locked and linked is LS_PARKED: someone sleeps on it)
 *
 * `linked` is what the book's "while (qnode.next == null) {}" becomes: a
 * 32-bit word, so the releaser can wait for a slow (or preempted) successor
 * under the waiting policy, sleeping on a futex under park. The successor
 * writes `next`, then publishes linked = 1; that is its last access to the
 * predecessor's node, and the releaser reads `next` only after seeing
 * linked == 1, so the releaser may then free its node without a late write
 * landing on it (a late futex wake is only a spurious wake-up: type-stable
 * memory).
 *
 * Nodes: ls_node_alloc on each acquisition; each node is freed by the thread
 * that releases the lock it held (unlock), after the hand-over or the CAS.
 * Waiting policy: ls_wait_while_eq / ls_word_publish on locked and linked,
 * one waiter per word; a thread that waited for the lock wakes its linked
 * successor as soon as it acquires, if it sleeps (ls_word_prewake: the
 * wake-up overlaps the critical section). No native timeout.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "lock.h"
#include "pool.h"
#include "wait.h"

struct node {
	_Atomic uint32_t locked;
	_Atomic uint32_t linked;
	struct node *_Atomic next;
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct mcs {
	struct node *_Atomic tail;
	struct node *holder;
};
_Static_assert(sizeof(struct mcs) <= LS_INLINE_STATE, "inline state");

/* Contended acquisition: link behind pred, wait, then own. */
static __attribute__((noinline)) void mcs_wait(struct mcs *l, struct node *n, struct node *pred)
{
	atomic_store_explicit(&n->locked, 1, memory_order_relaxed);
	LS_INJECT();
	atomic_store_explicit(&pred->next, n, memory_order_relaxed);
	LS_INJECT();
	/* (C) release: publishes next and n->locked == 1 to the releaser's (D).
	 * Our last access to pred. */
	ls_word_publish(&pred->linked, 1);
	LS_INJECT();
	/* (A) acquire: pairs with (B) in mcs_unlock */
	ls_wait_while_eq(&n->locked, 1);
	l->holder = n;
	/* Keep the next waiter awake (wait.h): if our successor has linked
	 * and sleeps, wake it now, so that its wake-up overlaps our critical
	 * section. (D) acquire: pairs with (C). */
	if ((atomic_load_explicit(&n->linked, memory_order_acquire) & ~LS_PARKED) == 1)
		ls_word_prewake(&atomic_load_explicit(&n->next, memory_order_relaxed)->locked);
}

/* Enqueue n; returns with the lock held. */
static inline __attribute__((always_inline)) void mcs_acquire(struct mcs *l, struct node *n)
{
	atomic_store_explicit(&n->linked, 0, memory_order_relaxed);
	atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
	LS_INJECT();
	/* release: a successor that gets n from its swap sees the stores above;
	 * acquire: pairs with the release CAS in mcs_unlock when we get NULL. */
	struct node *pred = atomic_exchange_explicit(&l->tail, n, memory_order_acq_rel);
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
	if (atomic_load_explicit(&l->tail, memory_order_relaxed) != NULL)
		return EBUSY;
	struct node *n = ls_node_alloc(), *expected = NULL;
	atomic_store_explicit(&n->linked, 0, memory_order_relaxed);
	atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
	LS_INJECT();
	/* as the exchange in mcs_lock */
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &expected, n, memory_order_acq_rel,
						     memory_order_relaxed)) {
		ls_node_free(n);
		return EBUSY;
	}
	l->holder = n;
	return 0;
}

static __attribute__((noinline)) void mcs_handover(struct node *n)
{
	LS_INJECT();
	/* (D) acquire: pairs with (C); a successor is linking in */
	ls_wait_while_eq(&n->linked, 0);
	struct node *next = atomic_load_explicit(&n->next, memory_order_relaxed);
	LS_INJECT();
	/* (B) release: pairs with (A) */
	ls_word_publish(&next->locked, 0);
	ls_node_free(n);
}

static void mcs_unlock(void *state)
{
	struct mcs *l = state;
	struct node *n = l->holder, *expected = n;
	/* (D) acquire: pairs with (C) */
	if (LS_LIKELY(atomic_load_explicit(&n->linked, memory_order_acquire) == 0)) {
		LS_INJECT();
		/* No successor: empty the queue. release: pairs with the acquire
		 * of the next swap or CAS that reads NULL. */
		if (LS_LIKELY(atomic_compare_exchange_strong_explicit(
			&l->tail, &expected, NULL, memory_order_release, memory_order_relaxed))) {
			ls_node_free(n);
			return;
		}
	}
	mcs_handover(n);
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
