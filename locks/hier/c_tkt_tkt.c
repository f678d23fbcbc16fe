/*
 * c_tkt_tkt.c - C-TKT-TKT: a cohort lock, ticket lock over ticket locks.
 *
 * Dice, Marathe, Shavit, "Lock Cohorting: A General Technique for Designing
 * NUMA Locks", PPoPP 2012 (ACM TOPC 1(2) 2015), section 2 (the cohort
 * transformation) and section 3 (the C-TKT-TKT design). Not in
 * ../shared/papers; written from the paper's description.
 *
 * A global ticket lock and one local ticket lock per cluster (hier.h). To
 * acquire, a thread takes its cluster's local lock; if the releaser passed
 * the global lock along with it ("top granted"), it holds both; otherwise
 * it takes the global lock too. To release, a holder whose cluster has
 * waiters (the cohort detection of section 2: the local lock's `next` is
 * more than one past `owner`) and that has passed the global lock fewer
 * than LOCKSWAP_COHORT_PASSES times in a row keeps the global lock held and
 * passes it with the local one; otherwise it releases the global lock, then
 * the local one. A ticket lock is thread-oblivious (any thread may advance
 * `owner`), which is what lets the global lock change hands inside a
 * cohort without being released. One refinement, for the bound: a holder
 * that has reached it with waiters in its cluster takes a global ticket
 * for its successor before releasing the global lock (QUEUED); otherwise
 * that successor would queue only once awake, and a cluster already
 * running could pass the global lock on and on meanwhile.
 *
 *	inline:	next, owner	the global ticket lock (ticket.c's encoding:
 *				owner counts mod 2^31, bit 31 is LS_PARKED)
 *		lines		the block (hier.h)
 *	head:	holder		cluster whose local lock the holder has, or
 *				LS_HIER_FAST (the fast path of hier.h: the
 *				global lock alone, taken when it had no
 *				ticket out)
 *		passes		consecutive passes of the global lock
 *	local:	next, owner	a ticket lock, one per cluster line
 *		granted		HELD: the next holder of this local lock also
 *				holds the global lock; QUEUED: it holds
 *				global ticket `ticket`; NONE
 *		ticket		see granted
 *
 * Transitions of a cluster's (local held, granted): acquire (0,*) ->
 * (1,NONE) [granted consumed, or global ticket taken and served]; release
 * with pass: (1,NONE) -> (1 for the waiter, HELD); at the bound with a
 * waiter: ticket taken, global released, (1,NONE) -> (1 for the waiter,
 * QUEUED); without a waiter: global released, then (1,NONE) -> (0 or a
 * late waiter, NONE). Only the holder writes holder, passes, granted and
 * ticket; they are published by the local release and read after the local
 * acquire. Both ticket locks are FIFO, so at every release of the global
 * lock each cluster with waiters has a ticket out: no run of local
 * hand-offs longer than the bound while another cluster waits.
 *
 * No queue nodes. Waiting policy: ls_wait_while_eq on the `owner` words
 * (every sleeper of a word wakes at its change). trylock is the fast
 * path's attempt (the global lock alone, if it has no ticket out). No
 * native timeout (tickets cannot be given back): the shim's fallback polls
 * trylock.
 */
#include <errno.h>
#include <stdatomic.h>

#include "hier.h"
#include "lock.h"
#include "wait.h"

#define MASK (~LS_PARKED)

struct ticket {
	_Atomic uint32_t next;
	_Atomic uint32_t owner;
};

enum { NONE, HELD, QUEUED }; /* local.granted */

struct local {
	struct ticket t;
	_Atomic uint32_t granted;
	uint32_t ticket; /* QUEUED: the global ticket taken for the next holder */
	char pad[LS_CACHELINE - sizeof(struct ticket) - 8];
};
_Static_assert(sizeof(struct local) == LS_CACHELINE, "one line per cluster");

struct head {
	struct ls_hier_head h;
	uint32_t holder; /* cluster, or LS_HIER_FAST */
	uint32_t passes;
};

struct ctt {
	struct ticket global;
	ls_hier_lines_t lines;
};
_Static_assert(sizeof(struct ctt) <= LS_INLINE_STATE, "inline state");

/* ---- the ticket lock, used twice (ticket.c has the same protocol) ---- */

/* Takes a ticket (relaxed: it orders nothing; (A) does). */
static inline uint32_t ticket_take(struct ticket *t)
{
	return atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed) & MASK;
}

static void ticket_wait(struct ticket *t, uint32_t mine)
{
	LS_INJECT();
	/* (A) acquire: pairs with (B) in ticket_release */
	uint32_t o = atomic_load_explicit(&t->owner, memory_order_acquire) & MASK;
	while (o != mine) {
		LS_INJECT();
		/* (A) acquire: pairs with (B) */
		o = ls_wait_while_eq(&t->owner, o);
	}
}

static void ticket_acquire(struct ticket *t)
{
	ticket_wait(t, ticket_take(t));
}

/* Takes the lock if it is free with no ticket out. */
static inline bool ticket_try(struct ticket *t)
{
	/* (A) acquire: pairs with (B) */
	uint32_t o = atomic_load_explicit(&t->owner, memory_order_acquire) & MASK;
	uint32_t n = atomic_load_explicit(&t->next, memory_order_relaxed);
	if ((n & MASK) != o)
		return false;
	LS_INJECT();
	return atomic_compare_exchange_strong_explicit(&t->next, &n, n + 1, memory_order_relaxed,
						       memory_order_relaxed);
}

/* Someone holds a ticket behind the holder's: the cohort detection.
 * `next` only grows, so a stale read can only say "no" (then the waiter
 * takes the global lock itself). */
static inline bool ticket_waiters(struct ticket *t)
{
	uint32_t o = atomic_load_explicit(&t->owner, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&t->next, memory_order_relaxed);
	return ((n - o) & MASK) > 1;
}

/* Serves the next ticket; true if a waiter may be asleep on `owner`. The
 * caller wakes (out of line: the release path makes no call that returns). */
static inline bool ticket_serve_next(struct ticket *t)
{
	/* Only the holder writes the value; waiters may add PARKED. */
	uint32_t o = atomic_load_explicit(&t->owner, memory_order_relaxed);
	LS_INJECT();
	/* (B) release: pairs with (A) */
	return atomic_exchange_explicit(&t->owner, (o + 1) & MASK, memory_order_acq_rel) & LS_PARKED;
}

static void ticket_release(struct ticket *t)
{
	if (ticket_serve_next(t))
		ls_futex_wake(&t->owner, 0x7fffffff);
}

/* ---- the cohort lock ---- */

/* The papers' acquisition: the local lock of the caller's cluster, then
 * the global lock unless it came with the local one. */
static __attribute__((noinline)) void ctt_lock_cohort(struct ctt *l, struct head *h)
{
	if (!h)
		h = (struct head *)ls_hier_attach(&l->lines, false);
	unsigned c = ls_cluster_fold(ls_cluster(), h->h.nclusters);
	struct local *s = ls_hier_line(&h->h, 1 + c);
	ticket_acquire(&s->t);
	/* relaxed: ordered after the releaser's store by (A)/(B) on the local
	 * lock */
	uint32_t g = atomic_load_explicit(&s->granted, memory_order_relaxed);
	atomic_store_explicit(&s->granted, NONE, memory_order_relaxed);
	if (g != HELD) {
		ticket_wait(&l->global, g == QUEUED ? s->ticket : ticket_take(&l->global));
		h->passes = 0;
	}
	h->holder = c;
}

static void ctt_lock(void *state)
{
	struct ctt *l = state;
	struct head *h = (struct head *)ls_hier_load(&l->lines);
	if (LS_LIKELY(h) && ls_hier_fastpath && ticket_try(&l->global)) {
		h->holder = LS_HIER_FAST;
		return;
	}
	ctt_lock_cohort(l, h);
}

static int ctt_trylock(void *state)
{
	struct ctt *l = state;
	struct head *h = (struct head *)ls_hier_get(&l->lines, false);
	if (!ticket_try(&l->global))
		return EBUSY;
	h->holder = LS_HIER_FAST;
	return 0;
}

static __attribute__((noinline)) void ctt_unlock_cohort(struct ctt *l, struct head *h)
{
	struct local *s = ls_hier_line(&h->h, 1 + h->holder);
	if (ticket_waiters(&s->t)) {
		/* published by the local release (B) */
		if (h->passes < ls_cohort_passes) {
			h->passes++;
			atomic_store_explicit(&s->granted, HELD, memory_order_relaxed);
		} else {
			/* The bound: the global lock goes to the clusters queued
			 * for it; ours queues again now, before its next holder
			 * has woken up, so that no cluster can overtake it
			 * meanwhile. */
			s->ticket = ticket_take(&l->global);
			atomic_store_explicit(&s->granted, QUEUED, memory_order_relaxed);
			ticket_release(&l->global);
		}
	} else {
		ticket_release(&l->global);
	}
	ticket_release(&s->t);
}

static void ctt_unlock(void *state)
{
	struct ctt *l = state;
	/* relaxed: the lock attached it, and this thread holds the lock */
	struct head *h = (struct head *)atomic_load_explicit(&l->lines, memory_order_relaxed);
	if (LS_UNLIKELY(h->holder != LS_HIER_FAST)) {
		ctt_unlock_cohort(l, h);
		return;
	}
	if (LS_UNLIKELY(ticket_serve_next(&l->global)))
		ls_futex_wake(&l->global.owner, 0x7fffffff);
}

static void ctt_destroy(void *state)
{
	ls_hier_detach(&((struct ctt *)state)->lines);
}

static const struct ls_param ctt_params[] = {LS_COHORT_PASSES_PARAM, LS_HIER_FASTPATH_PARAM, {0}};

static const struct ls_algo ctt_algo = {
    .name = "c-tkt-tkt",
    .desc = "cohort lock, ticket over per-cluster tickets (Dice, Marathe & Shavit, PPoPP 2012)",
    .caps = LS_CAP_HIER,
    .rank = 72,
    .state_size = sizeof(struct ctt),
    .params = ctt_params,
    .destroy = ctt_destroy,
    .lock = ctt_lock,
    .trylock = ctt_trylock,
    .unlock = ctt_unlock,
};
LS_REGISTER_ALGO(ctt_algo);
