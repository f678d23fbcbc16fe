/*
 * fork.h - the fork generation: how a lock tells, in the child of fork(),
 * what belongs to threads that fork left behind.
 *
 * The child of fork() has one thread, a copy of the forking one (which was
 * inside fork(), so it held locks but waited for none); every other thread
 * of the parent is gone, frozen wherever it was: holding a lock, waiting in
 * its queue, or between any two instructions of its acquisition (after the
 * swap that enqueued its node and before it linked it, after it took a
 * ticket and before it recorded it anywhere). A lock that hands itself to
 * its next waiter would hand itself to one of them. So each process has a
 * GENERATION: 0 in a process started by exec, its parent's plus one in a
 * child of fork(). What a waiter leaves in a queue where a releaser or a
 * later waiter reads it carries the generation it was made in (a STAMP);
 * in the child, anything stamped with an older generation was made by a
 * thread that is gone, except what the forking thread itself held, which
 * is always at the head of its queue. Each family uses it in its hand-over
 * and wait paths only (the file headers say how):
 *   - queues of nodes stamp each node when it is enqueued, and in the child
 *     the first waiter behind a stale node goes to the holder instead, and
 *     a holder whose own node is stale hands over only to a node of the
 *     current generation, or empties the queue;
 *   - ticket locks, which record no waiter, start over at their first
 *     hand-over in a generation (ls_fork_first): every ticket taken before
 *     is void, and a live thread whose ticket was voided takes another.
 *
 * The generation changes in lockswap's own pthread_atfork child handler,
 * which this file registers (so the unit tests that link liblocks.a get it
 * too). The handlers of a library whose constructor ran before lockswap's
 * run before it in the child, and may unlock a lock there; so the prepare
 * handler marks the generation PENDING, and a slow path that reads it so
 * resolves it at once: in the parent (its pid is the prepare's) the
 * generation stands, in the child it becomes the next one. The stamp a fast
 * path writes is the raw word (a relaxed load), PENDING included; every
 * comparison ignores that bit.
 *
 * Cost: the word is read on a slow path (a hand-over, a wait), or where a
 * node is stamped; never written but by fork.
 */
#ifndef LS_FORK_H
#define LS_FORK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lock.h"
#include "wait.h"

#define LS_FORK_PENDING (1u << 29) /* a fork is under way (see above) */
#define LS_FORK_GEN_MASK (LS_FORK_PENDING - 1)

/* The generation, with LS_FORK_PENDING while a fork is under way. Hidden:
 * read at its own address, not through the GOT (one load on a path). */
extern _Atomic uint32_t ls_fork_word __attribute__((visibility("hidden")));
/* The generation times two plus one: a stamp that is never 0 and leaves
 * bit 31 (LS_PARKED) free, for a word that is 0 when released and the
 * stamp while held or waited for (clh.c's node). Without PENDING. */
extern _Atomic uint32_t ls_fork_odd __attribute__((visibility("hidden")));

/* What a fast path stamps: the word as it is. relaxed: it changes only in
 * fork's child handler, before any thread of the child that could read it
 * otherwise exists, or while the caller's own thread resolves it. */
static inline uint32_t ls_fork_stamp(void)
{
	return atomic_load_explicit(&ls_fork_word, memory_order_relaxed);
}

/* ls_fork_odd as a fast path stamps it. relaxed: as ls_fork_stamp. */
static inline uint32_t ls_fork_odd_stamp(void)
{
	return atomic_load_explicit(&ls_fork_odd, memory_order_relaxed);
}

uint32_t ls_fork_resolve(void);

/* The current generation, for a slow path. */
static inline uint32_t ls_fork_gen(void)
{
	uint32_t g = ls_fork_stamp();
	if (LS_UNLIKELY(g & LS_FORK_PENDING))
		g = ls_fork_resolve();
	return g;
}

/* False in a process that is not a fork child, where nothing can be stale
 * (true also while it forks: ask ls_fork_gen() then). */
static inline bool ls_fork_child(void)
{
	return LS_UNLIKELY(ls_fork_stamp() != 0);
}

/* True if `stamp` was made in an older generation than this process's: by
 * a thread that does not exist here, or, for what the forking thread held
 * at fork, before the fork. */
static inline bool ls_fork_stale(uint32_t stamp)
{
	return LS_UNLIKELY((stamp & LS_FORK_GEN_MASK) != ls_fork_gen());
}

/* Registers fn to run in the child of every fork, once, on the forking
 * thread, after the generation has changed and before that thread takes
 * any slow path (at most 8; before the first fork: a constructor). For
 * what lives in the forking thread itself (hemlock's records). */
void ls_fork_at_child(void (*fn)(void));

/* The same for a value of a word stamped with ls_fork_odd_stamp() (not 0;
 * LS_PARKED ignored). */
static inline bool ls_fork_stale_odd(uint32_t v)
{
	return ls_fork_child() && ls_fork_stale((v & ~LS_PARKED) >> 1);
}

/* True for the first caller with `addr` in this generation (in a process
 * that is not a fork child: never). A table of addresses, not of locks: a
 * lock created after the fork at the address of one that was gone through
 * already needs nothing either. Two addresses may share an entry and evict
 * each other: a caller must accept being first again (what it does then
 * must be harmless when repeated: a ticket lock voids its tickets once
 * more). */
bool ls_fork_first(const void *addr);

/* Runs repair(arg) once per generation for a lock that records it in *gen,
 * a word of its own (0 in a new lock: a lock made in the child is repaired
 * once too, which finds nothing to do): the first caller runs it, and no
 * other caller returns before it is done. For a slow path, in a fork child
 * (the caller tests ls_fork_child() first, so that no other process pays
 * more than that test). */
void ls_fork_repair(const void *addr, _Atomic uint32_t *gen, void (*repair)(void *arg), void *arg);

#endif
