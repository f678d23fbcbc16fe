/*
 * mutex.c - the mutex-serialised mode: every rwlock is taken as the mutex
 * algorithm LOCKSWAP_ALGO chose, readers and writers alike.
 *
 * This is what the peer interposer does (LiTL, Guiroux et al., "Multicore
 * Locks: the Case is Not Closed Yet", USENIX ATC 2016, section 3: a
 * pthread_rwlock_t is served by the chosen lock, so readers lose their
 * parallelism), kept for comparison: under it a read-mostly program shows
 * what reader parallelism is worth. The rwlock's state is the mutex
 * algorithm's own, 8 bytes in (inline if that fits in 24 bytes, else out
 * of line, as the shim does for mutexes): the 4 bytes just before it are
 * the wrapper word a composition such as mcs+gcr keeps (locks/wrap/wrap.h:
 * whoever hands states to a composed algorithm provides it, zero-filled
 * and copied with the state, as pthread_mutex_t does); rdlock and wrlock
 * are its lock, the try and
 * timed operations its trylock and timedlock (or the mutexes' timed
 * fallback), both unlocks its unlock. No token, no node of its own.
 *
 * Readers exclude each other (LS_RWCAP_EXCLUSIVE), so a read lock taken
 * again by its holder would wait for itself: the shim grants recursive
 * reads itself under both kinds (rwlock.h). Writer preference and fairness
 * are the mutex algorithm's (a FIFO mutex serves readers and writers in
 * arrival order), whatever the lock asks for: one reader at a time is the
 * design, so no reader preference (rwlock.h: PREFERENCE exempts it). The
 * capabilities that depend on the mutex algorithm (fifo, timeout, qnode,
 * hier) are taken from it at start.
 *
 * Timed writers (rwlock.h, TIMED WRITERS) and timed reads are the mutex
 * algorithm's timedlock. A mutex algorithm without one (a ticket, an MCS
 * queue: no waiter can leave it) is polled, with trylock, by the mutexes'
 * fallback, and a poller keeps nobody out: so the gate word counts the
 * timed writers polling, and while it is not 0 every other acquisition
 * waits for it to close (tryrdlock, trywrlock: EBUSY) before it takes the
 * mutex lock, as it would wait behind a writer queued in the mutex. A
 * timed writer that gets the lock, or gives up, closes its part of the
 * gate and wakes those that wait for it (LS_PARKED in the gate). The gated
 * operations are installed at start, for such a mutex algorithm only
 * (their fast paths pay a load and a branch).
 *
 *	state:	gate	32 bits:
 *			  31	 LS_PARKED: someone sleeps on the gate
 *			  30	 WRITTEN: a writer holds the mutex lock
 *			  22-29	 the fork generation (its low 8 bits) the
 *				 pollers counted entered under; 0 when none
 *			  0-21	 the timed writers polling (each a thread:
 *				 at most 2^22 - 1, Linux's PID_MAX_LIMIT)
 *			wrapper word (32 bits, the mutex algorithm's, above)
 *		then the mutex algorithm's state
 *
 * WRITTEN is how the mode tells a write hold from a read hold at fork
 * (below): every write acquisition sets it once it has the mutex lock, and
 * a write unlock clears it before the mutex's unlock (a plain store where
 * nothing else writes the gate, an atomic OR and AND where pollers count in
 * it). Readers leave it 0. Under a gated mutex algorithm a timed writer
 * sets it in the CAS that closes its part of the gate. Only a wrapper's
 * fork_rdheld (holds 0) reads it: over a mutex algorithm with timedlock
 * the bare mode's writes skip it, and the marking ones are installed when
 * a wrapper composes the mode (rwlock.h: wrapped; install_writes below).
 *
 * fork() (rwlock.h, FORK; fork.h). What a fork leaves in the mutex lock
 * (the waiters of threads gone) is the mutex algorithm's to pass over. Two
 * things are ours:
 *   - a writer that held the mutex lock at fork while the forking thread
 *     held a BRAVO fast read (mutex+bravo: it was revoking the bias for
 *     that read, under LOCKSWAP_RWPOLICY=algorithm all the while, under
 *     reader preference until its first scan met the slot) is a thread the
 *     fork left behind, and holds the mutex lock in the child: fork_rdheld,
 *     called with no hold of the forking thread counted (holds 0), finds
 *     WRITTEN and releases the lock for it, with the mutex algorithm's
 *     unlock (any thread may unlock a mutex, lock.h; in the child the fork
 *     generation makes it free the lock rather than hand it to a waiter
 *     that is gone). A read hold of another thread leaves WRITTEN 0 and
 *     stays held, as under glibc. What it cannot see: a writer frozen
 *     between its mutex lock and its store of WRITTEN, or between its
 *     clear and the release inside the mutex's unlock (a writer that gives
 *     up its revocation, or, under reader preference, lets the lock go
 *     while it waits for the slots): it is taken for a reader, and its
 *     hold stays (README, Known limits). With holds > 0 the forking thread
 *     holds the mutex lock itself: nothing to do.
 *   - pollers the fork left behind stay counted in the gate, which no
 *     handler can reach (it does not know the locks). So the gate carries
 *     the generation its pollers entered under: a poller that enters a gate
 *     stamped with another generation, and a slow path that finds the gate
 *     shut under another generation (gate_wait, and the try operations when
 *     they find it shut), resets its count first: in the child every
 *     poller counted before the fork is gone. The fast paths' load and
 *     branch are unchanged. 8 bits of the generation: a gate left shut by
 *     a fork and not met again for a multiple of 256 generations of nested
 *     forks stays shut (README, Known limits).
 *
 * LOCKSWAP_ALGO=pthread (glibc's mutex) cannot serve here: the rwlock
 * family sees only lockswap's algorithms (a configuration error at start).
 *
 * After the release (lock.h, rwlock.h): both unlocks are the mutex
 * algorithm's unlock and return right after it, so what follows its
 * release is what the mutex algorithm's header says (at most a futex wake
 * on the lock's address).
 */
#include <stdio.h>

#include "fork.h"
#include "rwlock.h"
#include "wait.h"

static const struct ls_algo *m; /* set once by start, before any lock is used */

/* The mutex algorithm's state in ours, after the gate and the wrapper
 * word (8 bytes). */
#define M_OFF 8
#define MS(st) ((void *)((char *)(st) + M_OFF))
#define GATE(st) ((_Atomic uint32_t *)(st))

/* The gate word (see the header); LS_PARKED is bit 31. */
#define WRITTEN (1u << 30)
#define GEN_SHIFT 22
#define GEN_BITS (0xffu << GEN_SHIFT)
#define POLLERS ((1u << GEN_SHIFT) - 1)

static void m_init(void *st)
{
	if (m->init)
		m->init(MS(st));
}

static void m_destroy(void *st)
{
	if (m->destroy)
		m->destroy(MS(st));
}

static int m_rdlock(void *st, unsigned how, void **token)
{
	(void)how, (void)token;
	m->lock(MS(st));
	return 0;
}

static int m_tryrdlock(void *st, unsigned how, void **token)
{
	(void)how, (void)token;
	return m->trylock(MS(st));
}

static int m_timedlock(void *st, uint64_t deadline)
{
	return m->timedlock ? m->timedlock(MS(st), deadline) : ls_timedlock_fallback(m, MS(st), deadline);
}

static int m_timedrdlock(void *st, unsigned how, uint64_t deadline, void **token)
{
	(void)how, (void)token;
	return m_timedlock(st, deadline);
}

static void m_rdunlock(void *st, void *token)
{
	(void)token;
	m->unlock(MS(st));
}

/* The bare mode's writes (no wrapper: nothing reads WRITTEN). */
static void p_wrlock(void *st, unsigned how)
{
	(void)how;
	m->lock(MS(st));
}

static int p_trywrlock(void *st, unsigned how)
{
	(void)how;
	return m->trylock(MS(st));
}

static int p_timedwrlock(void *st, unsigned how, uint64_t deadline)
{
	(void)how;
	return m_timedlock(st, deadline);
}

static void p_wrunlock(void *st)
{
	m->unlock(MS(st));
}

/* WRITTEN on or off, where nothing else writes the gate (the mutex
 * algorithm has timedlock: no gate). relaxed: the mutex lock orders it
 * between writers (set after our acquisition, cleared before our
 * release); the child of fork reads it alone. */
static inline void written(void *st, bool on)
{
	atomic_store_explicit(GATE(st), on ? WRITTEN : 0, memory_order_relaxed);
}

static void m_wrlock(void *st, unsigned how)
{
	(void)how;
	m->lock(MS(st));
	written(st, true);
}

static int m_trywrlock(void *st, unsigned how)
{
	(void)how;
	int r = m->trylock(MS(st));
	if (!r)
		written(st, true);
	return r;
}

static int m_timedwrlock(void *st, unsigned how, uint64_t deadline)
{
	(void)how;
	int r = m_timedlock(st, deadline);
	if (!r)
		written(st, true);
	return r;
}

static void m_wrunlock(void *st)
{
	written(st, false);
	m->unlock(MS(st));
}

/* ---- the gate of timed writers polling a mutex without timedlock ---- */

/* The stamp of this generation in the gate. */
static inline uint32_t gate_gen(void)
{
	return (ls_fork_gen() << GEN_SHIFT) & GEN_BITS;
}

/* True if the gate's value v counts pollers that entered under another
 * generation: threads the fork left behind (see the header). */
static inline bool gate_stale(uint32_t v)
{
	return ls_fork_child() && (v & POLLERS) && (v & GEN_BITS) != gate_gen();
}

/* Opens a gate whose pollers are gone (v: its value, stale): WRITTEN
 * stays, the count, the stamp and LS_PARKED go (who slept on it is gone
 * too: a thread of this generation parks only on a value it found
 * current). relaxed: the count orders nothing; fails harmlessly if the
 * word changed meanwhile (the caller reads it again). */
static void gate_reset(_Atomic uint32_t *g, uint32_t v)
{
	atomic_compare_exchange_strong_explicit(g, &v, v & WRITTEN, memory_order_relaxed,
						memory_order_relaxed);
}

/* Waits until no timed writer polls, or the deadline (0: none) passes: 0
 * or ETIMEDOUT. */
static __attribute__((noinline)) int gate_wait(void *st, uint64_t deadline)
{
	_Atomic uint32_t *g = GATE(st);
	struct ls_spin s = LS_SPIN_INIT;
	/* relaxed: nothing to order (the mutex lock orders the data) */
	for (uint32_t v = atomic_load_explicit(g, memory_order_relaxed); v & POLLERS;
	     v = atomic_load_explicit(g, memory_order_relaxed)) {
		if (gate_stale(v)) {
			gate_reset(g, v);
			continue;
		}
		if (deadline && ls_now_ns() >= deadline)
			return ETIMEDOUT;
		if (!ls_spin_step(&s))
			continue;
		/* LS_PARKED, then sleep on the value with it: the writer that
		 * closes the gate last clears the bit in its own RMW and wakes
		 * us; any other change only makes us look again */
		if ((v & LS_PARKED) || atomic_compare_exchange_strong_explicit(
					   g, &v, v | LS_PARKED, memory_order_relaxed, memory_order_relaxed))
			ls_futex_wait(g, v | LS_PARKED, deadline);
		s = (struct ls_spin)LS_SPIN_INIT;
	}
	return 0;
}

static inline bool gate_shut(void *st)
{
	/* relaxed: a hint; a timed writer that opens it as we pass is one
	 * we would not have waited for anyway */
	return atomic_load_explicit(GATE(st), memory_order_relaxed) & POLLERS;
}

/* A try operation found the gate shut: is it, once a gate of pollers gone
 * is opened? */
static __attribute__((noinline)) bool gate_busy(void *st)
{
	_Atomic uint32_t *g = GATE(st);
	uint32_t v;
	/* relaxed: as gate_shut */
	while (gate_stale(v = atomic_load_explicit(g, memory_order_relaxed)))
		gate_reset(g, v);
	return v & POLLERS;
}

/* WRITTEN on or off where pollers count in the gate: an atomic OR, AND.
 * relaxed: as written(). */
static inline void g_written(void *st)
{
	atomic_fetch_or_explicit(GATE(st), WRITTEN, memory_order_relaxed);
}

static int g_rdlock(void *st, unsigned how, void **token)
{
	if (LS_UNLIKELY(gate_shut(st)))
		gate_wait(st, 0);
	return m_rdlock(st, how, token);
}

static int g_tryrdlock(void *st, unsigned how, void **token)
{
	return gate_shut(st) && gate_busy(st) ? EBUSY : m_tryrdlock(st, how, token);
}

static int g_timedrdlock(void *st, unsigned how, uint64_t deadline, void **token)
{
	if (gate_shut(st) && gate_wait(st, deadline))
		return ETIMEDOUT;
	return m_timedrdlock(st, how, deadline, token);
}

static void g_wrlock(void *st, unsigned how)
{
	(void)how;
	if (LS_UNLIKELY(gate_shut(st)))
		gate_wait(st, 0);
	m->lock(MS(st));
	g_written(st);
}

static int g_trywrlock(void *st, unsigned how)
{
	(void)how;
	if (gate_shut(st) && gate_busy(st))
		return EBUSY;
	int r = m->trylock(MS(st));
	if (!r)
		g_written(st);
	return r;
}

static int g_timedwrlock(void *st, unsigned how, uint64_t deadline)
{
	(void)how;
	_Atomic uint32_t *g = GATE(st);
	uint32_t gen = gate_gen(), v = atomic_load_explicit(g, memory_order_relaxed), n;
	/* count ourselves, under this generation (a count of another one is
	 * of pollers gone: reset first, as gate_reset). relaxed: the count
	 * orders nothing; the mutex lock orders the data */
	do {
		n = v;
		if ((n & POLLERS) && (n & GEN_BITS) != gen)
			n &= WRITTEN;
		n = ((n & ~GEN_BITS) | gen) + 1;
	} while (
	    !atomic_compare_exchange_weak_explicit(g, &v, n, memory_order_relaxed, memory_order_relaxed));
	LS_INJECT();
	int r = ls_timedlock_fallback(m, MS(st), deadline);
	/* close our part of the gate (the last one: the stamp and LS_PARKED
	 * too, and wakes those waiting), with WRITTEN if we have the lock */
	v = atomic_load_explicit(g, memory_order_relaxed);
	do {
		n = v - 1;
		if (!(n & POLLERS))
			n &= WRITTEN;
		if (!r)
			n |= WRITTEN;
	} while (
	    !atomic_compare_exchange_weak_explicit(g, &v, n, memory_order_relaxed, memory_order_relaxed));
	if ((v & LS_PARKED) && !(n & POLLERS))
		ls_futex_wake(g, 0x7fffffff);
	return r;
}

static void g_wrunlock(void *st)
{
	/* relaxed: as written() */
	atomic_fetch_and_explicit(GATE(st), ~WRITTEN, memory_order_relaxed);
	m->unlock(MS(st));
}

/* ---- fork (see the header) ---- */

static void m_fork_rdheld(void *st, void **token, unsigned nth, unsigned holds)
{
	(void)token, (void)nth;
	_Atomic uint32_t *g = GATE(st);
	/* relaxed: the child has one thread */
	if (holds || !(atomic_load_explicit(g, memory_order_relaxed) & WRITTEN))
		return;
	atomic_fetch_and_explicit(g, ~WRITTEN, memory_order_relaxed);
	m->unlock(MS(st)); /* for the writer the fork left behind */
}

static int m_start(const struct ls_algo *mutex, char *err, size_t errlen);
static void m_wrapped(void);

static struct ls_rwalgo mutex_rwalgo = {
    .name = "mutex",
    .desc = "every rwlock taken as LOCKSWAP_ALGO's mutex lock, readers too (LiTL's way, ATC'16)",
    .policy = "the mutex lock's, one reader at a time (no reader preference)",
    .caps = LS_RWCAP_EXCLUSIVE, /* and, at start, the mutex algorithm's */
    .rank = 1,
    .state_size = 0, /* at start: the mutex algorithm's */
    .init = m_init,
    .destroy = m_destroy,
    .rdlock = m_rdlock,
    .tryrdlock = m_tryrdlock,
    .timedrdlock = m_timedrdlock,
    .rdunlock = m_rdunlock,
    .wrlock = m_wrlock,
    .trywrlock = m_trywrlock,
    .timedwrlock = m_timedwrlock,
    .wrunlock = m_wrunlock,
    .start = m_start,
    .fork_rdheld = m_fork_rdheld,
    .wrapped = m_wrapped,
};

/* Whether a wrapper composes the mode (m_wrapped): the writes then mark. */
static bool marking;

/* The write operations for a mutex algorithm with timedlock: marking ones
 * once a wrapper may ask fork_rdheld about a writer, else the bare ones
 * (the mark costs the bare mode 6 instructions a write pair). Both starts
 * run at configuration, before any lock is used; once marking, the mode
 * stays so (a map may give some rwlocks mutex and others mutex+bravo). */
static void install_writes(void)
{
	mutex_rwalgo.wrlock = marking ? m_wrlock : p_wrlock;
	mutex_rwalgo.trywrlock = marking ? m_trywrlock : p_trywrlock;
	mutex_rwalgo.timedwrlock = marking ? m_timedwrlock : p_timedwrlock;
	mutex_rwalgo.wrunlock = marking ? m_wrunlock : p_wrunlock;
}

static void m_wrapped(void)
{
	marking = true;
	if (m && m->timedlock)
		install_writes();
}

static int m_start(const struct ls_algo *mutex, char *err, size_t errlen)
{
	if (!mutex) {
		snprintf(
		    err, errlen,
		    "the mutex-serialised mode takes every rwlock as LOCKSWAP_ALGO's lock, and 'pthread' "
		    "is glibc's own mutex: choose a lock algorithm (lockswap --names --cap lock)");
		return -1;
	}
	m = mutex;
	mutex_rwalgo.state_size = M_OFF + mutex->state_size;
	if (mutex->timedlock)
		install_writes();
	else {
		/* the gate (see the header) */
		mutex_rwalgo.rdlock = g_rdlock;
		mutex_rwalgo.tryrdlock = g_tryrdlock;
		mutex_rwalgo.timedrdlock = g_timedrdlock;
		mutex_rwalgo.wrlock = g_wrlock;
		mutex_rwalgo.trywrlock = g_trywrlock;
		mutex_rwalgo.timedwrlock = g_timedwrlock;
		mutex_rwalgo.wrunlock = g_wrunlock;
	}
	unsigned c = mutex->caps;
	mutex_rwalgo.caps = LS_RWCAP_EXCLUSIVE | (c & LS_CAP_FIFO ? LS_RWCAP_FIFO : 0) |
			    (c & LS_CAP_TIMEOUT ? LS_RWCAP_TIMEOUT : 0) |
			    (c & LS_CAP_QNODE ? LS_RWCAP_QNODE : 0) | (c & LS_CAP_HIER ? LS_RWCAP_HIER : 0);
	return 0;
}
LS_REGISTER_RWALGO(mutex_rwalgo);
