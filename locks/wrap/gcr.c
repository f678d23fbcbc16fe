/*
 * gcr.c - generic concurrency restriction (GCR): a wrapper for every lock.
 *
 * Dice & Kogan, "Avoiding Scalability Collapse by Restricting Concurrency",
 * Euro-Par 2019 (arXiv 1905.10818). Section 3 (GCR): a lock-agnostic
 * wrapper intercepts acquisitions and keeps the threads that compete for the
 * underlying lock, the ACTIVE set, small; the surplus waits in a PASSIVE
 * FIFO queue, where only the queue's head watches the active count and joins
 * when it falls (the paper's numActive; the head rejoins below half the
 * threshold, the others wait on their own queue nodes); an arrival joins the
 * active set whenever there is room, ahead of passive threads, so that the
 * threads that are running keep the lock busy. For long-term fairness the
 * releasing thread periodically approves the passive head (the paper's
 * topApproved, every 0x4000 acquisitions), which then joins although the
 * set is full. Section 4's GCR-NUMA (a passive queue per socket) is not
 * built: lockswap's test machine has one NUMA node, and the hierarchical
 * locks (locks/hier/) keep the lock inside a cluster already.
 *
 * Here, with LOCKSWAP_ALGO=BASE+gcr (locks/wrap/wrap.h):
 *   active set  threads that hold the base lock or wait inside it: at most
 *               LOCKSWAP_GCR_ACTIVE (default: half the CPUs the process may
 *               run on at start, at least 1: the holder, the waiters and the
 *               spinning passive head then leave CPUs to the threads' own
 *               work; with all the CPUs, 2 here, mcs+gcr ran at 0.2x glibc
 *               in make demo's configuration, with half at 0.8x), plus one
 *               thread per approval not yet released, plus a trylock
 *               winner (trylock never waits, so it is let in and counted);
 *   rejoin      the passive head joins when the active count is below
 *               max(ACTIVE/2, 1) (the paper's hysteresis), or when approved;
 *   fairness    every LOCKSWAP_GCR_PERIOD releases (4096; 0: never) made
 *               while the passive queue is not empty, the releaser approves
 *               the head. The bound: the k-th passive thread (the head is
 *               k = 0) joins the active set within (k + 1) x PERIOD such
 *               releases, plus the time it takes to wake it; once active, the
 *               base's own fairness applies (tests/unit/gcr.c checks it);
 *   waiting     under park the passive threads, the head too, sleep (the
 *               paper's head spins: on 2 CPUs a spinning head takes a CPU
 *               from the active set); under spin and yield they spin or
 *               yield, as every waiter of lockswap does (wait.h).
 * The paper's constant 0x4000 does not fit the period field below: 8191 is
 * the largest period; the default, 4096, keeps a passive thread's wait at a
 * few milliseconds on the 2-CPU machines lockswap is measured on.
 *
 * The wrapper word W (LS_WRAP_WORD: the mutex's __spins; zero when idle):
 *	bits  0-15  ACTIVE    threads admitted and not yet released (holder and
 *	                      waiters in the base lock; transiently one more per
 *	                      arrival that found the set full and backs out);
 *	                      0x8000 and up: below 0 (see "Misuse")
 *	bits 16-28  COUNT     1..PERIOD while PASSIVE: releases since the last
 *	                      approval (never 0 then: see "misuse"); 0 otherwise
 *	bit  29     SLEEP     the passive head sleeps in futex(2) on W
 *	bit  30     APPROVED  the passive head may join although the set is full
 *	bit  31     PASSIVE   the passive queue of this lock is not empty
 * Fast paths (the uncontended pair pays one lock xadd and one lock sub):
 *	lock:   old = W++; if ACTIVE(old) < ACTIVE_MAX, base lock (tail call)
 *	unlock: W--; if PASSIVE (the sign bit) the slow path; base unlock
 * Transitions, all by atomic read-modify-writes of W, in its modification
 * order (relaxed: W orders no data; the base lock orders critical sections,
 * the bucket lock the queue, the futex syscall the sleep); each CAS below is
 * computed on norm(W) (see "Misuse"):
 *	full   an arrival whose increment found ACTIVE >= ACTIVE_MAX decrements
 *	       again and joins the passive queue;
 *	join   the head: ACTIVE+1 with APPROVED and SLEEP cleared, by CAS, when
 *	       APPROVED or ACTIVE < rejoin;
 *	count  a release with PASSIVE set: COUNT+1; past PERIOD, COUNT = 1 and
 *	       APPROVED;
 *	sleep  the head: SLEEP by CAS, then futex_wait(W, that value): any later
 *	       change of W makes the wait return at once;
 *	wake   whoever brings ACTIVE below rejoin or sets APPROVED while SLEEP is
 *	       set clears SLEEP in the same CAS and then futex-wakes W: an unlock
 *	       after its release (the address only: issue 26), the others at once.
 * After the release store (the base's unlock) unlock touches neither W nor
 * the base state: every decision is taken before it, by the CAS above.
 *
 * The passive queue is not in the mutex: a global table of buckets keyed by
 * W's address (like a futex hash), each a short lock (a word with the
 * LS_PARKED protocol) over a list of nodes that live on the waiting threads'
 * stacks, in arrival order; a lock's queue is its nodes in its bucket. Node:
 * head = 0 while another node of the same lock is ahead, 1 once it is the
 * head (set under the bucket lock by the head that leaves, ls_word_publish:
 * the node's owner may sleep on it). A node is unlinked only by its owner,
 * under the bucket lock, when it joins or times out; the owner is the only
 * one to free it (its stack frame), after that. PASSIVE is set and cleared
 * under the bucket lock only: set (with COUNT = 1) by the first node of a
 * lock, cleared (with COUNT, SLEEP, APPROVED) by the last to leave. No
 * memory is allocated anywhere: a passive wait cannot fail.
 *
 * Timeouts: a timed waiter in the passive queue waits until its deadline on
 * its node or, as head, on W (the futex wait has the deadline), then leaves
 * the queue (handing the head on); once admitted it waits in the base's
 * timedlock, or in the trylock fallback (wait.h) if the base has none.
 * Misuse (issue 25): an unlock of an unlocked mutex finds ACTIVE = 0 and
 * borrows: W-1 has the sign bit (W was 0, or PASSIVE with COUNT >= 1 absorbs
 * the borrow), so it takes the slow path, which repairs one unit (+1) before
 * calling the base's unlock. Until then the borrow is in W, for as long as
 * that unlocker is preempted, and a lock meanwhile finds the set "full" and
 * queues passive. So every CAS reads W through norm(): ACTIVE >= 0x8000 is a
 * count below 0 whose borrow went into the fields above; the transition is
 * computed on the repaired word and stored minus the correction, so that
 * the repair leaves every field right (read raw, a borrowed sign bit looked
 * like PASSIVE to the first passive thread, which then did not set it, and
 * the repair cleared it: the next passive head slept for ever while the
 * holders released by the fast path; tests/unit/gcr.c, misuse-window). An
 * unlocker that finds a count below 0, its own or another's, repairs one
 * unit by CAS, so that two that see one unit repair it once (the other is
 * then a release); an unlock whose borrow a lock in flight hid is a release,
 * and the count below 0 shows at the next unlock, which repairs it. ACTIVE
 * below 0x8000 means at most about 28,000 threads arriving at once.
 * tests/model/gcr.pml models W, the queue and the sleep for spin(1) (make
 * model): no thread waits for ever, with misuse racing everything too.
 * fork() (fork.h): the child empties every bucket (their nodes belong to
 * threads that are not there); PASSIVE, SLEEP or APPROVED left in a word by
 * them are repaired by the next queue to empty. ACTIVE may count threads
 * the fork left behind (inside the base lock, or between their increment
 * and the base), which would keep the set full for ever: so the first slow
 * path of a lock in a fork child (an arrival that finds the set full; once
 * per generation and lock, ls_fork_first) sets ACTIVE to 1, itself, and
 * goes in. The live threads that were counted then release one more than
 * the count holds: their unlocks find it below 0 and repair it, as an
 * unlock of an unlocked mutex does (see "Misuse"); until they have, the
 * set may hold more than LOCKSWAP_GCR_ACTIVE threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fork.h"
#include "lock.h"
#include "wait.h"
#include "wrap/wrap.h"

#define ACTIVE_MASK 0xffffu
#define COUNT_SHIFT 16
#define COUNT_ONE (1u << COUNT_SHIFT)
#define COUNT_MASK (0x1fffu << COUNT_SHIFT)
#define SLEEP (1u << 29)
#define APPROVED (1u << 30)
#define PASSIVE (1u << 31)
#define PERIOD_MAX 0x1fffu
#define ACTIVE_LIMIT 4096u
#define DEFICIT 0x8000u /* ACTIVE from here up: below 0 (see norm) */

/* LOCKSWAP_GCR_ACTIVE: 0 until the default (half the CPUs) or the environment
 * sets it; read on every fast path, so a harness may change it late. */
static uint64_t active_max;
static uint64_t period = 4096;

static const struct ls_param params[] = {
    {"LOCKSWAP_GCR_ACTIVE",
     "+gcr: threads that may hold or wait in the underlying lock at once (default: half the CPUs this "
     "process "
     "may run on, at least 1)",
     &active_max, 1, ACTIVE_LIMIT},
    {"LOCKSWAP_GCR_PERIOD",
     "+gcr: releases between two approvals of the passive queue's head (long-term fairness); 0: never",
     &period, 0, PERIOD_MAX},
    {0},
};

/* Half the CPUs this process may run on, at least 1. */
static unsigned half_the_cpus(void)
{
	cpu_set_t set;
	long n = 0;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	n /= 2;
	return n <= 0 ? 1u : n > (long)ACTIVE_LIMIT ? ACTIVE_LIMIT : (unsigned)n;
}

/* The default, from the affinity mask at start; the environment, parsed by
 * the shim before it composes (or by a harness after), replaces it. */
static void default_active(void)
{
	if (__atomic_load_n(&active_max, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&active_max, half_the_cpus(), __ATOMIC_RELAXED);
}

static inline uint32_t rejoin(void)
{
	uint32_t t = (uint32_t)__atomic_load_n(&active_max, __ATOMIC_RELAXED);
	return t >= 2 ? t / 2 : 1;
}

static inline uint32_t active(uint32_t w)
{
	return w & ACTIVE_MASK;
}

/* W as it is once the unlocks of unlocked mutexes now in flight have
 * repaired it ("Misuse" above): an ACTIVE of DEFICIT or more is that many
 * decrements below 0, whose borrow has gone into the fields above it. *d
 * gets the correction (0: none); a transition computed on the result is
 * stored with *d subtracted again, so that the repairs still fit. */
static inline uint32_t norm(uint32_t v, uint32_t *d)
{
	uint32_t a = active(v);
	*d = a >= DEFICIT ? ACTIVE_MASK + 1 - a : 0;
	return v + *d;
}

/* ---- the passive queue ---- */

struct pnode {
	struct pnode *next;	     /* in the bucket, arrival order */
	const _Atomic uint32_t *key; /* the lock's W */
	_Atomic uint32_t head;	     /* 0 waiting, 1 head; LS_PARKED: asleep */
};

#define NBUCKETS 64
struct bucket {
	_Atomic uint32_t lock; /* 0 free, 1 held; LS_PARKED: someone sleeps */
	struct pnode *first, *last;
} __attribute__((aligned(LS_CACHELINE)));
static struct bucket buckets[NBUCKETS];

static struct bucket *bucket_of(const _Atomic uint32_t *w)
{
	uint64_t h = (uint64_t)(uintptr_t)w * 0x9e3779b97f4a7c15ull;
	return &buckets[h >> 58]; /* 64 buckets */
}

static void bucket_lock(struct bucket *b)
{
	uint32_t free = 0;
	/* acquire: pairs with the release exchange in bucket_unlock */
	while (!atomic_compare_exchange_strong_explicit(&b->lock, &free, 1, memory_order_acquire,
							memory_order_relaxed)) {
		ls_wait_while_eq(&b->lock, 1);
		free = 0;
	}
}

static void bucket_unlock(struct bucket *b)
{
	ls_word_publish(&b->lock, 0);
}

/* Appends n; true if no other node of its lock is queued (n is the head). */
static bool enqueue(struct bucket *b, struct pnode *n)
{
	bool first = true;
	for (struct pnode *p = b->first; p; p = p->next)
		if (p->key == n->key)
			first = false;
	n->next = NULL;
	if (b->last)
		b->last->next = n;
	else
		b->first = n;
	b->last = n;
	return first;
}

/* Unlinks n; returns the next node of its lock, or NULL. */
static struct pnode *unlink_node(struct bucket *b, struct pnode *n)
{
	struct pnode *prev = NULL, *next = NULL;
	for (struct pnode *p = b->first; p && p != n; p = p->next)
		prev = p;
	for (struct pnode *p = n->next; p && !next; p = p->next)
		if (p->key == n->key)
			next = p;
	if (prev)
		prev->next = n->next;
	else
		b->first = n->next;
	if (b->last == n)
		b->last = prev;
	return next;
}

/* Under the bucket lock: the first node of a lock sets PASSIVE and
 * COUNT = 1 (if a thread gone at fork left PASSIVE, it stays as it is). */
static void mark_passive(_Atomic uint32_t *w)
{
	uint32_t v = atomic_load_explicit(w, memory_order_relaxed), d, t;
	while (!((t = norm(v, &d)) & PASSIVE) &&
	       !atomic_compare_exchange_weak_explicit(w, &v, (t | PASSIVE | COUNT_ONE) - d,
						      memory_order_relaxed, memory_order_relaxed)) {
	}
}

/* Under the bucket lock: clears `bits`, keeps the rest. */
static void clear_bits(_Atomic uint32_t *w, uint32_t bits)
{
	uint32_t v = atomic_load_explicit(w, memory_order_relaxed), d, t;
	while (((t = norm(v, &d)) & bits) &&
	       !atomic_compare_exchange_weak_explicit(w, &v, (t & ~bits) - d, memory_order_relaxed,
						      memory_order_relaxed)) {
	}
}

/* Clears SLEEP if still set (by CAS, so that one waker only) and wakes the
 * head; v: W as last seen. */
static void wake_head(_Atomic uint32_t *w, uint32_t v)
{
	uint32_t d, t;
	while ((t = norm(v, &d)) & SLEEP) {
		if (atomic_compare_exchange_weak_explicit(w, &v, (t & ~SLEEP) - d, memory_order_acq_rel,
							  memory_order_relaxed)) {
			ls_futex_wake(w, 1);
			return;
		}
	}
}

/* Leaves the active set without a release (a backing-out arrival, a timed
 * waiter that gave up): the passive head may now have room. */
static void leave_active(_Atomic uint32_t *w)
{
	uint32_t v = atomic_fetch_sub_explicit(w, 1, memory_order_relaxed) - 1, d, t = norm(v, &d);
	if (LS_UNLIKELY(t & SLEEP) && active(t) < rejoin())
		wake_head(w, v);
}

/* Sets SLEEP (if v, W as last read, still holds) and sleeps on W until
 * woken or the deadline: ETIMEDOUT, 1 if woken on purpose (SLEEP cleared),
 * else 0 (W changed before it slept, or it could not set SLEEP). */
static int head_sleep(_Atomic uint32_t *w, uint32_t v, uint64_t deadline)
{
	uint32_t d, t = norm(v, &d);
	if (!(t & SLEEP)) {
		uint32_t n = (t | SLEEP) - d;
		if (!atomic_compare_exchange_strong_explicit(w, &v, n, memory_order_acq_rel,
							     memory_order_relaxed))
			return 0;
		v = n;
	}
	if (ls_futex_wait(w, v, deadline) == ETIMEDOUT)
		return ETIMEDOUT;
	return !(norm(atomic_load_explicit(w, memory_order_relaxed), &d) & SLEEP);
}

/* The head: joins the active set (0) when approved or when the count falls
 * below rejoin, or gives up at the deadline (ETIMEDOUT; 0: none). While the
 * set is full it reads W at doubling intervals (the paper's nextCheckActive,
 * up to GAP_MAX pause steps), so that the holders' cache line is left alone;
 * past the spin budget it yields between reads, then (park) sleeps on W.
 * Woken on purpose, it starts over with a fresh budget, so that the next
 * chance usually finds it awake and costs nobody a wake-up; woken by a
 * change of W (it had not slept), it sleeps again at once. */
#define GAP_MAX 64u
static int head_wait(_Atomic uint32_t *w, uint64_t deadline)
{
	struct ls_spin s = LS_SPIN_INIT;
	unsigned gap = 1;
	for (;;) {
		uint32_t v = atomic_load_explicit(w, memory_order_relaxed), d, t = norm(v, &d), n = 0;
		if (t & APPROVED)
			n = (t & ~(APPROVED | SLEEP)) + 1;
		else if (active(t) < rejoin())
			n = (t & ~SLEEP) + 1;
		if (n) {
			if (atomic_compare_exchange_strong_explicit(w, &v, n - d, memory_order_acq_rel,
								    memory_order_relaxed))
				return 0;
			continue;
		}
		if (deadline && ls_now_ns() >= deadline)
			return ETIMEDOUT;
		for (unsigned k = 0; k < gap; k++) {
			if (!ls_spin_step(&s))
				continue;
			int r = head_sleep(w, v, deadline);
			if (r == ETIMEDOUT)
				return ETIMEDOUT;
			if (r == 1) {
				s = (struct ls_spin)LS_SPIN_INIT;
				gap = 1;
			}
			break;
		}
		if (gap < GAP_MAX && s.n < ls_wait_cfg.spin)
			gap *= 2;
	}
}

/* Under the bucket lock: n leaves the queue; if it was the head, the next
 * node of its lock becomes the head, or the queue is empty. */
static void leave_queue(struct bucket *b, struct pnode *n, _Atomic uint32_t *w)
{
	struct pnode *next = unlink_node(b, n);
	if (!(atomic_load_explicit(&n->head, memory_order_relaxed) & ~LS_PARKED))
		return;
	if (next) {
		clear_bits(w, SLEEP); /* ours, if a timeout left it */
		ls_word_publish(&next->head, 1);
	} else {
		clear_bits(w, PASSIVE | COUNT_MASK | SLEEP | APPROVED);
	}
}

/* A new head keeps the next passive thread of its lock awake (wait.h's
 * prewake): when the head joins and hands the role on, the successor is
 * usually still spinning or yielding, and the hand-over costs no wake-up on
 * the path of a thread the lock waits for. */
static void prewake_next(struct bucket *b, struct pnode *n)
{
	bucket_lock(b);
	for (struct pnode *p = n->next; p; p = p->next)
		if (p->key == n->key) {
			ls_word_prewake(&p->head);
			break;
		}
	bucket_unlock(b);
}

/* Waits in the passive queue until this thread is admitted to the active
 * set (0: W counts it) or the deadline passes (ETIMEDOUT; 0: none). */
static __attribute__((noinline)) int passive_wait(_Atomic uint32_t *w, uint64_t deadline)
{
	struct bucket *b = bucket_of(w);
	struct pnode me = {.key = w};
	bucket_lock(b);
	bool head = enqueue(b, &me);
	if (head) {
		atomic_store_explicit(&me.head, 1, memory_order_relaxed);
		mark_passive(w);
	}
	bucket_unlock(b);
	LS_INJECT();
	int r = 0;
	if (!head) {
		/* acquire: pairs with ls_word_publish in leave_queue */
		if (deadline)
			r = ls_wait_while_eq_until(&me.head, 0, deadline, NULL);
		else
			ls_wait_while_eq(&me.head, 0);
	}
	if (r == 0) {
		prewake_next(b, &me);
		r = head_wait(w, deadline);
	}
	bucket_lock(b);
	leave_queue(b, &me, w);
	bucket_unlock(b);
	return r;
}

__attribute__((constructor)) static void gcr_start(void)
{
	default_active();
}

/* The child of fork() is one thread: every queued node is another's. */
static void fork_child(void)
{
	for (unsigned i = 0; i < NBUCKETS; i++) {
		atomic_store_explicit(&buckets[i].lock, 0, memory_order_relaxed);
		buckets[i].first = buckets[i].last = NULL;
	}
}

/* ---- the compositions: one slot per base ---- */

#define MAX_PARAMS 16
struct slot {
	/* the base's operations, where the fast paths find them in one load */
	void (*lock)(void *);
	int (*trylock)(void *);
	int (*timedlock)(void *, uint64_t);
	void (*unlock)(void *);
	const struct ls_algo *base;
	struct ls_algo algo;
	char name[64];
	char desc[160];
	struct ls_param params[MAX_PARAMS];
};
static struct slot slots[LS_WRAP_MAX];

/* fork (see the header): ACTIVE becomes 1, the caller, which counted
 * itself already; the other fields stay, the correction of a count below
 * 0 too (norm). */
static void fork_reset(_Atomic uint32_t *w)
{
	uint32_t v = atomic_load_explicit(w, memory_order_relaxed), d, t, n;
	do {
		t = norm(v, &d);
		n = (t & ~ACTIVE_MASK) + 1;
		if ((n & SLEEP) && active(n) < rejoin())
			n &= ~SLEEP;
	} while (
	    !atomic_compare_exchange_weak_explicit(w, &v, n - d, memory_order_relaxed, memory_order_relaxed));
	if ((t & SLEEP) && !(n & SLEEP))
		ls_futex_wake(w, 1); /* the head: there is room */
}

/* An arrival that found the set full, in a fork child: true if it resets
 * the count (the first for this lock in this generation) and goes in. */
static bool fork_admit(_Atomic uint32_t *w)
{
	if (!ls_fork_first(w))
		return false;
	fork_reset(w);
	return true;
}

static __attribute__((noinline)) void lock_slow(void *state, const struct slot *sl)
{
	_Atomic uint32_t *w = LS_WRAP_WORD(state);
	if (LS_UNLIKELY(ls_fork_child()) && fork_admit(w)) {
		sl->lock(state);
		return;
	}
	leave_active(w); /* the set is full: back out, wait passive */
	passive_wait(w, 0);
	sl->lock(state);
}

/* A release that found PASSIVE (or an unlock of an unlocked mutex): count,
 * approve, decide whom to wake; then the release; then only the wake. */
static __attribute__((noinline)) void unlock_slow(void *state, const struct slot *sl)
{
	_Atomic uint32_t *w = LS_WRAP_WORD(state);
	LS_INJECT(); /* a misuse's borrow shows in W until the repair below */
	uint32_t v = atomic_load_explicit(w, memory_order_relaxed), d;
	uint32_t per = (uint32_t)__atomic_load_n(&period, __ATOMIC_RELAXED), n;
	bool wake = false;
	for (;;) {
		norm(v, &d);
		if (LS_UNLIKELY(d)) {
			/* ACTIVE below 0: an unlock of an unlocked mutex (issue
			 * 25), ours or one in flight. Repair one unit, by CAS, so
			 * that two unlockers that both see one unit repair it
			 * once: the other then counts as the release. */
			if (atomic_compare_exchange_weak_explicit(w, &v, v + 1, memory_order_relaxed,
								  memory_order_relaxed)) {
				sl->unlock(state);
				return;
			}
			continue;
		}
		if (!(v & PASSIVE))
			break; /* the queue emptied meanwhile */
		n = v;
		uint32_t c = (v & COUNT_MASK) >> COUNT_SHIFT;
		if (per) {
			if (++c > per) {
				c = 1;
				n |= APPROVED;
			}
			n = (n & ~COUNT_MASK) | c << COUNT_SHIFT;
		}
		wake = (n & SLEEP) && ((n & APPROVED) || active(n) < rejoin());
		if (wake)
			n &= ~SLEEP;
		if (n == v || atomic_compare_exchange_weak_explicit(w, &v, n, memory_order_acq_rel,
								    memory_order_relaxed))
			break;
		wake = false;
	}
	sl->unlock(state); /* the release: W and the state are no longer ours */
	if (wake)
		ls_futex_wake(w, 1); /* the address only (issue 26) */
}

static inline __attribute__((always_inline)) void lock_at(void *state, const struct slot *sl)
{
	uint32_t old = atomic_fetch_add_explicit(LS_WRAP_WORD(state), 1, memory_order_relaxed);
	/* 16 bits each: one compare (the limit is at most 4096) */
	if (LS_UNLIKELY((uint16_t)old >= (uint16_t)active_max)) {
		lock_slow(state, sl);
		return;
	}
	sl->lock(state);
}

static inline __attribute__((always_inline)) int trylock_at(void *state, const struct slot *sl)
{
	int r = sl->trylock(state);
	if (r == 0)
		atomic_fetch_add_explicit(LS_WRAP_WORD(state), 1, memory_order_relaxed);
	return r;
}

static __attribute__((noinline)) int timedlock_at(void *state, const struct slot *sl, uint64_t deadline)
{
	_Atomic uint32_t *w = LS_WRAP_WORD(state);
	uint32_t old = atomic_fetch_add_explicit(w, 1, memory_order_relaxed);
	if (active(old) >= __atomic_load_n(&active_max, __ATOMIC_RELAXED) &&
	    !(LS_UNLIKELY(ls_fork_child()) && fork_admit(w))) {
		leave_active(w);
		int r = passive_wait(w, deadline);
		if (r)
			return r;
	}
	int r =
	    sl->timedlock ? sl->timedlock(state, deadline) : ls_timedlock_fallback(sl->base, state, deadline);
	if (r)
		leave_active(w);
	return r;
}

static inline __attribute__((always_inline)) void unlock_at(void *state, const struct slot *sl)
{
	/* the sign of the result is PASSIVE: lock sub, js */
	if (LS_UNLIKELY(__atomic_sub_fetch((int32_t *)LS_WRAP_WORD(state), 1, __ATOMIC_RELAXED) < 0)) {
		unlock_slow(state, sl);
		return;
	}
	sl->unlock(state);
}

/* One set of entry points per slot, so that each finds its base at a
 * constant address (a composition costs no extra load on the fast path). */
#define SLOT_OPS(i)                                                                                          \
	static void lock_##i(void *s)                                                                        \
	{                                                                                                    \
		lock_at(s, &slots[i]);                                                                       \
	}                                                                                                    \
	static int trylock_##i(void *s)                                                                      \
	{                                                                                                    \
		return trylock_at(s, &slots[i]);                                                             \
	}                                                                                                    \
	static int timedlock_##i(void *s, uint64_t d)                                                        \
	{                                                                                                    \
		return timedlock_at(s, &slots[i], d);                                                        \
	}                                                                                                    \
	static void unlock_##i(void *s)                                                                      \
	{                                                                                                    \
		unlock_at(s, &slots[i]);                                                                     \
	}
#define SLOT_ROW(i) {lock_##i, trylock_##i, timedlock_##i, unlock_##i},
/* clang-format off */
#define EACH_SLOT(X)                                                                                         \
	X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)               \
	X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)     \
	X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47)     \
	X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60) X(61) X(62) X(63)
/* clang-format on */
EACH_SLOT(SLOT_OPS)

static const struct {
	void (*lock)(void *);
	int (*trylock)(void *);
	int (*timedlock)(void *, uint64_t);
	void (*unlock)(void *);
} slot_ops[] = {EACH_SLOT(SLOT_ROW)};
_Static_assert(sizeof slot_ops / sizeof slot_ops[0] == LS_WRAP_MAX, "one set of entry points per slot");

static unsigned nslots;
static _Atomic int binding; /* compositions are made one at a time */

static const struct ls_algo *gcr_wrap(const struct ls_algo *base, char *err, size_t errlen)
{
	if (base->caps & LS_CAP_PASSTHROUGH) {
		snprintf(err, errlen,
			 "gcr cannot wrap '%s': it is glibc's own mutex, not a lock of lockswap (valid: any "
			 "other algorithm, lockswap --list)",
			 base->name);
		return NULL;
	}
	default_active();
	while (atomic_exchange_explicit(&binding, 1, memory_order_acquire))
		sched_yield();
	const struct ls_algo *r = NULL;
	for (unsigned i = 0; i < nslots && !r; i++)
		if (slots[i].base == base)
			r = &slots[i].algo;
	size_t np = 0;
	for (const struct ls_param *p = base->params; p && p->env; p++)
		np++;
	if (r) {
	} else if (nslots == LS_WRAP_MAX) {
		snprintf(err, errlen, "gcr: at most %d compositions in one process", LS_WRAP_MAX);
	} else if (np + sizeof params / sizeof params[0] > MAX_PARAMS) {
		snprintf(err, errlen, "gcr: '%s' has too many tunables (%zu) to compose", base->name, np);
	} else {
		if (nslots == 0)
			pthread_atfork(NULL, NULL, fork_child);
		struct slot *sl = &slots[nslots];
		sl->lock = base->lock;
		sl->trylock = base->trylock;
		sl->timedlock = base->timedlock;
		sl->unlock = base->unlock;
		sl->base = base;
		snprintf(sl->name, sizeof sl->name, "%s+gcr", base->name);
		snprintf(sl->desc, sizeof sl->desc,
			 "%s, under generic concurrency restriction (Dice & Kogan 2019)", base->name);
		if (np)
			memcpy(sl->params, base->params, np * sizeof *params);
		memcpy(sl->params + np, params, sizeof params);
		sl->algo = (struct ls_algo){
		    .name = sl->name,
		    .desc = sl->desc,
		    .caps = base->caps & ~LS_CAP_FIFO, /* arrivals pass the passive threads */
		    .rank = base->rank,
		    .state_size = base->state_size,
		    .params = sl->params,
		    .init = base->init,
		    .destroy = base->destroy,
		    .lock = slot_ops[nslots].lock,
		    .trylock = slot_ops[nslots].trylock,
		    .timedlock = slot_ops[nslots].timedlock,
		    .unlock = slot_ops[nslots].unlock,
		};
		r = &sl->algo;
		nslots++;
	}
	atomic_store_explicit(&binding, 0, memory_order_release);
	return r;
}

static const struct ls_wrap gcr = {
    .name = "gcr",
    .desc =
	"generic concurrency restriction: a bounded active set contends for the lock, the surplus sleeps in "
	"a FIFO passive queue whose head is admitted when the set drains or every PERIOD releases (Dice & "
	"Kogan, Euro-Par 2019, section 3)",
    .params = params,
    .wrap = gcr_wrap,
};
LS_REGISTER_WRAP(gcr);
