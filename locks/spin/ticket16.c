/*
 * ticket16.c - a ticket lock in one 32-bit word, for pthread_spinlock_t
 * (locks/spin/spinlock.h): the spinlock family's FIFO lock.
 *
 * Mellor-Crummey & Scott, "Algorithms for Scalable Synchronization on
 * Shared-Memory Multiprocessors", ACM TOCS 9(1), 1991, section 2.2 (the
 * ticket lock), as locks/queue/ticket.c, with both counters in the 4 bytes
 * a spinlock has. Word:
 *
 *	bits 0-14	owner: the ticket being served
 *	bit 15		PARKED: a waiter may sleep on the word
 *	bits 16-31	next: tickets handed out (fetch_add of 1 << 16; the
 *			carry out of bit 31 is dropped)
 *
 * Tickets are compared modulo 2^15 (2^16 is a multiple, so next's wrap
 * keeps them in step): at most 32,767 threads may wait on one spinlock at
 * once. All-zero is unlocked, and so is any copy of an unlocked word
 * (owner = next mod 2^15).
 *
 *   lock    t := fetch_add(word, 1 << 16) >> 16; wait until owner = t
 *   unlock  owner := owner + 1, clearing PARKED in the same CAS; if it
 *           was set, wake every sleeper (the one whose turn came goes on,
 *           the others sleep again: the word has no room to say whose turn
 *           a sleeper waits for, as ticket.c's sleepers word does)
 *   trylock CAS next + 1 from a word whose owner = next
 * An unlock of a free spinlock (owner = next) changes nothing: glibc's
 * stores the free value, which is harmless too, and a ticket lock that
 * advanced owner past next would hand the next ticket out as already
 * served. Waiting follows the policy (park: LS_PARKED-style bit, futex on
 * the word). No timed operation (spinlocks have none); no queue nodes.
 *
 * fork() (fork.h, as turn.h's ls_tkt): a ticket records no waiter, so in a
 * fork child the first hand-over of a spinlock (ls_fork_first) voids every
 * ticket out instead of serving the next: owner := next, the lock free,
 * every sleeper woken. A live waiter of the child whose ticket the owner
 * has passed takes another; told from a ticket still ahead by distance, so
 * in a fork child at most 16,383 threads may wait on one spinlock at once.
 * The unlock's fast path is the holder's ticket alone, nobody asleep.
 *
 * After the release (lock.h): the CAS that serves the next ticket is the
 * unlock's last access to the word; the futex wake that may follow passes
 * its address to the kernel only (a wake on memory freed or reused
 * meanwhile wakes nobody, or a waiter that re-checks). An unlock too many
 * that races with a hand-over (the holder's next ticket served again
 * before its waiter saw its turn) makes that waiter wait for a turn that
 * has passed: the racing misuse of README's Known limits.
 */
#include <errno.h>
#include <stdatomic.h>

#include "fork.h"
#include "lock.h"
#include "spinlock.h"
#include "wait.h"

#define OWNER 0x7fffu
#define PARKED 0x8000u
#define NEXT1 0x10000u

struct ticket16 {
	_Atomic uint32_t word;
};
_Static_assert(sizeof(struct ticket16) <= LS_SPIN_STATE, "fits a pthread_spinlock_t");

static inline uint32_t next_of(uint32_t v)
{
	return (v >> 16) & OWNER;
}

/* In a fork child: ticket t was voided (see the header). */
static inline bool voided(uint32_t v, uint32_t t)
{
	return ls_fork_child() && ((t - v) & OWNER) >= 0x4000u;
}

static __attribute__((noinline)) void t16_wait(struct ticket16 *l, uint32_t t)
{
	struct ls_spin s = LS_SPIN_INIT;
	for (;;) {
		/* (A) acquire: pairs with (B) in t16_unlock */
		uint32_t v = atomic_load_explicit(&l->word, memory_order_acquire);
		if ((v & OWNER) == t)
			return;
		if (LS_UNLIKELY(voided(v, t))) {
			/* (A) acquire, when the lock was free */
			v = atomic_fetch_add_explicit(&l->word, NEXT1, memory_order_acquire);
			if ((v & OWNER) == next_of(v))
				return;
			t = next_of(v);
			s = (struct ls_spin)LS_SPIN_INIT;
			continue;
		}
		if (ls_spin_step(&s)) {
			/* The CAS orders us against the unlock's: either it sees
			 * PARKED and wakes, or we see its new owner and retry. */
			if ((v & PARKED) || atomic_compare_exchange_strong_explicit(&l->word, &v, v | PARKED,
										    memory_order_relaxed,
										    memory_order_relaxed)) {
				LS_INJECT();
				ls_futex_wait(&l->word, v | PARKED, 0);
			}
			s = (struct ls_spin)LS_SPIN_INIT;
		}
	}
}

static void t16_lock(void *state)
{
	struct ticket16 *l = state;
	/* (A) acquire, when the lock was free */
	uint32_t v = atomic_fetch_add_explicit(&l->word, NEXT1, memory_order_acquire);
	LS_INJECT();
	if (LS_UNLIKELY((v & OWNER) != next_of(v)))
		t16_wait(l, next_of(v));
}

static int t16_trylock(void *state)
{
	struct ticket16 *l = state;
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
	return (v & OWNER) == next_of(v) &&
		       atomic_compare_exchange_strong_explicit(&l->word, &v, v + NEXT1, memory_order_acquire,
							       memory_order_relaxed)
		   ? 0
		   : EBUSY;
}

/* Every unlock but the holder's ticket alone with nobody asleep. */
static __attribute__((noinline)) void t16_unlock_slow(struct ticket16 *l, uint32_t v)
{
	uint32_t n;
	bool rebase = false;
	do {
		if ((v & OWNER) == next_of(v))
			return; /* free: an unlock of an unheld spinlock */
		/* fork (see the header): the first hand-over in a fork child */
		if (!rebase && ((next_of(v) - v) & OWNER) > 1 && ls_fork_child())
			rebase = ls_fork_first(l);
		n = (v & ~(OWNER | PARKED)) | ((rebase ? next_of(v) : v + 1) & OWNER);
		LS_INJECT();
		/* (B) release: pairs with (A) */
	} while (!atomic_compare_exchange_weak_explicit(&l->word, &v, n, memory_order_release,
							memory_order_relaxed));
	LS_TEST_POINT(LS_POINT_RELEASED);
	if (v & PARKED)
		ls_futex_wake(&l->word, 0x7fffffff);
}

static void t16_unlock(void *state)
{
	struct ticket16 *l = state;
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
	/* The holder's ticket alone, nobody asleep: one CAS. */
	if (LS_LIKELY(!(v & PARKED) && ((next_of(v) - v) & OWNER) == 1)) {
		LS_INJECT();
		/* (B) release: pairs with (A) */
		if (LS_LIKELY(atomic_compare_exchange_strong_explicit(
			&l->word, &v, (v & ~OWNER) | ((v + 1) & OWNER), memory_order_release,
			memory_order_relaxed))) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			return;
		}
	}
	t16_unlock_slow(l, v);
}

static const struct ls_algo ticket16_algo = {
    .name = "ticket16",
    .desc = "ticket lock in one 32-bit word, for spinlocks: FIFO (Mellor-Crummey & Scott, TOCS 1991, 2.2)",
    .caps = LS_CAP_FIFO,
    .rank = 20,
    .state_size = sizeof(struct ticket16),
    .lock = t16_lock,
    .trylock = t16_trylock,
    .unlock = t16_unlock,
};
LS_REGISTER_SPINALGO(ticket16_algo);
