/*
 * auto.c - `auto`, the default lock: a lock that chooses, per mutex and
 * while the program runs, how its waiters wait, by the rate each way gives
 * that mutex.
 *
 * Why. No lock wins everywhere (LiTL, ATC'16): FIFO queue locks collapse
 * once threads outnumber cores, because every release waits for the next
 * waiter to be scheduled (He, Scherer, Scott, TR 867, sections 1-2,
 * ../shared/papers/000_9c294dcad948dd76.txt); barging locks keep the lock
 * moving but let a waiter starve; and how long a waiter should spin before
 * it sleeps depends on the holders, the machine and its load (Karlin, Li,
 * Manasse & Owicki, "Empirical Studies of Competitive Spinning for a
 * Shared-Memory Multiprocessor", SOSP 1991). Reactive locks (Lim & Agarwal,
 * "Reactive Synchronization Algorithms for Multiprocessors", ASPLOS 1994)
 * choose the protocol per lock from what they observe. `auto` keeps one
 * protocol for the word and the list, and chooses among three regimes for
 * its waiters by measuring each (choice.h: trial windows, the mutex's own
 * acquisitions per second, exploration that backs off while the choice
 * holds):
 *
 *  SLEEP  (glibc's mutex) an arrival that finds the lock held looks once,
 *         then queues and sleeps at once; every release that finds a
 *         sleeping head wakes it, and the woken head looks once and sleeps
 *         again if the lock is taken. The regime a mutex starts in.
 *  SPIN   (spin, then park; issue 13's lock) an arrival spins on the word
 *         for LOCKSWAP_SPIN steps (TTAS, AMP 7.3,
 *         ../shared/papers/004_c3117dc34b7d1b6f.txt; the first phase of Lim
 *         & Agarwal's two-phase waiting, TOCS 1993), then queues; a queued
 *         waiter yields LOCKSWAP_YIELD times under park before it sleeps; the
 *         woken head spins again before it sleeps. Wins where the lock would
 *         stand idle while a sleeper is woken (make demo's program; 8-16
 *         threads with 1 us outside the lock). A change to SPIN flushes the
 *         list: every queued waiter, asleep under the old regime, is taken
 *         out and arrives again, spinning (else the sleepers leave one
 *         wake-up at a time and the trial measures the old regime).
 *  BATCH  (the holder keeps it) as SLEEP, but the woken head that finds the
 *         lock taken naps (LOCKSWAP_AUTO_NAP_NS) and looks again, still
 *         counted as woken, so that no release pays for a wake-up: the
 *         thread that holds the lock re-takes it from its own cache for a
 *         batch of releases, and the other CPU's waiter neither steals the
 *         line nor the lock. Wins on a lock that is never idle (two threads,
 *         empty critical sections: glibc's waiter wakes at every release
 *         that finds it asleep and costs the holder a system call each
 *         time).
 * The regime is a hint in the mutex's `stat` word, read by waiters; only the
 * holder writes `stat` (its count of releases and the regime), so the count
 * is a plain add (relaxed load and store) in unlock. The windows' records
 * (choice.h) sit in a table of CHOICES records found by the mutex's
 * address: a holder steps its mutex's record every 16th contended event of
 * its thread (a release with waiters, an acquisition through the slow
 * path); an uncontended mutex costs one add per pair and no record. The
 * fast way back to SLEEP: SPIN arrivals that spin their whole budget and
 * queue anyway (holders that block, yield or are preempted inside; Karlin
 * et al.'s and Lim & Agarwal's case for sleeping at once) count themselves
 * in `stat`; 16 in one window make SLEEP's trial the next window.
 *
 * The word and the list, whatever the regime:
 *  1. Free: one atomic OR to take the lock, one CAS to release it; the
 *     release of a mutex that had waiters at this thread's last release
 *     reads the word first and does one CAS from it (auto_unlock).
 *     A release whose head is awake or napping (WOKEN) and owes no hand-off
 *     is the same read and CAS, counting the pass, without a call.
 *  2. Held: the arrival waits as its regime says, then joins the mutex's
 *     FIFO list and waits on its own node (spins, yields, sleeps:
 *     LOCKSWAP_WAIT). A release does not hand the lock over: it frees it
 *     for whoever runs (barging) and wakes the list's head only if no woken
 *     head is already competing (Go's sync.Mutex, mutexWoken). So a
 *     preempted or sleeping waiter never holds the lock up, and a mutex with
 *     many sleepers costs at most one wake-up per release, usually fewer. A
 *     woken head that takes the lock wakes the next head at once (its
 *     wake-up overlaps the critical section: a list of sleepers drains at
 *     the speed of one wake-up latency, not one each).
 *  3. Unfair: each release that overtakes the head counts a pass in the
 *     word; once the head has been passed LOCKSWAP_AUTO_PASSES times, or has
 *     waited LOCKSWAP_AUTO_FAIR_NS (default 1 ms, Go's starvation threshold;
 *     parking_lot forces a fair unlock every 0.5 ms on average) and found the
 *     lock taken, the next release hands the lock to it directly (Linux's
 *     mutex hand-off, commit 9d659ae14b54, 2016). A woken head that finds
 *     the lock taken after FAIR_NS, or past three quarters of PASSES, asks
 *     for the hand-off and waits for it awake (spin, then yield) before it
 *     sleeps, so that the hand-off rarely finds it asleep (a lock handed to
 *     a sleeper stands idle for a wake-up).
 * Bound (tests/unit/auto.c forces it): the head of the list is overtaken at
 * most LOCKSWAP_AUTO_PASSES times, so the k-th waiter in the list (k = 0
 * for the head) gets the lock within (k + 1) * (PASSES + 1) releases, in
 * every regime.
 * Timed waiters queue like the others and unlink themselves on timeout;
 * then they look at the lock once more and take it if it is free (only the
 * head is woken, so a timed waiter behind it is re-evaluated at its
 * deadline instead of failing while the lock stands free).
 *
 * State: the word, `stat`, the list.
 * Word (32 bits):
 *	LOCKED	held
 *	QLOCK	the list is being changed (a bit lock held for a few
 *		instructions, never across a sleep or a wake-up)
 *	WAITERS	the list is not empty
 *	WOKEN	the head was woken to compete and has not parked again (in
 *		BATCH it naps with WOKEN set): a release need not wake anybody
 *	passes	(bits 8..31) releases that overtook the current head;
 *		all ones is the head's request for a hand-off
 * stat (32 bits, written by the holder only): bits 0-1 the regime, bits
 *	2-7 this window's SPIN arrivals that spun their whole budget and
 *	queued (saturating at 63; 16 make SLEEP's trial come next: the fast
 *	way back), bits 8-31 releases (mod 2^24).
 * Node (on the waiting thread's stack; linked under QLOCK):
 *	WAITING	in the list; waits (LS_PARKED while asleep)
 *	NODE_WOKEN  the head, competing for the lock (or napping in BATCH,
 *		LS_PARKED while asleep); the word has WOKEN
 *	OWNER	handed the lock by a release; already unlinked
 *	FLUSHED	taken out of the list by a change to SPIN; arrives again
 * Transitions: enqueue (free -> WAITING at the tail, WAITERS); a release
 * with WAITERS and no WOKEN wakes the head (sets WOKEN, WAITING ->
 * NODE_WOKEN, then releases); the woken head takes the lock and unlinks
 * itself in one CAS (LOCKED|QLOCK, clears WOKEN), or naps (BATCH: stays
 * NODE_WOKEN), or parks again (NODE_WOKEN -> WAITING, then clears WOKEN); a
 * release whose passes reached the limit unlinks the head and hands it the
 * lock (-> OWNER, LOCKED stays set, a napping head is woken); a timed-out
 * waiter unlinks itself and, if it was the head, wakes the next one; a
 * holder that changes the regime to SPIN detaches the list under QLOCK
 * (WAITERS, WOKEN and passes cleared) and then tells each node FLUSHED
 * (reading its `next` first: the node is its waiter's again from then on).
 * Who frees each node: nobody; a node lives in its thread's lock() frame
 * and is unlinked (under QLOCK) before that returns. A late futex wake on a
 * node whose frame is gone is a spurious wake-up, re-checked by every
 * waiter. After fork() the child's list may hold nodes of threads that do
 * not exist there, on stacks that glibc hands to the child's new threads or
 * unmaps: never read. The lock records the fork generation (fork.h) of its
 * list's last append, in the top 16 bits of its head pointer (user-space
 * stacks lie below 2^47); the first QLOCK holder of a later generation
 * drops the whole list, every node of which was queued before the fork.
 * The child also clears every record's try-lock, whose holder may not
 * exist there.
 *
 * All-zero is unlocked with an empty list in SLEEP; an unlocked mutex
 * without waiters holds no pointer, so a byte copy is a free lock of its
 * own.
 *
 * After the release (lock.h): every release is one CAS of the word that
 * clears LOCKED (or, for a hand-off, the store of OWNER into the head's
 * node, the lock staying LOCKED for it); after it the unlocker touches at
 * most the head's node (on its waiter's stack, not the lock's memory) and
 * the kernel. So a release that wakes the head does it BEFORE it releases:
 * holding LOCKED, it takes QLOCK and sets WOKEN in one CAS, marks the head
 * NODE_WOKEN, and then clears LOCKED and QLOCK in one CAS; the futex wake
 * follows, on the node. The count in `stat`, the record and a flush (all
 * by the holder) come before that CAS. Misuse: an unlock that finds LOCKED clear returns; it
 * must not count a pass or hand the lock to the head (it may count a
 * release in `stat`: a hint).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "adaptive/choice.h"
#include "fork.h"
#include "lock.h"
#include "wait.h"

#define LOCKED 0x1u
#define QLOCK 0x2u
#define WAITERS 0x4u
#define WOKEN 0x8u
#define PASS_SHIFT 8
#define PASS_ONE (1u << PASS_SHIFT)
#define PASS_MASK (~0u << PASS_SHIFT)
#define PASS_MAX (PASS_MASK >> PASS_SHIFT)

enum { WAITING = 1, NODE_WOKEN = 2, OWNER = 3, FLUSHED = 4 };

/* The regimes (the header); SLEEP is 0, the regime of an all-zero mutex. */
enum { SLEEP, SPIN, BATCH };
_Static_assert(BATCH < LS_CHOICE_N, "choice.h's regimes");
#define REG_MASK 0x3u
#define MISS_ONE 0x4u /* bits 2-7: SPIN arrivals that spun in vain (saturating) */
#define MISS_MASK 0xfcu
#define MISS_HURRY 16u /* that many in a window: try SLEEP at once */
#define COUNT_SHIFT 8
#define COUNT_ONE (1u << COUNT_SHIFT)
#define COUNT_MASK (~0u >> COUNT_SHIFT)

struct node {
	_Atomic uint32_t state; /* WAITING, NODE_WOKEN, OWNER, FLUSHED; LS_PARKED while asleep */
	struct node *next, *prev;
	uint64_t since; /* ls_now_ns() when it queued */
	bool listed;
	bool asked; /* it asked for a hand-off: waits awake first */
};

struct autolock {
	_Atomic uint32_t word;
	_Atomic uint32_t stat; /* regime and release count; written by the holder only */
	/* The circular list's head (head->prev is the tail) in the low 48
	 * bits, the fork generation of its last append in the top 16 (the
	 * header); under QLOCK: head() and set_head(). */
	uintptr_t head_gen;
};
_Static_assert(sizeof(struct autolock) <= LS_INLINE_STATE, "inline state");
_Static_assert(sizeof(uintptr_t) == 8, "the head and the generation share 64 bits");

/* Defaults. FAIR_NS: Go's starvation threshold, 1 ms. PASSES: a hand-off
 * to a head that sleeps leaves the lock idle for a wake-up (10-50 us on a
 * loaded 2-CPU VM); 1024 releases of an empty critical section take about
 * as long, so a limit that low cost 60% of the throughput there (measured:
 * results/auto/README.md). 65536 releases take >= 1.3 ms at the highest
 * rate measured (48 M/s), so the count adds at most as many hand-offs as
 * the 1 ms bound; it is the bound that needs no clock. */
static uint64_t fair_ns = 1000000, pass_limit = 65536;

/* The choice (choice.h): 0 measures and chooses, 1 + R keeps regime R. */
static uint64_t fixed = 0, window_ns = 1000000, explore_max = 10, nap_ns = 100000;

/* fork(): the child's lists may hold nodes of threads that do not exist
 * there (the header; purge_stale), and its records' try-locks holders. */
static void choices_after_fork(void);

__attribute__((constructor)) static void register_fork(void)
{
	ls_fork_at_child(choices_after_fork);
}

/* ---- the regime, chosen per mutex ---- */

static inline unsigned regime_of(const struct autolock *l)
{
	if (fixed)
		return (unsigned)fixed - 1;
	/* relaxed: a hint the holder writes; a stale regime is still a regime */
	return atomic_load_explicit(&l->stat, memory_order_relaxed) & REG_MASK;
}

/* Counts a release; by the holder, before its release store. relaxed: only
 * holders write `stat`, one at a time, ordered by the lock itself. */
static inline void count_release(struct autolock *l)
{
	atomic_store_explicit(&l->stat, atomic_load_explicit(&l->stat, memory_order_relaxed) + COUNT_ONE,
			      memory_order_relaxed);
}

/* The records of the choice: CHOICES of them, two places for each mutex (by
 * its address), taken over when stale. `busy` is a try-lock: two mutexes
 * whose holders meet on one record do not wait for each other; one skips
 * its step. */
#define CHOICES 256
struct choice_rec {
	_Atomic uintptr_t owner; /* the mutex (its state's address); 0: none */
	_Atomic uint32_t busy;
	struct ls_choice c;
};
static struct choice_rec choices[CHOICES];

static void choices_after_fork(void)
{
	/* a holder of `busy` at the fork does not exist in the child */
	for (unsigned i = 0; i < CHOICES; i++)
		atomic_store_explicit(&choices[i].busy, 0, memory_order_relaxed);
}

static struct choice_rec *choice_claim(const struct autolock *l, uint64_t now)
{
	uintptr_t me = (uintptr_t)l;
	size_t h = (size_t)((me >> 4) * 0x9e3779b97f4a7c15ull >> 56) & (CHOICES - 2);
	for (size_t i = h; i < h + 2; i++) {
		struct choice_rec *r = &choices[i];
		/* acquire: pairs with the release that ends another holder's step */
		if (atomic_exchange_explicit(&r->busy, 1, memory_order_acquire))
			continue;
		/* relaxed: written under busy, which this thread holds */
		uintptr_t o = atomic_load_explicit(&r->owner, memory_order_relaxed);
		if (o == me)
			return r;
		if (!o || now - r->c.t0 > LS_CHOICE_STALE * window_ns) {
			atomic_store_explicit(&r->owner, me, memory_order_relaxed);
			r->c.t0 = 0; /* fresh */
			return r;
		}
		atomic_store_explicit(&r->busy, 0, memory_order_release);
	}
	return NULL;
}

static void flush(struct autolock *l);

/* A holder whose arrival in SPIN spun its whole budget and queued counts it
 * (saturating): spinning did not pay for it. */
static void count_miss(struct autolock *l)
{
	/* relaxed: the holder's own word, as count_release */
	uint32_t s = atomic_load_explicit(&l->stat, memory_order_relaxed);
	if ((s & MISS_MASK) != MISS_MASK)
		atomic_store_explicit(&l->stat, s + MISS_ONE, memory_order_relaxed);
}

/* A step of the mutex's choice, by its holder. */
static __attribute__((noinline)) void choice_step(struct autolock *l)
{
	static const struct ls_choice_cfg cfg0 = {0, COUNT_MASK, 0};
	uint64_t now = ls_now_ns();
	struct choice_rec *r = choice_claim(l, now);
	if (!r)
		return;
	struct ls_choice_cfg cfg = cfg0;
	cfg.window = window_ns;
	cfg.level_max = (unsigned)explore_max;
	/* relaxed: the holder's own word (count_release) */
	uint32_t s = atomic_load_explicit(&l->stat, memory_order_relaxed);
	enum ls_choice_event ev;
	/* the fast way back: spinners that spin in vain make SLEEP's trial next */
	if ((s & REG_MASK) == SPIN && (s & MISS_MASK) >= MISS_HURRY * MISS_ONE)
		ls_choice_hurry(&r->c, SLEEP);
	unsigned next = ls_choice_step(&r->c, &cfg, now, s >> COUNT_SHIFT, s & REG_MASK, &ev);
	if (ev != LS_CHOICE_NONE)
		s &= ~MISS_MASK; /* a new window counts its own */
	/* release: pairs with the acquire of the next claim */
	atomic_store_explicit(&r->busy, 0, memory_order_release);
	atomic_store_explicit(&l->stat, (s & ~REG_MASK) | next, memory_order_relaxed);
	if (next == (s & REG_MASK))
		return;
	/* Waiters queued under SLEEP or BATCH sleep in the list until each is
	 * woken in turn: to SPIN they all arrive again, and spin. */
	if (next == SPIN)
		flush(l);
}

/* Every 16th contended event of a thread (a release with waiters, an
 * acquisition through the slow path) steps the choice, holding the mutex. */
static __thread unsigned choice_tick __attribute__((tls_model("initial-exec")));

static inline void choice_maybe(struct autolock *l)
{
	if (!fixed && !(++choice_tick & 15))
		choice_step(l);
}

/* ---- the list (all under QLOCK) ---- */

#define HEAD_BITS 48
#define HEAD_MASK (((uintptr_t)1 << HEAD_BITS) - 1)

static inline struct node *head(const struct autolock *l)
{
	return (struct node *)(l->head_gen & HEAD_MASK);
}

/* Keeps the generation bits. */
static inline void set_head(struct autolock *l, struct node *n)
{
	l->head_gen = (l->head_gen & ~HEAD_MASK) | (uintptr_t)n;
}

static inline uint16_t list_gen(const struct autolock *l)
{
	return (uint16_t)(l->head_gen >> HEAD_BITS);
}

static void list_append(struct autolock *l, struct node *n)
{
	struct node *h = head(l);
	n->listed = true;
	l->head_gen = (l->head_gen & HEAD_MASK) | (uintptr_t)(uint16_t)ls_fork_gen() << HEAD_BITS;
	if (!h) {
		n->next = n->prev = n;
		set_head(l, n);
		return;
	}
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static void list_remove(struct autolock *l, struct node *n)
{
	n->listed = false;
	if (n->next == n) {
		set_head(l, NULL);
		return;
	}
	n->prev->next = n->next;
	n->next->prev = n->prev;
	if (head(l) == n)
		set_head(l, n->next);
}

/* Drops a list queued before a fork: its nodes are on the stacks of threads
 * that do not exist here, which glibc reuses for the child's new threads or
 * unmaps, so none is read. A list is all of one generation: the first
 * QLOCK holder of a generation comes here before it appends. (16 bits of
 * the generation: a list left untouched through a multiple of 65,536
 * generations of nested forks would be taken for a live one.) Returns true
 * if it changed the list (emptied it). */
static bool purge_stale(struct autolock *l)
{
	if (!head(l) || list_gen(l) == (uint16_t)ls_fork_gen())
		return false;
	set_head(l, NULL);
	return true;
}

/* Waiting for QLOCK: it is held for a few instructions, but its holder may
 * be preempted, so spin, then yield; never sleep (nobody would wake us). */
static void qlock_wait(struct ls_spin *s)
{
	if (ls_spin_step(s))
		sched_yield();
}

/* Takes QLOCK (adding the bits `add` in the same CAS), unless the word has
 * a bit of `bail_set` or lacks one of `bail_clear`: then returns false.
 * acquire: pairs with qunlock's release (the list), and with the release
 * CAS of a head that parked again (its node's state). */
static bool qlock(struct autolock *l, uint32_t bail_set, uint32_t bail_clear, uint32_t add)
{
	struct ls_spin s = LS_SPIN_INIT;
	/* relaxed: the CAS below orders; a stale value only fails it */
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
	for (;;) {
		if ((v & bail_set) || (v & bail_clear) != bail_clear)
			return false;
		if (v & QLOCK) {
			qlock_wait(&s);
			/* relaxed: the CAS below orders; a stale value only fails it */
			v = atomic_load_explicit(&l->word, memory_order_relaxed);
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(&l->word, &v, v | QLOCK | add, memory_order_acquire,
							  memory_order_relaxed))
			return true;
	}
}

/* Releases QLOCK after a change of the list: WAITERS follows the list, a new
 * head starts with no passes, and the bits in `clear` are cleared. Returns
 * the new word. release: pairs with the acquire of the next QLOCK CAS. */
static uint32_t qunlock(struct autolock *l, bool new_head, uint32_t clear)
{
	/* relaxed: the CAS below orders; a stale value only fails it */
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed), nv;
	do {
		nv = v & ~(QLOCK | clear);
		if (!head(l))
			nv &= ~(WAITERS | WOKEN | PASS_MASK);
		else if (new_head)
			nv &= ~PASS_MASK;
	} while (!atomic_compare_exchange_weak_explicit(&l->word, &v, nv, memory_order_release,
							memory_order_relaxed));
	return nv;
}

/* Tells the head to compete, unless somebody holds the lock (its unlock
 * will), the head is already awake, or nobody waits. */
static void wake_head(struct autolock *l)
{
	if (!qlock(l, WOKEN | LOCKED, WAITERS, WOKEN))
		return;
	if (purge_stale(l) && !head(l)) {
		qunlock(l, true, WOKEN);
		return;
	}
	struct node *h = head(l);
	/* The head is WAITING: WOKEN was clear, and a head sets its state to
	 * WAITING before it clears WOKEN. */
	uint32_t old = atomic_exchange_explicit(&h->state, NODE_WOKEN, memory_order_acq_rel);
	LS_INJECT();
	qunlock(l, false, 0);
	/* The node may have been unlinked and its stack reused by now: a
	 * spurious wake-up at worst, which every waiter re-checks. */
	if (old & LS_PARKED)
		ls_futex_wake(&h->state, 1);
}

/* Holding the lock: takes every waiter out of the list and tells it to
 * arrive again (FLUSHED), as under a new regime. The list is detached under
 * QLOCK (each node unlisted: a timed-out waiter then waits for its word, in
 * leave); the nodes are then the flusher's until it writes FLUSHED, so it
 * reads each one's `next` first. All before the release: no woken head can
 * meet WOKEN set again by a release while a node still waits for FLUSHED. */
static void flush(struct autolock *l)
{
	if (!qlock(l, 0, WAITERS, 0))
		return;
	purge_stale(l);
	struct node *first = head(l), *n = first;
	if (first)
		do {
			n->listed = false;
			n = n->next;
		} while (n != first);
	set_head(l, NULL);
	qunlock(l, true, WOKEN);
	if (!first)
		return;
	n = first;
	do {
		struct node *next = n->next;
		/* release: pairs with the acquire load of node_wait, nap, park_again */
		uint32_t old = atomic_exchange_explicit(&n->state, FLUSHED, memory_order_acq_rel);
		LS_INJECT();
		if (old & LS_PARKED)
			ls_futex_wake(&n->state, 1);
		n = next;
	} while (n != first);
}

/* Holding LOCKED and QLOCK: gives the lock to the head. */
static void hand_off(struct autolock *l)
{
	purge_stale(l);
	struct node *h = head(l);
	if (!h) {
		qunlock(l, true, LOCKED | WOKEN);
		LS_TEST_POINT(LS_POINT_RELEASED);
		return;
	}
	list_remove(l, h);
	qunlock(l, true, WOKEN); /* LOCKED stays: it is h's now */
	LS_INJECT();
	/* release: the critical section before this is visible to h, which
	 * reads OWNER with acquire */
	ls_word_release(&h->state, OWNER);
}

/* ---- acquisition ---- */

/* The woken head has taken the lock and left the list, holding QLOCK (and
 * WOKEN, which was its): wakes the new head at once, so that its wake-up
 * overlaps this holder's critical section instead of waiting for the next
 * release (a list of sleepers drains at one wake-up latency for all, not
 * one each), and releases QLOCK. The new head is WAITING: only a head is
 * ever NODE_WOKEN. */
static void pass_on(struct autolock *l)
{
	purge_stale(l);
	struct node *h = head(l);
	if (!h) {
		qunlock(l, true, WOKEN);
		return;
	}
	uint32_t old = atomic_exchange_explicit(&h->state, NODE_WOKEN, memory_order_acq_rel);
	LS_INJECT();
	qunlock(l, true, 0);
	/* The node may have been unlinked and its stack reused by now: a
	 * spurious wake-up at worst, which every waiter re-checks. */
	if (old & LS_PARKED)
		ls_futex_wake(&h->state, 1);
}

/* Spins on the word for at most `budget` steps (0: looks once, and again
 * only while it sees the lock free); takes the lock if it is seen free. As
 * the woken head (`me`), also unlinks itself, in the same CAS that takes
 * the lock (QLOCK with it). Returns true once it holds the lock. */
static bool spin_acquire(struct autolock *l, struct node *me, unsigned budget, uint64_t deadline, bool *late)
{
	for (unsigned i = 0;; i++) {
		/* relaxed: a hint; the CAS that follows decides and orders */
		uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
		if (!(v & LOCKED)) {
			if (!me) {
				/* acquire: pairs with the release of unlock */
				if (atomic_compare_exchange_weak_explicit(
					&l->word, &v, v | LOCKED, memory_order_acquire, memory_order_relaxed))
					return true;
				LS_INJECT();
				continue;
			} else if (!(v & QLOCK)) {
				if (atomic_compare_exchange_weak_explicit(&l->word, &v, v | LOCKED | QLOCK,
									  memory_order_acquire,
									  memory_order_relaxed)) {
					if (!me->listed) {
						/* flushed meanwhile (FLUSHED is on its way): an
						 * acquirer like any other, whose WOKEN is gone */
						qunlock(l, false, 0);
						return true;
					}
					list_remove(l, me);
					pass_on(l);
					return true;
				}
				LS_INJECT();
				continue;
			}
			/* free, but the list is being changed: wait like a spinner */
		}
		if (i >= budget)
			return false;
		if (deadline && (i & 15) == 0 && ls_now_ns() >= deadline) {
			*late = true;
			return false;
		}
		LS_TEST_POINT(LS_POINT_SPIN);
		ls_cpu_relax();
	}
}

/* Queues `me` at the tail. Returns false (not queued) if the lock was seen
 * free: the caller retries it. */
static bool enqueue(struct autolock *l, struct node *me)
{
	if (!qlock(l, 0, LOCKED, WAITERS))
		return false;
	bool purged = purge_stale(l);
	/* relaxed: published by qunlock's release of QLOCK */
	atomic_store_explicit(&me->state, WAITING, memory_order_relaxed);
	list_append(l, me);
	uint32_t nv = qunlock(l, head(l) == me, purged ? WOKEN : 0);
	/* The unlock that released the lock meanwhile saw WAITERS (set with
	 * QLOCK) and wakes the head, unless it found WOKEN; WOKEN of a purged
	 * node is cleared above, so make sure. */
	if (!(nv & (LOCKED | WOKEN)))
		wake_head(l);
	return true;
}

/* Timed out while queued (not OWNER). Returns 0 if the lock was handed to
 * us meanwhile, else ETIMEDOUT. */
static int leave(struct autolock *l, struct node *me)
{
	qlock(l, 0, 0, 0);
	if (!me->listed) {
		/* An unlock unlinked us to hand us the lock, or a change of
		 * regime flushed the list: wait for the word that says which. */
		qunlock(l, false, 0);
		uint32_t st = atomic_load_explicit(&me->state, memory_order_acquire) & ~LS_PARKED;
		while (st != OWNER && st != FLUSHED)
			st = ls_wait_while_eq(&me->state, st);
		return st == OWNER ? 0 : ETIMEDOUT;
	}
	bool was_head = head(l) == me;
	/* relaxed: under QLOCK, which orders every change of it */
	uint32_t st = atomic_load_explicit(&me->state, memory_order_relaxed) & ~LS_PARKED;
	list_remove(l, me);
	uint32_t nv = qunlock(l, was_head, st == NODE_WOKEN ? WOKEN : 0);
	/* If we were the woken head, or the head an unlock is about to wake,
	 * the new head must be woken in our place. */
	if (was_head && !(nv & (LOCKED | WOKEN)))
		wake_head(l);
	return ETIMEDOUT;
}

/* Should the woken head `me`, which found the lock taken, ask for the
 * hand-off now and wait for it awake? Once it has waited
 * LOCKSWAP_AUTO_FAIR_NS; and once it has been passed three quarters of the
 * LOCKSWAP_AUTO_PASSES times, so that the hand-off the count forces finds
 * it awake (one given to a sleeper leaves the lock idle for a wake-up: at
 * 30-60 M releases/s 65536 passes come every 1-2 ms, and a BATCH head naps
 * 100 us at a time, 3,000-6,000 passes). */
static bool fair_due(const struct autolock *l, const struct node *me)
{
	/* relaxed: a hint; the request's CAS orders */
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
	if ((v >> PASS_SHIFT) >= pass_limit - pass_limit / 4)
		return true;
	return fair_ns != UINT64_MAX && ls_now_ns() - me->since >= fair_ns;
}

/* The woken head failed to get the lock: asks for a hand-off if `ask`,
 * then parks again. Returns the node's state: OWNER (handed the lock
 * meanwhile), FLUSHED, WAITING (wait to be woken) or NODE_WOKEN (compete
 * again: the lock was seen free). */
static uint32_t park_again(struct autolock *l, struct node *me, bool ask)
{
	/* relaxed: a hint for the fairness request; the CASes below order */
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
	while (ask && (v & (WOKEN | LOCKED)) == (WOKEN | LOCKED)) {
		if ((v & PASS_MASK) == PASS_MASK ||
		    atomic_compare_exchange_weak_explicit(&l->word, &v, v | PASS_MASK, memory_order_relaxed,
							  memory_order_relaxed)) {
			me->asked = true;
			break;
		}
	}
	uint32_t st = NODE_WOKEN;
	if (!atomic_compare_exchange_strong_explicit(&me->state, &st, WAITING, memory_order_acquire,
						     memory_order_acquire))
		return st & ~LS_PARKED; /* OWNER or FLUSHED */
	LS_INJECT();
	/* relaxed: the CAS below orders; a stale value only fails it */
	v = atomic_load_explicit(&l->word, memory_order_relaxed);
	for (;;) {
		/* Free, or QLOCK held: a release may be waking us right now (it
		 * holds LOCKED and QLOCK while it does, see the header), and a
		 * head that parked again then would miss it: compete again. */
		if (!(v & LOCKED) || (v & QLOCK)) {
			st = WAITING;
			if (!atomic_compare_exchange_strong_explicit(
				&me->state, &st, NODE_WOKEN, memory_order_acquire, memory_order_acquire))
				return st & ~LS_PARKED;
			return NODE_WOKEN;
		}
		/* a hand-off to us or a flush cleared it: wait for the word */
		if (!(v & WOKEN))
			return WAITING;
		/* release: our WAITING is visible to the wake_head that sees
		 * WOKEN clear (its acquiring CAS) */
		if (atomic_compare_exchange_weak_explicit(&l->word, &v, v & ~WOKEN, memory_order_release,
							  memory_order_relaxed))
			return WAITING;
	}
}

/* BATCH: the woken head naps, still NODE_WOKEN (the word keeps WOKEN, so no
 * release wakes it), until LOCKSWAP_AUTO_NAP_NS or the deadline has passed,
 * or a hand-off has made it OWNER (hand_off wakes it: LS_PARKED). Returns
 * the state: NODE_WOKEN or OWNER. Only the napper and hand_off change the
 * node meanwhile. */
static uint32_t nap(struct node *me, uint64_t deadline)
{
	uint64_t until = ls_now_ns() + nap_ns;
	if (deadline && deadline < until)
		until = deadline;
	LS_TEST_POINT(LS_POINT_NAP);
	uint32_t v = NODE_WOKEN;
	if (ls_wait_cfg.policy == LS_WAIT_PARK) {
		/* relaxed: the futex and the acquire load below order */
		if (atomic_compare_exchange_strong_explicit(&me->state, &v, NODE_WOKEN | LS_PARKED,
							    memory_order_relaxed, memory_order_relaxed)) {
			LS_INJECT();
			ls_futex_wait(&me->state, NODE_WOKEN | LS_PARKED, until);
			v = NODE_WOKEN | LS_PARKED;
			/* relaxed: only the napper clears its own LS_PARKED */
			atomic_compare_exchange_strong_explicit(&me->state, &v, NODE_WOKEN,
								memory_order_relaxed, memory_order_relaxed);
		}
	} else {
		struct ls_spin s = LS_SPIN_INIT;
		/* relaxed: the acquire load below orders */
		for (unsigned i = 0; atomic_load_explicit(&me->state, memory_order_relaxed) == NODE_WOKEN;
		     i++) {
			if ((i & 15) == 0 && ls_now_ns() >= until)
				break;
			ls_spin_step(&s);
		}
	}
	/* acquire: pairs with the exchange of hand_off */
	return atomic_load_explicit(&me->state, memory_order_acquire) & ~LS_PARKED;
}

/* Waits while the node is WAITING, under the policy: without its spin
 * phase unless `awake` (the thread spun on the word before it queued, and a
 * queued waiter has nothing to gain from spinning until it is woken; one
 * that asked for a hand-off expects it soon), and under park yielding
 * `yields` times first. Returns the new state, or 0 if the deadline passed.
 * The LS_PARKED protocol of wait.h: a sleeper sets the bit with a CAS, the
 * waker's exchange (ls_word_publish, or wake_head) sees it and wakes. */
static uint32_t node_wait(struct node *me, uint64_t deadline, unsigned yields, bool awake)
{
	if (yields > ls_wait_cfg.yield)
		yields = ls_wait_cfg.yield;
	struct ls_spin s = {awake ? 0 : ls_wait_cfg.spin + (ls_wait_cfg.yield - yields)};
	for (unsigned i = 0;; i++) {
		/* acquire: pairs with the exchange of wake_head or hand_off */
		uint32_t v = atomic_load_explicit(&me->state, memory_order_acquire);
		if ((v & ~LS_PARKED) != WAITING)
			return v & ~LS_PARKED;
		/* the clock costs ~20 ns: every 16th step while spinning */
		if (deadline && ((i & 15) == 0 || ls_wait_cfg.policy != LS_WAIT_SPIN) &&
		    ls_now_ns() >= deadline)
			return 0;
		LS_TEST_POINT(LS_POINT_QUEUED);
		if (!ls_spin_step(&s))
			continue;
		if (!(v & LS_PARKED) &&
		    !atomic_compare_exchange_strong_explicit(&me->state, &v, v | LS_PARKED,
							     memory_order_relaxed, memory_order_relaxed))
			continue;
		LS_INJECT();
		ls_futex_wait(&me->state, v | LS_PARKED, deadline);
	}
}

/* The fast path: sets LOCKED whatever the other bits say (x86: one lock
 * bts), so that a lock whose waiters sleep (WAITERS, WOKEN and a pass count
 * in the word) is taken as cheaply as a free one with nobody queued.
 * acquire: pairs with the release of unlock. */
static inline bool take(struct autolock *l)
{
	return !(atomic_fetch_or_explicit(&l->word, LOCKED, memory_order_acquire) & LOCKED);
}

/* The deadline passed while queued: leaves the list, then looks at the lock
 * once more and takes it if it is free (the waiter is re-evaluated at its
 * deadline instead of failing blind: a timed waiter behind the head is never
 * woken before the head has the lock, and with short patience the lock is
 * often free at that moment). 0 or ETIMEDOUT. */
static int timed_out(struct autolock *l, struct node *me)
{
	int r = leave(l, me);
	return r == ETIMEDOUT && take(l) ? 0 : r;
}

/* The slow path's budgets in a regime: spin steps on the word, and under
 * park the yields of a queued waiter before it sleeps. */
static unsigned spin_of(unsigned reg)
{
	return reg == SPIN ? ls_wait_cfg.spin : 0;
}

static unsigned yields_of(unsigned reg)
{
	return reg == SPIN ? ls_wait_cfg.yield : 0;
}

/* Waits in the list (queued by enqueue): 0 with the lock, ETIMEDOUT, or -1
 * when a change of regime flushed the list (the caller arrives again). */
static int queued(struct autolock *l, struct node *me, uint64_t deadline)
{
	bool late = false;
	for (;;) {
		uint32_t st =
		    node_wait(me, deadline, me->asked ? UINT32_MAX : yields_of(regime_of(l)), me->asked);
		if (!st)
			return timed_out(l, me);
		/* NODE_WOKEN: compete (the list's head, holding WOKEN) */
		while (st == NODE_WOKEN) {
			LS_TEST_POINT(LS_POINT_WOKEN);
			unsigned reg = regime_of(l);
			if (spin_acquire(l, me, me->asked ? ls_wait_cfg.spin : spin_of(reg), deadline, &late))
				return 0;
			if (late)
				return timed_out(l, me);
			bool ask = !me->asked && fair_due(l, me);
			if (reg == BATCH && !ask && !me->asked) {
				st = nap(me, deadline);
				if (st == NODE_WOKEN && deadline && ls_now_ns() >= deadline)
					return timed_out(l, me);
				continue;
			}
			st = park_again(l, me, ask);
		}
		if (st == OWNER)
			return 0;
		if (st == FLUSHED)
			return -1;
	}
}

static int lock_slow(struct autolock *l, uint64_t deadline)
{
	bool late = false, missed = false;
	struct node me;
	me.since = 0;
	for (;;) {
		unsigned budget = spin_of(regime_of(l));
		if (spin_acquire(l, NULL, budget, deadline, &late))
			return 0;
		missed = budget && !late;
		if (!me.since)
			me.since = ls_now_ns();
		me.asked = false;
		for (;;) {
			if (late || (deadline && ls_now_ns() >= deadline))
				return ETIMEDOUT;
			if (enqueue(l, &me))
				break;
			if (spin_acquire(l, NULL, 0, 0, &late))
				return 0;
		}
		int r = queued(l, &me, deadline);
		if (r == 0 && missed)
			count_miss(l);
		if (r >= 0)
			return r;
		LS_TEST_POINT(LS_POINT_REARRIVE);
	}
}

static __attribute__((noinline)) int auto_lock_slow(struct autolock *l, uint64_t deadline)
{
	int r = lock_slow(l, deadline);
	if (!r)
		choice_maybe(l);
	return r;
}

static void auto_lock(void *state)
{
	struct autolock *l = state;
	if (LS_LIKELY(take(l)))
		return;
	auto_lock_slow(l, 0);
}

static int auto_timedlock(void *state, uint64_t deadline)
{
	struct autolock *l = state;
	if (take(l))
		return 0;
	return auto_lock_slow(l, deadline);
}

static int auto_trylock(void *state)
{
	return ls_word_try_set(&((struct autolock *)state)->word, LOCKED) ? 0 : EBUSY;
}

/* Holding LOCKED, QLOCK and WOKEN, from a release that overtakes the head:
 * tell the head to compete, then release. */
static void release_waking(struct autolock *l)
{
	bool purged = purge_stale(l);
	struct node *h = head(l);
	uint32_t old = 0;
	/* The head is WAITING: WOKEN was clear, and a head sets its state to
	 * WAITING before it clears WOKEN. */
	if (h)
		old = atomic_exchange_explicit(&h->state, NODE_WOKEN, memory_order_acq_rel);
	LS_INJECT();
	/* relaxed: the CAS below releases; a stale value only fails it */
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed), nv;
	do {
		nv = (v & ~(LOCKED | QLOCK)) + PASS_ONE;
		if (!h)
			nv &= ~(WAITERS | WOKEN | PASS_MASK);
		else if (purged)
			nv &= ~PASS_MASK; /* a new head starts with no passes */
		/* release: pairs with the acquiring OR or CAS of lock and of QLOCK */
	} while (!atomic_compare_exchange_weak_explicit(&l->word, &v, nv, memory_order_release,
							memory_order_relaxed));
	LS_TEST_POINT(LS_POINT_RELEASED);
	/* The node may have been unlinked and its stack reused by now: a
	 * spurious wake-up at worst, which every waiter re-checks. */
	if (old & LS_PARKED)
		ls_futex_wake(&h->state, 1);
}

/* The mutex this thread last released with waiters queued (a hint: the
 * address is compared, never dereferenced). Its next release reads the word
 * first and does one CAS from what it read: with waiters queued the word is
 * not just LOCKED, and a CAS from LOCKED would fail first, a locked
 * instruction for nothing on every release of a lock whose waiters sleep.
 * Other releases do not read first: the load, right after the lock's
 * locked instruction, costs a few cycles (about 4 of a 33-cycle pair). */
static __thread const struct autolock *busy __attribute__((tls_model("initial-exec")));

/* v: the word as auto_unlock last read it, or as its failed CAS found it. */
static __attribute__((noinline)) void auto_unlock_slow(struct autolock *l, uint32_t v)
{
	struct ls_spin s = LS_SPIN_INIT;
	busy = (v & WAITERS) ? l : NULL;
	if ((v & (LOCKED | WAITERS)) == (LOCKED | WAITERS))
		choice_maybe(l);
	for (;;) {
		if (!(v & LOCKED))
			return; /* free: an unlock too many (lock.h, misuse) */
		if (!(v & WAITERS)) {
			/* release: pairs with the acquiring OR or CAS of lock */
			if (atomic_compare_exchange_weak_explicit(
				&l->word, &v, v & ~LOCKED, memory_order_release, memory_order_relaxed)) {
				LS_TEST_POINT(LS_POINT_RELEASED);
				return;
			}
			continue;
		}
		bool hand = (v >> PASS_SHIFT) >= pass_limit;
		if (hand || !(v & WOKEN)) {
			/* A hand-off, or a head to wake: the list, under QLOCK. */
			if (v & QLOCK) {
				qlock_wait(&s);
				/* relaxed: the CAS below orders; a stale value only fails it */
				v = atomic_load_explicit(&l->word, memory_order_relaxed);
				continue;
			}
			/* acquire: pairs with qunlock's release (the list) */
			if (!atomic_compare_exchange_weak_explicit(
				&l->word, &v, v | QLOCK | (hand ? 0 : WOKEN), memory_order_acquire,
				memory_order_relaxed))
				continue;
			if (hand)
				hand_off(l);
			else
				release_waking(l);
			return;
		}
		/* The head was woken and competes: just release, and count the
		 * pass. release: pairs with the acquiring OR or CAS of lock. */
		if (atomic_compare_exchange_weak_explicit(&l->word, &v, (v & ~LOCKED) + PASS_ONE,
							  memory_order_release, memory_order_relaxed)) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			return;
		}
	}
}

static void auto_unlock(void *state)
{
	struct autolock *l = state;
	uint32_t v = LOCKED;
	count_release(l);
	if (LS_UNLIKELY(busy == l)) {
		/* relaxed: the CAS releases; a stale value only fails it */
		v = atomic_load_explicit(&l->word, memory_order_relaxed);
		if (v != LOCKED) {
			/* The head is awake, or naps (BATCH), and no hand-off is
			 * due: release and count the pass, as the slow path would,
			 * without its call. Else the slow path. */
			if ((v & (LOCKED | QLOCK | WOKEN)) == (LOCKED | WOKEN) &&
			    (v >> PASS_SHIFT) < pass_limit) {
				choice_maybe(l);
				/* release: pairs with the acquiring OR or CAS of lock */
				if (atomic_compare_exchange_strong_explicit(
					&l->word, &v, (v & ~LOCKED) + PASS_ONE, memory_order_release,
					memory_order_relaxed)) {
					LS_TEST_POINT(LS_POINT_RELEASED);
					return;
				}
			}
			auto_unlock_slow(l, v);
			return;
		}
		busy = NULL; /* nobody waits now */
	}
	/* release: pairs with the acquiring OR or CAS of lock */
	if (LS_LIKELY(atomic_compare_exchange_strong_explicit(&l->word, &v, 0, memory_order_release,
							      memory_order_relaxed))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		return;
	}
	auto_unlock_slow(l, v);
}

static const struct ls_param auto_params[] = {
    {"LOCKSWAP_AUTO_FAIR_NS",
     "a queued waiter that waited this long is handed the lock at the next release (ns)", &fair_ns, 0,
     UINT64_MAX},
    {"LOCKSWAP_AUTO_PASSES",
     "releases that may overtake the first queued waiter before it is handed the lock", &pass_limit, 0,
     PASS_MAX - 1},
    {"LOCKSWAP_AUTO_REGIME",
     "0: each mutex chooses how its waiters wait by measuring; 1 sleep at once, 2 spin then park, 3 batch: "
     "that regime only",
     &fixed, 0, 3},
    {"LOCKSWAP_AUTO_WINDOW_NS", "a mutex measures each regime in windows of this length (ns)", &window_ns,
     10000, 1000000000},
    {"LOCKSWAP_AUTO_EXPLORE",
     "a mutex tries each other regime at least every 2^N windows while its choice holds (1..12)",
     &explore_max, 1, 12},
    {"LOCKSWAP_AUTO_NAP_NS", "batch regime: the woken head naps this long between looks at the lock (ns)",
     &nap_ns, 1000, 100000000},
    {0},
};

static const struct ls_algo auto_algo = {
    .name = "auto",
    .desc =
	"adaptive: each mutex measures and chooses sleep, spin-then-park or batch; barging, bounded hand-off",
    .caps = LS_CAP_TIMEOUT,
    .rank = 5,
    .state_size = sizeof(struct autolock),
    .params = auto_params,
    .lock = auto_lock,
    .trylock = auto_trylock,
    .timedlock = auto_timedlock,
    .unlock = auto_unlock,
};
LS_REGISTER_ALGO(auto_algo);
