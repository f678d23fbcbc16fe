/*
 * profile_thread.h - the per-thread tables (profile_thread.c): every thread
 * counts in its own table (struct pthr), entries keyed by address (open
 * addressing, a one-entry MRU in front), each pointing at its record
 * (profile_records.h), and its own call sites. Nothing shared is written
 * on the uncontended path except a record's hot line. A thread's table is
 * merged into the records at thread exit (a pthread key destructor), when
 * it holds TABLE_CAP entries or call sites, and by the report. An entry
 * whose record has ended is merged into it and moved to the live one at
 * its next use. What a wrapper runs on every call is inline here.
 */
#ifndef LS_PROFILE_THREAD_H
#define LS_PROFILE_THREAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lock.h"
#include "profile_base.h"
#include "profile_state.h"

#define SITE_BUCKETS 256 /* per thread */

struct tent {
	uintptr_t key;
	struct grec *g;
	uint64_t n[LS_PROF_NCOUNT];
	uint64_t wait_sum, wait_max, hold_sum, hold_max, rd_wait_sum, rd_hold_sum;
	uint32_t wait_h[LS_PROF_BUCKETS], hold_h[LS_PROF_BUCKETS];
	/* an rwlock's read holds by this thread (only it reads them): how many,
	 * and since when the outermost one (a read hold's time runs from the
	 * thread's first read acquisition to its last release: nested holds
	 * do not add) */
	uint32_t rd_depth;
	uint64_t rd_since;
};

struct tsite {
	struct tsite *next;
	struct grec *g;
	uint32_t hash, nframes;
	bool read;
	uint64_t count, timeouts, wait_ns;
	uintptr_t frames[];
};

struct pthr {
	uint64_t serial;
	struct tent *mru;
	struct tent **slots;
	uint32_t cap, nent, nsites, sample_left;
	struct arena arena;
	struct pthr *next, *prev;
	struct tsite *sites[SITE_BUCKETS];
};

/* The histogram bucket of ns (profile_counts.h). */
static inline unsigned ls_prof_bucket(uint64_t ns)
{
	unsigned b = ns < 2 ? 0 : 63u - (unsigned)__builtin_clzll(ns);
	return b < LS_PROF_BUCKETS ? b : LS_PROF_BUCKETS - 1;
}

static inline size_t ls_prof_tslot(uintptr_t key, uint32_t cap)
{
	return (size_t)(((uint64_t)key >> 3) * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
}

/* A u32 histogram bucket of a thread carries into the record before it
 * wraps (at 2^32 events of one bucket, once in a long while). */
void ls_prof_carry(struct tent *e, uint32_t *h, unsigned b, bool wait);

static inline void ls_prof_hist_add(struct tent *e, uint32_t *h, uint64_t ns, bool wait)
{
	unsigned b = ls_prof_bucket(ns);
	uint32_t v = __atomic_load_n(&h[b], __ATOMIC_RELAXED);
	if (LS_UNLIKELY(v == UINT32_MAX))
		ls_prof_carry(e, h, b, wait);
	else
		__atomic_store_n(&h[b], v + 1, __ATOMIC_RELAXED);
}

/* The calling thread's table, new (and registered) on its first event;
 * NULL if out of memory. */
struct pthr *ls_prof_pthr_new(void);

/* Enters the profiler: NULL if it is already running on this thread (or
 * cannot record: out of memory), and then the caller just passes through. */
static inline struct pthr *ls_prof_enter(void)
{
	if (!ls_prof_guard_enter())
		return NULL;
	struct pthr *t = ls_prof_tls.t;
	if (LS_UNLIKELY(!t) && !(t = ls_prof_pthr_new())) {
		atomic_fetch_add_explicit(&ls_prof.unrecorded, 1, memory_order_relaxed);
		ls_prof_guard_leave();
	}
	return t;
}

static inline struct tent *ls_prof_lookup(struct pthr *t, uintptr_t key)
{
	for (size_t i = ls_prof_tslot(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
		struct tent *e = t->slots[i];
		if (!e || e->key == key)
			return e;
	}
}

/* The entry of (key, kind), moved to the live record if its record ended,
 * created (with its record) if missing. NULL if out of memory. */
struct tent *ls_prof_entry_slow(struct pthr *t, uintptr_t key, int kind, bool glibc);

static inline __attribute__((always_inline)) struct tent *ls_prof_entry(struct pthr *t, uintptr_t key,
									int kind, bool glibc)
{
	struct tent *e = t->mru;
	if (LS_UNLIKELY(!e || e->key != key)) {
		e = ls_prof_lookup(t, key);
		if (LS_UNLIKELY(!e))
			return ls_prof_entry_slow(t, key, kind, glibc);
		t->mru = e;
	}
	/* relaxed: a program that destroys a mutex has ordered that before
	 * any later use of the address (or its behaviour is undefined) */
	if (LS_UNLIKELY(atomic_load_explicit(&e->g->dead, memory_order_relaxed) || e->g->kind != kind))
		return ls_prof_entry_slow(t, key, kind, glibc);
	return e;
}

/* A call site of a contended acquisition or a timeout. Last use of any
 * entry pointer: it may merge and reset the thread's table. */
void ls_prof_site_add(struct pthr *t, struct grec *g, bool read, const uintptr_t *f, unsigned n,
		      uint64_t wait, bool timeout);

/* Under the global lock: merges every thread's entries into the records
 * (the report's first step). */
void ls_prof_merge_all(void);

/* At start (may allocate): the pthread key whose destructor merges and
 * frees a thread's table when it exits. */
void ls_prof_threads_start(void);
/* In a fork child: the forking thread, now the only one, keeps its table
 * (emptied); the others' tables are freed. */
void ls_prof_threads_fork_child(void);

#endif
