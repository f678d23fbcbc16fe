/*
 * clh_nb.c - CLH-NB try lock: CLH with non-blocking timeout.
 *
 * Scott, "Non-Blocking Timeout in Scalable Queue-Based Spin Locks", TR 773
 * / PODC 2002, ../shared/papers/002_349a8f224470ecdc.txt, sections 2.1 and
 * 2.1.1 (the appendix listing is damaged by text extraction; this follows
 * the prose, which describes every step). AMP's TOLock (Herlihy & Shavit,
 * ../shared/papers/004_c3117dc34b7d1b6f.txt, section 7.6) is the same lock
 * in Java: a timed-out node points at its predecessor, the successor skips
 * it, and a CAS on the tail removes a last node; the garbage collector
 * plays the part of the responsible-reference rules and the per-thread
 * pool below, so it is not written a second time.
 *
 * A waiter swaps its node into the tail and spins on its predecessor's
 * node. To time out it writes its predecessor into its own node, marks it
 * LEAVING, and tries to swing the tail from its node back to the
 * predecessor; then it returns at once, whatever its neighbours are doing.
 * Its successor (if any) sees LEAVING, moves to the predecessor and frees
 * the node. Release swings the tail to NULL if nobody is behind, else
 * marks its node AVAILABLE.
 *
 * Node: status (32-bit word, bit 31 = LS_PARKED) and prev. The paper packs
 * both into one pointer (nil / AVAILABLE / a predecessor); a futex word is
 * 32 bits, so prev is written first and published by the status change.
 *	WAITING    owner waits for or holds the lock
 *	AVAILABLE  owner released: the successor may enter   (token, state 2)
 *	LEAVING    owner timed out; prev is its predecessor
 *
 * Responsible references (2.1.1): every node has exactly one reference
 * whose holder must free it: first the allocator's local variable, then
 * the tail (after the swap), then the successor's local `pred`, or - when
 * the owner times out - the owner's node->prev hands the predecessor's
 * reference on to whoever holds the reference to the owner's node. Who
 * frees a node:
 *	- the successor that sees it AVAILABLE (and takes the lock) or
 *	  LEAVING (and moves past it);
 *	- its owner, when the owner's CAS on the tail succeeds (timeout at the
 *	  end of the queue, or release with no successor);
 *	- destroy(), for what an unheld lock still holds (below).
 * ABA: the owner's late CAS(tail, mine, pred) must not succeed on a
 * recycled copy of its node, so nodes come from the per-thread pools of
 * abortable.h, in which only the allocating thread reuses a node.
 *
 * Space: a timed-out node waits in the queue for its successor, so space is
 * unbounded in the worst case (2.3) and ~5 nodes per thread in practice
 * (3.4); see results/abortable/. An unheld lock may keep a short chain
 * (tail -> LEAVING... -> AVAILABLE) when the last waiters timed out after
 * the holder's CAS failed: the next acquirer frees it, destroy() too.
 *
 * trylock: EBUSY at once if the tail node is WAITING (a hint read from
 * type-stable memory: a stale read can only give EBUSY during a hand-off);
 * otherwise one attempt with zero patience. lock() is an attempt with
 * infinite patience: it never leaves the queue, so it never fails.
 *
 * fork() (fork.h). In a fork child, nodes stamped before the fork (`gen`)
 * are the holder's and those of waiters the fork left behind, which never
 * release, leave or free anything. A live thread waits on no stale node
 * but the holder's: the first live waiter (whose predecessor is stale; so
 * is one that follows a leaver's prev to the holder's node) waits on the
 * holder's node (`holder`, kept by a hold taken before the fork until the
 * next holder writes its own; a holder that is gone: on the stale
 * predecessor, for ever), and frees it once AVAILABLE; it times out as
 * every waiter does, pointing its successor at that node. A hold taken
 * before the fork empties the queue if its tail is stale or its own node
 * (its node is never freed then), else marks its node AVAILABLE.
 * Its unlock clears `holder` first, as every unlock does, and puts it back
 * once its fast path has failed and it finds its node stale (the
 * uncontended path checks nothing): until then the first live waiter looks
 * again after slices of sleep.
 *
 * After the release (lock.h): the CAS that empties the queue, or the store
 * of AVAILABLE into the holder's node, is the last access to the lock.
 * Misuse: unlock takes the holder field and clears it, so an unlock of a
 * free lock finds NULL and returns.
 */
#define LS_NODE_CLASS LS_NODES_CLH_NB /* pool.h: nodes reused only by this algorithm */
#include "abortable.h"
#include "fork.h"

enum { WAITING, AVAILABLE, LEAVING };

struct node {
	union {
		struct {
			uint32_t gen; /* fork generation when enqueued */
			_Atomic uint32_t status;
		};
		uint64_t gen_status; /* both, for the one store of the enqueue */
	};
	struct node *_Atomic prev;
};
_Static_assert(sizeof(struct node) <= AB_POOL_OFF, "the pool's fields follow the node");

struct clh_nb {
	struct node *_Atomic tail;
	struct node *_Atomic holder;
};
_Static_assert(sizeof(struct clh_nb) <= LS_INLINE_STATE, "inline state");

static __attribute__((noinline)) int slow(struct clh_nb *l, struct node *i, struct node *pred,
					  uint64_t deadline)
{
	LS_TEST_POINT(LS_POINT_VISIBLE);
	uint64_t slice = 1000000;
	for (;;) {
		if (LS_UNLIKELY(ab_fork_stale(&pred->gen))) {
			/* Behind a thread that fork left behind: the holder's
			 * node instead (see the header). relaxed: written before
			 * the fork, kept until we write ours. */
			struct node *h = atomic_load_explicit(&l->holder, memory_order_relaxed);
			if (h && h != pred) {
				pred = h;
			} else if (!h) {
				/* Its unlock has not put it back yet, or the holder
				 * is gone: look again after a slice of sleep. */
				uint64_t t = ls_now_ns() + slice, until = t < deadline ? t : deadline;
				slice = slice < 16000000 ? slice * 2 : slice;
				uint32_t st = ab_load(&pred->status);
				if (st == AVAILABLE) {
					/* released before the fork: free then */
					atomic_store_explicit(&l->holder, i, memory_order_relaxed);
					return 0;
				}
				if (ab_wait(&pred->status, st, until, NULL) == ETIMEDOUT && until == deadline)
					break;
				continue;
			}
		}
		/* (A) acquire: pairs with (B) in unlock and (C) below */
		uint32_t s = ab_load(&pred->status);
		if (s == AVAILABLE) {
			/* The releaser is done with it and nobody else can
			 * reach it: token state 2 -> 3. */
			ab_pool_free(pred);
			/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or
			 * after the program's own synchronisation) */
			atomic_store_explicit(&l->holder, i, memory_order_relaxed);
			return 0;
		}
		if (s == LEAVING) {
			/* Take over the reference its owner left in it. */
			/* relaxed: ordered by the acquire (A) that saw LEAVING, (C)'s release */
			struct node *temp = atomic_load_explicit(&pred->prev, memory_order_relaxed);
			ab_pool_free(pred);
			pred = temp;
			LS_INJECT();
			continue;
		}
		if (ab_wait(&pred->status, WAITING, deadline, NULL) == ETIMEDOUT)
			break;
		LS_INJECT();
	}

	/* Timeout: hand our reference to pred to whoever holds ours. */
	/* relaxed: published by (C), the release that marks us LEAVING */
	atomic_store_explicit(&i->prev, pred, memory_order_relaxed);
	LS_INJECT();
	/* (C) release: prev is visible to the successor that sees LEAVING */
	ab_set(&i->status, LEAVING);
	LS_INJECT();
	/* Last in line: take our reference back from the tail and give it
	 * pred's. i can only be reused by this thread, so a tail equal to i
	 * is this attempt's node (per-thread pool: no ABA). */
	struct node *expected = i;
	if (atomic_compare_exchange_strong_explicit(&l->tail, &expected, pred, memory_order_acq_rel,
						    memory_order_relaxed))
		ab_pool_free(i);
	/* else a successor (present or arriving) frees i: we do not wait */
	return ETIMEDOUT;
}

static int acquire(struct clh_nb *l, uint64_t deadline)
{
	struct node *i = ab_pool_alloc();
	/* relaxed: published by the release of the exchange or CAS that
	 * enqueues the node; status WAITING, and the stamp */
	_Static_assert(WAITING == 0, "the stamp is the whole word");
	__atomic_store_n(&i->gen_status, (uint64_t)ls_fork_stamp(), __ATOMIC_RELAXED);
	LS_INJECT();
	/* release: a successor that gets i sees WAITING; acquire: pairs with
	 * the release CAS in unlock when we get NULL (token state 1 -> 3). */
	struct node *pred = atomic_exchange_explicit(&l->tail, i, memory_order_acq_rel);
	if (LS_LIKELY(pred == NULL)) {
		/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or after
		 * the program's own synchronisation) */
		atomic_store_explicit(&l->holder, i, memory_order_relaxed);
		return 0;
	}
	LS_INJECT();
	return slow(l, i, pred, deadline);
}

static void clh_nb_lock(void *state)
{
	acquire(state, AB_NEVER);
}

static int clh_nb_timedlock(void *state, uint64_t deadline_ns)
{
	return acquire(state, deadline_ns);
}

static int clh_nb_trylock(void *state)
{
	struct clh_nb *l = state;
	struct node *t = atomic_load_explicit(&l->tail, memory_order_acquire);
	if (t && ab_peek32(&t->status) == WAITING)
		return EBUSY;
	return acquire(l, 0) == 0 ? 0 : EBUSY;
}

/* The release of a hold taken before the process forked (see the header):
 * `holder` stays i for the first live waiter, which overwrites it. */
static __attribute__((noinline)) void fork_release(struct clh_nb *l, struct node *i)
{
	for (;;) {
		/* acquire: pairs with the release of the swap that enqueued it */
		struct node *t = atomic_load_explicit(&l->tail, memory_order_acquire), *e = t;
		if (!t)
			return; /* free: an unlock too many (lock.h) */
		if (t != i && !ab_fork_stale(&t->gen))
			break;
		/* release: pairs with the acquire of the next swap that reads NULL */
		if (atomic_compare_exchange_strong_explicit(&l->tail, &e, NULL, memory_order_acq_rel,
							    memory_order_relaxed)) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			return; /* i is never freed: see the header */
		}
	}
	LS_INJECT();
	/* (B) release: the first live waiter frees i */
	ab_set(&i->status, AVAILABLE);
	LS_TEST_POINT(LS_POINT_RELEASED);
}

/* A successor has swapped itself in behind i. */
static __attribute__((noinline)) void release_slow(struct clh_nb *l, struct node *i)
{
	if (LS_UNLIKELY(ab_fork_stale(&i->gen))) {
		/* A hold taken before the fork: `holder` back for the first
		 * live waiter, then its release (see the header). */
		atomic_store_explicit(&l->holder, i, memory_order_relaxed);
		fork_release(l, i);
		return;
	}
	LS_INJECT();
	/* (B) release: token state 3 -> 2; the successor frees i */
	ab_set(&i->status, AVAILABLE);
	LS_TEST_POINT(LS_POINT_RELEASED);
}

static void clh_nb_unlock(void *state)
{
	struct clh_nb *l = state;
	/* relaxed: written by the acquisition this unlock ends; unlock may
	 * run on another thread only after the program's own synchronisation */
	struct node *i = atomic_load_explicit(&l->holder, memory_order_relaxed), *expected = i;
	if (LS_UNLIKELY(!i))
		return; /* never locked, or unlocked already: free (lock.h, misuse) */
	atomic_store_explicit(&l->holder, NULL, memory_order_relaxed);
	/* No successor: token state 3 -> 1. Read first: under contention the
	 * CAS would fail (the "Scott-AL-OPT" of paper 003, section 4.1). i is
	 * held, so nobody can free it before this CAS: no ABA. release: pairs
	 * with the acquire of the next swap that reads NULL. */
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (atomic_load_explicit(&l->tail, memory_order_relaxed) == i &&
	    atomic_compare_exchange_strong_explicit(&l->tail, &expected, NULL, memory_order_acq_rel,
						    memory_order_relaxed)) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		ab_pool_free(i);
		return;
	}
	release_slow(l, i);
}

/* An unheld lock: free the chain the last timed-out waiters left. */
static void clh_nb_destroy(void *state)
{
	struct clh_nb *l = state;
	struct node *n = atomic_exchange_explicit(&l->tail, NULL, memory_order_acq_rel);
	while (n) {
		uint32_t s = ab_load(&n->status);
		if (s == WAITING) { /* not unheld after all: put it back */
			atomic_store_explicit(&l->tail, n, memory_order_release);
			return;
		}
		/* relaxed: ordered by the acquire load of the status just above */
		struct node *next =
		    s == LEAVING ? atomic_load_explicit(&n->prev, memory_order_relaxed) : NULL;
		ab_pool_free(n);
		n = next;
	}
}

static const struct ls_algo clh_nb_algo = {
    .name = "clh-nb",
    .desc = "CLH try lock with non-blocking timeout (Scott TR 773 / PODC'02 2.1, paper 002)",
    .caps = LS_CAP_FIFO | LS_CAP_TIMEOUT | LS_CAP_QNODE,
    .rank = 42,
    .state_size = sizeof(struct clh_nb),
    .destroy = clh_nb_destroy,
    .lock = clh_nb_lock,
    .trylock = clh_nb_trylock,
    .timedlock = clh_nb_timedlock,
    .unlock = clh_nb_unlock,
};
LS_REGISTER_ALGO(clh_nb_algo);
