/*
 * central.c - centralised reader-count locks: one word counts the readers
 * inside and holds the writer's state.
 *
 * Herlihy & Shavit, The Art of Multiprocessor Programming, ch. 8
 * "Monitors and Blocking Synchronization", section 8.3 "Readers-Writers
 * Locks": 8.3.1 SimpleReadWriteLock (a reader waits only while a writer
 * holds the lock; a writer waits until there are no readers: reader
 * preference, writers can starve) and 8.3.2 FifoReadWriteLock (a writer
 * first claims the lock, after which no new reader gets in, then waits for
 * the readers already inside to leave: writer preference). The book builds
 * both on a mutex and a condition; here both are one atomic word, waited
 * on under the waiting policy (spin, yield, or park on the word's futex).
 *
 *   central     honours the kind (LS_RWCAP_KIND), as its own policy too:
 *               8.3.1 for reader preference (the default kind), as glibc;
 *               8.3.2 when the shim asks for writer preference
 *               (PREFER_WRITER_NONRECURSIVE_NP);
 *   central-wp  8.3.2 as its own policy (LOCKSWAP_RWPOLICY=algorithm) and
 *               for the _NP kind: a claimed lock admits no new reader. A
 *               lock that asks for reader preference (the default kind,
 *               rwlock.h) gets the reader-preferring variant of the same
 *               word, 8.3.1: central's.
 * The shim grants recursive reads under the default kind (rwlock.h), so
 * central-wp's writer preference cannot deadlock a recursive reader there;
 * the same dependency across two threads can, under its own policy.
 *
 * Word (32 bits):
 *	bits 0-26	R: readers inside (at most 2^27 - 1, then EAGAIN)
 *	bit 27		DSLEEP: the claiming writer sleeps until R is 0
 *	bit 28		WANT: a writer has claimed the lock (it drains or holds)
 *	bit 29		HELD: the writer holds it (WANT is set too)
 *	bit 30		RSLEEP: a reader sleeps until it may come in
 *	bit 31		WSLEEP: a writer sleeps until it may claim the lock
 * Transitions (R, WANT, HELD):
 *	reader in	(r, w, 0) -> (r+1, w, 0), if w = 0 or reader preference
 *	reader out	(r, *, *) -> (r-1, *, *)
 *	writer claims	(*, 0, 0) -> (*, 1, 0)
 *	writer enters	(0, 1, 0) -> (0, 1, 1)
 *	writer out	(0, 1, 1) -> (0, 0, 0); a timed writer giving up its
 *			claim: (r, 1, 0) -> (r, 0, 0)
 * All-zero is unlocked and any copy of an unlocked word is unlocked.
 *
 * Waking: a waiter whose budgets are spent sets the sleep bit of what it
 * waits for with a CAS on the value it saw, and sleeps on the word with
 * that bit as its futex bitset (wait.h's protocol, one bit per class). A
 * transition that lets a class in clears the class's bit in the same
 * atomic step that makes it and then wakes only that class: the writer
 * out and a writer giving up its claim wake every sleeping reader (all may
 * enter) and ONE sleeping writer (one may claim); the last reader out
 * wakes the claiming writer, the only one it lets in (the readers kept out
 * by a claim, and the writers waiting to claim, sleep on). A woken writer
 * may have taken the only wake-up of the writers still asleep, whose bit
 * the release cleared: so a writer that has set WSLEEP once claims with
 * WSLEEP set (its own release or give-up then wakes the next; Drepper's
 * "Futexes are tricky", mutex3), and a timed one that gives up after it
 * passes one wake-up on. Every waiter re-checks after a wake-up.
 *
 * fork() (fork.h): in a fork child, a claim (WANT) may be a writer's that
 * the fork left behind, which would keep every reader out and every other
 * writer from claiming for ever. A claim records no claimer, so the
 * child's first wait on a lock (once per generation, ls_fork_first) drops
 * the claim unless a writer holds the lock, and wakes every sleeper; a
 * live claimer whose claim was dropped finds WANT gone and claims again.
 * Readers inside and a holding writer stay: a lock held at fork by a
 * thread that is gone stays held, as under glibc. But a lock the forking
 * thread read-held (rwlock.h, FORK: fork_rdheld, in the child handler) had
 * no writer holding it but a wrapper's (NAME+bravo's writer holds this lock
 * while it waits for the forking thread's fast read): there the claim and
 * the hold both go.
 *
 * After the release (lock.h, rwlock.h): the releasing step is one atomic
 * RMW of the word (the CAS of the reader out, the fetch_and of the writer
 * out); the only access after it is a futex wake on the word's address,
 * which the kernel tolerates on memory freed meanwhile. Native timeouts: a
 * timed reader has changed nothing until it gets in; a timed writer that
 * has claimed the lock gives the claim back (and wakes the readers it kept
 * out). No queue nodes, no token; the state is 4 bytes, inline.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "fork.h"
#include "rwlock.h"
#include "wait.h"

#define R_MASK 0x07ffffffu
#define DSLEEP (1u << 27)
#define WANT (1u << 28)
#define HELD (1u << 29)
#define RSLEEP (1u << 30)
#define WSLEEP (1u << 31)
#define SLEEPERS (DSLEEP | RSLEEP | WSLEEP)

struct central {
	_Atomic uint32_t word;
};
_Static_assert(sizeof(struct central) <= LS_RW_INLINE_STATE, "inline state");

/* What keeps a new reader out. */
static inline uint32_t blockers(unsigned how)
{
	return how & LS_RW_PREFER_WRITER ? WANT | HELD : HELD;
}

/* Sleeps on the word seen as v, as one of the class of `bit` (DSLEEP,
 * RSLEEP, WSLEEP), after setting the bit. Returns ETIMEDOUT only if the
 * deadline (0: none) passed; 0 when woken or the word moved. */
static int park(struct central *l, uint32_t v, uint32_t bit, uint64_t deadline)
{
	/* The CAS orders us against the releasing step, which clears the
	 * bit: either it sees the bit and wakes us, or we fail here.
	 * relaxed: the word's modification order alone orders the two. */
	if (!(v & bit) && !atomic_compare_exchange_strong_explicit(
			      &l->word, &v, v | bit, memory_order_relaxed, memory_order_relaxed))
		return 0;
	LS_INJECT();
	return ls_futex_wait_bits(&l->word, v | bit, deadline, bit) == ETIMEDOUT ? ETIMEDOUT : 0;
}

/* Out of line: wakes those whom a step that cleared the bits of `old` lets
 * in: every reader, one writer, the claimer. Touches only the kernel. */
static __attribute__((noinline)) void wake(struct central *l, uint32_t old)
{
	if (old & RSLEEP)
		ls_futex_wake_bits(&l->word, 0x7fffffff, RSLEEP);
	if (old & WSLEEP)
		ls_futex_wake_bits(&l->word, 1, WSLEEP);
	if (old & DSLEEP)
		ls_futex_wake_bits(&l->word, 1, DSLEEP);
}

/* fork (see the header): drops a claim that no writer holds, and wakes
 * every sleeper, once per generation and lock. */
static __attribute__((noinline)) void fork_void_claim(struct central *l)
{
	if (!ls_fork_first(l))
		return;
	/* relaxed: the CAS below orders; release: as a writer giving its claim back */
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed), n;
	do
		n = v & HELD ? v : v & ~(WANT | SLEEPERS);
	while (!atomic_compare_exchange_weak_explicit(&l->word, &v, n, memory_order_release,
						      memory_order_relaxed));
	if (n != v)
		wake(l, v & SLEEPERS);
}

/* ---- readers ---- */

/* One attempt: 0, EBUSY (kept out), EAGAIN (count full); *seen is the
 * value that decided. Retries only when another reader moved the word. */
static inline int rd_try(struct central *l, uint32_t block, uint32_t *seen)
{
	/* relaxed: the CAS below acquires; a stale value only fails it */
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
	for (;;) {
		*seen = v;
		if (v & block)
			return EBUSY;
		if ((v & R_MASK) == R_MASK)
			return EAGAIN;
		/* (A) acquire: pairs with (B) in wr_unlock */
		if (atomic_compare_exchange_weak_explicit(&l->word, &v, v + 1, memory_order_acquire,
							  memory_order_relaxed))
			return 0;
	}
}

static __attribute__((noinline)) int rd_wait(struct central *l, uint32_t block, uint64_t deadline)
{
	if (LS_UNLIKELY(ls_fork_child()))
		fork_void_claim(l);
	struct ls_spin s = LS_SPIN_INIT;
	for (unsigned i = 1;; i++) {
		uint32_t v;
		int r = rd_try(l, block, &v);
		if (r != EBUSY)
			return r;
		LS_INJECT();
		if (deadline && ((i & 15) == 0 || s.n >= ls_wait_cfg.spin) && ls_now_ns() >= deadline)
			return ETIMEDOUT;
		if (ls_spin_step(&s)) {
			if (park(l, v, RSLEEP, deadline) == ETIMEDOUT)
				return ETIMEDOUT;
			s = (struct ls_spin)LS_SPIN_INIT;
		}
	}
}

static void rd_unlock(void *st, void *token)
{
	struct central *l = st;
	(void)token;
	/* relaxed: the CAS below releases, and a stale value only fails it */
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed), n;
	do {
		n = v - 1;
		/* the last reader out lets the claiming writer in: it clears
		 * that writer's bit in this same step, and wakes it */
		if ((v & R_MASK) == 1)
			n &= ~DSLEEP;
		LS_INJECT();
		/* (C) release: pairs with (D) in wr_wait */
	} while (!atomic_compare_exchange_weak_explicit(&l->word, &v, n, memory_order_release,
							memory_order_relaxed));
	LS_TEST_POINT(LS_POINT_RELEASED);
	if (LS_UNLIKELY((v & R_MASK) == 1 && (v & DSLEEP)))
		wake(l, DSLEEP);
}

/* ---- writers ---- */

static void wr_unlock(void *st)
{
	struct central *l = st;
	/* (B) release: pairs with (A) and (D). DSLEEP is clear: only the
	 * claimer sets it, and it is us. */
	uint32_t old =
	    atomic_fetch_and_explicit(&l->word, ~(WANT | HELD | RSLEEP | WSLEEP), memory_order_release);
	LS_TEST_POINT(LS_POINT_RELEASED);
	LS_INJECT();
	if (LS_UNLIKELY(old & (RSLEEP | WSLEEP)))
		wake(l, old);
}

static __attribute__((noinline)) int wr_wait(struct central *l, uint64_t deadline)
{
	if (LS_UNLIKELY(ls_fork_child()))
		fork_void_claim(l);
	struct ls_spin s = LS_SPIN_INIT;
	bool claimed = false;
	uint32_t carry = 0; /* WSLEEP once we have set it (see the header) */
	for (unsigned i = 1;; i++) {
		/* relaxed: a hint; the CASs below decide (and (D) acquires) */
		uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
		if (LS_UNLIKELY(claimed && !(v & WANT)))
			claimed = false; /* a fork child dropped our claim: claim again */
		if (!claimed && !(v & WANT)) {
			LS_INJECT();
			/* relaxed: the claim orders nothing; (D) does */
			claimed = atomic_compare_exchange_strong_explicit(
			    &l->word, &v, v | WANT | carry, memory_order_relaxed, memory_order_relaxed);
			continue;
		}
		if (claimed && !(v & R_MASK)) {
			LS_INJECT();
			/* (D) acquire: pairs with (C) and (B) */
			if (atomic_compare_exchange_strong_explicit(
				&l->word, &v, v | HELD, memory_order_acquire, memory_order_relaxed))
				return 0;
			continue;
		}
		if (deadline && ((i & 15) == 0 || s.n >= ls_wait_cfg.spin) && ls_now_ns() >= deadline)
			break;
		if (ls_spin_step(&s)) {
			/* the claimer waits for the readers; the others for the
			 * claim to go */
			uint32_t bit = claimed ? DSLEEP : WSLEEP;
			if (!claimed)
				carry = WSLEEP;
			if (park(l, v, bit, deadline) == ETIMEDOUT)
				break;
			s = (struct ls_spin)LS_SPIN_INIT;
		}
	}
	if (claimed) {
		/* Give the claim back: the readers it kept out, and a writer
		 * waiting to claim, may go. */
		uint32_t old = atomic_fetch_and_explicit(&l->word, ~(WANT | DSLEEP | RSLEEP | WSLEEP),
							 memory_order_release);
		if (old & (RSLEEP | WSLEEP))
			wake(l, old);
	} else if (carry) {
		/* we may have taken the only wake-up of the writers asleep */
		wake(l, WSLEEP);
	}
	return ETIMEDOUT;
}

static inline bool wr_try(struct central *l)
{
	/* relaxed: the CAS below acquires */
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
	/* free, perhaps with sleepers' bits: (0, 0, 0) -> (0, 1, 1) */
	return !(v & ~SLEEPERS) &&
	       atomic_compare_exchange_strong_explicit(&l->word, &v, v | WANT | HELD, memory_order_acquire,
						       memory_order_relaxed);
}

static void wr_lock(void *st, unsigned how)
{
	(void)how;
	if (LS_UNLIKELY(!wr_try(st)))
		wr_wait(st, 0);
}

static int wr_trylock(void *st, unsigned how)
{
	(void)how;
	return wr_try(st) ? 0 : EBUSY;
}

static int wr_timedlock(void *st, unsigned how, uint64_t deadline)
{
	(void)how;
	return wr_try(st) ? 0 : wr_wait(st, deadline);
}

/* ---- the two tables: the kind honoured, or writer preference always ---- */

static inline int rd_lock_as(void *st, unsigned how)
{
	uint32_t v;
	int r = rd_try(st, blockers(how), &v);
	return LS_LIKELY(r != EBUSY) ? r : rd_wait(st, blockers(how), 0);
}

static inline int rd_timedlock_as(void *st, unsigned how, uint64_t deadline)
{
	uint32_t v;
	int r = rd_try(st, blockers(how), &v);
	return r != EBUSY ? r : rd_wait(st, blockers(how), deadline);
}

static int c_rdlock(void *st, unsigned how, void **token)
{
	(void)token;
	return rd_lock_as(st, how);
}

static int c_tryrdlock(void *st, unsigned how, void **token)
{
	uint32_t v;
	(void)token;
	return rd_try(st, blockers(how), &v);
}

static int c_timedrdlock(void *st, unsigned how, uint64_t deadline, void **token)
{
	(void)token;
	return rd_timedlock_as(st, how, deadline);
}

/* central-wp: writer preference but for a lock that asks for reader
 * preference */
static inline unsigned wp_how(unsigned how)
{
	return ls_rw_reader_pref(how) ? 0 : LS_RW_PREFER_WRITER;
}

static int wp_rdlock(void *st, unsigned how, void **token)
{
	(void)token;
	return rd_lock_as(st, wp_how(how));
}

static int wp_tryrdlock(void *st, unsigned how, void **token)
{
	uint32_t v;
	(void)token;
	return rd_try(st, blockers(wp_how(how)), &v);
}

static int wp_timedrdlock(void *st, unsigned how, uint64_t deadline, void **token)
{
	(void)token;
	return rd_timedlock_as(st, wp_how(how), deadline);
}

/* ---- fork (rwlock.h, FORK) ---- */

/* The forking thread read-held the lock (through the inner lock, or, with
 * holds 0, through a wrapper's path that bypasses it): a claim was a gone
 * writer's, and so was a hold (a wrapper's writer holds this lock while it
 * waits for the wrapper's readers: bravo.c). Both go, with the sleepers'
 * bits; the readers inside stay. */
static void fork_rdheld(void *st, void **token, unsigned nth, unsigned holds)
{
	struct central *l = st;
	(void)token;
	(void)holds;
	if (nth)
		return; /* once per lock */
	/* relaxed: the child has one thread, ours */
	atomic_fetch_and_explicit(&l->word, ~(WANT | HELD | SLEEPERS), memory_order_relaxed);
}

static const struct ls_rwalgo central_rwalgo = {
    .name = "central",
    .desc =
	"one reader-count word; reader preference, or writer preference for the _NP kind (AMP 8.3.1/8.3.2)",
    .policy = "the kind's: reader preference, writer preference for the _NP kind",
    .caps = LS_RWCAP_KIND | LS_RWCAP_TIMEOUT,
    .rank = 10,
    .state_size = sizeof(struct central),
    .rdlock = c_rdlock,
    .tryrdlock = c_tryrdlock,
    .timedrdlock = c_timedrdlock,
    .rdunlock = rd_unlock,
    .wrlock = wr_lock,
    .trywrlock = wr_trylock,
    .timedwrlock = wr_timedlock,
    .wrunlock = wr_unlock,
    .fork_rdheld = fork_rdheld,
};
LS_REGISTER_RWALGO(central_rwalgo);

static const struct ls_rwalgo central_wp_rwalgo = {
    .name = "central-wp",
    .desc = "one reader-count word, writer preference (AMP 8.3.2, FifoReadWriteLock)",
    .policy = "writer preference: a claimed lock admits no new reader",
    .caps = LS_RWCAP_TIMEOUT,
    .rank = 11,
    .state_size = sizeof(struct central),
    .rdlock = wp_rdlock,
    .tryrdlock = wp_tryrdlock,
    .timedrdlock = wp_timedrdlock,
    .rdunlock = rd_unlock,
    .wrlock = wr_lock,
    .trywrlock = wr_trylock,
    .timedwrlock = wr_timedlock,
    .wrunlock = wr_unlock,
    .fork_rdheld = fork_rdheld,
};
LS_REGISTER_RWALGO(central_wp_rwalgo);
