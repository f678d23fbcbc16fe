/*
 * mcs_core.h - the MCS queue, written once for every lock built on an MCS
 * chain: mcs (queue/mcs.c), cna (hier/cna.c), malthusian
 * (oversub/malthusian.c), and the per-cluster and per-level queues of
 * c-bo-mcs and hmcs (hier/).
 *
 * Herlihy & Shavit, The Art of Multiprocessor Programming, 7.5.3 (Figs.
 * 7.12-7.14), ../shared/papers/004_c3117dc34b7d1b6f.txt; Mellor-Crummey &
 * Scott, TOCS 1991. A queue is one word, `tail`: the last node enqueued,
 * NULL when nobody holds or waits. A thread swaps its node into the tail
 * (ls_mcs_enqueue); if there was a predecessor it links itself behind it
 * (ls_mcs_link) and waits on its OWN node (ls_mcs_await) until a releaser
 * grants it the queue (ls_mcs_grant). A releaser without a linked successor
 * empties the queue with a CAS (ls_mcs_leave); if the CAS fails, a
 * successor is between its swap and its link, and the releaser waits for
 * the link (ls_mcs_successor). What the holder passes with the grant (the
 * lock, a count, a command) and who the successor is (the next node, or one
 * the algorithm picks further down) is the algorithm's.
 *
 *	node:	status	the algorithm's word: its owner waits while it holds
 *			the `wait` value it linked with; a releaser writes the
 *			grant
 *		linked	0 until the successor has set `next`, then 1 (2: the
 *			first waiter of a fork child linked behind a holder
 *			whose node is stale, below)
 *		next	the successor's node
 *		gen	the fork generation it was enqueued in (fork.h),
 *			written with `linked` by one store before the swap
 *	(bit 31 of status and linked is LS_PARKED: someone sleeps on it)
 *
 * `linked` is what the book's "while (qnode.next == null) {}" becomes: a
 * 32-bit word, so that the releaser waits for a slow (or preempted)
 * successor under the waiting policy, sleeping on a futex under park. The
 * successor writes `next`, then publishes linked = 1: its last access to
 * the predecessor's node. A releaser reads `next` only after seeing
 * linked == 1, so it may free its node once it has granted or left, without
 * a late write landing on it (a late futex wake is only a spurious wake-up:
 * type-stable memory, pool.h).
 *
 * Ordering pairs, named where they happen in every user:
 *	(A) acquire in ls_mcs_await, pairs with (B) release in ls_mcs_grant:
 *	    the holder's critical section (and whatever it writes into the
 *	    successor's node before the grant) happens before the successor's;
 *	(C) release in ls_mcs_link, pairs with (D), the acquire of `linked` in
 *	    ls_mcs_leave, ls_mcs_successor and ls_mcs_linked_next: `next`,
 *	    `status` and whatever the waiter wrote into its node before it
 *	    enqueued are seen by the releaser.
 *
 * An algorithm's node starts with a `struct ls_mcs_node` (its first member:
 * a pointer to one is a pointer to the other) and adds its own fields; a
 * node from ls_node_alloc must leave the pool's last 8 bytes (pool.h).
 *
 * After the release (lock.h) is each algorithm's: ls_mcs_grant_release is
 * ls_mcs_grant when the grant releases the whole lock (the test point sits
 * between its store and its wake), and a successful ls_mcs_leave is the
 * last access of a release that empties the lock's only queue.
 *
 * fork() (fork.h). In the child, the nodes enqueued before the fork (STALE:
 * their gen is older) are the holder's at fork, at the head, and behind it
 * those of waiters that are gone, some perhaps not even linked (their
 * threads stopped between the swap and the link). Every node enqueued
 * after is of the child's generation, so a queue is: holder, stale
 * waiters, then live ones, and exactly one live waiter, the first, has a
 * stale predecessor. That waiter links behind the lock's HOLDER instead
 * (ls_mcs_link_holder, linked = 2), which it finds in the algorithm's state
 * (a holder that is gone, or none yet, and it waits for ever, as a thread
 * of glibc's waits for a mutex another thread held at fork). A holder whose
 * own node is stale (it held the lock at fork) releases with
 * ls_mcs_fork_successor: if the tail is stale, every waiter is gone and
 * the queue is emptied by one CAS (their nodes are left where they are,
 * never reused); else it waits for that first live waiter's link and
 * hands over to it. Nodes of this generation release as before: nothing
 * stale can be behind them. The fast paths read only the stamp they write.
 */
#ifndef LS_QUEUE_MCS_CORE_H
#define LS_QUEUE_MCS_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fork.h"
#include "lock.h"
#include "pool.h"
#include "wait.h"

struct ls_mcs_node {
	union {
		struct {
			uint32_t gen;
			_Atomic uint32_t linked;
		};
		uint64_t gen_linked; /* both, for the one store of the enqueue */
	};
	struct ls_mcs_node *_Atomic next;
	_Atomic uint32_t status;
};

#define LS_MCS_LINKED_FORK 2u /* linked by the first waiter of a fork child */

/* Stamps n (its generation) and clears its link, in one store. relaxed:
 * published by the release of the exchange or CAS that enqueues it. */
static inline __attribute__((always_inline)) void ls_mcs_init(struct ls_mcs_node *n)
{
	__atomic_store_n(&n->gen_linked, (uint64_t)ls_fork_stamp(), __ATOMIC_RELAXED);
	atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
}

/* n was enqueued before this process forked (fork.h). */
static inline bool ls_mcs_stale(const struct ls_mcs_node *n)
{
	/* relaxed: written before the swap that published n, which the
	 * caller's swap or load of it followed */
	return ls_fork_child() && ls_fork_stale(__atomic_load_n(&n->gen, __ATOMIC_RELAXED));
}

/* Enqueues n at *tail; returns its predecessor, or NULL if the queue was
 * empty (n then holds it). With a predecessor the caller links n behind it
 * (ls_mcs_link), in the slow path, so that the fast path writes no status. */
static inline __attribute__((always_inline)) struct ls_mcs_node *
ls_mcs_enqueue(struct ls_mcs_node *_Atomic *tail, struct ls_mcs_node *n)
{
	ls_mcs_init(n);
	LS_INJECT();
	/* release: a successor that gets n from its swap sees the stores above
	 * (and what the caller wrote into n before); acquire: pairs with the
	 * release CAS of ls_mcs_leave when we get NULL. */
	return atomic_exchange_explicit(tail, n, memory_order_acq_rel);
}

/* Enqueues n only if the queue is empty (trylock): true if n now holds it. */
static inline bool ls_mcs_try_enqueue(struct ls_mcs_node *_Atomic *tail, struct ls_mcs_node *n)
{
	struct ls_mcs_node *expected = NULL;
	ls_mcs_init(n);
	LS_INJECT();
	/* as the exchange in ls_mcs_enqueue */
	return atomic_compare_exchange_strong_explicit(tail, &expected, n, memory_order_acq_rel,
						       memory_order_relaxed);
}

/* trylock of a queue whose nodes come from the pool: a node enqueued only on
 * an empty queue, or NULL (the queue is busy; nothing allocated then). */
static inline struct ls_mcs_node *ls_mcs_trylock(struct ls_mcs_node *_Atomic *tail)
{
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (atomic_load_explicit(tail, memory_order_relaxed) != NULL)
		return NULL;
	struct ls_mcs_node *n = ls_node_alloc();
	if (!ls_mcs_try_enqueue(tail, n)) {
		ls_node_free(n);
		return NULL;
	}
	return n;
}

/* Links n behind pred, the predecessor ls_mcs_enqueue returned, with
 * n->status = wait: the value n's owner then waits on. */
static inline void ls_mcs_link(struct ls_mcs_node *pred, struct ls_mcs_node *n, uint32_t wait)
{
	/* relaxed: published by (C), the release that follows */
	atomic_store_explicit(&n->status, wait, memory_order_relaxed);
	LS_INJECT();
	atomic_store_explicit(&pred->next, n, memory_order_relaxed);
	LS_INJECT();
	/* (C) release: publishes next, status and n's fields to the releaser's
	 * (D). Our last access to pred. */
	ls_word_publish(&pred->linked, 1);
}

/* Waits under the waiting policy until n is granted; returns the grant. */
static inline uint32_t ls_mcs_await(struct ls_mcs_node *n, uint32_t wait)
{
	LS_INJECT();
	/* (A) acquire: pairs with (B) in ls_mcs_grant */
	return ls_wait_while_eq(&n->status, wait);
}

/* Grants s the queue with status v (v != the wait value s linked with). */
static inline void ls_mcs_grant(struct ls_mcs_node *s, uint32_t v)
{
	LS_INJECT();
	/* (B) release: pairs with (A) */
	ls_word_publish(&s->status, v);
}

/* ls_mcs_grant as the release of the whole lock (lock.h, "After the
 * release": the test point sits between the store and the wake). */
static inline void ls_mcs_grant_release(struct ls_mcs_node *s, uint32_t v)
{
	LS_INJECT();
	/* (B) release: pairs with (A) */
	ls_word_release(&s->status, v);
}

/* n's successor if its link is complete, else NULL; does not wait. */
static inline struct ls_mcs_node *ls_mcs_linked_next(struct ls_mcs_node *n)
{
	/* (D) acquire: pairs with (C) */
	if ((atomic_load_explicit(&n->linked, memory_order_acquire) & ~LS_PARKED) == 0)
		return NULL;
	/* relaxed: ordered by (D) */
	return atomic_load_explicit(&n->next, memory_order_relaxed);
}

/* The release by n, the holder, when nobody has linked behind it: empties
 * the queue. True if done; false if a successor has linked or is linking
 * in (then ls_mcs_successor). */
static inline __attribute__((always_inline)) bool ls_mcs_leave(struct ls_mcs_node *_Atomic *tail,
							       struct ls_mcs_node *n)
{
	struct ls_mcs_node *expected = n;
	/* (D) acquire: pairs with (C) */
	if (LS_UNLIKELY((atomic_load_explicit(&n->linked, memory_order_acquire) & ~LS_PARKED) != 0))
		return false;
	LS_INJECT();
	/* No successor: empty the queue. release: pairs with the acquire of the
	 * next swap or CAS that reads NULL. */
	return LS_LIKELY(atomic_compare_exchange_strong_explicit(tail, &expected, NULL, memory_order_release,
								 memory_order_relaxed));
}

/* n's successor, waiting under the policy for its link: a successor that
 * has swapped itself into the tail links in a moment later. */
static inline struct ls_mcs_node *ls_mcs_successor(struct ls_mcs_node *n)
{
	LS_INJECT();
	/* (D) acquire: pairs with (C); a successor is linking in */
	ls_wait_while_eq(&n->linked, 0);
	/* relaxed: ordered by (D) */
	return atomic_load_explicit(&n->next, memory_order_relaxed);
}

/* The whole release by n: empties the queue, or grants its successor `go`.
 * n may be freed afterwards. */
static inline void ls_mcs_release(struct ls_mcs_node *_Atomic *tail, struct ls_mcs_node *n, uint32_t go)
{
	if (!ls_mcs_leave(tail, n))
		ls_mcs_grant(ls_mcs_successor(n), go);
}

/* ---- fork (see the header) ---- */

/* The first live waiter of a fork child, n, whose predecessor is stale,
 * links behind h, the lock's holder (NULL: none to link behind; n then
 * waits for a grant that never comes, as it would behind a holder that is
 * gone), with n->status = wait. */
static inline void ls_mcs_link_holder(struct ls_mcs_node *h, struct ls_mcs_node *n, uint32_t wait)
{
	/* relaxed: published by (C) */
	atomic_store_explicit(&n->status, wait, memory_order_relaxed);
	if (!h)
		return;
	atomic_store_explicit(&h->next, n, memory_order_relaxed);
	LS_INJECT();
	/* (C) release: publishes next and status to the holder's (D); a value
	 * no stale waiter wrote, so that a holder waiting on `linked` past a
	 * stale link is woken */
	ls_word_publish(&h->linked, LS_MCS_LINKED_FORK);
}

/* The release by n, the holder, when n is stale (it held the lock when the
 * process forked): empties the queue if every node in it is stale, and
 * returns NULL (the lock is free: that CAS was the release); else waits for
 * the first live waiter's link behind n (ls_mcs_link_holder) and returns it,
 * for the caller to grant. Stale waiters' nodes stay where they are. */
static inline struct ls_mcs_node *ls_mcs_fork_successor(struct ls_mcs_node *_Atomic *tail,
							struct ls_mcs_node *n)
{
	for (;;) {
		LS_INJECT();
		/* acquire: pairs with the release of the swap that enqueued it */
		struct ls_mcs_node *t = atomic_load_explicit(tail, memory_order_acquire), *e = t;
		if (t == n || ls_mcs_stale(t)) {
			/* Nobody of this generation waits: empty the queue.
			 * release: pairs with the acquire of the next swap or CAS
			 * that reads NULL. */
			if (atomic_compare_exchange_strong_explicit(tail, &e, NULL, memory_order_release,
								    memory_order_relaxed))
				return NULL;
			continue;
		}
		/* A live waiter is in the queue: the first one links behind n. */
		/* (D) acquire: pairs with (C) */
		uint32_t v = atomic_load_explicit(&n->linked, memory_order_acquire) & ~LS_PARKED;
		if (v) {
			/* relaxed: ordered by (D) */
			struct ls_mcs_node *s = atomic_load_explicit(&n->next, memory_order_relaxed);
			if (!ls_mcs_stale(s))
				return s;
		}
		ls_wait_while_eq(&n->linked, v);
	}
}

#endif
