/*
 * wait.h - how every lockswap algorithm waits: the waiting policy, futexes,
 * the monotonic clock, and the "word + parked bit" protocol.
 *
 * Policy (LOCKSWAP_WAIT, set once by the shim before any lock is used):
 *   spin   - spin with cpu_relax for ever;
 *   yield  - spin ls_wait_cfg.spin times, then sched_yield between checks;
 *   park   - spin ls_wait_cfg.spin times, then sched_yield up to
 *            ls_wait_cfg.yield times, then block on a futex until the
 *            releaser wakes the waiter (the default). The yield phase is
 *            what keeps FIFO locks moving when threads outnumber cores: a
 *            hand-off to a waiter that yields costs a reschedule, a hand-off
 *            to a sleeper costs a wake-up through the kernel.
 *
 * A waiting loop looks like this:
 *
 *	struct ls_spin s = LS_SPIN_INIT;
 *	while (!condition) {
 *		if (ls_spin_step(&s)) {  // true only under "park", budget spent
 *			park on the word, as the algorithm's protocol says;
 *			s = (struct ls_spin)LS_SPIN_INIT; // woken: a fresh budget
 *		}
 *	}
 *
 * A waiter woken while its turn has not come was woken ahead of time on
 * purpose (ls_word_prewake: its turn is next), so it spins and yields a
 * fresh budget before it sleeps again.
 *
 * The parked-bit protocol (LS_PARKED) serves any 32-bit word that waiters
 * watch and one releaser changes: a waiter that wants to sleep sets
 * LS_PARKED in the word with a CAS and futex-waits on the new value; the
 * releaser changes the word with an exchange (ls_word_publish) and issues a
 * futex wake only if the old value had LS_PARKED. The bit lives in the word
 * itself, so there is no Dekker-style race between "waiter decides to sleep"
 * and "releaser decides not to wake": the exchange and the CAS are ordered by
 * the word's modification order. Values used with this protocol must leave
 * bit 31 free. Memory a futex word lives in must stay mapped (queue nodes are
 * type-stable, so a late wake on a recycled node is only a spurious wake-up,
 * which every waiter here tolerates by re-checking).
 */
#ifndef LS_WAIT_H
#define LS_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "lock.h"

enum ls_policy { LS_WAIT_SPIN, LS_WAIT_YIELD, LS_WAIT_PARK };

struct ls_wait_cfg {
	enum ls_policy policy;
	unsigned spin;	/* cpu_relax iterations before yield/park */
	unsigned yield; /* park only: sched_yield calls before blocking */
};
extern struct ls_wait_cfg ls_wait_cfg;

#define LS_WAIT_SPIN_DEFAULT 256u
#define LS_WAIT_YIELD_DEFAULT 64u
#define LS_PARKED 0x80000000u

static inline void ls_cpu_relax(void)
{
	LS_TEST_POINT(LS_POINT_WAITING); /* every wait spins here first (lock.h) */
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* CLOCK_MONOTONIC in nanoseconds (vDSO, no syscall). */
uint64_t ls_now_ns(void);

/* A deadline that never comes: what ls_deadline_ns gives for a time that
 * 64 bits of nanoseconds cannot hold (584 years after the clock's epoch). */
#define LS_DEADLINE_NEVER UINT64_MAX

/* The absolute time *abs on `clock` (CLOCK_MONOTONIC, or CLOCK_REALTIME for
 * any other: the caller has refused the clocks glibc refuses) as a deadline
 * in ls_now_ns() time, for the timed calls. Every tv_sec a caller can pass
 * is a time: one past what 64 bits of nanoseconds hold (tv_sec >=
 * 18446744074, up to LONG_MAX: programs write time(NULL) + 1e10 or 1LL <<
 * 62 for "for ever") saturates at LS_DEADLINE_NEVER instead of wrapping
 * round to a time long past, and a CLOCK_REALTIME one saturates too when
 * its distance from now, added to the monotonic clock, would overflow. A
 * CLOCK_REALTIME time is converted now: a later step of the realtime clock
 * does not move the deadline. Returns EINVAL (tv_nsec outside [0, 1e9)),
 * ETIMEDOUT (the time is not after now; a negative tv_sec is long past, as
 * glibc takes it), or 0 with *out set. */
int ls_deadline_ns(clockid_t clock, const struct timespec *abs, uint64_t *out);

struct ls_spin {
	unsigned n;
};
#define LS_SPIN_INIT                                                                                         \
	{                                                                                                    \
		0                                                                                            \
	}

/* One step of a waiting loop; see the file comment. Out of line past the
 * budget so the spinning part stays small. ls_spin_step_n is the same with
 * a spin budget of the caller's instead of ls_wait_cfg.spin (the
 * time-published locks spin longer: locks/common/tpclock.h). */
bool ls_spin_slow(struct ls_spin *s, unsigned spin);
static inline bool ls_spin_step_n(struct ls_spin *s, unsigned spin)
{
	if (LS_LIKELY(s->n < spin)) {
		s->n++;
		ls_cpu_relax();
		return false;
	}
	return ls_spin_slow(s, spin);
}
static inline bool ls_spin_step(struct ls_spin *s)
{
	return ls_spin_step_n(s, ls_wait_cfg.spin);
}

/* Randomised exponential backoff (AMP 7.4, Fig. 7.5), for backoff, hbo and
 * c-bo-mcs's global lock: a pause of a random time below *limit ns (not
 * past deadline, if any; 0: none), then *limit doubles up to max. Each
 * pause step is a step of the waiting policy: returns true when, under
 * park, the budgets are spent (the caller then sleeps). */
bool ls_backoff(struct ls_spin *s, uint64_t *limit, uint64_t max, uint64_t deadline);

/* Futexes (process-private). ls_futex_wait blocks while *addr == val, until
 * woken, interrupted, or the absolute ls_now_ns() deadline passes (0: none).
 * Returns 0 (woken or value differed), EINTR, or ETIMEDOUT. */
int ls_futex_wait(_Atomic uint32_t *addr, uint32_t val, uint64_t deadline_ns);
void ls_futex_wake(_Atomic uint32_t *addr, int n);
/* The same with a FUTEX_BITSET: a wake reaches only the sleepers whose
 * bitset shares a bit with its own (locks/queue/turn.h: many waiters on one
 * word, only the one whose turn comes is woken). */
int ls_futex_wait_bits(_Atomic uint32_t *addr, uint32_t val, uint64_t deadline_ns, uint32_t bits);
void ls_futex_wake_bits(_Atomic uint32_t *addr, int n, uint32_t bits);

/* Wait, following the policy, while (*w & ~LS_PARKED) == val. Returns the
 * new value (without LS_PARKED) once it differs, read with acquire ordering.
 * Any number of waiters may wait on one word. */
uint32_t ls_wait_while_eq(_Atomic uint32_t *w, uint32_t val);
/* Same with an absolute deadline (ls_now_ns time); returns 0 when the word
 * changed (*out receives the new value) or ETIMEDOUT. */
int ls_wait_while_eq_until(_Atomic uint32_t *w, uint32_t val, uint64_t deadline_ns, uint32_t *out);

/* Sets `bit` in a word where it is clear, keeping the other bits: the
 * trylock of a lock whose word is LOCKED plus waiter bits (auto, shfl).
 * True if this thread set it. relaxed load: the CAS orders (acquire, pairing
 * with the lock's release), and a stale value only fails it. */
static inline bool ls_word_try_set(_Atomic uint32_t *w, uint32_t bit)
{
	uint32_t v = atomic_load_explicit(w, memory_order_relaxed);
	while (!(v & bit))
		if (atomic_compare_exchange_weak_explicit(w, &v, v | bit, memory_order_acquire,
							  memory_order_relaxed))
			return true;
	return false;
}

/* Release side: store `val` with release ordering (as part of a seq_cst
 * exchange) and wake all parked waiters if any. Returns the old value
 * without LS_PARKED. */
static inline uint32_t ls_word_publish(_Atomic uint32_t *w, uint32_t val)
{
	/* release: pairs with the acquire load in ls_wait_while_eq */
	uint32_t old = atomic_exchange_explicit(w, val, memory_order_acq_rel);
	if (LS_UNLIKELY(old & LS_PARKED))
		ls_futex_wake(w, 0x7fffffff);
	return old & ~LS_PARKED;
}

/* ls_word_publish as the store that releases a lock (a hand-over to the
 * waiter on w): the test point sits between the store and the wake, which
 * only passes w's address to the kernel (lock.h, "After the release"). */
static inline uint32_t ls_word_release(_Atomic uint32_t *w, uint32_t val)
{
	/* release: pairs with the acquire load in ls_wait_while_eq */
	uint32_t old = atomic_exchange_explicit(w, val, memory_order_acq_rel);
	LS_TEST_POINT(LS_POINT_RELEASED);
	if (LS_UNLIKELY(old & LS_PARKED))
		ls_futex_wake(w, 0x7fffffff);
	return old & ~LS_PARKED;
}

/* Acquire side of "keep the next waiter awake": a new holder calls it on
 * the word its successor waits on (the word keeps its value). If the
 * successor sleeps there (LS_PARKED), the bit is cleared and it is woken:
 * it finds its turn not come yet and spins and yields a fresh budget (every
 * waiting loop here restarts its budget after a wake-up), so when the
 * holder releases, the successor is usually running and the hand-off costs
 * no wake-up in the critical path; the wake-up's latency overlaps the
 * critical section instead. A successor that parks again meanwhile sets
 * the bit again and is woken by the release as usual. */
void ls_word_prewake_slow(_Atomic uint32_t *w, uint32_t v);
static inline void ls_word_prewake(_Atomic uint32_t *w)
{
#ifndef LS_NO_PREWAKE /* a build without it, for scripts/sweeps/bench-oversub */
	/* relaxed: a hint; the CAS of ls_word_prewake_slow decides */
	uint32_t v = atomic_load_explicit(w, memory_order_relaxed);
	if (LS_UNLIKELY(v & LS_PARKED))
		ls_word_prewake_slow(w, v);
#else
	(void)w;
#endif
}

/* Timed acquisition for algorithms without native timeout: trylock, then
 * retry following the waiting policy (spin, then yield; under "park" sleep
 * in doubling steps from 1 us up to 1 ms) until it succeeds or the deadline
 * passes. Not FIFO: a timed waiter can be overtaken by queued waiters. */
int ls_timedlock_fallback(const struct ls_algo *a, void *state, uint64_t deadline_ns);
/* The loop behind it, for any try operation: calls try(arg) until it
 * returns something other than EBUSY (returned as is) or the deadline
 * passes (ETIMEDOUT), waiting between attempts as above. */
int ls_poll_until(int (*try)(void *arg), void *arg, uint64_t deadline_ns);

#endif
