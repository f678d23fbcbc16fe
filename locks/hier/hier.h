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
 * onto it (ls_cluster_fold). The block is attached to a word of the inline
 * state (ls_hier_lines_t) as pool.h attaches out-of-line state (one CAS,
 * after its head is written, so the counts are read with the pointer):
 *
 *	head:	ext.owner	the address of the word it was attached to
 *		nclusters	cluster lines (>= 1)
 *		ngroups		group lines (hmcs; 0 otherwise)
 *		then the lock's own fields (struct ls_hier_head first)
 *
 * No address space. ls_ext_alloc returns NULL when a block cannot be had
 * without the pool's reserve, which is kept for queue nodes (pool.h). A
 * block is per lock and kept until destroy, so waiting for one could wait
 * for ever: a program that has touched a thousand such locks and holds
 * none, or one thread holding hundreds of them while another waits for
 * them to be released (glibc's mutex needs no memory and lets both go on).
 * So a lock that gets no block attaches its algorithm's FLAT marker
 * instead: a static const head (read-only memory: never written), whose
 * owner is NULL (never a lock's word). ls_hier_load then says "not mine" with the same loads and
 * compare as for a lock with no block yet, so every acquisition takes the
 * slow path, where ls_hier_enter_attach returns the marker; from then until
 * destroy the lock is its top-level lock alone, and an acquisition waits
 * on it: c-bo-mcs its global backoff lock, c-tkt-tkt its global ticket
 * lock. hclh and hmcs have a queue at the top, whose holder must find its
 * node at unlock, and the 16 inline bytes hold only the queue's tail and
 * the lines word; so they use the tail's word as a ticket lock
 * (ls_tkt, queue/turn.h) instead, FIFO like the queue it stands for. No memory
 * is needed at all. The marker's fields are what the unlocks read (a
 * holder of LS_HIER_FAST for the cohort locks; for hclh and hmcs values
 * that send the unlock to its slow path, which sees the marker), so the
 * paths of a lock with a block are unchanged. The word goes from NULL (or
 * a copy's foreign pointer) to a block or the marker only by the CAS of
 * ls_hier_enter_attach, and back to NULL only by destroy: a lock is in one mode
 * from its first acquisition to its destroy, whatever threads raced to
 * attach (the losers adopt the winner's block or marker), and a copy by
 * value of an unlocked flat lock is an unlocked flat lock. destroy resets
 * the top-level word (hclh, hmcs) and detaches the marker, so the next use
 * tries for a block again. A flat lock is not hierarchical and has its top
 * level's fairness: FIFO for c-tkt-tkt, hclh and hmcs, none for c-bo-mcs
 * (README, Known limits). hbo and cna keep nothing per cluster (cna's
 * nodes come from ls_node_alloc, which has the reserve and waits).
 *
 * Copies. A program may copy an unlocked mutex by value: the copy's word
 * then points at its original's block, which is not its own (the owner in
 * its head says so), and it attaches a fresh one (pool.h: the shim's
 * out-of-line states work the same way). destroy() frees the block if it
 * is the lock's own; the block of a lock freed, unmapped or re-initialised
 * without destroy is reclaimed by the pool once the lock's word no longer
 * holds it (pool.h, "Reclaiming": a block of lines holds nothing else).
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
#define LS_COHORT_PASSES_PARAM                                                                               \
	{                                                                                                    \
		"LOCKSWAP_COHORT_PASSES",                                                                    \
		    "consecutive hand-offs inside the holder's cluster before the "                          \
		    "lock is offered to other clusters, count",                                              \
		    &ls_cohort_passes, 1, 1u << 30                                                           \
	}
#define LS_HIER_FASTPATH_PARAM                                                                               \
	{                                                                                                    \
		"LOCKSWAP_HIER_FASTPATH",                                                                    \
		    "1: lock() first tries the top-level lock alone when it is "                             \
		    "free and unqueued; 0: always climb the hierarchy",                                      \
		    &ls_hier_fastpath, 0, 1                                                                  \
	}
/* holder value of an acquisition by the fast path: no cluster lock held */
#define LS_HIER_FAST UINT32_MAX

struct ls_hier_head {
	struct ls_ext_head ext; /* first: the block's head for pool.h */
	uint16_t nclusters;	/* at most LS_TOPO_MAX_CLUSTERS */
	uint16_t ngroups;
	uint16_t own[2]; /* the algorithm's (hmcs: its head has no other room) */
};

typedef ls_ext_word_t ls_hier_lines_t;

/* The block head of a cohort lock over ticket locks (c-tkt-tkt, and
 * c-rw-wp's writer lock): which cluster holds the global lock and how many
 * local passes it has made. Only the holder writes them. */
struct ls_cohort_head {
	struct ls_hier_head h;
	uint32_t holder; /* cluster, or LS_HIER_FAST */
	uint32_t passes;
	_Atomic uint32_t gen; /* the fork generation it was last repaired in (fork.h) */
};

/* Where the lines word is in the inline state of every lock that has one
 * (each file asserts it), so that a test can tell a flat lock from one
 * with a block (ls_hier_load, ls_hier_is_flat). */
#define LS_HIER_LINES_AT 8

/* The start of every algorithm's flat marker (see "No address space"): no
 * owner, no lines. A block has at least one cluster line. */
#define LS_HIER_FLAT_HEAD                                                                                    \
	{                                                                                                    \
		.ext = {.owner = NULL}, .nclusters = 0, .ngroups = 0                                         \
	}

static inline bool ls_hier_is_flat(const struct ls_hier_head *h)
{
	return h && !h->ext.owner && !h->nclusters;
}

/* Line i of the block: 0 the head, 1..nclusters the clusters, then the
 * groups. */
static inline void *ls_hier_line(struct ls_hier_head *h, unsigned i)
{
	return (char *)h + (size_t)i * LS_CACHELINE;
}

/* For an acquisition that found no block of the lock's own (see
 * ls_hier_enter below): attaches one to *w (clusters, and groups if
 * with_groups and the topology has them), unless another thread did, and
 * returns it entered; or, if the lock has the marker `flat` or no block
 * can be had without the pool's reserve, attaches `flat` and returns it
 * (never entered). init (may be NULL) prepares a new block, zero-filled,
 * before it is published. */
struct ls_hier_head *ls_hier_enter_attach(ls_hier_lines_t *w, bool with_groups, const void *flat,
					  void (*init)(struct ls_hier_head *));
/* destroy(): frees the block, if the lock has one of its own; returns
 * what was attached (the caller resets its top level if it was `flat`). */
struct ls_hier_head *ls_hier_detach(ls_hier_lines_t *w);

/* The block for an acquisition, if the lock has its own (else NULL: call
 * ls_hier_enter_attach); its head and zeroed lines are seen (ls_ext_load). */
static inline struct ls_hier_head *ls_hier_load(ls_hier_lines_t *w)
{
	return (struct ls_hier_head *)ls_ext_load(w);
}

/* The mutexes' blocks are freed by the pool while idle (pool.h, "Idle
 * locks"): an acquisition enters the block (ls_hier_enter, else
 * ls_hier_enter_attach), a failed one leaves it at once, and the unlock
 * leaves it after its release (ls_hier_leave). The marker is never
 * entered. */
static inline struct ls_hier_head *ls_hier_enter(ls_hier_lines_t *w)
{
	return (struct ls_hier_head *)ls_ext_enter(w);
}
/* For a lock's fast path: ls_ext_try_enter (NULL: nothing entered; the
 * slow path's ls_hier_enter_attach finds the block and enters it). */
static inline __attribute__((always_inline)) struct ls_hier_head *ls_hier_try_enter(ls_hier_lines_t *w)
{
	return (struct ls_hier_head *)ls_ext_try_enter(w);
}
/* h: what the acquisition returned (NULL: nothing). Only compares h. */
static inline void ls_hier_leave(struct ls_hier_head *h, const void *flat)
{
	if (h && (const void *)h != flat)
		ls_hold_pop(&h->ext);
}

#endif
