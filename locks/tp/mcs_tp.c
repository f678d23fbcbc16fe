/*
 * mcs_tp.c - MCS-TP, the MCS time-published lock.
 *
 * He, Scherer, Scott, "Preemption Adaptivity in Time-Published Queue-Based
 * Spin Locks", TR 867, Rochester 2005, ../shared/papers/000_9c294dcad948dd76.txt:
 * section 2 (common design), 2.1 and figure 2 (MCS-TP), appendix A.1
 * (bounds), appendix B (code: mcstp_acquire, mcstp_release). The listing
 * survived text extraction except its indentation; where its code and prose
 * differ, the prose is followed (noted at the two places below).
 *
 * Design. An MCS queue linked head to tail; the holder hands the lock to its
 * successor explicitly. Waiters spin on their own node and publish a
 * timestamp in it (tpclock.h). A waiter whose patience runs out marks its
 * node TIMEOUT and leaves it in place; coming back, it flips it to WAITING
 * and has its old place again. At release, the holder passes over every
 * successor that is not WAITING with a fresh timestamp (timed out, or seems
 * preempted), marking it FAILED (removed), and grants the lock to the first
 * live one. Past LOCKSWAP_TP_TREADMILL skipped nodes it stops marking until
 * it has found a live successor or the end of the queue (the treadmill
 * bound, section 2.1). A waiter that fails or times out yields the
 * processor if the holder's critical section looks older than
 * LOCKSWAP_TP_MAX_CS_NS (it may be preempted). lock() never fails: it
 * retries the paper's -1 (removed) and -2 (timed out) results.
 *
 *	state:	tail	last node in the queue, NULL when free
 *		holder	the holder's node, for unlock and for the waiters'
 *			look at its critical-section start (MAXIMUM_CS_TIME);
 *			the paper's L->cs_start_time lives in that node so the
 *			state fits inline (16 bytes)
 *	node:	status	WAITING, AVAILABLE, TIMEOUT, FAILED, ABANDONED
 *			(LS_PARKED: the owner sleeps on it, under "park")
 *		time	owner's published time (not updated while it sleeps)
 *		next	successor
 *		cs_start when the owner acquired the lock
 *
 * Transitions of status (figure 2, plus ABANDONED):
 *	owner:    -> WAITING (enqueue), WAITING -> TIMEOUT (patience over),
 *	          TIMEOUT -> WAITING (rejoin), TIMEOUT -> ABANDONED (gives the
 *	          node up for good: thread exit, or its table is full)
 *	releaser: WAITING -> AVAILABLE (grant), any -> FAILED (removal)
 *
 * Nodes and who frees them. The paper gives each thread one node per lock,
 * reused while it is TIMEOUT in the queue (figure 1: "semi-dynamic"). Here a
 * node comes from ls_node_alloc at the first attempt; within one lock() or
 * timedlock() call it is reused across attempts; when timedlock() returns
 * ETIMEDOUT with the node still queued (TIMEOUT), the thread keeps it in a
 * small per-thread table (the paper's last_lock) and rejoins with it at its
 * next acquisition of that lock. The holder's node is freed by unlock, after
 * the release scan. A FAILED node belongs to its owner again (it reuses or
 * frees it). An ABANDONED node is freed by the releaser that removes it:
 * the owner's TIMEOUT -> ABANDONED and the releaser's exchange to FAILED
 * decide, by which comes first, who frees. At thread exit the table's nodes
 * are abandoned (pthread key destructor).
 *
 * Waiting policy. spin/yield: the waiter spins (yields) on its status,
 * publishing its time; under yield and park it spins LOCKSWAP_TP_SPIN_FACTOR
 * (16) times the policy's budget before its first yield, because a waiter
 * that yields stops publishing and is soon passed over (tpclock.h). park: once the spin budget is spent it
 *sleeps on the status word (LS_PARKED protocol) and publishes nothing more, so by the paper's own rule (a
 *waiter whose time is older than UPDATE_DELAY is not running) it is treated as preempted: a releaser that
 *finds it stale passes over it (FAILED) in favour of a live waiter behind it and wakes it, and it re-queues
 *at the tail; one that finds it still fresh (asleep for less than UPDATE_DELAY), or finds no live waiter
 *behind it, grants it the lock and wakes it (then the waiters behind it stay queued: one wake-up, not a
 * herd). The releaser wakes the sleepers it passed over only after it has
 * granted the lock (at most WAKE_BATCH are deferred), so that those
 * wake-ups, of threads that will not hold the lock next, stay out of the
 * hand-off. A sleeper stays asleep until granted, removed, or its deadline.
 * The yields on a stalled holder are the algorithm's own and happen under
 * every policy.
 *
 * fork() (mcs_core.h's way). In a fork child the queue may hold nodes of
 * waiters the fork left behind (stamped with an older generation: `gen`),
 * some perhaps not linked. Their times are stale, so a releaser passes
 * over them already, but it could wait for ever for the link of one that
 * swapped itself in and was gone, and grant one that slept. So the first
 * live waiter (whose predecessor is stale) links behind the holder's node
 * (`holder`; a holder that is gone: behind the stale predecessor, for
 * ever), and a hold taken before the fork first empties the queue if its
 * tail is stale, else waits until its next names a live node: from there
 * on its scan meets live nodes only.
 *
 * After the release (lock.h): the CAS that empties the queue, or the grant
 * (the CAS of a successor's status to AVAILABLE), is the last access to the
 * lock; marking passed-over nodes FAILED, the deferred wake-ups and the
 * free of the holder's node come after it, on nodes only. Misuse: the
 * holder field is NULL in a lock never locked and after a release that
 * emptied the queue (cleared just before the CAS), and names the grantee
 * from just before a grant (see set_holder()): an unlock of a free lock
 * returns, and an unlock too many after a hand-over is an unlock of a
 * lock another thread holds, as with glibc's NORMAL mutex.
 */
#define LS_NODE_CLASS LS_NODES_MCS_TP /* pool.h: nodes reused only by this algorithm */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "fork.h"
#include "lock.h"
#include "pool.h"
#include "tp.h"
#include "tpclock.h"
#include "wait.h"

/* MAX_THREAD_NUM, LOCKSWAP_TP_TREADMILL: nodes a releaser removes eagerly
 * before it only scans (the default: tp.c). */
static uint64_t treadmill = 64;

enum { WAITING = 1, AVAILABLE, TIMEOUT, FAILED, ABANDONED };
enum { GOT = 1, REMOVED = -1, TIMED_OUT = -2 }; /* the paper's results */

struct node {
	_Atomic uint32_t status;
	uint32_t gen; /* fork generation when enqueued (fork.h) */
	_Atomic uint64_t time;
	struct node *_Atomic next;
	_Atomic uint64_t cs_start;
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct mcstp {
	struct node *_Atomic tail;
	struct node *_Atomic holder;
};
_Static_assert(sizeof(struct mcstp) <= LS_INLINE_STATE, "inline state");

/* ---- the per-thread table of nodes left TIMEOUT in a queue ---- */

#define LEFT_MAX 8
struct left {
	const void *lock;
	struct node *node;
};
static __thread struct left left[LEFT_MAX];
static __thread bool left_hooked;
static pthread_key_t left_key;
static pthread_once_t left_once = PTHREAD_ONCE_INIT;
static bool left_ok; /* the key exists: nodes may be kept across calls */

/* Gives a TIMEOUT node up: the releaser that removes it frees it; if it was
 * removed already (FAILED), it is ours to free. */
static void abandon(struct node *n)
{
	uint32_t s = TIMEOUT;
	/* acq_rel: orders against the releaser's exchange (mark_failed) */
	if (!atomic_compare_exchange_strong_explicit(&n->status, &s, ABANDONED, memory_order_acq_rel,
						     memory_order_acquire))
		ls_node_free(n); /* FAILED: nobody else refers to it */
}

static void left_exit(void *arg)
{
	(void)arg;
	for (int i = 0; i < LEFT_MAX; i++)
		if (left[i].node) {
			abandon(left[i].node);
			left[i].node = NULL;
			left[i].lock = NULL;
		}
	left_hooked = false;
}

static void left_make_key(void)
{
	left_ok = pthread_key_create(&left_key, left_exit) == 0;
}

static struct node *left_take(const void *lock)
{
	for (int i = 0; i < LEFT_MAX; i++)
		if (left[i].lock == lock && left[i].node) {
			struct node *n = left[i].node;
			left[i].node = NULL;
			left[i].lock = NULL;
			return n;
		}
	return NULL;
}

static void left_put(const void *lock, struct node *n)
{
	if (!left_hooked) {
		pthread_once(&left_once, left_make_key);
		if (!left_ok || pthread_setspecific(left_key, (void *)1) != 0) {
			abandon(n); /* no exit hook: do not keep it */
			return;
		}
		left_hooked = true;
	}
	int slot = -1;
	for (int i = 0; i < LEFT_MAX; i++) {
		struct node *m = left[i].node;
		/* A node removed since (FAILED) is ours: free it, keep the slot. */
		if (m && atomic_load_explicit(&m->status, memory_order_acquire) == FAILED) {
			ls_node_free(m);
			left[i].node = NULL;
			left[i].lock = NULL;
			m = NULL;
		}
		if (!m && slot < 0)
			slot = i;
	}
	if (slot < 0) { /* full: give the oldest slot's node up */
		slot = 0;
		abandon(left[0].node);
	}
	left[slot].lock = lock;
	left[slot].node = n;
}

/* ---- fork (see the header) ---- */

/* n was enqueued before this process forked. relaxed: written before the
 * swap that published n. */
static inline bool stale(struct node *n)
{
	return ls_fork_child() && ls_fork_stale(__atomic_load_n(&n->gen, __ATOMIC_RELAXED));
}

/* A hold taken before the fork, by I: empties the queue if its tail is
 * stale (true: released), else waits for the first live waiter's link
 * behind I (false: release as usual). */
static __attribute__((noinline)) bool fork_empty(struct mcstp *l, struct node *I)
{
	struct ls_spin sp = LS_SPIN_INIT;
	for (;;) {
		/* acquire: pairs with the release of the swap that enqueued it */
		struct node *t = atomic_load_explicit(&l->tail, memory_order_acquire), *e = t;
		if (t == I || stale(t)) {
			atomic_store_explicit(&l->holder, NULL, memory_order_relaxed);
			/* release: the next holder's exchange acquires it */
			if (atomic_compare_exchange_strong_explicit(&l->tail, &e, NULL, memory_order_acq_rel,
								    memory_order_relaxed)) {
				LS_TEST_POINT(LS_POINT_RELEASED);
				ls_node_free(I);
				return true;
			}
			atomic_store_explicit(&l->holder, I, memory_order_relaxed);
			continue;
		}
		/* acquire: pairs with (C) */
		struct node *n = atomic_load_explicit(&I->next, memory_order_acquire);
		if (n && !stale(n))
			return false;
		if (ls_spin_step(&sp))
			sched_yield(); /* a pointer: no futex to park on */
	}
}

/* ---- acquisition ---- */

static inline void acquired(struct mcstp *l, struct node *I, uint64_t now)
{
	/* relaxed: read by waiters for a heuristic, and by unlock, which runs
	 * after us in this thread or after the program's own synchronisation */
	atomic_store_explicit(&I->cs_start, now, memory_order_relaxed);
	atomic_store_explicit(&l->holder, I, memory_order_relaxed);
}

/* The holder seems preempted: its critical section began more than
 * MAXIMUM_CS_TIME ago. The holder's node may have been freed and reused
 * (type-stable memory): then one yield is misguided, nothing worse. */
static bool holder_stalled(struct mcstp *l)
{
	/* relaxed: a heuristic (a yield); the node is type-stable */
	struct node *h = atomic_load_explicit(&l->holder, memory_order_relaxed);
	return h && ls_tp_older(atomic_load_explicit(&h->cs_start, memory_order_relaxed), ls_tp_now(),
				ls_tp_max_cs_ns);
}

/*
 * One attempt (the paper's mcstp_acquire): GOT, REMOVED (I is ours again,
 * out of the queue) or TIMED_OUT (I stays queued, TIMEOUT). `rejoin`: I is
 * our TIMEOUT node in this queue. `patience`: ns (the paper's T), cut at
 * `deadline`, the caller's, 0 for none (a parked waiter sleeps until then).
 * `sp`: the caller's spin budget, shared by its attempts.
 */
static int attempt(struct mcstp *l, struct node *I, bool rejoin, uint64_t patience, uint64_t deadline,
		   struct ls_spin *sp)
{
	uint64_t now = ls_tp_now(), published = now, end = now + patience;
	if (deadline && deadline < end)
		end = deadline;
	uint32_t s = TIMEOUT;
	/* relaxed: a timestamp, published by the release that enqueues or rejoins */
	atomic_store_explicit(&I->time, now, memory_order_relaxed);
	/* Rejoin (TIMEOUT -> WAITING). release: the time above is seen by a
	 * releaser that reads WAITING with acquire (grant). */
	if (!rejoin || !atomic_compare_exchange_strong_explicit(&I->status, &s, WAITING, memory_order_acq_rel,
								memory_order_relaxed)) {
		/* A fresh attempt; a failed rejoin means I was removed (FAILED). */
		/* relaxed: published by the release of the exchange or CAS that enqueues the node */
		atomic_store_explicit(&I->next, NULL, memory_order_relaxed);
		atomic_store_explicit(&I->status, WAITING, memory_order_relaxed);
		I->gen = ls_fork_stamp();
		LS_INJECT();
		/* release: status, time and next are visible to our successor
		 * and to the releaser that finds I; acquire: pairs with the
		 * release CAS that emptied the queue (mcstp_release). */
		struct node *pred = atomic_exchange_explicit(&l->tail, I, memory_order_acq_rel);
		if (!pred) {
			acquired(l, I, now);
			return GOT;
		}
		LS_TEST_POINT(LS_POINT_VISIBLE);
		LS_INJECT();
		if (LS_UNLIKELY(stale(pred))) {
			/* The first live waiter of a fork child: behind the
			 * holder (see the header). relaxed: written before the
			 * fork, kept until the holder has seen our link. */
			struct node *h = atomic_load_explicit(&l->holder, memory_order_relaxed);
			if (h)
				pred = h; /* else a holder that is gone: for ever */
		}
		/* (C) release: pairs with the acquire load of next in the
		 * releaser, which then reads our status and time. */
		atomic_store_explicit(&pred->next, I, memory_order_release);
	}

	bool parked = false;
	for (;;) {
		/* (A) acquire: pairs with (B) in grant */
		s = atomic_load_explicit(&I->status, memory_order_acquire);
		if (s == AVAILABLE) {
			acquired(l, I, ls_tp_now());
			return GOT;
		}
		if (s == FAILED) {
			LS_INJECT();
			if (holder_stalled(l))
				sched_yield();
			return REMOVED;
		}
		/* WAITING, possibly with LS_PARKED */
		now = ls_tp_now();
		bool timed_out;
		if (parked) {
			timed_out = deadline && ls_now_ns() >= deadline;
		} else {
			/* Publish at most every UPDATE_DELAY/8: fresh enough for
			 * the releaser, and fewer stores on the line it reads. */
			if (now - published >= ls_tp_update_delay_ns / 8) {
				/* relaxed: a timestamp; a stale one only makes us look preempted */
				atomic_store_explicit(&I->time, now, memory_order_relaxed);
				published = now;
			}
			timed_out = (int64_t)(now - end) >= 0;
		}
		if (timed_out) {
			/* acq_rel: against the releaser's grant or removal */
			if (!atomic_compare_exchange_strong_explicit(
				&I->status, &s, TIMEOUT, memory_order_acq_rel, memory_order_relaxed))
				continue; /* granted or removed meanwhile */
			LS_INJECT();
			if (holder_stalled(l))
				sched_yield();
			return TIMED_OUT;
		}
		if (parked || ls_spin_step_n(sp, ls_tp_spin())) {
			/* Asleep: our time goes stale, and a releaser then
			 * passes over us as preempted (see the header). */
			parked = true;
			if (!(s & LS_PARKED)) {
				/* acq_rel: either the releaser's exchange/CAS sees
				 * LS_PARKED and wakes us, or this CAS fails. */
				if (!atomic_compare_exchange_strong_explicit(&I->status, &s, s | LS_PARKED,
									     memory_order_acq_rel,
									     memory_order_relaxed))
					continue;
				s |= LS_PARKED;
			}
			ls_futex_wait(&I->status, s, deadline);
		}
	}
}

/* lock() (deadline 0) and timedlock(): attempts of LOCKSWAP_TP_PATIENCE_NS
 * each (the last one cut at the deadline) until one succeeds. */
static int mcstp_acquire(struct mcstp *l, uint64_t deadline)
{
	struct node *I = left_take(l);
	bool rejoin = I != NULL;
	if (!I)
		I = ls_node_alloc();
	/* The spin budget runs on across attempts that time out (patience is
	 * shorter than a budget of yields on a busy machine, and a waiter must
	 * end up asleep while a holder holds for long); a waiter removed by a
	 * release (the lock moves) starts a fresh one, to be live when the lock
	 * comes round (measured: 16 threads on 2 CPUs, 0.33x glibc, against
	 * 0.03x when it slept again at once and 0.23x before issue 12). */
	struct ls_spin sp = LS_SPIN_INIT;
	for (;;) {
		int r = attempt(l, I, rejoin, ls_tp_patience_ns, deadline, &sp);
		if (r == GOT)
			return 0;
		if (deadline && ls_now_ns() >= deadline) {
			if (r == TIMED_OUT)
				left_put(l, I); /* still queued: rejoin next time */
			else
				ls_node_free(I);
			return ETIMEDOUT;
		}
		rejoin = r == TIMED_OUT;
		if (r == REMOVED)
			sp = (struct ls_spin)LS_SPIN_INIT; /* the lock moves: be live for it */
		LS_INJECT();
	}
}

static int mcstp_trylock(void *state)
{
	struct mcstp *l = state;
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (atomic_load_explicit(&l->tail, memory_order_relaxed))
		return EBUSY;
	struct node *I = ls_node_alloc(), *empty = NULL;
	/* relaxed: published by the release of the exchange or CAS that enqueues the node */
	atomic_store_explicit(&I->next, NULL, memory_order_relaxed);
	atomic_store_explicit(&I->status, WAITING, memory_order_relaxed);
	I->gen = ls_fork_stamp();
	LS_INJECT();
	/* as the exchange in attempt */
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &empty, I, memory_order_acq_rel,
						     memory_order_relaxed)) {
		ls_node_free(I);
		return EBUSY;
	}
	acquired(l, I, ls_tp_now());
	return 0;
}

/* Fast path: a free lock is taken like trylock (a node of ours left in
 * this queue would make it busy, so the table need not be looked at). */
static void mcstp_lock(void *state)
{
	struct mcstp *l = state;
	/* relaxed: a hint; the CAS that follows decides and orders */
	if (LS_LIKELY(!atomic_load_explicit(&l->tail, memory_order_relaxed)) && mcstp_trylock(state) == 0)
		return;
	mcstp_acquire(l, 0);
}

static int mcstp_timedlock(void *state, uint64_t deadline_ns)
{
	/* Already expired: succeed only if free now (POSIX), without queueing. */
	if (ls_now_ns() >= deadline_ns)
		return mcstp_trylock(state) ? ETIMEDOUT : 0;
	return mcstp_acquire(state, deadline_ns);
}

/* ---- release ---- */

/* Sleepers passed over by one release, woken once the lock is granted. */
#define WAKE_BATCH 8
struct wakes {
	int n;
	_Atomic uint32_t *w[WAKE_BATCH];
};

static void wake_all(struct wakes *wk)
{
	for (int i = 0; i < wk->n; i++)
		ls_futex_wake(wk->w[i], INT_MAX);
	wk->n = 0;
}

/* Removes n from the queue: n->next has been read already. A late wake on
 * a node its owner has meanwhile freed (it timed out) is a spurious wake-up
 * of type-stable memory. */
static void mark_failed(struct node *n, struct wakes *wk)
{
	/* acq_rel: against the owner's abandon (who frees) and park */
	uint32_t old = atomic_exchange_explicit(&n->status, FAILED, memory_order_acq_rel);
	if (old & LS_PARKED) {
		if (wk->n == WAKE_BATCH)
			wake_all(wk);
		wk->w[wk->n++] = &n->status;
	}
	if ((old & ~LS_PARKED) == ABANDONED)
		ls_node_free(n);
}

/* Marks from..to (inclusive) FAILED, following next: the nodes passed over
 * after the treadmill bound. */
static void fail_range(struct node *from, struct node *to, struct wakes *wk)
{
	for (struct node *n = from;;) {
		struct node *next = n == to ? NULL : atomic_load_explicit(&n->next, memory_order_acquire);
		mark_failed(n, wk);
		if (!next)
			return;
		n = next;
	}
}

/*
 * The holder field names the releaser for the whole scan, and the waiter
 * granted the lock from just before the grant: a waiter that is removed or
 * times out yields while the holder looks preempted (holder_stalled), and
 * with more threads than CPUs both the releaser in its scan and the granted
 * waiter before it runs are often preempted. (Cleared at the start of the
 * scan until the granted waiter wrote its own, the field said nothing in
 * those windows, the removed waiters spun against a preempted holder, and
 * mcs-tp fell from 0.3x glibc to 0.01-0.05x in make demo's configuration.)
 * So the releaser publishes the grantee, its critical section starting now,
 * before the store that grants it the lock, and itself again if that store
 * did not happen (the grantee timed out), the lock still being ours then;
 * before the store that empties the queue it clears the field (free: an
 * unlock too many then finds NULL and returns, lock.h, misuse). Never
 * written after the store that releases.
 */
static void set_holder(struct mcstp *l, struct node *n)
{
	/* relaxed: a hint for waiters, and unlock's, which runs after the
	 * acquire that the grant's release store pairs with */
	atomic_store_explicit(&l->holder, n, memory_order_relaxed);
}

/* Grants the lock to n if it is WAITING and, if `live`, its time is fresh
 * (a sleeper's time goes stale once it has slept UPDATE_DELAY). */
static bool grant(struct mcstp *l, struct node *I, struct node *n, bool live)
{
	uint32_t s = atomic_load_explicit(&n->status, memory_order_acquire);
	bool published = false;
	while ((s & ~LS_PARKED) == WAITING) {
		/* relaxed: a timestamp; ordered enough by the acquire of the status above */
		if (live && ls_tp_older(atomic_load_explicit(&n->time, memory_order_relaxed), ls_tp_now(),
					ls_tp_update_delay_ns))
			break; /* seems preempted, or asleep */
		if (!published) {
			/* relaxed: a heuristic's timestamp, as in acquired() */
			atomic_store_explicit(&n->cs_start, ls_tp_now(), memory_order_relaxed);
			set_holder(l, n);
			published = true;
		}
		/* (B) release: our critical section happens before the
		 * successor's; pairs with (A) */
		if (atomic_compare_exchange_weak_explicit(&n->status, &s, AVAILABLE, memory_order_acq_rel,
							  memory_order_acquire)) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			if (s & LS_PARKED)
				ls_futex_wake(&n->status, INT_MAX);
			return true;
		}
	}
	if (published)
		set_holder(l, I);
	return false;
}

/* n waits asleep in the kernel (LOCKSWAP_WAIT=park). */
static bool asleep(struct node *n)
{
	/* relaxed: a heuristic (whom to grant) */
	return atomic_load_explicit(&n->status, memory_order_relaxed) == (WAITING | LS_PARKED);
}

/*
 * The paper's mcstp_release. Two departures, both from the prose of
 * section 2.1: a node is marked removed only after its next pointer has
 * been read (as the listing does) and nodes scanned past the treadmill
 * bound are marked removed also when the scan reaches the end of the queue
 * (the listing forgets them there, which would leave their owners waiting
 * in a queue that no longer exists). One addition, for sleepers (park): a
 * stale sleeper is passed over only in favour of a live waiter behind it;
 * if the scan finds none and every waiter behind the first sleeper sleeps
 * too, that sleeper is granted the lock (one wake-up) and the nodes behind
 * it stay queued, instead of every sleeper being removed and woken (a
 * herd, each re-queueing to sleep again) while the lock goes free. If a
 * waiter that does not sleep was passed over (preempted: it re-queues when
 * it runs), the paper's rule stands. `hold` is the first node passed over
 * and not yet marked: past the treadmill bound, or the first sleeper.
 */
static __attribute__((noinline)) void mcstp_release(struct mcstp *l, struct node *I)
{
	/* relaxed: the holder's own swap made it non-NULL */
	if (!atomic_load_explicit(&l->tail, memory_order_relaxed))
		return; /* free: I is stale (lock.h, misuse) */
	if (LS_UNLIKELY(stale(I)) && fork_empty(l, I))
		return;
	struct node *cur = I, *hold = NULL, *sleeper = NULL, *before = NULL;
	bool others = false; /* a waiter not asleep was passed over after `sleeper` */
	uint64_t scanned = 0;
	struct wakes wk;
	wk.n = 0;
	for (;;) {
		/* acquire: pairs with (C) */
		struct node *succ = atomic_load_explicit(&cur->next, memory_order_acquire);
		if (!succ) {
			if (sleeper && !others) {
				if (hold != sleeper)
					fail_range(hold, before, &wk);
				if (grant(l, I, sleeper, false))
					break;
				/* it timed out meanwhile: pass over it too */
				hold = sleeper;
				sleeper = NULL;
				continue;
			}
			struct node *e = cur;
			set_holder(l, NULL);
			/* release: the next holder's exchange acquires it */
			if (atomic_compare_exchange_strong_explicit(&l->tail, &e, NULL, memory_order_acq_rel,
								    memory_order_relaxed)) {
				LS_TEST_POINT(LS_POINT_RELEASED);
				LS_INJECT();
				if (hold)
					fail_range(hold, cur, &wk);
				else if (cur != I)
					mark_failed(cur, &wk);
				break;
			}
			set_holder(l, I);
			/* A successor has swapped itself in; wait for its link. */
			struct ls_spin sp = LS_SPIN_INIT;
			while (!(succ = atomic_load_explicit(&cur->next, memory_order_acquire)))
				if (ls_spin_step(&sp))
					sched_yield(); /* a pointer: no futex to park on */
		}
		LS_INJECT();
		if (++scanned < treadmill) {
			if (cur != I && !hold)
				mark_failed(cur, &wk);
		} else if (!hold) {
			hold = cur; /* treadmill: stop removing until the end */
		}
		if (grant(l, I, succ, true)) {
			if (hold)
				fail_range(hold, cur, &wk);
			break;
		}
		if (!asleep(succ)) {
			others = others || sleeper;
		} else if (!sleeper) {
			sleeper = succ;
			before = cur;
			if (!hold)
				hold = succ;
		}
		LS_INJECT();
		cur = succ;
	}
	ls_node_free(I); /* nobody refers to the holder's node any more */
	wake_all(&wk);	 /* the sleepers passed over, after the hand-off */
}

static void mcstp_unlock(void *state)
{
	struct mcstp *l = state;
	/* relaxed: written by the acquisition this unlock ends; unlock may
	 * run on another thread only after the program's own synchronisation */
	struct node *I = atomic_load_explicit(&l->holder, memory_order_relaxed), *e = I;
	if (LS_UNLIKELY(!I))
		return; /* never locked, or handed over: free (lock.h, misuse) */
	/* A stale I (after a release that emptied the queue) is only read
	 * (type-stable memory); the CAS fails on the empty queue.
	 * Nobody behind us: the queue empties (as the first step of the scan
	 * below does). acquire: pairs with (C); release: the next holder's
	 * exchange acquires the CAS. */
	if (LS_LIKELY(!atomic_load_explicit(&I->next, memory_order_acquire) &&
		      atomic_compare_exchange_strong_explicit(&l->tail, &e, NULL, memory_order_acq_rel,
							      memory_order_relaxed))) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		ls_node_free(I);
		return;
	}
	mcstp_release(l, I);
}

static const struct ls_param mcstp_params[] = {
    LS_TP_PARAMS,
    {"LOCKSWAP_TP_TREADMILL", "MAX_THREAD_NUM: nodes a releaser removes before it only scans (mcs-tp)",
     &treadmill, 2, 1000000},
    {0},
};

static const struct ls_algo mcstp_algo = {
    .name = "mcs-tp",
    .desc = "MCS time-published lock: passes over preempted waiters (He/Scherer/Scott TR 867 2.1, app. B)",
    .caps = LS_CAP_TIMEOUT | LS_CAP_QNODE,
    .rank = 60,
    .state_size = sizeof(struct mcstp),
    .params = mcstp_params,
    .lock = mcstp_lock,
    .trylock = mcstp_trylock,
    .timedlock = mcstp_timedlock,
    .unlock = mcstp_unlock,
};
LS_REGISTER_ALGO(mcstp_algo);
