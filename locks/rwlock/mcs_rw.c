/*
 * mcs_rw.c - the fair queue-based reader-writer lock of Mellor-Crummey and
 * Scott.
 *
 * Mellor-Crummey & Scott, "Scalable Reader-Writer Synchronization for
 * Shared-Memory Multiprocessors", PPoPP 1991, section 3.1 (the fair lock:
 * start_write, end_write, start_read, end_read; the authors' pseudocode is
 * at cs.rochester.edu/research/synchronization/pseudocode/rw.html). Not in
 * ../shared/papers; written from that pseudocode.
 *
 * Every acquisition swaps a queue node into `tail`, as in the MCS mutex
 * (locks/queue/mcs.c), and waits on its own node. A writer behind anyone
 * waits to be handed the lock. A reader behind a writer, or behind a
 * reader that still waits, asks its predecessor to admit it (the CAS of
 * the predecessor's state from "blocked, no successor" to "blocked,
 * successor reader") and waits; a reader behind an active reader counts
 * itself in and goes. A reader that gets the lock admits its waiting
 * reader successor, which admits its own: a run of readers enters
 * together, in arrival order (FIFO). Readers leave in any order; a reader
 * whose successor is a writer names it the next writer, and the last
 * reader to leave hands it the lock. A writer that finds the queue empty
 * waits for the readers still counted (they have left the queue but not
 * the critical section) in the same way.
 *
 * Departures from the paper, each for a rule of rwlock.h:
 *  1. The paper's reader_count and next_writer are separate words, and its
 *     last reader does "w := fetch_and_store(next_writer, nil); if w then
 *     unblock w" AFTER its decrement made the count zero: a writer can then
 *     take the lock, release and free it while that reader still touches
 *     next_writer. Here the count and the flag "the next writer waits for
 *     the count" (WFLAG) share one word, `rc`: a reader's decrement tells
 *     it whether it is the last one with a writer waiting, and only then
 *     reads `wr` (still held: the writer waits for it). A reader with a
 *     writer successor sets WFLAG with its own decrement (one fetch_add).
 *  2. tryrdlock must succeed while only readers hold the lock (POSIX), but
 *     a try cannot join the queue behind a node it has not checked (the
 *     node may be reused and waiting by the time the swap lands). So a
 *     try-reader that finds readers counted and no writer waiting (WFLAG,
 *     TRY clear, no WAITW) joins by counting itself in rc with a CAS, with
 *     no node (token NULL); on an empty queue it takes the queue as a
 *     reader with a CAS of the tail. rdlock always queues, as the paper.
 *     A writer queued behind a reader counts itself in WAITW, so that such
 *     readers never pass it (and LS_RW_PREFER_WRITER holds); a count of
 *     readers > 0 means no writer holds the lock.
 *  3. trywrlock reserves the lock with TRY (rc 0 -> TRY), then takes the
 *     empty queue with a CAS; readers that had just left the queue may still
 *     be counted, and it waits for their last decrement (bounded: a few
 *     instructions of their unlock, not a critical section).
 *  4. Preference (rwlock.h). FIFO is the lock's own policy, and what it
 *     gives the _NP writer kind (a reader behind a queued writer waits for
 *     it). A lock that asks for reader preference (the default kind) gets
 *     a reader-preferring variant of the same queue: a reader (rdlock and
 *     tryrdlock) that finds readers counted joins them by the count, as
 *     the try-readers of 2 do, whatever writers wait (only TRY keeps it
 *     out: a trywrlock waits for the count), and queues only when no
 *     reader holds the lock. A writer at the head waits for the count to
 *     drain (WFLAG), readers joining meanwhile: readers may starve writers,
 *     as glibc's default kind allows. Readers that queued while a writer
 *     held the lock still enter in queue order.
 *  5. A native timed writer (timedwrlock; the paper has none), after the
 *     abortable queues of Scott & Scherer, "Scalable Queue-Based Spin
 *     Locks with Timeout", PPoPP 2001 (the MCS try-lock's handshake with
 *     its predecessor: ../shared/papers/001) and Scott, "Non-Blocking
 *     Timeout in Scalable Queue-Based Spin Locks", TR 773 (sections 2.1
 *     and 2.2: a waiter that times out leaves its node in the queue,
 *     marked, and the thread that reaches it does what its owner would
 *     have done, then reclaims it; 2.1.1 and 2.2.1: one responsible
 *     reference per node). It queues as wrlock does, so it keeps new
 *     readers out exactly as an untimed writer (FIFO, writer kind). At
 *     its deadline it leaves by where it waits:
 *     - behind a writer: it marks its node GHOST_W (a CAS while BLOCKED);
 *       the writer that hands it the lock (unblock) releases it on its
 *       behalf at once (pass_as_writer) and frees the node;
 *     - behind a reader (SUCC_WRITER set in pred, WAITW counted): it
 *       marks itself LEAVING and takes SUCC_WRITER back from pred's
 *       state unless pred, releasing, has CLAIMED it (read_handover);
 *       the two RMWs on its own state (LEAVING / NAMED) decide who looks
 *       at which node last, as the leaving / transient handshake of the
 *       MCS try-lock does, so pred frees its node only after the leaver
 *       has looked. If pred is active the lock is read and nobody ahead
 *       writes: it counts itself a reader and passes on as one
 *       (pass_as_reader), so the readers queued behind it go on
 *       (tst-rwlock15); if pred waits, it turns SUCC_WRITER into
 *       SUCC_READER and marks its node GHOST_R: pred admits it as a
 *       reader and the admitter passes it on. If pred had claimed it, it
 *       waits (a few instructions) to be named and leaves as below;
 *     - named (it waits for the count with WFLAG, wr = it): one CAS of
 *       rc takes WFLAG (and WAITW) back and counts it a reader, unless
 *       the last reader is already handing it the lock (it then holds
 *       the lock: 0), and it passes on as a reader.
 *     A node left behind is freed by the thread that reaches it; nothing
 *     else is left (rc, wr, the successors' classes are as if it had
 *     been a reader, or never come). Its owner never waits for a
 *     neighbour's critical section, only for a neighbour's few
 *     instructions between two of its own steps.
 *
 *	state:	tail	last node enqueued, NULL when nobody is queued
 *		wr	the writer that waits for the count to drain (with
 *			WFLAG), then the write holder (for wrunlock)
 *		rc	bit 0 WFLAG, bit 1 TRY, bits 2-40 readers counted,
 *			bits 41-63 WAITW: writers queued behind a reader
 *	node:	state	BLOCKED, SUCC_READER / SUCC_WRITER (the successor's
 *			class, as the paper's successor_class), LS_PARKED;
 *			a timed writer's LEAVING, NAMED, GHOST_W / GHOST_R,
 *			VIA_READERS and its reader pred's CLAIMED (5)
 *		linked	0 until the successor has set next, then 1 (mcs.c)
 *		class	READING / WRITING, written before the swap
 *		next	the successor
 *
 * Node transitions: alloc (BLOCKED) -> swapped in -> [waits] -> unblocked
 * (by the predecessor's hand-off, the reader predecessor that admits it,
 * itself, or the last reader) -> holder -> released: a reader or writer
 * with no successor swings tail back to NULL; otherwise it waits for the
 * link, hands over (a writer: unblocks the successor, counting it in if
 * it is a reader; a reader: names a writer successor in wr) -> freed by
 * the thread that releases it (a reader's rdunlock, a writer's
 * wrunlock), after its last use. Readers counted without a node (the
 * try-readers) leave by their decrement alone.
 *
 * Ordering pairs: (A) acquire in wait_unblocked / (B) release in unblock;
 * (C) release of linked by the successor / (D) acquire by the predecessor;
 * (E) release of a reader's decrement / (F) acquire of the writer that
 * reads the count (and of the last reader, which then reads wr).
 * Waiting policy: ls_wait_while_eq / LS_PARKED on the node's state and
 * linked words, one waiter per word; the releaser's futex wake of a node
 * that was freed meanwhile is a spurious wake-up (type-stable memory). A
 * writer that was handed the lock wakes its linked successor early
 * (ls_word_prewake). Timed writes are native (5); timed reads use the
 * family's fallback (polled tryrdlock, rwlock.h). Counts cannot
 * overflow: each queued reader holds a node, each try-reader a hold in the
 * shim, and 2^39 of either do not fit in memory; no EAGAIN.
 *
 * After the release (lock.h, rwlock.h). Each unlock ends with one atomic
 * step that lets another thread in, after which it touches neither the
 * lock nor anything of it: a reader's decrement of rc (reader_out, or
 * read_handover's WFLAG - READER), or the unblock of the writer that the
 * last reader out hands the lock to (it reads wr before that unblock, while
 * the writer still waits for it); a writer's CAS of tail to NULL, or the
 * unblock of its successor. What may follow is the futex wake of the
 * unblocked node's owner and the free of the unlocker's own node: queue
 * nodes are type-stable (pool.h), not the lock's memory, and a late wake
 * of a node reused meanwhile is a spurious wake-up. A reader that is not
 * the last one out still stops at its decrement: the last one's may come
 * at once, and the writer after it may free the lock.
 *
 * fork() (rwlock.h, FORK): in a fork child, a lock the forking thread
 * read-held at fork had no writer holding it: every node still BLOCKED in
 * its queue, WFLAG's writer (wr), the writers counted in WAITW and a TRY
 * were gone threads'. fork_rdheld, run while the child has one thread,
 * empties the queue (tail = NULL) and clears WFLAG, TRY and WAITW; rc keeps
 * the readers it counts, who hold the lock (the waiting readers are not
 * counted before they are admitted), so one that fork left behind keeps it
 * held. The forking thread's holds become counted-only holds (token NULL:
 * their unlock is reader_out) and their nodes, as every node of the
 * queue, stay where they are, never reused. No other path reads the
 * generation.
 */
#define LS_NODE_CLASS LS_NODES_MCS_RW /* pool.h: nodes reused only by this algorithm */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>

#include "lock.h"
#include "pool.h"
#include "rwlock.h"
#include "wait.h"

enum { READING = 1, WRITING = 2 };

/* node.state */
#define BLOCKED 1u
#define SUCC_READER 2u
#define SUCC_WRITER 4u
#define SUCC_MASK (SUCC_READER | SUCC_WRITER)
#define LEAVING 8u	 /* its timed writer decides from its predecessor's state */
#define CLAIMED 16u	 /* a releasing reader has read its successor's class */
#define GHOST_W 32u	 /* its timed writer left: handed the lock, release it */
#define GHOST_R 64u	 /* its timed writer left: admitted as a reader, pass on */
#define VIA_READERS 128u /* a writer named by a reader it did not queue behind */
#define NAMED 256u	 /* its reader predecessor, releasing, names it */
#define GHOST (GHOST_W | GHOST_R)

/* state.rc */
#define WFLAG 1ull
#define TRY 2ull
#define READER 4ull
#define READERS(v) (((v) >> 2) & ((1ull << 39) - 1))
#define WAITW (1ull << 41)
#define WAITW_MASK (~0ull << 41)

struct node {
	_Atomic uint32_t state;
	_Atomic uint32_t linked;
	uint32_t class;
	struct node *_Atomic next;
};
_Static_assert(sizeof(struct node) <= LS_NODE_SIZE - 8, "the pool links free nodes in the last 8 bytes");

struct mcsrw {
	struct node *_Atomic tail;
	struct node *_Atomic wr;
	_Atomic uint64_t rc;
};
_Static_assert(sizeof(struct mcsrw) <= LS_RW_INLINE_STATE, "inline state");

static inline void node_init(struct node *n, uint32_t class)
{
	n->class = class; /* published by the swap (release) */
	atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
	atomic_store_explicit(&n->linked, 0, memory_order_relaxed);
	atomic_store_explicit(&n->state, BLOCKED, memory_order_relaxed);
}

/* A thread's own node: clears BLOCKED (keeping the successor's class) and
 * returns the old state. */
static inline uint32_t unblock_self(struct node *n)
{
	/* (B) release: pairs with (A) */
	return atomic_fetch_and_explicit(&n->state, ~BLOCKED, memory_order_acq_rel);
}

static void unblock(struct mcsrw *l, struct node *n, bool release);

/* Waits, by the policy, until n is unblocked, or the deadline (0: none)
 * passes: 0 with *st its state then, or ETIMEDOUT. The successor's class
 * may change the word meanwhile (the wait then returns and the loop waits
 * on the new value). */
static int wait_unblocked(struct node *n, uint64_t deadline, uint32_t *st)
{
	/* (A) acquire: pairs with (B) */
	uint32_t v = atomic_load_explicit(&n->state, memory_order_acquire) & ~LS_PARKED;
	while (v & BLOCKED) {
		LS_INJECT();
		if (!deadline)
			v = ls_wait_while_eq(&n->state, v); /* (A) */
		else if (ls_wait_while_eq_until(&n->state, v, deadline, &v))
			return ETIMEDOUT;
	}
	*st = v;
	return 0;
}

/* Links n behind pred: our last access to pred (but a timed writer's
 * retraction, 5 in the header). */
static inline void link_behind(struct node *pred, struct node *n)
{
	atomic_store_explicit(&pred->next, n, memory_order_relaxed);
	LS_INJECT();
	/* (C) release: publishes next, n's class and the successor class we
	 * put in pred->state to the predecessor's (D) */
	ls_word_publish(&pred->linked, 1);
}

/* The successor of n, once it has linked. */
static inline struct node *wait_next(struct node *n)
{
	/* (D) acquire: pairs with (C) */
	ls_wait_while_eq(&n->linked, 0);
	return atomic_load_explicit(&n->next, memory_order_relaxed);
}

static inline bool linked_now(struct node *n)
{
	/* (D) acquire: pairs with (C) */
	return (atomic_load_explicit(&n->linked, memory_order_acquire) & ~LS_PARKED) != 0;
}

/* A reader leaves the count, in its unlock: the last one with a writer
 * waiting (WFLAG) hands it the lock. */
static inline void reader_out(struct mcsrw *l)
{
	LS_INJECT();
	/* (E) release: the critical section before the writer's (F) */
	uint64_t old = atomic_fetch_sub_explicit(&l->rc, READER, memory_order_acq_rel);
	if (LS_UNLIKELY(READERS(old) == 1 && (old & WFLAG))) {
		/* (F): our fetch_sub read the WFLAG of whoever set wr before
		 * it; the lock is still held (that writer waits for us).
		 * relaxed: wr was published by (E), the RMW we read WFLAG from */
		unblock(l, atomic_load_explicit(&l->wr, memory_order_relaxed), true);
		return;
	}
	LS_TEST_POINT(LS_POINT_RELEASED); /* the last one out, or not: our last access */
}

/* ---- nodes whose timed writer left (5 in the header) ---- */

/* n, which successors queued behind as a writer, is a reader counted in rc
 * (a timed writer that left while the lock was read, or the reader it
 * became, admitted): it lets its successor in or names it, and leaves the
 * count. Returns the node to unblock next (the successor it hands the lock
 * to, or lets in), or NULL. */
static struct node *pass_as_reader(struct mcsrw *l, struct node *n)
{
	struct node *expected = n;
	/* release: pairs with the acquire of the next swap or CAS that reads NULL */
	if (!linked_now(n) && atomic_compare_exchange_strong_explicit(
				  &l->tail, &expected, NULL, memory_order_release, memory_order_relaxed)) {
		ls_node_free(n);
		reader_out(l);
		return NULL;
	}
	struct node *s = wait_next(n);
	ls_node_free(n);
	if (s->class == READING) /* published by (C) */
		return s;	 /* it inherits our count: the readers go on */
	/* A writer behind us: as one queued behind a reader, it waits for the
	 * count (WAITW keeps try-readers from passing it) and the last reader
	 * out hands it the lock; VIA_READERS tells it so. */
	atomic_fetch_add_explicit(&l->rc, WAITW, memory_order_relaxed);
	atomic_fetch_or_explicit(&s->state, VIA_READERS, memory_order_relaxed);
	atomic_store_explicit(&l->wr, s, memory_order_relaxed);
	LS_INJECT();
	/* (E) release, and of wr to the last reader's (F), as in read_handover */
	uint64_t old = atomic_fetch_add_explicit(&l->rc, WFLAG - READER, memory_order_acq_rel);
	return READERS(old) == 1 ? s : NULL;
}

/* n, a writer's node, holds the lock (handed to a timed writer that left):
 * it releases it as wrunlock would. Returns the successor to unblock, or
 * NULL (the queue emptied). */
static struct node *pass_as_writer(struct mcsrw *l, struct node *n)
{
	struct node *expected = n;
	if (!linked_now(n) && atomic_compare_exchange_strong_explicit(
				  &l->tail, &expected, NULL, memory_order_release, memory_order_relaxed)) {
		LS_TEST_POINT(LS_POINT_RELEASED);
		ls_node_free(n);
		return NULL;
	}
	struct node *s = wait_next(n);
	if (s->class == READING) /* published by (C) */
		atomic_fetch_add_explicit(&l->rc, READER, memory_order_acq_rel);
	ls_node_free(n);
	return s;
}

/* Clears BLOCKED in another thread's node n (keeping the successor's
 * class) and wakes its owner if it sleeps; if that owner was a timed writer
 * that left, does what it would have done now, and so on along the queue.
 * `release`: in an unlock, the step that lets n's owner in (the test
 * point). */
static void unblock(struct mcsrw *l, struct node *n, bool release)
{
	for (;;) {
		/* (B) release: pairs with (A) */
		uint32_t old =
		    atomic_fetch_and_explicit(&n->state, ~(BLOCKED | LS_PARKED), memory_order_acq_rel);
		if (LS_LIKELY(!(old & GHOST))) {
			if (release)
				LS_TEST_POINT(LS_POINT_RELEASED);
			if (LS_UNLIKELY(old & LS_PARKED))
				ls_futex_wake(&n->state, INT_MAX);
			return;
		}
		if (old & GHOST_R) {
			n = pass_as_reader(l, n); /* its admitter counted it in */
		} else {
			if (old & VIA_READERS) /* named by a reader: what it would undo */
				atomic_fetch_sub_explicit(&l->rc, WFLAG + WAITW, memory_order_relaxed);
			n = pass_as_writer(l, n);
		}
		if (!n)
			return;
		release = true;
	}
}

/* ---- readers ---- */

/* Our successor is a reader that waits for us to admit it (the paper's
 * "if successor_class = reader"). */
static __attribute__((noinline)) void admit_successor(struct mcsrw *l, struct node *n)
{
	struct node *s = wait_next(n);
	LS_INJECT();
	atomic_fetch_add_explicit(&l->rc, READER, memory_order_acq_rel);
	unblock(l, s, false); /* (B) */
}

/* A reader whose swap returned pred; returns its state once admitted. */
static __attribute__((noinline)) uint32_t read_behind(struct mcsrw *l, struct node *n, struct node *pred)
{
	if (pred->class == READING) {
		/* acquire: a pred already admitted was admitted by a release
		 * (B) that we must follow */
		uint32_t v = atomic_load_explicit(&pred->state, memory_order_acquire);
		for (;;) {
			if (!(v & BLOCKED)) {
				/* pred is active: count ourselves in and go */
				atomic_fetch_add_explicit(&l->rc, READER, memory_order_acq_rel);
				link_behind(pred, n);
				return unblock_self(n);
			}
			LS_INJECT();
			/* pred waits: it admits us when it is admitted. The
			 * CAS fails only if pred's state changed (admitted, or
			 * LS_PARKED). */
			if (atomic_compare_exchange_weak_explicit(&pred->state, &v, v | SUCC_READER,
								  memory_order_acq_rel, memory_order_acquire))
				break;
		}
	}
	link_behind(pred, n);
	uint32_t st;
	wait_unblocked(n, 0, &st);
	return st;
}

static inline void read_acquire(struct mcsrw *l, struct node *n)
{
	node_init(n, READING);
	LS_INJECT();
	/* release: a successor that gets n from its swap sees n's fields;
	 * acquire: pairs with the release CAS of the last holder to leave */
	struct node *pred = atomic_exchange_explicit(&l->tail, n, memory_order_acq_rel);
	uint32_t st;
	if (LS_LIKELY(!pred)) {
		atomic_fetch_add_explicit(&l->rc, READER, memory_order_acq_rel);
		st = unblock_self(n); /* a successor may have asked to be admitted */
	} else {
		st = read_behind(l, n, pred);
	}
	if (LS_UNLIKELY(st & SUCC_READER))
		admit_successor(l, n);
}

/* Joins the readers that hold the lock by the count, without a node (2 and
 * 4 in the header), unless rc has one of `keep_out`: true if counted in. */
static inline bool join(struct mcsrw *l, uint64_t keep_out)
{
	uint64_t v = atomic_load_explicit(&l->rc, memory_order_relaxed);
	/* acquire: pairs with the release of the increment that counted the
	 * readers in (the last writer's data came with it). A count > 0 means
	 * no writer holds the lock, and a writer that waits for the count
	 * (WFLAG) is handed the lock by whoever leaves it at 0, us included. */
	while (READERS(v) > 0 && !(v & keep_out)) {
		LS_INJECT();
		if (atomic_compare_exchange_weak_explicit(&l->rc, &v, v + READER, memory_order_acq_rel,
							  memory_order_relaxed))
			return true;
	}
	return false;
}

static int mcsrw_rdlock(void *state, unsigned how, void **token)
{
	/* reader preference: join the readers that hold the lock; otherwise
	 * FIFO (no reader passes a queued writer) */
	if (ls_rw_reader_pref(how) && join(state, TRY)) {
		*token = NULL;
		return 0;
	}
	struct node *n = ls_node_alloc();
	read_acquire(state, n);
	*token = n;
	return 0;
}

static int mcsrw_tryrdlock(void *state, unsigned how, void **token)
{
	struct mcsrw *l = state;
	/* Readers counted and (but under reader preference) no writer
	 * waiting: join them. */
	if (join(l, ls_rw_reader_pref(how) ? TRY : WFLAG | TRY | WAITW_MASK)) {
		*token = NULL;
		return 0;
	}
	if (atomic_load_explicit(&l->tail, memory_order_relaxed) != NULL)
		return EBUSY;
	/* An empty queue: take it as a reader whose swap returned NULL. */
	struct node *n = ls_node_alloc(), *expected = NULL;
	node_init(n, READING);
	LS_INJECT();
	/* as the swap in read_acquire */
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &expected, n, memory_order_acq_rel,
						     memory_order_relaxed)) {
		ls_node_free(n);
		return EBUSY;
	}
	atomic_fetch_add_explicit(&l->rc, READER, memory_order_acq_rel);
	if (unblock_self(n) & SUCC_READER)
		admit_successor(l, n);
	*token = n;
	return 0;
}

/* A reader with a successor: name it if it is a writer, then leave. */
static __attribute__((noinline)) void read_handover(struct mcsrw *l, struct node *n)
{
	struct node *s = wait_next(n);
	/* SUCC_WRITER was set before the successor linked (C). CLAIMED, in
	 * the same step: a timed writer that would retract it finds it and
	 * stays (5 in the header) */
	bool writer = atomic_fetch_or_explicit(&n->state, CLAIMED, memory_order_acq_rel) & SUCC_WRITER;
	/* NAMED tells a timed writer that leaves not to look at our node any
	 * more; if it is looking (LEAVING, ordered with NAMED by the word),
	 * free the node once it has: a few instructions, so no sleep */
	if (writer && (atomic_fetch_or_explicit(&s->state, NAMED, memory_order_acq_rel) & LEAVING)) {
		struct ls_spin sp = LS_SPIN_INIT;
		while (atomic_load_explicit(&s->state, memory_order_acquire) & LEAVING)
			if (ls_spin_step(&sp))
				sp = (struct ls_spin)LS_SPIN_INIT;
	}
	ls_node_free(n);
	if (!writer) {
		reader_out(l);
		return;
	}
	atomic_store_explicit(&l->wr, s, memory_order_relaxed);
	LS_INJECT();
	/* Decrement and set WFLAG in one step (WFLAG was clear: only the
	 * first writer behind a run of readers sets it). (E) release, and
	 * release of wr to the last reader's (F). */
	uint64_t old = atomic_fetch_add_explicit(&l->rc, WFLAG - READER, memory_order_acq_rel);
	if (READERS(old) == 1) {
		unblock(l, s, true); /* we were the last: the writer's turn */
		return;
	}
	LS_TEST_POINT(LS_POINT_RELEASED); /* the last reader out hands over */
}

static void mcsrw_rdunlock(void *state, void *token)
{
	struct mcsrw *l = state;
	struct node *n = token, *expected = n;
	if (!n) {
		reader_out(l); /* a try-reader, counted only */
		return;
	}
	if (LS_LIKELY(!linked_now(n))) {
		LS_INJECT();
		/* No successor: empty the queue. release: pairs with the acquire
		 * of the next swap or CAS that reads NULL. */
		if (LS_LIKELY(atomic_compare_exchange_strong_explicit(
			&l->tail, &expected, NULL, memory_order_release, memory_order_relaxed))) {
			ls_node_free(n);
			reader_out(l);
			return;
		}
	}
	read_handover(l, n);
}

/* ---- writers ---- */

/* A timed writer n, named (wr = n, WFLAG: its own drain, or a reader's
 * hand-over), leaves at its deadline: it takes WFLAG (and its WAITW) back
 * and counts itself a reader in one step, so that nobody hands it the
 * lock, then passes on as a reader. 0 if the last reader was already
 * handing it the lock (the caller then holds it), or ETIMEDOUT. */
static int leave_named(struct mcsrw *l, struct node *n, bool waitw)
{
	uint64_t v = atomic_load_explicit(&l->rc, memory_order_relaxed);
	for (;;) {
		if (READERS(v) == 0) {
			uint32_t st;
			wait_unblocked(n, 0, &st); /* that reader's next step */
			return 0;
		}
		LS_INJECT();
		/* acquire: a reader's count, as join's */
		if (atomic_compare_exchange_weak_explicit(&l->rc, &v,
							  v - WFLAG - (waitw ? WAITW : 0) + READER,
							  memory_order_acq_rel, memory_order_relaxed))
			break;
	}
	struct node *s = pass_as_reader(l, n);
	if (s)
		unblock(l, s, true);
	return ETIMEDOUT;
}

/* A timed writer n queued behind a writer leaves at its deadline: its node
 * stays, and whoever hands it the lock releases it at once (unblock). 0
 * if it was handed the lock first, or ETIMEDOUT. */
static int leave_behind_writer(struct node *n)
{
	uint32_t v = atomic_load_explicit(&n->state, memory_order_relaxed);
	do
		if (!(v & BLOCKED))
			return 0;
	while (!atomic_compare_exchange_weak_explicit(&n->state, &v, v | GHOST_W, memory_order_acq_rel,
						      memory_order_relaxed));
	return ETIMEDOUT;
}

/* A timed writer n queued behind a reader pred (WAITW counted,
 * SUCC_WRITER set in pred) leaves at its deadline (5 in the header). 0 if
 * it was handed the lock first, or ETIMEDOUT. */
static __attribute__((noinline)) int leave_behind_reader(struct mcsrw *l, struct node *n, struct node *pred)
{
	/* LEAVING, unless pred, releasing, has named us (NAMED): then we do
	 * not look at its node again. Either RMW on our state sees the
	 * other's bit: a pred that sees LEAVING keeps its node until we have
	 * looked (read_handover). */
	uint32_t v = atomic_load_explicit(&n->state, memory_order_relaxed), p = CLAIMED, np;
	for (;;) {
		if (!(v & BLOCKED))
			return 0;
		if (v & NAMED)
			break;
		if (atomic_compare_exchange_weak_explicit(&n->state, &v, v | LEAVING, memory_order_acq_rel,
							  memory_order_relaxed)) {
			LS_INJECT();
			/* acquire: pred's node as it is (alive: see above) */
			p = atomic_load_explicit(&pred->state, memory_order_acquire);
			break;
		}
	}
	bool retracted = false, active = false;
	while (!(p & CLAIMED)) {
		/* pred active: we enter its read run (below); pred waiting:
		 * it admits our node as a reader */
		active = !(p & BLOCKED);
		np = (p & ~SUCC_WRITER) | (active ? 0 : SUCC_READER);
		if (atomic_compare_exchange_weak_explicit(&pred->state, &p, np, memory_order_acq_rel,
							  memory_order_acquire)) {
			retracted = true;
			break;
		}
	}
	/* our last look at pred: it may go on (and free its node) */
	atomic_fetch_and_explicit(&n->state, ~LEAVING, memory_order_release);
	if (!retracted) {
		/* pred releases and names us: wait until it has (a few
		 * instructions), then leave as a named writer */
		struct ls_spin sp = LS_SPIN_INIT;
		for (;;) {
			/* (A) acquire; (F) acquire, with wr, as reader_out's */
			if (!(atomic_load_explicit(&n->state, memory_order_acquire) & BLOCKED))
				return 0;
			if ((atomic_load_explicit(&n->state, memory_order_relaxed) & NAMED) &&
			    (atomic_load_explicit(&l->rc, memory_order_acquire) & WFLAG) &&
			    atomic_load_explicit(&l->wr, memory_order_relaxed) == n)
				return leave_named(l, n, true);
			if (ls_spin_step(&sp))
				sp = (struct ls_spin)LS_SPIN_INIT;
		}
	}
	atomic_fetch_sub_explicit(&l->rc, WAITW, memory_order_relaxed);
	if (active) {
		/* The lock is read, and nobody ahead of us writes: count
		 * ourselves in (a head of the queue may grant a read even if
		 * pred leaves meanwhile, as a writer's hand-over does) and
		 * pass on as a reader: the readers behind us go on. */
		atomic_fetch_add_explicit(&l->rc, READER, memory_order_acq_rel);
		struct node *s = pass_as_reader(l, n);
		if (s)
			unblock(l, s, true);
		return ETIMEDOUT;
	}
	/* pred waits: our node is a reader it admits; whoever admits it
	 * passes it on, unless pred was admitted already */
	v = atomic_load_explicit(&n->state, memory_order_relaxed);
	do
		if (!(v & BLOCKED)) {
			struct node *s = pass_as_reader(l, n); /* admitted: counted */
			if (s)
				unblock(l, s, true);
			return ETIMEDOUT;
		}
	while (!atomic_compare_exchange_weak_explicit(&n->state, &v, v | GHOST_R, memory_order_acq_rel,
						      memory_order_relaxed));
	return ETIMEDOUT;
}

/* A writer at the head of the queue with readers still counted (they have
 * left the queue, or joined without it): it waits for the last of them, or
 * (timed) leaves at its deadline. 0 or ETIMEDOUT. */
static __attribute__((noinline)) int drain(struct mcsrw *l, struct node *n, uint64_t deadline)
{
	atomic_store_explicit(&l->wr, n, memory_order_relaxed);
	uint64_t v = atomic_load_explicit(&l->rc, memory_order_acquire);
	for (;;) {
		if (READERS(v) == 0)
			return 0; /* (F) acquire: they left meanwhile */
		LS_INJECT();
		/* release: publishes wr to the last reader's (F) */
		if (atomic_compare_exchange_weak_explicit(&l->rc, &v, v | WFLAG, memory_order_acq_rel,
							  memory_order_acquire))
			break;
	}
	uint32_t st;
	if (wait_unblocked(n, deadline, &st) &&
	    leave_named(l, n, false)) /* the last reader unblocks us (F) */
		return ETIMEDOUT;
	atomic_fetch_sub_explicit(&l->rc, WFLAG, memory_order_relaxed);
	return 0;
}

/* A writer whose swap returned pred: waits to be handed the lock, or
 * (timed) leaves at its deadline. 0 or ETIMEDOUT. */
static __attribute__((noinline)) int write_behind(struct mcsrw *l, struct node *n, struct node *pred,
						  uint64_t deadline)
{
	bool behind_reader = pred->class == READING;
	if (behind_reader) {
		/* Keep try-readers from passing us while readers hold. */
		atomic_fetch_add_explicit(&l->rc, WAITW, memory_order_relaxed);
		/* The paper's "pred->successor_class := writer", as an RMW:
		 * pred's own unblock may change the word at the same time.
		 * Published to pred by (C). */
		atomic_fetch_or_explicit(&pred->state, SUCC_WRITER, memory_order_relaxed);
	}
	LS_INJECT();
	link_behind(pred, n);
	uint32_t st;
	if (wait_unblocked(n, deadline, &st)) { /* (A) */
		int r = behind_reader ? leave_behind_reader(l, n, pred) : leave_behind_writer(n);
		if (r)
			return r;
		st = atomic_load_explicit(&n->state, memory_order_acquire); /* (A) */
	}
	if (behind_reader || (st & VIA_READERS)) /* the last reader handed it over; wr is n */
		atomic_fetch_sub_explicit(&l->rc, WFLAG + WAITW, memory_order_relaxed);
	else
		atomic_store_explicit(&l->wr, n, memory_order_relaxed);
	/* Keep the next waiter awake (wait.h). (D) acquire: pairs with (C). */
	if (linked_now(n))
		ls_word_prewake(&atomic_load_explicit(&n->next, memory_order_relaxed)->state);
	return 0;
}

static inline int write_acquire(struct mcsrw *l, struct node *n, uint64_t deadline)
{
	node_init(n, WRITING);
	LS_INJECT();
	/* as the swap in read_acquire */
	struct node *pred = atomic_exchange_explicit(&l->tail, n, memory_order_acq_rel);
	if (LS_UNLIKELY(pred != NULL))
		return write_behind(l, n, pred, deadline);
	/* (F) acquire: pairs with the readers' (E). Nobody can count in now:
	 * the queue is ours, and try-readers need readers counted. */
	if (LS_UNLIKELY(READERS(atomic_load_explicit(&l->rc, memory_order_acquire)) != 0))
		return drain(l, n, deadline);
	atomic_store_explicit(&l->wr, n, memory_order_relaxed);
	return 0;
}

static __attribute__((noinline)) void mcsrw_wrlock_refill(struct mcsrw *l)
{
	write_acquire(l, ls_node_alloc(), 0);
}

static void mcsrw_wrlock(void *state, unsigned how)
{
	(void)how;
	if (ls_node_cache_empty()) {
		mcsrw_wrlock_refill(state);
		return;
	}
	write_acquire(state, ls_node_alloc(), 0); /* from the cache: no call */
}

static int mcsrw_timedwrlock(void *state, unsigned how, uint64_t deadline)
{
	(void)how;
	return write_acquire(state, ls_node_alloc(), deadline);
}

static int mcsrw_trywrlock(void *state, unsigned how)
{
	(void)how;
	struct mcsrw *l = state;
	uint64_t zero = 0;
	if (atomic_load_explicit(&l->rc, memory_order_relaxed) != 0 ||
	    atomic_load_explicit(&l->tail, memory_order_relaxed) != NULL)
		return EBUSY;
	/* Reserve: from now on no try-reader counts itself in. */
	if (!atomic_compare_exchange_strong_explicit(&l->rc, &zero, TRY, memory_order_acquire,
						     memory_order_relaxed))
		return EBUSY;
	struct node *n = ls_node_alloc(), *expected = NULL;
	node_init(n, WRITING);
	LS_INJECT();
	/* as the swap in read_acquire */
	bool ok = atomic_compare_exchange_strong_explicit(&l->tail, &expected, n, memory_order_acq_rel,
							  memory_order_relaxed);
	if (ok && READERS(atomic_load_explicit(&l->rc, memory_order_acquire)) != 0)
		drain(l, n, 0); /* readers that left the queue just now: their unlock's last steps */
	else if (ok)
		atomic_store_explicit(&l->wr, n, memory_order_relaxed);
	atomic_fetch_sub_explicit(&l->rc, TRY, memory_order_relaxed);
	if (!ok)
		ls_node_free(n);
	return ok ? 0 : EBUSY;
}

static __attribute__((noinline)) void write_handover(struct mcsrw *l, struct node *n)
{
	struct node *s = wait_next(n);
	LS_INJECT();
	if (s->class == READING) /* published by (C) */
		atomic_fetch_add_explicit(&l->rc, READER, memory_order_acq_rel);
	ls_node_free(n);
	unblock(l, s, true); /* (B) */
}

static void mcsrw_wrunlock(void *state)
{
	struct mcsrw *l = state;
	struct node *n = atomic_load_explicit(&l->wr, memory_order_relaxed), *expected = n;
	if (LS_LIKELY(!linked_now(n))) {
		LS_INJECT();
		/* No successor: empty the queue. release: pairs with the acquire
		 * of the next swap or CAS that reads NULL. */
		if (LS_LIKELY(atomic_compare_exchange_strong_explicit(
			&l->tail, &expected, NULL, memory_order_release, memory_order_relaxed))) {
			LS_TEST_POINT(LS_POINT_RELEASED);
			ls_node_free(n); /* our node, not the lock's memory */
			return;
		}
	}
	write_handover(l, n);
}

/* ---- fork (see the header) ---- */

static void mcsrw_fork_rdheld(void *state, void **token, unsigned nth, unsigned holds)
{
	struct mcsrw *l = state;
	(void)holds;
	*token = NULL; /* leaves by the count; its node stays where it is */
	if (nth)
		return;
	/* relaxed, all: the child has one thread, ours */
	atomic_store_explicit(&l->tail, NULL, memory_order_relaxed);
	uint64_t v = atomic_load_explicit(&l->rc, memory_order_relaxed);
	atomic_store_explicit(&l->rc, v & ~(WFLAG | TRY | WAITW_MASK), memory_order_relaxed);
}

static const struct ls_rwalgo mcsrw_algo = {
    .name = "mcs-rw",
    .desc = "fair queue-based reader-writer lock (Mellor-Crummey & Scott, PPoPP 1991, 3.1)",
    .policy = "FIFO: writers in arrival order, the readers between two writers together",
    .caps = LS_RWCAP_FIFO | LS_RWCAP_QNODE,
    .rank = 40,
    .state_size = sizeof(struct mcsrw),
    .rdlock = mcsrw_rdlock,
    .tryrdlock = mcsrw_tryrdlock,
    .rdunlock = mcsrw_rdunlock,
    .wrlock = mcsrw_wrlock,
    .trywrlock = mcsrw_trywrlock,
    .timedwrlock = mcsrw_timedwrlock,
    .wrunlock = mcsrw_wrunlock,
    .fork_rdheld = mcsrw_fork_rdheld,
};
LS_REGISTER_RWALGO(mcsrw_algo);
