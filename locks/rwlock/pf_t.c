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
 *		low byte: PRES (a writer is present), PHID (the phase of the
 *		last writer announced, kept after it leaves), RPARK (a reader
 *		sleeps on rin), HELD (reader preference: the present writer
 *		holds the lock), TW (a timed writer waits for the readers)
 *	rout	readers that have left, in units of RINC; bit 0 WPARK (the
 *		writer sleeps on rout)
 *	win	writers' tickets handed out
 *	wout	ticket being served (bits 0-30), bit 31 LS_PARKED (a writer
 *		sleeps waiting for its ticket)
 *
 *   reader in   v := fetch_add(rin, RINC); if v has PRES, wait until
 *               rin's PRES and PHID differ from v's (that writer left; a
 *               newer writer has the other phase, and counted us)
 *   reader out  rout += RINC
 *   writer in   t := fetch_add(win, 1); wait until wout = t; wait until
 *               the previous writer's bits have left rin (see below);
 *               r := fetch_add(rin, PRES and PHID flipped); wait until
 *               rout = r (the readers that entered before it have left)
 *   writer out  wout += 1, then clear rin's PRES (PHID stays)
 * As in the paper, rin and rout wrap together, so all-zero is unlocked and
 * so is any copy of an unlocked state (rin = rout, win = wout).
 *
 * The phase bit. In the paper it is the low bit of the writer's ticket;
 * here it is flipped by each announcement and stays in rin until the next,
 * because a ticket may be used without an announcement (a trywrlock that
 * hands its ticket back, a timed writer that gives up), and two
 * announcements of one parity in a row would look, to a reader that saw
 * the first and has not looked since, like the same writer: it would wait
 * for the second, which counted it and waits for it (the deadlock of issue
 * 32, item 1). Every announcement here is made by a writer that will hold
 * the lock, which waits for the readers counted before it: so a reader
 * that saw one announcement has entered and left before the one after the
 * next is made.
 *
 * Preference (rwlock.h). Phase fairness is the lock's own policy and what
 * it gives the _NP writer kind: a present writer keeps new readers out (a
 * reader that waited for one writer may then enter before the writers
 * queued after it). A lock that asks for reader preference (the default
 * kind) gets a reader-preferring variant of the same counters: a writer
 * announces itself only when it takes the lock, with PRES and HELD, in a
 * CAS of the rin it read with nobody inside (rout read between that rin and
 * the CAS: the check of trywrlock below); until then it waits, and readers
 * come in as they please. A reader waits only for HELD. Readers may then
 * starve writers, as glibc's default kind allows; writers stay FIFO among
 * themselves.
 *
 * The paper's writer clears rin's bits and then advances wout; here the
 * order is reversed, so that the releasing step after which others may
 * take, use and free the lock is the last access to it (only futex wakes
 * on its addresses follow, which the kernel tolerates on freed memory).
 * With wout advanced first, the next writer could otherwise add its bits
 * to ours, so a writer waits for the previous writer's PRES (or TW) to
 * leave rin before it adds its own. After the release (lock.h, rwlock.h):
 * a writer's is the fetch_and of rin, a reader's its CAS of rout
 * (LS_POINT_RELEASED after each); only futex wakes follow.
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
 * rout (the writer that waits for the readers), LS_PARKED in wout (writers
 * waiting for their ticket). Each step that lets a sleeper go clears the bit
 * of the word it changes in the same atomic step and wakes that word's
 * sleepers if the bit was set.
 *
 * Timed writers are native (rwlock.h, TIMED WRITERS). A ticket cannot be
 * handed back out of turn, so a timed writer takes one only when it is
 * served at once (wout = win: no writer holds the lock or waits for it);
 * until then it waits for the writers' releases (on wout, as the ticket
 * waiters) the way a reader waits for a write phase, and the writers ahead
 * of it keep the readers out meanwhile; writers that come later may take
 * tickets before it. With its ticket, under phase fairness, it sets TW,
 * which keeps new readers out as an announcement would without being one:
 * a reader that finds TW takes its count back and waits for rin's phase
 * bits to change, then arrives again. The writer waits for the readers
 * counted before TW to leave; then, once no reader that backs out is
 * counted (a few instructions of theirs), it replaces TW with its
 * announcement in one CAS and holds the lock, or, past its deadline,
 * clears TW in that CAS (the readers it kept out go on) and hands its
 * ticket on. Under reader preference it only waits, as above, and gives up
 * by handing its ticket on. trywrlock is the attempt without the waits: it
 * takes a ticket only when it would be served at once and nobody is inside
 * (rout read before rin: see there), announces itself in a CAS of the rin
 * it read, and hands the ticket back (wout + 1) if readers came in
 * meanwhile. Timed reads are the shim's fallback (the try operation
 * polled): a reader counted in rin cannot leave before it has entered
 * (rout would run past a writer's target). Readers at most 2^24 - 2^22 at
 * once (rin's 24 bits, less a margin for readers racing the check), then
 * EAGAIN. No queue nodes, no token; 16 bytes, inline.
 *
 * fork() (rwlock.h, FORK): in a fork child, a lock the forking thread
 * read-held at fork had no writer holding it, so the served writer (draining,
 * or waiting for the previous writer's bits) and every ticket out were gone
 * threads', and so were the readers waiting for a phase. fork_rdheld, run
 * while the child has one thread, serves every ticket out (wout = win: the
 * next ticket is served at once), and takes back the announcement or TW
 * (PHID stays, as after a release) and the sleepers' bits. The readers
 * counted in rin stay counted unless a writer had announced itself or set
 * TW: then those counted before it hold the lock and those after wait, and
 * the counters do not tell how many are which, so rin keeps only the
 * forking thread's own holds (a read hold of a thread the fork left behind
 * is dropped with the waiters: README, Known limits). No path but that
 * hook reads the generation.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "rwlock.h"
#include "wait.h"

#define RINC 0x100u
#define PHID 0x1u
#define PRES 0x2u
#define RPARK 0x4u
#define HELD 0x8u
#define TW 0x10u
#define KEEPOUT (PRES | HELD | TW)	/* an arrival that sees one of these does not just enter */
#define PHASE (PRES | PHID | HELD | TW) /* what a waiting reader watches */
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

/* Sleeps on *w seen as v, after setting bit in it (unless set), until
 * woken or the deadline (0: none) passes. */
static void park(_Atomic uint32_t *w, uint32_t v, uint32_t bit, uint64_t deadline)
{
	if (!(v & bit) && !atomic_compare_exchange_strong_explicit(w, &v, v | bit, memory_order_relaxed,
								   memory_order_relaxed))
		return;
	LS_INJECT();
	ls_futex_wait(w, v | bit, deadline);
}

/* Waits, following the policy, until (*w & mask) != val (ne) or == val;
 * 0, or ETIMEDOUT once the deadline (0: none) has passed. */
static int wait_until(_Atomic uint32_t *w, uint32_t mask, uint32_t val, bool ne, uint32_t bit,
		      uint64_t deadline)
{
	struct ls_spin s = LS_SPIN_INIT;
	for (unsigned i = 1;; i++) {
		uint32_t v = atomic_load_explicit(w, memory_order_acquire);
		if (((v & mask) != val) == ne)
			return 0;
		if (deadline && ((i & 15) == 0 || s.n >= ls_wait_cfg.spin) && ls_now_ns() >= deadline)
			return ETIMEDOUT;
		if (ls_spin_step(&s)) {
			park(w, v, bit, deadline);
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

/* A reader whose arrival found v, with a writer's bits in it. */
static __attribute__((noinline)) int read_slow(struct pft *l, unsigned how, uint32_t v)
{
	for (;;) {
		if (ls_rw_reader_pref(how) && !(v & HELD))
			return 0; /* only a writer that holds keeps us out */
		LS_INJECT();
		if (!(v & TW)) {
			/* (A') acquire: the writer's release of its bits, (B) */
			wait_until(&l->rin, PHASE, v & PHASE, true, RPARK, 0);
			return 0;
		}
		/* A timed writer waits for the readers before it: take our
		 * count back (it clears TW only with none such counted), wait
		 * for its phase to change, and arrive again. relaxed: no
		 * data; the count alone matters to it. */
		atomic_fetch_sub_explicit(&l->rin, RINC, memory_order_relaxed);
		wait_until(&l->rin, PHASE, v & PHASE, true, RPARK, 0);
		if (too_many(l, &v))
			return EAGAIN;
		/* (A) */
		v = atomic_fetch_add_explicit(&l->rin, RINC, memory_order_acquire);
		if (!(v & KEEPOUT))
			return 0;
	}
}

static int pft_rdlock(void *st, unsigned how, void **token)
{
	struct pft *l = st;
	uint32_t v;
	(void)token;
	if (LS_UNLIKELY(too_many(l, &v)))
		return EAGAIN;
	/* (A) acquire: pairs with (B) in write_release */
	v = atomic_fetch_add_explicit(&l->rin, RINC, memory_order_acquire);
	if (LS_UNLIKELY(v & KEEPOUT))
		return read_slow(l, how, v);
	return 0;
}

static int pft_tryrdlock(void *st, unsigned how, void **token)
{
	struct pft *l = st;
	(void)token;
	/* what keeps a reader out: a writer present or draining, or (reader
	 * preference) one that holds the lock */
	uint32_t out = ls_rw_reader_pref(how) ? HELD : KEEPOUT;
	for (;;) {
		uint32_t v;
		bool full = too_many(l, &v);
		if (v & out)
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

/* The announcement added to rin's low bits v (no PRES there): PRES, and
 * PHID flipped. */
static inline uint32_t announce(uint32_t v)
{
	return PRES + PHID - 2 * (v & PHID);
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

/* A writer that gives up: its ticket is used, and the next one's turn. */
static void pass_ticket(struct pft *l)
{
	if (next_writer(l))
		wake_all(&l->wout);
}

/* Waits until the readers counted before the writer (r) have left, or the
 * deadline (0: none) passes. */
static inline int drain(struct pft *l, uint32_t r, uint64_t deadline)
{
	/* (D) acquire: pairs with (C) */
	if (LS_LIKELY((atomic_load_explicit(&l->rout, memory_order_acquire) & ~0xffu) == r))
		return 0;
	return wait_until(&l->rout, ~0xffu, r, false, WPARK, deadline);
}

/* Reader preference: waits until nobody is inside and announces itself
 * holding, or gives up at the deadline (0: none). */
static __attribute__((noinline)) int enter_rp(struct pft *l, uint64_t deadline)
{
	for (;;) {
		/* (D) acquire: pairs with (C). rout, then rin, then the CAS
		 * that checks rin has not moved (trywrlock's check): if the
		 * counts differ, a reader was inside when rin was read, and its
		 * leaving changes rout */
		uint32_t out = atomic_load_explicit(&l->rout, memory_order_acquire) & ~0xffu;
		uint32_t v = atomic_load_explicit(&l->rin, memory_order_relaxed);
		if (out == (v & ~0xffu)) {
			if (atomic_compare_exchange_strong_explicit(&l->rin, &v, v + announce(v) + HELD,
								    memory_order_acq_rel,
								    memory_order_relaxed))
				return 0;
			continue;
		}
		LS_INJECT();
		if (wait_until(&l->rout, ~0xffu, out, true, WPARK, deadline)) {
			pass_ticket(l); /* nothing announced */
			return ETIMEDOUT;
		}
	}
}

/* Phase fairness, with a deadline: TW, the readers before it, then TW
 * replaced by the announcement (holding) or cleared (gone). */
static __attribute__((noinline)) int enter_timed(struct pft *l, uint64_t deadline)
{
	uint32_t r = atomic_fetch_add_explicit(&l->rin, TW, memory_order_acq_rel) & ~0xffu;
	LS_INJECT();
	int timedout = drain(l, r, deadline);
	/* Only readers that back out are counted beyond r: wait until none
	 * is (each is a few instructions from its fetch_sub), then, in one
	 * CAS, the announcement or nothing, and RPARK's sleepers. */
	struct ls_spin s = LS_SPIN_INIT;
	uint32_t v = atomic_load_explicit(&l->rin, memory_order_relaxed), n;
	for (;;) {
		if ((v & ~0xffu) != r) {
			if (ls_spin_step(&s))
				s = (struct ls_spin)LS_SPIN_INIT; /* no sleep: nobody would wake us */
			v = atomic_load_explicit(&l->rin, memory_order_relaxed);
			continue;
		}
		n = v & ~(TW | RPARK);
		if (!timedout)
			n += announce(n);
		LS_INJECT();
		if (atomic_compare_exchange_weak_explicit(&l->rin, &v, n, memory_order_acq_rel,
							  memory_order_relaxed))
			break;
	}
	if (v & RPARK)
		wake_all(&l->rin);
	if (timedout)
		pass_ticket(l);
	return timedout;
}

/* The writer whose ticket is served: waits for the previous writer's bits
 * to leave rin, then enters by the preference asked for; at the deadline
 * (0: none) it gives up, leaving nothing. 0 or ETIMEDOUT. */
static int enter(struct pft *l, unsigned how, uint64_t deadline)
{
	/* the previous writer's bits must have left rin (see the header):
	 * its next step, so no deadline */
	uint32_t v = atomic_load_explicit(&l->rin, memory_order_acquire);
	if (LS_UNLIKELY(v & (PRES | TW))) {
		wait_until(&l->rin, PRES | TW, 0, false, RPARK, 0);
		v = atomic_load_explicit(&l->rin, memory_order_relaxed);
	}
	LS_INJECT();
	if (ls_rw_reader_pref(how)) {
		/* Nobody inside (rin read, then rout, then the CAS that checks
		 * rin has not moved: sound, as in trywrlock): announced and
		 * holding in one CAS. (D) acquire. */
		uint32_t out = atomic_load_explicit(&l->rout, memory_order_acquire) & ~0xffu;
		if (LS_LIKELY(out == (v & ~0xffu)) &&
		    atomic_compare_exchange_strong_explicit(&l->rin, &v, v + announce(v) + HELD,
							    memory_order_acq_rel, memory_order_relaxed))
			return 0;
		return enter_rp(l, deadline);
	}
	if (deadline)
		return enter_timed(l, deadline);
	/* PHID is ours to flip: only the served writer changes it */
	uint32_t r = atomic_fetch_add_explicit(&l->rin, announce(v), memory_order_acq_rel) & ~0xffu;
	LS_INJECT();
	drain(l, r, 0);
	return 0;
}

static void pft_wrlock(void *st, unsigned how)
{
	struct pft *l = st;
	uint32_t t = atomic_fetch_add_explicit(&l->win, 1, memory_order_relaxed);
	LS_INJECT();
	/* (E) acquire: pairs with (F) in next_writer */
	if (LS_UNLIKELY((atomic_load_explicit(&l->wout, memory_order_acquire) & TICKET) != (t & TICKET)))
		wait_until(&l->wout, TICKET, t & TICKET, false, LS_PARKED, 0);
	enter(l, how, 0);
}

static int pft_timedwrlock(void *st, unsigned how, uint64_t deadline)
{
	struct pft *l = st;
	for (;;) {
		uint32_t t = atomic_load_explicit(&l->win, memory_order_relaxed);
		/* (E) acquire: pairs with (F) */
		uint32_t o = atomic_load_explicit(&l->wout, memory_order_acquire) & TICKET;
		if (o == (t & TICKET)) {
			/* No writer holds or waits: ticket t is served at once
			 * (wout cannot move: nobody holds t). */
			if (atomic_compare_exchange_weak_explicit(&l->win, &t, t + 1, memory_order_acquire,
								  memory_order_relaxed))
				return enter(l, how, deadline);
			continue;
		}
		LS_INJECT();
		/* a writer holds or waits: wait for its release */
		if (wait_until(&l->wout, TICKET, o, true, LS_PARKED, deadline))
			return ETIMEDOUT;
	}
}

static int pft_trywrlock(void *st, unsigned how)
{
	struct pft *l = st;
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
	if ((r & KEEPOUT) || (out & ~0xffu) != (r & ~0xffu))
		return EBUSY; /* readers inside, or the last writer still leaving */
	if (!atomic_compare_exchange_strong_explicit(&l->win, &t, t + 1, memory_order_acquire,
						     memory_order_relaxed))
		return EBUSY;
	/* Ticket t is served now. Announce ourselves (holding, under reader
	 * preference) only if rin has not moved since: then nobody came in,
	 * and nobody is inside. */
	LS_INJECT();
	uint32_t n = r + announce(r) + (ls_rw_reader_pref(how) ? HELD : 0);
	if (atomic_compare_exchange_strong_explicit(&l->rin, &r, n, memory_order_acq_rel,
						    memory_order_relaxed))
		return 0;
	/* A reader came in: hand the ticket back as if used (nothing was
	 * announced: the phase bit has not moved). */
	pass_ticket(l);
	return EBUSY;
}

static void pft_wrunlock(void *st)
{
	struct pft *l = st;
	bool wpark = next_writer(l);
	LS_INJECT();
	/* (B) release: the readers of our phase and the next writer go;
	 * after this the lock may be destroyed: only wakes follow. PHID
	 * stays: the next announcement flips it. */
	uint32_t old = atomic_fetch_and_explicit(&l->rin, ~(PRES | HELD | RPARK), memory_order_release);
	LS_TEST_POINT(LS_POINT_RELEASED);
	if (wpark)
		wake_all(&l->wout);
	if (old & RPARK)
		wake_all(&l->rin);
}

/* ---- fork (see the header) ---- */

static void pft_fork_rdheld(void *st, void **token, unsigned nth, unsigned holds)
{
	struct pft *l = st;
	(void)token;
	if (nth)
		return; /* once per lock */
	/* relaxed, all: the child has one thread, ours */
	uint32_t in = atomic_load_explicit(&l->rin, memory_order_relaxed);
	uint32_t out = atomic_load_explicit(&l->rout, memory_order_relaxed) & ~WPARK;
	uint32_t n = in & ~(PRES | HELD | TW | RPARK);
	if (in & (PRES | TW))
		n = (out & ~0xffu) + holds * RINC + (n & 0xffu);
	atomic_store_explicit(&l->rin, n, memory_order_relaxed);
	atomic_store_explicit(&l->rout, out, memory_order_relaxed);
	atomic_store_explicit(&l->wout, atomic_load_explicit(&l->win, memory_order_relaxed) & TICKET,
			      memory_order_relaxed);
}

static const struct ls_rwalgo pft_rwalgo = {
    .name = "pf-t",
    .desc = "phase-fair ticket lock PF-T: read and write phases alternate (Brandenburg & Anderson, RTS 2010)",
    .policy = "phase-fair: read and write phases alternate, writers FIFO",
    .caps = 0,
    .rank = 20,
    .state_size = sizeof(struct pft),
    .rdlock = pft_rdlock,
    .tryrdlock = pft_tryrdlock,
    .rdunlock = pft_rdunlock,
    .wrlock = pft_wrlock,
    .trywrlock = pft_trywrlock,
    .timedwrlock = pft_timedwrlock,
    .wrunlock = pft_wrunlock,
    .fork_rdheld = pft_fork_rdheld,
};
LS_REGISTER_RWALGO(pft_rwalgo);
