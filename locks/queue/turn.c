/*
 * turn.c - the out-of-line half of turn.h (waiting for a turn, waking only
 * the waiter whose turn comes). Not an algorithm: ticket, alock, ptl,
 * c-tkt-tkt, hclh and hmcs use it.
 */
#include <limits.h>

#include "fork.h"
#include "turn.h"

/* ---- ls_tkt ---- */

void ls_tkt_wake(_Atomic uint64_t *w, uint64_t old)
{
	/* the turn that the release began: one past the one it ended */
	uint32_t bit = ls_tkt_bit(ls_tkt_turn(old) + 1);
	if (old & bit)
		ls_futex_wake_bits(ls_tkt_futex(w), INT_MAX, bit);
}

/* The turn has passed ticket t without serving it: a fork child's first
 * hand-over voided it (ls_tkt_release_slow). Never otherwise: a waiter's
 * ticket is at or after the turn until it is served. */
static inline bool voided(uint64_t v, uint32_t t)
{
	return LS_UNLIKELY((int32_t)(ls_tkt_turn(v) - t) > 0);
}

void ls_tkt_wait(_Atomic uint64_t *w, uint32_t t)
{
	LS_TEST_POINT(LS_POINT_VISIBLE);
	uint32_t bit = ls_tkt_bit(t);
	struct ls_spin s = LS_SPIN_INIT;
	uint64_t v;
	for (;;) {
		LS_INJECT();
		/* acquire: pairs with the release CAS of ls_tkt_unlock */
		v = atomic_load_explicit(w, memory_order_acquire);
		if (ls_tkt_turn(v) == t)
			break;
		if (voided(v, t)) {
			if (ls_tkt_take(w, &t))
				return; /* free: held at once */
			bit = ls_tkt_bit(t);
			s = (struct ls_spin)LS_SPIN_INIT;
			continue;
		}
		if (!ls_spin_step(&s))
			continue;
		/* acquire: as above, when it finds our turn */
		v = atomic_fetch_or_explicit(w, bit, memory_order_acquire) | bit;
		if (ls_tkt_turn(v) == t)
			break;
		if (voided(v, t))
			continue; /* take another ticket, above */
		LS_INJECT();
		ls_futex_wait_bits(ls_tkt_futex(w), ls_tkt_futex_val(v), 0, bit);
		s = (struct ls_spin)LS_SPIN_INIT; /* woken: our turn is next */
	}
	/* Holding it now: keep the next waiter awake (turn.h). Its bit stays:
	 * only a release clears bits (a clear here, which does not change the
	 * futex half, could hide the bit from the release that needs it). */
#ifndef LS_NO_PREWAKE /* a build without it, for scripts/sweeps/bench-oversub */
	uint32_t next = ls_tkt_bit(t + 1);
	if (v & next)
		ls_futex_wake_bits(ls_tkt_futex(w), INT_MAX, next);
#endif
}

void ls_tkt_release_slow(_Atomic uint64_t *w, uint64_t v, bool last)
{
	bool rebase = false;
	for (;;) {
		if (!(v & LS_TKT_PENDING))
			return; /* free: an unlock too many (lock.h, misuse) */
		/* fork (turn.h): the first hand-over of this word in a fork
		 * child voids every ticket out */
		if (!rebase && ls_tkt_waiters(v) && ls_fork_child())
			rebase = ls_fork_first(w);
		LS_INJECT();
		/* release: pairs with the acquire of the take, try or wait that
		 * sees the new turn */
		if (atomic_compare_exchange_weak_explicit(w, &v,
							  rebase ? ls_tkt_all_void(v) : ls_tkt_released(v),
							  memory_order_release, memory_order_relaxed))
			break;
	}
	if (last)
		LS_TEST_POINT(LS_POINT_RELEASED);
	if (!rebase) {
		if (v & LS_TKT_SLEEPERS)
			ls_tkt_wake(w, v);
		return;
	}
	/* Every sleeper's ticket is void: wake them all, to take another. */
	if (v & LS_TKT_SLEEPERS)
		ls_futex_wake_bits(ls_tkt_futex(w), INT_MAX, (uint32_t)(v & LS_TKT_SLEEPERS));
	if (v & LS_TKT_IDLERS)
		ls_futex_wake_bits(ls_half(w, false), INT_MAX, (uint32_t)LS_TKT_IDLERS);
}

/* ---- ls_slot ---- */

void ls_slot_wake(_Atomic uint64_t *w, uint32_t sleepers)
{
	ls_futex_wake_bits(ls_half(w, true), INT_MAX, sleepers);
}

void ls_slot_prewake_slow(_Atomic uint64_t *w, uint32_t bit)
{
	/* relaxed: the clear changes the futex half, which is all a sleeper
	 * about to sleep needs to see (turn.h) */
	atomic_fetch_and_explicit(w, ~((uint64_t)bit << 32), memory_order_relaxed);
	ls_futex_wake_bits(ls_half(w, true), INT_MAX, bit);
}

bool ls_slot_wait(_Atomic uint64_t *w, uint32_t mine, uint32_t lap)
{
	uint32_t bit = 1u << (lap % LS_SLOT_CLASSES);
	struct ls_spin s = LS_SPIN_INIT;
	for (;;) {
		LS_INJECT();
		/* acquire: pairs with the release exchange of ls_slot_release */
		uint32_t go = ls_slot_go(atomic_load_explicit(w, memory_order_acquire));
		if (go == mine)
			return true;
		if (ls_slot_voided(go, mine))
			return false;
		if (!ls_spin_step(&s))
			continue;
		/* acquire: as above, when it finds our turn */
		uint64_t v = atomic_fetch_or_explicit(w, (uint64_t)bit << 32, memory_order_acquire);
		if (ls_slot_go(v) == mine)
			return true; /* our bit is cleared by the next release of the slot */
		if (ls_slot_voided(ls_slot_go(v), mine))
			return false;
		LS_INJECT();
		ls_futex_wait_bits(ls_half(w, true), (uint32_t)(v >> 32) | bit, 0, bit);
		s = (struct ls_spin)LS_SPIN_INIT; /* woken: our turn is next */
	}
}
