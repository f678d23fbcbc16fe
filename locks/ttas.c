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
 * Waiting policy. Under spin and yield the word is only 0 or HELD. Under park
 * a waiter whose spin and yield budgets are spent (ls_spin_step) sets
 * LS_PARKED with a CAS on the held word and sleeps on the futex; unlock
 * exchanges 0 in and wakes ONE sleeper if the bit was set (not all of them:
 * on an oversubscribed machine a herd of woken waiters costs more than the
 * lock). Word encoding:
 *
 *	0		free
 *	HELD		held, no thread needs a wake-up
 *	HELD|PARKED	held, a thread may be asleep on the word
 *
 * Responsibility (Drepper, "Futexes are tricky", mutex3): a thread that has
 * slept may have consumed the only wake-up, so from then on it acquires
 * with HELD|PARKED (its unlock then wakes the next sleeper), and if it
 * leaves with ETIMEDOUT it passes one wake-up on. Nothing ever clears
 * PARKED except unlock, which wakes. Native timeout: the futex wait takes
 * the deadline. No queue nodes.
 */
#include <errno.h>
#include <stdatomic.h>

#include "lock.h"
#include "wait.h"

#define HELD 1u

struct ttas {
	_Atomic uint32_t word;
};
_Static_assert(sizeof(struct ttas) <= LS_INLINE_STATE, "inline state");

static __attribute__((noinline)) int ttas_wait(struct ttas *l, uint64_t deadline)
{
	uint32_t want = HELD;
	struct ls_spin s = LS_SPIN_INIT;
	for (unsigned i = 1;; i++) {
		uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
		if (v == 0) {
			LS_INJECT();
			/* acquire: pairs with the release exchange in ttas_unlock */
			if (atomic_compare_exchange_strong_explicit(&l->word, &v, want, memory_order_acquire,
								    memory_order_relaxed))
				return 0;
			continue;
		}
		if (deadline && ((i & 15) == 0 || s.n >= ls_wait_cfg.spin) && ls_now_ns() >= deadline)
			goto timeout;
		if (ls_spin_step(&s)) {
			/* Park. The CAS orders us against unlock's exchange:
			 * either unlock sees PARKED and wakes, or we see 0. */
			if (!(v & LS_PARKED) &&
			    !atomic_compare_exchange_strong_explicit(
				&l->word, &v, v | LS_PARKED, memory_order_relaxed, memory_order_relaxed))
				continue;
			want = HELD | LS_PARKED;
			LS_INJECT();
			if (ls_futex_wait(&l->word, HELD | LS_PARKED, deadline) == ETIMEDOUT)
				goto timeout;
		}
	}
timeout:
	if (want & LS_PARKED)
		ls_futex_wake(&l->word, 1); /* we may hold the only wake-up: pass it on */
	return ETIMEDOUT;
}

static void ttas_lock(void *state)
{
	struct ttas *l = state;
	uint32_t zero = 0;
	/* acquire: pairs with the release exchange in ttas_unlock */
	if (LS_LIKELY(atomic_compare_exchange_strong_explicit(&l->word, &zero, HELD, memory_order_acquire,
							      memory_order_relaxed)))
		return;
	ttas_wait(l, 0);
}

static int ttas_timedlock(void *state, uint64_t deadline)
{
	struct ttas *l = state;
	uint32_t zero = 0;
	if (atomic_compare_exchange_strong_explicit(&l->word, &zero, HELD, memory_order_acquire,
						    memory_order_relaxed))
		return 0;
	return ttas_wait(l, deadline);
}

static int ttas_trylock(void *state)
{
	struct ttas *l = state;
	uint32_t zero = 0;
	if (atomic_compare_exchange_strong_explicit(&l->word, &zero, HELD, memory_order_acquire,
						    memory_order_relaxed))
		return 0;
	return EBUSY;
}

static void ttas_unlock(void *state)
{
	struct ttas *l = state;
	/* release: pairs with the acquiring CAS in lock, trylock, ttas_wait */
	uint32_t old = atomic_exchange_explicit(&l->word, 0, memory_order_release);
	LS_INJECT();
	if (LS_UNLIKELY(old & LS_PARKED))
		ls_futex_wake(&l->word, 1);
}

static const struct ls_algo ttas_algo = {
    .name = "ttas",
    .desc = "test-and-test-and-set spin lock (Herlihy & Shavit AMP 7.3)",
    .caps = LS_CAP_TIMEOUT,
    .rank = 11,
    .state_size = sizeof(struct ttas),
    .lock = ttas_lock,
    .trylock = ttas_trylock,
    .timedlock = ttas_timedlock,
    .unlock = ttas_unlock,
};
LS_REGISTER_ALGO(ttas_algo);
