/*
 * abortable.h - what the abortable locks share (clh_try.c, mcs_try.c,
 * clh_nb.c, mcs_nb.c, and through composite.h cal.c and cal_fp.c). Private
 * to those files: everything here is static, each including file gets its
 * own copy.
 *
 *   1. Deadlines: AB_NEVER (lock), 0 (trylock: already passed), else the
 *      caller's absolute ls_now_ns() deadline.
 *   2. PARKED-aware operations on 32-bit status words watched through
 *      ls_wait_while_eq: every change to such a word is an RMW that wakes
 *      sleepers when LS_PARKED was set (a plain store would erase the bit
 *      and strand a sleeper).
 *   3. Event words for fields wider than 32 bits (MCS-try's tagged
 *      pointers): the writer changes the field, then ab_notify(node's seq);
 *      the waiter polls the field and, when the policy says park, sets
 *      LS_PARKED in seq, re-checks the field and sleeps on seq. Two words,
 *      so this IS a Dekker pattern: field write and seq load on one side,
 *      seq RMW and field load on the other, all seq_cst, so at least one
 *      side sees the other (the writer wakes, or the waiter does not sleep).
 *   4. Per-thread node pools for the non-blocking locks (Scott, TR 773,
 *      section 2.1.1 and appendix "local_qnode"): see the comment there.
 *   5. Per-thread random numbers (the composite lock's node choice and
 *      backoff).
 *   6. fork (fork.h): whether a node stamped with its generation (clh_nb.c,
 *      clh_try.c) was enqueued before this process forked.
 * The composite abortable lock's core, shared by cal.c and cal_fp.c, is in
 * composite.h.
 */
#ifndef LS_ABORTABLE_H
#define LS_ABORTABLE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fork.h"
#include "lock.h"
#include "pool.h"
#include "wait.h"

#define AB_NEVER UINT64_MAX

/*
 * AddressSanitizer build (mk/abortable.mk: build/asan/stress). Queue nodes
 * live in type-stable memory that ASan does not track, so the abortable
 * locks poison a node's bytes themselves while it is free (the pool's
 * bookkeeping bytes stay readable) and unpoison them when it is handed out
 * again: ASan then reports any access to a node after the protocol freed
 * it and before its next allocation. A stale access after the node has been
 * reused is invisible (that is what type-stable means), and so are races;
 * the reads that the algorithms make of possibly-free nodes on purpose
 * (trylock's hint, the event-word notify) go through AB_NOSAN functions.
 */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define AB_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define AB_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define AB_NOSAN __attribute__((no_sanitize_address))
#else
#define AB_POISON(p, n) ((void)(p), (void)(n))
#define AB_UNPOISON(p, n) ((void)(p), (void)(n))
#define AB_NOSAN
#endif

/* A deliberate read of a node that may have been freed (type-stable). */
static inline AB_NOSAN uint32_t ab_peek32(_Atomic uint32_t *w)
{
	/* relaxed: a deliberate look at memory that may have been reused: a hint, re-checked */
	return atomic_load_explicit(w, memory_order_relaxed) & ~LS_PARKED;
}
static inline AB_NOSAN void *ab_peek_ptr(void *_Atomic *w)
{
	/* relaxed: as ab_peek32 */
	return atomic_load_explicit(w, memory_order_relaxed);
}

/* ls_node_alloc/ls_node_free with the poisoning above (the pool keeps its
 * link in the last 8 bytes, which stay unpoisoned). */
static inline __attribute__((unused)) void *ab_node_alloc(void)
{
	void *n = ls_node_alloc();
	AB_UNPOISON(n, LS_NODE_SIZE - 8);
	return n;
}
static inline __attribute__((unused)) void ab_node_free(void *n)
{
	AB_POISON(n, LS_NODE_SIZE - 8);
	ls_node_free(n);
}

/* ---- 2. status words ---------------------------------------------------- */

/* Current value without LS_PARKED. acquire: pairs with the release half of
 * whichever ab_set/ab_cas wrote it. */
static inline uint32_t ab_load(_Atomic uint32_t *w)
{
	return atomic_load_explicit(w, memory_order_acquire) & ~LS_PARKED;
}

/* Exchange (acq_rel) and wake sleepers; returns the old value. */
static inline uint32_t ab_set(_Atomic uint32_t *w, uint32_t v)
{
	return ls_word_publish(w, v);
}

/* CAS that ignores LS_PARKED in the comparison and wakes sleepers when it
 * succeeds over a parked value. acq_rel like ab_set. */
static inline bool ab_cas(_Atomic uint32_t *w, uint32_t expect, uint32_t v)
{
	/* relaxed: the CAS below orders; a stale value only fails it */
	uint32_t cur = atomic_load_explicit(w, memory_order_relaxed);
	for (;;) {
		if ((cur & ~LS_PARKED) != expect)
			return false;
		if (atomic_compare_exchange_weak_explicit(w, &cur, v, memory_order_acq_rel,
							  memory_order_relaxed))
			break;
	}
	if (cur & LS_PARKED)
		ls_futex_wake(w, 0x7fffffff);
	return true;
}

/* Waits while *w == val (without LS_PARKED), following the policy, until
 * the deadline (AB_NEVER: none). 0 with *out = new value, or ETIMEDOUT. */
static inline int ab_wait(_Atomic uint32_t *w, uint32_t val, uint64_t deadline, uint32_t *out)
{
	uint32_t dummy;
	if (!out)
		out = &dummy;
	if (deadline == AB_NEVER) {
		*out = ls_wait_while_eq(w, val);
		return 0;
	}
	return ls_wait_while_eq_until(w, val, deadline, out);
}

/* Waits until *w == val (no deadline): the handshakes of Scott & Scherer. */
static inline void ab_wait_for(_Atomic uint32_t *w, uint32_t val)
{
	uint32_t v;
	while ((v = ab_load(w)) != val)
		ls_wait_while_eq(w, v);
}

/* ---- 3. event words ----------------------------------------------------- */

/* After changing a field watched through `seq`. seq_cst: see (3) above.
 * The node may have been freed by the time we look (type-stable). */
static inline AB_NOSAN void ab_notify(_Atomic uint32_t *seq)
{
	uint32_t v = atomic_load_explicit(seq, memory_order_seq_cst);
	if (LS_UNLIKELY(v & LS_PARKED))
		ls_word_publish(seq, (v + 1) & ~LS_PARKED);
}

/* Sets LS_PARKED in *seq; returns the value to sleep on, or 0 if seq moved
 * (a notification came: re-check instead of sleeping). */
static inline uint32_t ab_park_prepare(_Atomic uint32_t *seq)
{
	uint32_t v = atomic_load_explicit(seq, memory_order_seq_cst);
	if (v & LS_PARKED)
		return v;
	if (!atomic_compare_exchange_strong_explicit(seq, &v, v | LS_PARKED, memory_order_seq_cst,
						     memory_order_seq_cst))
		return 0;
	return v | LS_PARKED;
}

/* Waits while `cond` (which must read the watched fields with seq_cst
 * loads) holds. Evaluates to true if the deadline passed first. */
#define AB_AWAIT(seq, cond, deadline)                                                                        \
	({                                                                                                   \
		struct ls_spin s_ = LS_SPIN_INIT;                                                            \
		uint64_t dl_ = (deadline);                                                                   \
		bool late_ = false;                                                                          \
		for (unsigned i_ = 0; (cond); i_++) {                                                        \
			if (dl_ != AB_NEVER && ((i_ & 15) == 0 || s_.n >= ls_wait_cfg.spin) &&               \
			    ls_now_ns() >= dl_) {                                                            \
				late_ = true;                                                                \
				break;                                                                       \
			}                                                                                    \
			if (ls_spin_step(&s_)) {                                                             \
				uint32_t v_ = ab_park_prepare(seq);                                          \
				if (v_ && (cond))                                                            \
					ls_futex_wait((seq), v_, dl_ == AB_NEVER ? 0 : dl_);                 \
			}                                                                                    \
		}                                                                                            \
		late_;                                                                                       \
	})

/* ---- 4. per-thread node pools ------------------------------------------- */

/*
 * The non-blocking locks need the ABA protection of Scott's allocator
 * (TR 773, 2.1.1): a node B allocated is reused only by B, so B's late
 * compare_and_swap(tail, mine, pred) cannot succeed on a recycled copy of
 * its node. ls_node_free puts a node in the *freeing* thread's cache, which
 * is exactly what must not happen, so these locks keep their own layer:
 *
 *   - each thread owns a circular list of nodes taken from ls_node_alloc;
 *   - any thread frees a node by marking it FREE (a release exchange);
 * *   - only the owner allocates, by scanning its list for a FREE node (an
 *     acquire load: whatever the freer did happens before the reuse), and
 *     grows the list when all are in use (so the list's length is the
 *     "queue nodes ever extant" of section 3.4, and ls_node_stats counts it);
 *   - at thread exit the owner returns FREE nodes to ls_node_free and marks
 *     the others ORPHAN: whoever frees an ORPHAN calls ls_node_free. The
 *     owner has exited, so it has no late CAS left to protect.
 *
 * Pool fields live at bytes 40..55 of the node: the algorithms' fields stay
 * below 40, and ls_node_free's link (the last 8 bytes) is untouched while
 * the node is in a pool.
 */
#define AB_POOL_OFF 40
enum { AB_FREE = 0, AB_USED = 1, AB_ORPHAN = 2 };
struct ab_pool_fields {
	_Atomic uint32_t pstate;
	uint32_t pad;
	void *next; /* circular list of the owner's nodes */
};
_Static_assert(AB_POOL_OFF + sizeof(struct ab_pool_fields) <= LS_NODE_SIZE - 8, "pool fields");
#define AB_PF(n) ((struct ab_pool_fields *)((char *)(n) + AB_POOL_OFF))

/* Scott's allocator scans the whole ring, O(nodes held) per allocation: a
 * thread holding 100,000 locks then takes minutes. We scan at most
 * AB_POOL_SCAN nodes and grow after the last one scanned, so the next scan
 * goes on round the ring: O(1) per allocation, and the ring exceeds the
 * nodes actually in use by about one in AB_POOL_SCAN. */
#define AB_POOL_SCAN 8

struct ab_pool {
	void *cursor; /* last node allocated; NULL: empty */
};
static __thread struct ab_pool ab_pool __attribute__((tls_model("initial-exec")));
static pthread_key_t ab_pool_key;
static pthread_once_t ab_pool_once = PTHREAD_ONCE_INIT;

static void ab_pool_exit(void *arg)
{
	struct ab_pool *p = arg;
	void *first = p->cursor, *n = first;
	if (!n)
		return;
	p->cursor = NULL;
	do {
		void *next = AB_PF(n)->next;
		uint32_t used = AB_USED;
		/* acq_rel: on failure (FREE) we take the node back, so the
		 * freer's accesses must happen before ls_node_free. */
		if (!atomic_compare_exchange_strong_explicit(&AB_PF(n)->pstate, &used, AB_ORPHAN,
							     memory_order_acq_rel, memory_order_acquire)) {
			AB_UNPOISON(n, AB_POOL_OFF); /* other users of the pool do not poison */
			ls_node_free(n);
		}
		n = next;
	} while (n != first);
}

static void ab_pool_make_key(void)
{
	if (pthread_key_create(&ab_pool_key, ab_pool_exit) != 0)
		ab_pool_key = (pthread_key_t)-1; /* no exit hook: nodes stay with the thread */
}

static __attribute__((unused, noinline)) void *ab_pool_grow(struct ab_pool *p)
{
	void *n = ls_node_alloc();
	AB_UNPOISON(n, LS_NODE_SIZE - 8);
	/* relaxed: the node is this thread's; the pool word is read by others only with the exchange of
	 * ab_pool_free */
	atomic_store_explicit(&AB_PF(n)->pstate, AB_USED, memory_order_relaxed);
	if (!p->cursor) {
		pthread_once(&ab_pool_once, ab_pool_make_key);
		if (ab_pool_key != (pthread_key_t)-1)
			pthread_setspecific(ab_pool_key, p);
		AB_PF(n)->next = n;
	} else {
		AB_PF(n)->next = AB_PF(p->cursor)->next;
		AB_PF(p->cursor)->next = n;
	}
	p->cursor = n;
	return n;
}

static __attribute__((unused)) void *ab_pool_alloc(void)
{
	struct ab_pool *p = &ab_pool;
	void *c = p->cursor;
	if (LS_LIKELY(c != NULL)) {
		void *n = c;
		for (unsigned k = 0; k < AB_POOL_SCAN; k++) {
			n = AB_PF(n)->next;
			/* acquire: pairs with the release exchange in ab_pool_free */
			if (atomic_load_explicit(&AB_PF(n)->pstate, memory_order_acquire) == AB_FREE) {
				/* relaxed: the owner's own mark; the acquire above ordered the freer's
				 * accesses */
				atomic_store_explicit(&AB_PF(n)->pstate, AB_USED, memory_order_relaxed);
				AB_UNPOISON(n, AB_POOL_OFF);
				p->cursor = n;
				return n;
			}
			if (n == c)
				break;
		}
		p->cursor = n; /* the next scan goes on from here */
	}
	return ab_pool_grow(p);
}

/* Any thread, once it holds the node's responsible reference. */
static __attribute__((unused)) void ab_pool_free(void *n)
{
	AB_POISON(n, AB_POOL_OFF);
	/* release: our reads of the node happen before its reuse */
	if (atomic_exchange_explicit(&AB_PF(n)->pstate, AB_FREE, memory_order_acq_rel) == AB_ORPHAN) {
		AB_UNPOISON(n, AB_POOL_OFF);
		ls_node_free(n);
	}
}

/* ---- 5. per-thread random numbers --------------------------------------- */

static __thread uint64_t ab_rng __attribute__((tls_model("initial-exec")));

static __attribute__((unused)) uint32_t ab_random(void)
{
	uint64_t x = ab_rng;
	if (LS_UNLIKELY(x == 0))
		x = ((uint64_t)(uintptr_t)&ab_rng ^ ls_now_ns()) * 0x9e3779b97f4a7c15ull | 1;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	ab_rng = x;
	return (uint32_t)(x >> 32);
}

/* ---- 6. fork ---- */

/* The node whose stamp is *gen was enqueued before this process forked:
 * by a thread that fork left behind, or for a hold taken before the fork.
 * relaxed: the stamp was written before the swap that published the node,
 * which the caller's swap or load of it followed. */
static inline bool ab_fork_stale(const uint32_t *gen)
{
	return ls_fork_child() && ls_fork_stale(__atomic_load_n(gen, __ATOMIC_RELAXED));
}

#endif
