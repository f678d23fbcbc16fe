/*
 * auto.c - `auto`: a lock that decides, per mutex and while the program
 * runs, how the lock passes from one thread to the next.
 *
 * Why. No lock wins everywhere (LiTL, ATC'16): FIFO queue locks collapse
 * once threads outnumber cores, because every release waits for the next
 * waiter to be scheduled (He, Scherer, Scott, TR 867, sections 1-2,
 * ../shared/papers/000_9c294dcad948dd76.txt); barging locks keep the lock
 * moving but let a waiter starve. Reactive locks (Lim & Agarwal, "Reactive
 * Synchronization Algorithms for Multiprocessors", ASPLOS 1994) choose the
 * protocol per lock from what they observe; `auto` does so with four
 * behaviours, each chosen by the state of the mutex itself:
 *
 *  1. Free: one atomic OR to take the lock, one CAS to release it (AMP
 *     7.3, TTAS, ../shared/papers/004_c3117dc34b7d1b6f.txt). The OR sets
 *     LOCKED whatever else the word holds, so a free lock whose waiters
 *     sleep is taken as cheaply, without a call; the release of a mutex
 *     that had waiters at this thread's last release reads the word first
 *     and does one CAS from it (auto_unlock). So a thread that keeps
 *     re-taking a lock whose waiters sleep uses two locked instructions per
 *     acquisition, as with glibc's mutex.
 *  2. Briefly held: a waiter spins on the word, test-and-test-and-set, for
 *     its share of LOCKSWAP_SPIN steps (the first phase of Lim & Agarwal's
 *     two-phase waiting, "Waiting Algorithms for Synchronization in
 *     Large-Scale Multiprocessors", TOCS 1993), and, once queued under park,
 *     its share of LOCKSWAP_YIELD yields before it sleeps. The share is
 *     learned per mutex ("the spin budget" below): all of both while
 *     spinning pays, none (queue and sleep at once, as glibc's default
 *     mutex always does) when this mutex's holders keep the lock longer
 *     than a waiter's budget, or when its lock, once released, is taken
 *     again at once by a running thread, so that winning it would only move
 *     it and its data to another CPU. That is two-phase waiting made
 *     adaptive: Karlin, Li, Manasse & Owicki ("Empirical Studies of
 *     Competitive Spinning for a Shared-Memory Multiprocessor", SOSP 1991)
 *     compare fixed and adaptive spin-then-block thresholds, the adaptive
 *     ones predicting the next wait from the recent ones; glibc's
 *     PTHREAD_MUTEX_ADAPTIVE_NP keeps a per-mutex average of the spins that
 *     succeeded (__spins, weight 1/8) and spins up to twice it; Linux's
 *     mutexes spin only while the owner runs (optimistic spinning,
 *     Documentation/locking/mutex-design.rst), which a user-space waiter
 *     cannot see: a budget spent in vain is its sign here.
 *  3. Persistently contended: the waiter joins the mutex's FIFO list and
 *     waits on its own node (spins, yields, sleeps: LOCKSWAP_WAIT). A
 *     release does not hand the lock over: it frees it for whoever runs
 *     (barging), and wakes the list's head only if no woken head is
 *     already competing. So a preempted or sleeping waiter never holds the
 *     lock up (TR 867's problem), and a mutex with many sleepers costs at
 *     most one wake-up per release, usually fewer (Go's sync.Mutex,
 *     mutexWoken). The head keeps its place while it competes.
 *  4. Unfair: each release that overtakes the head counts a pass in the
 *     word; once the head has been passed LOCKSWAP_AUTO_PASSES times, or
 *     has waited LOCKSWAP_AUTO_FAIR_NS (default 1 ms, Go's starvation
 *     threshold; parking_lot forces a fair unlock every 0.5 ms on average)
 *     and found the lock taken, the next release hands the lock to it
 *     directly (Linux's mutex hand-off, commit 9d659ae14b54, 2016).
 * Bound (tests/unit/auto.c forces it): the head of the list is overtaken at
 * most LOCKSWAP_AUTO_PASSES times, so the k-th waiter in the list (k = 0
 * for the head) gets the lock within (k + 1) * (PASSES + 1) releases.
 * Timed waiters queue like the others and unlink themselves on timeout;
 * then they look at the lock once more and take it if it is free (only the
 * head is woken, so a timed waiter behind it is re-evaluated at its
 * deadline instead of failing while the lock stands free).
 *
 * State: the word, `learn` (the spin budget's record: below), the list.
 * Word (32 bits):
 *	LOCKED	held
 *	QLOCK	the list is being changed (a bit lock held for a few
 *		instructions, never across a sleep or a wake-up)
 *	WAITERS	the list is not empty
 *	WOKEN	the head was woken to compete and has not parked again:
 *		a release need not wake anybody
 *	passes	(bits 8..31) releases that overtook the current head;
 *		all ones is the head's request for a hand-off
 * Node (on the waiting thread's stack; linked under QLOCK):
 *	WAITING	in the list; waits (LS_PARKED while asleep)
 *	NODE_WOKEN  the head, competing for the lock; the word has WOKEN
 *	OWNER	handed the lock by a release; already unlinked
 * Transitions: enqueue (free -> WAITING at the tail, WAITERS); a release
 * with WAITERS and no WOKEN wakes the head (sets WOKEN, WAITING ->
 * NODE_WOKEN, then releases); the woken head takes the lock and unlinks
 * itself in one CAS
 * (LOCKED|QLOCK, clears WOKEN), or parks again (NODE_WOKEN -> WAITING,
 * then clears WOKEN); a release whose passes reached the limit unlinks the
 * head and hands it the lock (-> OWNER, LOCKED stays set); a timed-out
 * waiter unlinks itself and, if it was the head, wakes the next one.
 * Who frees each node: nobody; a node lives in its thread's lock() frame
 * and is unlinked (under QLOCK) before that returns. A late futex wake on a
 * node whose frame is gone is a spurious wake-up, re-checked by every
 * waiter. After fork() the child's list may hold nodes of threads that do
 * not exist there: nodes record a fork generation, and the first QLOCK
 * holder that meets stale ones unlinks them.
 *
 * All-zero is unlocked with an empty list; an unlocked mutex without
 * waiters holds no pointer, so a byte copy is a free lock of its own.
 *
 * After the release (lock.h): every release is one CAS of the word that
 * clears LOCKED (or, for a hand-off, the store of OWNER into the head's
 * node, the lock staying LOCKED for it); after it the unlocker touches at
 * most the head's node (on its waiter's stack, not the lock's memory) and
 * the kernel. So a release that wakes the head does it BEFORE it releases:
 * holding LOCKED, it takes QLOCK and sets WOKEN in one CAS, marks the head
 * NODE_WOKEN, and then clears LOCKED and QLOCK in one CAS; the futex wake
 * follows, on the node. (It used to release and then take QLOCK to wake the
 * head: a late CAS on the word and a read of its list, in memory that a
 * destroy may have freed by then.) Misuse: an unlock that finds LOCKED
 * clear returns; it must not count a pass or hand the lock to the head.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

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

enum { WAITING = 1, NODE_WOKEN = 2, OWNER = 3 };

struct node {
	_Atomic uint32_t state; /* WAITING, NODE_WOKEN, OWNER; LS_PARKED while asleep */
	uint32_t gen;		/* fork generation when queued */
	struct node *next, *prev;
	uint64_t since; /* ls_now_ns() when it queued */
	bool listed;
};

struct autolock {
	_Atomic uint32_t word;
	_Atomic uint32_t learn; /* the spin budget's record (below); a hint, relaxed */
	struct node *head;	/* circular list, head->prev is the tail; under QLOCK */
};
_Static_assert(sizeof(struct autolock) <= LS_INLINE_STATE, "inline state");

/* Defaults. FAIR_NS: Go's starvation threshold, 1 ms. PASSES: a hand-off
 * to a head that sleeps leaves the lock idle for a wake-up (10-50 us on a
 * loaded 2-CPU VM); 1024 releases of an empty critical section take about
 * as long, so a limit that low cost 60% of the throughput there (measured:
 * results/auto/README.md). 65536 releases take >= 1.3 ms at the highest
 * rate measured (48 M/s), so the count adds at most as many hand-offs as
 * the 1 ms bound; it is the bound that needs no clock. */
static uint64_t fair_ns = 1000000, pass_limit = 65536;

/* fork(): the child's lists may hold nodes of threads that do not exist
 * there. Each node records the generation it was queued in; a QLOCK holder
 * that finds nodes of an older one unlinks them. */
static _Atomic uint32_t fork_gen;

static void fork_child(void)
{
	/* relaxed: fork's child is single-threaded */
	atomic_fetch_add_explicit(&fork_gen, 1, memory_order_relaxed);
}

__attribute__((constructor)) static void register_fork(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

/* ---- the spin budget, learned per mutex (header, point 2) ----
 *
 * Spinning pays when a waiter takes the lock after a short wait that would
 * otherwise have left the lock idle. Where the lock never idles, waiters
 * that spin cost throughput (lockbench on the 2-vCPU reference VM, 2
 * threads, nothing outside the lock: 0.13-0.56x glibc's, whose waiters
 * sleep; results/default/README.md). It does not pay in two cases, each
 * counted in `learn` as an average over the mutex's recent spin phases
 * (weight 1/4; glibc's __spins uses 1/8), 0 = never, 255 = always:
 *   bits 0-7  miss: the waiter spent its budget and queued anyway: holders
 *             keep the lock long (they block, yield or are preempted inside
 *             the critical section). A phase that took the lock counts 0,
 *             one that spent its budget 255 (Karlin et al.'s and Lim &
 *             Agarwal's case for sleeping at once).
 *   bits 8-15 hot: once released, the lock was taken again by another
 *             running thread within LOCKSWAP_AUTO_HOT_NS, faster than a
 *             hand-off to this waiter moves the lock and its data to another
 *             CPU: winning it would only move it, and the spinner's reads
 *             slow the holder down. Only probes measure it (below).
 * Phases that spun no step (free at the first look, or a budget of 0) and
 * phases cut short by a deadline say nothing and are not counted.
 *
 * A waiter's share of the policy's budgets (LOCKSWAP_SPIN steps, and under
 * park LOCKSWAP_YIELD yields) is all of them while both averages are at most
 * SHARE_LO (a quarter), none once either reaches SHARE_HI (three quarters):
 * then the waiter queues and, under park, sleeps at once, as glibc's mutex
 * always does; in between, in proportion to the larger. Every
 * LOCKSWAP_AUTO_PROBE-th arrival of a thread is a probe: it spins the whole
 * budget whatever the share, and when it sees the held lock become free it
 * watches it for LOCKSWAP_AUTO_HOT_NS before taking it (hot: 0 if it stayed
 * free, 255 if somebody took it; the probe then queues). So a mutex whose
 * holders stopped blocking, or whose lock has started to idle, is seen
 * again, and the share grows back. */
#define AVG_MASK 0xffu
#define MISS_SHIFT 0
#define HOT_SHIFT 8
#define SHARE_LO 64u
#define SHARE_HI 192u
#define SHARE_ALL 256u

static uint64_t adapt = 1, probe_every = 16, hot_ns = 500;
static __thread unsigned probe_tick __attribute__((tls_model("initial-exec")));

static unsigned avg_at(uint32_t learn, unsigned shift)
{
	return (learn >> shift) & AVG_MASK;
}

/* The share (0..SHARE_ALL) of the policy's budgets that the record justifies. */
static unsigned share_of(const struct autolock *l)
{
	if (!adapt)
		return SHARE_ALL;
	uint32_t v = atomic_load_explicit(&l->learn, memory_order_relaxed);
	unsigned worst =
	    avg_at(v, MISS_SHIFT) > avg_at(v, HOT_SHIFT) ? avg_at(v, MISS_SHIFT) : avg_at(v, HOT_SHIFT);
	if (worst <= SHARE_LO)
		return SHARE_ALL;
	if (worst >= SHARE_HI)
		return 0;
	return (SHARE_HI - worst) * SHARE_ALL / (SHARE_HI - SHARE_LO);
}

/* Is this arrival of the thread a probe? */
static bool probe_now(void)
{
	if (!adapt || !probe_every || ++probe_tick < probe_every)
		return false;
	probe_tick = 0;
	return true;
}

static unsigned spin_budget(unsigned share)
{
	return (unsigned)((uint64_t)ls_wait_cfg.spin * share / SHARE_ALL);
}

/* Moves the average at `shift` a quarter of the way to 0 or 255. */
static uint32_t avg_step(uint32_t v, unsigned shift, bool bad)
{
	unsigned a = avg_at(v, shift);
	a = bad ? a + (AVG_MASK - a + 3) / 4 : a - (a + 3) / 4;
	return (v & ~(AVG_MASK << shift)) | (a << shift);
}

/* What one spin phase saw. */
struct phase {
	unsigned steps; /* spun (lost races included) */
	int hot;	/* probes: -1 not measured, 0 the lock stayed free, 1 it was taken */
};

/* Records a spin phase: won (took the lock) or not. Called by the new
 * holder, or by a waiter about to queue or park, so the mutex is in use and
 * its memory valid; the line is the lock word's, which the caller has just
 * changed or is about to. Racing records may lose one another's update: a
 * hint, like glibc's __spins. */
static void learn(struct autolock *l, const struct phase *ph, bool won)
{
	if (!adapt || !ph->steps)
		return;
	uint32_t v = atomic_load_explicit(&l->learn, memory_order_relaxed), nv = v;
	if (ph->hot >= 0)
		nv = avg_step(nv, HOT_SHIFT, ph->hot);
	if (ph->hot != 1) /* a probe that saw a hot lock gave up on purpose */
		nv = avg_step(nv, MISS_SHIFT, !won);
	if (nv != v)
		atomic_store_explicit(&l->learn, nv, memory_order_relaxed);
}

/* A probe has seen the held lock become free: does it stay free for
 * LOCKSWAP_AUTO_HOT_NS? *v receives the word last read (without LOCKED if
 * true). The clock costs ~20 ns; probes are rare. */
static bool stays_free(struct autolock *l, uint32_t *v)
{
	uint64_t t0 = ls_now_ns();
	LS_TEST_POINT(LS_POINT_WATCH);
	for (;;) {
		*v = atomic_load_explicit(&l->word, memory_order_relaxed);
		if (*v & LOCKED)
			return false;
		if (ls_now_ns() - t0 >= hot_ns)
			return true;
		ls_cpu_relax();
	}
}

/* ---- the list (all under QLOCK) ---- */

static void list_append(struct autolock *l, struct node *n)
{
	struct node *h = l->head;
	n->listed = true;
	if (!h) {
		n->next = n->prev = n;
		l->head = n;
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
		l->head = NULL;
		return;
	}
	n->prev->next = n->next;
	n->next->prev = n->prev;
	if (l->head == n)
		l->head = n->next;
}

/* Unlinks the nodes of threads that did not survive a fork. Returns true if
 * it changed the list (the head, then, is a new one and not woken). */
static bool purge_stale(struct autolock *l)
{
	/* relaxed: written once, in fork's child, before any other thread exists */
	uint32_t gen = atomic_load_explicit(&fork_gen, memory_order_relaxed);
	struct node *h = l->head;
	if (!h || h->gen == gen)
		return false; /* nodes are queued in generation order */
	while (l->head && l->head->gen != gen)
		list_remove(l, l->head);
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
		if (!l->head)
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
	if (purge_stale(l) && !l->head) {
		qunlock(l, true, WOKEN);
		return;
	}
	struct node *h = l->head;
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

/* Holding LOCKED and QLOCK: gives the lock to the head. */
static void hand_off(struct autolock *l)
{
	purge_stale(l);
	struct node *h = l->head;
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

/* Spins on the word for at most `budget` steps; takes the lock if it is
 * seen free. As the woken head (`me`), also unlinks itself, in the same CAS
 * that takes the lock (QLOCK with it). A probe (`ph->hot` 0 on entry) first
 * watches a lock it saw become free (stays_free) and gives up if somebody
 * takes it. Returns true once it holds the lock; ph->steps is how many
 * steps it spun (lost races included). */
static bool spin_acquire(struct autolock *l, struct node *me, unsigned budget, uint64_t deadline, bool *late,
			 struct phase *ph)
{
	bool probe = ph->hot == 0;
	ph->hot = -1;
	for (unsigned i = 0;; i++) {
		ph->steps = i;
		/* relaxed: a hint; the CAS that follows decides and orders */
		uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
		if (!(v & LOCKED)) {
			if (probe && i && ph->hot < 0) {
				/* v is re-read: the lock may have been taken */
				ph->hot = !stays_free(l, &v);
				if (ph->hot)
					return false;
			}
			if (!me) {
				/* acquire: pairs with the release of unlock */
				if (atomic_compare_exchange_weak_explicit(
					&l->word, &v, v | LOCKED, memory_order_acquire, memory_order_relaxed))
					return true;
				LS_INJECT();
				if (ph->hot == 0 && (v & LOCKED)) {
					ph->hot = 1; /* taken between the watch and the CAS */
					return false;
				}
				continue;
			} else if (!(v & QLOCK)) {
				if (atomic_compare_exchange_weak_explicit(
					&l->word, &v, (v | LOCKED | QLOCK) & ~WOKEN, memory_order_acquire,
					memory_order_relaxed)) {
					list_remove(l, me);
					qunlock(l, true, 0);
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

/* A spin phase of `share` (a probe: all of the budget, watching) and its
 * record: true once the lock is held. */
static bool spin_phase(struct autolock *l, struct node *me, unsigned share, bool probe, uint64_t deadline,
		       bool *late)
{
	struct phase ph = {0, probe ? 0 : -1};
	bool won = spin_acquire(l, me, spin_budget(probe ? SHARE_ALL : share), deadline, late, &ph);
	if (won || !*late)
		learn(l, &ph, won);
	return won;
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
	/* relaxed: as in purge_stale */
	me->gen = atomic_load_explicit(&fork_gen, memory_order_relaxed);
	list_append(l, me);
	uint32_t nv = qunlock(l, l->head == me, purged ? WOKEN : 0);
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
		/* An unlock unlinked us to hand us the lock: wait for it. */
		qunlock(l, false, 0);
		uint32_t st = atomic_load_explicit(&me->state, memory_order_acquire) & ~LS_PARKED;
		while (st != OWNER)
			st = ls_wait_while_eq(&me->state, st);
		return 0;
	}
	bool was_head = l->head == me;
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

/* The woken head failed to get the lock: asks for a hand-off if it has
 * waited long enough, then parks again. Returns true if it was handed the
 * lock meanwhile, false if it should wait (state WAITING) or retry (state
 * NODE_WOKEN, lock seen free). */
static bool park_again(struct autolock *l, struct node *me, bool *retry)
{
	*retry = false;
	/* relaxed: a hint for the fairness request; the CASes below order */
	uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
	if (fair_ns != UINT64_MAX && ls_now_ns() - me->since >= fair_ns) {
		while ((v & (WOKEN | LOCKED)) == (WOKEN | LOCKED) && (v & PASS_MASK) != PASS_MASK &&
		       !atomic_compare_exchange_weak_explicit(&l->word, &v, v | PASS_MASK,
							      memory_order_relaxed, memory_order_relaxed)) {
		}
	}
	uint32_t st = NODE_WOKEN;
	if (!atomic_compare_exchange_strong_explicit(&me->state, &st, WAITING, memory_order_acquire,
						     memory_order_acquire))
		return true; /* OWNER */
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
				return true;
			*retry = true;
			return false;
		}
		if (!(v & WOKEN))
			return false; /* a hand-off to us cleared it: wait for OWNER */
		/* release: our WAITING is visible to the wake_head that sees
		 * WOKEN clear (its acquiring CAS) */
		if (atomic_compare_exchange_weak_explicit(&l->word, &v, v & ~WOKEN, memory_order_release,
							  memory_order_relaxed))
			return false;
	}
}

/* Waits while the node is WAITING, under the policy but without its spin
 * phase: the thread spun on the word before it queued, and a queued waiter
 * has nothing to gain from spinning until it is woken. Under park it yields
 * its `share` of LOCKSWAP_YIELD first (none when spinning has been failing
 * on this mutex: then it sleeps at once). Returns the new state, or 0 if the
 * deadline passed. The LS_PARKED protocol of wait.h: a sleeper sets the bit
 * with a CAS, the waker's exchange (ls_word_publish, or wake_head) sees it
 * and wakes. */
static uint32_t node_wait(struct node *me, uint64_t deadline, unsigned share)
{
	unsigned yields = (unsigned)((uint64_t)ls_wait_cfg.yield * share / SHARE_ALL);
	struct ls_spin s = {ls_wait_cfg.spin + (ls_wait_cfg.yield - yields)};
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

static __attribute__((noinline)) int auto_lock_slow(struct autolock *l, uint64_t deadline)
{
	bool late = false;
	if (spin_phase(l, NULL, share_of(l), probe_now(), deadline, &late))
		return 0;
	struct node me;
	me.since = ls_now_ns();
	for (;;) {
		if (late || (deadline && ls_now_ns() >= deadline))
			return ETIMEDOUT;
		if (enqueue(l, &me))
			break;
		struct phase ph = {0, -1};
		if (spin_acquire(l, NULL, 0, 0, &late, &ph))
			return 0;
	}
	for (;;) {
		uint32_t st = node_wait(&me, deadline, share_of(l));
		if (!st)
			return timed_out(l, &me);
		if (st == OWNER)
			return 0;
		/* NODE_WOKEN: compete (the list's head, holding WOKEN) */
		for (;;) {
			if (spin_phase(l, &me, share_of(l), false, deadline, &late))
				return 0;
			bool retry;
			if (park_again(l, &me, &retry))
				return 0;
			if (!retry)
				break;
		}
		if (late)
			return timed_out(l, &me);
	}
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
	struct node *h = l->head;
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
	if (LS_UNLIKELY(busy == l)) {
		/* relaxed: the CAS releases; a stale value only fails it */
		v = atomic_load_explicit(&l->word, memory_order_relaxed);
		if (v != LOCKED) {
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
    {"LOCKSWAP_AUTO_ADAPT",
     "1: each mutex learns how much of LOCKSWAP_SPIN and LOCKSWAP_YIELD pays; 0: waiters always spend both",
     &adapt, 0, 1},
    {"LOCKSWAP_AUTO_PROBE",
     "every N-th contended arrival of a thread spins all of LOCKSWAP_SPIN and measures the lock (0: never)",
     &probe_every, 0, 65535},
    {"LOCKSWAP_AUTO_HOT_NS",
     "a probe that sees the lock taken again within this time after a release counts it hot (ns)", &hot_ns, 0,
     1000000},
    {0},
};

static const struct ls_algo auto_algo = {
    .name = "auto",
    .desc = "adaptive: barging, queued sleepers, bounded hand-off; each mutex learns its spin budget",
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
