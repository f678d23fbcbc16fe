/*
 * hbo.c - HBO, the hierarchical backoff lock.
 *
 * Herlihy & Shavit, The Art of Multiprocessor Programming, ch. 7, section
 * 7.8.1 (Fig. 7.27, HBOLock), ../shared/papers/004_c3117dc34b7d1b6f.txt; a
 * variant of Radović and Hagersten's lock. A test-and-set lock whose word
 * holds the holder's cluster: a thread that fails to take it reads the
 * word and backs off for a short time if the holder is of its own cluster
 * (LOCKSWAP_HBO_LOCAL_MIN..MAX ns) and for a long time otherwise
 * (LOCKSWAP_HBO_REMOTE_MIN..MAX), so that at a release the holder's
 * cluster-mates are likelier to be the ones trying. Each back-off is
 * randomised below a limit that doubles from MIN to MAX (AMP's Backoff,
 * Fig. 7.5), one limit per kind per acquisition, as in Fig. 7.27. Nothing
 * bounds how long the other clusters may wait (the book's "too successful
 * in exploiting locality"): LOCKSWAP_COHORT_PASSES does not apply.
 *
 *	word	0			free
 *		cluster + 1		held by a thread of that cluster
 *		| LS_PARKED		a thread may be asleep on the word
 *
 * Waiting policy. Each pause of a back-off is a step of the policy
 * (ls_spin_step); under park, once the budgets are spent, a waiter sets
 * LS_PARKED with a CAS on the held word and sleeps; unlock exchanges 0 in
 * and wakes one sleeper if the bit was set; a thread that has slept then
 * acquires with its value | LS_PARKED, so that a wake-up it may have
 * consumed is passed on (ttas_word.h's protocol, and its reasons). Native
 * timeout: the same loop with a deadline. No queue nodes.
 *
 * After the release (lock.h): the exchange that frees the word is the last
 * access; a futex wake on its address may follow. Misuse: an unlock of a
 * free lock exchanges 0 for 0.
 */
#include <errno.h>
#include <stdatomic.h>

#include "hier.h"
#include "lock.h"
#include "wait.h"

struct hbo {
	_Atomic uint32_t word;
};
_Static_assert(sizeof(struct hbo) <= LS_INLINE_STATE, "inline state");

static uint64_t local_min = 100, local_max = 1000, remote_min = 1000, remote_max = 10000;

static const struct ls_param hbo_params[] = {
    {"LOCKSWAP_HBO_LOCAL_MIN", "first back-off limit when the holder is of our cluster, in ns", &local_min, 1,
     1000000000},
    {"LOCKSWAP_HBO_LOCAL_MAX", "largest back-off limit when the holder is of our cluster, in ns", &local_max,
     1, 1000000000},
    {"LOCKSWAP_HBO_REMOTE_MIN", "first back-off limit when the holder is of another cluster, in ns",
     &remote_min, 1, 1000000000},
    {"LOCKSWAP_HBO_REMOTE_MAX", "largest back-off limit when the holder is of another cluster, in ns",
     &remote_max, 1, 1000000000},
    {0},
};

static __attribute__((noinline)) int hbo_wait(struct hbo *l, uint32_t mine, uint64_t deadline)
{
	uint32_t want = mine;
	uint64_t local = local_min, remote = remote_min;
	struct ls_spin s = LS_SPIN_INIT;
	for (;;) {
		/* relaxed: a hint; the CAS that follows decides and orders */
		uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
		if (v == 0) {
			LS_INJECT();
			/* acquire: pairs with the release exchange in hbo_unlock */
			if (atomic_compare_exchange_strong_explicit(&l->word, &v, want, memory_order_acquire,
								    memory_order_relaxed))
				return 0;
		}
		if (deadline && ls_now_ns() >= deadline)
			break;
		if (v == 0)
			continue; /* taken between our load and our CAS: read who has it */
		/* Fig. 7.27, lines 21-26 */
		bool own = (v & ~LS_PARKED) == mine;
		LS_INJECT();
		if (!ls_backoff(&s, own ? &local : &remote, own ? local_max : remote_max, deadline))
			continue;
		/* Park. The CAS orders us against unlock's exchange: either
		 * unlock sees PARKED and wakes, or we see 0. */
		if (!(v & LS_PARKED) &&
		    !atomic_compare_exchange_strong_explicit(&l->word, &v, v | LS_PARKED,
							     memory_order_relaxed, memory_order_relaxed))
			continue;
		want = mine | LS_PARKED;
		LS_INJECT();
		if (ls_futex_wait(&l->word, v | LS_PARKED, deadline) == ETIMEDOUT)
			break;
	}
	if (want & LS_PARKED)
		ls_futex_wake(&l->word, 1); /* we may hold the only wake-up: pass it on */
	return ETIMEDOUT;
}

static inline bool hbo_try(struct hbo *l, uint32_t mine)
{
	uint32_t zero = 0;
	/* acquire: pairs with the release exchange in hbo_unlock */
	return atomic_compare_exchange_strong_explicit(&l->word, &zero, mine, memory_order_acquire,
						       memory_order_relaxed);
}

static void hbo_lock(void *state)
{
	uint32_t mine = ls_cluster() + 1;
	if (LS_LIKELY(hbo_try(state, mine)))
		return;
	hbo_wait(state, mine, 0);
}

static int hbo_trylock(void *state)
{
	return hbo_try(state, ls_cluster() + 1) ? 0 : EBUSY;
}

static int hbo_timedlock(void *state, uint64_t deadline)
{
	uint32_t mine = ls_cluster() + 1;
	return hbo_try(state, mine) ? 0 : hbo_wait(state, mine, deadline);
}

static void hbo_unlock(void *state)
{
	struct hbo *l = state;
	/* release: pairs with the acquiring CAS in hbo_try and hbo_wait */
	uint32_t old = atomic_exchange_explicit(&l->word, 0, memory_order_release);
	LS_TEST_POINT(LS_POINT_RELEASED);
	LS_INJECT();
	if (LS_UNLIKELY(old & LS_PARKED))
		ls_futex_wake(&l->word, 1);
}

static const struct ls_algo hbo_algo = {
    .name = "hbo",
    .desc = "hierarchical backoff lock, shorter backoff near the holder (Herlihy & Shavit AMP 7.8.1)",
    .caps = LS_CAP_HIER | LS_CAP_TIMEOUT,
    .rank = 70,
    .state_size = sizeof(struct hbo),
    .params = hbo_params,
    .lock = hbo_lock,
    .trylock = hbo_trylock,
    .timedlock = hbo_timedlock,
    .unlock = hbo_unlock,
};
LS_REGISTER_ALGO(hbo_algo);
