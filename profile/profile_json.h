/*
 * profile_json.h - a profile as JSON: the saved profile. Its fields are the
 * rows' (profile_rows.h), and `lockswap report` reads exactly what
 * ls_prof_json writes.
 */
#ifndef LS_PROFILE_JSON_H
#define LS_PROFILE_JSON_H

#include "profile_counts.h"
#include "profile_print.h"
#include "profile_rows.h"

void ls_prof_json(struct ls_out *o, const struct ls_prof *p);
/* The JSON's names of the counters n[]: a mutex's (and a spinlock's), a
 * condvar's, an rwlock's (its writes, then its reads). */
extern const char *const ls_prof_mutex_counts[LS_PROF_NMUTEX];
extern const char *const ls_prof_cond_counts[4];
extern const char *const ls_prof_rw_counts[LS_PROF_NCOUNT];

#endif
