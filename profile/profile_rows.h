/*
 * profile_rows.h - a profile as rows: what the library builds from its
 * records (profile_out.c) and `lockswap report` reads back from the JSON,
 * and their order (profile_rows.c). Every rendering (profile_table.h)
 * prints these.
 */
#ifndef LS_PROFILE_ROWS_H
#define LS_PROFILE_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "profile_counts.h"
#include "profile_frames.h"

struct ls_prof_site {
	uint64_t count, timeouts, wait_ns;
	unsigned stack; /* index into the stack table */
	bool read;	/* an rwlock's read acquisitions (else its writes, or a mutex's) */
};

struct ls_prof_row {
	unsigned id;
	bool cond, rwlock, spin; /* else a mutex */
	bool glibc;		 /* went to glibc (passthrough, process-shared, robust, PI, PP) */
	const char *type;	 /* "normal", "recursive", ..., with "+robust" etc.; "cond"; "rwlock",
				  * "rwlock+writer" (the _NP writer-preferring kind), "+pshared"; "spin" */
	const char *origin;	 /* "init" or "first-use" */
	const char *ended;	 /* "", "destroyed" or "reused" */
	const char *algo;	 /* under an algorithm map: the mutex's algorithm, else NULL (the head's) */
	const char *rule;	 /* ... and the rule that chose it (as written, or "(default)") */
	uint64_t address;
	unsigned stack;		    /* where it was created: index into the stack table, or NONE */
	uint64_t n[LS_PROF_NCOUNT]; /* an rwlock's writes in the mutex slots, reads in LS_PROF_RD* */
	uint64_t max_waiters, wait_ns, wait_max, hold_ns, hold_max;
	uint64_t rd_wait_ns, rd_hold_ns; /* an rwlock's reads: their part of wait_ns, hold_ns */
	const uint64_t *wait_h, *hold_h; /* LS_PROF_BUCKETS each, or NULL: all zero */
	struct ls_prof_site *sites;	 /* by wait time, then count, descending */
	unsigned nsites;
};
#define LS_PROF_NO_STACK 0xffffffffu

struct ls_prof_head {
	int pid;
	const char *program, *algo, *wait;
	const char *rwalgo, *spinalgo; /* NULL in a profile saved before they were */
	uint64_t duration_ns, threads, unrecorded, stackless;
	unsigned cpus; /* the CPUs the program could run on (0: not saved, older profiles) */
	unsigned sample, frames, nmutex, ncond, nrwlock, nspin; /* nmutex...: rows */
};

struct ls_prof {
	struct ls_prof_head h;
	struct ls_prof_row *mutex, *cond, *rwlock, *spin;
	const struct ls_prof_stack *stacks;
	unsigned nstacks;
};

/* Acquisitions: an rwlock's reads and writes. */
static inline uint64_t ls_prof_acquired(const struct ls_prof_row *r)
{
	return r->n[LS_PROF_LOCK] + r->n[LS_PROF_TRY] + r->n[LS_PROF_TIMED] + r->n[LS_PROF_RDLOCK] +
	       r->n[LS_PROF_RDTRY] + r->n[LS_PROF_RDTIMED];
}

/* Acquisitions that waited and timed attempts that timed out. */
static inline uint64_t ls_prof_waits(const struct ls_prof_row *r)
{
	return r->n[LS_PROF_CONTENDED] + r->n[LS_PROF_TIMEOUT] + r->n[LS_PROF_RDCONTENDED] +
	       r->n[LS_PROF_RDTIMEOUT];
}

/* Sorts rows in place, descending: key 0 wait, 1 hold, 2 contended, 3
 * acquisitions (ties by id, ascending). Also sorts each row's sites. */
enum { LS_SORT_WAIT, LS_SORT_HOLD, LS_SORT_CONTENDED, LS_SORT_ACQUIRED };
void ls_prof_sort(struct ls_prof_row *rows, unsigned n, int key);

#endif
