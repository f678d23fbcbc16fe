/*
 * cal.c - composite abortable lock (CLH-based CAL).
 *
 * Marathe, Moir & Shavit, "Composite Abortable Locks", IPDPS 2006,
 * ../shared/papers/003_fcd6877fde719c1f.txt, sections 3 and 3.1 (Figs. 1-2),
 * and Herlihy & Shavit, AMP section 7.7 (CompositeLock),
 * ../shared/papers/004_c3117dc34b7d1b6f.txt.
 *
 * Each lock has a fixed array of C nodes (LOCKSWAP_CAL_NODES, default 4, as
 * in the paper's experiments). A thread picks a node at random and takes it
 * with a CAS, backing off (exponentially, randomly) while it is in use; it
 * then splices the node into a CLH queue through a version-tagged tail and
 * spins on its predecessor, which it names only in a local variable.
 * Aborting before owning a node costs nothing; aborting while queued is
 * one store (state A plus the predecessor), and the successor cleans up.
 * O(L) space, no memory management, non-blocking aborts; not FIFO (the
 * backed-off threads race).
 *
 * The shared core (node states, transitions, who frees, the tail word and
 * its ABA protection on x86-64) is in composite.h, with cal_fp.c.
 * State lives out of line (C nodes of one cache line each, up to 16).
 * lock() is an attempt with infinite patience; trylock is EBUSY when the
 * tail node is held or queued, else one attempt with zero patience.
 *
 * After the release and misuse (lock.h): composite.h's (the store of R
 * into the holder's node is the last access; the holder field is cleared
 * before it, so an unlock of a free lock finds 0 and returns).
 */
#include "composite.h"

static void cal_lock(void *state)
{
	cal_op_lock(state, false);
}

static int cal_timedlock(void *state, uint64_t deadline_ns)
{
	return cal_op_timedlock(state, deadline_ns, false);
}

static int cal_try(void *state)
{
	return cal_op_trylock(state, false);
}

static void cal_unlock(void *state)
{
	cal_op_unlock(state, false);
}

static const struct ls_algo cal_algo = {
    .name = "cal",
    .desc = "composite abortable lock, C nodes + backoff (Marathe, Moir & Shavit IPDPS'06 3-3.1; AMP 7.7)",
    .caps = LS_CAP_TIMEOUT,
    .rank = 46,
    .state_size = sizeof(struct cal),
    .params = cal_params,
    .lock = cal_lock,
    .trylock = cal_try,
    .timedlock = cal_timedlock,
    .unlock = cal_unlock,
};
LS_REGISTER_ALGO(cal_algo);
