/*
 * slots.h - the ticket lock with an array of grant slots that hold tickets:
 * Dice, "Brief Announcement: A Partitioned Ticket Lock", SPAA 2011 (not in
 * ../shared/papers), used by alock (AMP's array lock made safe for any
 * number of threads by holding tickets, AMP 7.5.1) and ptl (Dice's lock).
 *
 * A thread takes a ticket with fetch-and-increment on `tail`; its slot is
 * ticket mod N; it waits until slot[t mod N] == t, and the holder of t
 * releases by writing t+1 into slot[(t+1) mod N]. Waiters that share a slot
 * wait for different values, so exactly one of them goes, whatever the
 * number of threads; N only decides how many waiters wait on lines of their
 * own ("semi-local spinning"). There is no flag to reset. Tickets count
 * modulo 2^31, so that N need not divide the modulus: `tail` wraps at 2^32,
 * which is 0 modulo 2^31, and both sides compute the slot from the same
 * masked ticket.
 *
 *	tail		tickets handed out
 *	holder		the ticket the holder's release serves (its own plus
 *			one), written by the holder: unlock may run on another
 *			thread
 *	slot[i].word	turn.h's ls_slot: go, the last ticket allowed to proceed
 *			among those = i mod N; and its sleepers, bit (lap mod 32)
 *			set: a waiter of that lap (ticket / N) may sleep on it
 *
 * All zero is unlocked: slot[0] == 0 == tail lets ticket 0 go, and holder
 * 0 names it. Each slot is a cache line; the lock is N+1 lines, out of
 * line.
 *
 * Waiting policy (turn.h): a sleeper sleeps with its lap's bit, so a release
 * wakes the waiter whose ticket comes up and not the others that share its
 * slot (unless more threads wait than there are slots: then a release also
 * wakes the slot's other sleepers, which sleep again); the holder, as soon
 * as it has waited for and got the lock, wakes the next ticket's waiter if
 * it sleeps (its wake-up overlaps the critical section). No native
 * timeout, no queue nodes.
 *
 * After the release (lock.h): the release is one exchange of the slot's
 * word, which returns the sleepers it cleared; nothing is read after it,
 * and a wake-up is a futex call on the slot's address. Misuse: the holder
 * field names the ticket to serve, so an unlock of a free lock (never
 * locked: ticket 0, whose slot says 0 already; or unlocked already) stores
 * into the slot the value it holds: nothing changes.
 */
#ifndef LS_QUEUE_SLOTS_H
#define LS_QUEUE_SLOTS_H

#include <errno.h>
#include <stdatomic.h>

#include "lock.h"
#include "turn.h"
#include "wait.h"

#define SLOTS_MASK 0x7fffffffu

struct slots {
	_Atomic uint32_t tail;
	uint32_t holder;
	char pad[LS_CACHELINE - 8];
	struct slot {
		_Atomic uint64_t word; /* turn.h's ls_slot */
		char pad[LS_CACHELINE - 8];
	} slot[];
};

static inline struct slot *slot_of(struct slots *l, uint32_t n, uint32_t t)
{
	/* a division costs ~25 cycles: mask when n is a power of two (the
	 * default), which gives the same slot */
	return &l->slot[(n & (n - 1)) == 0 ? t & (n - 1) : t % n];
}

/* The lap of ticket t: its class among the waiters of its slot (turn.h). */
static inline uint32_t lap(uint32_t n, uint32_t t)
{
	return (n & (n - 1)) == 0 ? t >> __builtin_ctz(n) : t / n;
}

static __attribute__((noinline)) void slots_wait(struct slots *l, uint32_t n, struct slot *s, uint32_t t)
{
	/* (A) acquire: pairs with (B) */
	ls_slot_wait(&s->word, t, lap(n, t));
	uint32_t u = (t + 1) & SLOTS_MASK;
	l->holder = u;
	ls_slot_prewake(&slot_of(l, n, u)->word, lap(n, u)); /* keep the next waiter awake */
}

static inline void slots_lock(struct slots *l, uint32_t n)
{
	/* relaxed: the ticket orders nothing; (A) does */
	uint32_t t = atomic_fetch_add_explicit(&l->tail, 1, memory_order_relaxed) & SLOTS_MASK;
	struct slot *s = slot_of(l, n, t);
	LS_INJECT();
	/* (A) acquire: pairs with (B) in slots_unlock */
	if (LS_UNLIKELY(ls_slot_go(atomic_load_explicit(&s->word, memory_order_acquire)) != t)) {
		slots_wait(l, n, s, t); /* a tail call: the fast path stays a leaf */
		return;
	}
	l->holder = (t + 1) & SLOTS_MASK;
}

static inline int slots_trylock(struct slots *l, uint32_t n)
{
	/* relaxed: the CAS below orders nothing either; (A) does */
	uint32_t raw = atomic_load_explicit(&l->tail, memory_order_relaxed), t = raw & SLOTS_MASK;
	/* Free with nobody queued: the next ticket to be handed out is the one
	 * allowed to go. (A) acquire: pairs with (B) in slots_unlock. */
	if (ls_slot_go(atomic_load_explicit(&slot_of(l, n, t)->word, memory_order_acquire)) != t)
		return EBUSY;
	LS_INJECT();
	/* relaxed: the ticket orders nothing; (A) did */
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &raw, raw + 1, memory_order_relaxed,
						     memory_order_relaxed))
		return EBUSY;
	l->holder = (t + 1) & SLOTS_MASK;
	return 0;
}

static inline void slots_unlock(struct slots *l, uint32_t n)
{
	uint32_t t = l->holder;
	LS_INJECT();
	/* (B) release: pairs with (A) */
	ls_slot_release(&slot_of(l, n, t)->word, t);
}

#endif
