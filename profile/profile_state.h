/*
 * profile_state.h - what the recording layer keeps (definitions only): the
 * records of the locks it has seen, their call sites, the loaded modules
 * that name their frames, and the profiler's state (ls_prof, defined in
 * profile_base.c). Read by every file of the recording layer and by the
 * report (profile_out.c).
 */
#ifndef LS_PROFILE_STATE_H
#define LS_PROFILE_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"
#include "profile_counts.h"

#define PROF_MAX_FRAMES 64 /* LOCKSWAP_PROFILE_FRAMES at most */
#define PROF_MAX_MODULES 1024

enum { PK_MUTEX, PK_COND, PK_RWLOCK, PK_SPIN };

/* Counters: LS_PROF_LOCK... (profile_counts.h). */

enum { END_NONE, END_DESTROYED, END_REUSED };
enum { ORIGIN_FIRST_USE, ORIGIN_INIT };

struct grec;

/* A call site of one record: the stack of contended acquisitions (and
 * timeouts) taken from it. Frames are return addresses. */
struct gsite {
	struct gsite *next_hash, *next_rec;
	struct grec *g;
	uint32_t hash, nframes;
	bool read; /* an rwlock's read acquisitions (else writes, or a mutex's) */
	uint64_t count, timeouts, wait_ns;
	uintptr_t frames[];
};

/* One mutex, condvar, rwlock or spinlock, from its creation (init, or first
 * use) to its destroy or re-initialisation. Records are never freed. An
 * rwlock's hot line is its writers' (readers write nothing shared). */
struct grec {
	/* Written by whoever holds the mutex: hand-offs and hold time. The
	 * mutex orders these accesses (they are atomics only so that the
	 * report may read them at any time). */
	_Atomic uint64_t last;	     /* serial of the last acquiring thread, 0 none */
	_Atomic uint64_t held_since; /* ns of the current acquisition, 0 if not held */
	/* Contended path only. */
	_Atomic uint32_t waiters, max_waiters;
	_Atomic uint8_t dead; /* ended: per-thread entries must move on */
	uint8_t kind;	      /* PK_MUTEX, ...: read with dead on every use */
	char pad_hot[LS_CACHELINE - 2 * 8 - 2 * 4 - 2];

	/* Set at creation (under the global lock), read-only after. */
	uintptr_t addr;
	uint32_t id;
	uint8_t glibc, origin, ended;
	bool internal; /* libunwind's own (created from inside it): not reported */
	int32_t mkind; /* __kind of the mutex when first seen (glibc's meaning); an
			* rwlock's __flags, plus RW_PSHARED if process-shared */
	int32_t pid;   /* the process that created it (a fork child inherits records) */
	uint32_t norigin;
	uintptr_t *origin_frames;
	const char *algo, *rule; /* under a map (observe.h), else NULL */
	struct grec *next_all;
	struct gsite *sites;

	/* Merged from per-thread entries, under the global lock. */
	uint64_t n[LS_PROF_NCOUNT];
	uint64_t wait_sum, wait_max, hold_sum, hold_max;
	uint64_t rd_wait_sum, rd_hold_sum; /* an rwlock's reads: their part of the sums */
	uint64_t wait_h[LS_PROF_BUCKETS], hold_h[LS_PROF_BUCKETS];
};
#define RW_PSHARED 0x100
_Static_assert(offsetof(struct grec, addr) == LS_CACHELINE, "hot line");

/* A loaded object, for (module, offset) names of addresses. */
struct prof_module {
	uintptr_t lo, hi; /* the span of its PT_LOAD segments */
	uintptr_t base;	  /* dlpi_addr: offset = address - base */
	const char *path;
};

/* The profiler's state. */
struct prof_state {
	/* configuration (set by profile.c before ls_prof_record_install) */
	unsigned sample, frames, top;
	const char *out; /* LOCKSWAP_PROFILE_OUT or NULL */
	int err_fd;	 /* the report's stderr: a copy of fd 2 taken at start */
	bool csv;
	bool descendant; /* a process started by a profiled one (exec) */
	bool forked;	 /* a fork child of the profiled process */
	/* from the shim (ls_prof_record_install) and at start */
	const char *algo, *wait, *rwalgo, *spinalgo;
	bool passthrough;      /* every mutex and condvar is glibc's */
	bool rw_passthrough;   /* every rwlock is glibc's */
	bool spin_passthrough; /* every spinlock is glibc's */
	char exe[4096];
	unsigned cpus; /* in the affinity mask at start */
	/* runtime */
	uint64_t start_ns;
	int pid;
	struct grec *all, *all_tail;
	uint32_t nmutex, ncond, nrwlock, nspin;
	uint64_t threads;	     /* threads that recorded anything */
	_Atomic uint64_t unrecorded; /* events lost to a failed allocation */
	_Atomic uint64_t stackless;  /* stacks not taken (fork in progress, no libunwind) */
	struct prof_module *modules; /* PROF_MAX_MODULES, mapped when profiling */
	_Atomic unsigned nmodules;
};
extern struct prof_state ls_prof __attribute__((visibility("hidden")));

extern bool ls_prof_on __attribute__((visibility("hidden"))); /* installed */

#endif
