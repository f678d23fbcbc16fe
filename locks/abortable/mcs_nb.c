/*
 * mcs_nb.c - MCS-NB try lock: MCS with non-blocking timeout.
 *
 * Scott, "Non-Blocking Timeout in Scalable Queue-Based Spin Locks", TR 773
 * / PODC 2002, ../shared/papers/002_349a8f224470ecdc.txt, sections 2.2 and
 * 2.2.1. The appendix listing of MCS-NB is badly damaged by text extraction
 * (statements of the release and timeout paths are interleaved, comments
 * swallow code); this file is written from the prose, which describes every
 * case, using the listing only for names and the status encoding.
 *
 * Node: status (32-bit word the owner spins on, bit 31 = LS_PARKED), next
 * (towards the successor), prev (the predecessor, written when leaving).
 *	next:	NULL       no successor known
 *		real node  the successor's node
 *		AVAILABLE  owner released with no successor known  (token)
 *		LEAVING    owner timed out and no next pointer anywhere refers
 *			   to this node (its CAS on pred->next succeeded)
 *		TRANSIENT  owner timed out but pred->next still refers to it:
 *			   the predecessor's owner will still write its status
 *	status:	waiting; available (lock granted: token); leaving / transient
 *		(the predecessor left, LEAVING / TRANSIENT as above: find the
 *		new predecessor in its prev); recycled (a successor finished
 *		with this TRANSIENT node before the predecessor's owner did:
 *		whoever swaps into a status word and gets recycled frees it).
 *
 * Acquire (C with node Z): swap Z into the tail; NULL: the lock is ours.
 * Else swap Z into pred->next: AVAILABLE -> ours (free pred); LEAVING ->
 * pred's owner left, take pred->prev, free pred, retry; TRANSIENT -> take
 * pred->prev, swap recycled into pred->status and free pred unless that
 * returned waiting (then the predecessor's owner frees it), retry; NULL ->
 * linked: spin on Z->status. available -> ours (free pred); leaving or
 * transient -> reset to waiting and handle as LEAVING / TRANSIENT above.
 * Timeout while linked: Z->prev = pred; CAS(pred->next, Z, NULL). Success:
 * swap LEAVING into Z->next; if a successor showed up, swap leaving into
 * its status (free it on recycled); else CAS the tail from Z back to pred
 * and free Z if that works. Failure: swap TRANSIENT into Z->next and
 * transient into the successor's status (free it on recycled), or, with no
 * successor, abandon Z to the next acquirer. Timeout while relinking
 * (outer loop): we hold pred's reference but are not in pred->next, which
 * is the "CAS succeeded" case without the CAS. The paper restores
 * pred->next and marks itself; handling the departed predecessor first and
 * then leaving as above reaches the same state with fewer steps, and every
 * step stays bounded (no waiting on anyone).
 * Release (A with node X): CAS the tail from X to NULL (free X); else swap
 * AVAILABLE into X->next and, if that returned a successor, swap available
 * into its status (free it on recycled). The paper swaps first and CASes
 * the tail second; we CAS first because unlock may run on a thread other
 * than X's allocator, and then a successor could free X and X's allocator
 * reuse it as the tail before a late CAS (ABA); while X is held nobody
 * frees it.
 *
 * Responsible references (2.2.1): each node's rref is in the tail, in a
 * waiting thread's `pred`, or in a departed node's prev; the extra
 * reference in a predecessor's next is dealt with by LEAVING (destroyed)
 * or TRANSIENT + recycled (whoever touches the status last frees). Who
 * frees a node: the successor that acquires past it or moves past it
 * (LEAVING; TRANSIENT when the predecessor's owner was first), the
 * predecessor's owner when its swap into the status returns recycled, the
 * owner itself when its CAS on the tail succeeds, destroy() for what an
 * unheld lock still holds. Nodes come from abortable.h's per-thread pools
 * (only the allocator reuses a node: the ABA protection of 2.2.1).
 *
 * lock() is an attempt with infinite patience (never leaves the queue);
 * trylock is EBUSY when the tail node is visibly held or queued (a hint
 * read from type-stable memory), else one attempt with zero patience.
 *
 * fork() (fork.h). In a fork child, nodes stamped before the fork (`gen`)
 * are the holder's and those of waiters the fork left behind, which never
 * move, release or free anything. A live thread deals with no stale node
 * but the holder's: the first live waiter (whose predecessor is stale; so
 * is one that follows a departed node's prev to the holder's node) links
 * to the holder's node instead (`holder`, kept by a hold taken before the
 * fork until the next holder writes its own; a holder that is gone: it
 * waits on the stale predecessor, or times out), taking a successor that
 * is gone out of its next as if it were empty. A hold taken before the
 * fork empties the queue if its tail is stale or its own node (its node is
 * never freed then); else swaps AVAILABLE into its next and tells the
 * successor it finds only if that one is live (a live waiter that links
 * later finds AVAILABLE). Its unlock clears `holder` first, as every unlock
 * does, and puts it back once its fast path has failed and it finds its
 * node stale (the uncontended path checks nothing): until then the first
 * live waiter looks again after slices of sleep, before it links.
 *
 * After the release (lock.h): the CAS that empties the queue, or the swap
 * of AVAILABLE into the holder's next (with no successor) or of available
 * into the successor's status, is the last access to the lock. Misuse:
 * unlock takes the holder field and clears it, so an unlock of a free lock
 * finds NULL and returns.
 */
#define LS_NODE_CLASS LS_NODES_MCS_NB /* pool.h: nodes reused only by this algorithm */
#include "abortable.h"
#include "fork.h"

enum { WAITING, AVAILABLE, LEAVING, TRANSIENT, RECYCLED };

struct node;
#define NX_AVAILABLE ((struct node *)1)
#define NX_LEAVING ((struct node *)2)
#define NX_TRANSIENT ((struct node *)3)

struct node {
	union {
		struct {
			uint32_t gen; /* fork generation when enqueued */
			_Atomic uint32_t status;
		};
		uint64_t gen_status; /* both, for the one store of the enqueue */
	};
	struct node *_Atomic next;
	struct node *_Atomic prev;
};
_Static_assert(sizeof(struct node) <= AB_POOL_OFF, "the pool's fields follow the node");

struct mcs_nb {
	struct node *_Atomic tail;
	struct node *_Atomic holder;
};
_Static_assert(sizeof(struct mcs_nb) <= LS_INLINE_STATE, "inline state");

static struct node *swap_next(struct node *n, struct node *v)
{
	/* acq_rel: what the owner wrote before marking LEAVING/TRANSIENT
	 * (its prev) is visible to us, and our node's fields to it */
	return atomic_exchange_explicit(&n->next, v, memory_order_acq_rel);
}

/* Tell a successor node its predecessor left (or granted the lock):
 * whoever swaps into a status word and finds recycled frees the node. */
static void tell(struct node *succ, uint32_t status)
{
	LS_INJECT();
	if (ab_set(&succ->status, status) == RECYCLED)
		ab_pool_free(succ);
}

/* We hold no next-pointer reference from anyone and hold pred's rref:
 * mark i LEAVING, hand pred on, and go. */
static int leave(struct mcs_nb *l, struct node *i, struct node *pred)
{
	/* relaxed: published by the acq_rel swap of LEAVING into our next (swap_next) */
	atomic_store_explicit(&i->prev, pred, memory_order_relaxed);
	LS_INJECT();
	struct node *succ = swap_next(i, NX_LEAVING);
	if (succ) {
		tell(succ, LEAVING);
	} else {
		/* Last: swing the tail back. A tail equal to i is this
		 * attempt's node: only this thread reuses i. */
		struct node *expected = i;
		LS_INJECT();
		if (atomic_compare_exchange_strong_explicit(&l->tail, &expected, pred, memory_order_acq_rel,
							    memory_order_relaxed))
			ab_pool_free(i);
		/* else a newcomer will find LEAVING in i->next and free i */
	}
	return ETIMEDOUT;
}

#define LATE_STEPS 64

/* A real node pointer found in a next field. */
static inline bool is_node(struct node *n)
{
	return (uintptr_t)n > (uintptr_t)NX_TRANSIENT;
}

static __attribute__((noinline)) int slow(struct mcs_nb *l, struct node *i, struct node *pred,
					  uint64_t deadline)
{
	unsigned late = 0;

	LS_TEST_POINT(LS_POINT_VISIBLE);
	/* A deadline already past is a trylock: walk the whole chain (POSIX:
	 * no timeout when the mutex can be locked at once). */
	if (deadline != AB_NEVER && deadline && ls_now_ns() >= deadline)
		deadline = 0;
	for (uint64_t slice = 1000000;;) {
		LS_INJECT();
		if (LS_UNLIKELY(ab_fork_stale(&pred->gen))) {
			/* relaxed: written before the fork, kept until we write ours */
			struct node *h = atomic_load_explicit(&l->holder, memory_order_relaxed);
			if (h) {
				pred = h;
			} else {
				/* Its unlock has not put it back yet, or the holder
				 * is gone: look again after a slice of sleep (a
				 * private word nobody wakes). */
				uint64_t now = ls_now_ns();
				if (deadline != AB_NEVER && now >= deadline)
					return leave(l, i, pred);
				_Atomic uint32_t nobody = 0;
				uint64_t t = now + slice;
				ls_futex_wait(&nobody, 0, deadline < t ? deadline : t);
				slice = slice < 16000000 ? slice * 2 : slice;
				continue;
			}
		}
		struct node *pn = swap_next(pred, i);
		if (LS_UNLIKELY(is_node(pn)))
			pn = NULL; /* a successor the fork left behind: we replace it */
		if (pn == NX_AVAILABLE) {
			/* The releaser found no successor; its tail CAS failed
			 * (we are in the tail): it will not touch pred again. */
			ab_pool_free(pred);
			goto won;
		}
		if (pn == NULL) {
			/* Linked in: spin on our own status. */
			uint32_t s = ab_load(&i->status);
			if (s == WAITING && ab_wait(&i->status, WAITING, deadline, &s) == ETIMEDOUT)
				goto timeout;
			if (s == AVAILABLE) {
				ab_pool_free(pred); /* usual case (2.2.1) */
				goto won;
			}
			/* leaving / transient: pred's owner left. Nobody's next
			 * refers to i now, so a plain reset is safe; the swap
			 * that relinks us publishes it. */
			/* relaxed: published by the swap that relinks us */
			atomic_store_explicit(&i->status, WAITING, memory_order_relaxed);
			pn = s == LEAVING ? NX_LEAVING : NX_TRANSIENT;
		}
		/* pred's owner timed out: LEAVING or TRANSIENT. */
		LS_INJECT();
		/* relaxed: ordered by the acq_rel swap that returned LEAVING or TRANSIENT */
		struct node *pp = atomic_load_explicit(&pred->prev, memory_order_relaxed);
		if (pn == NX_LEAVING)
			ab_pool_free(pred);
		else if (ab_set(&pred->status, RECYCLED) != WAITING)
			ab_pool_free(pred); /* its predecessor's owner already wrote it */
		pred = pp;
		/* Timeout in the outer loop, but only LATE_STEPS departed
		 * nodes past the deadline: each step is a few atomic
		 * operations on nodes we hold (no waiting), and giving up at
		 * once makes every short-patience waiter append a node that
		 * the next one must walk, a cascade in which nobody reaches
		 * the lock (measured: 6 threads, 2 us patience, 2 cores: no
		 * progress in 100 s, against 600 acquisitions in 7.5 s). The
		 * bound on a timeout stays a constant number of own steps.
		 * trylock (deadline 0) walks the whole chain: an unheld lock's
		 * chain ends at AVAILABLE. */
		if (deadline && ls_now_ns() >= deadline && ++late > LATE_STEPS)
			return leave(l, i, pred);
	}

timeout:
	/* Timeout in the inner loop. Try to destroy pred's reference to i. */
	/* relaxed: published by the acq_rel CAS below, or by the swap of TRANSIENT */
	atomic_store_explicit(&i->prev, pred, memory_order_relaxed);
	LS_INJECT();
	struct node *expected = i;
	if (atomic_compare_exchange_strong_explicit(&pred->next, &expected, NULL, memory_order_acq_rel,
						    memory_order_relaxed))
		return leave(l, i, pred);
	/* pred's owner is releasing or leaving and will write our status: we
	 * cannot free i, nor wait for it. */
	LS_INJECT();
	struct node *succ = swap_next(i, NX_TRANSIENT);
	if (succ)
		tell(succ, TRANSIENT);
	/* else abandoned to the next acquirer (2.3: unbounded in theory) */
	return ETIMEDOUT;

won:
	/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or after the
	 * program's own synchronisation) */
	atomic_store_explicit(&l->holder, i, memory_order_relaxed);
	return 0;
}

static int acquire(struct mcs_nb *l, uint64_t deadline)
{
	struct node *i = ab_pool_alloc();
	/* relaxed: published by the release of the exchange or CAS that enqueues the node */
	atomic_store_explicit(&i->next, NULL, memory_order_relaxed);
	/* relaxed: as above; status WAITING, and the stamp */
	_Static_assert(WAITING == 0, "the stamp is the whole word");
	__atomic_store_n(&i->gen_status, (uint64_t)ls_fork_stamp(), __ATOMIC_RELAXED);
	LS_INJECT();
	/* release: our fields are initialised for whoever gets i; acquire:
	 * pairs with the release CAS in unlock when we get NULL */
	struct node *pred = atomic_exchange_explicit(&l->tail, i, memory_order_acq_rel);
	if (LS_LIKELY(pred == NULL)) {
		/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or after
		 * the program's own synchronisation) */
		atomic_store_explicit(&l->holder, i, memory_order_relaxed);
		return 0;
	}
	return slow(l, i, pred, deadline);
}

static void mcs_nb_lock(void *state)
{
	acquire(state, AB_NEVER);
}

static int mcs_nb_timedlock(void *state, uint64_t deadline_ns)
{
	return acquire(state, deadline_ns);
}

static int mcs_nb_trylock(void *state)
{
	struct mcs_nb *l = state;
	struct node *t = atomic_load_explicit(&l->tail, memory_order_acquire);
	/* Hint from type-stable memory: a held or queued tail has a plain
	 * next (NULL or a successor); AVAILABLE/LEAVING/TRANSIENT may be a
	 * free lock, so try once with zero patience. */
	if (t) {
		struct node *nx = ab_peek_ptr((void *_Atomic *)&t->next);
		if (nx == NULL || (uintptr_t)nx > (uintptr_t)NX_TRANSIENT)
			return EBUSY;
	}
	return acquire(l, 0) == 0 ? 0 : EBUSY;
}

/* The release of a hold taken before the process forked (see the header):
 * `holder` stays x for the first live waiter, which overwrites it. */
static __attribute__((noinline)) void fork_release(struct mcs_nb *l, struct node *x)
{
	for (;;) {
		/* acquire: pairs with the release of the swap that enqueued it */
		struct node *t = atomic_load_explicit(&l->tail, memory_order_acquire), *e = t;
		if (!t)
			return; /* free: an unlock too many (lock.h) */
		if (t != x && !ab_fork_stale(&t->gen))
			break;
		/* release: pairs with the acquire of the next swap that reads NULL */
		if (atomic_compare_exchange_strong_explicit(&l->tail, &e, NULL, memory_order_acq_rel,
							    memory_order_relaxed)) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			return; /* x is never freed: see the header */
		}
	}
	LS_INJECT();
	/* release: as in mcs_nb_unlock */
	struct node *succ = swap_next(x, NX_AVAILABLE);
	if (is_node(succ) && !ab_fork_stale(&succ->gen))
		tell(succ, AVAILABLE);
	LS_TEST_POINT(LS_POINT_RELEASED);
}

/* A successor has swapped itself in behind x (or links in). */
static __attribute__((noinline)) void release_slow(struct mcs_nb *l, struct node *x)
{
	if (LS_UNLIKELY(ab_fork_stale(&x->gen))) {
		/* A hold taken before the fork: `holder` back for the first
		 * live waiter, then its release (see the header). */
		atomic_store_explicit(&l->holder, x, memory_order_relaxed);
		fork_release(l, x);
		return;
	}
	LS_INJECT();
	/* release: the critical section happens before the successor's
	 * acquire of AVAILABLE (in x->next) or available (in its status) */
	struct node *succ = swap_next(x, NX_AVAILABLE);
	if (!succ)
		LS_TEST_POINT(LS_POINT_RELEASED);
	if (succ) {
		tell(succ, AVAILABLE);
		LS_TEST_POINT(LS_POINT_RELEASED);
	}
	/* x is freed by whoever takes the lock past it */
}

static void mcs_nb_unlock(void *state)
{
	struct mcs_nb *l = state;
	/* relaxed: written by the acquisition this unlock ends; unlock may
	 * run on another thread only after the program's own synchronisation */
	struct node *x = atomic_load_explicit(&l->holder, memory_order_relaxed), *expected = x;
	if (LS_UNLIKELY(!x))
		return; /* never locked, or unlocked already: free (lock.h, misuse) */
	atomic_store_explicit(&l->holder, NULL, memory_order_relaxed);
	/* release: pairs with the acquire of the swap that next reads NULL */
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (atomic_load_explicit(&l->tail, memory_order_relaxed) == x &&
	    atomic_compare_exchange_strong_explicit(&l->tail, &expected, NULL, memory_order_acq_rel,
						    memory_order_relaxed)) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		ab_pool_free(x);
		return;
	}
	release_slow(l, x);
}

/* An unheld lock: free what the last timed-out waiters left behind
 * (tail -> LEAVING/TRANSIENT ... -> AVAILABLE). */
static void mcs_nb_destroy(void *state)
{
	struct mcs_nb *l = state;
	struct node *n = atomic_load_explicit(&l->tail, memory_order_acquire);
	if (!n || atomic_load_explicit(&n->next, memory_order_acquire) == NULL)
		return; /* empty, or held / queued: not ours to touch */
	/* relaxed: destroy runs with the lock unheld and unused */
	atomic_store_explicit(&l->tail, NULL, memory_order_relaxed);
	while (n) {
		struct node *nx = atomic_load_explicit(&n->next, memory_order_acquire);
		/* relaxed: ordered by the acquire load of next just above */
		struct node *p = nx == NX_LEAVING || nx == NX_TRANSIENT
				     ? atomic_load_explicit(&n->prev, memory_order_relaxed)
				     : NULL;
		ab_pool_free(n);
		n = p;
	}
}

static const struct ls_algo mcs_nb_algo = {
    .name = "mcs-nb",
    .desc = "MCS try lock with non-blocking timeout (Scott TR 773 / PODC'02 2.2, paper 002)",
    .caps = LS_CAP_FIFO | LS_CAP_TIMEOUT | LS_CAP_QNODE,
    .rank = 43,
    .state_size = sizeof(struct mcs_nb),
    .destroy = mcs_nb_destroy,
    .lock = mcs_nb_lock,
    .trylock = mcs_nb_trylock,
    .timedlock = mcs_nb_timedlock,
    .unlock = mcs_nb_unlock,
};
LS_REGISTER_ALGO(mcs_nb_algo);
