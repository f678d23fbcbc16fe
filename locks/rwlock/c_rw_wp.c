/*
 * c_rw_wp.c - C-RW-WP, the NUMA-aware reader-writer lock with writer
 * preference: per-cluster reader indicators and a cohort writer lock.
 *
 * Calciu, Dice, Lev, Luchangco, Marathe, Shavit, "NUMA-Aware
 * Reader-Writer Locks", PPoPP 2013, section 3 (the family: a cohort lock
 * for writers, a reader indicator per NUMA node) and its writer-preference
 * variant C-RW-WP (section 3.4), with the readers' patience bound that
 * keeps writers from starving readers. Of the paper's variants (neutral
 * C-RW-NP, reader preference C-RW-RP, writer preference C-RW-WP) this is
 * the one the paper recommends: readers never touch the writers' lock
 * (neutral readers take the cohort lock, so they serialise on it), and a
 * writer never has to back off and retry (reader preference makes writers
 * release the cohort lock and retry while readers arrive, which loses the
 * cohort's batching of writers). Not in ../shared/papers; written from the
 * paper's description.
 *
 * Reader: arrive at its cluster's indicator (a count on the cluster's own
 * line); if the cohort lock is not held, it holds a read lock. Otherwise it
 * departs, waits until the cohort lock is free, and tries again. A reader
 * that has waited longer than LOCKSWAP_CRWWP_PATIENCE raises the barrier
 * (a count); writers wait for the barrier to fall before they go for the
 * cohort lock, so the queued writers drain and the readers get in. Writer:
 * waits for the barrier, takes the cohort lock, then waits until every
 * cluster's indicator is empty. Release: a reader departs; a writer
 * releases the cohort lock, which passes it to a writer of its own cluster
 * while one waits, at most LOCKSWAP_COHORT_PASSES times in a row.
 *
 * The cohort lock (Dice, Marathe & Shavit, PPoPP 2012: c_tkt_tkt.c is the
 * same idea as a mutex): a global ticket lock (inline, one word, so that
 * readers test it with one load) and a local ticket lock per cluster, both
 * queue/turn.h's ls_tkt. "Held" for readers is the global lock's (a ticket
 * out): it stays held across local passes, so a cohort of writers runs as
 * one batch. A writer that finds the global lock free with no ticket out
 * takes it alone (hier.h's fast path, LOCKSWAP_HIER_FASTPATH), holding no
 * local lock.
 *
 *	inline:	global		the global ticket lock (ls_tkt), with
 *				LS_TKT_IDLERS: a reader sleeps until it is idle
 *		lines		the block of hier.h: head, then one line per
 *				cluster
 *		barrier		readers out of patience (count | LS_PARKED)
 *		flat		the reader indicator of a lock without a block
 *	head:	holder		the holder's cluster (its local lock), or
 *				LS_HIER_FAST (the global lock alone)
 *		passes		consecutive local passes of the global lock
 *	cluster	readers		count << 1 | WWAIT (a writer sleeps on it)
 *	line:	local		the cluster's ticket lock
 *		granted		1: the global lock comes with the local one
 *
 * Transitions of a reader: arrive (+2) -> [global held: depart (-2), wait
 * for a free global lock (raise the barrier once out of patience), arrive
 * again] -> holds (token: which indicator it counted in) -> depart. Of a
 * writer: [barrier: wait] -> local lock -> (granted: the global lock with
 * it; else take a global ticket and wait) -> every indicator drained ->
 * holds -> release: pass (granted = 1, then the local lock), or the local
 * lock, then the global one. Only the holder writes holder, passes and
 * granted.
 *
 * Ordering pairs: (A) a reader's arrival (seq_cst RMW) then its read of the
 * global lock (a seq_cst load) / (B) a writer's global ticket (seq_cst RMW)
 * then its reads of the indicators (seq_cst loads): a Dekker pair, so
 * either the reader sees the lock held or the writer sees the reader.
 * (C) release of a reader's departure / (D) acquire of the writer's scan:
 * the read critical section before the write. (E) release of the global
 * and local ticket locks / (F) their acquire (turn.h).
 *
 * Waiting policy: readers wait for the global lock to go idle (no ticket
 * out: the only state in which they may enter), spinning and yielding on
 * its word, then sleeping on it with LS_TKT_IDLERS set (turn.h): the
 * release that leaves it idle clears the bit in its own CAS and wakes them,
 * together; a release that hands the global lock to the next writer, or a
 * local pass, wakes no reader. Writers wait as turn.h's ticket waiters
 * (a release wakes only the writer whose ticket comes), on the barrier, and
 * on an indicator with WWAIT: a writer that would sleep sets WWAIT and
 * sleeps on the indicator; the departure that leaves it empty with WWAIT
 * set wakes them all. A writer done waiting clears WWAIT itself; under
 * reader preference other writers may sleep on the same indicator (they
 * wait with no lock held, and a timed one gives up with readers still
 * counted), so a clear that finds readers counted wakes them, and they
 * set WWAIT again (clearing it silently lost their wake-up: a writer
 * slept for ever once the others had finished). Timed reads are
 * native (a reader that gives up has departed, and lowers the barrier if
 * it raised it).
 *
 * Preference (rwlock.h). Writer preference with the readers' patience is
 * the lock's own policy; under LS_RW_PREFER_WRITER (the _NP writer kind)
 * readers never raise the barrier: writers may then starve readers, as
 * glibc's writer-preferring kind allows. A lock that asks for reader
 * preference (the default kind) gets the paper's reader-preferring variant
 * (C-RW-RP, section 3.3) on the same state: a writer waits for the readers
 * without keeping them out, outside the writers' lock: it takes the cohort
 * lock as above, and if it finds a reader counted it releases it again
 * (passing it on, within its cluster, as a release does) and waits, with
 * no lock held, until it has seen every indicator empty, then tries
 * again. A reader that finds the global lock held (a writer in its
 * critical section, or about to check the indicators) waits for it to go
 * idle, with the same patience as under the own policy. Readers may then
 * starve writers, as glibc's default kind allows.
 *
 * Timed writers are native (rwlock.h, TIMED WRITERS). A ticket of the
 * global lock cannot be handed back before its turn, so a timed writer
 * takes the global lock only when it is idle (no ticket out, as
 * trywrlock); until then it waits for it to go idle, as a reader does,
 * while the writers that hold it keep the readers out. With the global
 * lock it waits for the readers (under reader preference, as above: it
 * checks them, and releases the lock if it finds one), and at its deadline
 * it releases the global lock: the readers it kept out go on. Writers that
 * come later may take tickets before it.
 *
 * After the release (rwlock.h, lock.h). A reader's departure (one RMW of
 * its indicator) is its release: afterwards it only issues the futex wake
 * of a writer sleeping on that indicator, which passes the address to the
 * kernel (a spurious wake-up if the block was freed and reused meanwhile,
 * ls_ext memory being type-stable). A writer's release of the global lock
 * is one CAS of its word, after which only futex wakes on its address
 * follow; it comes LAST: a cohort writer that does not pass releases its
 * local lock first (the paper's order is the reverse, and its late write to
 * the local line, after a destroy had freed the lines block, landed in
 * another lock's). A pass hands over the local lock with the global one
 * held: that local release (one CAS, then a futex wake) is the lock's
 * release. Misuse never reaches an rwlock algorithm (rwlock.h: the shim
 * answers an unlock by a thread that holds nothing), so the releases need
 * no check for a free lock.
 *
 * No address space (hier.h): a lock that gets no block is the global
 * ticket lock for writers and the inline `flat` indicator for readers
 * (with the marker `flat`, whose holder is LS_HIER_FAST). No queue nodes.
 * Each indicator counts up to 2^30 readers (then EAGAIN).
 *
 * fork() (rwlock.h, FORK): in a fork child, a lock the forking thread
 * read-held at fork had no writer holding it: every ticket out of the
 * global lock and of the local ones (a writer draining the indicators, the
 * writers queued) and every raise of the barrier (a reader out of
 * patience: a reader waits departed, so the waiting readers are counted
 * nowhere else) were gone threads'. fork_rdheld, run while the child has
 * one thread, serves every ticket out of each of those locks at once
 * (ls_tkt_all_void: free, nobody pending), clears `granted`, the passes,
 * the barrier and every WWAIT; the indicators keep their readers, who hold
 * the lock (one that fork left behind keeps it held). No other path reads
 * the generation.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>

#include "hier/hier.h"
#include "lock.h"
#include "queue/turn.h"
#include "rwlock.h"
#include "wait.h"

#define ARRIVE 2u
#define WWAIT 1u
#define FULL (1u << 31) /* an indicator at 2^30 readers takes no more */

struct line {
	_Atomic uint32_t readers;
	_Atomic uint32_t granted;
	_Atomic uint64_t local; /* ls_tkt */
	char pad[LS_CACHELINE - 16];
};
_Static_assert(sizeof(struct line) == LS_CACHELINE, "one line per cluster");

struct crw {
	_Atomic uint64_t global; /* ls_tkt, with LS_TKT_IDLERS */
	ls_hier_lines_t lines;
	_Atomic uint32_t barrier;
	_Atomic uint32_t flat;
};
_Static_assert(sizeof(struct crw) <= LS_RW_INLINE_STATE, "inline state");
_Static_assert(offsetof(struct crw, lines) == LS_HIER_LINES_AT, "hier.h");

static uint64_t patience_us = 1000;

/* The marker of a lock without a block (hier.h): its wrunlock releases the
 * global lock alone, as after the fast path. */
static const struct ls_cohort_head flat = {.h = LS_HIER_FLAT_HEAD, .holder = LS_HIER_FAST};

static inline struct line *line(struct ls_hier_head *h, unsigned i)
{
	return ls_hier_line(h, i);
}

/* The indicator a token names: 0 the inline one, else line i. */
static inline _Atomic uint32_t *indicator(struct crw *l, struct ls_hier_head *h, unsigned i)
{
	return i ? &line(h, i)->readers : &l->flat;
}

/* Is the global lock held (or queued for)? (A) */
static inline bool held(struct crw *l)
{
	return ls_tkt_held(atomic_load_explicit(&l->global, memory_order_seq_cst));
}

/* ---- the global lock ---- */

/* Out of line: wakes the writer whose ticket the release of old began, and
 * the readers if it left the lock idle (n) with LS_TKT_IDLERS set. Touches
 * only the kernel. */
static __attribute__((noinline)) void global_wake(_Atomic uint64_t *w, uint64_t old, uint64_t n)
{
	if (old & LS_TKT_SLEEPERS)
		ls_tkt_wake(w, old);
	if ((old & ~n) & LS_TKT_IDLERS)
		ls_futex_wake_bits(ls_half(w, false), INT_MAX, (uint32_t)LS_TKT_IDLERS);
}

/* Releases the global lock, which the caller holds: one CAS, which also
 * clears LS_TKT_IDLERS if the lock is left idle; then only futex wakes on
 * its address. `last`: this is the lock's release (the test point). (E) */
static inline __attribute__((always_inline)) void global_release(struct crw *l, bool last)
{
	/* relaxed: the CAS below releases, and a stale value only fails it */
	uint64_t v = atomic_load_explicit(&l->global, memory_order_relaxed), n;
	do {
		n = ls_tkt_released(v);
		if (!(n & LS_TKT_PENDING))
			n &= ~LS_TKT_IDLERS; /* idle: the readers may go */
		LS_INJECT();
		/* (E) release: pairs with (F) and with the readers' (A) */
	} while (!atomic_compare_exchange_weak_explicit(&l->global, &v, n, memory_order_release,
							memory_order_relaxed));
	if (last)
		LS_TEST_POINT(LS_POINT_RELEASED);
	if (LS_UNLIKELY(v & (LS_TKT_SLEEPERS | LS_TKT_IDLERS)))
		global_wake(&l->global, v, n);
}

/* ---- readers ---- */

/* A reader leaves indicator r; `release`: in its unlock (the test point). */
static inline __attribute__((always_inline)) void depart_as(_Atomic uint32_t *r, bool release)
{
	LS_INJECT();
	/* (C) release: pairs with (D) */
	uint32_t old = atomic_fetch_sub_explicit(r, ARRIVE, memory_order_release);
	if (release)
		LS_TEST_POINT(LS_POINT_RELEASED);
	if (LS_UNLIKELY(old == (ARRIVE | WWAIT)))
		ls_futex_wake(r, INT_MAX); /* the last one out: a writer sleeps on it */
}

static inline void depart(_Atomic uint32_t *r)
{
	depart_as(r, false);
}

/* Waits, by the policy, until the global lock is idle (no ticket out), or
 * `until` passes (0: no limit): 0 or ETIMEDOUT. */
static int wait_idle(struct crw *l, uint64_t until)
{
	struct ls_spin s = LS_SPIN_INIT;
	for (unsigned i = 1;; i++) {
		LS_INJECT();
		/* relaxed: a hint; the arrival that follows decides (A) */
		uint64_t v = atomic_load_explicit(&l->global, memory_order_relaxed);
		if (!ls_tkt_held(v))
			return 0;
		if (until && ((i & 15) == 0 || s.n >= ls_wait_cfg.spin) && ls_now_ns() >= until)
			return ETIMEDOUT;
		if (!ls_spin_step(&s))
			continue;
		/* Mark the held word, then sleep on the half that has the mark:
		 * the release that leaves the lock idle clears it (so a sleeper
		 * not yet asleep finds the half changed) and wakes the mark's
		 * sleepers; any other change of the half only makes us look
		 * again. relaxed: the word's modification order alone orders
		 * the mark and the release. */
		if (!(v & LS_TKT_IDLERS) &&
		    !atomic_compare_exchange_strong_explicit(&l->global, &v, v | LS_TKT_IDLERS,
							     memory_order_relaxed, memory_order_relaxed))
			continue;
		LS_INJECT();
		if (ls_futex_wait_bits(ls_half(&l->global, false), (uint32_t)(v | LS_TKT_IDLERS), until,
				       (uint32_t)LS_TKT_IDLERS) == ETIMEDOUT)
			return ETIMEDOUT;
		s = (struct ls_spin)LS_SPIN_INIT;
	}
}

static void barrier_lower(struct crw *l)
{
	uint32_t v = atomic_load_explicit(&l->barrier, memory_order_relaxed), n;
	do {
		n = (v & ~LS_PARKED) - 1;
		if (n)
			n |= v & LS_PARKED; /* the last one to lower it wakes */
	} while (!atomic_compare_exchange_weak_explicit(&l->barrier, &v, n, memory_order_release,
							memory_order_relaxed));
	if (!n && (v & LS_PARKED))
		ls_futex_wake(&l->barrier, INT_MAX);
}

enum mode { LOCK, TRY, TIMED };

/* Everything but the fast path's first attempt: the block, the cluster
 * lookup's slow path, EAGAIN, waiting, patience, deadlines. */
static __attribute__((noinline)) int read_slow(struct crw *l, struct ls_hier_head *h, unsigned how,
					       enum mode mode, uint64_t deadline, void **token)
{
	if (!h) /* entered (hier.h, "Idle"), or the marker */
		h = ls_hier_enter_attach(&l->lines, false, &flat, NULL);
	unsigned i = ls_hier_is_flat(h) ? 0 : 1 + ls_cluster_fold(ls_cluster(), h->nclusters);
	_Atomic uint32_t *r = indicator(l, h, i);
	/* the barrier: after the patience, but under writer preference */
	bool raised = false, patient = !(how & LS_RW_PREFER_WRITER);
	uint64_t out_of_patience = 0;
	int ret;
	for (;;) {
		LS_INJECT();
		/* (A) */
		if (atomic_fetch_add_explicit(r, ARRIVE, memory_order_seq_cst) >= FULL) {
			depart(r);
			ret = EAGAIN;
			break;
		}
		if (!held(l)) {
			ret = 0;
			break;
		}
		depart(r);
		if (mode == TRY) {
			ret = EBUSY;
			break;
		}
		/* Wait until the global lock is idle. */
		if (patient && !raised && !out_of_patience)
			out_of_patience = ls_now_ns() + patience_us * 1000;
		uint64_t until = patient && !raised ? out_of_patience : 0;
		if (mode == TIMED && (!until || deadline < until))
			until = deadline;
		if (wait_idle(l, until) != ETIMEDOUT)
			continue;
		if (mode == TIMED && ls_now_ns() >= deadline) {
			ret = ETIMEDOUT;
			break;
		}
		atomic_fetch_add_explicit(&l->barrier, 1, memory_order_relaxed);
		raised = true;
	}
	if (raised)
		barrier_lower(l);
	if (!ret)
		*token = (void *)(uintptr_t)(i + 1);
	else
		ls_hier_leave(h, &flat);
	return ret;
}

/* The fast path's arrival failed: depart, then the slow path (out of line,
 * so that the fast path makes no call that returns). */
static __attribute__((noinline)) int read_retry(struct crw *l, struct ls_hier_head *h, _Atomic uint32_t *r,
						unsigned how, void **token)
{
	depart(r);
	return read_slow(l, h, how, LOCK, 0, token);
}

static int crw_rdlock(void *state, unsigned how, void **token)
{
	struct crw *l = state;
	struct ls_hier_head *h = ls_hier_try_enter(&l->lines);
	unsigned c;
	if (LS_LIKELY(h) && LS_LIKELY(ls_cluster_fast(&c))) {
		unsigned i = 1 + ls_cluster_fold(c, h->nclusters);
		_Atomic uint32_t *r = &line(h, i)->readers;
		/* (A) */
		uint32_t old = atomic_fetch_add_explicit(r, ARRIVE, memory_order_seq_cst);
		if (LS_LIKELY(old < FULL && !held(l))) {
			*token = (void *)(uintptr_t)(i + 1);
			return 0;
		}
		return read_retry(l, h, r, how, token);
	}
	return read_slow(l, h, how, LOCK, 0, token);
}

static int crw_tryrdlock(void *state, unsigned how, void **token)
{
	struct crw *l = state;
	return read_slow(l, ls_hier_enter(&l->lines), how, TRY, 0, token);
}

static int crw_timedrdlock(void *state, unsigned how, uint64_t deadline, void **token)
{
	struct crw *l = state;
	return read_slow(l, ls_hier_enter(&l->lines), how, TIMED, deadline, token);
}

static void crw_rdunlock(void *state, void *token)
{
	struct crw *l = state;
	unsigned i = (unsigned)(uintptr_t)token - 1;
	/* relaxed: our acquisition loaded the block */
	struct ls_hier_head *h = (struct ls_hier_head *)atomic_load_explicit(&l->lines, memory_order_relaxed);
	depart_as(indicator(l, h, i), true);
	ls_hier_leave(h, &flat); /* compares h only */
}

/* ---- writers ---- */

/* Waits, by the policy, until indicator r counts no reader, or the
 * deadline (0: none) passes: 0 or ETIMEDOUT. (D) */
static __attribute__((noinline)) int wait_empty(_Atomic uint32_t *r, uint64_t deadline)
{
	/* (D) acquire: pairs with (C); seq_cst: (B) */
	uint32_t v = atomic_load_explicit(r, memory_order_seq_cst);
	struct ls_spin s = LS_SPIN_INIT;
	int ret = 0;
	for (unsigned i = 1; v >= ARRIVE; i++) {
		LS_INJECT();
		if (deadline && ((i & 15) == 0 || s.n >= ls_wait_cfg.spin) && ls_now_ns() >= deadline) {
			ret = ETIMEDOUT;
			break;
		}
		if (ls_spin_step(&s)) {
			/* WWAIT, then sleep on the value that has it: the last
			 * departure either sees WWAIT and wakes us, or changes
			 * the word first and the futex wait returns at once. */
			if ((v & WWAIT) || atomic_compare_exchange_strong_explicit(
					       r, &v, v | WWAIT, memory_order_relaxed, memory_order_relaxed))
				ls_futex_wait(r, v | WWAIT, deadline);
			s = (struct ls_spin)LS_SPIN_INIT;
		}
		v = atomic_load_explicit(r, memory_order_seq_cst);
	}
	/* Clear WWAIT. Under reader preference several writers (and timed
	 * ones, which give up with readers still counted) wait on one
	 * indicator with no lock held, and another may sleep on a value with
	 * WWAIT: if readers are counted when we clear it, no departure will
	 * wake that sleeper, so we do; it looks again and sets WWAIT again.
	 * An empty indicator has no sleeper: the departure that emptied it
	 * woke them. relaxed: the word's modification order alone orders the
	 * clear, the sleepers' CAS and the departures. */
	if (v & WWAIT) {
		uint32_t old = atomic_fetch_and_explicit(r, ~WWAIT, memory_order_relaxed);
		if ((old & WWAIT) && old >= ARRIVE)
			ls_futex_wake(r, INT_MAX);
	}
	return ret;
}

static inline bool empty(_Atomic uint32_t *r)
{
	/* (D) acquire: pairs with (C); seq_cst: (B) */
	return atomic_load_explicit(r, memory_order_seq_cst) < ARRIVE;
}

/* Waits until every reader has departed, or the deadline (0: none)
 * passes: 0 or ETIMEDOUT. (B): after the global ticket (under reader
 * preference, also before it, with no lock held). */
static int drain(struct crw *l, struct ls_hier_head *h, uint64_t deadline)
{
	if (ls_hier_is_flat(h))
		return empty(&l->flat) ? 0 : wait_empty(&l->flat, deadline);
	for (unsigned i = 1; i <= h->nclusters; i++)
		if (!empty(&line(h, i)->readers) && wait_empty(&line(h, i)->readers, deadline))
			return ETIMEDOUT;
	return 0;
}

/* No reader counted now? (B): after the global ticket. */
static inline bool drained(struct crw *l, struct ls_hier_head *h)
{
	if (LS_UNLIKELY(ls_hier_is_flat(h)))
		return empty(&l->flat);
	for (unsigned i = 1; i <= h->nclusters; i++)
		if (LS_UNLIKELY(!empty(&line(h, i)->readers)))
			return false;
	return true;
}

/* Takes the global lock if it is free with no ticket out (ls_tkt_try with
 * (B)'s order). */
static inline bool global_try(struct crw *l)
{
	/* relaxed: the CAS below acquires */
	uint64_t v = atomic_load_explicit(&l->global, memory_order_relaxed);
	if (ls_tkt_held(v))
		return false;
	LS_INJECT();
	/* (F) acquire; (B) seq_cst: a reader that arrives after it sees the
	 * lock held */
	return atomic_compare_exchange_strong_explicit(&l->global, &v, v + LS_TKT_PENDING1,
						       memory_order_seq_cst, memory_order_relaxed);
}

static inline void global_acquire(struct crw *l)
{
	/* (B) seq_cst, as above; (F) acquire when it holds at once */
	uint64_t old = atomic_fetch_add_explicit(&l->global, LS_TKT_PENDING1, memory_order_seq_cst);
	if (ls_tkt_held(old))
		ls_tkt_wait(&l->global, ls_tkt_ticket(old)); /* (F) */
}

/* Waits until the barrier is down, or the deadline (0: none) passes: 0 or
 * ETIMEDOUT. */
static int wait_barrier(struct crw *l, uint64_t deadline)
{
	/* acquire: nothing to order; the barrier only holds writers back */
	uint32_t v = atomic_load_explicit(&l->barrier, memory_order_relaxed) & ~LS_PARKED;
	while (v) {
		LS_INJECT();
		if (!deadline)
			v = ls_wait_while_eq(&l->barrier, v);
		else if (ls_wait_while_eq_until(&l->barrier, v, deadline, &v))
			return ETIMEDOUT;
	}
	return 0;
}

/* The cohort path: barrier, local lock, then the global lock unless it
 * came with the local one. Returns with the global lock held. */
static __attribute__((noinline)) void write_cohort(struct crw *l, struct ls_cohort_head *h)
{
	wait_barrier(l, 0);
	if (h == &flat) {
		global_acquire(l);
		return;
	}
	unsigned c = ls_cluster_fold(ls_cluster(), h->h.nclusters);
	struct line *s = line(&h->h, 1 + c);
	ls_tkt_lock(&s->local); /* (F) */
	/* relaxed: written by the previous holder before its local release */
	if (!atomic_load_explicit(&s->granted, memory_order_relaxed)) {
		global_acquire(l);
		h->passes = 0;
	}
	atomic_store_explicit(&s->granted, 0, memory_order_relaxed);
	h->holder = c;
}

static void write_release(struct crw *l, struct ls_cohort_head *h, bool unlock);

/* Reader preference (see the header): the writer, holding the global lock,
 * found readers counted. It releases the lock, waits with no lock held
 * until it has seen every indicator empty, and takes it again, until it
 * finds none. */
static __attribute__((noinline)) void write_rp(struct crw *l, struct ls_cohort_head *h)
{
	do {
		write_release(l, h, false);
		LS_INJECT();
		drain(l, &h->h, 0);
		write_cohort(l, h);
	} while (!drained(l, &h->h));
}

static void crw_wrlock(void *state, unsigned how)
{
	struct crw *l = state;
	struct ls_cohort_head *h = (struct ls_cohort_head *)ls_hier_try_enter(&l->lines);
	if (LS_LIKELY(h) && ls_hier_fastpath && !atomic_load_explicit(&l->barrier, memory_order_relaxed) &&
	    global_try(l)) {
		h->holder = LS_HIER_FAST;
	} else {
		if (!h)
			h = (struct ls_cohort_head *)ls_hier_enter_attach(&l->lines, false, &flat, NULL);
		write_cohort(l, h);
	}
	if (LS_LIKELY(drained(l, &h->h)))
		return;
	if (ls_rw_reader_pref(how))
		write_rp(l, h);
	else
		drain(l, &h->h, 0);
}

static int crw_timedwrlock(void *state, unsigned how, uint64_t deadline)
{
	struct crw *l = state;
	struct ls_cohort_head *h = (struct ls_cohort_head *)ls_hier_enter(&l->lines);
	if (!h)
		h = (struct ls_cohort_head *)ls_hier_enter_attach(&l->lines, false, &flat, NULL);
	bool rp = ls_rw_reader_pref(how);
	for (;;) {
		/* the global lock only when idle: a ticket cannot be given
		 * back before its turn (see the header) */
		if (wait_barrier(l, deadline) || (rp && drain(l, &h->h, deadline)) || wait_idle(l, deadline))
			break;
		if (!global_try(l))
			continue;
		if (!ls_hier_is_flat(&h->h))
			h->holder = LS_HIER_FAST;
		if (drained(l, &h->h) || (!rp && !drain(l, &h->h, deadline)))
			return 0;
		global_release(l, false); /* (E): the readers it kept out go on */
		if (!rp)
			break;
	}
	ls_hier_leave(&h->h, &flat);
	return ETIMEDOUT;
}

static int crw_trywrlock(void *state, unsigned how)
{
	(void)how;
	struct crw *l = state;
	struct ls_cohort_head *h = (struct ls_cohort_head *)ls_hier_enter(&l->lines);
	if (!h)
		h = (struct ls_cohort_head *)ls_hier_enter_attach(&l->lines, false, &flat, NULL);
	if (atomic_load_explicit(&l->barrier, memory_order_relaxed) || !global_try(l)) {
		ls_hier_leave(&h->h, &flat);
		return EBUSY;
	}
	/* (B) then (D): any reader still counted makes us give the lock back */
	if (ls_hier_is_flat(&h->h)) {
		if (atomic_load_explicit(&l->flat, memory_order_seq_cst) >= ARRIVE)
			goto busy;
		return 0;
	}
	for (unsigned i = 1; i <= h->h.nclusters; i++)
		if (atomic_load_explicit(&line(&h->h, i)->readers, memory_order_seq_cst) >= ARRIVE)
			goto busy;
	h->holder = LS_HIER_FAST;
	return 0;
busy:
	global_release(l, false); /* (E) */
	ls_hier_leave(&h->h, &flat);
	return EBUSY;
}

/* `unlock`: in wrunlock, where the last step is the lock's release (the
 * test point); else a writer under reader preference that found readers
 * and lets them on. */
static __attribute__((noinline)) void write_release_cohort(struct crw *l, struct ls_cohort_head *h,
							   bool unlock)
{
	struct line *s = line(&h->h, 1 + h->holder);
	/* relaxed: we hold the local lock; a waiter's ticket seen late only
	 * makes us release the global lock instead of passing it */
	if (ls_tkt_waiters(atomic_load_explicit(&s->local, memory_order_relaxed)) &&
	    h->passes < ls_cohort_passes) {
		/* A writer of our cluster waits: it gets the global lock with
		 * the local one, and readers keep waiting. Published by the
		 * local release. */
		h->passes++;
		atomic_store_explicit(&s->granted, 1, memory_order_relaxed);
		ls_tkt_release(&s->local, unlock); /* (E), with the global lock: the release */
		return;
	}
	/* The local lock first: a writer of our cluster that takes it then
	 * queues for the global lock, which is still ours. */
	ls_tkt_release(&s->local, false); /* (E) */
	global_release(l, unlock);	  /* (E), the last access: see the header */
}

static void write_release(struct crw *l, struct ls_cohort_head *h, bool unlock)
{
	if (LS_UNLIKELY(h->holder != LS_HIER_FAST)) {
		write_release_cohort(l, h, unlock);
		return;
	}
	global_release(l, unlock);
}

static void crw_wrunlock(void *state)
{
	struct crw *l = state;
	/* relaxed: our acquisition loaded (or attached) it */
	struct ls_cohort_head *h =
	    (struct ls_cohort_head *)atomic_load_explicit(&l->lines, memory_order_relaxed);
	write_release(l, h, true);
	ls_hier_leave(&h->h, &flat); /* compares h only */
}

static void crw_destroy(void *state)
{
	ls_hier_detach(&((struct crw *)state)->lines);
}

/* ---- fork (see the header) ---- */

static void crw_fork_rdheld(void *state, void **token, unsigned nth, unsigned holds)
{
	struct crw *l = state;
	(void)token;
	(void)holds;
	if (nth)
		return; /* once per lock */
	/* relaxed, all: the child has one thread, ours */
	atomic_store_explicit(&l->global,
			      ls_tkt_all_void(atomic_load_explicit(&l->global, memory_order_relaxed)),
			      memory_order_relaxed);
	atomic_store_explicit(&l->barrier, 0, memory_order_relaxed);
	atomic_fetch_and_explicit(&l->flat, ~WWAIT, memory_order_relaxed);
	struct ls_cohort_head *h = (struct ls_cohort_head *)ls_hier_load(&l->lines);
	if (!h || h == &flat || ls_hier_is_flat(&h->h))
		return;
	h->passes = 0;
	h->holder = LS_HIER_FAST;
	for (unsigned i = 1; i <= h->h.nclusters; i++) {
		struct line *s = line(&h->h, i);
		atomic_store_explicit(&s->local,
				      ls_tkt_all_void(atomic_load_explicit(&s->local, memory_order_relaxed)),
				      memory_order_relaxed);
		atomic_store_explicit(&s->granted, 0, memory_order_relaxed);
		atomic_fetch_and_explicit(&s->readers, ~WWAIT, memory_order_relaxed);
	}
}

static const struct ls_param crw_params[] = {
    {"LOCKSWAP_CRWWP_PATIENCE",
     "c-rw-wp: how long a reader waits for writers before it raises the barrier that holds new "
     "writers back, microseconds",
     &patience_us, 1, 10000000},
    LS_COHORT_PASSES_PARAM,
    LS_HIER_FASTPATH_PARAM,
    {0}};

static const struct ls_rwalgo crw_algo = {
    .name = "c-rw-wp",
    .desc = "NUMA-aware, per-cluster reader indicators, cohort writer lock, writer preference "
	    "(Calciu et al., PPoPP 2013, C-RW-WP)",
    .policy = "writer preference; a reader out of patience holds new writers back",
    .caps = LS_RWCAP_HIER,
    .rank = 50,
    .state_size = sizeof(struct crw),
    .params = crw_params,
    .destroy = crw_destroy,
    .rdlock = crw_rdlock,
    .tryrdlock = crw_tryrdlock,
    .timedrdlock = crw_timedrdlock,
    .rdunlock = crw_rdunlock,
    .wrlock = crw_wrlock,
    .trywrlock = crw_trywrlock,
    .timedwrlock = crw_timedwrlock,
    .wrunlock = crw_wrunlock,
    .fork_rdheld = crw_fork_rdheld,
};
LS_REGISTER_RWALGO(crw_algo);
