/*
 * ttas.c - test-and-test-and-set spin lock.
 *
 * Herlihy & Shavit, The Art of Multiprocessor Programming, ch. 7, sections
 * 7.2-7.3 (Fig. 7.3, TTASLock), ../shared/papers/004_c3117dc34b7d1b6f.txt.
 * A waiter reads the word until it looks free (local spinning in its own
 * cache, 7.3) and only then tries to take it. The "test-and-set" is a CAS
 * from 0: it fails exactly when the exchange of Fig. 7.3 would have returned
 * true, and it never overwrites a parked bit.
 *
 * The word protocol and the waiting loop (spin / yield / park, native
 * timeout through the futex deadline) are in ttas_word.h, shared with
 * backoff.c. No queue nodes.
 *
 * After the release and misuse (lock.h): ttas_word.h's.
 */
#include "lock.h"
#include "ttas_word.h"

static __attribute__((noinline)) int ttas_wait(struct ls_ttas *l, uint64_t deadline)
{
	return ls_ttas_wait(l, deadline, NULL, 0);
}

static void ttas_lock(void *state)
{
	if (LS_LIKELY(ls_ttas_try(state)))
		return;
	ttas_wait(state, 0);
}

static int ttas_timedlock(void *state, uint64_t deadline)
{
	return ls_ttas_try(state) ? 0 : ttas_wait(state, deadline);
}

static int ttas_trylock(void *state)
{
	return ls_ttas_try(state) ? 0 : EBUSY;
}

static void ttas_unlock(void *state)
{
	ls_ttas_release(state);
}

static const struct ls_algo ttas_algo = {
    .name = "ttas",
    .desc = "test-and-test-and-set spin lock (Herlihy & Shavit AMP 7.3)",
    .caps = LS_CAP_TIMEOUT,
    .rank = 11,
    .state_size = sizeof(struct ls_ttas),
    .lock = ttas_lock,
    .trylock = ttas_trylock,
    .timedlock = ttas_timedlock,
    .unlock = ttas_unlock,
};
LS_REGISTER_ALGO(ttas_algo);
