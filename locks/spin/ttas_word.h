/*
 * ttas_word.h - the lock word that ttas.c and backoff.c share: both are
 * AMP's TTASLock (7.3), backoff adding exponential back-off after a lost
 * race (7.4). Only the waiting loop's reaction to a lost race differs, so
 * the word protocol lives here once. Word encoding:
 *
 *	0		free
 *	HELD		held, no thread needs a wake-up
 *	HELD|PARKED	held, a thread may be asleep on the word
 *
 * A waiter reads the word until it looks free (local spinning, 7.3) and
 * then tries a CAS from 0, which never overwrites a parked bit. Under park
 * a waiter whose budgets are spent sets LS_PARKED with a CAS on the held
 * word and sleeps; unlock exchanges 0 in and wakes ONE sleeper if the bit
 * was set. Responsibility (Drepper, "Futexes are tricky", mutex3): a thread
 * that has slept may have consumed the only wake-up, so it then acquires
 * with HELD|PARKED, and if it leaves with ETIMEDOUT it passes one wake-up
 * on. Nothing but unlock clears PARKED, and unlock wakes.
 *
 * After the release (lock.h): the exchange that frees the word is the last
 * access; a futex wake on its address may follow. Misuse: an unlock of a
 * free lock exchanges 0 for 0.
 */
#ifndef LS_TTAS_WORD_H
#define LS_TTAS_WORD_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "lock.h"
#include "wait.h"

#define LS_TTAS_HELD 1u

struct ls_ttas {
	_Atomic uint32_t word;
};
_Static_assert(sizeof(struct ls_ttas) <= LS_INLINE_STATE, "inline state");

/* The CAS from 0 of lock, trylock and timedlock. acquire: pairs with the
 * release exchange in ls_ttas_release. */
static inline bool ls_ttas_try(struct ls_ttas *l)
{
	uint32_t zero = 0;
	return atomic_compare_exchange_strong_explicit(&l->word, &zero, LS_TTAS_HELD, memory_order_acquire,
						       memory_order_relaxed);
}

static inline void ls_ttas_release(struct ls_ttas *l)
{
	/* release: pairs with the acquiring CAS in ls_ttas_try, ls_ttas_wait */
	uint32_t old = atomic_exchange_explicit(&l->word, 0, memory_order_release);
	LS_TEST_POINT(LS_POINT_RELEASED);
	LS_INJECT();
	if (LS_UNLIKELY(old & LS_PARKED))
		ls_futex_wake(&l->word, 1);
}

/* After a lost race: back off (may be NULL: plain TTAS). *limit starts at
 * limit0 and belongs to the back-off. */
typedef void (*ls_ttas_backoff_fn)(struct ls_spin *s, uint64_t *limit);

/* The waiting loop of lock (deadline 0) and timedlock. Instantiated by each
 * file with its own back-off, so the test below folds away. */
static inline __attribute__((always_inline)) int ls_ttas_wait(struct ls_ttas *l, uint64_t deadline,
							      ls_ttas_backoff_fn back_off, uint64_t limit0)
{
	uint32_t want = LS_TTAS_HELD;
	uint64_t limit = limit0;
	struct ls_spin s = LS_SPIN_INIT;
	for (unsigned i = 1;; i++) {
		/* relaxed: a hint; the CAS that follows decides and orders */
		uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
		if (v == 0) {
			LS_INJECT();
			/* acquire: pairs with the release exchange in ls_ttas_release */
			if (atomic_compare_exchange_strong_explicit(&l->word, &v, want, memory_order_acquire,
								    memory_order_relaxed))
				return 0;
			if (back_off) {
				/* Lost a race for a free lock: contention. */
				LS_INJECT();
				back_off(&s, &limit);
				if (deadline && ls_now_ns() >= deadline)
					goto timeout;
			}
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
			want = LS_TTAS_HELD | LS_PARKED;
			LS_INJECT();
			if (ls_futex_wait(&l->word, LS_TTAS_HELD | LS_PARKED, deadline) == ETIMEDOUT)
				goto timeout;
		}
	}
timeout:
	if (want & LS_PARKED)
		ls_futex_wake(&l->word, 1); /* we may hold the only wake-up: pass it on */
	return ETIMEDOUT;
}

#endif
