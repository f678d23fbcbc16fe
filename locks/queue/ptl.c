/*
 * ptl.c - the partitioned ticket lock.
 *
 * Dice, "Brief Announcement: A Partitioned Ticket Lock", SPAA 2011 (not in
 * ../shared/papers; its abstract and the matching patent, US 9158596, were
 * read here): a ticket lock whose single "now serving" word is split
 * into N grant slots, each the sole occupant of its cache line. A thread
 * takes a ticket with fetch-and-increment; the holder of ticket t releases by
 * writing t+1 into grant slot (t+1) mod N; a waiter watches only its own
 * ticket's slot. "First-in, first-enabled": FIFO, with semi-local spinning
 * (only waiters N tickets apart share a line) and fixed memory overhead
 * whatever the number of threads, since slots hold tickets, not flags.
 * Layout, states and the waiting policy (only the next ticket's waiter is
 * woken; the new holder wakes it as it acquires): slots.h, shared with alock,
 * which is AMP's array lock turned into this lock.
 *
 * Partitions: LOCKSWAP_PTL_SLOTS, default 4 (the paper leaves N to the user;
 * 4 keeps the overhead at 5 cache lines and gives each waiter on a 2-4 CPU
 * machine a line of its own), up to 16 (17 lines, out of line; the shim
 * takes the size before reading parameters, so it is the maximum).
 *
 * After the release and misuse (lock.h): slots.h's (one exchange of a
 * slot's word, and the holder field names the ticket to serve).
 */
#include "slots.h"

#define MAX_SLOTS 16

static uint64_t nslots = 4;

static const struct ls_param ptl_params[] = {
    {"LOCKSWAP_PTL_SLOTS", "grant slots (partitions) per lock, count", &nslots, 1, MAX_SLOTS},
    {0},
};

static void ptl_lock(void *state)
{
	slots_lock(state, (uint32_t)nslots);
}

static int ptl_trylock(void *state)
{
	return slots_trylock(state, (uint32_t)nslots);
}

static void ptl_unlock(void *state)
{
	slots_unlock(state, (uint32_t)nslots);
}

static const struct ls_algo ptl_algo = {
    .name = "ptl",
    .desc = "partitioned ticket lock: grant slots hold tickets (Dice, SPAA 2011)",
    .caps = LS_CAP_FIFO,
    .rank = 17,
    .state_size = sizeof(struct slots) + MAX_SLOTS * sizeof(struct slot),
    .params = ptl_params,
    .lock = ptl_lock,
    .trylock = ptl_trylock,
    .unlock = ptl_unlock,
};
LS_REGISTER_ALGO(ptl_algo);
