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
 * waiters (the cohort detection of section 2: a ticket of the local lock
 * is out behind the holder's) and that has passed the global lock fewer
 * than LOCKSWAP_COHORT_PASSES times in a row keeps the global lock held and
 * passes it with the local one; otherwise it releases the local lock, then
 * the global one. A ticket lock is thread-oblivious (any thread may serve
 * the next ticket), which is what lets the global lock change hands inside
 * a cohort without being released. One refinement, for the bound: a holder
 * that has reached it with waiters in its cluster takes a global ticket
 * for its successor before releasing the global lock (QUEUED); otherwise
 * that successor would queue only once awake, and a cluster already
 * running could pass the global lock on and on meanwhile.
 *
 *	inline:	global		the global ticket lock (turn.h's ls_tkt)
 *		lines		the block (hier.h)
 *	head:	holder		cluster whose local lock the holder has, or
 *				LS_HIER_FAST (the fast path of hier.h: the
 *				global lock alone, taken when it had no
 *				ticket out)
 *		passes		consecutive passes of the global lock
 *	local:	t		a ticket lock (ls_tkt), one per cluster line
 *		granted		HELD: the next holder of this local lock also
 *				holds the global lock; QUEUED: it holds
 *				global ticket `ticket`; NONE
 *		ticket		see granted
 *
 * Transitions of a cluster's (local held, granted): acquire (0,*) ->
 * (1,NONE) [granted consumed, or global ticket taken and served]; release
 * with pass: (1,NONE) -> (1 for the waiter, HELD); at the bound with a
 * waiter: ticket taken, (1,NONE) -> (1 for the waiter, QUEUED), global
 * released; without a waiter: (1,NONE) -> (0 or a late waiter, NONE), then
 * the global released. Only the holder writes holder, passes, granted and
 * ticket; they are published by the local release and read after the local
 * acquire. Both ticket locks are FIFO, so at every release of the global
 * lock each cluster with waiters has a ticket out: no run of local
 * hand-offs longer than the bound while another cluster waits.
 *
 * After the release (lock.h). The global lock's release is the lock's
 * release, and it comes LAST: the local lock is released before it (the
 * paper's order is the reverse: a late write to the local line of a block
 * that a destroy had freed and another mutex had reused stranded that
 * mutex's next waiter). Releasing the local lock first gives nothing away:
 * a cluster-mate that takes it then queues for the global lock, which is
 * still ours. A pass hands the local lock over with the global one held:
 * that local release is the lock's release. Each is one CAS of a ticket
 * word (turn.h), after which only a futex wake may follow. Misuse: an
 * unlock that finds the global lock with no ticket out (never locked, or
 * unlocked already) does nothing, before it reads the block (which a lock
 * never used does not have).
 *
 * fork() (fork.h). In a fork child, the tickets of the threads the fork
 * left behind are in the local words (their cluster's waiters, and a
 * master that holds its local lock while it waits for the global one) and
 * in the global word. The global word is turn.h's: its first hand-over in
 * the child voids every ticket out. The local words are repaired by the
 * child's first cohort path (lock or unlock), before any thread of the
 * child touches one (ls_fork_repair runs it while the others wait; the
 * block head records its generation):
 * as the fork left them, only the cluster of the global lock's holder (the
 * thread that forked, or one that is gone and holds the lock for ever)
 * keeps its holder's ticket; every other ticket out is void, and the
 * cluster's grant is cleared (a QUEUED global ticket is the global word's
 * to void).
 *
 * No queue nodes. Waiting policy: turn.h's; a release wakes only the
 * waiter whose ticket comes up (and the next holder wakes the one after
 * it early), on the global lock and on each local one. trylock is the fast
 * path's attempt (the global lock alone, if it has no ticket out). No
 * native timeout (tickets cannot be given back): the shim's fallback polls
 * trylock.
 *
 * Without a block (no address space, hier.h): the lock is its global
 * ticket lock alone. The marker `flat` has holder LS_HIER_FAST, so unlock
 * serves the next global ticket as after the fast path.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "fork.h"
#include "hier.h"
#include "lock.h"
#include "queue/turn.h"
#include "wait.h"

enum { NONE, HELD, QUEUED }; /* local.granted */

struct local {
	_Atomic uint64_t t;
	_Atomic uint32_t granted;
	uint32_t ticket; /* QUEUED: the global ticket taken for the next holder */
	char pad[LS_CACHELINE - 16];
};
_Static_assert(sizeof(struct local) == LS_CACHELINE, "one line per cluster");

struct ctt {
	_Atomic uint64_t global;
	ls_hier_lines_t lines;
};
_Static_assert(sizeof(struct ctt) <= LS_INLINE_STATE, "inline state");
_Static_assert(offsetof(struct ctt, lines) == LS_HIER_LINES_AT, "hier.h");

/* The marker of a lock without a block (hier.h): its unlock is the fast
 * path's. */
static const struct ls_cohort_head flat = {.h = LS_HIER_FLAT_HEAD, .holder = LS_HIER_FAST};

/* ---- fork ---- */

struct ctt_fork {
	struct ctt *l;
	struct ls_cohort_head *h;
};

/* The local words as the fork left them: see the header. */
static void ctt_fork_repair(void *arg)
{
	struct ctt_fork *f = arg;
	/* relaxed: no thread of the child has touched them yet (ls_fork_repair) */
	uint32_t keep = ls_tkt_held(atomic_load_explicit(&f->l->global, memory_order_relaxed)) ? f->h->holder
											       : LS_HIER_FAST;
	for (uint32_t c = 0; c < f->h->h.nclusters; c++) {
		struct local *s = ls_hier_line(&f->h->h, 1 + c);
		uint64_t v = atomic_load_explicit(&s->t, memory_order_relaxed);
		/* relaxed: published by the release of ls_fork_repair's lock */
		atomic_store_explicit(&s->t, c == keep ? ls_tkt_holder_only(v) : ls_tkt_all_void(v),
				      memory_order_relaxed);
		if (c != keep)
			atomic_store_explicit(&s->granted, NONE, memory_order_relaxed);
	}
}

static __attribute__((noinline)) void ctt_fork(struct ctt *l, struct ls_cohort_head *h)
{
	struct ctt_fork f = {l, h};
	ls_fork_repair(&l->lines, &h->gen, ctt_fork_repair, &f);
}

/* ---- the cohort lock ---- */

/* The papers' acquisition: the local lock of the caller's cluster, then
 * the global lock unless it came with the local one. */
static __attribute__((noinline)) void ctt_lock_cohort(struct ctt *l, struct ls_cohort_head *h)
{
	if (!h &&
	    (h = (struct ls_cohort_head *)ls_hier_enter_attach(&l->lines, false, &flat, NULL)) == &flat) {
		ls_tkt_lock(&l->global);
		return;
	}
	if (LS_UNLIKELY(ls_fork_child()))
		ctt_fork(l, h);
	unsigned c = ls_cluster_fold(ls_cluster(), h->h.nclusters);
	struct local *s = ls_hier_line(&h->h, 1 + c);
	ls_tkt_lock(&s->t);
	/* relaxed: ordered after the releaser's store by the local lock's
	 * release and acquire */
	uint32_t g = atomic_load_explicit(&s->granted, memory_order_relaxed);
	atomic_store_explicit(&s->granted, NONE, memory_order_relaxed);
	if (g == QUEUED) {
		ls_tkt_wait(&l->global, s->ticket);
		h->passes = 0;
	} else if (g != HELD) {
		ls_tkt_lock(&l->global);
		h->passes = 0;
	}
	h->holder = c;
}

static void ctt_lock(void *state)
{
	struct ctt *l = state;
	struct ls_cohort_head *h = (struct ls_cohort_head *)ls_hier_try_enter(&l->lines);
	if (LS_LIKELY(h) && ls_hier_fastpath && ls_tkt_try(&l->global)) {
		h->holder = LS_HIER_FAST;
		return;
	}
	ctt_lock_cohort(l, h);
}

static int ctt_trylock(void *state)
{
	struct ctt *l = state;
	struct ls_cohort_head *h = (struct ls_cohort_head *)ls_hier_enter(&l->lines);
	if (LS_UNLIKELY(!h) &&
	    (h = (struct ls_cohort_head *)ls_hier_enter_attach(&l->lines, false, &flat, NULL)) == &flat)
		return ls_tkt_try(&l->global) ? 0 : EBUSY;
	if (!ls_tkt_try(&l->global)) {
		ls_hier_leave(&h->h, &flat);
		return EBUSY;
	}
	h->holder = LS_HIER_FAST;
	return 0;
}

static __attribute__((noinline)) void ctt_unlock_cohort(struct ctt *l, struct ls_cohort_head *h)
{
	if (LS_UNLIKELY(ls_fork_child()))
		ctt_fork(l, h);
	struct local *s = ls_hier_line(&h->h, 1 + h->holder);
	/* relaxed: we hold the local lock; a waiter's ticket seen late only
	 * makes us release the global lock instead of passing it */
	if (ls_tkt_waiters(atomic_load_explicit(&s->t, memory_order_relaxed))) {
		/* published by the local release */
		if (h->passes < ls_cohort_passes) {
			h->passes++;
			atomic_store_explicit(&s->granted, HELD, memory_order_relaxed);
			ls_tkt_release(&s->t, true); /* with the global lock: the release */
			return;
		}
		/* The bound: the global lock goes to the clusters queued for
		 * it; ours queues again now, before its next holder has woken
		 * up, so that no cluster can overtake it meanwhile. */
		ls_tkt_take(&l->global, &s->ticket);
		/* relaxed: published by the local lock's release that follows */
		atomic_store_explicit(&s->granted, QUEUED, memory_order_relaxed);
	}
	ls_tkt_release(&s->t, false);
	ls_tkt_release(&l->global, true); /* the last access: see the header */
}

static void ctt_unlock(void *state)
{
	struct ctt *l = state;
	/* relaxed: the release CAS orders; a stale value only fails it */
	uint64_t v = atomic_load_explicit(&l->global, memory_order_relaxed);
	if (LS_UNLIKELY(!ls_tkt_held(v)))
		return; /* free: an unlock too many (lock.h), before the block is read */
	/* relaxed: the lock attached it, and this thread holds the lock */
	struct ls_cohort_head *h =
	    (struct ls_cohort_head *)atomic_load_explicit(&l->lines, memory_order_relaxed);
	if (LS_UNLIKELY(h->holder != LS_HIER_FAST))
		ctt_unlock_cohort(l, h);
	else
		ls_tkt_release_from(&l->global, v, true);
	ls_hier_leave(&h->h, &flat); /* compares h only */
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
