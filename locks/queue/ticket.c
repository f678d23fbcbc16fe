/*
 * ticket.c - ticket lock.
 *
 * Not in chapter 7 of Herlihy & Shavit (../shared/papers/004_...txt) as
 * such: this is the ticket lock of Mellor-Crummey & Scott, "Algorithms for
 * Scalable Synchronization on Shared-Memory Multiprocessors", ACM TOCS 9(1),
 * 1991, section 2.2 (no copy in ../shared/papers). It is the idea behind the
 * ALock of AMP 7.5.1 with a single "now serving" word instead of an array.
 *
 * A thread takes a ticket with fetch-and-increment on `next` and waits until
 * `owner` (now serving) equals it; unlock advances `owner`. FIFO. Both
 * counters start at 0, so the all-zero state is unlocked, and any copy of an
 * unlocked state (next == owner) is unlocked. Tickets are counted modulo
 * 2^31 (bit 31 of `owner` is LS_PARKED): `next` wraps at 2^32, which is 0
 * modulo 2^31 too, so masking it gives the same sequence.
 *
 *	next			tickets handed out (only fetch_add and trylock's CAS)
 *	owner & ~PARKED		ticket allowed to hold the lock (only the holder writes)
 *	owner & PARKED		a waiter may be asleep on `owner`
 *
 * Waiting policy: waiters use ls_wait_while_eq on `owner`, unlock publishes
 * the next ticket with ls_word_publish, which wakes every sleeper (they all
 * wait on one word; only the one whose ticket came up keeps running). No
 * native timeout (a ticket cannot be given back): timedlock is the shim's
 * fallback, which succeeds only when trylock does, i.e. with no queue.
 * No queue nodes; the state is 8 bytes, inline.
 */
#include <errno.h>
#include <stdatomic.h>

#include "lock.h"
#include "wait.h"

#define MASK (~LS_PARKED)

struct ticket {
	_Atomic uint32_t next;
	_Atomic uint32_t owner;
};
_Static_assert(sizeof(struct ticket) <= LS_INLINE_STATE, "inline state");

static __attribute__((noinline)) void ticket_wait(struct ticket *l, uint32_t t, uint32_t o)
{
	do {
		LS_INJECT();
		/* (A) acquire: pairs with (B) */
		o = ls_wait_while_eq(&l->owner, o);
	} while (o != t);
}

static void ticket_lock(void *state)
{
	struct ticket *l = state;
	/* relaxed: the ticket orders nothing; (A) below does */
	uint32_t t = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed) & MASK;
	LS_INJECT();
	/* (A) acquire: pairs with (B) in ticket_unlock */
	uint32_t o = atomic_load_explicit(&l->owner, memory_order_acquire) & MASK;
	if (LS_UNLIKELY(o != t))
		ticket_wait(l, t, o);
}

static int ticket_trylock(void *state)
{
	struct ticket *l = state;
	/* (A) acquire: pairs with (B) in ticket_unlock */
	uint32_t o = atomic_load_explicit(&l->owner, memory_order_acquire) & MASK;
	uint32_t n = atomic_load_explicit(&l->next, memory_order_relaxed);
	if ((n & MASK) != o)
		return EBUSY; /* held, or tickets are out */
	LS_INJECT();
	/* Take ticket o only if nobody took it since: it is being served. */
	if (!atomic_compare_exchange_strong_explicit(&l->next, &n, n + 1, memory_order_relaxed,
						     memory_order_relaxed))
		return EBUSY;
	return 0;
}

static void ticket_unlock(void *state)
{
	struct ticket *l = state;
	/* Only the holder writes the value; waiters may add PARKED. */
	uint32_t o = atomic_load_explicit(&l->owner, memory_order_relaxed) & MASK;
	LS_INJECT();
	/* (B) release: pairs with (A) */
	ls_word_publish(&l->owner, (o + 1) & MASK);
}

static const struct ls_algo ticket_algo = {
    .name = "ticket",
    .desc = "ticket lock (Mellor-Crummey & Scott, TOCS 1991, 2.2)",
    .caps = LS_CAP_FIFO,
    .rank = 13,
    .state_size = sizeof(struct ticket),
    .lock = ticket_lock,
    .trylock = ticket_trylock,
    .unlock = ticket_unlock,
};
LS_REGISTER_ALGO(ticket_algo);
