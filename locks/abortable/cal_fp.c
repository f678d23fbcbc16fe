/*
 * cal_fp.c - composite abortable lock with the fast path.
 *
 * Marathe, Moir & Shavit, "Composite Abortable Locks", IPDPS 2006,
 * ../shared/papers/003_fcd6877fde719c1f.txt, section 3.2 ("An Important
 * Optimization"), and Herlihy & Shavit, AMP section 7.7.1
 * (CompositeFastPathLock, Figs. 7.25-7.26),
 * ../shared/papers/004_c3117dc34b7d1b6f.txt.
 *
 * cal (cal.c) plus a FASTPATH bit in the tail word: a thread that finds the
 * queue empty (tail NULL, or the tail node released, or aborted with no
 * predecessor, as 003 3.2 resets it) takes the lock with one CAS that sets
 * the bit, like a test-and-set lock, and releases with a CAS that clears
 * it. Under contention threads queue as in cal; the head of the queue
 * enters only once the bit is clear, waiting for it with its patience (AMP
 * waits without a deadline; 003 counts it as part of the attempt, which is
 * what a timed lock needs). The core is in composite.h.
 *
 * trylock is the fast path, then EBUSY if the lock is visibly held, then one
 * attempt with zero patience.
 *
 * After the release and misuse (lock.h): composite.h's (the fast path's
 * release is one CAS of the tail, which also tells whether the head of
 * the queue sleeps on it; an unlock of a free lock finds FP clear).
 */
#include "composite.h"

static void cal_fp_lock(void *state)
{
	cal_op_lock(state, true);
}

static int cal_fp_timedlock(void *state, uint64_t deadline_ns)
{
	return cal_op_timedlock(state, deadline_ns, true);
}

static int cal_fp_try(void *state)
{
	return cal_op_trylock(state, true);
}

static void cal_fp_unlock(void *state)
{
	cal_op_unlock(state, true);
}

static const struct ls_algo cal_fp_algo = {
    .name = "cal-fp",
    .desc =
	"composite abortable lock with TAS-like fast path (Marathe, Moir & Shavit IPDPS'06 3.2; AMP 7.7.1)",
    .caps = LS_CAP_TIMEOUT,
    .rank = 47,
    .state_size = sizeof(struct cal),
    .params = cal_params,
    .lock = cal_fp_lock,
    .trylock = cal_fp_try,
    .timedlock = cal_fp_timedlock,
    .unlock = cal_fp_unlock,
};
LS_REGISTER_ALGO(cal_fp_algo);
