/*
 * turn.c - the out-of-line half of turn.h (waiting for a turn, waking only
 * the waiter whose turn comes). Not an algorithm: ticket, alock and ptl use it.
 */
#include <limits.h>

#include "turn.h"

void ls_turn_wake_slow(_Atomic uint32_t *sleepers, uint32_t cls, uint32_t seen)
{
	uint32_t bit = turn_bit(cls);
	if (!(seen & bit))
		return; /* others sleep, not this class */
	/* The clear changes the futex word: a sleeper of this class that has
	 * not gone to sleep yet finds a different value and re-checks. */
	atomic_fetch_and_explicit(sleepers, ~bit, memory_order_seq_cst);
	ls_futex_wake_bits(sleepers, INT_MAX, bit);
}

void ls_turn_wait(_Atomic uint32_t *word, _Atomic uint32_t *sleepers, uint32_t mine, uint32_t cls)
{
	uint32_t bit = turn_bit(cls);
	struct ls_spin s = LS_SPIN_INIT;
	for (;;) {
		LS_INJECT();
		/* acquire: pairs with the releaser's exchange of the word */
		if (atomic_load_explicit(word, memory_order_acquire) == mine)
			return;
		if (!ls_spin_step(&s))
			continue;
		/* seq_cst, with the re-read below: the Dekker pair of turn.h */
		uint32_t v = atomic_fetch_or_explicit(sleepers, bit, memory_order_seq_cst) | bit;
		LS_INJECT();
		if (atomic_load_explicit(word, memory_order_seq_cst) == mine)
			return;
		ls_futex_wait_bits(sleepers, v, 0, bit);
		s = (struct ls_spin)LS_SPIN_INIT; /* woken: our turn is next */
	}
}
