/*
 * shfl.c - ShflLock, the blocking variant: a test-and-set lock word with a
 * queue of waiters that the waiters themselves reorder and wake.
 *
 * Kashyap, Calciu, Fu, Min, "Scalable and Practical Locking with Shuffling",
 * SOSP 2019 (not in ../shared/papers): the lock design (a TAS word that
 * anybody may steal, and an MCS queue of waiters behind it), shuffling
 * (waiters, not the holder, reorder the queue by a policy, off the critical
 * path) and the blocking mutex built on them (the shuffler also wakes the
 * waiters it passes, so that the next few are running when the lock comes).
 * The paper's full text could not be obtained here; the authors' kernel code
 * for the blocking mutex was read for its facts.
 *
 * Design. lock: take the word with one CAS (stealing). Else join the queue;
 * a waiter that is not at its head waits, by the policy, on its own node
 * until it becomes the head. The head shuffles (below: this wakes the next
 * few waiters) and waits for the word to be free, by the policy: under park
 * it sleeps on the word, and once woken shuffles again and disables stealing
 * (NOSTEAL: a sleeper woken by the release is served next, so stealers
 * cannot starve it). Once it has taken the word it hands the head role to
 * its successor (or empties the queue) and frees its node: the holder owns
 * no node, and unlock only clears LOCKED (one CAS; the slow path wakes a
 * head asleep on the word). trylock takes a free word even with NOSTEAL
 * (a trylock of a free mutex is never EBUSY, lock.h); only lock() defers.
 * After the release (lock.h) unlock makes at most a futex wake on the
 * word's address. An unlock of a free lock clears nothing that is set.
 * Shuffling: the head walks at most LOCKSWAP_SHFL_AWAKE waiters behind it,
 * moves those of its own cluster (socket) up to just behind the waiters of
 * its cluster it has passed (the NUMA policy: the lock then stays within a
 * cluster longer), and wakes each waiter it moves or passes over in its
 * cluster (the blocking policy: they spin and yield a fresh budget instead
 * of sleeping, so the hand-offs to them cost no wake-up). The paper lets the
 * shuffler role travel down the queue; with a bounded window the head keeps
 * it. Clusters: LOCKSWAP_SHFL_CLUSTERS=N groups CPUs by cpu mod N (sockets
 * need the cluster map of locks/topo, not here yet; default 1: no reordering,
 * only the wake-ups, which is what a one-socket machine needs).
 *
 *	word	LOCKED (held), NOSTEAL (the head disabled stealing),
 *		LS_PARKED (the head sleeps on the word)
 *	tail	last queued node, NULL when nobody waits
 *	node:	status	WAITING or HEAD (| LS_PARKED: its owner sleeps on it)
 *		next	successor in the queue (moved only by the head, and
 *			never the tail's, which a newcomer may be writing)
 *		cluster	its owner's cluster
 *		gen	the fork generation it was queued in (fork.h)
 *
 * fork() (fork.h): the holder owns no node, so a queue in a fork child is
 * the nodes of waiters the fork left behind (its head among them, perhaps
 * asleep on the word or having set NOSTEAL), then live ones. The first
 * live waiter, the only one whose predecessor is stale, is the head at
 * once: nobody ahead of it will ever hand the role on. It takes the word
 * as every head does (clearing NOSTEAL). The stale nodes are never freed.
 *
 * Nodes: ls_node_alloc when a thread joins the queue; freed by that thread
 * once it holds the lock and has handed the head role on: only the head
 * reads other nodes (its successors', while it shuffles), and those cannot
 * leave the queue before it. Not FIFO (stealing, shuffling); no native
 * timeout.
 */
#define LS_NODE_CLASS LS_NODES_SHFL /* pool.h: nodes reused only by this algorithm */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>

#include "fork.h"
#include "lock.h"
#include "pool.h"
#include "wait.h"

#define LOCKED 1u
#define NOSTEAL 2u
enum { WAITING = 1, HEAD = 2 };

struct node {
	_Atomic uint32_t status;
	uint32_t cluster;
	struct node *_Atomic next;
	uint32_t gen;
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct shfl {
	_Atomic uint32_t word;
	uint32_t unused;
	struct node *_Atomic tail;
};
_Static_assert(sizeof(struct shfl) <= LS_INLINE_STATE, "inline state");

static uint64_t awake = 4, clusters = 1;

static const struct ls_param shfl_params[] = {
    {"LOCKSWAP_SHFL_AWAKE", "waiters behind the head that the shuffler keeps awake, count", &awake, 0, 64},
    {"LOCKSWAP_SHFL_CLUSTERS", "clusters for the NUMA shuffle: cpu mod N (1: none), count", &clusters, 1,
     1024},
    {0},
};

static inline bool steal(struct shfl *l)
{
	uint32_t free = 0;
	/* acquire: pairs with the release in unlock */
	return atomic_compare_exchange_strong_explicit(&l->word, &free, LOCKED, memory_order_acquire,
						       memory_order_relaxed);
}

/* The head moves the waiters of its cluster among the next `awake` ones up
 * behind it, and wakes them (see the header). */
static void shuffle(struct shfl *l, struct node *me)
{
	struct node *last = me, *prev = me;
	for (uint64_t seen = 0; seen < awake; seen++) {
		/* acquire: pairs with the release that linked it */
		struct node *cur = atomic_load_explicit(&prev->next, memory_order_acquire);
		if (!cur)
			return;
		if (cur->cluster != me->cluster) {
			prev = cur;
			continue;
		}
		if (prev != last) {
			/* Move cur up behind last: neither is the tail (each has
			 * a successor), so nobody else writes their `next`. */
			struct node *next = atomic_load_explicit(&cur->next, memory_order_acquire);
			if (!next || cur == atomic_load_explicit(&l->tail, memory_order_acquire))
				return;
			/* relaxed: only the head moves these links; a waiter reads its own status only */
			atomic_store_explicit(&prev->next, next, memory_order_relaxed);
			atomic_store_explicit(&cur->next,
					      atomic_load_explicit(&last->next, memory_order_relaxed),
					      memory_order_relaxed);
			atomic_store_explicit(&last->next, cur, memory_order_release);
		} else {
			prev = cur;
		}
		last = cur;
		ls_word_prewake(&cur->status); /* keep it awake */
	}
}

/* The head waits for the word to be free and takes it, with NOSTEAL once it
 * has slept; woken, it shuffles again (waiters have queued meanwhile). */
static void head_acquire(struct shfl *l, struct node *me)
{
	struct ls_spin s = LS_SPIN_INIT;
	uint32_t keep = 0; /* NOSTEAL once we have slept */
	for (;;) {
		/* relaxed: a hint; the CAS that follows decides and orders */
		uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
		if (!(v & LOCKED)) {
			/* acquire: pairs with the release in unlock; we are the only
			 * one who sleeps on the word or sets NOSTEAL, so both go */
			if (atomic_compare_exchange_weak_explicit(&l->word, &v, LOCKED, memory_order_acquire,
								  memory_order_relaxed))
				return;
			continue;
		}
		LS_INJECT();
		if (keep && !(v & NOSTEAL)) {
			/* relaxed: a hint to stealers; the head's acquiring CAS orders */
			atomic_fetch_or_explicit(&l->word, NOSTEAL, memory_order_relaxed);
			continue;
		}
		if (!ls_spin_step(&s))
			continue;
		/* Sleep on the word (LS_PARKED protocol): the CAS orders us
		 * against unlock's CAS, which then sees LS_PARKED and wakes. */
		if (!(v & LS_PARKED) &&
		    !atomic_compare_exchange_strong_explicit(&l->word, &v, v | LS_PARKED,
							     memory_order_relaxed, memory_order_relaxed))
			continue;
		ls_futex_wait(&l->word, v | LS_PARKED, 0);
		shuffle(l, me);
		keep = NOSTEAL;
		s = (struct ls_spin)LS_SPIN_INIT;
	}
}

static __attribute__((noinline)) void shfl_lock_slow(struct shfl *l)
{
	struct node *me = ls_node_alloc();
	/* relaxed: published by the release of the exchange or CAS that enqueues the node */
	atomic_store_explicit(&me->status, WAITING, memory_order_relaxed);
	atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
	me->cluster = clusters > 1 ? (uint32_t)((unsigned)sched_getcpu() % clusters) : 0;
	me->gen = ls_fork_stamp();
	LS_INJECT();
	/* release: a successor that gets me from the swap sees the stores
	 * above; acquire: pairs with the release CAS that emptied the queue */
	struct node *prev = atomic_exchange_explicit(&l->tail, me, memory_order_acq_rel);
	if (prev)
		LS_TEST_POINT(LS_POINT_VISIBLE);
	/* A predecessor the fork left behind never makes us head: we are */
	if (prev && !(ls_fork_child() && ls_fork_stale(prev->gen))) {
		/* release: the head reads our node after following this link */
		atomic_store_explicit(&prev->next, me, memory_order_release);
		LS_INJECT();
		/* acquire: pairs with the release that made us head */
		ls_wait_while_eq(&me->status, WAITING);
	}
	/* The head: wake our successor and the next few, then the word. */
	shuffle(l, me);
	head_acquire(l, me);
	LS_INJECT();
	/* Hand the head role on, or empty the queue. */
	struct node *next = atomic_load_explicit(&me->next, memory_order_acquire), *e = me;
	if (!next) {
		if (atomic_compare_exchange_strong_explicit(&l->tail, &e, NULL, memory_order_acq_rel,
							    memory_order_relaxed)) {
			ls_node_free(me);
			return;
		}
		/* A newcomer swapped itself in: wait for its link. */
		struct ls_spin s = LS_SPIN_INIT;
		while (!(next = atomic_load_explicit(&me->next, memory_order_acquire)))
			if (ls_spin_step(&s))
				sched_yield(); /* a pointer: no futex to sleep on */
	}
	/* release: our queue changes are seen by the new head */
	ls_word_publish(&next->status, HEAD);
	ls_node_free(me);
}

static void shfl_lock(void *state)
{
	struct shfl *l = state;
	if (LS_UNLIKELY(!steal(l)))
		shfl_lock_slow(l); /* a tail call: the fast path stays a leaf */
}

/* A free lock is taken even when the head has disabled stealing: NOSTEAL
 * holds back lock(), which would otherwise starve a head that slept, but a
 * trylock of a free mutex is never EBUSY (lock.h); it keeps the bits. */
static int shfl_trylock(void *state)
{
	return ls_word_try_set(&((struct shfl *)state)->word, LOCKED) ? 0 : EBUSY;
}

static __attribute__((noinline)) void shfl_unlock_slow(struct shfl *l)
{
	/* release: pairs with the acquire of the head's or a stealer's CAS */
	uint32_t old = atomic_fetch_and_explicit(&l->word, ~(LOCKED | LS_PARKED), memory_order_release);
	LS_TEST_POINT(LS_POINT_RELEASED);
	if (old & LS_PARKED)
		ls_futex_wake(&l->word, 1); /* the head sleeps on the word */
}

static void shfl_unlock(void *state)
{
	struct shfl *l = state;
	uint32_t held = LOCKED;
	/* LOCKED alone: nobody sleeps on the word, stealing is on. release:
	 * pairs with the acquire of the next CAS that takes the word. */
	if (LS_UNLIKELY(!atomic_compare_exchange_strong_explicit(&l->word, &held, 0, memory_order_release,
								 memory_order_relaxed))) {
		shfl_unlock_slow(l);
		return;
	}
	LS_TEST_POINT(LS_POINT_RELEASED);
}

static const struct ls_algo shfl_algo = {
    .name = "shfl",
    .desc = "blocking ShflLock: TAS word, queue shuffled and kept awake by its waiters (Kashyap et al., SOSP "
	    "2019)",
    .caps = LS_CAP_QNODE,
    .rank = 83,
    .state_size = sizeof(struct shfl),
    .params = shfl_params,
    .lock = shfl_lock,
    .trylock = shfl_trylock,
    .unlock = shfl_unlock,
};
LS_REGISTER_ALGO(shfl_algo);
