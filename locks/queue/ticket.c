/*
 * ticket.c - ticket lock.
 *
 * Not in chapter 7 of Herlihy & Shavit (../shared/papers/004_...txt) as
 * such: this is the ticket lock of Mellor-Crummey & Scott, "Algorithms for
 * Scalable Synchronization on Shared-Memory Multiprocessors", ACM TOCS 9(1),
 * 1991, section 2.2 (no copy in ../shared/papers). It is the idea behind the
 * ALock of AMP 7.5.1 with a single "now serving" word instead of an array.
 *
 * A thread takes a ticket with fetch-and-increment and waits until it is
 * being served; unlock serves the next one. FIFO. The lock is one 64-bit
 * word, turn.h's ls_tkt: tickets handed out (`next`), tickets not yet
 * released (`pending`, so that the ticket being served is next - pending)
 * and one sleeper bit per class of tickets. Taking a ticket adds to next
 * and pending at once and holds the lock if pending was 0, so the
 * uncontended lock is one fetch_add; a release is one CAS of pending - 1.
 * All-zero is unlocked, any copy of an unlocked word is unlocked, and
 * tickets wrap at 2^32.
 *
 * Waiting policy (turn.h): a sleeper sleeps with its ticket's class bit,
 * and a release wakes only the waiter whose ticket comes up (and, with
 * more than 8 sleepers, those 8 tickets apart), not every sleeper. The
 * holder, as soon as it has waited for and got the lock, also wakes the
 * next ticket's waiter if it sleeps, so that its wake-up overlaps the
 * critical section.
 *
 * After the release (lock.h): the release CAS returns the sleeper bits it
 * replaced, so the releaser reads nothing after it; a wake-up is a futex
 * call on the word's address. Misuse: a release finds pending 0 (free) and
 * does nothing, so an unlock of a free lock serves no ticket that nobody
 * took; two racing unlocks of a held lock release it once.
 *
 * fork() (turn.h): in a fork child, the first hand-over voids every ticket
 * out (those of threads the fork left behind among them) and frees the
 * lock; a live waiter whose ticket was voided takes another.
 *
 * No native timeout (a ticket cannot be given back): timedlock is the
 * shim's fallback, which succeeds only when trylock does, i.e. with no
 * queue. No queue nodes; the state is 8 bytes, inline.
 */
#include <errno.h>
#include <stdatomic.h>

#include "lock.h"
#include "turn.h"
#include "wait.h"

struct ticket {
	_Atomic uint64_t word; /* turn.h's ls_tkt */
};
_Static_assert(sizeof(struct ticket) <= LS_INLINE_STATE, "inline state");

static __attribute__((noinline)) void ticket_wait(struct ticket *l, uint32_t t)
{
	ls_tkt_wait(&l->word, t);
}

static void ticket_lock(void *state)
{
	struct ticket *l = state;
	uint32_t t;
	if (LS_UNLIKELY(!ls_tkt_take(&l->word, &t)))
		ticket_wait(l, t); /* a tail call: the fast path stays a leaf */
}

static int ticket_trylock(void *state)
{
	return ls_tkt_try(&((struct ticket *)state)->word) ? 0 : EBUSY;
}

static void ticket_unlock(void *state)
{
	ls_tkt_unlock(&((struct ticket *)state)->word);
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
