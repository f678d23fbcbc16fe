/*
 * backoff.c - test-and-test-and-set lock with randomised exponential backoff.
 *
 * Herlihy & Shavit, The Art of Multiprocessor Programming, ch. 7, section
 * 7.4 (Fig. 7.5 Backoff, Fig. 7.6 BackoffLock),
 * ../shared/papers/004_c3117dc34b7d1b6f.txt. As in ttas.c, but a thread that
 * saw the lock free and then lost the race for it (the sign of high
 * contention, 7.4) backs off for a random time in [0, limit) and doubles
 * limit, from LOCKSWAP_BACKOFF_MIN up to LOCKSWAP_BACKOFF_MAX nanoseconds.
 * Seeing the lock held is no sign of contention and causes no back-off.
 *
 * Defaults. MIN = 100 ns: about one cache-line transfer between cores, the
 * cost of the retry itself; shorter delays are lost in its noise (the "it
 * makes no sense to back off for too short a duration" of 7.4). MAX =
 * 10000 ns: a few short critical sections plus a hand-off; longer delays
 * leave the lock idle (7.5's "critical section underutilization"), and a
 * waiter that keeps losing for that long is better off asleep, which the
 * park policy does. The back-off limit is per acquisition attempt (Fig.
 * 7.6 makes a new Backoff per lock()). A MAX below MIN means "no growth".
 *
 * Waiting policy. The word and its parked-bit protocol are ttas.c's (in
 * ttas_word.h, shared): 0 free, HELD, HELD|PARKED; a sleeper is woken one at a time and
 * then acquires with HELD|PARKED. Each pause of a back-off is a step of the
 * waiting policy (ls_spin_step), so backing off spends the same spin budget
 * as spinning on the word; under park a waiter whose spin and yield budgets
 * are spent stops backing off and sleeps the next time it sees the lock held. Native
 * timeout. No queue nodes.
 *
 * After the release and misuse (lock.h): ttas_word.h's.
 */
#include <errno.h>
#include <stdatomic.h>

#include "lock.h"
#include "ttas_word.h"
#include "wait.h"

static uint64_t min_delay = 100, max_delay = 10000;

static const struct ls_param backoff_params[] = {
    {"LOCKSWAP_BACKOFF_MIN", "initial back-off limit after a lost race, in ns", &min_delay, 1, 1000000000},
    {"LOCKSWAP_BACKOFF_MAX", "largest back-off limit (doubling stops there), in ns", &max_delay, 1,
     1000000000},
    {0},
};

/* Backs off for a random time below *limit ns, then doubles *limit (up to
 * max_delay). Returns true if the budgets ran out under park. */
static bool back_off(struct ls_spin *s, uint64_t *limit)
{
	return ls_backoff(s, limit, max_delay, 0);
}

static void lost_race(struct ls_spin *s, uint64_t *limit)
{
	back_off(s, limit);
}

static __attribute__((noinline)) int backoff_wait(struct ls_ttas *l, uint64_t deadline)
{
	return ls_ttas_wait(l, deadline, lost_race, min_delay);
}

static void backoff_lock(void *state)
{
	if (LS_LIKELY(ls_ttas_try(state)))
		return;
	backoff_wait(state, 0);
}

static int backoff_timedlock(void *state, uint64_t deadline)
{
	return ls_ttas_try(state) ? 0 : backoff_wait(state, deadline);
}

static int backoff_trylock(void *state)
{
	return ls_ttas_try(state) ? 0 : EBUSY;
}

static void backoff_unlock(void *state)
{
	ls_ttas_release(state);
}

static const struct ls_algo backoff_algo = {
    .name = "backoff",
    .desc = "TTAS with randomised exponential backoff (Herlihy & Shavit AMP 7.4)",
    .caps = LS_CAP_TIMEOUT,
    .rank = 12,
    .state_size = sizeof(struct ls_ttas),
    .params = backoff_params,
    .lock = backoff_lock,
    .trylock = backoff_trylock,
    .timedlock = backoff_timedlock,
    .unlock = backoff_unlock,
};
LS_REGISTER_ALGO(backoff_algo);
