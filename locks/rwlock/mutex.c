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
 * fallback, and a poller keeps nobody out: so the 4 bytes before the
 * wrapper word hold a gate, the number of timed writers polling, and
 * while it is not 0 every other acquisition waits for it to close
 * (tryrdlock, trywrlock: EBUSY) before it takes the mutex lock, as it
 * would wait behind a writer queued in the mutex. A timed writer that gets
 * the lock, or gives up, closes its part of the gate and wakes those that
 * wait for it (LS_PARKED in the gate). The gated operations are installed
 * at start, for such a mutex algorithm only (their fast paths pay a load
 * and a branch).
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

#include "rwlock.h"
#include "wait.h"

static const struct ls_algo *m; /* set once by start, before any lock is used */

/* The mutex algorithm's state in ours, after the gate and the wrapper
 * word (8 bytes). */
#define M_OFF 8
#define MS(st) ((void *)((char *)(st) + M_OFF))
#define GATE(st) ((_Atomic uint32_t *)(st))

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

static void m_wrlock(void *st, unsigned how)
{
	(void)how;
	m->lock(MS(st));
}

static int m_trywrlock(void *st, unsigned how)
{
	(void)how;
	return m->trylock(MS(st));
}

static int m_timedwrlock(void *st, unsigned how, uint64_t deadline)
{
	(void)how;
	return m_timedlock(st, deadline);
}

static void m_wrunlock(void *st)
{
	m->unlock(MS(st));
}

/* ---- the gate of timed writers polling a mutex without timedlock ---- */

/* Waits until no timed writer polls, or the deadline (0: none) passes: 0
 * or ETIMEDOUT. */
static __attribute__((noinline)) int gate_wait(void *st, uint64_t deadline)
{
	_Atomic uint32_t *g = GATE(st);
	struct ls_spin s = LS_SPIN_INIT;
	/* acquire: nothing to order (the mutex lock orders the data); relaxed
	 * would do, but the parked-bit protocol's CAS below needs a value */
	for (uint32_t v = atomic_load_explicit(g, memory_order_relaxed); v & ~LS_PARKED;
	     v = atomic_load_explicit(g, memory_order_relaxed)) {
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
	return atomic_load_explicit(GATE(st), memory_order_relaxed) & ~LS_PARKED;
}

static int g_rdlock(void *st, unsigned how, void **token)
{
	if (LS_UNLIKELY(gate_shut(st)))
		gate_wait(st, 0);
	return m_rdlock(st, how, token);
}

static int g_tryrdlock(void *st, unsigned how, void **token)
{
	return gate_shut(st) ? EBUSY : m_tryrdlock(st, how, token);
}

static int g_timedrdlock(void *st, unsigned how, uint64_t deadline, void **token)
{
	if (gate_shut(st) && gate_wait(st, deadline))
		return ETIMEDOUT;
	return m_timedrdlock(st, how, deadline, token);
}

static void g_wrlock(void *st, unsigned how)
{
	if (LS_UNLIKELY(gate_shut(st)))
		gate_wait(st, 0);
	m_wrlock(st, how);
}

static int g_trywrlock(void *st, unsigned how)
{
	return gate_shut(st) ? EBUSY : m_trywrlock(st, how);
}

static int g_timedwrlock(void *st, unsigned how, uint64_t deadline)
{
	(void)how;
	_Atomic uint32_t *g = GATE(st);
	/* relaxed: the count orders nothing; the mutex lock orders the data */
	atomic_fetch_add_explicit(g, 1, memory_order_relaxed);
	LS_INJECT();
	int r = ls_timedlock_fallback(m, MS(st), deadline);
	/* close our part of the gate; the last one wakes those waiting */
	uint32_t v = atomic_load_explicit(g, memory_order_relaxed), n;
	do {
		n = v - 1;
		if ((n & ~LS_PARKED) == 0)
			n = 0;
	} while (
	    !atomic_compare_exchange_weak_explicit(g, &v, n, memory_order_relaxed, memory_order_relaxed));
	if ((v & LS_PARKED) && !n)
		ls_futex_wake(g, 0x7fffffff);
	return r;
}

static int m_start(const struct ls_algo *mutex, char *err, size_t errlen);

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
};

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
	if (!mutex->timedlock) {
		/* the gate (see the header) */
		mutex_rwalgo.rdlock = g_rdlock;
		mutex_rwalgo.tryrdlock = g_tryrdlock;
		mutex_rwalgo.timedrdlock = g_timedrdlock;
		mutex_rwalgo.wrlock = g_wrlock;
		mutex_rwalgo.trywrlock = g_trywrlock;
		mutex_rwalgo.timedwrlock = g_timedwrlock;
	}
	unsigned c = mutex->caps;
	mutex_rwalgo.caps = LS_RWCAP_EXCLUSIVE | (c & LS_CAP_FIFO ? LS_RWCAP_FIFO : 0) |
			    (c & LS_CAP_TIMEOUT ? LS_RWCAP_TIMEOUT : 0) |
			    (c & LS_CAP_QNODE ? LS_RWCAP_QNODE : 0) | (c & LS_CAP_HIER ? LS_RWCAP_HIER : 0);
	return 0;
}
LS_REGISTER_RWALGO(mutex_rwalgo);
