/*
 * profile_int.h - what the profiler's recorder (profile.c) and its report
 * writer (profile_out.c) share. See profile.c for the design.
 */
#ifndef LS_PROFILE_INT_H
#define LS_PROFILE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"
#include "profile_table.h"

#define PROF_MAX_FRAMES 64 /* LOCKSWAP_PROFILE_FRAMES at most */
#define PROF_MAX_MODULES 1024

enum { PK_MUTEX, PK_COND };

/* Counters: LS_PROF_LOCK... (profile_table.h). */

enum { END_NONE, END_DESTROYED, END_REUSED };
enum { ORIGIN_FIRST_USE, ORIGIN_INIT };

struct grec;

/* A call site of one record: the stack of contended acquisitions (and
 * timeouts) taken from it. Frames are return addresses. */
struct gsite {
	struct gsite *next_hash, *next_rec;
	struct grec *g;
	uint32_t hash, nframes;
	uint64_t count, timeouts, wait_ns;
	uintptr_t frames[];
};

/* One mutex or condvar, from its creation (init, or first use) to its
 * destroy or re-initialisation. Records are never freed. */
struct grec {
	/* Written by whoever holds the mutex: hand-offs and hold time. The
	 * mutex orders these accesses (they are atomics only so that the
	 * report may read them at any time). */
	_Atomic uint64_t last;	     /* serial of the last acquiring thread, 0 none */
	_Atomic uint64_t held_since; /* ns of the current acquisition, 0 if not held */
	/* Contended path only. */
	_Atomic uint32_t waiters, max_waiters;
	_Atomic uint8_t dead; /* ended: per-thread entries must move on */
	uint8_t kind;	      /* PK_MUTEX, PK_COND: read with dead on every use */
	char pad_hot[LS_CACHELINE - 2 * 8 - 2 * 4 - 2];

	/* Set at creation (under the global lock), read-only after. */
	uintptr_t addr;
	uint32_t id;
	uint8_t glibc, origin, ended;
	bool internal; /* libunwind's own (created from inside it): not reported */
	int32_t mkind; /* __kind of the mutex when first seen */
	int32_t pid;   /* the process that created it (a fork child inherits records) */
	uint32_t norigin;
	uintptr_t *origin_frames;
	struct grec *next_all;
	struct gsite *sites;

	/* Merged from per-thread entries, under the global lock. */
	uint64_t n[LS_PROF_NCOUNT];
	uint64_t wait_sum, wait_max, hold_sum, hold_max;
	uint64_t wait_h[LS_PROF_BUCKETS], hold_h[LS_PROF_BUCKETS];
};
_Static_assert(offsetof(struct grec, addr) == LS_CACHELINE, "hot line");

/* A loaded object, for (module, offset) names of addresses. */
struct prof_module {
	uintptr_t lo, hi; /* the span of its PT_LOAD segments */
	uintptr_t base;	  /* dlpi_addr: offset = address - base */
	const char *path;
};

/* The profiler's state, shared by both files. */
struct prof_state {
	/* configuration (fixed before main) */
	unsigned sample, frames, top;
	const char *out; /* LOCKSWAP_PROFILE_OUT or NULL */
	int err_fd;	 /* the report's stderr: a copy of fd 2 taken at start */
	bool csv;
	bool descendant; /* a process started by a profiled one (exec) */
	bool forked;	 /* a fork child of the profiled process */
	const char *algo, *wait;
	char exe[4096];
	/* runtime */
	uint64_t start_ns;
	int pid;
	struct grec *all, *all_tail;
	uint32_t nmutex, ncond;
	uint64_t threads;	     /* threads that recorded anything */
	_Atomic uint64_t unrecorded; /* events lost to a failed allocation */
	_Atomic uint64_t stackless;  /* stacks not taken (fork in progress, no libunwind) */
	struct prof_module *modules; /* PROF_MAX_MODULES, mapped when profiling */
	_Atomic unsigned nmodules;
	uintptr_t self_lo, self_hi; /* liblockswap.so's span */
	uintptr_t unw_lo, unw_hi;   /* libunwind's */
};
extern struct prof_state ls_prof;

/* The global lock: records, call sites, modules, the thread registry. Held
 * briefly, never across a call into libunwind or the program. */
void ls_prof_lock(void);
void ls_prof_unlock(void);
bool ls_prof_trylock(void);

/* Under the global lock: merges every thread's entries into the records
 * (the report's first step). */
void ls_prof_merge_all(void);
/* Refreshes the module table from dl_iterate_phdr (not from a signal
 * handler). */
void ls_prof_modules_refresh(void);
const struct prof_module *ls_prof_module_of(uintptr_t addr, unsigned *index);

/* Memory from mmap, never from the program's allocator. */
void *ls_prof_map(size_t size);
void ls_prof_unmap(void *p, size_t size);

/* profile_out.c: writes the report (stderr table, and the file of
 * LOCKSWAP_PROFILE_OUT). Once per process; `from_signal` means only
 * async-signal-safe work and a trylock of the global lock. */
void ls_prof_report(int from_signal);
/* fork child: the child may write its own report. */
void ls_prof_report_reset(void);

static inline unsigned prof_bucket(uint64_t ns)
{
	unsigned b = ns < 2 ? 0 : 63u - (unsigned)__builtin_clzll(ns);
	return b < LS_PROF_BUCKETS ? b : LS_PROF_BUCKETS - 1;
}

#endif
