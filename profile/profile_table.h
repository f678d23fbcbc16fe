/*
 * profile_table.h - the table of a profile, one of its three renderings
 * (the table on stderr, JSON: profile_json.h, CSV: profile_csv.h), shared
 * by the library (at exit, from _exit or a fatal signal: so no stdio, no
 * malloc, nothing but write(2)) and by `lockswap report` (which reads the
 * JSON back into rows).
 *
 * Layers of the renderings, each using only those below it:
 *	profile_table.c, profile_json.c, profile_csv.c	the renderings
 *	profile_rows.c		a profile as rows, and their order
 *	profile_frames.c	frames: symbols, the naming frame, a frame printed
 *	profile_print.c		buffered output by write(2), number formats
 *	profile_counts.h	what is counted
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

#endif
