/*
 * spin.c - the pthread_spin_* entry points (locks/spin/spinlock.h).
 *
 * A pthread_spinlock_t is the algorithm's 4-byte state itself: the
 * algorithms of the family (LOCKSWAP_SPINALGO) are mutex algorithms whose
 * state fits it, or spin-only ones; the default, `pthread`, hands every
 * call to glibc. glibc 2.36's semantics:
 *   init     stores the unlocked state (the algorithm's 0; glibc's is 1 on
 *            x86-64) and returns 0, whatever pshared says (glibc's word
 *            works across processes as it is; see README's Known limits
 *            for lockswap's algorithms under park);
 *   destroy  returns 0 and changes nothing;
 *   lock     0; a second lock by the holder waits for ever, as in glibc;
 *   trylock  0 or EBUSY;
 *   unlock   0, by any thread; an unlock of a free spinlock leaves it free
 *            (every algorithm of the family tolerates it).
 * There is no static initialiser: a spinlock is initialised before use
 * (a zeroed one is free under lockswap's algorithms, held under glibc's).
 *
 * An asynchronously cancelable thread (shim_cancel.c) takes a spinlock by
 * polling trylock under the waiting policy (ls_timedlock_fallback with no
 * deadline): a cancel between two attempts leaves nothing behind, as it
 * does in glibc's loop, where a queue-based algorithm's lock() would leave
 * a ticket taken for ever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "shim_cancel.h"
#include "shim_rwlock.h"
#include "spin.h"
#include "spin/spinlock.h"
#include "wait.h"

_Static_assert(sizeof(pthread_spinlock_t) == LS_SPIN_STATE, "pthread_spinlock_t is 4 bytes");

/* The entry points jump through `entry`, as rwlock.c's do (see there):
 * glibc's functions under the passthrough (the default), else the fast
 * functions, or the checked ones once a thread is asynchronously
 * cancelable or when an observer wraps them. */
#if defined(__x86_64__)
#define ENTRY_ORDER __ATOMIC_RELAXED /* rwlock.c says why */
#else
#define ENTRY_ORDER __ATOMIC_ACQUIRE
#endif
#define ENTRY(op) ((__typeof__(entry.op))__atomic_load_n(&entry.op, ENTRY_ORDER))

static struct ls_spin_ops entry; /* (below, with its first targets) */

static inline bool spin_on(void)
{
	/* acquire: pairs with the release in ls_rw_configure */
	return __atomic_load_n(&ls_rwg.spin_on, __ATOMIC_ACQUIRE);
}

static int lock_fast(pthread_spinlock_t *s)
{
	ls_rwg.spin->lock((void *)s);
	return 0;
}

static int lock_checked(pthread_spinlock_t *s)
{
	if (!spin_on())
		return ls_rwreal.spin.lock(s);
	if (ls_async_cancel)
		return ls_timedlock_fallback(ls_rwg.spin, (void *)s, UINT64_MAX);
	ls_rwg.spin->lock((void *)s);
	return 0;
}

static int trylock_fast(pthread_spinlock_t *s)
{
	return ls_rwg.spin->trylock((void *)s) ? EBUSY : 0;
}

static int unlock_fast(pthread_spinlock_t *s)
{
	ls_rwg.spin->unlock((void *)s);
	return 0;
}

static int init_fast(pthread_spinlock_t *s, int pshared)
{
	(void)pshared;
	/* relaxed, as glibc's: publishing the spinlock to other threads is
	 * the program's business */
	atomic_store_explicit((_Atomic uint32_t *)s, 0, memory_order_relaxed);
	if (ls_rwg.spin->init)
		ls_rwg.spin->init((void *)s);
	return 0;
}

static int destroy_fast(pthread_spinlock_t *s)
{
	(void)s;
	return 0; /* glibc's changes nothing; nor does lockswap (no state to free) */
}

#define FIRST(op, params, args)                                                                              \
	static int op##_first params                                                                         \
	{                                                                                                    \
		ls_ensure_init();                                                                            \
		return ENTRY(op) args;                                                                       \
	}
FIRST(init, (pthread_spinlock_t * s, int pshared), (s, pshared))
FIRST(destroy, (pthread_spinlock_t * s), (s))
FIRST(lock, (pthread_spinlock_t * s), (s))
FIRST(trylock, (pthread_spinlock_t * s), (s))
FIRST(unlock, (pthread_spinlock_t * s), (s))

static struct ls_spin_ops entry = {init_first, destroy_first, lock_first, trylock_first, unlock_first};

/* Only lock waits, so only lock has a checked variant. */
void ls_spin_entries(struct ls_spin_ops *o, bool fast)
{
	if (!ls_rwg.spin_on)
		*o = ls_rwreal.spin;
	else
		*o = (struct ls_spin_ops){init_fast, destroy_fast, fast ? lock_fast : lock_checked,
					  trylock_fast, unlock_fast};
}

/* release: see rwlock.c's ls_rw_publish */
void ls_spin_publish(const struct ls_spin_ops *o)
{
	__atomic_store_n(&entry.init, o->init, __ATOMIC_RELEASE);
	__atomic_store_n(&entry.destroy, o->destroy, __ATOMIC_RELEASE);
	__atomic_store_n(&entry.lock, o->lock, __ATOMIC_RELEASE);
	__atomic_store_n(&entry.trylock, o->trylock, __ATOMIC_RELEASE);
	__atomic_store_n(&entry.unlock, o->unlock, __ATOMIC_RELEASE);
}

void ls_spin_async_on(void)
{
	int (*f)(pthread_spinlock_t *) = lock_fast;
	__atomic_compare_exchange_n(&entry.lock, &f, lock_checked, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

LS_EXPORT
__attribute__((symver("pthread_spin_lock@@GLIBC_2.34"), symver("pthread_spin_lock@GLIBC_2.2.5"))) int
ls_pthread_spin_lock(pthread_spinlock_t *s)
{
	return ENTRY(lock)(s);
}

LS_EXPORT __attribute__((symver("pthread_spin_trylock@@GLIBC_2.34"),
			 symver("pthread_spin_trylock@GLIBC_2.2.5"))) int
ls_pthread_spin_trylock(pthread_spinlock_t *s)
{
	return ENTRY(trylock)(s);
}

LS_EXPORT
__attribute__((symver("pthread_spin_unlock@@GLIBC_2.34"), symver("pthread_spin_unlock@GLIBC_2.2.5"))) int
ls_pthread_spin_unlock(pthread_spinlock_t *s)
{
	return ENTRY(unlock)(s);
}

LS_EXPORT
__attribute__((symver("pthread_spin_init@@GLIBC_2.34"), symver("pthread_spin_init@GLIBC_2.2.5"))) int
ls_pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
	return ENTRY(init)(s, pshared);
}

LS_EXPORT __attribute__((symver("pthread_spin_destroy@@GLIBC_2.34"),
			 symver("pthread_spin_destroy@GLIBC_2.2.5"))) int
ls_pthread_spin_destroy(pthread_spinlock_t *s)
{
	return ENTRY(destroy)(s);
}
