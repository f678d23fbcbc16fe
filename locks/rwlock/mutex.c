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
 * arrival order). The capabilities that depend on the mutex algorithm
 * (fifo, timeout, qnode, hier) are taken from it at start.
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

/* The mutex algorithm's state in ours, after the wrapper word's 8 bytes. */
#define M_OFF 8
#define MS(st) ((void *)((char *)(st) + M_OFF))

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

static int m_start(const struct ls_algo *mutex, char *err, size_t errlen);

static struct ls_rwalgo mutex_rwalgo = {
    .name = "mutex",
    .desc = "every rwlock taken as LOCKSWAP_ALGO's mutex lock, readers too (LiTL's way, ATC'16)",
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
	unsigned c = mutex->caps;
	mutex_rwalgo.caps = LS_RWCAP_EXCLUSIVE | (c & LS_CAP_FIFO ? LS_RWCAP_FIFO : 0) |
			    (c & LS_CAP_TIMEOUT ? LS_RWCAP_TIMEOUT : 0) |
			    (c & LS_CAP_QNODE ? LS_RWCAP_QNODE : 0) | (c & LS_CAP_HIER ? LS_RWCAP_HIER : 0);
	return 0;
}
LS_REGISTER_RWALGO(mutex_rwalgo);
