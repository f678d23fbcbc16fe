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
 *			one, not reduced modulo 2^31, so that unlock compares
 *			it with tail at once), written by the holder: unlock
 *			may run on another thread
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
 *
 * fork() (fork.h, turn.h's ls_tkt does the same): tickets record no
 * waiter, so unlock tells a hand-over (tail has moved past the ticket it
 * serves: somebody holds that ticket) from the holder's release alone, and
 * the first hand-over of a lock in a fork child (ls_fork_first) voids every
 * ticket out instead of serving the next one: each slot's go becomes the
 * ticket before tail with LS_SLOT_VOID (it allows nobody, and tells the
 * waiters of tickets up to it that theirs are void), then go = tail in its
 * slot, the release: the lock is free. A live waiter whose ticket was
 * voided takes another (slots_wait).
 */
#ifndef LS_QUEUE_SLOTS_H
#define LS_QUEUE_SLOTS_H

#include <errno.h>
#include <stdatomic.h>

#include "fork.h"
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

/* Waits for ticket `raw` (as tail handed it out); takes another if it is
 * voided (fork, above). */
static __attribute__((noinline)) void slots_wait(struct slots *l, uint32_t n, uint32_t raw)
{
	LS_TEST_POINT(LS_POINT_VISIBLE);
	uint32_t t = raw & SLOTS_MASK;
	/* (A) acquire: pairs with (B) */
	while (!ls_slot_wait(&slot_of(l, n, t)->word, t, lap(n, t))) {
		/* relaxed: as in slots_lock */
		raw = atomic_fetch_add_explicit(&l->tail, 1, memory_order_relaxed);
		t = raw & SLOTS_MASK;
	}
	uint32_t u = (t + 1) & SLOTS_MASK;
	l->holder = raw + 1;
	ls_slot_prewake(&slot_of(l, n, u)->word, lap(n, u)); /* keep the next waiter awake */
}

static inline void slots_lock(struct slots *l, uint32_t n)
{
	/* relaxed: the ticket orders nothing; (A) does */
	uint32_t raw = atomic_fetch_add_explicit(&l->tail, 1, memory_order_relaxed), t = raw & SLOTS_MASK;
	struct slot *s = slot_of(l, n, t);
	LS_INJECT();
	/* (A) acquire: pairs with (B) in slots_unlock */
	if (LS_UNLIKELY(ls_slot_go(atomic_load_explicit(&s->word, memory_order_acquire)) != t)) {
		slots_wait(l, n, raw); /* a tail call: the fast path stays a leaf */
		return;
	}
	l->holder = raw + 1;
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
	l->holder = raw + 1;
	return 0;
}

/* A hand-over (tail has moved past the ticket to serve, h): to that ticket,
 * or, the first in a fork child, the lock freed with every ticket out
 * void (see the header). */
static __attribute__((noinline)) void slots_handover(struct slots *l, uint32_t n, uint32_t h)
{
	uint32_t t = h & SLOTS_MASK;
	if (!ls_fork_child() || !ls_fork_first(l)) {
		/* (B) release: pairs with (A) */
		ls_slot_release(&slot_of(l, n, t)->word, t);
		return;
	}
	/* relaxed: tickets taken after this are served from it on */
	uint32_t u = atomic_load_explicit(&l->tail, memory_order_relaxed) & SLOTS_MASK;
	for (uint32_t i = 0; i < n; i++) {
		if (&l->slot[i] == slot_of(l, n, u))
			continue;
		/* relaxed: allows nobody; the release below orders the rest */
		uint64_t old = atomic_exchange_explicit(
		    &l->slot[i].word, ((u - 1) & SLOTS_MASK) | LS_SLOT_VOID, memory_order_relaxed);
		if (old >> 32)
			ls_slot_wake(&l->slot[i].word, (uint32_t)(old >> 32)); /* to take another ticket */
	}
	LS_INJECT();
	/* (B) release: pairs with (A); the voided waiters of this slot see go
	 * past their tickets */
	ls_slot_release(&slot_of(l, n, u)->word, u);
}

static inline void slots_unlock(struct slots *l, uint32_t n)
{
	uint32_t h = l->holder;
	/* relaxed: a hint; tail only grows while the lock is held, and a
	 * ticket taken after this load is served by the release below */
	if (LS_UNLIKELY(atomic_load_explicit(&l->tail, memory_order_relaxed) != h)) {
		slots_handover(l, n, h);
		return;
	}
	LS_INJECT();
	/* (B) release: pairs with (A) */
	ls_slot_release(&slot_of(l, n, h & SLOTS_MASK)->word, h & SLOTS_MASK);
}

#endif
