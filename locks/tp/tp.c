/*
 * tp.c - the thresholds of the time-published locks (tp.h), with their
 * defaults. TR 867 (../shared/papers/000_9c294dcad948dd76.txt), appendices
 * B.2.1/B.3.1 define MAXIMUM_CS_TIME, UPDATE_DELAY and MAX_THREAD_NUM.
 *
 * Defaults, from the measurements in locks/common/tpclock.c:
 *   UPDATE_DELAY 50 us: above all but ~1 in 10^7 of a running waiter's
 *     publishing gaps, 30x below the shortest preemptions; far above the
 *     round trip plus skew of A.2's footnote (~2 us). A waiter publishes
 *     every UPDATE_DELAY/8 (the line is read by its successor).
 *   MAXIMUM_CS_TIME 100 us: 2 x UPDATE_DELAY (a critical section cannot be
 *     judged at a finer grain than a waiter's liveness), 100x the
 *     microbenchmark's critical sections, 15x below the shortest
 *     preemption, so a holder preempted for a slice is seen within 7% of it.
 *   patience 50 us (the paper's): each attempt of a blocking lock() lasts
 *     50 us, then the waiter checks the holder (and yields if it is
 *     stalled) and tries again. Measured (results/tp, blocking.png: 16
 *     threads, synthetic scheduler): mcs-tp 645k acq/s at 50 us against
 *     455k at 200 us and 247k at 5 ms (a waiter behind a stalled holder
 *     spins less before it yields); clh-tp flat (1.04-1.26M) from 20 us to
 *     5 ms; without preemption and with load, 50 us is 10-25% better than
 *     200 us for mcs-tp and equal for clh-tp. With patience = UPDATE_DELAY
 *     a clh-tp waiter publishes only at enqueue (A.2: it stops publishing
 *     UPDATE_DELAY before its patience ends), so it is removable just when
 *     it would time out anyway.
 *   MAX_THREAD_NUM 64: the paper's "approximate maximum number of threads":
 *     a holder removes up to 64 skipped nodes eagerly before it scans;
 *     beyond the 16 threads measured, small enough to bound the scan.
 */
#include "tp.h"

uint64_t ls_tp_max_cs_ns = 100000;
uint64_t ls_tp_update_delay_ns = 50000;
uint64_t ls_tp_patience_ns = 50000;
/* Under yield and park a waiter that yields stops publishing and is soon
 * passed over (by the paper's rule), then re-queues: with the policy's
 * budget of 256 steps (a few us here) the TP locks fell to 0.01-0.15x glibc
 * at 4-16 threads on 2 CPUs under park; 16x (4096 steps) keeps waiters live
 * through a hand-off (results/oversub/quiet/README.md). */
uint64_t ls_tp_spin_factor = 16;
