/*
 * profile_process.h - the moments of the process for the recording layer
 * (profile_process.c): its end (exit, _exit/_Exit, a fatal signal), when
 * the report is written, and fork, after which a child records its own
 * activity. Above the per-thread tables, whose counts the report merges.
 */
#ifndef LS_PROFILE_PROCESS_H
#define LS_PROFILE_PROCESS_H

struct ls_observe;

/* The report. Once per process (at exit, _exit/_Exit or a fatal signal;
 * a fork child again for its own), recording collects: it takes the global
 * lock (from _exit or a signal only tries it, for a bounded time, and says
 * so if it cannot), merges every thread's counts into the records, and
 * calls `write`, which reads the records under the lock and may do
 * async-signal-safe work only. Registered once, at install. */
void ls_prof_at_exit(void (*write)(void));

/* At install: the _exit/_Exit hook (observe.h). */
void ls_prof_process_install(struct ls_observe *ob);
/* At start (may allocate): the fork handlers, and the handler of each
 * fatal signal whose disposition is the default. */
void ls_prof_process_start(void);

#endif
