/*
 * clh_tp.c - CLH-TP, the CLH time-published lock.
 *
 * He, Scherer, Scott, "Preemption Adaptivity in Time-Published Queue-Based
 * Spin Locks", TR 867, Rochester 2005, ../shared/papers/000_9c294dcad948dd76.txt:
 * section 2 (common design), 2.2 and figures 3-4 (CLH-TP), appendix A.2
 * (bounds), appendix C and figure 14 (code and control flow). Figure 14 is
 * lost in the text extraction; the control flow below follows the listing
 * of C.2.2 (clhttp_acquire_slow_path), which survived.
 *
 * Design. A CLH queue linked tail to head: each attempt allocates a node,
 * links it to the previous tail and spins on that predecessor's word. The
 * state of a node is packed with its predecessor pointer in one word,
 * `prev`, so that state and link change together by CAS. A waiter
 * publishes a timestamp in its node; it removes a predecessor that left
 * (timed out) or whose timestamp is stale (preempted), so the lock passes
 * only between running threads; it claims the lock when its predecessor is
 * AVAILABLE. Release just marks the holder's node AVAILABLE. A waiter that
 * fails or times out yields if the holder's critical section is older than
 * LOCKSWAP_TP_MAX_CS_NS. As A.2 says, a waiter stops publishing
 * UPDATE_DELAY before its patience ends, so that its successor may remove
 * it rather than find it left. lock() never fails: it retries failed
 * attempts, each with LOCKSWAP_TP_PATIENCE_NS.
 *
 *	state:	tail	last node (NULL until first use; then the last
 *			holder's AVAILABLE node stays as the CLH dummy)
 *		holder	the holder's node, for unlock
 *		cs_start when the holder acquired (MAXIMUM_CS_TIME)
 *	node:	prev	pred|WAITING	waiting behind pred
 *			pred|LEFT	timed out; the successor unlinks and frees it
 *			pred|TRANSIENT	being removed by its successor
 *			pred|FROZEN	(ours) owner is removing pred; see below
 *			HOLDING, AVAILABLE, REMOVED   (values below 64: nodes are
 *			64-byte aligned, so no node pointer is that small)
 *		time	owner's published time (not updated while it sleeps)
 *		event	bumped when prev changes in a way the successor waits
 *			for, under "park" only (the successor sleeps on it)
 *
 * Transitions (figure 3): owner W->HOLDING (claim), W->LEFT (timeout),
 * W->W' (unlinks its pred), TRANSIENT->LEFT (noticed its removal: delegates
 * freeing to the remover), W->FROZEN->W'; holder HOLDING->AVAILABLE;
 * successor W->TRANSIENT->REMOVED (removal).
 *
 * Who frees each node: the successor frees an AVAILABLE predecessor when it
 * claims the lock, and a LEFT one when it unlinks it; of a removed node's
 * owner and remover, the one that comes second (the owner finding REMOVED,
 * or the remover whose TRANSIENT->REMOVED CAS fails because the owner wrote
 * LEFT) frees it; destroy frees the dummy and any LEFT nodes behind it.
 *
 * Replacing LL/SC (figure 4). Removing a preempted predecessor A (node a)
 * needs "mark a TRANSIENT only if my own node b is still WAITING", because
 * of the race of section 2.2: if B stalls between deciding and marking, a
 * successor C may remove b and then a, a may be freed and reused, and B
 * would corrupt the new a. The paper does this with LL(a), check b, SC(a).
 * x86-64 has no LL/SC and no CAS on two words, so B first FREEZES its own
 * node: CAS b.prev from a|WAITING to a|FROZEN. Why this is enough:
 *   - the CAS succeeds only if b is still waiting with a as predecessor;
 *   - while b is FROZEN, nobody else changes b.prev (C's removal needs
 *     b WAITING; only b's owner claims, leaves or unlinks), so b stays in
 *     the queue with a as predecessor;
 *   - a node is freed only by its current successor's owner, by its own
 *     owner after that successor marked it REMOVED, or after that successor
 *     has itself been removed; with b frozen and B busy, none can happen to
 *     a, so a is the same node B decided about, and a plain CAS on a.prev
 *     (WAITING->TRANSIENT, from the value read before the freeze) is the
 *     conditional update; it fails harmlessly if A claimed, left or froze;
 *   - B then unlinks a and unfreezes b in one store (b.prev = a's pred),
 *     and marks a REMOVED (or frees it, if A already wrote LEFT).
 * Every other decision a waiter takes after reading a possibly recycled
 * predecessor is a CAS on its own word that expects that predecessor, as in
 * the paper. The price: while b is frozen (three steps) C cannot remove b;
 * if B is preempted right there, C waits for B as behind any live waiter.
 * Also from LL/SC: swap_and_set (set I.prev and swap the tail atomically)
 * becomes a CAS loop on the tail with I.prev written before each CAS, so
 * the paper's INITIAL state (a successor seeing I before I.prev) is gone.
 *
 * Waiting policy. spin/yield as usual, but under yield and park the waiter
 * spins LOCKSWAP_TP_SPIN_FACTOR (16) times the policy's budget before its
 * first yield: a waiter that yields stops publishing and is soon removed
 * (tpclock.h). park: once the spin budget is spent
 * the waiter sleeps on its predecessor's `event`, which whoever releases,
 * leaves or unlinks that node bumps, and publishes nothing more: by the
 * paper's rule a waiter whose time is older than UPDATE_DELAY is not
 * running, so a running successor removes it as preempted (remove_pred
 * bumps the sleeper's predecessor's event, which wakes it: it finds itself
 * removed and re-queues at the tail). The spin budget is one per lock()
 * or timedlock() call, shared by its attempts (whose patience is shorter
 * than a budget of yields on a busy machine): a waiter removed while it
 * slept re-queues and sleeps again at once, so that while a holder holds
 * for long the waiters settle asleep instead of removing and waking each
 * other round and round. A sleeper whose successor sleeps too is not
 * removed: it is woken by its predecessor's release, as in plain CLH.
 * A bump may land on a node just freed and reused: event is not the pool's
 * link word, so that is a spurious wake-up.
 *
 * After the release (lock.h): the store of AVAILABLE into the holder's
 * node is the last access to the lock; the bump that follows is on that
 * node (type-stable). Misuse: unlock takes the holder field and clears it
 * (the node then belongs to its successor), so an unlock of a free lock
 * finds NULL and returns.
 */
#define LS_NODE_CLASS LS_NODES_CLH_TP /* pool.h: nodes reused only by this algorithm */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "lock.h"
#include "pool.h"
#include "tp.h"
#include "tpclock.h"
#include "wait.h"

enum { WAITING = 0, LEFT = 1, TRANSIENT = 2, FROZEN = 3, TAGMASK = 3 };
#define HOLDING ((uintptr_t)0xB)
#define AVAILABLE ((uintptr_t)0x13)
#define REMOVED ((uintptr_t)0x23)

struct node {
	_Atomic uintptr_t prev;
	_Atomic uint64_t time;
	_Atomic uint32_t event;
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct clhtp {
	_Atomic uintptr_t tail;
	struct node *_Atomic holder;
	_Atomic uint64_t cs_start;
};

static inline bool special(uintptr_t v)
{
	return v < LS_NODE_SIZE;
}
static inline unsigned tag(uintptr_t v)
{
	return (unsigned)(v & TAGMASK);
}
static inline struct node *ptr(uintptr_t v)
{
	return (struct node *)(v & ~(uintptr_t)TAGMASK);
}

/* Wakes n's successor if it sleeps on n (LS_PARKED protocol on a counter). */
static void bump(struct node *n)
{
	if (ls_wait_cfg.policy != LS_WAIT_PARK)
		return;
	/* relaxed: the CAS below orders; a stale value only fails it */
	uint32_t old = atomic_load_explicit(&n->event, memory_order_relaxed);
	/* release: the prev change before this is visible to the sleeper that
	 * reads the new count with acquire (park) */
	while (!atomic_compare_exchange_weak_explicit(&n->event, &old, (old + 1) & ~LS_PARKED,
						      memory_order_release, memory_order_relaxed)) {
	}
	if (old & LS_PARKED)
		ls_futex_wake(&n->event, INT_MAX);
}

static bool holder_stalled(struct clhtp *l)
{
	/* relaxed: a heuristic (a yield) */
	return ls_tp_older(atomic_load_explicit(&l->cs_start, memory_order_relaxed), ls_tp_now(),
			   ls_tp_max_cs_ns);
}

/* clhttp_success_epilogue */
static void success(struct clhtp *l, struct node *I, struct node *pred, uint64_t now)
{
	/* relaxed: for unlock (same thread, or after the program's own
	 * synchronisation) and for a heuristic */
	atomic_store_explicit(&l->holder, I, memory_order_relaxed);
	atomic_store_explicit(&l->cs_start, now, memory_order_relaxed);
	if (pred)
		ls_node_free(pred); /* AVAILABLE: we hold its last reference */
}

/* clhttp_failure_epilogue: our node was marked TRANSIENT or REMOVED by our
 * successor. If it completed the removal (REMOVED), the node is ours to
 * free; else we mark it LEFT and the remover frees it. */
static void failure(struct node *I)
{
	uintptr_t v = atomic_load_explicit(&I->prev, memory_order_acquire);
	for (;;) {
		if (v == REMOVED) {
			ls_node_free(I);
			return;
		}
		if (special(v))
			return; /* not reached: HOLDING/AVAILABLE are never failures */
		/* acq_rel: against the remover's TRANSIENT->REMOVED CAS */
		if (atomic_compare_exchange_weak_explicit(&I->prev, &v, (v & ~(uintptr_t)TAGMASK) | LEFT,
							  memory_order_acq_rel, memory_order_acquire))
			return;
	}
}

/* Removes our predecessor `pred`, whose prev we read as pp (WAITING, stale
 * timestamp). Returns true if it is gone (our prev is now pp). */
static bool remove_pred(struct node *I, struct node *pred, uintptr_t pp)
{
	uintptr_t e = (uintptr_t)pred;
	/* Freeze: we are still WAITING behind pred, and stay so (see the
	 * header). acq_rel: pred's memory is not reused while we hold it. */
	if (!atomic_compare_exchange_strong_explicit(&I->prev, &e, (uintptr_t)pred | FROZEN,
						     memory_order_acq_rel, memory_order_relaxed))
		return false; /* our successor is removing us */
	LS_INJECT();
	e = pp;
	/* Step 1: pred WAITING -> TRANSIENT (its owner can no longer claim or
	 * reuse it). acq_rel: against its owner's claim/leave CAS. */
	if (!atomic_compare_exchange_strong_explicit(&pred->prev, &e, (pp & ~(uintptr_t)TAGMASK) | TRANSIENT,
						     memory_order_acq_rel, memory_order_relaxed)) {
		/* it claimed, left or moved: unfreeze; only we write a frozen word */
		atomic_store_explicit(&I->prev, (uintptr_t)pred, memory_order_release);
		return false;
	}
	LS_INJECT();
	/* Step 2: unlink pred and unfreeze. release: a successor that reads
	 * our new prev sees a consistent node. */
	atomic_store_explicit(&I->prev, pp & ~(uintptr_t)TAGMASK, memory_order_release);
	bump(ptr(pp)); /* pred's owner may sleep on its own predecessor */
	LS_INJECT();
	/* Step 3: pred TRANSIENT -> REMOVED; if its owner marked it LEFT first,
	 * it left the node to us. */
	e = (pp & ~(uintptr_t)TAGMASK) | TRANSIENT;
	if (!atomic_compare_exchange_strong_explicit(&pred->prev, &e, REMOVED, memory_order_acq_rel,
						     memory_order_acquire))
		ls_node_free(pred);
	return true;
}

/* Sleeps on pred's event while pred->prev is still pp and ours still pred. */
static void park(struct node *I, struct node *pred, uintptr_t pp, uint64_t deadline)
{
	/* acquire: pairs with the release RMW in bump */
	uint32_t ev = atomic_load_explicit(&pred->event, memory_order_acquire);
	if (atomic_load_explicit(&pred->prev, memory_order_acquire) != pp ||
	    atomic_load_explicit(&I->prev, memory_order_acquire) != (uintptr_t)pred)
		return;
	/* acq_rel: either bump's CAS sees LS_PARKED and wakes us, or ours
	 * fails because bump changed the count */
	if (!(ev & LS_PARKED) &&
	    !atomic_compare_exchange_strong_explicit(&pred->event, &ev, ev | LS_PARKED, memory_order_acq_rel,
						     memory_order_relaxed))
		return;
	ls_futex_wait(&pred->event, ev | LS_PARKED, deadline);
}

/* The spin budget (ls_spin.n) spent so far in this thread's lock() or
 * timedlock() call, which the call's next attempt continues from (see the
 * header); 0 outside such calls, so that the uncontended path never
 * touches it. */
static __thread __attribute__((tls_model("initial-exec"))) unsigned spun;

/* clhttp_acquire_slow_path (appendix C.2.2). `start`: our enqueue time;
 * `end`: patience, ls_tp_now() time; `deadline`: the caller's (0: none),
 * which a sleeping waiter waits for instead of `end`. Leaves the budget
 * it spent in `spun` if it fails, 0 if it succeeds. */
static bool slow_path(struct clhtp *l, struct node *I, struct node *pred, uint64_t start, uint64_t end,
		      uint64_t deadline)
{
	/* relaxed: a timestamp, compared only with later ones of the same node */
	uint64_t pred_time = atomic_load_explicit(&pred->time, memory_order_relaxed), published = start;
	struct ls_spin sp = {spun};
	bool parked = false;
	for (;;) {
		uint64_t now = ls_tp_now();
		/* Publish at most every UPDATE_DELAY/8 (each store takes the line
		 * our successor spins on), and not in the last UPDATE_DELAY of
		 * our patience (A.2). */
		if (!parked && now - published >= ls_tp_update_delay_ns / 8 &&
		    (int64_t)(now + ls_tp_update_delay_ns - end) < 0) {
			/* relaxed: a timestamp; a stale one only makes us look preempted */
			atomic_store_explicit(&I->time, now, memory_order_relaxed);
			published = now;
		}
		/* (A) acquire: pairs with (B) in clhtp_unlock */
		uintptr_t pp = atomic_load_explicit(&pred->prev, memory_order_acquire);
		if (pp == AVAILABLE) {
			uintptr_t e = (uintptr_t)pred;
			LS_INJECT();
			/* acq_rel: against our successor's removal CAS */
			if (atomic_compare_exchange_strong_explicit(
				&I->prev, &e, HOLDING, memory_order_acq_rel, memory_order_relaxed)) {
				success(l, I, pred, now);
				spun = 0;
				return true;
			}
			failure(I);
			spun = sp.n;
			return false;
		}
		if (pp == REMOVED) { /* pred was removed by our successor: so were we */
			failure(I);
			spun = sp.n;
			return false;
		}
		if (!special(pp)) {
			struct node *ppn = ptr(pp);
			if (tag(pp) == LEFT) {
				/* pred timed out: unlink it (checking we are still
				 * WAITING behind it) and free it. */
				uintptr_t e = (uintptr_t)pred;
				LS_INJECT();
				if (!atomic_compare_exchange_strong_explicit(&I->prev, &e, (uintptr_t)ppn,
									     memory_order_acq_rel,
									     memory_order_relaxed)) {
					failure(I);
					spun = sp.n;
					return false;
				}
				ls_node_free(pred);
				pred = ppn;
				/* relaxed: a timestamp (as above) */
				pred_time = atomic_load_explicit(&pred->time, memory_order_relaxed);
				continue;
			}
			if (tag(pp) == WAITING && ls_tp_older(pred_time, now, ls_tp_update_delay_ns)) {
				/* relaxed: a timestamp (as above) */
				uint64_t t = atomic_load_explicit(&pred->time, memory_order_relaxed);
				if (t != pred_time) { /* it published since: alive */
					pred_time = t;
					continue;
				}
				if (remove_pred(I, pred, pp)) {
					pred = ppn;
					/* relaxed: a timestamp (as above) */
					pred_time = atomic_load_explicit(&pred->time, memory_order_relaxed);
					continue;
				}
			}
			/* WAITING and alive, FROZEN (pred removes its own
			 * predecessor), TRANSIENT (not reached: only we mark
			 * pred so, inside remove_pred): wait. */
		}
		/* HOLDING, or waiting behind a live pred: check ourselves. */
		uintptr_t me = atomic_load_explicit(&I->prev, memory_order_acquire);
		if (me == REMOVED || (!special(me) && tag(me) == TRANSIENT)) {
			failure(I);
			spun = sp.n;
			return false;
		}
		bool timed_out = parked ? deadline && ls_now_ns() >= deadline : (int64_t)(now - end) >= 0;
		if (timed_out) {
			uintptr_t e = (uintptr_t)pred;
			LS_INJECT();
			/* W -> LEFT; acq_rel: against our successor's removal */
			if (atomic_compare_exchange_strong_explicit(&I->prev, &e, (uintptr_t)pred | LEFT,
								    memory_order_acq_rel,
								    memory_order_relaxed))
				bump(I); /* a sleeping successor unlinks us */
			else
				failure(I);
			spun = sp.n;
			return false;
		}
		if (parked || ls_spin_step_n(&sp, ls_tp_spin())) {
			/* Asleep: our time goes stale and a running successor
			 * removes us as preempted (see the header). */
			parked = true;
			park(I, pred, pp, deadline);
		}
	}
}

/* One attempt (clhttp_acquire): true with the lock held. */
static bool attempt(struct clhtp *l, uint64_t now, uint64_t end, uint64_t deadline, bool may_yield)
{
	struct node *I = ls_node_alloc();
	/* relaxed: published by the release of the exchange or CAS that enqueues the node */
	atomic_store_explicit(&I->time, now, memory_order_relaxed);
	atomic_store_explicit(&I->event, 0, memory_order_relaxed);
	/* swap_and_set without LL/SC: I->prev is set before I is the tail. */
	uintptr_t t = atomic_load_explicit(&l->tail, memory_order_acquire);
	do {
		/* relaxed: published by the acq_rel CAS of the tail below */
		atomic_store_explicit(&I->prev, t ? t : HOLDING, memory_order_relaxed);
		LS_INJECT();
		/* release: our successor, reading tail == I, sees I->prev and
		 * I->time; acquire: pred's fields */
	} while (!atomic_compare_exchange_weak_explicit(&l->tail, &t, (uintptr_t)I, memory_order_acq_rel,
							memory_order_acquire));
	if (!t) { /* first use of the lock: no predecessor */
		success(l, I, NULL, now);
		return true;
	}
	struct node *pred = (struct node *)t;
	LS_TEST_POINT(LS_POINT_VISIBLE);
	LS_INJECT();
	if (atomic_load_explicit(&pred->prev, memory_order_acquire) == AVAILABLE) {
		uintptr_t e = t;
		if (atomic_compare_exchange_strong_explicit(&I->prev, &e, HOLDING, memory_order_acq_rel,
							    memory_order_relaxed)) {
			success(l, I, pred, now);
			return true;
		}
		failure(I);
	} else {
		if (slow_path(l, I, pred, now, end, deadline))
			return true;
	}
	if (may_yield && holder_stalled(l))
		sched_yield();
	return false;
}

/* Attempts until one succeeds or the deadline (0: none) passes (one budget per
 * call, see the header). */
static __attribute__((noinline)) int clhtp_acquire(struct clhtp *l, uint64_t deadline)
{
	for (;;) {
		uint64_t now = ls_tp_now(), end = now + ls_tp_patience_ns;
		if (deadline && deadline < end)
			end = deadline;
		if (attempt(l, now, end, deadline, true))
			return 0;
		if (deadline && ls_now_ns() >= deadline) {
			spun = 0; /* the call ends: outside calls it is 0 */
			return ETIMEDOUT;
		}
		LS_INJECT();
	}
}

/* The first attempt inline: the uncontended lock makes no other call. */
static void clhtp_lock(void *state)
{
	struct clhtp *l = state;
	uint64_t now = ls_tp_now();
	if (LS_UNLIKELY(!attempt(l, now, now + ls_tp_patience_ns, 0, true)))
		clhtp_acquire(l, 0);
}

/* Succeeds if the lock is free: the tail is NULL, AVAILABLE, or LEFT (then
 * an attempt with no patience unlinks the left nodes down to the AVAILABLE
 * one, or gives up at the first live one). */
static int clhtp_trylock(void *state)
{
	struct clhtp *l = state;
	uintptr_t t = atomic_load_explicit(&l->tail, memory_order_acquire);
	if (t) {
		uintptr_t v = atomic_load_explicit(&((struct node *)t)->prev, memory_order_acquire);
		if (v != AVAILABLE && (special(v) || tag(v) != LEFT))
			return EBUSY;
	}
	uint64_t now = ls_tp_now();
	if (attempt(l, now, now, 0, false))
		return 0;
	spun = 0;
	return EBUSY;
}

static int clhtp_timedlock(void *state, uint64_t deadline_ns)
{
	if (ls_now_ns() >= deadline_ns)
		return clhtp_trylock(state) ? ETIMEDOUT : 0;
	return clhtp_acquire(state, deadline_ns);
}

static void clhtp_unlock(void *state)
{
	struct clhtp *l = state;
	/* relaxed: written by the acquisition this unlock ends; unlock may
	 * run on another thread only after the program's own synchronisation */
	struct node *I = atomic_load_explicit(&l->holder, memory_order_relaxed);
	if (LS_UNLIKELY(!I))
		return; /* never locked, or unlocked already: free (lock.h, misuse) */
	/* relaxed: as above; the store below publishes it */
	atomic_store_explicit(&l->holder, NULL, memory_order_relaxed);
	LS_INJECT();
	/* (B) release: our critical section happens before the successor's */
	atomic_store_explicit(&I->prev, AVAILABLE, memory_order_release);
	LS_TEST_POINT(LS_POINT_RELEASED);
	bump(I);
}

/* Unlocked, nobody inside: the chain is LEFT nodes down to the AVAILABLE
 * dummy. */
static void clhtp_destroy(void *state)
{
	struct clhtp *l = state;
	struct node *n = (struct node *)atomic_exchange_explicit(&l->tail, 0, memory_order_acq_rel);
	while (n) {
		uintptr_t v = atomic_load_explicit(&n->prev, memory_order_acquire);
		ls_node_free(n);
		if (special(v) || tag(v) != LEFT)
			break;
		n = ptr(v);
	}
}

static const struct ls_param clhtp_params[] = {LS_TP_PARAMS, {0}};

static const struct ls_algo clhtp_algo = {
    .name = "clh-tp",
    .desc = "CLH time-published lock: waiters remove preempted predecessors (He/Scherer/Scott TR 867 2.2, "
	    "app. C)",
    .caps = LS_CAP_TIMEOUT | LS_CAP_QNODE,
    .rank = 61,
    .state_size = sizeof(struct clhtp),
    .params = clhtp_params,
    .destroy = clhtp_destroy,
    .lock = clhtp_lock,
    .trylock = clhtp_trylock,
    .timedlock = clhtp_timedlock,
    .unlock = clhtp_unlock,
};
LS_REGISTER_ALGO(clhtp_algo);
