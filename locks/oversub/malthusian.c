/*
 * malthusian.c - Malthusian MCS lock (MCSCR: MCS with concurrency
 * restriction).
 *
 * Dice, "Malthusian Locks", EuroSys 2017 (arXiv 1511.06035; not in
 * ../shared/papers, and only its abstract could be read here: the choices
 * below that the abstract does not fix are this file's, and say so: which
 * waiter is culled, which passive waiter is re-admitted, how the fairness
 * trial is drawn): an MCS lock whose unlock "culls" surplus waiters. If
 * more threads circulate over a lock than are needed to keep it saturated
 * (continuously held), the excess only costs (here: they are the threads
 * that must be woken, or wait for a CPU, when the lock reaches them). So at
 * unlock, when the owner's successor has a successor of its own (a surplus
 * waiter), the successor is moved off the MCS chain to the passive set and
 * the lock goes to the one behind it: the lock circulates among the few
 * threads that keep arriving, which, with more threads than CPUs, are the
 * ones that are running. Passive waiters sleep (under park, at once). When
 * the chain runs empty at unlock, a passive waiter is re-admitted (the most
 * recently culled: its data is the warmest) instead of the lock going
 * free; and, for long-term fairness, with probability 1/F per contended
 * unlock (a Bernoulli trial, LOCKSWAP_MALTHUSIAN_FAIRNESS) the eldest
 * passive waiter is granted the lock ahead of the chain.
 *
 * The passive set is a doubly linked list through the waiters' nodes, owned
 * by whoever holds the lock (only the holder touches it, so it needs no
 * synchronisation of its own); its ends travel in the holder's node and are
 * handed on with the lock. The lock is free only when the set is empty.
 *
 *	state:	tail	last node of the MCS chain, NULL when free and no waiters
 *		holder	the holder's node, for unlock (another thread may unlock)
 *	node:	q	the MCS queue's node (mcs_core.h): q.status is
 *			WAITING on the chain, PASSIVE (culled), 0 granted
 *			(| LS_PARKED: its owner sleeps on it); q.linked and
 *			q.next link the chain
 *		ps_head, ps_tail	the passive set (valid in the holder's node)
 *		ps_prev, ps_next	its links in the passive set
 *
 * Transitions of status: WAITING -> 0 (granted from the chain), WAITING ->
 * PASSIVE (culled by a releaser), PASSIVE -> 0 (re-admitted: granted).
 * Nodes: ls_node_alloc per acquisition; each node is freed by the thread
 * that releases the lock it held, after the hand-over (as in mcs.c). A
 * passive node belongs to its waiting owner; the holder only links it.
 * Waiting policy: chain waiters as in mcs.c (mcs_core.h); passive waiters
 * sleep at once under park (spin and yield under the other policies). A
 * re-admission hands the lock to a sleeper: its wake-up is in the critical
 * path (waking it ahead, when the chain behind the new holder is empty, was
 * measured and did not help: results/oversub). Not FIFO.
 *
 * fork() (mcs_core.h): a fork child's first live waiter links behind the
 * holder; a hold taken before the fork drops its passive set (of waiters
 * the fork left behind) and goes to that waiter, or the chain empties.
 *
 * After the release (lock.h): the CAS that empties the chain, or the grant
 * to the next holder (from the chain, the passive set, or a re-admission),
 * is the last access to the lock; the holder's node is freed after it.
 * Misuse: the holder field is NULL in a lock never locked and after a
 * hand-over (cleared before it), and stale only after a release that
 * emptied the chain (the passive set is then empty too): an unlock of a
 * free lock returns.
 */
#define LS_NODE_CLASS LS_NODES_MALTHUSIAN /* pool.h: nodes reused only by this algorithm */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "lock.h"
#include "pool.h"
#include "queue/mcs_core.h"
#include "wait.h"

enum { GRANTED = 0, WAITING = 1, PASSIVE = 2 };

struct node {
	struct ls_mcs_node q;		/* first: a queue node is a struct node */
	struct node *ps_head, *ps_tail; /* the passive set, in the holder's node */
	struct node *ps_prev, *ps_next; /* this node's links in it */
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct malthusian {
	struct ls_mcs_node *_Atomic tail;
	struct node *holder;
};
_Static_assert(sizeof(struct malthusian) <= LS_INLINE_STATE, "inline state");

static uint64_t fairness = 1000;

static const struct ls_param malthusian_params[] = {
    {"LOCKSWAP_MALTHUSIAN_FAIRNESS",
     "1 in F contended unlocks grants the eldest passive waiter (long-term fairness), count", &fairness, 1,
     1000000000},
    {0},
};

/* Marsaglia xorshift, per thread, for the Bernoulli trial. */
static __thread __attribute__((tls_model("initial-exec"))) uint32_t rnd;
static bool trial(void)
{
	uint32_t x = rnd ? rnd : (uint32_t)(uintptr_t)&rnd | 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	rnd = x;
	return x % (uint32_t)fairness == 0;
}

/* ---- the passive set (holder only) ---- */

static void ps_push(struct node *h, struct node *n)
{
	n->ps_next = NULL;
	n->ps_prev = h->ps_tail;
	if (h->ps_tail)
		h->ps_tail->ps_next = n;
	else
		h->ps_head = n;
	h->ps_tail = n;
}

static void ps_remove(struct node *h, struct node *n)
{
	if (n->ps_prev)
		n->ps_prev->ps_next = n->ps_next;
	else
		h->ps_head = n->ps_next;
	if (n->ps_next)
		n->ps_next->ps_prev = n->ps_prev;
	else
		h->ps_tail = n->ps_prev;
}

/* ---- acquisition ---- */

/* Waits on our own node until granted; passive under park: sleep at once. */
static void await_grant(struct node *n)
{
	struct ls_spin s = LS_SPIN_INIT;
	for (;;) {
		/* (A) acquire: pairs with (B) in grant */
		uint32_t v = atomic_load_explicit(&n->q.status, memory_order_acquire);
		if ((v & ~LS_PARKED) == GRANTED)
			return;
		LS_INJECT();
		bool passive = (v & ~LS_PARKED) == PASSIVE && ls_wait_cfg.policy == LS_WAIT_PARK;
		if (!passive && !ls_spin_step(&s))
			continue;
		/* LS_PARKED protocol: the CAS orders us against the releaser's
		 * exchange, which then sees the bit and wakes us */
		if (!(v & LS_PARKED) &&
		    !atomic_compare_exchange_strong_explicit(&n->q.status, &v, v | LS_PARKED,
							     memory_order_acquire, memory_order_acquire))
			continue;
		ls_futex_wait(&n->q.status, v | LS_PARKED, 0);
		s = (struct ls_spin)LS_SPIN_INIT;
	}
}

static __attribute__((noinline)) void malthusian_wait(struct malthusian *l, struct node *n,
						      struct ls_mcs_node *pred)
{
	LS_TEST_POINT(LS_POINT_VISIBLE);
	if (LS_UNLIKELY(ls_mcs_stale(pred))) {
		/* relaxed: written before the fork; kept until we are granted */
		struct node *h = __atomic_load_n(&l->holder, __ATOMIC_RELAXED);
		ls_mcs_link_holder(h ? &h->q : NULL, &n->q, WAITING);
	} else {
		ls_mcs_link(pred, &n->q, WAITING);
	}
	await_grant(n);
	l->holder = n; /* ps_head/ps_tail were set by the granter */
}

static inline __attribute__((always_inline)) void acquire(struct malthusian *l, struct node *n)
{
	struct ls_mcs_node *pred = ls_mcs_enqueue(&l->tail, &n->q);
	if (LS_UNLIKELY(pred != NULL)) {
		malthusian_wait(l, n, pred); /* a tail call: the fast path stays a leaf */
		return;
	}
	n->ps_head = n->ps_tail = NULL; /* the lock was free: no passive set */
	l->holder = n;
}

static __attribute__((noinline)) void malthusian_lock_refill(struct malthusian *l)
{
	acquire(l, ls_node_alloc());
}

static void malthusian_lock(void *state)
{
	struct malthusian *l = state;
	if (ls_node_cache_empty()) {
		malthusian_lock_refill(l);
		return;
	}
	acquire(l, ls_node_alloc()); /* from the cache: no call */
}

static int malthusian_trylock(void *state)
{
	struct malthusian *l = state;
	struct node *n = (struct node *)ls_mcs_trylock(&l->tail);
	if (!n)
		return EBUSY;
	n->ps_head = n->ps_tail = NULL;
	l->holder = n;
	return 0;
}

/* ---- release ---- */

/* Hands the lock to n with the passive set of I. */
static void grant(struct node *I, struct node *n)
{
	n->ps_head = I->ps_head;
	n->ps_tail = I->ps_tail;
	/* (B) in ls_mcs_grant: our critical section and the set happen before
	 * n's; pairs with (A) in await_grant */
	ls_mcs_grant_release(&n->q, GRANTED);
}

/* The chain is empty behind I but the passive set is not: re-admit its
 * most recently culled waiter as the new tail and holder. False if a
 * newcomer joined the chain meanwhile. */
static bool readmit(struct malthusian *l, struct node *I)
{
	struct node *p = I->ps_tail;
	struct ls_mcs_node *e = &I->q;
	/* relaxed: published by the acq_rel CAS of the tail below */
	atomic_store_explicit(&p->q.linked, 0, memory_order_relaxed);
	atomic_store_explicit(&p->q.next, NULL, memory_order_relaxed);
	/* release: a newcomer that swaps p out of tail sees the stores above */
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &e, &p->q, memory_order_acq_rel,
						     memory_order_relaxed))
		return false;
	ps_remove(I, p);
	grant(I, p);
	return true;
}

/* The release of a hold taken before the process forked (mcs_core.h): its
 * passive set is of waiters the fork left behind, dropped; the lock goes
 * to the first live waiter, or the chain empties. */
static __attribute__((noinline)) void malthusian_fork_release(struct malthusian *l, struct node *I)
{
	I->ps_head = I->ps_tail = NULL;
	struct node *s = (struct node *)ls_mcs_fork_successor(&l->tail, &I->q);
	if (s) {
		l->holder = NULL;
		grant(I, s);
	} else {
		LS_TEST_POINT(LS_POINT_RELEASED);
	}
	ls_node_free(I);
}

static __attribute__((noinline)) void malthusian_release(struct malthusian *l, struct node *I)
{
	/* relaxed: the holder's own swap made it non-NULL; it is NULL only
	 * when the lock is free (the passive set empty too) */
	if (!atomic_load_explicit(&l->tail, memory_order_relaxed))
		return; /* free: I is stale (lock.h, misuse) */
	if (LS_UNLIKELY(ls_mcs_stale(&I->q))) {
		malthusian_fork_release(l, I);
		return;
	}
	l->holder = NULL; /* until the next holder writes its own */
	/* Without a passive set we are here because a successor has linked or
	 * swapped itself in (unlock's CAS failed: the tail never comes back to
	 * I), so only a holder with passive waiters may find the chain empty. */
	if (I->ps_head && !ls_mcs_linked_next(&I->q)) {
		LS_INJECT();
		if (readmit(l, I)) {
			ls_node_free(I);
			return;
		}
	}
	struct node *s = (struct node *)ls_mcs_successor(&I->q), *t;
	if (I->ps_head && trial()) {
		/* Long-term fairness: the eldest passive waiter goes first,
		 * with the chain behind it. */
		struct node *p = I->ps_head;
		ps_remove(I, p);
		/* relaxed: p's owner only watches its status; published by the grant */
		atomic_store_explicit(&p->q.next, &s->q, memory_order_relaxed);
		atomic_store_explicit(&p->q.linked, 1, memory_order_relaxed);
		grant(I, p);
	} else if ((t = (struct node *)ls_mcs_linked_next(&s->q)) != NULL) {
		/* (D) on s: its successor t has linked in, so s is surplus:
		 * cull it to the passive set, grant t. t never touches s again
		 * (its link was its last access); s's owner keeps waiting. */
		ps_push(I, s);
		/* relaxed: s's owner only compares it; its waiting loop re-reads it with acquire */
		atomic_fetch_add_explicit(&s->q.status, PASSIVE - WAITING, memory_order_relaxed);
		grant(I, t);
	} else {
		grant(I, s);
	}
	ls_node_free(I);
}

static void malthusian_unlock(void *state)
{
	struct malthusian *l = state;
	struct node *I = l->holder;
	if (LS_UNLIKELY(!I))
		return; /* never locked, or handed over: free (lock.h, misuse) */
	/* No successor and no passive waiter: empty the chain. A stale I
	 * (after a release that emptied the chain) is only read (type-stable
	 * memory); the CAS fails on the empty chain. */
	if (LS_LIKELY(!I->ps_head && ls_mcs_leave(&l->tail, &I->q))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		ls_node_free(I);
		return;
	}
	malthusian_release(l, I);
}

static const struct ls_algo malthusian_algo = {
    .name = "malthusian",
    .desc =
	"Malthusian MCS: culls surplus waiters to a passive set, re-admits them for fairness (Dice, EuroSys "
	"2017)",
    .caps = LS_CAP_QNODE,
    .rank = 81,
    .state_size = sizeof(struct malthusian),
    .params = malthusian_params,
    .lock = malthusian_lock,
    .trylock = malthusian_trylock,
    .unlock = malthusian_unlock,
};
LS_REGISTER_ALGO(malthusian_algo);
