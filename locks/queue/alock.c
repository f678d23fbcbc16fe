/*
 * alock.c - Anderson's array-based queue lock, safe with more threads than
 * slots.
 *
 * Herlihy & Shavit, The Art of Multiprocessor Programming, ch. 7, section
 * 7.5.1 (Figs. 7.7-7.8, ALock), ../shared/papers/004_c3117dc34b7d1b6f.txt.
 * A thread takes a ticket with fetch-and-increment on `tail`; its slot is
 * ticket mod N; it spins on its own slot (each slot on its own cache line,
 * the padding of Fig. 7.8) until told to go; unlock tells the next slot.
 *
 * The book's slots are booleans, correct only if N is at least the number of
 * concurrent threads: with more, two waiters share a slot and the flag meant
 * for one releases both. Here a slot holds the TICKET that may proceed: the
 * waiter with ticket t waits until slot[t mod N] == t, and the holder of t
 * releases by writing t+1 into slot[(t+1) mod N]. Waiters that share a slot
 * wait for different values, so exactly one of them goes, whatever the
 * number of threads; N only decides how many waiters spin on lines of their
 * own. There is no flag to reset. Tickets count modulo 2^31, so that N
 * need not divide the modulus: `tail` wraps at 2^32, which is 0 modulo
 * 2^31, and both sides compute the slot from the same masked ticket.
 *
 *	tail			tickets handed out
 *	holder			ticket of the current holder (for unlock, which
 *				may run on another thread); written by the holder
 *	slot[i].go		last ticket allowed to proceed among those = i mod N
 *	slot[i].sleepers	turn.h: bit (lap mod 32) set, a waiter of that
 *				lap (ticket / N) may sleep on the slot
 *
 * All zero is unlocked: slot[0] == 0 == tail lets ticket 0 go. Slots:
 * LOCKSWAP_ALOCK_SLOTS, default 16 (at least the number of threads that
 * spin at once, itself at most the number of CPUs, on most machines), up to
 * 32, which fixes the state at 33 cache lines (2112 bytes, out of line; the
 * shim takes the size before reading parameters, so it is the maximum).
 * Waiting policy (turn.h): a sleeper sleeps with its lap's bit, so a release
 * wakes only the waiter whose ticket comes up, not the others that share its
 * slot; the holder, as soon as it has waited for and got the lock, wakes the
 * next ticket's waiter if it sleeps (its wake-up overlaps the critical
 * section). No native timeout, no queue nodes.
 */
#include <errno.h>
#include <stdatomic.h>

#include "lock.h"
#include "turn.h"
#include "wait.h"

#define MASK 0x7fffffffu
#define MAX_SLOTS 32

struct alock {
	_Atomic uint32_t tail;
	uint32_t holder;
	char pad[LS_CACHELINE - 8];
	struct slot {
		_Atomic uint32_t go;
		_Atomic uint32_t sleepers;
		char pad[LS_CACHELINE - 8];
	} slot[MAX_SLOTS];
};
_Static_assert(sizeof(struct alock) == (MAX_SLOTS + 1) * LS_CACHELINE, "one line per slot");

static uint64_t nslots = 16;

static const struct ls_param alock_params[] = {
    {"LOCKSWAP_ALOCK_SLOTS", "slots per lock (waiters beyond it share slots), count", &nslots, 1, MAX_SLOTS},
    {0},
};

static inline struct slot *slot_of(struct alock *l, uint32_t t)
{
	uint32_t n = (uint32_t)nslots;
	/* a division costs ~25 cycles: mask when n is a power of two (the
	 * default), which gives the same slot */
	return &l->slot[(n & (n - 1)) == 0 ? t & (n - 1) : t % n];
}

/* The lap of ticket t: its class among the waiters of its slot (turn.h). */
static inline uint32_t lap(uint32_t t)
{
	uint32_t n = (uint32_t)nslots;
	return (n & (n - 1)) == 0 ? t >> __builtin_ctz(n) : t / n;
}

static __attribute__((noinline)) void alock_wait(struct alock *l, struct slot *s, uint32_t t)
{
	/* (A) acquire: pairs with (B) */
	ls_turn_wait(&s->go, &s->sleepers, t, lap(t));
	l->holder = t;
	uint32_t u = (t + 1) & MASK;
	turn_wake(&slot_of(l, u)->sleepers, lap(u)); /* keep the next waiter awake */
}

static void alock_lock(void *state)
{
	struct alock *l = state;
	/* relaxed: the ticket orders nothing; (A) does */
	uint32_t t = atomic_fetch_add_explicit(&l->tail, 1, memory_order_relaxed) & MASK;
	struct slot *s = slot_of(l, t);
	LS_INJECT();
	/* (A) acquire: pairs with (B) in alock_unlock */
	if (LS_UNLIKELY(atomic_load_explicit(&s->go, memory_order_acquire) != t)) {
		alock_wait(l, s, t); /* a tail call: the fast path stays a leaf */
		return;
	}
	l->holder = t;
}

static int alock_trylock(void *state)
{
	struct alock *l = state;
	uint32_t raw = atomic_load_explicit(&l->tail, memory_order_relaxed), t = raw & MASK;
	/* Free with nobody queued: the next ticket to be handed out is the one
	 * allowed to go. (A) acquire: pairs with (B) in alock_unlock. */
	if (atomic_load_explicit(&slot_of(l, t)->go, memory_order_acquire) != t)
		return EBUSY;
	LS_INJECT();
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &raw, raw + 1, memory_order_relaxed,
						     memory_order_relaxed))
		return EBUSY;
	l->holder = t;
	return 0;
}

/* Out of line, so that the unlock's fast path computes no lap. */
static __attribute__((noinline)) void alock_wake(struct alock *l, uint32_t t, uint32_t seen)
{
	ls_turn_wake_slow(&slot_of(l, t)->sleepers, lap(t), seen);
}

static void alock_unlock(void *state)
{
	struct alock *l = state;
	uint32_t t = (l->holder + 1) & MASK;
	struct slot *s = slot_of(l, t);
	LS_INJECT();
	/* (B) release: pairs with (A); seq_cst (an exchange): the Dekker pair
	 * of turn.h */
	atomic_exchange_explicit(&s->go, t, memory_order_seq_cst);
	uint32_t seen = turn_seen(&s->sleepers);
	if (LS_UNLIKELY(seen))
		alock_wake(l, t, seen);
}

static const struct ls_algo alock_algo = {
    .name = "alock",
    .desc = "Anderson's array lock, slots hold tickets (Herlihy & Shavit AMP 7.5.1)",
    .caps = LS_CAP_FIFO,
    .rank = 14,
    .state_size = sizeof(struct alock),
    .params = alock_params,
    .lock = alock_lock,
    .trylock = alock_trylock,
    .unlock = alock_unlock,
};
LS_REGISTER_ALGO(alock_algo);
