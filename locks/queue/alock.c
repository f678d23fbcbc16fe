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
 * for one releases both. Here a slot holds the TICKET that may proceed,
 * which is Dice's partitioned ticket lock (slots.h, shared with ptl): the
 * waiter with ticket t waits until slot[t mod N] == t, and the holder of t
 * releases by writing t+1 into slot[(t+1) mod N]; N only decides how many
 * waiters spin on lines of their own.
 *
 * Slots: LOCKSWAP_ALOCK_SLOTS, default 16 (at least the number of threads
 * that spin at once, itself at most the number of CPUs, on most machines),
 * up to 32, which fixes the state at 33 cache lines (2112 bytes, out of
 * line; the shim takes the size before reading parameters, so it is the
 * maximum). Layout, states and waiting policy: slots.h.
 *
 * After the release and misuse (lock.h): slots.h's (one exchange of a
 * slot's word, and the holder field names the ticket to serve).
 */
#include "slots.h"

#define MAX_SLOTS 32
_Static_assert(sizeof(struct slots) + MAX_SLOTS * sizeof(struct slot) == (MAX_SLOTS + 1) * LS_CACHELINE,
	       "one line per slot");

static uint64_t nslots = 16;

static const struct ls_param alock_params[] = {
    {"LOCKSWAP_ALOCK_SLOTS", "slots per lock (waiters beyond it share slots), count", &nslots, 1, MAX_SLOTS},
    {0},
};

static void alock_lock(void *state)
{
	slots_lock(state, (uint32_t)nslots);
}

static int alock_trylock(void *state)
{
	return slots_trylock(state, (uint32_t)nslots);
}

static void alock_unlock(void *state)
{
	slots_unlock(state, (uint32_t)nslots);
}

static const struct ls_algo alock_algo = {
    .name = "alock",
    .desc = "Anderson's array lock, slots hold tickets (Herlihy & Shavit AMP 7.5.1)",
    .caps = LS_CAP_FIFO,
    .rank = 14,
    .state_size = (sizeof(struct slots) + MAX_SLOTS * sizeof(struct slot)),
    .params = alock_params,
    .lock = alock_lock,
    .trylock = alock_trylock,
    .unlock = alock_unlock,
};
LS_REGISTER_ALGO(alock_algo);
