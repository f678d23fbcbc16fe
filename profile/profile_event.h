/*
 * profile_event.h - what an event records (profile_event.c): an
 * acquisition, a failed try, a release, a contended attempt, in the calling
 * thread's table (profile_thread.h). The wrappers of each family call these
 * and nothing below them but the guard. What runs on every uncontended
 * acquisition and release is inline here, as the per-thread table's lookup.
 *
 * Costs when on. Acquisition: one trylock first in the wrapper (if it fails
 * the first attempt "found it held": contended), one clock read, a table
 * lookup, counters. Release: one clock read, the lookup (the MRU hits), the
 * hold histogram. Contention only: the waiters counter, a second clock
 * read, and (1 in LOCKSWAP_PROFILE_SAMPLE) the stack, taken while waiting,
 * so its cost overlaps the wait instead of lengthening the hold (it is
 * included in the wait time measured).
 */
#ifndef LS_PROFILE_EVENT_H
#define LS_PROFILE_EVENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lock.h"
#include "profile_base.h"
#include "profile_state.h"
#include "profile_thread.h"

/* The holder's part: hand-off and start of the hold. */
static inline void ls_prof_hold_begin(struct pthr *t, struct tent *e, uint64_t at)
{
	struct grec *g = e->g;
	uint64_t last = atomic_load_explicit(&g->last, memory_order_relaxed);
	if (last != t->serial) {
		if (last)
			BUMP(e->n[LS_PROF_HANDOFF], 1);
		atomic_store_explicit(&g->last, t->serial, memory_order_relaxed);
	}
	atomic_store_explicit(&g->held_since, at, memory_order_relaxed);
}

static inline bool ls_prof_is_read(int how)
{
	return how >= LS_PROF_RDLOCK;
}

/* A read hold of an rwlock begins (this thread's first, or a nested one). */
static inline void ls_prof_read_begin(struct tent *e, uint64_t at)
{
	if (e->rd_depth++ == 0)
		e->rd_since = at;
}

static inline void ls_prof_hold_add(struct tent *e, uint64_t d, bool read)
{
	BUMP(e->hold_sum, d);
	if (read)
		BUMP(e->rd_hold_sum, d);
	RAISE(e->hold_max, d);
	ls_prof_hist_add(e, e->hold_h, d, false);
}

/* An acquisition whose first attempt succeeded (how: its counter). */
static inline __attribute__((always_inline)) void ls_prof_uncontended(struct pthr *t, uintptr_t key, int kind,
								      bool glibc, int how)
{
	uint64_t at = ls_prof_now();
	struct tent *e = ls_prof_entry(t, key, kind, glibc);
	if (LS_UNLIKELY(!e))
		return;
	if (ls_prof_is_read(how))
		ls_prof_read_begin(e, at);
	else
		ls_prof_hold_begin(t, e, at);
	BUMP(e->n[how], 1);
}

/* A release: ends the hold, whoever took the mutex (or the write hold of
 * an rwlock, or a spinlock). */
static inline __attribute__((always_inline)) void ls_prof_released(struct pthr *t, uintptr_t key, int kind,
								   bool glibc)
{
	uint64_t at = ls_prof_now();
	struct tent *e = ls_prof_entry(t, key, kind, glibc);
	if (LS_UNLIKELY(!e))
		return;
	struct grec *g = e->g;
	uint64_t since0 = atomic_load_explicit(&g->held_since, memory_order_relaxed);
	if (!since0) /* taken while the profiler could not see it */
		return;
	atomic_store_explicit(&g->held_since, 0, memory_order_relaxed);
	ls_prof_hold_add(e, ls_prof_since(since0, at), false);
}

/* The release of one of this thread's read holds of an rwlock: the last
 * one ends the hold. Nothing if it holds none the profiler saw (a misuse,
 * or a hold taken while it could not see). */
static inline void ls_prof_read_released(struct pthr *t, uintptr_t key, bool glibc)
{
	uint64_t at = ls_prof_now();
	struct tent *e = ls_prof_entry(t, key, PK_RWLOCK, glibc);
	if (!e || !e->rd_depth)
		return;
	if (--e->rd_depth == 0)
		ls_prof_hold_add(e, ls_prof_since(e->rd_since, at), true);
}

/* A contended attempt: begun when the first attempt failed, ended when
 * the algorithm (or glibc) returned. */
struct waiting {
	struct tent *e;
	uint64_t t0;
	unsigned nframes;
	uintptr_t frames[PROF_MAX_FRAMES];
};

/* A failed try (counter: LS_PROF_TRYFAIL or LS_PROF_RDTRYFAIL). */
void ls_prof_tryfailed(struct pthr *t, uintptr_t key, int kind, bool glibc, int counter);

/* The contended attempt w (the caller's, from begin to end) began when
 * the first attempt failed, and ended when the algorithm (or glibc)
 * returned r: 0 acquired, ETIMEDOUT timed out, anything else neither; how:
 * the acquisition's counter. */
void ls_prof_wait_begin(struct pthr *t, uintptr_t key, int kind, bool glibc, struct waiting *w);
void ls_prof_wait_end(struct pthr *t, struct waiting *w, int how, int r);

#endif
