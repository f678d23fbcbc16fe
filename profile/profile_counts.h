/*
 * profile_counts.h - what the profiler counts, per mutex or condvar: the
 * vocabulary shared by the recording layer (profile_record.h), which
 * counts, and the renderings (profile_table.h), which print the counts.
 * Definitions only, no code.
 */
#ifndef LS_PROFILE_COUNTS_H
#define LS_PROFILE_COUNTS_H

/* Wait and hold histograms: bucket b holds [2^b, 2^(b+1)) ns; the last,
 * >= 2^31 ns. */
#define LS_PROF_BUCKETS 32

/* A mutex's (and a spinlock's) counters. A contended acquisition counts in
 * its kind (LOCK, TRY, TIMED) and in CONTENDED; HANDOFF counts acquisitions
 * by another thread than the previous one. An rwlock's write acquisitions
 * count in the same slots (HANDOFF: by another thread than the previous
 * writer), its reads in the RD ones. */
enum {
	LS_PROF_LOCK,
	LS_PROF_TRY,
	LS_PROF_TIMED,
	LS_PROF_CONTENDED,
	LS_PROF_TRYFAIL,
	LS_PROF_TIMEOUT,
	LS_PROF_HANDOFF,
	LS_PROF_NMUTEX, /* a mutex's are the ones above */
	LS_PROF_RDLOCK = LS_PROF_NMUTEX,
	LS_PROF_RDTRY,
	LS_PROF_RDTIMED,
	LS_PROF_RDCONTENDED,
	LS_PROF_RDTRYFAIL,
	LS_PROF_RDTIMEOUT,
	LS_PROF_NCOUNT
};
/* The read counterpart of a write counter (LOCK..TIMEOUT). */
#define LS_PROF_READ(c) ((c) + LS_PROF_RDLOCK)
/* A condvar's, in the same slots. */
enum { LS_PROF_WAITS = 0, LS_PROF_CTIMEOUT = 1, LS_PROF_SIGNAL = 2, LS_PROF_BROADCAST = 3 };

#endif
