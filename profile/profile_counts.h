/*
 * profile_counts.h - what the profiler counts, per mutex or condvar: the
 * vocabulary shared by the recording layer (profile_record.c), which
 * counts, and the renderings (profile_table.c), which print the counts.
 * Definitions only, no code.
 */
#ifndef LS_PROFILE_COUNTS_H
#define LS_PROFILE_COUNTS_H

/* Wait and hold histograms: bucket b holds [2^b, 2^(b+1)) ns; the last,
 * >= 2^31 ns. */
#define LS_PROF_BUCKETS 32

/* A mutex's counters. A contended acquisition counts in its kind (LOCK,
 * TRY, TIMED) and in CONTENDED; HANDOFF counts acquisitions by another
 * thread than the previous one. */
enum {
	LS_PROF_LOCK,
	LS_PROF_TRY,
	LS_PROF_TIMED,
	LS_PROF_CONTENDED,
	LS_PROF_TRYFAIL,
	LS_PROF_TIMEOUT,
	LS_PROF_HANDOFF,
	LS_PROF_NCOUNT
};
/* A condvar's, in the same slots. */
enum { LS_PROF_WAITS = 0, LS_PROF_CTIMEOUT = 1, LS_PROF_SIGNAL = 2, LS_PROF_BROADCAST = 3 };

#endif
