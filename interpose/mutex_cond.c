/*
 * mutex_cond.c - pthread_cond_* for every algorithm.
 *
 * A condition variable is a FIFO list of waiters, each a node on its own
 * stack with a private futex word, guarded by a small lock inside the
 * condvar (never taken on a mutex path: a program without condvars pays
 * nothing). Layout of pthread_cond_t (48 bytes):
 *
 *	 0  lock	internal lock: 0 free, 1 held, 2 held with sleepers
 *	 8  head, 16 tail	waiter list
 *	24  refs	waiters that may still touch the condvar; bit 31:
 *			destroy is waiting for them to leave
 *	36  flags	bit 0 process-shared (glibc's own bit: such condvars are
 *			glibc's), bit 1 CLOCK_MONOTONIC (condattr clock)
 *
 * Waiter states: 0 waiting -> 1 signalled (by signal/broadcast, which also
 * unlinks it, under the lock). A waiter returns only once it is signalled,
 * its deadline has passed, or it is cancelled: an interrupted futex wait
 * goes back to sleep, so pthread_cond_wait never wakes spuriously (programs
 * such as SPLASH-2's barrier wait once, without a loop). A waiter that times
 * out takes the lock and unlinks itself - unless a signal got there first,
 * in which case it returns 0, having consumed that signal. A cancelled
 * waiter that had been signalled passes the signal on to the next waiter.
 *
 * Cancellation: the futex wait runs with asynchronous cancellation enabled
 * (as glibc does around its own blocking calls, with glibc's own
 * pthread_setcanceltype, not lockswap's: see shim_cancel.c, which also says how
 * an asynchronously cancelable caller is served); the cleanup handler
 * unlinks the waiter and re-acquires the mutex before the program's own
 * cleanup handlers run. The shim is compiled WITHOUT -fexceptions, so this
 * is glibc's setjmp-based cleanup, which the forced unwind of pthread_cancel
 * runs in C and C++ threads alike. (With -fexceptions the handler became a
 * landing pad, and an asynchronous cancel inside the wait ran it twice.)
 *
 * Destroy waits for refs to drain: every waiter holds one from the moment
 * it is queued until it returns, so destroy returns 0 once none is left.
 * That makes the usual "broadcast, then destroy and free" safe while the
 * woken waiters are still leaving, and it is glibc 2.36's behaviour for a
 * waiter still blocked (POSIX leaves that case undefined; older drafts
 * allowed EBUSY): glibc's destroy raises a flag and sleeps until the last
 * waiter has left, woken by a signal, a broadcast, its deadline or a
 * cancel from another thread. It never returns EBUSY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mutex.h"
#include "shim.h"
#include "shim_cancel.h"
#include "wait.h"

#define COND_PSHARED 1u
#define COND_MONOTONIC 2u
#define REFS_DESTROYING 0x80000000u

struct waiter {
	_Atomic uint32_t state;
	struct waiter *next, *prev;
};

struct ls_cond {
	_Atomic uint32_t lock;
	uint32_t unused0;
	struct waiter *head, *tail;
	_Atomic uint32_t refs;
	uint32_t unused1, unused2;
	uint32_t flags;
	uint64_t unused3;
};
_Static_assert(sizeof(struct ls_cond) == sizeof(pthread_cond_t), "layout");
_Static_assert(offsetof(struct ls_cond, flags) == offsetof(pthread_cond_t, __data.__wrefs), "flags");

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)w, op | FUTEX_PRIVATE_FLAG, val, ts, NULL,
		       FUTEX_BITSET_MATCH_ANY);
}

/* Internal lock (Drepper's three-state futex lock). Held for a few dozen
 * instructions at a time, never across a blocking wait. */
static void ilock(struct ls_cond *c)
{
	uint32_t z = 0;
	if (atomic_compare_exchange_strong_explicit(&c->lock, &z, 1, memory_order_acquire,
						    memory_order_relaxed))
		return;
	for (int i = 0; i < 100; i++) {
		ls_cpu_relax();
		z = 0;
		if (atomic_compare_exchange_weak_explicit(&c->lock, &z, 1, memory_order_acquire,
							  memory_order_relaxed))
			return;
	}
	while (atomic_exchange_explicit(&c->lock, 2, memory_order_acquire) != 0)
		futex(&c->lock, FUTEX_WAIT, 2, NULL);
}

static void iunlock(struct ls_cond *c)
{
	if (atomic_exchange_explicit(&c->lock, 0, memory_order_release) == 2)
		futex(&c->lock, FUTEX_WAKE, 1, NULL);
}

static void unlink_waiter(struct ls_cond *c, struct waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		c->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		c->tail = w->prev;
}

/* Under the lock: take the oldest waiter off the list and mark it
 * signalled. Returns its futex word for the wake, to be issued after the
 * lock is dropped; the waiter may return (and its stack be reused) as soon
 * as state is 1, so nothing else of it may be touched. */
static _Atomic uint32_t *signal_one(struct ls_cond *c)
{
	struct waiter *w = c->head;
	if (!w)
		return NULL;
	unlink_waiter(c, w);
	/* release: pairs with the waiter's acquire load of state */
	atomic_store_explicit(&w->state, 1, memory_order_release);
	return &w->state;
}

static void wake(_Atomic uint32_t *word)
{
	/* The word may already belong to another stack frame: a wake there is
	 * a spurious wake-up, which every futex waiter here re-checks. */
	if (word)
		futex(word, FUTEX_WAKE, 1, NULL);
}

static void drop_ref(struct ls_cond *c)
{
	uint32_t old = atomic_fetch_sub_explicit(&c->refs, 1, memory_order_release);
	if ((old & REFS_DESTROYING) && (old & ~REFS_DESTROYING) == 1)
		futex(&c->refs, FUTEX_WAKE, INT_MAX, NULL);
}

static bool is_glibc(const struct ls_cond *c)
{
	return ls_g.passthrough || (c->flags & COND_PSHARED);
}

struct wait_ctx {
	struct ls_cond *c;
	struct waiter *w;
	pthread_mutex_t *m;
	uint32_t saved;
};

/* Cancellation while blocked: unlink (or pass on a signal already
 * received), then take the mutex back before the program's handlers run. */
static void cancel_cleanup(void *arg)
{
	struct wait_ctx *x = arg;
	_Atomic uint32_t *pass = NULL;
	ilock(x->c);
	if (atomic_load_explicit(&x->w->state, memory_order_acquire) == 0)
		unlink_waiter(x->c, x->w);
	else
		pass = signal_one(x->c);
	iunlock(x->c);
	wake(pass);
	drop_ref(x->c);
	ls_mutex_relock_after_wait(x->m, x->saved);
}

static int wait_block(pthread_cond_t *cv, pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
	struct ls_cond *c = (struct ls_cond *)cv;
	if (abs && (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L))
		return EINVAL;

	struct waiter w = {0};
	ilock(c);
	w.prev = c->tail;
	if (c->tail)
		c->tail->next = &w;
	else
		c->head = &w;
	c->tail = &w;
	/* relaxed: under the condvar's lock, whose release orders it */
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
	iunlock(c);

	struct wait_ctx x = {c, &w, m, 0};
	int r = ls_mutex_unlock_for_wait(m, &x.saved);
	if (r) {
		/* not the owner (ERRORCHECK/RECURSIVE): glibc's EPERM */
		ilock(c);
		_Atomic uint32_t *pass = NULL;
		if (atomic_load_explicit(&w.state, memory_order_acquire) == 0)
			unlink_waiter(c, &w);
		else
			pass = signal_one(c);
		iunlock(c);
		wake(pass);
		drop_ref(c);
		return r;
	}

	int op = FUTEX_WAIT_BITSET | (clock == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
	bool timed_out = false;
	pthread_cleanup_push(cancel_cleanup, &x);
	/* acquire: pairs with the release store in signal_one */
	while (atomic_load_explicit(&w.state, memory_order_acquire) == 0) {
		if (abs && abs->tv_sec < 0) {
			timed_out = true;
			break;
		}
		/* glibc's own, not the interposed one (shim_cancel.c) */
		int oldtype;
		ls_real_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
		long rc = futex(&w.state, op, 0, abs);
		int err = errno;
		ls_real_setcanceltype(oldtype, &oldtype);
		if (rc != 0 && err == ETIMEDOUT) {
			timed_out = true;
			break;
		}
		/* EINTR, EAGAIN, a spurious wake: look again, sleep again */
	}
	pthread_cleanup_pop(0);

	r = 0;
	if (timed_out) {
		ilock(c);
		if (atomic_load_explicit(&w.state, memory_order_acquire) == 0) {
			unlink_waiter(c, &w);
			r = ETIMEDOUT;
		}
		iunlock(c);
	}
	drop_ref(c);
	int lr = ls_mutex_relock_after_wait(m, x.saved);
	return lr ? lr : r;
}

/* An asynchronously cancelable caller (shim_cancel.c) waits with its type
 * deferred, but for the futex wait itself, as any other; and its mutex
 * calls in here are not cancellation points (ls_async_cancel clear), so
 * that a cancel acts only in the wait, where cancel_cleanup takes the mutex
 * back before the program's handlers run. */
static int wait_cancel_safe(pthread_cond_t *cv, pthread_mutex_t *m, clockid_t clock,
			    const struct timespec *abs)
{
	if (LS_LIKELY(!ls_async_cancel))
		return wait_block(cv, m, clock, abs);
	int old = ls_cancel_defer();
	ls_async_cancel = false;
	int r = wait_block(cv, m, clock, abs);
	ls_async_cancel = true;
	ls_cancel_restore(old);
	return r;
}

/* A wait an observer sees (observe.h), out of line. */
static __attribute__((noinline)) int wait_observed(pthread_cond_t *cv, pthread_mutex_t *m, clockid_t clock,
						   const struct timespec *abs)
{
	uint64_t token = ls_events.cond_wait_begin(cv);
	int r = wait_cancel_safe(cv, m, clock, abs);
	ls_events.cond_wait_end(cv, token, r);
	return r;
}

static int wait_common(pthread_cond_t *cv, pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
	if (LS_LIKELY(!ls_events.cond_wait_begin))
		return wait_cancel_safe(cv, m, clock, abs);
	return wait_observed(cv, m, clock, abs);
}

/* A process-shared condvar is glibc's, and glibc's wait would unlock the
 * mutex with its internal functions: only glibc's own mutexes can go with
 * it. lockswap cannot support the mix, and says so with EINVAL. */
static int glibc_cond_mutex_ok(pthread_mutex_t *m)
{
	return ls_mutex_is_glibc(m) ? 0 : EINVAL;
}

LS_EXPORT __attribute__((symver("pthread_cond_wait@@GLIBC_2.3.2"))) int
ls_pthread_cond_wait(pthread_cond_t *cv, pthread_mutex_t *m)
{
	struct ls_cond *c = (struct ls_cond *)cv;
	ls_ensure_init();
	if (is_glibc(c)) {
		int r = glibc_cond_mutex_ok(m);
		return r ? r : ls_real.cond_wait(cv, m);
	}
	return wait_common(cv, m, CLOCK_REALTIME, NULL);
}

LS_EXPORT __attribute__((symver("pthread_cond_timedwait@@GLIBC_2.3.2"))) int
ls_pthread_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *m, const struct timespec *abs)
{
	struct ls_cond *c = (struct ls_cond *)cv;
	ls_ensure_init();
	if (is_glibc(c)) {
		int r = glibc_cond_mutex_ok(m);
		return r ? r : ls_real.cond_timedwait(cv, m, abs);
	}
	return wait_common(cv, m, (c->flags & COND_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME, abs);
}

LS_EXPORT __attribute__((symver("pthread_cond_clockwait@@GLIBC_2.34"),
			 symver("pthread_cond_clockwait@GLIBC_2.30"))) int
ls_pthread_cond_clockwait(pthread_cond_t *cv, pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
	struct ls_cond *c = (struct ls_cond *)cv;
	ls_ensure_init();
	if (is_glibc(c)) {
		int r = glibc_cond_mutex_ok(m);
		return r ? r : ls_real.cond_clockwait(cv, m, clock, abs);
	}
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	return wait_common(cv, m, clock, abs);
}

/* Signal and broadcast under the internal lock, which an asynchronous
 * cancel must not leave held: see LS_CANCEL_DEFERRED. */
static int signal_locked(struct ls_cond *c)
{
	ilock(c);
	_Atomic uint32_t *word = signal_one(c);
	iunlock(c);
	wake(word);
	return 0;
}

static int broadcast_locked(struct ls_cond *c)
{
	ilock(c);
	/* Wake under the lock, one waiter at a time: once a waiter's state is
	 * 1 it may return, so each wake uses an address taken before. */
	_Atomic uint32_t *word;
	while ((word = signal_one(c)))
		wake(word);
	iunlock(c);
	return 0;
}

LS_EXPORT __attribute__((symver("pthread_cond_signal@@GLIBC_2.3.2"))) int
ls_pthread_cond_signal(pthread_cond_t *cv)
{
	struct ls_cond *c = (struct ls_cond *)cv;
	ls_ensure_init();
	if (is_glibc(c))
		return ls_real.cond_signal(cv);
	if (LS_UNLIKELY(ls_events.cond_signal))
		ls_events.cond_signal(cv, false);
	/* No waiter, no lock: a waiter that enqueued before the signaller
	 * took the mutex is visible here through that mutex. */
	if (!__atomic_load_n(&c->head, __ATOMIC_ACQUIRE))
		return 0;
	return LS_CANCEL_DEFERRED(signal_locked(c));
}

LS_EXPORT __attribute__((symver("pthread_cond_broadcast@@GLIBC_2.3.2"))) int
ls_pthread_cond_broadcast(pthread_cond_t *cv)
{
	struct ls_cond *c = (struct ls_cond *)cv;
	ls_ensure_init();
	if (is_glibc(c))
		return ls_real.cond_broadcast(cv);
	if (LS_UNLIKELY(ls_events.cond_signal))
		ls_events.cond_signal(cv, true);
	if (!__atomic_load_n(&c->head, __ATOMIC_ACQUIRE))
		return 0;
	return LS_CANCEL_DEFERRED(broadcast_locked(c));
}

LS_EXPORT __attribute__((symver("pthread_cond_init@@GLIBC_2.3.2"))) int
ls_pthread_cond_init(pthread_cond_t *cv, const pthread_condattr_t *attr)
{
	struct ls_cond *c = (struct ls_cond *)cv;
	int pshared = PTHREAD_PROCESS_PRIVATE;
	clockid_t clock = CLOCK_REALTIME;
	ls_ensure_init();
	if (attr) {
		pthread_condattr_getpshared(attr, &pshared);
		pthread_condattr_getclock(attr, &clock);
	}
	if (ls_g.passthrough || pshared != PTHREAD_PROCESS_PRIVATE)
		return ls_real.cond_init(cv, attr);
	memset(c, 0, sizeof *c);
	c->flags = clock == CLOCK_MONOTONIC ? COND_MONOTONIC : 0;
	if (LS_UNLIKELY(ls_events.init))
		ls_events.init(LS_OBJ_COND, cv);
	return 0;
}

static int destroy_cond(struct ls_cond *c);

LS_EXPORT __attribute__((symver("pthread_cond_destroy@@GLIBC_2.3.2"))) int
ls_pthread_cond_destroy(pthread_cond_t *cv)
{
	struct ls_cond *c = (struct ls_cond *)cv;
	ls_ensure_init();
	if (is_glibc(c))
		return ls_real.cond_destroy(cv);
	return LS_CANCEL_DEFERRED(destroy_cond(c));
}

static int destroy_cond(struct ls_cond *c)
{
	/* Wait for every waiter, signalled or still blocked, to drop its
	 * reference (the header: glibc's destroy does the same). */
	for (;;) {
		uint32_t r = atomic_load_explicit(&c->refs, memory_order_acquire);
		if ((r & ~REFS_DESTROYING) == 0)
			break;
		if (!(r & REFS_DESTROYING) &&
		    !atomic_compare_exchange_strong_explicit(&c->refs, &r, r | REFS_DESTROYING,
							     memory_order_acquire, memory_order_acquire))
			continue;
		futex(&c->refs, FUTEX_WAIT, r | REFS_DESTROYING, NULL);
	}
	if (LS_UNLIKELY(ls_events.destroy))
		ls_events.destroy(LS_OBJ_COND, c);
	return 0;
}
