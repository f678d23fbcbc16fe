/*
 * mutexee.c - MUTEXEE, the spin-then-futex mutex of Falsafi, Guerraoui,
 * Picorel and Trigonakis, "Unlocking Energy", USENIX ATC 2016 (the MUTEXEE
 * design and its settings). Not in ../shared/papers, and only the paper's
 * abstract could be read here; the authors' own implementation (in their
 * lock library and LiTL, mutexee_in.h) was read for the design and its
 * constants.
 *
 * Design. Sleeping in the kernel and being woken costs thousands of cycles,
 * so a waiter spins for a while before it sleeps, and a releaser does not
 * pay for a wake-up that a spinner makes unnecessary. So:
 *   lock    set the lock bit; held: spin up to SPIN (8192 cycles at the
 *           paper's 2.8 GHz, LOCKSWAP_MUTEXEE_SPIN_NS) re-trying the bit;
 *           then sleep: set LOCKED|CONTENDED and futex-wait while that
 *           finds the lock held (a sleeper always leaves CONTENDED);
 *   unlock  LOCKED alone: clear it (no sleeper). Else the paper clears
 *           LOCKED and watches for WAKE (384 cycles,
 *           LOCKSWAP_MUTEXEE_WAKE_NS): if a spinner takes the lock
 *           meanwhile, no wake-up is needed (the new holder finds CONTENDED
 *           and wakes at its own unlock); if not, it clears CONTENDED and
 *           wakes one sleeper. Here the watching comes before the release
 *           (see "After the release"): spinners count themselves in the
 *           word, and an unlock that finds one releases and leaves
 *           CONTENDED for the spinner that takes the lock; one that finds
 *           none waits up to WAKE, still holding, for a thread to start
 *           spinning on it, then releases with CONTENDED cleared and wakes
 *           one sleeper.
 * Adaptation (the paper's MUTEXEE is adaptive): the contended unlocks count
 * acquisitions and futex wake-ups ("misses"); every 2048 such unlocks, more
 * than LIMIT misses (128, +1 per retry up to 256) switch the lock to futex
 * mode, in which both budgets drop to their minimum (256 and 128 cycles);
 * after RETRY periods in futex mode (8, doubling up to 32) it tries spin mode
 * again. Not FIFO: spinners barge past sleepers, which is the point.
 *
 *	word	bit 0 LOCKED, bit 8 CONTENDED (someone may sleep on `word`),
 *		bits 16-31 spinners: waiters in their spinning phase (a count
 *		mod 2^16: more spinners than that may make an unlock wake a
 *		sleeper for nothing, who sleeps again)
 *	acq, miss		this period's contended unlocks and wake-ups
 *	extra			LIMIT - 128
 *	futex_mode		0: spin mode; k > 0: k-1 periods in futex mode
 *	retry_shift		RETRY = 8 << retry_shift
 * (all zero: unlocked, spin mode, the paper's initial settings; the
 * adaptation fields are written only by the holder, in unlock, and read
 * by spinners for their budget: relaxed atomics.)
 *
 * After the release (lock.h): the paper's unlock watches the word after it
 * has released the lock, then clears CONTENDED, counts a miss and wakes a
 * sleeper, all in the mutex, which another thread may by then have taken,
 * released and freed (C++'s std::mutex is deleted without destroy). So
 * the unlock decides before it releases, while it holds the lock and its
 * fields: the question "will a spinner take the lock, so that no sleeper
 * need be woken?" is answered by the spinners that count themselves in
 * the word, which a waiter does from its first spin to the atomic that
 * takes the lock or goes to sleep (which takes it if it is free, so a
 * spinner counted by a release that woke nobody either takes the lock or
 * leaves CONTENDED set for the holder it sleeps behind). The release is a
 * CAS on the whole word, so a spinner that leaves, or a sleeper that
 * arrives, between the decision and the release fails it and the unlock
 * decides again. The miss is counted, and CONTENDED cleared, before the
 * release; after it comes only the futex wake, on the word's address
 * (lock.h allows it). The paper's window in which the lock is free for an
 * arriving thread to take is here a window in which the lock is still
 * held, an arriving thread becomes a spinner, and the unlock hands the
 * lock to it (by releasing) instead of waking a sleeper: the same saving,
 * at the price of up to WAKE of holding (only when a sleeper waits and
 * nobody spins). An uncontended unlock releases with one CAS. Misuse: an
 * unlock that finds LOCKED clear returns at once.
 *
 * Waiting policy: park is the paper's protocol above (its own budgets
 * replace LOCKSWAP_SPIN and LOCKSWAP_YIELD); yield spins the same budget,
 * then yields between attempts and never sleeps; spin spins for ever. No
 * queue nodes; no native timeout (the shim's fallback polls trylock).
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "lock.h"
#include "tpclock.h"
#include "wait.h"

#define LOCKED 1u
#define CONTENDED 0x100u
#define SPINNER 0x10000u /* one waiter spinning */
#define SPINNERS 0xffff0000u
#define PERIOD 2048u   /* contended unlocks per adaptation period */
#define LIMIT_MIN 128u /* misses per period that switch to futex mode */
#define LIMIT_MAX 256u
#define RETRY_MAX_SHIFT 2u /* RETRY 8 << 2 = 32 periods at most */
#define SPIN_MIN_NS 91u	   /* futex mode: 256 cycles at 2.8 GHz */
#define WAKE_MIN_NS 46u	   /* futex mode: 128 cycles */

struct mutexee {
	_Atomic uint32_t word;
	_Atomic uint16_t acq, miss;
	_Atomic uint8_t extra, futex_mode, retry_shift;
};
_Static_assert(sizeof(struct mutexee) <= LS_INLINE_STATE, "inline state");

static uint64_t spin_ns = 2926; /* 8192 cycles at 2.8 GHz */
static uint64_t wake_ns = 137;	/* 384 cycles */

static const struct ls_param mutexee_params[] = {
    {"LOCKSWAP_MUTEXEE_SPIN_NS", "spin mode: how long a waiter spins before it sleeps (ns)", &spin_ns, 0,
     10000000000},
    {"LOCKSWAP_MUTEXEE_WAKE_NS",
     "spin mode: how long unlock waits for a spinner before it wakes a sleeper (ns)", &wake_ns, 0,
     10000000000},
    {0},
};

/* relaxed: the adaptation fields are the holder's (see the header), read by spinners for a budget */
#define LOAD(f) atomic_load_explicit(&(f), memory_order_relaxed)
#define STORE(f, v) atomic_store_explicit(&(f), (v), memory_order_relaxed)

/* Sets LOCKED; true if it was clear (the lock is ours). acquire: pairs
 * with the release in unlock. */
static inline bool take(struct mutexee *m)
{
	return !(atomic_fetch_or_explicit(&m->word, LOCKED, memory_order_acquire) & LOCKED);
}

/* A spinner's attempt: if the lock is free, take it and stop counting
 * itself as a spinner, in one CAS. acquire: pairs with the release in
 * unlock. */
static inline bool spinner_take(struct mutexee *m)
{
	/* relaxed: a hint; the CAS decides */
	uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed);
	return !(v & LOCKED) &&
	       atomic_compare_exchange_weak_explicit(&m->word, &v, (v | LOCKED) - SPINNER,
						     memory_order_acquire, memory_order_relaxed);
}

static __attribute__((noinline)) void mutexee_wait(struct mutexee *m)
{
	uint64_t budget = LOAD(m->futex_mode) ? SPIN_MIN_NS : spin_ns, start = ls_tp_now();
	/* Count ourselves a spinner (see "After the release"), then spin:
	 * the paper re-tries the lock bit at every step. relaxed: the count
	 * is read by the unlock's CAS on the word, which the word's
	 * modification order orders with this. */
	atomic_fetch_add_explicit(&m->word, SPINNER, memory_order_relaxed);
	do {
		LS_INJECT();
		if (spinner_take(m))
			return;
		ls_cpu_relax();
	} while (ls_wait_cfg.policy == LS_WAIT_SPIN || ls_tp_now() - start < budget);
	if (ls_wait_cfg.policy == LS_WAIT_YIELD) {
		while (!spinner_take(m))
			sched_yield();
		return;
	}
	/* Sleep: a sleeper always leaves CONTENDED behind (the paper swaps
	 * LOCKED|CONTENDED in), so the holder's unlock takes its slow path
	 * and wakes somebody. The first attempt also stops counting us as a
	 * spinner, in the same atomic. acquire: pairs with the release in
	 * unlock. */
	uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed), nv;
	do {
		nv = (v - SPINNER) | LOCKED | CONTENDED;
	} while (!atomic_compare_exchange_weak_explicit(&m->word, &v, nv, memory_order_acquire,
							memory_order_relaxed));
	while (v & LOCKED) {
		LS_INJECT();
		ls_futex_wait(&m->word, nv, 0);
		v = atomic_fetch_or_explicit(&m->word, LOCKED | CONTENDED, memory_order_acquire);
		nv = v | LOCKED | CONTENDED;
	}
}

static void mutexee_lock(void *state)
{
	struct mutexee *m = state;
	if (LS_UNLIKELY(!take(m)))
		mutexee_wait(m); /* a tail call: the fast path stays a leaf */
}

static int mutexee_trylock(void *state)
{
	return take(state) ? 0 : EBUSY;
}

/* The paper's training, by the holder at each contended unlock. */
static void adapt(struct mutexee *m)
{
	if ((uint16_t)(LOAD(m->acq) + 1) % PERIOD) {
		STORE(m->acq, (uint16_t)(LOAD(m->acq) + 1));
		return;
	}
	STORE(m->acq, 0);
	uint8_t f = LOAD(m->futex_mode);
	if (!f) {
		if (LOAD(m->miss) > LIMIT_MIN + LOAD(m->extra))
			STORE(m->futex_mode, 1); /* wake-ups dominate: futex mode */
	} else if (f - 1u == (8u << LOAD(m->retry_shift))) {
		/* Enough periods in futex mode: try spin mode again, and ask
		 * for more misses before leaving it next time. */
		if (LOAD(m->retry_shift) < RETRY_MAX_SHIFT)
			STORE(m->retry_shift, (uint8_t)(LOAD(m->retry_shift) + 1));
		if (LIMIT_MIN + LOAD(m->extra) < LIMIT_MAX)
			STORE(m->extra, (uint8_t)(LOAD(m->extra) + 1));
		STORE(m->futex_mode, 0);
	} else {
		STORE(m->futex_mode, (uint8_t)(f + 1));
	}
	STORE(m->miss, 0);
}

static __attribute__((noinline)) void mutexee_unlock_slow(struct mutexee *m)
{
	/* relaxed: every CAS below orders; a stale value only fails it */
	uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed);
	if (!(v & LOCKED))
		return; /* free: an unlock too many (lock.h, misuse) */
	if (v & CONTENDED)
		adapt(m);
	uint64_t budget = LOAD(m->futex_mode) ? WAKE_MIN_NS : wake_ns, start = 0;
	uint16_t miss = LOAD(m->miss);
	LS_INJECT();
	for (;;) {
		/* Nobody asleep, or a spinner to take the lock: release and
		 * wake nobody (CONTENDED, if set, stays for the spinner that
		 * takes the lock, or for the holder it sleeps behind). release:
		 * pairs with the acquire of the next take or sleep. */
		if (!(v & CONTENDED) || (v & SPINNERS)) {
			if (atomic_compare_exchange_weak_explicit(
				&m->word, &v, v & ~LOCKED, memory_order_release, memory_order_relaxed)) {
				LS_TEST_POINT(LS_POINT_RELEASED);
				return;
			}
			continue;
		}
		/* A sleeper and no spinner: give a thread the chance to come
		 * and spin, then wake the sleeper, which sets CONTENDED again. */
		if (!start)
			start = ls_tp_now();
		if (ls_tp_now() - start < budget) {
			ls_cpu_relax();
			v = atomic_load_explicit(&m->word, memory_order_relaxed);
			continue;
		}
		/* The miss is counted while we hold the lock (the release
		 * publishes it), and taken back if the CAS fails. */
		STORE(m->miss, miss < UINT16_MAX ? (uint16_t)(miss + 1) : miss);
		if (atomic_compare_exchange_weak_explicit(&m->word, &v, v & ~(LOCKED | CONTENDED),
							  memory_order_release, memory_order_relaxed))
			break;
		STORE(m->miss, miss);
	}
	LS_TEST_POINT(LS_POINT_RELEASED);
	ls_futex_wake(&m->word, 1); /* on the address only (lock.h) */
}

static void mutexee_unlock(void *state)
{
	struct mutexee *m = state;
	uint32_t held = LOCKED;
	/* Held, nobody asleep: just clear. release: pairs with take's acquire. */
	if (LS_LIKELY(atomic_compare_exchange_strong_explicit(&m->word, &held, 0, memory_order_release,
							      memory_order_relaxed))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		return;
	}
	mutexee_unlock_slow(m);
}

static const struct ls_algo mutexee_algo = {
    .name = "mutexee",
    .desc =
	"MUTEXEE: spin-then-futex mutex, adaptive budgets, unlock avoids wake-ups (Falsafi et al., ATC 2016)",
    .caps = 0,
    .rank = 80,
    .state_size = sizeof(struct mutexee),
    .params = mutexee_params,
    .lock = mutexee_lock,
    .trylock = mutexee_trylock,
    .unlock = mutexee_unlock,
};
LS_REGISTER_ALGO(mutexee_algo);
