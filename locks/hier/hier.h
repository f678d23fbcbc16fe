/*
 * hier.h - what the hierarchical locks of locks/hier/ share: the per-cluster
 * lines of a lock and the cohort pass bound.
 *
 * Per-cluster lines. A lock that keeps state per cluster (c-bo-mcs,
 * c-tkt-tkt, hclh, hmcs) keeps it in a block of cache lines from
 * ls_ext_alloc: line 0, the head, holds what the lock needs beyond its 16
 * inline bytes (who holds it, its pass count); then one line per cluster
 * (so that clusters never share a line), then, for hmcs, one per group.
 * The block is attached at the lock's first acquisition, so the all-zero
 * state stays a valid unlocked lock and no init() is needed; its counts
 * come from the topology at that moment: a lock first used before the
 * topology was published has one cluster line and folds every cluster id
 * onto it (ls_cluster_fold). The block is attached with one CAS on a word
 * of the inline state (ls_hier_lines_t), after its head is written, so the
 * counts are read with the pointer:
 *
 *	head:	owner		the address of the word it was attached to
 *		nclusters	cluster lines (>= 1)
 *		ngroups		group lines (hmcs; 0 otherwise)
 *		then the lock's own fields (struct ls_hier_head first)
 *
 * Copies. A program may copy an unlocked mutex by value: the copy's word
 * then points at its original's block. The head records the address of the
 * word it was attached to, so the copy sees a block that is not its own and
 * attaches a fresh one (the shim does the same for out-of-line states).
 * Reading the head of a block that was freed is safe: ls_ext memory is
 * type-stable, and a freed block's first word is a free-list link, never
 * the address of a lock. destroy() frees the block if it is the lock's own;
 * a mutex freed without destroy, or re-initialised without destroy, loses
 * its block (README, Known limits).
 *
 * The uncontended fast path (LOCKSWAP_HIER_FASTPATH, default 1; not in the
 * papers of c-bo-mcs, c-tkt-tkt, hclh and hmcs, whose every acquisition
 * climbs the whole hierarchy; the idea is that of the adaptive HMCS of
 * Chabbi and Mellor-Crummey, PPoPP 2016): lock() first tries the top-level
 * lock alone, with one atomic, and only if it is free with nobody queued
 * for it; such a holder holds no cluster lock, and its release has no
 * cohort to pass the lock to. Under contention the top level is never
 * free with nobody queued (a cohort passes it, or a waiter of another
 * cluster is queued for it), so the hierarchy behaves as in the papers;
 * alone, an acquisition costs about what mcs costs instead of two locks.
 * trylock() is always this one attempt. LOCKSWAP_HIER_FASTPATH=0 gives
 * the papers' algorithms exactly.
 *
 * The pass bound (LOCKSWAP_COHORT_PASSES, shared by c-bo-mcs, c-tkt-tkt,
 * hmcs and cna): how many times in a row the lock may be handed to a
 * waiter of the holder's cluster while it is held by that cluster, before
 * it must be offered to the other clusters (Dice, Marathe, Shavit, PPoPP
 * 2012, section 3: "may-pass-local" bounded to avoid starvation).
 */
#ifndef LS_HIER_H
#define LS_HIER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lock.h"
#include "pool.h"
#include "topo.h"
#include "wait.h"

extern uint64_t ls_cohort_passes, ls_hier_fastpath;
#define LS_COHORT_PASSES_DEFAULT 64
#define LS_COHORT_PASSES_PARAM                                                                          \
	{                                                                                               \
		"LOCKSWAP_COHORT_PASSES", "consecutive hand-offs inside the holder's cluster before the " \
					  "lock is offered to other clusters, count",                     \
		    &ls_cohort_passes, 1, 1u << 30                                                      \
	}
#define LS_HIER_FASTPATH_PARAM                                                                          \
	{                                                                                               \
		"LOCKSWAP_HIER_FASTPATH", "1: lock() first tries the top-level lock alone when it is "    \
					  "free and unqueued; 0: always climb the hierarchy",             \
		    &ls_hier_fastpath, 0, 1                                                             \
	}
/* holder value of an acquisition by the fast path: no cluster lock held */
#define LS_HIER_FAST UINT32_MAX

struct ls_hier_head {
	void *owner;
	uint32_t nclusters;
	uint32_t ngroups;
};

typedef struct ls_hier_head *_Atomic ls_hier_lines_t;

/* Line i of the block: 0 the head, 1..nclusters the clusters, then the
 * groups. */
static inline void *ls_hier_line(struct ls_hier_head *h, unsigned i)
{
	return (char *)h + (size_t)i * LS_CACHELINE;
}

/* Attaches a block of the lock's own to *w (clusters, and groups if
 * with_groups and the topology has them), unless another thread did, and
 * returns it. */
struct ls_hier_head *ls_hier_attach(ls_hier_lines_t *w, bool with_groups);
/* destroy(): frees the block, if the lock has one of its own. */
void ls_hier_detach(ls_hier_lines_t *w);

/* True if h is a block attached to w. relaxed: the head of a block that
 * was freed may be rewritten by the pool (a free-list link). */
static inline bool ls_hier_mine(ls_hier_lines_t *w, struct ls_hier_head *h)
{
	return h && __atomic_load_n(&h->owner, __ATOMIC_RELAXED) == (void *)w;
}

/* The block for an acquisition, if the lock has its own (else NULL: call
 * ls_hier_attach, or ls_hier_get). acquire: pairs with the release CAS in ls_hier_attach,
 * so the head and the zeroed lines are seen. */
static inline struct ls_hier_head *ls_hier_load(ls_hier_lines_t *w)
{
	struct ls_hier_head *h = atomic_load_explicit(w, memory_order_acquire);
	return LS_LIKELY(ls_hier_mine(w, h)) ? h : NULL;
}

/* The block, attached if need be (slow paths and trylock). */
static inline struct ls_hier_head *ls_hier_get(ls_hier_lines_t *w, bool with_groups)
{
	struct ls_hier_head *h = ls_hier_load(w);
	return LS_LIKELY(h != NULL) ? h : ls_hier_attach(w, with_groups);
}

/* Randomised exponential backoff (AMP 7.4, Fig. 7.5), for hbo and the
 * global lock of c-bo-mcs: a pause of a random time below *limit ns (not
 * past deadline, if any), then *limit doubles up to max. Each pause step is
 * a step of the waiting policy: returns true when, under park, the
 * budgets are spent (the caller then sleeps). */
bool ls_hier_backoff(struct ls_spin *s, uint64_t *limit, uint64_t max, uint64_t deadline);

#endif
