/*
 * turn.h - waiting for one's turn, waking only the waiter whose turn comes,
 * and releasing in ONE atomic operation on ONE word, after which the
 * releaser touches the lock no more (lock.h, "After the release").
 *
 * Two words, each with its own release:
 *
 *   ls_tkt  a whole ticket lock in 64 bits: ticket (queue/ticket.c), the
 *           global and local locks of c-tkt-tkt, the top-level word of hclh
 *           and hmcs without a block (hier.h, "No address space");
 *   ls_slot one grant slot of an array of them (queue/slots.h: alock, ptl).
 *
 * Why one word. A release that stores the turn and then reads a separate
 * word of sleepers (the Dekker pair this file used to implement) reads the
 * lock after another thread may have taken it, unlocked, destroyed it and
 * freed its memory; and the clearing of a sleeper's bit by the releaser is
 * a write there. So the sleepers are in the word the release changes, and
 * the release learns them from its own atomic operation.
 *
 * Sleeping (both words). Spin and yield by the policy; then set the class
 * bit of one's turn in the word with an RMW, look at the value it returns,
 * and sleep on the futex half of the word (FUTEX_WAIT_BITSET with the
 * class's bit) expecting exactly that half. The half is chosen so that
 * every operation that may end a sleeper's reason to sleep changes it: a
 * waiter that is not yet asleep when one happens finds the half changed
 * and looks again; one that is asleep is woken by the release if its bit
 * was set (the release's own RMW returned it). No wake-up is lost: the bit
 * and the turn are in one word, ordered by its modification order. A woken
 * waiter whose turn has not come (a class shared by waiters 8 or 32 apart,
 * or a wake ahead of time) sets its bit again before it sleeps again.
 *
 * Two wakers per turn, as "keep the next waiter awake" (wait.h) asks: the
 * releaser, and the holder of turn t as soon as it has waited for and got
 * the lock, for turn t+1 (the end of ls_tkt_wait, ls_slot_prewake), so
 * that the next wake-up overlaps the critical section instead of following
 * the release.
 *
 * ls_tkt, 64 bits:
 *	bits 0-7	sleepers: bit (ticket mod 8) set: a waiter of that class
 *			may sleep
 *	bits 8-30	pending: tickets handed out and not yet released, the
 *			holder's included (0: free). 23 bits: more than the
 *			threads Linux can run at once (pid_max is at most 2^22).
 *	bit 31		LS_TKT_IDLERS: a thread that holds no ticket sleeps
 *			until the lock is free (c-rw-wp's readers, which wait
 *			for the global lock to go idle). Nothing here sets or
 *			clears it, and every operation here keeps it (no
 *			ticket taken or released carries into it); a user
 *			that sets it releases with a CAS of its own (the value
 *			ls_tkt_released gives, with the bit cleared when
 *			pending reaches 0) and then wakes the futex bit
 *			LS_TKT_IDLERS on the low half (rwlock/c_rw_wp.c).
 *	bits 32-63	turn: the ticket being served, modulo 2^32
 *   The next ticket is turn + pending. A ticket is one fetch_add of
 *   PENDING1 (pending never reaches 2^23, so nothing carries out of it); it
 *   holds the lock at once if pending was 0 (the fast path reads nothing
 *   else). A release is a CAS that adds one to turn, takes one from pending
 *   and clears the class bit of the turn it begins, only if pending is not
 *   0: an unlock of a free lock does nothing (lock.h, misuse), and of two
 *   racing unlocks of one held lock only one releases. The futex half of
 *   the ticket waiters is the high one, turn: every release changes it, and
 *   only releases clear sleeper bits (the waiters of the cleared class,
 *   woken, set their bits again if their turn has not come), so a waiter
 *   between its RMW and its sleep never misses a release. (It used to be
 *   the low one, pending and sleepers, with holders clearing bits: a
 *   release and a new ticket restored it, and a waiter whose turn that
 *   release began slept through its only wake-up.) All-zero is free, any
 *   copy of a free word is free, and a held word is never 0. The release
 *   is one CAS when the holder's is the only ticket out and nobody sleeps;
 *   anything else (a hand-over, sleepers to wake, an unlock of a free
 *   lock) is ls_tkt_release_slow.
 *   fork() (fork.h): a ticket records no waiter, so in a fork child the
 *   tickets of threads the fork left behind cannot be told from others.
 *   The first hand-over of a word in a generation (ls_fork_first) serves
 *   every ticket out at once instead, leaving the lock free; a live
 *   waiter whose ticket the turn has passed takes another (ls_tkt_wait),
 *   so the child's waiters of that moment queue again, once, in a new
 *   order. A holder's ticket is never voided: only its own release does it.
 *
 * ls_slot, 64 bits:
 *	bits 0-30	go: the last ticket allowed to proceed among those of
 *			this slot (slots.h), tickets counting modulo 2^31
 *	bit 31		LS_SLOT_VOID: go allows nobody, and the tickets up to
 *			it are void (a fork child's first hand-over, slots.h)
 *	bits 32-63	sleepers: bit (lap mod 32) set, lap = ticket / slots
 *   A release stores go = t and 0 sleepers in one exchange, and wakes the
 *   classes whose bits it cleared: the waiter whose ticket comes, and, only
 *   when more threads wait than there are slots, those of the same slot's
 *   other laps, which set their bits again. The futex half is the high one
 *   (the sleepers): a waiter sleeps only with its bit set there, so the
 *   release's exchange changes it whenever a waiter may sleep.
 *
 * Both words are read in halves by the kernel only (the futex); C code
 * reads and writes them whole.
 */
#ifndef LS_QUEUE_TURN_H
#define LS_QUEUE_TURN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lock.h"
#include "wait.h"

/* The half of a 64-bit word that the kernel compares for a futex: the low
 * (hi = false) or the high one. The futex calls only pass the address. */
static inline _Atomic uint32_t *ls_half(_Atomic uint64_t *w, bool hi)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (_Atomic uint32_t *)(void *)w + hi;
#else
	return (_Atomic uint32_t *)(void *)w + !hi;
#endif
}

/* ---- ls_tkt: a ticket lock in one word ---- */

#define LS_TKT_CLASSES 8u
#define LS_TKT_SLEEPERS 0xffull
#define LS_TKT_PENDING1 0x100ull
#define LS_TKT_PENDING 0x7fffff00ull
#define LS_TKT_IDLERS 0x80000000ull /* in the word and as the futex bit */
#define LS_TKT_TURN1 (1ull << 32)

static inline uint32_t ls_tkt_pending(uint64_t v)
{
	return (uint32_t)((v & LS_TKT_PENDING) >> 8);
}

/* The ticket being served. */
static inline uint32_t ls_tkt_turn(uint64_t v)
{
	return (uint32_t)(v >> 32);
}

/* The futex half (turn) and its value in a value of the word. */
static inline _Atomic uint32_t *ls_tkt_futex(_Atomic uint64_t *w)
{
	return ls_half(w, true);
}
static inline uint32_t ls_tkt_futex_val(uint64_t v)
{
	return (uint32_t)(v >> 32);
}

static inline uint32_t ls_tkt_bit(uint32_t t)
{
	return 1u << (t % LS_TKT_CLASSES);
}

/* Takes a ticket; true if it holds the lock at once (then nothing else
 * needs doing), else *t is the ticket to wait for (ls_tkt_wait).
 * acquire: pairs with the release CAS of ls_tkt_unlock. */
/* The ticket a take that returned old got. */
static inline uint32_t ls_tkt_ticket(uint64_t old)
{
	return ls_tkt_turn(old) + ls_tkt_pending(old);
}

static inline bool ls_tkt_take(_Atomic uint64_t *w, uint32_t *t)
{
	uint64_t old = atomic_fetch_add_explicit(w, LS_TKT_PENDING1, memory_order_acquire);
	*t = ls_tkt_ticket(old);
	return !(old & LS_TKT_PENDING);
}

/* Waits for ticket t under the policy, then keeps the next waiter awake.
 * Returns with the lock held. */
void ls_tkt_wait(_Atomic uint64_t *w, uint32_t t);

static inline void ls_tkt_lock(_Atomic uint64_t *w)
{
	uint32_t t;
	if (LS_UNLIKELY(!ls_tkt_take(w, &t)))
		ls_tkt_wait(w, t);
}

/* Takes the lock if it is free with no ticket out. */
static inline bool ls_tkt_try(_Atomic uint64_t *w)
{
	/* relaxed: the CAS below acquires */
	uint64_t v = atomic_load_explicit(w, memory_order_relaxed);
	if (v & LS_TKT_PENDING)
		return false;
	LS_INJECT();
	/* acquire: pairs with the release CAS of ls_tkt_unlock */
	return atomic_compare_exchange_strong_explicit(w, &v, v + LS_TKT_PENDING1, memory_order_acquire,
						       memory_order_relaxed);
}

/* The lock is held or queued for, in a value of the word. */
static inline bool ls_tkt_held(uint64_t v)
{
	return (v & LS_TKT_PENDING) != 0;
}

/* Someone holds a ticket behind the holder's (c-tkt-tkt's cohort
 * detection), in a value read by the holder. */
static inline bool ls_tkt_waiters(uint64_t v)
{
	return ls_tkt_pending(v) > 1;
}

/* Out of line: wakes the sleepers of the class whose turn the release of
 * old (the value its CAS replaced, which cleared that class's bit) began.
 * Touches only the kernel. */
void ls_tkt_wake(_Atomic uint64_t *w, uint64_t old);

/* Releases the lock (serves the next ticket); does nothing if it is free.
 * After the CAS only the futex wake, which passes w's address to the
 * kernel, may follow. `last`: this release makes the whole lock available
 * (the test point; c-tkt-tkt releases its local lock before its global
 * one, and only the second is the lock's release). */
/* The value a release of v stores: the next turn, one ticket fewer, and
 * the class bit of the turn it begins cleared (its sleepers are woken:
 * ls_tkt_wake). */
static inline uint64_t ls_tkt_released(uint64_t v)
{
	uint64_t n = v + (LS_TKT_TURN1 - LS_TKT_PENDING1);
	/* with no sleeper bit set, the release is one add */
	if (LS_UNLIKELY(v & LS_TKT_SLEEPERS))
		n &= ~(uint64_t)ls_tkt_bit(ls_tkt_turn(v) + 1);
	return n;
}

/* Out of line: every release but the holder's alone with nobody asleep
 * (an unlock of a free lock, a hand-over, sleepers to wake). */
void ls_tkt_release_slow(_Atomic uint64_t *w, uint64_t v, bool last);

/* fork (above): v with every ticket out served at once and none pending,
 * the lock free; or, with its holder's ticket kept (a lock held), every
 * other ticket void. No sleeper bits: the caller wakes the sleepers of v. */
static inline uint64_t ls_tkt_all_void(uint64_t v)
{
	return (uint64_t)(ls_tkt_turn(v) + ls_tkt_pending(v)) << 32;
}
static inline uint64_t ls_tkt_holder_only(uint64_t v)
{
	return ls_tkt_held(v) ? (uint64_t)ls_tkt_turn(v) << 32 | LS_TKT_PENDING1 : ls_tkt_all_void(v);
}

static inline __attribute__((always_inline)) void ls_tkt_release_from(_Atomic uint64_t *w, uint64_t v,
								      bool last)
{
	/* The holder's ticket alone, nobody asleep: one CAS. */
	if (LS_LIKELY((v & (LS_TKT_PENDING | LS_TKT_SLEEPERS)) == LS_TKT_PENDING1)) {
		LS_INJECT();
		/* release: pairs with the acquire of the take, try or wait that
		 * sees the new turn */
		if (LS_LIKELY(atomic_compare_exchange_strong_explicit(
			w, &v, v + (LS_TKT_TURN1 - LS_TKT_PENDING1), memory_order_release,
			memory_order_relaxed))) {
			if (last)
				LS_TEST_POINT(LS_POINT_RELEASED);
			return;
		}
	}
	ls_tkt_release_slow(w, v, last);
}

/* The same from the word's value v, read (relaxed) by the caller: the CAS
 * below releases, and a stale value only fails it. */
static inline __attribute__((always_inline)) void ls_tkt_release(_Atomic uint64_t *w, bool last)
{
	/* relaxed: as above */
	ls_tkt_release_from(w, atomic_load_explicit(w, memory_order_relaxed), last);
}

static inline void ls_tkt_unlock(_Atomic uint64_t *w)
{
	ls_tkt_release(w, true);
}

/* ---- ls_slot: a grant slot ---- */

#define LS_SLOT_CLASSES 32u
#define LS_SLOT_VOID 0x80000000u

static inline uint32_t ls_slot_go(uint64_t v)
{
	return (uint32_t)v;
}

/* Ticket `mine` (waiting on its slot, whose go is `go`) was voided: go has
 * passed it, which only a fork child's first hand-over does (slots.h). */
static inline bool ls_slot_voided(uint32_t go, uint32_t mine)
{
	return go != mine && (int32_t)(((go & ~LS_SLOT_VOID) - mine) << 1) >= 0;
}

/* Waits until the slot's go is `mine`, reading it with acquire ordering,
 * and returns true; false if the ticket was voided (ls_slot_voided: take
 * another); sleeps, by the policy, with class `lap`. */
bool ls_slot_wait(_Atomic uint64_t *w, uint32_t mine, uint32_t lap);

/* Out of line: wakes the classes of `sleepers` (the high half that a
 * release's exchange cleared). Touches only the kernel. */
void ls_slot_wake(_Atomic uint64_t *w, uint32_t sleepers);

/* Stores go = t (and no sleepers); wakes whom it cleared. */
static inline void ls_slot_release(_Atomic uint64_t *w, uint32_t t)
{
	/* release: pairs with the acquire load in ls_slot_wait and the
	 * lock's fast path */
	uint64_t old = atomic_exchange_explicit(w, t, memory_order_release);
	LS_TEST_POINT(LS_POINT_RELEASED);
	if (LS_UNLIKELY(old >> 32))
		ls_slot_wake(w, (uint32_t)(old >> 32));
}

/* The holder of a slot's turn wakes the sleeper of the next turn, class
 * `lap`, on that ticket's slot (see "Two wakers per turn" above). */
void ls_slot_prewake_slow(_Atomic uint64_t *w, uint32_t bit);
static inline void ls_slot_prewake(_Atomic uint64_t *w, uint32_t lap)
{
#ifndef LS_NO_PREWAKE /* a build without it, for scripts/sweeps/bench-oversub */
	uint32_t bit = 1u << (lap % LS_SLOT_CLASSES);
	/* relaxed: a hint; a bit set after this read is handled by the
	 * release, which wakes whomever its exchange finds */
	if (LS_UNLIKELY((atomic_load_explicit(w, memory_order_relaxed) >> 32) & bit))
		ls_slot_prewake_slow(w, bit);
#else
	(void)w, (void)lap;
#endif
}

#endif
