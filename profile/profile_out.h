/*
 * profile_out.h - the profiler's report (profile_out.c), above the
 * recording layer: profile.c registers ls_prof_write with ls_prof_at_exit.
 */
#ifndef LS_PROFILE_OUT_H
#define LS_PROFILE_OUT_H

/* Writes the report from the records (the stderr table unless
 * LOCKSWAP_PROFILE_TOP=0, and the file of LOCKSWAP_PROFILE_OUT). Called by
 * the recording layer once per process, under its global lock with the
 * counts merged: async-signal-safe work only. */
void ls_prof_write(void);

#endif
