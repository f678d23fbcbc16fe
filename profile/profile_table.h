/*
 * profile_table.h - a profile as rows, and its three renderings (the table
 * on stderr, JSON, CSV), shared by the library (at exit, from _exit or a
 * fatal signal: so no stdio, no malloc, nothing but write(2)) and by
 * `lockswap report` (which reads the JSON back into rows).
 *
 * The JSON is the saved profile; its fields are the rows' below, and
 * `lockswap report` reads exactly what ls_prof_json writes.
 */
#ifndef LS_PROFILE_TABLE_H
#define LS_PROFILE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile_counts.h"
#include "profile_frames.h"
#include "profile_print.h"
#include "profile_rows.h"

/* The table: header, the first `top` mutexes (as sorted) with up to
 * `sites` call sites each, then the condvars, the rwlocks and the
 * spinlocks. detail: histograms and every call site. */
void ls_prof_table(struct ls_out *o, const struct ls_prof *p, unsigned top, unsigned sites, bool detail);
void ls_prof_json(struct ls_out *o, const struct ls_prof *p);
/* The JSON's names of the counters n[]: a mutex's (and a spinlock's), a
 * condvar's, an rwlock's (its writes, then its reads). */
extern const char *const ls_prof_mutex_counts[LS_PROF_NMUTEX];
extern const char *const ls_prof_cond_counts[4];
extern const char *const ls_prof_rw_counts[LS_PROF_NCOUNT];
void ls_prof_csv(struct ls_out *o, const struct ls_prof *p);

#endif
