/*
 * bravo.c - BRAVO, biased reading for any reader-writer lock: a wrapper,
 * selected as NAME+bravo (rwlock.h, WRAPPERS).
 *
 * Dice & Kogan, "BRAVO - Biased Locking for Reader-Writer Locks", USENIX
 * ATC 2019 (arXiv 1810.01553), section 3 (the algorithm, its listing:
 * reader fast path, revocation, the inhibition that bounds its cost).
 * Not in ../shared/papers; written from the paper's description.
 *
 * A lock is "read-biased" while RBias is set. A reader of a biased lock
 * does not touch the lock: it installs the lock's address in one slot of
 * a process-wide table of visible readers (the slot picked by hashing the
 * thread and the lock), then checks that the bias still holds, and reads.
 * Its unlock clears the slot. Readers of one lock mostly hit different
 * slots, so they do not share a cache line with each other. Any other
 * reader (bias off, slot taken, or the bias revoked between its two steps)
 * takes the inner lock's read lock: the slow path. A writer takes the inner
 * lock's write lock; if the bias is set it revokes it: clears RBias, then
 * scans the whole table and waits until no slot holds the lock. The scan
 * costs time whatever the readers do, so after a revocation that took T,
 * the bias stays off until now + N * T (InhibitUntil, in ls_tp_now() time:
 * the TSC where it is invariant, so that a slow reader's check costs an
 * rdtsc, not a clock_gettime; N =
 * LOCKSWAP_BRAVO_INHIBIT, the paper's 9: revocations take at most about
 * 1/(N+1) of the time); a slow-path reader that finds the bias off and
 * the inhibition over sets it again, while it holds the inner read lock (so
 * no writer is revoking). Reading the clock costs as much as a whole read
 * of a fast inner lock (an rdtsc takes 30 ns in this VM), so a slow reader
 * looks at it only with probability 1/16 (a per-thread xorshift: no
 * pattern of locks can make one lock's check never come): the bias comes
 * back within a few slow reads after the inhibition, never before.
 *
 *	state:	bias	one word: InhibitUntil (ls_tp_now) with bit 0 the
 *			bias flag (8 bytes, so that the composition with an
 *			inner state of up to 16 bytes stays inside the
 *			pthread_rwlock_t)
 *		then the inner algorithm's state (ls_rw_inner_state)
 *	table	ls_bravo_table: 4096 slots of a lock address or NULL (the
 *		paper's size), one cache line per 8 slots, process-wide
 *	token	a fast read's slot; otherwise the inner lock's own token
 *		(never an address inside the table)
 *
 * Ordering pairs: (A) a reader's CAS into its slot (seq_cst) then its load
 * of the bias (seq_cst) / (B) a writer's store clearing the bias (seq_cst)
 * then its loads of the slots (seq_cst): a Dekker pair, so a reader either
 * sees the bias gone and backs out, or the writer sees its slot. (C) release
 * of a fast reader's slot clear / (D) acquire of the writer's scan. (E)
 * release of the bias set by a slow reader (which holds the inner read
 * lock, so it has the last writer's data) / (F) acquire of a fast reader's
 * bias load: what the last writer wrote is visible to fast readers.
 *
 * Kinds: under LS_RW_PREFER_WRITER a biased reader would pass a writer
 * that waits for the inner lock, so readers of such a lock always take the
 * slow path and never set the bias; a writer revokes a bias whatever the
 * kind. Under reader preference (rwlock.h: the default kind) a writer must
 * not keep readers out while it waits for the biased ones (one of them may
 * be waiting for a reader of another thread), so it revokes without the
 * inner write lock: it clears the bias, and if a slot still holds the
 * lock it releases the inner lock, waits for the slots, takes the inner
 * lock again (by the inner's reader preference: after the readers that
 * came meanwhile) and looks again. While a revocation is pending the bias
 * word is REVOKING: no bias, and no slow reader sets it again; a writer
 * that finds it revokes, so that one that gave up at its deadline, without
 * the inner lock, leaves nothing but a revocation for the next writer. Recursive reads never reach an
 *algorithm under the default kind (the shim grants them), so a thread holds at most one fast read of a lock.
 *Waiting: the revoking writer polls each slot that holds the lock under the waiting policy (ls_poll_until:
 *spin, yield, then, under park, naps doubling from 1 us to 1 ms): a reader's unlock stays one store, with no
 *wake-up to issue. Timed and try acquisitions are the inner lock's (native, or the family's fallback), plus a
 *revocation that gives up at the deadline (timed; then it releases the inner write lock) or at the first slot
 *still held (try); a revocation that gives up sets the bias again, so that the next writer revokes the
 *readers still in the table. Nothing to allocate, nothing to free.
 *
 * fork() (rwlock.h, FORK): a read hold the forking thread took through
 * the inner lock is the inner's to repair (its fork_rdheld, if it has
 * one). A fast one is a slot, which the forking thread clears in the child
 * as anywhere; but the inner lock does not count it, and may hold writers
 * that waited for it: a writer that took the inner write lock and revokes
 * (all the while, under the algorithm's own policy; until its first scan
 * meets our slot, under reader preference), or one queued in or entering
 * the inner lock (a ticket taken, a node swapped in). Each is a thread the
 * fork left behind (with our fast read held, no writer had the lock: (A)
 * and (B)), so the inner's fork_rdheld runs with no hold of ours (holds 0)
 * and passes them all over, holders of the inner write lock included (the
 * mutex-serialised mode tells its writer's hold from another thread's read
 * by a mark its writers set: mutex.c). The bias word stays as it was:
 * BIAS, or REVOKING, which the child's first writer completes (the slots
 * of readers the fork left behind keep the lock held, as their holds would
 * under glibc); under the _NP kind no reader is fast.
 *
 * After the release (lock.h, rwlock.h): a fast reader's unlock is the
 * store that clears its slot, in the process-wide table, never freed; it
 * touches the lock no more (a revoking writer that sees the slot clear may
 * take the lock, release it and free it at once). Every other release is
 * the inner lock's, and keeps the inner algorithm's rule: the wrapper adds
 * nothing after it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>

#include "lock.h"
#include "rwlock.h"
#include "tpclock.h"
#include "wait.h"

#define BIAS 1ull
#define PENDING 2ull	 /* a revocation is under way or was given up */
#define REVOKING (~BIAS) /* PENDING, and no clock reaches it: slow readers leave it */
#define SLOTS 4096u

struct bravo {
	_Atomic uint64_t bias; /* InhibitUntil | BIAS */
};

static void *_Atomic ls_bravo_table[SLOTS] __attribute__((aligned(LS_CACHELINE)));
static const struct ls_rwalgo *inner; /* set by bind, before any lock is used */
static uint64_t inhibit_n = 9;

static inline void *in(struct bravo *b)
{
	return ls_rw_inner_state(b, sizeof(struct bravo));
}

/* The slot of (this thread, lock b): a multiplicative hash of the two
 * addresses, top 12 bits. */
static inline void *_Atomic *slot_of(struct bravo *b)
{
	uint64_t x = ((uint64_t)(uintptr_t)__builtin_thread_pointer() ^ (uint64_t)(uintptr_t)b) *
		     0x9e3779b97f4a7c15ull;
	return &ls_bravo_table[x >> 52];
}

static inline bool is_slot(void *token)
{
	return (uintptr_t)token - (uintptr_t)ls_bravo_table < sizeof ls_bravo_table;
}

/* ---- readers ---- */

/* One slow read in CLOCK_SAMPLE reads the clock (see the file comment). */
#define CLOCK_SAMPLE 16u
static __thread uint32_t sample_rng __attribute__((tls_model("initial-exec")));

static inline bool sample(void)
{
	uint32_t x = sample_rng;
	if (LS_UNLIKELY(x == 0))
		x = (uint32_t)(uintptr_t)&sample_rng | 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	sample_rng = x;
	return x % CLOCK_SAMPLE == 0;
}

/* The slow path: the inner read lock, then the bias back if the
 * inhibition is over. */
static int read_slow(struct bravo *b, int r, unsigned how)
{
	if (r || (how & LS_RW_PREFER_WRITER))
		return r;
	/* relaxed: the inner read lock orders us after the revoking writer */
	uint64_t v = atomic_load_explicit(&b->bias, memory_order_relaxed);
	if (LS_UNLIKELY(!(v & BIAS)) && (v == 0 || (sample() && ls_tp_now() >= v))) {
		LS_INJECT();
		/* (E) release: pairs with (F). Fails only if another reader
		 * set it first. */
		atomic_compare_exchange_strong_explicit(&b->bias, &v, v | BIAS, memory_order_release,
							memory_order_relaxed);
	}
	return 0;
}

/* The fast path: true with *token set if this read needs no lock. */
static inline bool read_fast(struct bravo *b, unsigned how, void **token)
{
	/* relaxed: only a hint; (F) is the load after the CAS */
	if (!(atomic_load_explicit(&b->bias, memory_order_relaxed) & BIAS) || (how & LS_RW_PREFER_WRITER))
		return false;
	void *_Atomic *s = slot_of(b);
	void *expected = NULL;
	/* (A) seq_cst */
	if (!atomic_compare_exchange_strong_explicit(s, &expected, (void *)b, memory_order_seq_cst,
						     memory_order_relaxed))
		return false; /* the slot is another reader's */
	LS_INJECT();
	/* (A) seq_cst; (F) acquire: pairs with (E) */
	if (LS_LIKELY(atomic_load_explicit(&b->bias, memory_order_seq_cst) & BIAS)) {
		*token = (void *)s;
		return true;
	}
	atomic_store_explicit(s, NULL, memory_order_relaxed); /* revoked meanwhile: back out */
	return false;
}

/* Out of line, so that the fast path below makes no call that returns
 * (no frame, no saved registers). */
static __attribute__((noinline)) int rdlock_slow(struct bravo *b, unsigned how, void **token)
{
	return read_slow(b, inner->rdlock(in(b), how, token), how);
}

static int bravo_rdlock(void *state, unsigned how, void **token)
{
	struct bravo *b = state;
	if (LS_LIKELY(read_fast(b, how, token)))
		return 0;
	return rdlock_slow(b, how, token);
}

static int bravo_tryrdlock(void *state, unsigned how, void **token)
{
	struct bravo *b = state;
	if (read_fast(b, how, token))
		return 0;
	return read_slow(b, inner->tryrdlock(in(b), how, token), how);
}

static int bravo_timedrdlock(void *state, unsigned how, uint64_t deadline, void **token)
{
	struct bravo *b = state;
	if (read_fast(b, how, token))
		return 0;
	int r = inner->timedrdlock ? inner->timedrdlock(in(b), how, deadline, token)
				   : ls_rw_timed_fallback(inner, in(b), how, false, deadline, token);
	return read_slow(b, r, how);
}

static void bravo_rdunlock(void *state, void *token)
{
	if (LS_LIKELY(is_slot(token))) {
		LS_INJECT();
		/* (C) release: pairs with (D) */
		atomic_store_explicit((void *_Atomic *)token, NULL, memory_order_release);
		LS_TEST_POINT(LS_POINT_RELEASED);
		return;
	}
	inner->rdunlock(in(state), token);
}

/* ---- writers ---- */

struct scan {
	void *_Atomic *slot;
	void *lock;
};

static int slot_free(void *arg)
{
	struct scan *s = arg;
	/* (D) acquire: pairs with (C); seq_cst: (B) */
	return atomic_load_explicit(s->slot, memory_order_seq_cst) == s->lock ? EBUSY : 0;
}

/* Waits until no slot holds the lock (try: fails at the first one that
 * does; else gives up at the deadline, 0: none). 0, EBUSY or ETIMEDOUT. */
static int scan(struct bravo *b, bool try, uint64_t deadline)
{
	struct scan s = {NULL, b};
	for (unsigned i = 0; i < SLOTS; i++) {
		s.slot = &ls_bravo_table[i];
		if (slot_free(&s) == 0)
			continue;
		LS_INJECT();
		int r = try ? EBUSY : ls_poll_until(slot_free, &s, deadline ? deadline : UINT64_MAX);
		if (r)
			return r;
	}
	return 0;
}

/* The inner write lock, with the deadline (0: none). */
static int inner_write(struct bravo *b, unsigned how, uint64_t deadline)
{
	if (!deadline) {
		inner->wrlock(in(b), how);
		return 0;
	}
	return inner->timedwrlock ? inner->timedwrlock(in(b), how, deadline)
				  : ls_rw_timed_fallback(inner, in(b), how, true, deadline, NULL);
}

/* Called with the inner write lock held and a bias to revoke (BIAS or
 * PENDING): clears it and waits until no slot holds the lock (try: fails at
 * the first one that does; timed: gives up at the deadline). Returns 0,
 * with the lock held and the bias off and inhibited for N times the time
 * spent; or EBUSY or ETIMEDOUT: with the inner lock held and the bias set
 * again (the next writer revokes the readers still in the table), or,
 * under reader preference, without the inner lock and the revocation
 * pending. */
static __attribute__((noinline)) int revoke(struct bravo *b, unsigned how, bool try, uint64_t deadline)
{
	uint64_t start = ls_tp_now();
	bool unlocked = !try && ls_rw_reader_pref(how);
	int r;
	for (;;) {
		/* (B) seq_cst */
		atomic_store_explicit(&b->bias, REVOKING, memory_order_seq_cst);
		r = scan(b, try || unlocked, deadline);
		if (!r || !unlocked)
			break;
		/* reader preference: wait for the biased readers without the
		 * inner lock, take it again, and look again (the bias word is
		 * ours to read only with it) */
		inner->wrunlock(in(b));
		LS_INJECT();
		if ((r = scan(b, false, deadline)) || (r = inner_write(b, how, deadline)))
			return r;
		/* relaxed: written under the inner write lock, which we hold */
		if (!(atomic_load_explicit(&b->bias, memory_order_relaxed) & (BIAS | PENDING)))
			return 0; /* another writer completed a revocation */
	}
	uint64_t end = ls_tp_now();
	/* relaxed: read by slow readers after the inner lock's release. A
	 * revocation that gave up gives the bias back: readers still in the
	 * table must be revoked again by the next writer. */
	atomic_store_explicit(&b->bias, r ? BIAS : (end + (end - start) * inhibit_n) & ~(BIAS | PENDING),
			      memory_order_relaxed);
	return r;
}

/* A bias to revoke, in a value of the bias word read with the inner write
 * lock held. */
static inline bool to_revoke(uint64_t v)
{
	return v & (BIAS | PENDING);
}

static void bravo_wrlock(void *state, unsigned how)
{
	struct bravo *b = state;
	inner->wrlock(in(b), how);
	/* relaxed: set under the inner read lock, which ours excludes */
	if (LS_UNLIKELY(to_revoke(atomic_load_explicit(&b->bias, memory_order_relaxed))))
		revoke(b, how, false, 0);
}

static int bravo_trywrlock(void *state, unsigned how)
{
	struct bravo *b = state;
	int r = inner->trywrlock(in(b), how);
	if (r || !to_revoke(atomic_load_explicit(&b->bias, memory_order_relaxed)) || !revoke(b, how, true, 0))
		return r;
	inner->wrunlock(in(b));
	return EBUSY;
}

static int bravo_timedwrlock(void *state, unsigned how, uint64_t deadline)
{
	struct bravo *b = state;
	int r = inner_write(b, how, deadline);
	if (r || !to_revoke(atomic_load_explicit(&b->bias, memory_order_relaxed)))
		return r;
	if (!(r = revoke(b, how, false, deadline)))
		return 0;
	if (!ls_rw_reader_pref(how))
		inner->wrunlock(in(b)); /* (under reader preference it gave up without it) */
	return r;
}

static void bravo_wrunlock(void *state)
{
	inner->wrunlock(in(state));
}

static void bravo_init(void *state)
{
	if (inner->init)
		inner->init(in(state));
}

static void bravo_destroy(void *state)
{
	if (inner->destroy)
		inner->destroy(in(state));
}

/* (rwlock.h, FORK; the file comment) A fast read is the forking thread's
 * only hold of the lock (its recursive reads are the shim's; fast reads are
 * never _NP), and none in the inner lock: the inner repairs with holds 0. */
static void bravo_fork_rdheld(void *state, void **token, unsigned nth, unsigned holds)
{
	if (!inner->fork_rdheld)
		return;
	if (!is_slot(*token)) {
		inner->fork_rdheld(in(state), token, nth, holds);
		return;
	}
	void *none = NULL;
	inner->fork_rdheld(in(state), &none, 0, 0);
}

static int bravo_bind(const struct ls_rwalgo *a, char *err, size_t errlen)
{
	if (inner && inner != a) {
		snprintf(err, errlen, "bravo is already bound to %s", inner->name);
		return -1;
	}
	inner = a;
	return 0;
}

static const struct ls_param bravo_params[] = {
    {"LOCKSWAP_BRAVO_INHIBIT",
     "bravo: after a revocation that took T, readers stay on the inner lock for this many times T "
     "(the paper's N)",
     &inhibit_n, 0, 1000},
    {0}};

static const struct ls_rwalgo bravo_algo = {
    .name = "bravo",
    .desc = "biased reading through a process-wide visible-readers table (Dice & Kogan, ATC 2019)",
    .policy = "biased readers pass waiting writers (not under the _NP kind)",
    .caps = LS_RWCAP_WRAPPER,
    .rank = 90,
    .state_size = sizeof(struct bravo),
    .params = bravo_params,
    .init = bravo_init,
    .destroy = bravo_destroy,
    .rdlock = bravo_rdlock,
    .tryrdlock = bravo_tryrdlock,
    .timedrdlock = bravo_timedrdlock,
    .rdunlock = bravo_rdunlock,
    .wrlock = bravo_wrlock,
    .trywrlock = bravo_trywrlock,
    .timedwrlock = bravo_timedwrlock,
    .wrunlock = bravo_wrunlock,
    .bind = bravo_bind,
    .fork_rdheld = bravo_fork_rdheld,
    .keep_caps = LS_RWCAP_TIMEOUT | LS_RWCAP_QNODE | LS_RWCAP_HIER | LS_RWCAP_KIND | LS_RWCAP_EXCLUSIVE,
};
LS_REGISTER_RWALGO(bravo_algo);
