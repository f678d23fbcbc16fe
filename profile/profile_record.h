/*
 * profile_record.h - the profiler's recording layer, as the layers above it
 * see it: the records it keeps and its state (profile_state.h), its memory
 * (profile_base.h), the modules that name frames (profile_modules.h), and
 * the calls that install it, start it (profile_record.c) and hand its
 * records to a writer at exit (profile_process.h). See profile_record.c
 * for the design.
 *
 * Layers, each using only those below it (files on one line use none of
 * each other):
 *	profile.c		the options, and ls_observe_install (observe.h)
 *	profile_out.c		the report: records -> rows -> stderr, JSON, CSV
 *	profile_table.c, profile_json.c, profile_csv.c
 *				the renderings of rows (also in lockswap report;
 *				profile_table.h draws their layers)
 *	profile_record.c	recording: installs the files below, starts them
 *	profile_process.c	the moments of exit (which call the writer
 *				registered here) and fork
 *	profile_cond.c		the wrappers of condvars
 *	profile_mutex.c, profile_rwlock.c, profile_spin.c
 *				the wrappers of mutexes, rwlocks, spinlocks
 *	profile_event.c		what an acquisition, a release, a wait records
 *	profile_thread.c	per-thread tables
 *	profile_records.c	records, a lock's life, call sites
 *	profile_modules.c	modules and stacks
 *	profile_base.c		memory, the profiler's locks, the per-thread
 *				guard, the clock; the state (ls_prof)
 *	profile_state.h, profile_counts.h
 *				what is recorded, what is counted (shared by
 *				recording and renderings)
 */
#ifndef LS_PROFILE_RECORD_H
#define LS_PROFILE_RECORD_H

#include <stddef.h>

#include "observe.h"
#include "profile_base.h"
#include "profile_counts.h"
#include "profile_modules.h"
#include "profile_process.h"
#include "profile_state.h"

/* profile.c, once configured: wraps the shim's operations and sets its
 * event hooks in ob (observe.h), and maps the tables. 0, or -1 with one
 * line in err. */
int ls_prof_record_install(struct ls_observe *ob, char *err, size_t errlen);
/* After the shim's initialisation (may dlopen, allocate, lock): loads
 * libunwind, and sets up thread exit, fork and the fatal signals. 0, or -1
 * with one line in err. */
int ls_prof_record_start(char *err, size_t errlen);

#endif
