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
 * unlocked state (next == owner) is unlocked. Tickets wrap at 2^32 on both
 * counters alike.
 *
 *	next		tickets handed out (only fetch_add and trylock's CAS)
 *	owner		ticket allowed to hold the lock (only the holder writes)
 *	sleepers	waiters that may sleep, one bit per ticket mod 32
 *			(turn.h); futex word of the sleepers
 *
 * Waiting policy (turn.h): every waiter watches `owner`, but a sleeper sleeps
 * with its ticket's bit, and a release wakes only the waiter whose ticket
 * comes up (with 32 or more sleepers, also those 32 tickets apart), not
 * every sleeper. The holder, as soon as it has waited for and got the lock,
 * also wakes the next ticket's waiter if it sleeps, so that its wake-up
 * overlaps the critical section. No native timeout (a ticket cannot be
 * given back): timedlock is the shim's fallback, which succeeds only when
 * trylock does, i.e. with no queue. No queue nodes; the state is 12 bytes,
 * inline.
 */
#include <errno.h>
#include <stdatomic.h>

#include "lock.h"
#include "turn.h"
#include "wait.h"

struct ticket {
	_Atomic uint32_t next;
	_Atomic uint32_t owner;
	_Atomic uint32_t sleepers;
};
_Static_assert(sizeof(struct ticket) <= LS_INLINE_STATE, "inline state");

static __attribute__((noinline)) void ticket_wait(struct ticket *l, uint32_t t)
{
	/* (A) acquire: pairs with (B) */
	ls_turn_wait(&l->owner, &l->sleepers, t, t);
	turn_prewake(&l->sleepers, t + 1); /* keep the next waiter awake */
}

static void ticket_lock(void *state)
{
	struct ticket *l = state;
	/* relaxed: the ticket orders nothing; (A) below does */
	uint32_t t = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);
	LS_INJECT();
	/* (A) acquire: pairs with (B) in ticket_unlock */
	if (LS_UNLIKELY(atomic_load_explicit(&l->owner, memory_order_acquire) != t))
		ticket_wait(l, t);
}

static int ticket_trylock(void *state)
{
	struct ticket *l = state;
	/* (A) acquire: pairs with (B) in ticket_unlock */
	uint32_t o = atomic_load_explicit(&l->owner, memory_order_acquire);
	uint32_t n = atomic_load_explicit(&l->next, memory_order_relaxed);
	if (n != o)
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
	/* Only the holder writes owner. */
	uint32_t o = atomic_load_explicit(&l->owner, memory_order_relaxed) + 1;
	LS_INJECT();
	/* (B) release: pairs with (A); seq_cst (an exchange): the Dekker pair
	 * of turn.h with a sleeper of ticket o */
	atomic_exchange_explicit(&l->owner, o, memory_order_seq_cst);
	turn_wake(&l->sleepers, o);
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
