/*
 * turn.h - waiting for one's turn on a word that waiters of other turns
 * share, and waking only the waiter whose turn comes (ticket, alock, ptl).
 *
 * In a ticket lock every waiter watches one "now serving" word; in the
 * array locks (alock, ptl) waiters whose tickets fall in the same slot share
 * the slot's word. With the LS_PARKED protocol of wait.h a release wakes
 * every sleeper of the word and all but one go back to sleep: with N
 * sleepers, N wake-ups (each ~40 us of kernel and scheduler time on a busy
 * VM) per hand-off. Here a sleeper says which turn it waits for instead:
 *
 *	word		the turn being served (written by releasers only)
 *	sleepers	bit (class mod 32) set: a waiter of that class may sleep;
 *			it is also the futex word the sleepers wait on, each with
 *			FUTEX_WAIT_BITSET and its class's bit
 *
 * A turn's class is the ticket for `ticket`, the ticket's lap (ticket / N)
 * for the slot of an array lock: waiters that share a class share a bit
 * and are woken together (32 apart in the queue: rare).
 *
 * Waiter (turn_wait): spin and yield by the policy; then set its bit
 * (fetch_or), re-read the word, and sleep on `sleepers` expecting the value
 * its fetch_or produced. Waker (turn_wake, after the word shows the class's
 * turn): if the bit is set, clear it (fetch_and) and wake that bit's
 * sleepers. Why no wake-up is lost (all four accesses seq_cst: a Dekker
 * pair): either the waiter's re-read sees its turn, or the waker's load of
 * `sleepers` sees the bit; then the clear changes `sleepers`, so a waiter
 * not yet asleep finds a different value and retries (EAGAIN), and one
 * asleep is woken. Sharers woken with it set their bit again before they
 * sleep again. A bit set by a later sleeper of the same class after the
 * clear stays set: the bit over-approximates, never under-approximates.
 *
 * Two wakers per turn, as "keep the next waiter awake" (wait.h) asks:
 * the releaser, after publishing turn t+1 (turn_wake in unlock: usually
 * nothing to do, one load), and the holder of t as soon as it acquires,
 * for t+1 (turn_wake in the slow path), so that the next waiter's wake-up
 * overlaps the critical section instead of following the release.
 */
#ifndef LS_QUEUE_TURN_H
#define LS_QUEUE_TURN_H

#include <stdatomic.h>
#include <stdint.h>

#include "lock.h"
#include "wait.h"

static inline uint32_t turn_bit(uint32_t cls)
{
	return 1u << (cls & 31);
}

void ls_turn_wake_slow(_Atomic uint32_t *sleepers, uint32_t cls, uint32_t seen);

/* The waker's read of `sleepers`, after the word shows the new turn
 * (published with seq_cst: an exchange). */
static inline uint32_t turn_seen(_Atomic uint32_t *sleepers)
{
	/* seq_cst: the Dekker pair with the waiter's fetch_or and re-read */
	return atomic_load_explicit(sleepers, memory_order_seq_cst);
}

/* Wakes the sleepers of class cls, if any. Nobody asleep at all costs one
 * load and a test (callers whose class costs a division test turn_seen()
 * first and call ls_turn_wake_slow themselves). */
static inline void turn_wake(_Atomic uint32_t *sleepers, uint32_t cls)
{
	uint32_t seen = turn_seen(sleepers);
	if (LS_UNLIKELY(seen))
		ls_turn_wake_slow(sleepers, cls, seen);
}

/* The acquire side: the new holder wakes the next turn's sleeper early
 * (wait.h: keep the next waiter awake). */
static inline void turn_prewake(_Atomic uint32_t *sleepers, uint32_t cls)
{
#ifndef LS_NO_PREWAKE /* a build without it, for scripts/sweeps/bench-oversub */
	turn_wake(sleepers, cls);
#else
	(void)sleepers, (void)cls;
#endif
}

/* Waits until *word == mine, reading it with acquire ordering; sleeps, by
 * the policy, with class cls. */
void ls_turn_wait(_Atomic uint32_t *word, _Atomic uint32_t *sleepers, uint32_t mine, uint32_t cls);

#endif
