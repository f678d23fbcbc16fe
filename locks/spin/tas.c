/*
 * tas.c - test-and-set spin lock.
 *
 * Herlihy & Shavit, The Art of Multiprocessor Programming, ch. 7, sections
 * 7.2-7.3 (Fig. 7.2, TASLock), ../shared/papers/004_c3117dc34b7d1b6f.txt.
 * Every attempt, including every step of the wait, is an unconditional
 * exchange on the one lock word; that is the point of this lock (the
 * baseline whose bus traffic 7.3 explains), so it is kept, with a pause
 * between attempts.
 *
 * Waiting policy. Under spin and yield the word is only 0 or HELD. Under park
 * a waiter whose spin and yield budgets are spent (ls_spin_step) sets
 * LS_PARKED (by exchanging in HELD|PARKED, which also acquires the lock if it
 * was free) and sleeps on the futex; unlock exchanges 0 in and wakes ONE sleeper if the bit was set.
 * As in Drepper's "Futexes are tricky" (mutex3), the woken thread takes the
 * bit over: from then on it acquires with HELD|PARKED, so its own unlock
 * wakes the next sleeper. Word encoding:
 *
 *	0		free
 *	HELD		held, no thread needs a wake-up
 *	HELD|PARKED	held, a thread may be asleep on the word
 *
 * Responsibility: the fast path's exchange of HELD can erase PARKED; the
 * thread that did so (it sees PARKED in the old value) becomes responsible
 * for it and acquires with HELD|PARKED. A thread that leaves with ETIMEDOUT
 * after parking or erasing the bit passes the wake-up on (one futex wake),
 * so no sleeper is stranded. trylock uses a CAS from 0, which erases nothing.
 * Native timeout: the futex wait takes the deadline. No queue nodes.
 *
 * After the release (lock.h): the exchange that frees the word is the last
 * access; a futex wake on its address may follow. Misuse: an unlock of a
 * free lock exchanges 0 for 0 (and wakes a sleeper if one marked the word,
 * which finds the lock free).
 */
#include <errno.h>
#include <stdatomic.h>

#include "lock.h"
#include "wait.h"

#define HELD 1u

struct tas {
	_Atomic uint32_t word;
};
_Static_assert(sizeof(struct tas) <= LS_INLINE_STATE, "inline state");

/* Slow path of lock (deadline 0) and timedlock. `old` is what the fast
 * path's exchange returned. */
static __attribute__((noinline)) int tas_wait(struct tas *l, uint32_t old, uint64_t deadline)
{
	uint32_t want = HELD | (old & LS_PARKED); /* erased the bit: carry it */
	struct ls_spin s = LS_SPIN_INIT;
	for (unsigned i = 1;; i++) {
		LS_INJECT();
		/* The clock costs ~20 ns: every 16th attempt while spinning,
		 * every attempt once the budget is spent. */
		if (deadline && ((i & 15) == 0 || s.n >= ls_wait_cfg.spin) && ls_now_ns() >= deadline)
			goto timeout;
		if (ls_spin_step(&s)) {
			/* Park: announce ourselves and test-and-set in one go. */
			want = HELD | LS_PARKED;
			/* acquire: pairs with the release exchange in tas_unlock */
			if (atomic_exchange_explicit(&l->word, want, memory_order_acquire) == 0)
				return 0;
			LS_INJECT();
			if (ls_futex_wait(&l->word, want, deadline) == ETIMEDOUT)
				goto timeout;
			continue;
		}
		/* acquire: pairs with the release exchange in tas_unlock */
		old = atomic_exchange_explicit(&l->word, want, memory_order_acquire);
		if (old == 0)
			return 0;
		want |= old & LS_PARKED;
	}
timeout:
	if (want & LS_PARKED)
		ls_futex_wake(&l->word, 1); /* we may hold the only wake-up: pass it on */
	return ETIMEDOUT;
}

static void tas_lock(void *state)
{
	struct tas *l = state;
	/* acquire: pairs with the release exchange in tas_unlock */
	uint32_t old = atomic_exchange_explicit(&l->word, HELD, memory_order_acquire);
	if (LS_LIKELY(old == 0))
		return;
	tas_wait(l, old, 0);
}

static int tas_timedlock(void *state, uint64_t deadline)
{
	struct tas *l = state;
	uint32_t old = atomic_exchange_explicit(&l->word, HELD, memory_order_acquire);
	if (old == 0)
		return 0;
	return tas_wait(l, old, deadline);
}

static int tas_trylock(void *state)
{
	struct tas *l = state;
	uint32_t zero = 0;
	/* acquire: pairs with the release exchange in tas_unlock */
	if (atomic_compare_exchange_strong_explicit(&l->word, &zero, HELD, memory_order_acquire,
						    memory_order_relaxed))
		return 0;
	return EBUSY;
}

static void tas_unlock(void *state)
{
	struct tas *l = state;
	/* release: pairs with the acquiring exchanges and CAS above */
	uint32_t old = atomic_exchange_explicit(&l->word, 0, memory_order_release);
	LS_TEST_POINT(LS_POINT_RELEASED);
	LS_INJECT();
	if (LS_UNLIKELY(old & LS_PARKED))
		ls_futex_wake(&l->word, 1);
}

static const struct ls_algo tas_algo = {
    .name = "tas",
    .desc = "test-and-set spin lock (Herlihy & Shavit AMP 7.2-7.3)",
    .caps = LS_CAP_TIMEOUT,
    .rank = 10,
    .state_size = sizeof(struct tas),
    .lock = tas_lock,
    .trylock = tas_trylock,
    .timedlock = tas_timedlock,
    .unlock = tas_unlock,
};
LS_REGISTER_ALGO(tas_algo);
