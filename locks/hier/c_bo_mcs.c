/*
 * c_bo_mcs.c - C-BO-MCS: a cohort lock, a backoff lock over MCS locks.
 *
 * Dice, Marathe, Shavit, "Lock Cohorting: A General Technique for Designing
 * NUMA Locks", PPoPP 2012 (ACM TOPC 1(2) 2015), section 2 (the cohort
 * transformation) and section 3 (the C-BO-MCS design, the one the paper
 * measures best). Not in ../shared/papers; written from the paper's
 * description. The backoff lock is AMP's (7.4, backoff.c); the MCS locks
 * are mcs_core.h's queue, one per cluster (hier.h).
 *
 * To acquire, a thread enqueues its node in its cluster's MCS queue. At the
 * head of the queue (no predecessor, or handed the local lock with
 * GO_ACQUIRE), it takes the global backoff lock; handed the local lock with
 * GO_GLOBAL, it holds the global lock too. To release, a holder whose
 * local queue has a successor (the cohort detection: the MCS tail is not
 * its node) and that has passed the global lock fewer than
 * LOCKSWAP_COHORT_PASSES times in a row hands the local lock to it with
 * GO_GLOBAL; otherwise it releases the local lock (GO_ACQUIRE to a
 * successor), then the global lock. The backoff lock is thread-oblivious, as
 * the cohort transformation requires. It is not fair: after the bound a
 * cluster releases the global lock, but its next waiter may win it back
 * against the others' backing-off masters; the bound limits passes, not
 * the global lock's order (section 2 calls this "probabilistic" fairness).
 *
 *	inline:	word		global: 0 free, 1 held, | LS_PARKED
 *		lines		the block (hier.h)
 *	head:	holder		cluster whose local lock the holder has, or
 *				LS_HIER_FAST (hier.h: the global lock alone)
 *		passes		consecutive passes of the global lock
 *		node		the holder's MCS node (unlock may be another
 *				thread's)
 *	local:	tail		the cluster's MCS queue, one per line
 *	node:	status		WAIT, then GO_ACQUIRE or GO_GLOBAL
 *		linked, next	mcs_core.h's
 *
 * Nodes: ls_node_alloc per cohort acquisition, freed by the release of the
 * local lock (after the hand-over or the CAS), as in mcs.c. Waiting policy:
 * the global word is ttas_word.h's protocol (sleepers woken one at a time);
 * nodes as mcs.c (one waiter per word). Backoff pauses are steps of the
 * policy. trylock: the fast path's attempt. No native timeout.
 *
 * After the release (lock.h). The global lock's release is the lock's
 * release, and it comes last: the paper releases the global lock and then
 * the local one, whose hand-over (or CAS) then wrote into a block that a
 * destroy could have freed and another mutex reused. A successor handed
 * the local lock with GO_ACQUIRE finds the global lock still held and
 * waits for it. A pass (GO_GLOBAL) is the lock's release itself. After
 * either, unlock touches only its node (freed) and the kernel. Misuse: an
 * unlock of a lock never locked finds no block and returns; of a free lock
 * after the fast path, it releases the free global word again (no change);
 * after the cohort path, it finds the global word 0 and returns before it
 * follows the stale node.
 *
 * fork() (mcs_core.h): in a fork child, the first live waiter of a
 * cluster's queue (its predecessor is stale) waits behind the holder's
 * node if the cohort holding the global lock is its cluster's, else takes
 * the local lock at once: its queue's head is a thread that fork left
 * behind, waiting for the global lock. A cohort hold taken before the
 * fork hands its local lock to that waiter (or empties the queue), then
 * releases the global lock: no pass. The global word is a TTAS lock: its
 * waiters record nothing.
 *
 * Without a block (no address space, hier.h): the lock is its global
 * backoff lock alone. The marker `flat` has holder LS_HIER_FAST, so unlock
 * releases the global lock as after the fast path; no node is used.
 */
#define LS_NODE_CLASS LS_NODES_C_BO_MCS /* pool.h: nodes reused only by this algorithm */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "fork.h"
#include "hier.h"
#include "lock.h"
#include "pool.h"
#include "queue/mcs_core.h"
#include "spin/ttas_word.h"
#include "wait.h"

enum { WAIT = 1, GO_ACQUIRE = 2, GO_GLOBAL = 3 };

_Static_assert(sizeof(struct ls_mcs_node) <= LS_NODE_SIZE - 8,
	       "the pool links free nodes in the last 8 bytes");

struct local {
	struct ls_mcs_node *_Atomic tail;
	char pad[LS_CACHELINE - sizeof(void *)];
};
_Static_assert(sizeof(struct local) == LS_CACHELINE, "one line per cluster");

struct head {
	struct ls_hier_head h;
	uint32_t holder;
	uint32_t passes;
	struct ls_mcs_node *node;
};

struct cbm {
	struct ls_ttas global;
	uint32_t unused;
	ls_hier_lines_t lines;
};
_Static_assert(sizeof(struct cbm) <= LS_INLINE_STATE, "inline state");
_Static_assert(offsetof(struct cbm, lines) == LS_HIER_LINES_AT, "hier.h");

/* The marker of a lock without a block (hier.h): its unlock is the fast
 * path's. */
static const struct head flat = {.h = LS_HIER_FLAT_HEAD, .holder = LS_HIER_FAST};

/* ---- the global backoff lock (backoff.c's delays) ---- */

static uint64_t min_delay = 100, max_delay = 10000;

static void lost_race(struct ls_spin *s, uint64_t *limit)
{
	ls_backoff(s, limit, max_delay, 0);
}

static void global_acquire(struct cbm *l)
{
	if (!ls_ttas_try(&l->global))
		ls_ttas_wait(&l->global, 0, lost_race, min_delay);
}

/* ---- the cohort lock ---- */

/* fork (see the header): n is the first live waiter of cluster c's queue
 * (its predecessor is stale). If the cohort that holds the global lock is
 * c's (the thread that forked, or one that is gone), n waits behind the
 * holder's node for its grant; else the head of c's queue is a thread that
 * is gone, and the local lock is n's at once. Returns the grant. */
static __attribute__((noinline)) uint32_t cbm_fork_wait(struct cbm *l, struct head *h, unsigned c,
							struct ls_mcs_node *n)
{
	/* relaxed: written before the fork by the cohort that holds the
	 * global lock, which keeps them until it has handed our local lock on */
	if (!atomic_load_explicit(&l->global.word, memory_order_relaxed) || h->holder != c)
		return GO_ACQUIRE;
	ls_mcs_link_holder(h->node, n, WAIT);
	return ls_mcs_await(n, WAIT);
}

static __attribute__((noinline)) void cbm_lock_cohort(struct cbm *l, struct head *h)
{
	if (!h && (h = (struct head *)ls_hier_enter_attach(&l->lines, false, &flat, NULL)) == &flat) {
		global_acquire(l);
		return;
	}
	unsigned c = ls_cluster_fold(ls_cluster(), h->h.nclusters);
	struct local *s = ls_hier_line(&h->h, 1 + c);
	struct ls_mcs_node *n = ls_node_alloc(), *pred = ls_mcs_enqueue(&s->tail, n);
	uint32_t go = GO_ACQUIRE;
	if (pred)
		LS_TEST_POINT(LS_POINT_VISIBLE);
	if (LS_UNLIKELY(pred && ls_mcs_stale(pred))) {
		go = cbm_fork_wait(l, h, c, n);
	} else if (pred) {
		ls_mcs_link(pred, n, WAIT);
		go = ls_mcs_await(n, WAIT);
	}
	if (go != GO_GLOBAL) {
		global_acquire(l);
		h->passes = 0;
	}
	h->holder = c;
	h->node = n;
}

static void cbm_lock(void *state)
{
	struct cbm *l = state;
	struct head *h = (struct head *)ls_hier_try_enter(&l->lines);
	if (LS_LIKELY(h) && ls_hier_fastpath && ls_ttas_try(&l->global)) {
		h->holder = LS_HIER_FAST;
		return;
	}
	cbm_lock_cohort(l, h);
}

static int cbm_trylock(void *state)
{
	struct cbm *l = state;
	struct head *h = (struct head *)ls_hier_enter(&l->lines);
	if (LS_UNLIKELY(!h) &&
	    (h = (struct head *)ls_hier_enter_attach(&l->lines, false, &flat, NULL)) == &flat)
		return ls_ttas_try(&l->global) ? 0 : EBUSY;
	if (!ls_ttas_try(&l->global)) {
		ls_hier_leave(&h->h, &flat);
		return EBUSY;
	}
	h->holder = LS_HIER_FAST;
	return 0;
}

/* Hands the local lock of s on from n with `go`, or empties the queue.
 * `last`: this is the lock's release (a pass with the global lock). */
static void local_release(struct local *s, struct ls_mcs_node *n, uint32_t go, bool last)
{
	if (ls_mcs_leave(&s->tail, n)) {
		if (last)
			LS_TEST_POINT(LS_POINT_RELEASED);
	} else if (last) {
		ls_mcs_grant_release(ls_mcs_successor(n), go);
	} else {
		ls_mcs_grant(ls_mcs_successor(n), go);
	}
	ls_node_free(n);
}

/* The release of a hold taken before the process forked (mcs_core.h):
 * the local lock to the first live waiter of the cluster (linked behind n:
 * cbm_fork_wait), or its queue emptied; then the global lock. */
static __attribute__((noinline)) void cbm_fork_release(struct cbm *l, struct local *s, struct ls_mcs_node *n)
{
	struct ls_mcs_node *succ = ls_mcs_fork_successor(&s->tail, n);
	if (succ)
		ls_mcs_grant(succ, GO_ACQUIRE);
	ls_node_free(n);
	ls_ttas_release(&l->global);
}

static __attribute__((noinline)) void cbm_unlock_cohort(struct cbm *l, struct head *h)
{
	/* relaxed: the cohort's own acquisition set it */
	if (!atomic_load_explicit(&l->global.word, memory_order_relaxed))
		return; /* free: holder and node are stale (lock.h, misuse) */
	struct local *s = ls_hier_line(&h->h, 1 + h->holder);
	struct ls_mcs_node *n = h->node;
	if (LS_UNLIKELY(ls_mcs_stale(n))) {
		cbm_fork_release(l, s, n);
		return;
	}
	/* Cohort detection: a successor has swapped itself in behind n. */
	if (atomic_load_explicit(&s->tail, memory_order_relaxed) != n && h->passes < ls_cohort_passes) {
		h->passes++;
		local_release(s, n, GO_GLOBAL, true); /* the tail moved: a hand-over, never the CAS */
		return;
	}
	/* The local lock first, the global one last (see the header). */
	local_release(s, n, GO_ACQUIRE, false);
	ls_ttas_release(&l->global);
}

static void cbm_unlock(void *state)
{
	struct cbm *l = state;
	/* relaxed: the lock attached it, and this thread holds the lock */
	struct head *h = (struct head *)atomic_load_explicit(&l->lines, memory_order_relaxed);
	if (LS_UNLIKELY(!h))
		return; /* never locked: free (lock.h, misuse) */
	if (LS_UNLIKELY(h->holder != LS_HIER_FAST))
		cbm_unlock_cohort(l, h);
	else
		ls_ttas_release(&l->global);
	ls_hier_leave(&h->h, &flat); /* compares h only */
}

static void cbm_destroy(void *state)
{
	ls_hier_detach(&((struct cbm *)state)->lines);
}

static const struct ls_param cbm_params[] = {
    LS_COHORT_PASSES_PARAM,
    LS_HIER_FASTPATH_PARAM,
    {"LOCKSWAP_BACKOFF_MIN", "initial back-off limit after a lost race, in ns", &min_delay, 1, 1000000000},
    {"LOCKSWAP_BACKOFF_MAX", "largest back-off limit (doubling stops there), in ns", &max_delay, 1,
     1000000000},
    {0},
};

static const struct ls_algo cbm_algo = {
    .name = "c-bo-mcs",
    .desc = "cohort lock, backoff over per-cluster MCS (Dice, Marathe & Shavit, PPoPP 2012)",
    .caps = LS_CAP_HIER | LS_CAP_QNODE,
    .rank = 71,
    .state_size = sizeof(struct cbm),
    .params = cbm_params,
    .destroy = cbm_destroy,
    .lock = cbm_lock,
    .trylock = cbm_trylock,
    .unlock = cbm_unlock,
};
LS_REGISTER_ALGO(cbm_algo);
