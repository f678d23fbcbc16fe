/*
 * profile_csv.h - a profile as CSV: a row per mutex, condvar, rwlock and
 * spinlock, each followed by a row per call site (record "site").
 */
#ifndef LS_PROFILE_CSV_H
#define LS_PROFILE_CSV_H

#include "profile_frames.h"
#include "profile_print.h"
#include "profile_rows.h"

void ls_prof_csv(struct ls_out *o, const struct ls_prof *p);

#endif
