/*
 * mcs_try.c - MCS try-lock with timeout (handshake-based).
 *
 * Scott & Scherer, "Scalable Queue-Based Spin Locks with Timeout", PPoPP
 * 2001, ../shared/papers/001_4191f6f0cf692594.txt, "MCS queue-based spin
 * lock with timeout" (complete code). This is a line-by-line rendering of
 * that listing: the step numbers, names, the RELINK macro (relink() here)
 * and the comments in quotes are the paper's.
 *
 * The queue is doubly linked. A waiter spins on its own node's prev. To
 * time out it (1) marks its next LEAVING_SELF, learning its successor,
 * (2) tells the successor with LEAVING_OTHER in succ->prev, (3) marks its
 * prev LEAVING_SELF, learning its predecessor, (4) tells the predecessor
 * through pred->next, (5) tells the successor its new predecessor (or
 * swings the tail back), (6) the successor introduces itself to the
 * predecessor. Neighbours leaving at the same time are ordered by who won
 * each swap; a thread that is granted the lock while leaving undoes its
 * steps ("serendipity"). The handshakes wait for neighbours, so a
 * preempted neighbour delays a timeout: see mcs-nb (TR 773) for the
 * non-blocking version.
 *
 * Node fields (tagged pointers; real node pointers are 64-byte aligned and
 * above 0x10): prev/next hold nil, a node, a node | RESTORED (= TRANSIENT,
 * 0x1), a node | GRANTED (0x2), or LEAVING_SELF (0x4), LEAVING_OTHER (0x8),
 * GONE (0xc). The listing's comment at its definitions gives each meaning.
 *
 * Waiting. The watched fields are 64-bit, wider than a futex, so each node
 * has a 32-bit event word `seq`: every write to a node's prev or next is
 * followed by ab_notify(&node->seq), and every spin of the listing is an
 * AB_AWAIT on the node whose field it reads (abortable.h, part 3). All field
 * accesses are seq_cst, which that protocol needs and which the listing's
 * `volatile` on a sequentially consistent machine assumed.
 *
 * Who frees which node (ls_node_alloc, one per attempt): the listing makes a
 * node reusable by its caller once acquire returns false or release
 * returns, so the owner frees it exactly there.
 *
 * Departures: unlock may run on any thread, so the holder's node is kept in
 * the state; trylock is one CAS of an empty tail (no node enters the queue);
 * the spin loops of release and of the handshakes wait through the policy;
 * lock() is an attempt with infinite patience (the timeout path never runs).
 *
 * One departure fixes a livelock of the listing. A releaser grants the lock
 * only by a CAS on its own next field naming a successor that still waits;
 * a successor whose patience has run out leaves (its step 4 swaps that
 * field away) a few hundred ns after it learns its predecessor. When
 * waiters keep timing out and coming back (short patience, more threads
 * than cores), a releaser that is descheduled, yielding or asleep between
 * two looks at its next field finds every successor already leaving, and
 * nobody acquires for seconds: 6 threads on 2 loaded cores with 20 us
 * patience stalled 2-10 s, with 2,000-22,000 timeouts during the stall and
 * one thread in release (tests/stress.bats' failure under load). So a
 * releaser that cannot hand over at once sets `releasing` in its node, and
 * a waiter whose deadline passes while its predecessor is releasing does
 * not leave: it waits, without deadline, for that predecessor's grant.
 * Successors that read the flag before it was set may still leave, so the
 * releaser waits for the departures already under way, no more. A timed
 * waiter may then return 0 after its deadline, once the unlock that was
 * already running completes (POSIX ends the wait at the deadline while the
 * mutex cannot be locked; it is being unlocked), and it never waits for a
 * holder that has not begun to release.
 *
 * `releasing` is 1 only between that store and the node's free (release
 * clears it first), so a node from the pool has it 0: carved memory is
 * zero and the pool writes only a free node's last 8 bytes (pool.h).
 *
 * fork() (fork.h). In a fork child, nodes stamped before the fork (`gen`)
 * are the holder's and those of waiters the fork left behind, which never
 * answer a handshake, and whose marks (in their neighbours' next and prev)
 * are never taken back. A live thread never touches a stale node but the
 * holder's: the first live waiter (whose predecessor is stale) links
 * behind the holder's node (`holder`, kept by a hold taken before the fork
 * until the next holder writes its own; a holder that is gone: behind the
 * stale predecessor, for ever), storing over whatever a waiter that is gone
 * left in its next, and then follows the listing with it as predecessor
 * (a timeout too: the holder's node never leaves). A hold taken before the
 * fork empties the queue if its tail is stale, or is its own node again (a
 * live waiter left); else waits until its next names a live node, from
 * which on every change of its next is a live thread's and the listing's
 * release goes on. Its node is never freed if it emptied the queue.
 * Its unlock clears `holder` first, as every unlock does, and puts it back
 * once its fast path has failed and it finds its node stale (the
 * uncontended path checks nothing): until then the first live waiter
 * looks again after slices of sleep, before it links. A release that
 * emptied the queue does not wait for a leaver that is gone.
 *
 * After the release (lock.h): the CAS that empties the queue, or the grant
 * (the swap into the successor's prev), is the last access to the lock;
 * the handshakes after it wait on our own node only. Misuse: unlock takes
 * the holder field and clears it, so an unlock of a free lock finds NULL
 * and returns.
 */
#define LS_NODE_CLASS LS_NODES_MCS_TRY /* pool.h: nodes reused only by this algorithm */
#include "abortable.h"
#include "fork.h"

typedef uintptr_t ptr;

struct node {
	_Atomic ptr prev;
	_Atomic ptr next;
	_Atomic uint32_t seq;
	_Atomic uint32_t releasing; /* its owner is releasing: see the header */
	uint32_t gen;		    /* fork generation when enqueued */
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct mcs_try {
	_Atomic ptr tail;
	struct node *_Atomic holder;
};
_Static_assert(sizeof(struct mcs_try) <= LS_INLINE_STATE, "inline state");

#define NIL ((ptr)0x0)
#define LEAVING_SELF ((ptr)0x4)
#define LEAVING_OTHER ((ptr)0x8)
#define GONE ((ptr)0xc)
#define RESTORED_TAG ((ptr)0x1)
#define GRANTED_TAG ((ptr)0x2)
#define is_restored(p) ((p)&RESTORED_TAG)
#define is_transient(p) is_restored(p)
#define is_granted(p) ((p)&GRANTED_TAG)
#define restored(p) ((p) | RESTORED_TAG)
#define transient(p) restored(p)
#define granted(p) ((p) | GRANTED_TAG)
#define cleaned(p) ((p) & ~(ptr)0x3)
#define is_real(p) (!is_granted(p) && (p) > 0x10)
#define N(p) ((struct node *)(p))

/* Field access: seq_cst, and every change notifies the node's event word. */
static inline ptr ld(_Atomic ptr *f)
{
	return atomic_load_explicit(f, memory_order_seq_cst);
}

static inline void st(struct node *n, _Atomic ptr *f, ptr v)
{
	atomic_store_explicit(f, v, memory_order_seq_cst);
	ab_notify(&n->seq);
}

static inline ptr sw(struct node *n, _Atomic ptr *f, ptr v)
{
	ptr old = atomic_exchange_explicit(f, v, memory_order_seq_cst);
	ab_notify(&n->seq);
	return old;
}

/* compare_and_swap: returns the old value */
static inline ptr cas_val(struct node *n, _Atomic ptr *f, ptr expect, ptr v)
{
	if (atomic_compare_exchange_strong_explicit(f, &expect, v, memory_order_seq_cst,
						    memory_order_seq_cst))
		ab_notify(&n->seq);
	return expect;
}

/* compare_and_store: returns success */
static inline bool cas(struct node *n, _Atomic ptr *f, ptr expect, ptr v)
{
	return cas_val(n, f, expect, v) == expect;
}

/* Whether pred, read from the caller's prev, has begun to release. pred may
 * have been freed and reused since (type-stable memory): the caller then
 * finds its prev changed when it looks again. seq_cst: pairs with the store
 * in mark_releasing (Dekker: flag store then next load there; next swap in
 * relink, prev load, flag load here). */
static inline AB_NOSAN bool is_releasing(ptr pred)
{
	return atomic_load_explicit(&N(pred)->releasing, memory_order_seq_cst) != 0;
}

static void mark_releasing(struct node *I)
{
	atomic_store_explicit(&I->releasing, 1, memory_order_seq_cst);
	LS_TEST_POINT(LS_POINT_RELEASING);
}

/* Before the releaser frees its node: no successor looks at it any more. */
static void release_free(struct node *I)
{
	/* relaxed: we are the node's last user; the pool orders its next allocation */
	atomic_store_explicit(&I->releasing, 0, memory_order_relaxed);
	ab_node_free(I);
}

/* Spin (through the policy) while cond, which reads fields of node n. */
#define AWAIT(n, cond) ((void)AB_AWAIT(&(n)->seq, cond, AB_NEVER))

/*
 * RELINK: "prev pointer has changed from pred to temp, and we know temp is
 * a real (though possibly restored) pointer. If temp represents a new
 * predecessor, update pred to point to it, clear restored flag, if any on
 * prev pointer, and set next field of new predecessor (if not restored) to
 * point to me. In effect, RELINK is step 6."
 */
static void relink(struct node *I, ptr *predp, ptr *tempp)
{
	ptr pred = *predp, temp = *tempp;
	do {
		LS_INJECT();
		if (is_restored(temp)) {
			/* remove tag bit from pointer, if it hasn't been
			 * changed to something else */
			(void)cas_val(I, &I->prev, temp, cleaned(temp));
			temp = cleaned(temp);
		} else {
			pred = temp;
			temp = sw(N(pred), &N(pred)->next, (ptr)I);
			if (temp == LEAVING_SELF) {
				/* "Wait for predecessor to notice I've set its
				 * next pointer and move on to step 2 (or, if
				 * I'm slow, step 5)." */
				AWAIT(I, (temp = ld(&I->prev)) == pred);
				continue;
			}
		}
		break;
	} while (is_real(temp));
	*predp = pred;
	*tempp = temp;
}

/* n was enqueued before this process forked (see the header; abortable.h) */
static inline bool stale(ptr n)
{
	return ab_fork_stale(&N(n)->gen);
}

static __attribute__((noinline)) int slow(struct mcs_try *l, struct node *I, ptr pred, uint64_t deadline)
{
	ptr succ = NIL, temp;

	LS_TEST_POINT(LS_POINT_VISIBLE);
	LS_TEST_POINT(LS_POINT_ENQUEUED);
	if (LS_UNLIKELY(stale(pred))) {
		/* The first live waiter of a fork child: behind the holder
		 * (see the header). relaxed: written before the fork, kept
		 * until we write ours. */
		ptr h;
		for (uint64_t slice = 1000000;
		     !(h = (ptr)atomic_load_explicit(&l->holder, memory_order_relaxed));) {
			/* Its unlock has not put it back yet, or the holder is
			 * gone: look again after a slice of sleep (a private
			 * word nobody wakes); at the deadline, go on behind the
			 * stale node and time out there. */
			uint64_t now = ls_now_ns();
			if (deadline != AB_NEVER && now >= deadline)
				break;
			_Atomic uint32_t nobody = 0;
			ls_futex_wait(&nobody, 0, deadline < now + slice ? deadline : now + slice);
			slice = slice < 16000000 ? slice * 2 : slice;
		}
		if (h)
			pred = h;
		st(I, &I->prev, pred);
		st(N(pred), &N(pred)->next, (ptr)I);
		goto wait;
	}
	st(I, &I->prev, transient(NIL)); /* word on which to spin */
	LS_INJECT();
	/* Make predecessor point to me, but preserve transient tag if set. */
	do {
		temp = ld(&N(pred)->next);
	} while (!cas(N(pred), &N(pred)->next, temp, is_transient(temp) ? transient((ptr)I) : (ptr)I));
	LS_INJECT();
	/* "Old value (temp) can't be granted, because predecessor sets that
	 * only via CAS from a legitimate pointer value. Might be nil
	 * (possibly transient) or leaving_self, though." */
	if (is_transient(temp)) {
		/* Wait for the process that used to occupy my slot in the
		 * queue to clear the transient tag on our (common)
		 * predecessor's next pointer. */
		AWAIT(I, ld(&I->prev) == transient(NIL));
		/* Store pred for future reference, if predecessor has not
		 * modified my prev pointer already. */
		(void)cas_val(I, &I->prev, NIL, pred);
	} else if (temp == LEAVING_SELF) {
		/* "I've probably got the wrong predecessor. Must wait to
		 * learn id of real one, *without timing out*." */
		AWAIT(I, (temp = ld(&I->prev)) == transient(NIL));
		if (is_real(temp))
			relink(I, &pred, &temp);
	} else {
		(void)cas_val(I, &I->prev, transient(NIL), pred);
	}

wait:
	for (;;) {
		LS_INJECT();
		if (AB_AWAIT(&I->seq, (temp = ld(&I->prev)) == pred, deadline)) {
			/* Out of patience; but a predecessor that is releasing
			 * grants the lock to whoever its next names: stay (see
			 * the header) until prev changes. */
			if (!is_releasing(pred))
				goto timeout; /* 2-level break */
			LS_TEST_POINT(LS_POINT_STAYING);
			AWAIT(I, (temp = ld(&I->prev)) == pred);
		}
		if (is_granted(temp)) /* this test is an optimization */
			break;
		if (temp == LEAVING_OTHER) {
			/* Predecessor is leaving; wait for identity of new
			 * predecessor. */
			AWAIT(I, (temp = ld(&I->prev)) == LEAVING_OTHER);
		}
		if (is_granted(temp))
			break;
		relink(I, &pred, &temp);
	}
	/* Handshake with predecessor. */
	pred = cleaned(temp);
	st(N(pred), &N(pred)->next, NIL);
	/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or after the
	 * program's own synchronisation) */
	atomic_store_explicit(&l->holder, I, memory_order_relaxed);
	return 0;

timeout: /* Timeout has expired; try to leave. */
	/* Step 1: Atomically identify successor (if any) and indicate intent
	 * to leave. */
	for (;;) {
		LS_INJECT();
		do {
			AWAIT(I, is_transient(succ = ld(&I->next)));
		} while (!cas(I, &I->next, succ, LEAVING_SELF)); /* don't replace a transient value */
		if (succ == GONE)
			succ = NIL;
		if (succ == NIL) {
			/* No visible successor; we'll end up skipping steps 2
			 * and doing an alternative step 6. */
			break;
		}
		if (succ == LEAVING_OTHER) {
			/* Wait for new successor to complete step 6. */
			AWAIT(I, ld(&I->next) == LEAVING_SELF);
			continue;
		}
		break;
	}

	/* Step 2: Tell successor I'm leaving. This takes precedence over
	 * successor's desire to leave. */
	if (succ != NIL) {
		LS_INJECT();
		temp = sw(N(succ), &N(succ)->prev, LEAVING_OTHER);
		if (temp == LEAVING_SELF) {
			/* Successor is also trying to leave, and beat me to the
			 * punch. Wait until it tries to modify my next pointer
			 * (it fails step 4 and points it back at its node). */
			AWAIT(I, ld(&I->next) != succ);
		}
	}

	/* Step 3: Atomically identify predecessor and indicate intent to
	 * leave. */
	for (;;) {
		ptr n;
		LS_INJECT();
		temp = sw(I, &I->prev, LEAVING_SELF);
		if (is_granted(temp))
			goto serendipity;
		if (temp == LEAVING_OTHER) {
			/* Predecessor is also trying to leave; it takes
			 * precedence. */
			AWAIT(I, (temp = ld(&I->prev)) == LEAVING_SELF || temp == LEAVING_OTHER);
			if (is_granted(temp)) {
				/* Predecessor won the race, then experienced
				 * serendipity itself, restored my prev pointer,
				 * finished its critical section, and released. */
				goto serendipity;
			}
			relink(I, &pred, &temp);
			continue;
		}
		if (temp != pred) {
			/* Set pred->next to I first, or my new predecessor
			 * could see a stale leaving_other and assume I won a
			 * race I lost (see the listing). */
			relink(I, &pred, &temp);
		}

		/* Step 4: Tell predecessor I'm leaving. */
		LS_INJECT();
		if (succ == NIL)
			n = sw(N(pred), &N(pred)->next, transient(NIL));
		else
			n = sw(N(pred), &N(pred)->next, LEAVING_OTHER);
		if (is_granted(n)) {
			/* Predecessor is passing me the lock; wait for it to
			 * do so. */
			AWAIT(I, (temp = ld(&I->prev)) == LEAVING_SELF);
			goto serendipity;
		}
		if (n == LEAVING_SELF) {
			/* Predecessor is also trying to leave. I got to step 3
			 * before it got to step 2, but it got to step 1 before
			 * I got to step 4. It will wait in Step 2 for me to
			 * acknowledge that my step 4 has failed. */
			st(N(pred), &N(pred)->next, (ptr)I);
			/* Wait for new predecessor (completion of old
			 * predecessor's step 5). */
			AWAIT(I, (temp = ld(&I->prev)) == LEAVING_SELF /* what I set */
				     || temp == LEAVING_OTHER /* what pred will set in step 2 */);
			if (is_granted(temp))
				goto serendipity;
			relink(I, &pred, &temp);
			continue;
		}
		break;
	}

	LS_TEST_POINT(LS_POINT_LEAVING);
	LS_INJECT();
	if (succ == NIL) {
		/* Step 5: Try to fix global pointer. I is ours and alive: no
		 * ABA on this CAS. */
		ptr expected = (ptr)I;
		if (atomic_compare_exchange_strong_explicit(&l->tail, &expected, pred, memory_order_seq_cst,
							    memory_order_seq_cst)) {
			/* Step 6: Try to clear transient tag. */
			temp = cas_val(N(pred), &N(pred)->next, transient(NIL), GONE);
			if (temp != transient(NIL)) {
				st(N(pred), &N(pred)->next, cleaned(temp));
				/* New successor got into the timing window, and
				 * is now waiting for me to signal it. */
				temp = cleaned(temp);
				(void)cas_val(N(temp), &N(temp)->prev, transient(NIL), NIL);
			}
		} else {
			/* Somebody has gotten into line. It will discover that
			 * I'm leaving and wait for me to tell it who the real
			 * predecessor is. */
			AWAIT(I, (succ = ld(&I->next)) == LEAVING_SELF);
			st(N(pred), &N(pred)->next, LEAVING_OTHER);
			st(N(succ), &N(succ)->prev, pred);
		}
	} else {
		/* Step 5: Tell successor its new predecessor. */
		st(N(succ), &N(succ)->prev, pred);
	}
	/* Step 6: Count on successor to introduce itself to predecessor. */
	ab_node_free(I);
	return ETIMEDOUT;

serendipity: /* I got the lock after all; temp holds a granted value read
	      * from my prev pointer. */
	LS_INJECT();
	/* Handshake with predecessor: */
	pred = cleaned(temp);
	st(N(pred), &N(pred)->next, NIL);
	if (succ == NIL) {
		/* I don't think I have a successor. Try to undo step 1. */
		if ((temp = cas_val(I, &I->next, LEAVING_SELF, succ)) != LEAVING_SELF) {
			/* I have a successor after all. It will be waiting for
			 * me to tell it who its real predecessor is. Since it's
			 * me after all, I have to tag the value so successor
			 * will notice change. Undo step 2: */
			st(N(temp), &N(temp)->prev, restored((ptr)I));
		}
	} else {
		/* I have a successor, which may or may not have been trying
		 * to leave. In either case, I->next is now correct. Undo step
		 * 1, then step 2: */
		st(I, &I->next, succ);
		st(N(succ), &N(succ)->prev, restored((ptr)I));
	}
	/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or after the
	 * program's own synchronisation) */
	atomic_store_explicit(&l->holder, I, memory_order_relaxed);
	return 0;
}

static int acquire(struct mcs_try *l, uint64_t deadline)
{
	struct node *I = ab_node_alloc();
	/* relaxed: published by the release of the exchange or CAS that enqueues the node */
	atomic_store_explicit(&I->next, NIL, memory_order_relaxed);
	I->gen = ls_fork_stamp();
	LS_INJECT();
	ptr pred = atomic_exchange_explicit(&l->tail, (ptr)I, memory_order_seq_cst);
	if (LS_LIKELY(pred == NIL)) { /* lock was free */
		/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or after
		 * the program's own synchronisation) */
		atomic_store_explicit(&l->holder, I, memory_order_relaxed);
		return 0;
	}
	return slow(l, I, pred, deadline);
}

static void mcs_try_lock(void *state)
{
	acquire(state, AB_NEVER);
}

static int mcs_try_timedlock(void *state, uint64_t deadline_ns)
{
	return acquire(state, deadline_ns);
}

static int mcs_try_trylock(void *state)
{
	struct mcs_try *l = state;
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (atomic_load_explicit(&l->tail, memory_order_relaxed) != NIL)
		return EBUSY;
	struct node *I = ab_node_alloc();
	ptr expected = NIL;
	/* relaxed: published by the release of the exchange or CAS that enqueues the node */
	atomic_store_explicit(&I->next, NIL, memory_order_relaxed);
	I->gen = ls_fork_stamp();
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &expected, (ptr)I, memory_order_seq_cst,
						     memory_order_relaxed)) {
		ab_node_free(I);
		return EBUSY;
	}
	/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or after the
	 * program's own synchronisation) */
	atomic_store_explicit(&l->holder, I, memory_order_relaxed);
	return 0;
}

/* Release, all cases; the next field has been found not NIL, or the tail
 * has moved. */
static void release_loop(struct mcs_try *l, struct node *I)
{
	ptr succ;
	for (;;) {
		LS_INJECT();
		succ = ld(&I->next);
		if (succ == LEAVING_OTHER || is_transient(succ)) {
			/* successor is leaving, but will update me */
			mark_releasing(I);
			AWAIT(I, ld(&I->next) == succ);
			continue;
		}
		if (succ == GONE) {
			if (cas(I, &I->next, GONE, NIL))
				succ = NIL;
			else
				continue;
		}
		if (succ == NIL) {
			/* Try to fix global pointer. */
			ptr expected = (ptr)I;
			if (atomic_compare_exchange_strong_explicit(
				&l->tail, &expected, NIL, memory_order_seq_cst, memory_order_seq_cst)) {
				LS_TEST_POINT(LS_POINT_RELEASED);
				/* Make sure anybody who happened to sneak in
				 * and leave again has finished looking at my
				 * qnode. */
				AWAIT(I, is_transient(ld(&I->next)));
				release_free(I);
				return; /* I was last in line. */
			}
			mark_releasing(I);
			AWAIT(I, ld(&I->next) == NIL);
			continue;
		}
		if (cas(I, &I->next, succ, granted(NIL))) {
			/* I have atomically identified my successor and
			 * indicated that I'm releasing; now tell successor it
			 * has the lock. */
			LS_INJECT();
			(void)sw(N(succ), &N(succ)->prev, granted((ptr)I));
			LS_TEST_POINT(LS_POINT_RELEASED);
			/* Handshake with successor to make sure it won't try
			 * to access my qnode any more (might have been
			 * leaving). */
			AWAIT(I, ld(&I->next) != NIL);
			release_free(I);
			return;
		}
		/* Else successor changed. Every iteration sees a different
		 * (real) successor, so there isn't really a global spin; but
		 * without the flag each could be leaving (see the header). */
		mark_releasing(I);
	}
}

/* After a release that emptied the queue: a waiter that sneaked in and
 * left may still be looking at I. One that fork left behind never stops. */
static __attribute__((noinline)) void await_restored(struct node *I)
{
	if (!stale((ptr)I))
		AWAIT(I, is_transient(ld(&I->next)));
}

/* The release of a hold taken before the process forked (see the header):
 * `holder` stays I for the first live waiter, which overwrites it. */
static __attribute__((noinline)) void fork_release(struct mcs_try *l, struct node *I)
{
	for (;;) {
		ptr t = atomic_load_explicit(&l->tail, memory_order_seq_cst), e = t, n;
		if (t == NIL)
			return; /* free: an unlock too many (lock.h) */
		if (t == (ptr)I || stale(t)) {
			/* Nobody live waits: empty the queue. */
			if (atomic_compare_exchange_strong_explicit(&l->tail, &e, NIL, memory_order_seq_cst,
								    memory_order_seq_cst)) {
				LS_TEST_POINT(LS_POINT_RELEASED);
				return; /* I is never freed: see the header */
			}
			continue;
		}
		/* A live waiter is queued: it links behind I (slow). Until then
		 * I's next may hold what a waiter that is gone left. */
		n = ld(&I->next);
		if (is_real(n) && !is_restored(n) && !stale(n))
			break;
		/* Every change of next, and of the tail back to I (a leaver's
		 * steps 4 and 6), notifies I's event word. */
		AWAIT(I, ld(&I->next) == n && atomic_load_explicit(&l->tail, memory_order_seq_cst) == t);
	}
	release_loop(l, I);
}

/* Release, all cases but the first round's (see mcs_try_unlock). */
static __attribute__((noinline)) void release_slow(struct mcs_try *l, struct node *I)
{
	if (LS_UNLIKELY(stale((ptr)I))) {
		/* A hold taken before the fork: `holder` back for the first
		 * live waiter, then its release (see the header). */
		atomic_store_explicit(&l->holder, I, memory_order_relaxed);
		fork_release(l, I);
		return;
	}
	release_loop(l, I);
}

static void mcs_try_unlock(void *state)
{
	struct mcs_try *l = state;
	/* relaxed: written by the acquisition this unlock ends; unlock may
	 * run on another thread only after the program's own synchronisation */
	struct node *I = atomic_load_explicit(&l->holder, memory_order_relaxed);
	if (LS_UNLIKELY(!I))
		return; /* never locked, or unlocked already: free (lock.h, misuse) */
	atomic_store_explicit(&l->holder, NULL, memory_order_relaxed);
	/* No successor, and the tail swings back: the listing's first round
	 * of the loop, peeled off so that it leaves `releasing` alone (never
	 * set on this path). */
	ptr expected = (ptr)I;
	if (LS_LIKELY(ld(&I->next) == NIL &&
		      atomic_compare_exchange_strong_explicit(&l->tail, &expected, NIL, memory_order_seq_cst,
							      memory_order_seq_cst))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		if (LS_UNLIKELY(is_transient(ld(&I->next))))
			await_restored(I);
		ab_node_free(I);
		return;
	}
	release_slow(l, I);
}

static const struct ls_algo mcs_try_algo = {
    .name = "mcs-try",
    .desc = "MCS try-lock with handshake timeout (Scott & Scherer PPoPP'01, paper 001)",
    .caps = LS_CAP_FIFO | LS_CAP_TIMEOUT | LS_CAP_QNODE,
    .rank = 41,
    .state_size = sizeof(struct mcs_try),
    .lock = mcs_try_lock,
    .trylock = mcs_try_trylock,
    .timedlock = mcs_try_timedlock,
    .unlock = mcs_try_unlock,
};
LS_REGISTER_ALGO(mcs_try_algo);
