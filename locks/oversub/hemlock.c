/*
 * hemlock.c - Hemlock, compact FIFO queue lock.
 *
 * Dice & Kogan, "Hemlock: Compact and Scalable Mutual Exclusion", SPAA 2021
 * (arXiv 2102.03863; not in ../shared/papers, and its full text could not be
 * obtained here: the listing is the one reproduced in Scott & Brown,
 * "Shared-Memory Synchronization", 2nd ed., fig. 4.15, and public
 * implementations were read for the refinements): the base algorithm, with
 * "coherence traffic reduction" (the successor acknowledges with an atomic
 * exchange) and the "overlap" refinement (a release does not wait for the
 * acknowledgement; the next write of the same Grant word does).
 *
 * Design. A lock is one word, Tail; a thread has one word, Grant, for all
 * locks. To acquire, a thread swaps its own record into Tail; if there was a
 * predecessor, it waits until the predecessor's Grant holds this lock's
 * address, then acknowledges by clearing it. To release, a thread whose
 * record is still the Tail swings it back to empty; otherwise it writes the
 * lock's address into its Grant: the successor, spinning on exactly that
 * word for exactly that value, takes over. Waiters for different locks may
 * watch one Grant word (a thread holding several locks); each waits for its
 * own lock's address. FIFO.
 *
 * Here. unlock() may run on another thread (lock.h), so the state keeps the
 * holder's record next to Tail (16 bytes, inline). A record lives in
 * type-stable memory (ls_ext_alloc_wait), created at its thread's first
 * acquisition; it outlives its thread while a lock it holds is held.
 * A thread has TWO records, because a record must never be in one lock's
 * queue twice (its Grant would then speak to two successors at once): with
 * the overlap refinement, a thread that releases L by a grant and at once
 * locks L again would enqueue the record whose grant of L its successor has
 * not yet taken; and a thread may lock L while another thread unlocks its
 * hold of L (a mutex used as a binary semaphore). So lock() uses the
 * thread's second record when the first one is L's holder and L has a
 * queue (a holder field that is merely stale is harmless: the second record
 * works as well). The second record is allocated on first need.
 *
 *	state:	tail	last record enqueued, NULL when free with no waiters
 *		holder	the holder's record, for unlock (written after the
 *			acknowledgement: holder != r implies r's grant of this
 *			lock, if any, was taken)
 *	record:	grant	lock address granted by its owner, 0 when none pending
 *			(cleared by the successor's acknowledgement)
 *		seq	futex word for sleepers on grant (eventcount; bit 31
 *			LS_PARKED: someone sleeps on it), bumped by every write
 *			of grant while someone sleeps
 *		gen	the fork generation of its thread (fork.h): set at
 *			creation, and for the forking thread's records in the
 *			child (fork_child); a record of an older generation is
 *			a thread's that fork left behind
 *		held	(second cache line, written by its thread only) locks
 *			acquired with it minus those its thread released
 *		balance	releases of its locks by other threads (negative),
 *			plus DEAD once its thread has exited
 *
 * Transitions of grant: 0 -> L (the holder of L, or another thread
 * releasing L for it, with CAS: a previous grant must have been
 * acknowledged first, the overlap wait) -> 0 (the successor on L).
 * Who frees a record: its thread at exit (a key destructor), after the
 * pending acknowledgement, if it holds no lock (held + balance == 0); else
 * the thread whose release of its last lock brings balance to DEAD, after
 * that release's acknowledgement. Until then nobody else can reach it: a
 * waiter reaches a record only through Tail, i.e. while its owner holds or
 * waits.
 *
 * fork() (fork.h): a record is its thread, so in a fork child a record
 * whose generation is older is a thread the fork left behind, exactly (the
 * forking thread's records are brought to the child's generation, and
 * their grants not yet acknowledged, which only a thread now gone could
 * take, are cleared). The first live waiter, the only one whose
 * predecessor is stale, waits for the grant of the lock's holder (a holder
 * that is gone: for ever, as under glibc); a releaser whose queue's tail is
 * stale (every waiter is gone) empties the queue instead of granting a
 * successor that would never acknowledge. Records of threads that are gone
 * are never freed.
 *
 * Waiting policy: waiters and the overlap wait watch a record's grant
 * under the policy, sleeping on its seq; a new holder that waited wakes a
 * successor asleep on its own record (keep the next waiter awake, wait.h).
 * No native timeout. If the record of a thread cannot be allocated (address
 * space exhausted), lock() waits and retries (1 ms naps); trylock() returns
 * EBUSY.
 *
 * After the release (lock.h): the CAS that empties Tail, or the CAS that
 * writes the lock's address into the holder's Grant, is the last access to
 * the lock; the bump and the accounting that follow touch the record only
 * (type-stable, freed as said above). Misuse: an unlock of a lock never
 * locked finds no holder; one after a release that emptied the queue finds
 * its CAS fail on NULL; one after a hand-over whose grant is not yet taken
 * finds that grant pending in the record (a record cannot hold the lock
 * again before it is taken: see rec_for) and returns. Once the successor
 * has taken it and written its own holder, such an unlock releases the
 * successor's hold, as glibc's would.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fork.h"
#include "lock.h"
#include "pool.h"
#include "wait.h"

#define DEAD ((int64_t)1 << 40)

struct rec {
	_Atomic uintptr_t grant;
	_Atomic uint32_t seq;
	uint32_t gen;
	char pad[LS_CACHELINE - 16];
	int64_t held;
	_Atomic int64_t balance;
};

struct hemlock {
	struct rec *_Atomic tail;
	struct rec *_Atomic holder;
};
_Static_assert(sizeof(struct hemlock) <= LS_INLINE_STATE, "inline state");

#define TLS __thread __attribute__((tls_model("initial-exec")))
static TLS struct rec *self, *spare;
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static bool exit_ok;

/* ---- waiting on a record's grant ---- */

/* Wakes the sleepers on r (after a write of r->grant with seq_cst). */
static void bump(struct rec *r)
{
	/* seq_cst: the Dekker pair with the sleeper's CAS and re-read */
	uint32_t q = atomic_load_explicit(&r->seq, memory_order_seq_cst);
	if (!(q & LS_PARKED))
		return;
	while (!atomic_compare_exchange_weak_explicit(&r->seq, &q, (q + 1) & ~LS_PARKED, memory_order_release,
						      memory_order_relaxed)) {
	}
	ls_futex_wake(&r->seq, INT_MAX);
}

/* Waits until r->grant == want; returns with acquire ordering. */
static void await_grant(struct rec *r, uintptr_t want)
{
	struct ls_spin s = LS_SPIN_INIT;
	for (;;) {
		uint32_t q = atomic_load_explicit(&r->seq, memory_order_acquire);
		/* acquire: pairs with the grant's release (CAS or exchange) */
		if (atomic_load_explicit(&r->grant, memory_order_acquire) == want)
			return;
		LS_INJECT();
		if (!ls_spin_step(&s))
			continue;
		/* seq_cst: either bump sees LS_PARKED, or we see its write */
		if (!(q & LS_PARKED) &&
		    !atomic_compare_exchange_strong_explicit(&r->seq, &q, q | LS_PARKED, memory_order_seq_cst,
							     memory_order_relaxed))
			continue;
		if (atomic_load_explicit(&r->grant, memory_order_seq_cst) == want)
			return;
		ls_futex_wait(&r->seq, q | LS_PARKED, 0);
		s = (struct ls_spin)LS_SPIN_INIT; /* woken: our turn may be next */
	}
}

/* ---- records ---- */

static void rec_free_after_ack(struct rec *r)
{
	await_grant(r, 0); /* the successor's acknowledgement writes r */
	ls_ext_free(r, sizeof *r);
}

/* Its thread exits: r is freed now if it holds no lock (counting releases
 * by other threads, which happen before their decrement of balance), else
 * by the release of its last lock. */
static void retire(struct rec *r)
{
	int64_t v =
	    atomic_fetch_add_explicit(&r->balance, r->held + DEAD, memory_order_acq_rel) + r->held + DEAD;
	if (v == DEAD)
		rec_free_after_ack(r);
}

static void thread_exit(void *arg)
{
	(void)arg;
	struct rec *a = self, *b = spare;
	self = spare = NULL;
	if (a)
		retire(a);
	if (b)
		retire(b);
}

static void make_key(void)
{
	exit_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

/* A new record for this thread (*slot: self or spare), from the pool's
 * reserve if need be, else after waiting for memory (locks/common/pool.h: a lock
 * path cannot fail). The exit hook is registered once; a thread where that fails keeps
 * its records for ever (a key destructor is the only exit hook a preloaded
 * library has). */
static struct rec *rec_new(struct rec **slot)
{
	struct rec *r = ls_ext_alloc_wait(sizeof *r); /* zero-filled */
	r->gen = ls_fork_gen();
	pthread_once(&exit_once, make_key);
	if (exit_ok)
		pthread_setspecific(exit_key, r);
	*slot = r;
	return r;
}

/* The record to enqueue on l: the first, unless it is l's holder and l has
 * a queue (see the header). */
static struct rec *rec_for(struct hemlock *l)
{
	struct rec *r = self ? self : rec_new(&self);
	/* (E) acquire: pairs with (F) in hemlock_wait (see there); tail: a
	 * hint (a stale value only makes us take the second record) */
	if (atomic_load_explicit(&l->holder, memory_order_acquire) == r &&
	    atomic_load_explicit(&l->tail, memory_order_relaxed))
		r = spare ? spare : rec_new(&spare);
	return r;
}

/* ---- fork ---- */

/* A record of a thread the fork left behind. relaxed: set before its
 * thread first enqueued it, or by fork_child before any other thread of
 * the child existed. */
static inline bool stale(const struct rec *r)
{
	return ls_fork_child() && ls_fork_stale(__atomic_load_n(&r->gen, __ATOMIC_RELAXED));
}

/* In the child, on the forking thread: its records are of the child's
 * generation, and hold no grant (its successor, if any, is gone). */
static void fork_child(void)
{
	uint32_t g = ls_fork_gen();
	struct rec *r[2] = {self, spare};
	for (int i = 0; i < 2; i++)
		if (r[i]) {
			__atomic_store_n(&r[i]->gen, g, __ATOMIC_RELAXED);
			/* relaxed: no other thread of the child exists yet */
			atomic_store_explicit(&r[i]->grant, 0, memory_order_relaxed);
		}
}

__attribute__((constructor)) static void hemlock_fork_register(void)
{
	ls_fork_at_child(fork_child);
}

/* ---- the lock ---- */

/* Contended acquisition: wait for pred's grant of l, acknowledge it. Behind
 * a stale pred (the first live waiter of a fork child), the holder's. */
static __attribute__((noinline)) void hemlock_wait(struct hemlock *l, struct rec *I, struct rec *pred)
{
	LS_TEST_POINT(LS_POINT_VISIBLE);
	if (LS_UNLIKELY(stale(pred))) {
		/* relaxed: written before the fork; the holder's grant of l,
		 * which we acknowledge, orders what follows */
		struct rec *h = atomic_load_explicit(&l->holder, memory_order_relaxed);
		if (h)
			pred = h; /* else a holder that is gone: wait for ever */
	}
	/* (A) acquire: pairs with (B) in hand_over */
	await_grant(pred, (uintptr_t)l);
	LS_INJECT();
	/* The acknowledgement, with an exchange (CTR): our last access to
	 * pred's grant. seq_cst: the Dekker pair with an overlap waiter. */
	atomic_exchange_explicit(&pred->grant, 0, memory_order_seq_cst);
	bump(pred);
	/* (F) release, after the ack: a thread that reads holder == I with
	 * acquire ((E) in hemlock_lock and rec_for) and so enqueues pred's
	 * record again has the ack before it, so pred's next successor, which
	 * reaches pred through that enqueue (acq_rel on tail), cannot read
	 * the grant we took. On x86 any store is a release; a weakly ordered
	 * CPU needs it said. */
	atomic_store_explicit(&l->holder, I, memory_order_release);
	I->held++;
	/* Keep the next waiter awake: a successor asleep on our record is
	 * woken now, so that its wake-up overlaps our critical section. */
#ifndef LS_NO_PREWAKE /* a build without it, for scripts/sweeps/bench-oversub */
	/* relaxed: a hint; bump's seq_cst load decides */
	if (atomic_load_explicit(&I->seq, memory_order_relaxed) & LS_PARKED)
		bump(I);
#endif
}

/* Enqueues I; returns with the lock held. */
static inline __attribute__((always_inline)) void acquire(struct hemlock *l, struct rec *I)
{
	/* release: a successor reading tail == I sees our record; acquire:
	 * pairs with the release CAS in unlock when we get NULL */
	struct rec *pred = atomic_exchange_explicit(&l->tail, I, memory_order_acq_rel);
	if (LS_UNLIKELY(pred != NULL)) {
		hemlock_wait(l, I, pred); /* a tail call: the fast path stays a leaf */
		return;
	}
	/* relaxed: our own grant is not pending (the CAS from NULL found an empty queue) */
	atomic_store_explicit(&l->holder, I, memory_order_relaxed);
	I->held++;
}

static __attribute__((noinline)) void hemlock_lock_slow(struct hemlock *l)
{
	acquire(l, rec_for(l));
}

static void hemlock_lock(void *state)
{
	struct hemlock *l = state;
	struct rec *I = self;
	/* No record yet, or ours holds l and l has a queue: the slow path.
	 * (E) acquire: pairs with (F) in hemlock_wait; tail: a hint, as in
	 * rec_for. */
	if (LS_UNLIKELY(!I || (atomic_load_explicit(&l->holder, memory_order_acquire) == I &&
			       atomic_load_explicit(&l->tail, memory_order_relaxed)))) {
		hemlock_lock_slow(l);
		return;
	}
	acquire(l, I);
}

static int hemlock_trylock(void *state)
{
	struct hemlock *l = state;
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (atomic_load_explicit(&l->tail, memory_order_relaxed))
		return EBUSY;
	struct rec *I = rec_for(l), *empty = NULL; /* l has no queue: the first record */
	LS_INJECT();
	/* as the exchange in acquire */
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &empty, I, memory_order_acq_rel,
						     memory_order_relaxed))
		return EBUSY;
	/* relaxed: the CAS from NULL found an empty queue: no grant of ours is pending */
	atomic_store_explicit(&l->holder, I, memory_order_relaxed);
	I->held++;
	return 0;
}

/* A release by a thread other than the holder's: balance, and the record's
 * freeing if its thread has exited and this was its last lock. */
static __attribute__((noinline)) void foreign_release(struct rec *r)
{
	int64_t v = atomic_fetch_sub_explicit(&r->balance, 1, memory_order_acq_rel) - 1;
	if (v == DEAD)
		rec_free_after_ack(r);
}

/* Grants l to r's successor: r's previous grant must have been
 * acknowledged (overlap), then the successor is told. False if r's
 * pending grant is of l itself: this release was made already (an unlock
 * too many while the successor takes over: r cannot hold l again before
 * that grant is taken, see rec_for). */
static __attribute__((noinline)) bool hand_over(struct hemlock *l, struct rec *r)
{
	while (ls_fork_child()) {
		/* A fork child: if the tail is stale, every waiter is gone (the
		 * first live one would have been the tail since): empty the
		 * queue instead. acquire: pairs with the swap that enqueued it. */
		struct rec *t = atomic_load_explicit(&l->tail, memory_order_acquire), *e = t;
		if (!t || !stale(t))
			break;
		/* release: pairs with the acquire of the next exchange or CAS that reads NULL */
		if (atomic_compare_exchange_strong_explicit(&l->tail, &e, NULL, memory_order_release,
							    memory_order_relaxed)) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			return true;
		}
	}
	for (;;) {
		uintptr_t none = 0;
		LS_INJECT();
		/* (B) release: pairs with (A); seq_cst: the Dekker pair with
		 * a sleeping waiter (bump) */
		if (atomic_compare_exchange_strong_explicit(&r->grant, &none, (uintptr_t)l,
							    memory_order_seq_cst, memory_order_relaxed))
			break;
		if (none == (uintptr_t)l)
			return false;
		await_grant(r, 0); /* overlap: the last grant is not acknowledged yet */
	}
	LS_TEST_POINT(LS_POINT_RELEASED);
	bump(r);
	return true;
}

static void hemlock_unlock(void *state)
{
	struct hemlock *l = state;
	/* relaxed: written by the acquisition this unlock ends; unlock may
	 * run on another thread only after the program's own synchronisation */
	struct rec *r = atomic_load_explicit(&l->holder, memory_order_relaxed), *e = r;
	if (LS_UNLIKELY(!r))
		return; /* never locked, or handed over: free (lock.h, misuse) */
	/* Nobody behind: empty. release: pairs with the acquire of the next
	 * exchange or CAS that reads NULL. A stale r (after a release that
	 * emptied the queue) is not the tail: the CAS fails on NULL. */
	if (LS_LIKELY(atomic_compare_exchange_strong_explicit(&l->tail, &e, NULL, memory_order_release,
							      memory_order_relaxed))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
	} else {
		if (!e || !hand_over(l, r))
			return; /* free, or handed over already: an unlock too many (lock.h) */
	}
	if (LS_LIKELY(r == self || r == spare))
		r->held--;
	else
		foreign_release(r);
}

static const struct ls_algo hemlock_algo = {
    .name = "hemlock",
    .desc = "Hemlock: one word per lock, one Grant word per thread, FIFO (Dice & Kogan, SPAA 2021)",
    .caps = LS_CAP_FIFO,
    .rank = 84,
    .state_size = sizeof(struct hemlock),
    .lock = hemlock_lock,
    .trylock = hemlock_trylock,
    .unlock = hemlock_unlock,
};
LS_REGISTER_ALGO(hemlock_algo);
