/*
 * clh_try.c - CLH try-lock with timeout (handshake-based).
 *
 * Scott & Scherer, "Scalable Queue-Based Spin Locks with Timeout", PPoPP
 * 2001, ../shared/papers/001_4191f6f0cf692594.txt, "CLH queue-based spin
 * lock with timeout" (complete code; followed step by step below).
 *
 * A waiter swaps its node into the tail and spins on its predecessor's
 * status. To time out it must tell its neighbours: it marks the
 * predecessor TRANSIENT (so the predecessor can neither release nor leave
 * under it), records the predecessor in its own node, marks its own node
 * LEAVING and then either swings the tail back (it was last) or waits until
 * its successor has seen LEAVING and answered RECYCLED. A timed-out waiter
 * can therefore be held up by a preempted neighbour: that is the blocking
 * that clh-nb (TR 773) removes.
 *
 * Node status (32-bit word, bit 31 = LS_PARKED):
 *	WAITING    owner holds or waits for the lock
 *	AVAILABLE  owner released: the successor may enter
 *	LEAVING    owner timed out; node->prev names its predecessor
 *	TRANSIENT  the successor is leaving and owns this word for a moment
 *	RECYCLED   the successor has finished with this (LEAVING) node
 *	TAILBACK   as WAITING, and a successor that was last linked itself
 *		   out: the tail names this node again (ours, below)
 * Transitions: WAITING -> AVAILABLE (release), WAITING/TAILBACK -> LEAVING
 * (owner times out), WAITING/TAILBACK/LEAVING -> TRANSIENT (successor
 * starts leaving), TRANSIENT -> WAITING/TAILBACK (successor done: TAILBACK
 * if it swung the tail back, else the value it found), TAILBACK -> WAITING
 * (the releaser, before it looks at the tail again), LEAVING/TRANSIENT ->
 * RECYCLED.
 *
 * Who frees which node (ls_node_alloc, one per attempt):
 *	- the acquirer frees its predecessor's node once it has seen
 *	  AVAILABLE (the paper hands it to the releaser for reuse instead);
 *	- a waiter that times out frees its own node when it returns (it
 *	  swung the tail back, or its successor answered RECYCLED);
 *	- a releaser with no successor frees its own node.
 *
 * Departures from the listing, both for lockswap's state contract (all-zero
 * is unlocked, an unlocked state can be copied): there is no dummy node, an
 * empty queue is a NULL tail and release first tries to swing the tail
 * from its node back to NULL, as the CLH-NB lock of TR 773 does. Because a
 * successor that times out may swing the tail back to our node while we
 * are releasing, release retries that CAS each time the successor's
 * TRANSIENT mark clears, so an unheld lock always ends with tail == NULL.
 * That needs one more value: a releaser that found the tail past its node
 * hands over with a CAS of its status from WAITING to AVAILABLE, and a
 * successor could link itself out (swing the tail back to the releaser's
 * node and restore its status) between the two; the release then made a
 * node nobody follows AVAILABLE, and the lock stayed free with a tail
 * that trylock's CAS of NULL never passes (a program whose threads only
 * try the lock then waits for ever: seen under rwstress's mutex+bravo over
 * clh-try, a writer retrying trywrlock while holding the lock the others
 * wanted). So a successor that links itself out restores TAILBACK, on
 * which the hand-over's CAS fails; the releaser turns it back into
 * WAITING, looks at the tail again (empties the queue if it is its node)
 * and only then hands over: every link-out after that look leaves TAILBACK
 * again (tests/unit/trylock_handover.c, scenario linkout).
 * trylock is a single CAS of an empty tail (no node enters the queue);
 * lock() is an attempt with infinite patience (the timeout path never runs).
 *
 * One departure fixes a livelock of the listing, the one mcs_try.c
 * describes: release needs a moment when no successor holds its word
 * TRANSIENT, and when waiters keep timing out and coming back (10 us
 * patience, 6 threads on 2 loaded cores, park) each new successor is out of
 * patience by the time it reaches the releaser's node and takes the word
 * first: runs of 500 acquisitions per thread took 38-60 s instead of 1,
 * stalls of 0.3-0.6 s with thousands of timeouts, one thread in release.
 * So a releaser whose CAS fails sets `releasing` in its node, and a
 * successor out of patience whose predecessor is releasing does not leave:
 * it waits, without deadline, for AVAILABLE. The releaser then waits for
 * the departures already under way, no more. `releasing` is cleared before
 * the node is freed (by the acquirer, or by the releaser that emptied the
 * queue), so a node from the pool has it 0 (pool.h).
 *
 * fork() (fork.h). In a fork child, nodes stamped before the fork (`gen`)
 * are the holder's and those of waiters the fork left behind, which never
 * release, leave or restore what they marked. A live thread never waits on,
 * marks or follows a stale node but the holder's: the first live waiter
 * (whose predecessor is stale; so is a waiter that follows a leaver's
 * `prev` to the holder's node) waits on the holder's node (`holder`, kept
 * by a hold taken before the fork until the next holder writes its own),
 * and when it times out it leaves without marking it (the holder's node
 * never leaves, and its release over a live leaver is what the handshake
 * already covers: the leaver's successor, or the next arrival, finds it
 * AVAILABLE; not a trylock, which does not pass a node in the tail: a
 * live waiter that links itself out as last while that hold is released
 * can leave the lock free with the tail on the holder's node, taken by the
 * next blocking attempt only; TAILBACK cannot mark a node the leaver must
 * not touch. Known, not fixed). A hold taken before the fork empties the
 * queue if its tail is stale (every waiter is gone; its node is never freed then: a
 * successor that is gone may have marked it), else makes its node
 * AVAILABLE whatever mark a successor that is gone left on it. Its unlock
 * clears `holder` first, as every unlock does, and puts it back once its
 * fast path has failed and it finds its node stale (the uncontended path
 * checks nothing): until then the first live waiter looks again after
 * slices of sleep. A release that emptied the queue does not wait for a
 * successor that is gone to restore a mark it left.
 *
 * After the release (lock.h): the CAS that empties the queue, or the CAS
 * of the holder's status to AVAILABLE, is the last access to the lock;
 * what follows (waiting for a departing successor's restoring store,
 * freeing the node) touches only the node. Misuse: unlock takes the holder
 * field and clears it, so an unlock of a free lock finds NULL and returns.
 */
#define LS_NODE_CLASS LS_NODES_CLH_TRY /* pool.h: nodes reused only by this algorithm */
#include "abortable.h"
#include "fork.h"

enum { WAITING, AVAILABLE, LEAVING, TRANSIENT, RECYCLED, TAILBACK };

struct node {
	union {
		struct {
			uint32_t gen; /* fork generation when enqueued */
			_Atomic uint32_t status;
		};
		uint64_t gen_status; /* both, for the one store of the enqueue */
	};
	_Atomic uint32_t releasing; /* its owner is releasing: see the header */
	struct node *_Atomic prev;  /* predecessor, published when leaving */
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct clh_try {
	struct node *_Atomic tail;
	struct node *_Atomic holder;
};
_Static_assert(sizeof(struct clh_try) <= LS_INLINE_STATE, "inline state");

/* Stamps n (status WAITING, 0) for the enqueue. relaxed: published by the
 * release of the exchange or CAS that enqueues it. */
static inline void stamp(struct node *n)
{
	_Static_assert(WAITING == 0, "the stamp is the whole word");
	__atomic_store_n(&n->gen_status, (uint64_t)ls_fork_stamp(), __ATOMIC_RELAXED);
}

/* Marks our own node LEAVING (release: publishes i->prev), once no
 * successor holds its word TRANSIENT; a successor that linked itself out
 * may have left it TAILBACK. */
static void mark_leaving(struct node *i)
{
	for (;;) {
		uint32_t v = ab_load(&i->status);
		if ((v == WAITING || v == TAILBACK) && ab_cas(&i->status, v, LEAVING))
			return;
		if (v == TRANSIENT)
			ls_wait_while_eq(&i->status, TRANSIENT);
	}
}

/* The first live waiter of a fork child, i, whose predecessor is stale:
 * waits on the holder's node (see the header). `holder` is NULL while its
 * unlock, which clears it first, has not yet put it back (release_slow), or
 * for ever if the holder is gone: then it looks again after a slice of
 * sleep (1 ms, doubling up to 16 ms). */
static __attribute__((noinline)) int fork_slow(struct clh_try *l, struct node *i, struct node *stale_pred,
					       uint64_t deadline)
{
	struct node *pred;
	uint64_t slice = 1000000;
	for (;;) {
		/* relaxed: written before the fork; kept until we write ours */
		struct node *h = atomic_load_explicit(&l->holder, memory_order_relaxed);
		pred = h ? h : stale_pred;
		/* (A) acquire: pairs with (B) in fork_release */
		uint32_t stat = ab_load(&pred->status);
		if (stat == AVAILABLE) {
			/* relaxed: nobody else reaches pred now */
			atomic_store_explicit(&pred->releasing, 0, memory_order_relaxed);
			ab_node_free(pred);
			/* relaxed: as in slow() */
			atomic_store_explicit(&l->holder, i, memory_order_relaxed);
			return 0;
		}
		uint64_t until = deadline;
		if (!h) {
			uint64_t t = ls_now_ns() + slice;
			until = t < deadline ? t : deadline;
			slice = slice < 16000000 ? slice * 2 : slice;
		}
		if (ab_wait(&pred->status, stat, until, NULL) == ETIMEDOUT && until == deadline)
			break;
	}
	/* Out of patience: leave, pointing our successor at pred. */
	/* relaxed: published by the release CAS that marks us LEAVING */
	atomic_store_explicit(&i->prev, pred, memory_order_relaxed);
	mark_leaving(i);
	struct node *expected = i;
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &expected, pred, memory_order_acq_rel,
						     memory_order_relaxed))
		ab_wait_for(&i->status, RECYCLED);
	ab_node_free(i);
	return ETIMEDOUT;
}

static struct node *prev_of(struct node *n)
{
	/* relaxed: ordered by the acquire that saw n LEAVING */
	return atomic_load_explicit(&n->prev, memory_order_relaxed);
}

/* Returns 0 with the lock, or ETIMEDOUT. */
static __attribute__((noinline)) int slow(struct clh_try *l, struct node *i, struct node *pred,
					  uint64_t deadline)
{
	uint32_t stat;

	LS_TEST_POINT(LS_POINT_VISIBLE);
	/* Spin on the predecessor until it is AVAILABLE or we run out of
	 * patience, skipping predecessors that left (and telling them, with
	 * RECYCLED, that we are done with their node). */
	for (;;) {
		if (LS_UNLIKELY(ab_fork_stale(&pred->gen)))
			return fork_slow(l, i, pred, deadline);
		/* (A) acquire: pairs with (B) in unlock and with the LEAVING CAS */
		stat = ab_load(&pred->status);
		if (stat == AVAILABLE)
			goto got;
		if (stat == LEAVING) {
			struct node *temp = prev_of(pred);
			LS_INJECT();
			ab_set(&pred->status, RECYCLED);
			pred = temp;
			continue;
		}
		/* WAITING, or TRANSIENT if somebody left just before we came */
		if (ab_wait(&pred->status, stat, deadline, NULL) == ETIMEDOUT)
			break;
		LS_INJECT();
	}

	/* Timed out. Lock the predecessor's status word with TRANSIENT. */
	for (;;) {
		LS_INJECT();
		/* a predecessor's earlier successor may still hold it */
		ls_wait_while_eq(&pred->status, TRANSIENT);
		/* A releasing predecessor hands over to us as soon as no
		 * successor holds its word: stay (see the header). seq_cst:
		 * pairs with the store in clh_try_unlock (Dekker: flag store
		 * then CAS there, flag load then swap here). pred is alive:
		 * only we free it, or its owner once we answer RECYCLED. */
		if (atomic_load_explicit(&pred->releasing, memory_order_seq_cst)) {
			LS_TEST_POINT(LS_POINT_STAYING);
			ab_wait_for(&pred->status, AVAILABLE);
			goto got;
		}
		stat = ab_set(&pred->status, TRANSIENT);
		if (stat == AVAILABLE)
			goto got; /* released under us: take it after all */
		if (stat == LEAVING) {
			struct node *temp = prev_of(pred);
			ab_set(&pred->status, RECYCLED);
			pred = temp;
			if (LS_UNLIKELY(ab_fork_stale(&pred->gen)))
				return fork_slow(l, i, pred, 0); /* out of patience */
			continue;
		}
		break; /* WAITING or TAILBACK: the word is ours until we restore it */
	}
	LS_TEST_POINT(LS_POINT_LEAVING);
	/* relaxed: published by the release CAS that marks us LEAVING */
	atomic_store_explicit(&i->prev, pred, memory_order_relaxed); /* so the successor can find it */
	LS_INJECT();

	/* Mark ourselves LEAVING, once our own successor is not TRANSIENT
	 * on us. release (in ab_cas): publishes i->prev with LEAVING. */
	mark_leaving(i);
	LS_INJECT();

	/* Last in line: link ourselves out. i is ours and alive, so a tail
	 * equal to i is this very attempt (no ABA). Then TAILBACK, so that a
	 * releasing pred looks at the tail again (see the header). */
	struct node *expected = i;
	if (atomic_compare_exchange_strong_explicit(&l->tail, &expected, pred, memory_order_acq_rel,
						    memory_order_relaxed)) {
		LS_INJECT();
		ab_set(&pred->status, TAILBACK);
		ab_node_free(i);
		return ETIMEDOUT;
	}
	/* Not last: the successor will see LEAVING, take pred, and answer. */
	ab_wait_for(&i->status, RECYCLED);
	LS_INJECT();
	ab_set(&pred->status, stat == TAILBACK ? TAILBACK : WAITING); /* what we found */
	ab_node_free(i);
	return ETIMEDOUT;

got:
	/* The predecessor released and returned: nobody else can reach it. */
	/* relaxed: nobody else reaches pred now; its next owner's allocation is ordered by the pool */
	atomic_store_explicit(&pred->releasing, 0, memory_order_relaxed);
	ab_node_free(pred);
	/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or after the
	 * program's own synchronisation) */
	atomic_store_explicit(&l->holder, i, memory_order_relaxed);
	return 0;
}

static int acquire(struct clh_try *l, uint64_t deadline)
{
	struct node *i = ab_node_alloc();
	stamp(i);
	LS_INJECT();
	/* release: a successor that gets i from its swap sees WAITING;
	 * acquire: pairs with the release CAS in unlock when we get NULL. */
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

static void clh_try_lock(void *state)
{
	acquire(state, AB_NEVER);
}

static int clh_try_timedlock(void *state, uint64_t deadline_ns)
{
	return acquire(state, deadline_ns);
}

static int clh_try_trylock(void *state)
{
	struct clh_try *l = state;
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (atomic_load_explicit(&l->tail, memory_order_relaxed) != NULL)
		return EBUSY;
	struct node *i = ab_node_alloc(), *expected = NULL;
	stamp(i);
	/* as the exchange in acquire */
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &expected, i, memory_order_acq_rel,
						     memory_order_relaxed)) {
		ab_node_free(i);
		return EBUSY;
	}
	/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or after the
	 * program's own synchronisation) */
	atomic_store_explicit(&l->holder, i, memory_order_relaxed);
	return 0;
}

/* No successor: empty the queue (a CAS of the tail from i to NULL).
 * release: pairs with the acquire of the next swap that reads NULL. */
static inline bool clh_try_empty(struct clh_try *l, struct node *i)
{
	struct node *expected = i;
	/* relaxed: a hint; the CAS that follows decides and orders */
	return atomic_load_explicit(&l->tail, memory_order_relaxed) == i &&
	       atomic_compare_exchange_strong_explicit(&l->tail, &expected, NULL, memory_order_acq_rel,
						       memory_order_relaxed);
}

/* Release with a successor, or one that linked itself out and may still
 * swing the tail back to i. */
static void fork_release(struct clh_try *l, struct node *i);

static __attribute__((noinline)) void release_slow(struct clh_try *l, struct node *i)
{
	if (LS_UNLIKELY(ab_fork_stale(&i->gen))) {
		/* A hold taken before the fork: `holder` back for the first
		 * live waiter (fork_slow), then its release. */
		atomic_store_explicit(&l->holder, i, memory_order_relaxed);
		fork_release(l, i);
		return;
	}
	LS_TEST_POINT(LS_POINT_HANDING);
	for (;;) {
		LS_INJECT();
		/* (B) release: pairs with (A); the successor frees i. WAITING:
		 * no successor linked itself out since we last saw the tail
		 * past i (see the header) */
		if (ab_cas(&i->status, WAITING, AVAILABLE)) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			return;
		}
		/* A successor is leaving and holds our word, or has linked
		 * itself out: from now on the next one stays (see the header);
		 * wait, look at the tail again, retry. */
		atomic_store_explicit(&i->releasing, 1, memory_order_seq_cst);
		LS_TEST_POINT(LS_POINT_RELEASING);
		ls_wait_while_eq(&i->status, TRANSIENT);
		ab_cas(&i->status, TAILBACK, WAITING); /* before the look at the tail */
		if (clh_try_empty(l, i)) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			LS_INJECT();
			ls_wait_while_eq(&i->status, TRANSIENT);
			/* relaxed: we are the node's last user; the pool orders its next allocation */
			atomic_store_explicit(&i->releasing, 0, memory_order_relaxed);
			ab_node_free(i);
			return;
		}
	}
}

/* After a release that emptied the queue: a successor that left may still
 * owe i its restoring store. One that fork left behind never makes it. */
static __attribute__((noinline)) void await_restored(struct node *i)
{
	if (!ab_fork_stale(&i->gen))
		ls_wait_while_eq(&i->status, TRANSIENT);
}

/* The release of a hold taken before the process forked (see the header):
 * `holder` stays i for the first live waiter, which overwrites it. */
static __attribute__((noinline)) void fork_release(struct clh_try *l, struct node *i)
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
	/* (B) release: pairs with (A) in fork_slow; whatever a successor that
	 * is gone left in the word */
	ab_set(&i->status, AVAILABLE);
	LS_TEST_POINT(LS_POINT_RELEASED);
}

static void clh_try_unlock(void *state)
{
	struct clh_try *l = state;
	/* relaxed: written by the acquisition this unlock ends; unlock may
	 * run on another thread only after the program's own synchronisation */
	struct node *i = atomic_load_explicit(&l->holder, memory_order_relaxed);
	if (LS_UNLIKELY(!i))
		return; /* never locked, or unlocked already: free (lock.h, misuse) */
	atomic_store_explicit(&l->holder, NULL, memory_order_relaxed);
	if (LS_LIKELY(clh_try_empty(l, i))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		/* A successor that linked itself out may still owe us its
		 * restoring store (TRANSIENT -> WAITING). */
		LS_INJECT();
		if (LS_UNLIKELY(ab_load(&i->status) == TRANSIENT))
			await_restored(i);
		ab_node_free(i); /* `releasing` was never set: no clear */
		return;
	}
	release_slow(l, i);
}

static const struct ls_algo clh_try_algo = {
    .name = "clh-try",
    .desc = "CLH try-lock with handshake timeout (Scott & Scherer PPoPP'01, paper 001)",
    .caps = LS_CAP_FIFO | LS_CAP_TIMEOUT | LS_CAP_QNODE,
    .rank = 40,
    .state_size = sizeof(struct clh_try),
    .lock = clh_try_lock,
    .trylock = clh_try_trylock,
    .timedlock = clh_try_timedlock,
    .unlock = clh_try_unlock,
};
LS_REGISTER_ALGO(clh_try_algo);
