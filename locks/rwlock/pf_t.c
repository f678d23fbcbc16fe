/*
 * pf_t.c - the phase-fair ticket lock, PF-T.
 *
 * Brandenburg & Anderson, "Spin-based reader-writer synchronization for
 * multiprocessor real-time systems", Real-Time Systems 46(1), 2010, the
 * phase-fair ticket lock PF-T (first in their ECRTS 2009 paper, "Reader-
 * writer synchronization for shared-memory multiprocessor real-time
 * systems"). Phase fairness: read phases and write phases alternate; a
 * reader waits for at most one write phase, a writer for the read phase in
 * progress and the writers ahead of it (FIFO among writers). Four
 * counters:
 *
 *	rin	readers that have entered, in units of RINC (0x100), and in its
 *		low byte PRES (a writer is present) and PHID (its phase: the
 *		low bit of its ticket), plus RPARK (a reader sleeps on rin)
 *	rout	readers that have left, in units of RINC; bit 0 WPARK (the
 *		present writer sleeps on rout)
 *	win	writers' tickets handed out
 *	wout	ticket being served (bits 0-30), bit 31 LS_PARKED (a writer
 *		sleeps waiting for its ticket)
 *
 *   reader in   w := fetch_add(rin, RINC) & (PRES|PHID); if w != 0, wait
 *               until rin's writer bits differ from w (that writer left;
 *               a newer writer has the other phase bit, and counted us)
 *   reader out  rout += RINC
 *   writer in   t := fetch_add(win, 1); wait until wout = t; wait until
 *               the previous writer's bits have left rin (see below);
 *               r := fetch_add(rin, PRES | (t & PHID)); wait until
 *               rout = r (the readers that entered before it have left)
 *   writer out  wout += 1, then clear rin's writer bits
 * As in the paper, rin and rout wrap together, so all-zero is unlocked and
 * so is any copy of an unlocked state (rin = rout, win = wout).
 *
 * The paper's writer clears rin's bits and then advances wout; here the
 * order is reversed, so that the releasing step after which others may
 * take, use and free the lock is the last access to it (only futex wakes
 * on its addresses follow, which the kernel tolerates on freed memory).
 * With wout advanced first, the next writer could otherwise add its bits
 * to ours, so a writer waits for the previous writer's PRES to leave rin
 * before it adds its own; nothing else changes. After the release (lock.h,
 * rwlock.h): a writer's is the fetch_and of rin, a reader's its CAS of
 * rout (LS_POINT_RELEASED after each); only futex wakes follow.
 *
 * Writers waiting for their ticket all sleep on wout and are all woken by
 * each writer's release (the next one goes, the others sleep again). Not
 * queue/turn.h's one-word ticket lock, which would wake only the next: its
 * futex half (pending and sleepers) can come back to the value a waiter
 * read after a release and a new ticket (release, then take), so that a
 * waiter whose turn has come sleeps through the one wake-up meant for it.
 * wout only grows: a sleeper's value never comes back.
 *
 * Waiting follows the policy; sleepers say so with a bit in the word they
 * watch (wait.h's parked-bit protocol, on three words): RPARK in rin
 * (readers, and a writer waiting for the previous writer's bits), WPARK in
 * rout (the present writer), LS_PARKED in wout (writers waiting for their
 * ticket). Each releasing step clears the bit of the word it changes in the
 * same atomic step and wakes that word's sleepers if the bit was set.
 *
 * No native timeout: a reader counted in rin cannot leave before it has
 * entered (rout would run past a present writer's target) and a writer's
 * ticket cannot be handed back out of turn; timed acquisitions are the
 * shim's fallback (the try operations polled). trywrlock takes a ticket
 * only when it would be served at once and nobody is inside (rout read
 * before rin: see there), and hands it back (wout + 1) if readers came in
 * meanwhile. Readers at most 2^24 - 2^22 at once (rin's 24
 * bits, less a margin for readers racing the check), then EAGAIN. The
 * policy is phase-fair whatever the kind (it never starves a writer, and
 * a reader that arrives while a writer is present waits, as
 * LS_RW_PREFER_WRITER asks). No queue nodes, no token; 16 bytes, inline.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "rwlock.h"
#include "wait.h"

#define RINC 0x100u
#define PHID 0x1u
#define PRES 0x2u
#define WBITS (PRES | PHID)
#define RPARK 0x4u
#define WPARK 0x1u
#define TICKET 0x7fffffffu
#define MAX_INSIDE ((1u << 24) - (1u << 22))

struct pft {
	_Atomic uint32_t rin, rout, win, wout;
};
_Static_assert(sizeof(struct pft) <= LS_RW_INLINE_STATE, "inline state");

static inline void wake_all(_Atomic uint32_t *w)
{
	ls_futex_wake(w, 0x7fffffff);
}

/* Sleeps on *w seen as v, after setting bit in it (unless set). */
static void park(_Atomic uint32_t *w, uint32_t v, uint32_t bit)
{
	if (!(v & bit) && !atomic_compare_exchange_strong_explicit(w, &v, v | bit, memory_order_relaxed,
								   memory_order_relaxed))
		return;
	LS_INJECT();
	ls_futex_wait(w, v | bit, 0);
}

/* Waits, following the policy, until (*w & mask) != val (ne) or == val. */
static uint32_t wait_until(_Atomic uint32_t *w, uint32_t mask, uint32_t val, bool ne, uint32_t bit)
{
	struct ls_spin s = LS_SPIN_INIT;
	for (;;) {
		uint32_t v = atomic_load_explicit(w, memory_order_acquire);
		if (((v & mask) != val) == ne)
			return v;
		if (ls_spin_step(&s)) {
			park(w, v, bit);
			s = (struct ls_spin)LS_SPIN_INIT;
		}
	}
}

/* ---- readers ---- */

/* Readers inside, more than the limit? rout is read before rin: rout
 * never passes rin, so a later rin is at least it (read the other way
 * round, readers that came and went in between make the difference
 * negative). Returns rin as read. */
static inline bool too_many(struct pft *l, uint32_t *rin)
{
	uint32_t out = atomic_load_explicit(&l->rout, memory_order_relaxed);
	*rin = atomic_load_explicit(&l->rin, memory_order_relaxed);
	return ((*rin & ~0xffu) - (out & ~0xffu)) / RINC >= MAX_INSIDE;
}

static int pft_rdlock(void *st, unsigned how, void **token)
{
	struct pft *l = st;
	uint32_t v;
	(void)how, (void)token;
	if (LS_UNLIKELY(too_many(l, &v)))
		return EAGAIN;
	/* (A) acquire: pairs with (B) in pft_wrunlock */
	uint32_t w = atomic_fetch_add_explicit(&l->rin, RINC, memory_order_acquire) & WBITS;
	if (LS_UNLIKELY(w != 0)) {
		LS_INJECT();
		/* (A') acquire: the writer's clearing of its bits, (B) */
		wait_until(&l->rin, WBITS, w, true, RPARK);
	}
	return 0;
}

static int pft_tryrdlock(void *st, unsigned how, void **token)
{
	struct pft *l = st;
	(void)how, (void)token;
	for (;;) {
		uint32_t v;
		bool full = too_many(l, &v);
		if (v & WBITS)
			return EBUSY;
		if (full)
			return EAGAIN;
		/* (A) */
		if (atomic_compare_exchange_weak_explicit(&l->rin, &v, v + RINC, memory_order_acquire,
							  memory_order_relaxed))
			return 0;
	}
}

static void pft_rdunlock(void *st, void *token)
{
	struct pft *l = st;
	(void)token;
	uint32_t v = atomic_load_explicit(&l->rout, memory_order_relaxed);
	LS_INJECT();
	/* (C) release: pairs with (D) in the writer's drain */
	while (!atomic_compare_exchange_weak_explicit(&l->rout, &v, (v + RINC) & ~WPARK, memory_order_release,
						      memory_order_relaxed))
		;
	LS_TEST_POINT(LS_POINT_RELEASED);
	if (v & WPARK)
		wake_all(&l->rout);
}

/* ---- writers ---- */

/* Announces the writer holding ticket t in rin and waits for the readers
 * that came before it to leave. */
static void enter(struct pft *l, uint32_t t)
{
	/* the previous writer's bits must have left rin (see the header) */
	if (LS_UNLIKELY(atomic_load_explicit(&l->rin, memory_order_acquire) & PRES))
		wait_until(&l->rin, PRES, 0, false, RPARK);
	LS_INJECT();
	uint32_t r = atomic_fetch_add_explicit(&l->rin, PRES | (t & PHID), memory_order_acq_rel) & ~0xffu;
	LS_INJECT();
	/* (D) acquire: pairs with (C) */
	if (LS_UNLIKELY((atomic_load_explicit(&l->rout, memory_order_acquire) & ~0xffu) != r))
		wait_until(&l->rout, ~0xffu, r, false, WPARK);
}

static void pft_wrlock(void *st, unsigned how)
{
	struct pft *l = st;
	(void)how;
	uint32_t t = atomic_fetch_add_explicit(&l->win, 1, memory_order_relaxed);
	LS_INJECT();
	/* (E) acquire: pairs with (F) in pft_wrunlock */
	if (LS_UNLIKELY((atomic_load_explicit(&l->wout, memory_order_acquire) & TICKET) != (t & TICKET)))
		wait_until(&l->wout, TICKET, t & TICKET, false, LS_PARKED);
	enter(l, t);
}

/* Advances wout past ticket t, clearing LS_PARKED; true if it was set. */
static inline bool next_writer(struct pft *l)
{
	uint32_t v = atomic_load_explicit(&l->wout, memory_order_relaxed);
	/* (F) release: pairs with (E) */
	while (!atomic_compare_exchange_weak_explicit(&l->wout, &v, ((v & TICKET) + 1) & TICKET,
						      memory_order_release, memory_order_relaxed))
		;
	return v & LS_PARKED;
}

static int pft_trywrlock(void *st, unsigned how)
{
	struct pft *l = st;
	(void)how;
	uint32_t t = atomic_load_explicit(&l->win, memory_order_relaxed);
	if ((atomic_load_explicit(&l->wout, memory_order_relaxed) & TICKET) != (t & TICKET))
		return EBUSY; /* a writer holds the lock or waits */
	/* Nobody inside? rout first, then rin (as too_many): rout never
	 * passes rin, so a later rin equal to an earlier rout means that every
	 * reader counted in by then had left. Read the other way round, a
	 * reader that comes and goes between the loads brings rout up to a
	 * stale rin while an older reader, whose turn has come, is inside.
	 * (D) acquire, as in enter: the readers seen gone are gone. */
	uint32_t out = atomic_load_explicit(&l->rout, memory_order_acquire);
	LS_INJECT();
	uint32_t r = atomic_load_explicit(&l->rin, memory_order_relaxed);
	if ((r & WBITS) || (out & ~0xffu) != (r & ~0xffu))
		return EBUSY; /* readers inside, or the last writer still leaving */
	if (!atomic_compare_exchange_strong_explicit(&l->win, &t, t + 1, memory_order_acquire,
						     memory_order_relaxed))
		return EBUSY;
	/* Ticket t is served now. Announce ourselves only if rin has not
	 * moved since: then nobody came in, and nobody is inside. */
	LS_INJECT();
	if (atomic_compare_exchange_strong_explicit(&l->rin, &r, r | PRES | (t & PHID), memory_order_acq_rel,
						    memory_order_relaxed))
		return 0;
	/* A reader came in: hand the ticket back as if used. */
	if (next_writer(l))
		wake_all(&l->wout);
	return EBUSY;
}

static void pft_wrunlock(void *st)
{
	struct pft *l = st;
	bool wpark = next_writer(l);
	LS_INJECT();
	/* (B) release: the readers of our phase and the next writer go;
	 * after this the lock may be destroyed: only wakes follow */
	uint32_t old = atomic_fetch_and_explicit(&l->rin, ~(WBITS | RPARK), memory_order_release);
	LS_TEST_POINT(LS_POINT_RELEASED);
	if (wpark)
		wake_all(&l->wout);
	if (old & RPARK)
		wake_all(&l->rin);
}

static const struct ls_rwalgo pft_rwalgo = {
    .name = "pf-t",
    .desc = "phase-fair ticket lock PF-T: read and write phases alternate (Brandenburg & Anderson, RTS 2010)",
    .caps = 0,
    .rank = 20,
    .state_size = sizeof(struct pft),
    .rdlock = pft_rdlock,
    .tryrdlock = pft_tryrdlock,
    .rdunlock = pft_rdunlock,
    .wrlock = pft_wrlock,
    .trywrlock = pft_trywrlock,
    .wrunlock = pft_wrunlock,
};
LS_REGISTER_RWALGO(pft_rwalgo);
