/*
 * ticket_word.h - the ticket lock that the hierarchical locks use where
 * they need one in 8 bytes: the global and local locks of c-tkt-tkt, and
 * the top-level word of hclh and hmcs for a lock that got no block (hier.h,
 * "No address space"). The protocol is ticket.c's (Mellor-Crummey & Scott,
 * TOCS 1991, section 2.2): FIFO, all-zero is unlocked, any copy of an
 * unlocked lock (next == owner) is unlocked, and tickets count modulo 2^31
 * (bit 31 of `owner` is LS_PARKED; `next` wraps at 2^32, which is 0 modulo
 * 2^31 too).
 *
 *	next			tickets handed out (fetch_add, and try's CAS)
 *	owner & ~PARKED		the ticket allowed to hold the lock (only the
 *				holder writes it)
 *	owner & PARKED		a waiter may be asleep on `owner`
 *
 * Waiting policy: ls_wait_while_eq on `owner`; a release that finds PARKED
 * wakes every sleeper of the word (only the one whose ticket came up keeps
 * running). No queue nodes.
 *
 * ls_ticket64_*: the same lock in ONE 64-bit word, for hclh and hmcs,
 * whose word is otherwise their top-level queue's tail (a union of the
 * two): bits 0-30 owner, bit 31 LS_PARKED, bits 32-63 next. Every access
 * is a 64-bit one, as the tail's are, so the word is never seen in halves
 * (a ticket is a fetch_add of 2^32, which wraps `next` without a carry;
 * a release is a CAS loop, since +1 on owner could carry into PARKED);
 * sleepers futex-wait on the low 32 bits (owner | PARKED). All-zero is
 * unlocked, and a held word is never 0 (next != owner): a CAS of the
 * word from NULL, as hclh's unlock does with the marker's NULL holder,
 * fails while the lock is held.
 */
#ifndef LS_TICKET_WORD_H
#define LS_TICKET_WORD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lock.h"
#include "wait.h"

#define LS_TICKET_MASK (~LS_PARKED)

struct ls_ticket {
	_Atomic uint32_t next;
	_Atomic uint32_t owner;
};

/* Takes a ticket (relaxed: it orders nothing; (A) does). */
static inline uint32_t ls_ticket_take(struct ls_ticket *t)
{
	return atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed) & LS_TICKET_MASK;
}

static inline void ls_ticket_wait(struct ls_ticket *t, uint32_t mine)
{
	LS_INJECT();
	/* (A) acquire: pairs with (B) in ls_ticket_serve_next */
	uint32_t o = atomic_load_explicit(&t->owner, memory_order_acquire) & LS_TICKET_MASK;
	while (o != mine) {
		LS_INJECT();
		/* (A) acquire: pairs with (B) */
		o = ls_wait_while_eq(&t->owner, o);
	}
}

static inline void ls_ticket_acquire(struct ls_ticket *t)
{
	ls_ticket_wait(t, ls_ticket_take(t));
}

/* Takes the lock if it is free with no ticket out. */
static inline bool ls_ticket_try(struct ls_ticket *t)
{
	/* (A) acquire: pairs with (B) */
	uint32_t o = atomic_load_explicit(&t->owner, memory_order_acquire) & LS_TICKET_MASK;
	uint32_t n = atomic_load_explicit(&t->next, memory_order_relaxed);
	if ((n & LS_TICKET_MASK) != o)
		return false;
	LS_INJECT();
	return atomic_compare_exchange_strong_explicit(&t->next, &n, n + 1, memory_order_relaxed,
						       memory_order_relaxed);
}

/* Someone holds a ticket behind the holder's (c-tkt-tkt's cohort
 * detection). `next` only grows, so a stale read can only say "no". */
static inline bool ls_ticket_waiters(struct ls_ticket *t)
{
	uint32_t o = atomic_load_explicit(&t->owner, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&t->next, memory_order_relaxed);
	return ((n - o) & LS_TICKET_MASK) > 1;
}

/* Serves the next ticket; true if a waiter may be asleep on `owner`. The
 * caller wakes (out of line: a release path may make no call that
 * returns). */
static inline bool ls_ticket_serve_next(struct ls_ticket *t)
{
	/* Only the holder writes the value; waiters may add PARKED. */
	uint32_t o = atomic_load_explicit(&t->owner, memory_order_relaxed);
	LS_INJECT();
	/* (B) release: pairs with (A) */
	return atomic_exchange_explicit(&t->owner, (o + 1) & LS_TICKET_MASK, memory_order_acq_rel) &
	       LS_PARKED;
}

/* Out of line, as the compiler chose when it was c_tkt_tkt.c's own: a
 * release path calls it twice. */
static __attribute__((noinline, unused)) void ls_ticket_release(struct ls_ticket *t)
{
	if (ls_ticket_serve_next(t))
		ls_futex_wake(&t->owner, 0x7fffffff);
}

/* ---- in one 64-bit word ---- */

#define LS_TICKET64_NEXT (1ull << 32)

/* The futex word: the low half (owner | PARKED). ls_futex_* only pass the
 * address to the kernel; C code reads the word as a whole. */
static inline _Atomic uint32_t *ls_ticket64_futex(_Atomic uint64_t *w)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (_Atomic uint32_t *)(void *)w;
#else
	return (_Atomic uint32_t *)(void *)w + 1;
#endif
}

static inline uint32_t ls_ticket64_owner(uint64_t v)
{
	return (uint32_t)v & LS_TICKET_MASK;
}

static inline uint32_t ls_ticket64_next(uint64_t v)
{
	return (uint32_t)(v >> 32) & LS_TICKET_MASK;
}

/* Takes a ticket and waits for it, following the waiting policy. */
static inline void ls_ticket64_acquire(_Atomic uint64_t *w)
{
	/* relaxed: the ticket orders nothing; (A) does */
	uint32_t mine =
	    ls_ticket64_next(atomic_fetch_add_explicit(w, LS_TICKET64_NEXT, memory_order_relaxed));
	struct ls_spin s = LS_SPIN_INIT;
	for (;;) {
		LS_INJECT();
		/* (A) acquire: pairs with (B) in ls_ticket64_release */
		uint64_t v = atomic_load_explicit(w, memory_order_acquire);
		if (ls_ticket64_owner(v) == mine)
			return;
		if (!ls_spin_step(&s))
			continue;
		/* Park (wait.h's protocol): the CAS orders us against the
		 * release's CAS; either it sees PARKED and wakes, or ours
		 * fails and we look again. */
		if (!(v & LS_PARKED) && !atomic_compare_exchange_strong_explicit(
					    w, &v, v | LS_PARKED, memory_order_relaxed, memory_order_relaxed))
			continue;
		LS_INJECT();
		ls_futex_wait(ls_ticket64_futex(w), (uint32_t)v | LS_PARKED, 0);
	}
}

/* Takes the lock if it is free with no ticket out. */
static inline bool ls_ticket64_try(_Atomic uint64_t *w)
{
	/* (A) acquire: pairs with (B) */
	uint64_t v = atomic_load_explicit(w, memory_order_acquire);
	if (ls_ticket64_next(v) != ls_ticket64_owner(v))
		return false;
	LS_INJECT();
	return atomic_compare_exchange_strong_explicit(w, &v, v + LS_TICKET64_NEXT, memory_order_acquire,
						       memory_order_relaxed);
}

/* Serves the next ticket, clears PARKED and wakes the sleepers if it was
 * set. */
static inline void ls_ticket64_release(_Atomic uint64_t *w)
{
	uint64_t v = atomic_load_explicit(w, memory_order_relaxed), n;
	LS_INJECT();
	do
		n = (v & ~0xffffffffull) | (((uint32_t)v + 1) & LS_TICKET_MASK);
	/* (B) release: pairs with (A) */
	while (!atomic_compare_exchange_weak_explicit(w, &v, n, memory_order_release, memory_order_relaxed));
	if (v & LS_PARKED)
		ls_futex_wake(ls_ticket64_futex(w), 0x7fffffff);
}

#endif
