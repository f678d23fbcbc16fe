/*
 * profile_record.h - the profiler's recording layer (profile_record.c), as
 * the layers above it see it: the records it keeps, its state, and the
 * calls that install it, start it and hand its records to a writer at exit.
 * See profile_record.c for the design.
 *
 * Layers, each using only those below it:
 *	profile.c		the options, and ls_observe_install (observe.h)
 *	profile_out.c		the report: records -> rows -> stderr, JSON, CSV
 *	profile_table.c		the renderings of rows (also in lockswap report)
 *	profile_record.c	recording: the wrappers, records, per-thread
 *				tables, stacks, modules, fork, and the moments
 *				of exit (which call the writer registered here)
 *	profile_counts.h	what is counted (shared by recording and tables)
 */
#ifndef LS_PROFILE_RECORD_H
#define LS_PROFILE_RECORD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"
#include "observe.h"
#include "profile_base.h"
#include "profile_counts.h"
#include "profile_modules.h"
#include "profile_state.h"

/* profile.c, once configured: wraps the shim's operations and sets its
 * event hooks in ob (observe.h), and maps the tables. 0, or -1 with one
 * line in err. */
int ls_prof_record_install(struct ls_observe *ob, char *err, size_t errlen);
/* After the shim's initialisation (may dlopen, allocate, lock): loads
 * libunwind, and sets up thread exit, fork and the fatal signals. 0, or -1
 * with one line in err. */
int ls_prof_record_start(char *err, size_t errlen);

/* The report. Once per process (at exit, _exit/_Exit or a fatal signal;
 * a fork child again for its own), recording collects: it takes the global
 * lock (from _exit or a signal only tries it, for a bounded time, and says
 * so if it cannot), merges every thread's counts into the records, and
 * calls `write`, which reads the records under the lock and may do
 * async-signal-safe work only. Registered once, at install. */
void ls_prof_at_exit(void (*write)(void));

#endif
