/*
 * composite.h - the composite abortable lock's core, shared by cal.c and
 * cal_fp.c (the waiting primitives, ab_*, are abortable.h's). Private to
 * those files: everything here is static.
 *
 * Marathe, Moir & Shavit, "Composite Abortable Locks", IPDPS 2006 (paper
 * 003, section 3, Figs. 1-2; 3.1 aborts; 3.2 fast path) and AMP 7.7
 * (CompositeLock, CompositeFastPathLock). Line numbers "L23" below are
 * those of 003's Fig. 2.
 *
 * State (out of line, type-stable): the tail word, then C nodes of one
 * 32-bit word each, one node per cache line:
 *
 *	tail:	version:54 | FPWAIT:1 | FP:1 | index:8
 *		(index 0 = NULL, 1..C a node)
 *	node:	state:8 | pred:8 | 0:15 | LS_PARKED:1
 *		F free, W waiting (queued or holding), R released,
 *		A aborted, with `pred` its predecessor's index (the paper
 *		stores it in node->next; packing it into the state word makes
 *		"write pred, then mark A" one atomic publish).
 *
 * ABA on x86-64: a node index is reused constantly, so "tail == node 3"
 * says nothing about which use of node 3. Every CAS on the tail adds one
 * to the 54-bit version carried in the same 64-bit word, and a plain
 * LOCK CMPXCHG compares index and version together: a CAS prepared from a
 * stale read fails unless the tail went through exactly 2^54 updates in
 * between. Storing an index, not a pointer (AMP's AtomicStampedReference
 * would need CMPXCHG16B), is what lets version and reference share one
 * word.
 *
 * Transitions: F->W (CAS, a thread takes the node, L23), A/R->W (tail
 * clean-up: the node is the tail and nobody is behind it, L27-35),
 * W->F (aborted before splicing, L47), W->A (abort while queued, L63-64),
 * W->R (release), A->F and R->F (the successor frees it, L60, L69).
 * Who frees (sets F): the thread spinning on the node, or the thread that
 * cleans it up at the tail, or (cal-fp) the fast path that empties the
 * queue; no memory is ever allocated.
 *
 * FP (cal-fp, 003 3.2): "locked by an unqueued thread". A thread takes an
 * idle lock (tail NULL, or the tail node R, or A with no predecessor) by
 * one CAS that sets FP; queued threads then proceed as in CAL, except that
 * the head of the queue enters only once FP is clear. It waits for that on
 * the tail word itself: under park it sets FPWAIT (only while FP is set)
 * and sleeps on the tail's low half, which every CAS of the tail changes
 * (the version); the fast-path unlocker's CAS clears FP and FPWAIT, and
 * wakes the low half's sleepers if FPWAIT was set. Splices keep both bits.
 *
 * Holder: `holder` names the queue node of the holder (1..C), or is 0: the
 * lock is free, or (cal-fp) held by the fast path. A queue release clears
 * it before it releases. So an unlock of a free lock (never locked, or
 * unlocked already) finds 0: cal returns at once; cal-fp's fast-path
 * release finds FP clear in the tail and changes nothing.
 *
 * After the release (lock.h): a queue release is the store of R into the
 * holder's node, a fast release the CAS of the tail; after either, only a
 * futex wake on that word's address follows. (The fast-path unlocker used
 * to bump a sequence word `fpseq` for the head of the queue after its CAS:
 * a write into a block that a destroy may have freed by then.)
 *
 * fork() (fork.h). The nodes are the lock's own, and in a fork child the
 * threads the fork left behind keep theirs for ever: queued, holding one
 * taken but not yet spliced in, or aborted; with C nodes, C such threads
 * would leave the child none. So the child's first acquisition or queue
 * release repairs the lock as the fork left it, before any thread of the
 * child takes a node (ls_fork_repair: the first runs it, the others wait;
 * `gen` records it): every node but the holder's is free again, and the tail names the
 * holder's node alone (or none), FP as it was (a fast-path holder keeps
 * the lock). A hold taken before the fork is released as any other. The
 * check is on cal's uncontended path (its every acquisition takes a node):
 * on lock, and on the queue release (a tail call there, so that the
 * release needs no frame); cal-fp's fast path has none.
 *
 * Backoff (L39): a thread that cannot take its node sleeps on that node's
 * word for a random time below a doubling limit (AB_CAL_BACKOFF_MIN..MAX
 * ns), capped by its deadline, waking early if the node changes: a
 * test-and-test-and-set on the node, through the waiting policy.
 */
#ifndef LS_ABORTABLE_COMPOSITE_H
#define LS_ABORTABLE_COMPOSITE_H

#include "abortable.h"
#include "fork.h"

#define AB_CAL_MAX 16
#define AB_CAL_BACKOFF_MIN 1000u
#define AB_CAL_BACKOFF_MAX 256000u
enum { CAL_F = 0, CAL_W = 1, CAL_R = 2, CAL_A = 3 };
#define CAL_IDX(t) ((uint32_t)((t)&0xff))
#define CAL_FP 0x100ull
#define CAL_FPWAIT 0x200ull
#define CAL_VER 0x400ull
#define CAL_ST(w) ((w)&0xff)
#define CAL_PRED(w) (((w) >> 8) & 0xff)

struct cal_node {
	_Atomic uint32_t word;
	char pad[LS_CACHELINE - 4];
};

struct cal {
	_Atomic uint64_t tail;
	_Atomic uint32_t gen;	 /* the fork generation it was last repaired in */
	_Atomic uint32_t holder; /* node index of the holder; 0: none, or fast path */
	char pad[LS_CACHELINE - 16];
	struct cal_node node[AB_CAL_MAX];
};

/* Next tail word: same FP bits (cal-fp: `fp`), one more version, index
 * `idx`. */
static inline uint64_t cal_next(uint64_t t, uint32_t idx, bool fp)
{
	return ((t & ~(CAL_VER - 1)) + CAL_VER) | (fp ? t & (CAL_FP | CAL_FPWAIT) : 0) | idx;
}

static inline struct cal_node *cal_at(struct cal *l, uint32_t idx)
{
	return &l->node[idx - 1];
}

/* One try at node idx (L23-37): F -> W, or, if it is released or aborted
 * and is the tail (nobody behind it), take it out of the queue. *wp: the
 * node word seen (for the backoff). */
static inline __attribute__((always_inline)) bool cal_take(struct cal *l, uint32_t idx, uint32_t *wp, bool fp)
{
	struct cal_node *n = cal_at(l, idx);
	if (ab_cas(&n->word, CAL_F, CAL_W))
		return true;
	LS_INJECT();
	/* L25-26: tail first, then the node. */
	uint64_t t = atomic_load_explicit(&l->tail, memory_order_acquire);
	uint32_t w = *wp = ab_load(&n->word);
	if ((CAL_ST(w) == CAL_A || CAL_ST(w) == CAL_R) && CAL_IDX(t) == idx) {
		/* R: it was the only node, the queue becomes empty; A: its
		 * predecessor becomes the tail. The version makes the CAS fail
		 * if the tail moved since we read it. */
		uint64_t nt = cal_next(t, CAL_ST(w) == CAL_A ? CAL_PRED(w) : 0, fp);
		if (atomic_compare_exchange_strong_explicit(&l->tail, &t, nt, memory_order_acq_rel,
							    memory_order_relaxed)) {
			LS_INJECT();
			ab_set(&n->word, CAL_W);
			return true;
		}
	}
	return false;
}

/* cal-fp: the head of the queue waits until FP is clear (acquire: pairs
 * with the fast release's CAS), under the policy, sleeping on the tail's
 * low half with FPWAIT set; 0, or ETIMEDOUT. */
/* The tail's low half (index, FP, FPWAIT, the version's low bits): the
 * futex word of the head of the queue. */
static inline _Atomic uint32_t *cal_tail_low(struct cal *l)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (_Atomic uint32_t *)(void *)&l->tail;
#else
	return (_Atomic uint32_t *)(void *)&l->tail + 1;
#endif
}

static __attribute__((noinline)) int cal_fp_wait(struct cal *l, uint64_t deadline)
{
	_Atomic uint32_t *lo = cal_tail_low(l);
	struct ls_spin s = LS_SPIN_INIT;
	for (unsigned i = 0;; i++) {
		uint64_t t = atomic_load_explicit(&l->tail, memory_order_acquire);
		if (!(t & CAL_FP))
			return 0;
		if (deadline != AB_NEVER && ((i & 15) == 0 || s.n >= ls_wait_cfg.spin) &&
		    ls_now_ns() >= deadline)
			return ETIMEDOUT;
		if (!ls_spin_step(&s))
			continue;
		/* relaxed: a failure only sends us round again; the release
		 * CAS that clears FP reads FPWAIT in the same word */
		if (!(t & CAL_FPWAIT) &&
		    !atomic_compare_exchange_strong_explicit(&l->tail, &t, t | CAL_FPWAIT,
							     memory_order_relaxed, memory_order_relaxed))
			continue;
		ls_futex_wait(lo, (uint32_t)(t | CAL_FPWAIT), deadline == AB_NEVER ? 0 : deadline);
		s = (struct ls_spin)LS_SPIN_INIT;
	}
}

/* The lock as the fork left it (see the header), before any thread of the
 * child takes a node. */
static void cal_fork_repair(void *arg)
{
	struct cal *l = arg;
	/* relaxed: the holder's own acquisition wrote it; its release waits
	 * for this repair */
	uint32_t h = atomic_load_explicit(&l->holder, memory_order_relaxed);
	for (uint32_t i = 1; i <= AB_CAL_MAX; i++)
		if (i != h)
			ab_set(&cal_at(l, i)->word, CAL_F);
	/* relaxed: the CAS below orders; acq_rel: the nodes' new states are
	 * seen by whoever reads the tail */
	uint64_t t = atomic_load_explicit(&l->tail, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(
	    &l->tail, &t, ((t & ~(CAL_VER - 1)) + CAL_VER) | (t & (CAL_FP | CAL_FPWAIT)) | h,
	    memory_order_acq_rel, memory_order_relaxed)) {
	}
}

static __attribute__((noinline)) void cal_fork(struct cal *l)
{
	ls_fork_repair(l, &l->gen, cal_fork_repair, l);
}

/* Returns 0 with the lock, or ETIMEDOUT. fp: cal-fp's slow path (a
 * constant in each copy: cal_acquire below). */
static inline __attribute__((always_inline)) int cal_acquire_in(struct cal *l, uint32_t c, uint64_t deadline,
								bool fp)
{
	if (LS_UNLIKELY(ls_fork_child()))
		cal_fork(l);
	uint32_t idx = 1 + ab_random() % c;
	struct cal_node *n = cal_at(l, idx);
	uint32_t limit = AB_CAL_BACKOFF_MIN;
	uint64_t t;

	/* Take a node (L22-43): a test-and-set with backoff on one node. */
	for (;;) {
		uint32_t w;
		if (cal_take(l, idx, &w, fp))
			break;
		/* L39-42, with the deadline checked before sleeping. */
		uint64_t now = ls_now_ns();
		if (now >= deadline) {
			/* Out of patience without a node. POSIX: a timed lock
			 * must not time out if the mutex can be locked at
			 * once, so before giving up try every node once: an
			 * unheld, quiescent lock always has a free node or a
			 * released/aborted one at the tail. */
			for (idx = 1; idx <= c; idx++)
				if (cal_take(l, idx, &w, fp))
					break;
			if (idx > c)
				return ETIMEDOUT; /* no node: nothing to undo */
			n = cal_at(l, idx);
			break;
		}
		uint64_t until = now + ab_random() % limit;
		if (until > deadline)
			until = deadline;
		ab_wait(&n->word, w, until, NULL);
		if (limit < AB_CAL_BACKOFF_MAX)
			limit *= 2;
		/* Retry on a node chosen afresh. 003 section 3 allows "the
		 * same node or a different one selected at random"; Fig. 2 and
		 * AMP keep the same node, which livelocks a lone thread whose
		 * node is R (or A) but not the tail while an aborted node at
		 * the tail names it: only a thread that picks the tail node
		 * can clean up (the stress test found this). */
		idx = 1 + ab_random() % c;
		n = cal_at(l, idx);
	}

	/* Splice it in (L44-51). The CAS comes before the deadline check so
	 * that zero patience (trylock) still gets one try. release: our W is
	 * visible to the successor that gets idx from the tail. */
	/* relaxed: the CAS below orders; a stale value only fails it */
	t = atomic_load_explicit(&l->tail, memory_order_relaxed);
	for (;;) {
		LS_INJECT();
		if (atomic_compare_exchange_weak_explicit(&l->tail, &t, cal_next(t, idx, fp),
							  memory_order_acq_rel, memory_order_relaxed))
			break;
		if (ls_now_ns() >= deadline) {
			ab_set(&n->word, CAL_F); /* L47 */
			return ETIMEDOUT;
		}
	}

	/* Wait for the predecessor (L52-69). */
	uint32_t pred = CAL_IDX(t);
	if (pred)
		LS_TEST_POINT(LS_POINT_VISIBLE);
	for (;;) {
		if (pred == 0) {
			if (!fp)
				break;
			/* cal-fp: head of the queue, wait for FP to clear
			 * (see the file comment). */
			if (cal_fp_wait(l, deadline) == ETIMEDOUT)
				goto abort;
			break;
		}
		struct cal_node *p = cal_at(l, pred);
		/* (A) acquire: pairs with (B) in cal_release */
		uint32_t w = ab_load(&p->word);
		if (CAL_ST(w) == CAL_R) {
			LS_INJECT();
			ab_set(&p->word, CAL_F); /* L69 */
			pred = 0;
			continue;
		}
		if (CAL_ST(w) == CAL_A) {
			LS_INJECT();
			ab_set(&p->word, CAL_F); /* L57-61: clean up, skip it */
			pred = CAL_PRED(w);
			continue;
		}
		if (ab_wait(&p->word, w, deadline, NULL) == ETIMEDOUT)
			goto abort;
		LS_INJECT();
	}
	/* relaxed: read by unlock, after this thread's or the program's own
	 * synchronisation */
	atomic_store_explicit(&l->holder, idx, memory_order_relaxed);
	return 0;

abort:
	/* L63-64: leave the node, naming our predecessor, for our successor
	 * (or a thread that finds it at the tail) to clean up. */
	LS_INJECT();
	ab_set(&n->word, CAL_A | pred << 8);
	return ETIMEDOUT;
}

/* One copy of the acquisition per lock, with fp a constant in it (cal.c
 * uses the first, cal_fp.c the second; the other is dropped). */
static __attribute__((noinline, unused)) int cal_acquire_plain(struct cal *l, uint32_t c, uint64_t deadline)
{
	return cal_acquire_in(l, c, deadline, false);
}
static __attribute__((noinline, unused)) int cal_acquire_fp(struct cal *l, uint32_t c, uint64_t deadline)
{
	return cal_acquire_in(l, c, deadline, true);
}
static inline int cal_acquire(struct cal *l, uint32_t c, uint64_t deadline, bool fp)
{
	return fp ? cal_acquire_fp(l, c, deadline) : cal_acquire_plain(l, c, deadline);
}

/* cal-fp fast path (003 3.2, AMP Fig. 7.25): an idle lock in one CAS. */
static inline bool cal_fast(struct cal *l)
{
	uint64_t t = atomic_load_explicit(&l->tail, memory_order_acquire);
	if (t & CAL_FP)
		return false;
	uint32_t idx = CAL_IDX(t);
	if (idx) {
		/* "Tail points to a node in R state, or in A state with a
		 * NULL next field": the queue is empty, reset it. */
		uint32_t w = ab_load(&cal_at(l, idx)->word);
		if (!(CAL_ST(w) == CAL_R || (CAL_ST(w) == CAL_A && CAL_PRED(w) == 0)))
			return false;
	}
	/* acquire: pairs with the release CAS in cal_release, or (A) */
	uint64_t nt = ((t & ~(CAL_VER - 1)) + CAL_VER) | CAL_FP;
	if (!atomic_compare_exchange_strong_explicit(&l->tail, &t, nt, memory_order_acq_rel,
						     memory_order_relaxed))
		return false;
	if (idx) /* it left the queue with our CAS: nobody else frees it */
		ab_set(&cal_at(l, idx)->word, CAL_F);
	/* relaxed: read only by the unlock that this acquisition precedes (in this thread, or after the
	 * program's own synchronisation) */
	atomic_store_explicit(&l->holder, 0, memory_order_relaxed);
	return true;
}

/* The queue release of node idx (Fig. 1 line 14). */
static inline void cal_release_node(struct cal *l, uint32_t idx)
{
	/* relaxed: read only by an unlock, which a release of the lock (below)
	 * orders after us */
	atomic_store_explicit(&l->holder, 0, memory_order_relaxed);
	/* (B) release: Fig. 1 line 14 */
	ab_set(&cal_at(l, idx)->word, CAL_R);
	LS_TEST_POINT(LS_POINT_RELEASED);
}

/* The same in a fork child: after the lock's repair (see the header). */
static __attribute__((noinline)) void cal_release_forked(struct cal *l, uint32_t idx)
{
	cal_fork(l);
	cal_release_node(l, idx);
}

static void cal_release(struct cal *l, bool fp)
{
	/* relaxed: written by the acquisition this release ends */
	uint32_t idx = atomic_load_explicit(&l->holder, memory_order_relaxed);
	if (fp && idx == 0) {
		/* AMP Fig. 7.26 fastPathUnlock. release: pairs with the
		 * acquire of the next fast path or queue head. relaxed load:
		 * the CAS orders, a stale value only fails it. */
		uint64_t t = atomic_load_explicit(&l->tail, memory_order_relaxed);
		do {
			if (!(t & CAL_FP))
				return; /* free: an unlock too many (lock.h, misuse) */
		} while (!atomic_compare_exchange_weak_explicit(&l->tail, &t,
								((t & ~(CAL_VER - 1)) + CAL_VER) | CAL_IDX(t),
								memory_order_acq_rel, memory_order_relaxed));
		LS_TEST_POINT(LS_POINT_RELEASED);
		if (t & CAL_FPWAIT) /* the head of the queue sleeps on the low half */
			ls_futex_wake(cal_tail_low(l), 0x7fffffff);
		return;
	}
	if (!fp && idx == 0)
		return; /* free: an unlock too many (lock.h, misuse) */
	if (LS_UNLIKELY(ls_fork_child())) {
		cal_release_forked(l, idx); /* a tail call: the release stays a leaf */
		return;
	}
	cal_release_node(l, idx);
}

/* trylock: EBUSY without taking a node if the tail node is W (held or
 * queued) or the fast path is held; else one attempt with zero patience. */
static inline int cal_trylock(struct cal *l, uint32_t c, bool fp)
{
	if (fp && cal_fast(l))
		return 0;
	uint64_t t = atomic_load_explicit(&l->tail, memory_order_acquire);
	if (fp && (t & CAL_FP))
		return EBUSY;
	if (CAL_IDX(t) && CAL_ST(ab_load(&cal_at(l, CAL_IDX(t))->word)) == CAL_W)
		return EBUSY;
	return cal_acquire(l, c, 0, fp) == 0 ? 0 : EBUSY;
}

/* The LOCKSWAP_CAL_NODES tunable, C of Marathe et al., one per file: the
 * shim sets the active algorithm's. */
static uint64_t cal_nodes = 4;
static const struct ls_param cal_params[] = {
    {"LOCKSWAP_CAL_NODES", "cal and cal-fp: queue nodes per lock (C of Marathe et al.)", &cal_nodes, 1,
     AB_CAL_MAX},
    {0},
};

/* The operations of cal (fp false) and cal-fp (fp true: the fast path of
 * 003 3.2 first). lock() is an attempt with infinite patience. */
static inline void cal_op_lock(void *state, bool fp)
{
	if (fp && LS_LIKELY(cal_fast(state)))
		return;
	cal_acquire(state, (uint32_t)cal_nodes, AB_NEVER, fp);
}

static inline int cal_op_timedlock(void *state, uint64_t deadline_ns, bool fp)
{
	if (fp && LS_LIKELY(cal_fast(state)))
		return 0;
	return cal_acquire(state, (uint32_t)cal_nodes, deadline_ns, fp);
}

static inline int cal_op_trylock(void *state, bool fp)
{
	return cal_trylock(state, (uint32_t)cal_nodes, fp);
}

static inline void cal_op_unlock(void *state, bool fp)
{
	cal_release(state, fp);
}

#endif
