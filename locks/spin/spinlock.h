/*
 * spinlock.h - the pthread_spinlock_t family: which algorithms serve
 * pthread_spin_* (interpose/spin.c), chosen by LOCKSWAP_SPINALGO.
 *
 * A pthread_spinlock_t is a 4-byte int, 4-byte aligned, with no static
 * initialiser. glibc 2.36 on x86-64: pthread_spin_init stores 1 (free; a
 * zeroed spinlock is HELD there) whatever pshared says (the word works
 * across processes as it is), lock decrements it, unlock stores 1 (so an
 * unlock of a free spinlock is harmless), destroy does nothing, trylock
 * says EBUSY. lockswap's pthread_spin_init stores the algorithm's free
 * state, 0, as lock.h's algorithms all take zero as unlocked.
 *
 * Its algorithms are lock.h algorithms (struct ls_algo, the mutex contract:
 * all-zero unlocked, copyable when unlocked, unlock from any thread, lock
 * never fails, trylock 0/EBUSY) whose state fits those 4 bytes
 * (state_size <= LS_SPIN_STATE) and needs no more than 4-byte alignment:
 *   - every mutex algorithm that fits: tas, ttas, backoff (a 32-bit word;
 *     not hbo, whose cluster topology is loaded only for LOCKSWAP_ALGO);
 *   - spin-only algorithms, registered with LS_REGISTER_SPINALGO in the
 *     ls_spinalgos section (not offered for mutexes, which have room for
 *     better): `pthread`, glibc's own spinlock through the shim, the
 *     default (LS_CAP_PASSTHROUGH, locks/spin/pthread_spin.c), and
 *     ticket16, a 16+16-bit ticket lock (locks/spin/ticket16.c).
 * Nothing else fits, and nothing else is offered: no pointer fits in 4
 * bytes, so there is no out-of-line state (it would need a global table
 * from address to state, looked up on every call and never freed, since
 * pthread_spin_destroy is optional). LOCKSWAP_SPINALGO naming a mutex
 * algorithm that does not fit is a configuration error at start, one line
 * naming its state size and the algorithms that fit (exit 2).
 *
 * Waiting follows LOCKSWAP_WAIT like every lockswap lock: under the default
 * `park` a spinlock waiter sleeps once its spin and yield budgets are spent
 * (glibc's spins for ever); LOCKSWAP_WAIT=spin gives glibc's behaviour.
 * There is no timed spinlock operation, so the algorithms' timedlock is
 * never called.
 *
 * lock.h's rules hold here as for mutexes: after the store that releases a
 * spinlock the unlock touches nothing of it but, at most, a futex wake on
 * its address (tas, ttas, backoff: one exchange; ticket16: one CAS), and an
 * unlock of a free spinlock leaves it free and usable; both are tested by
 * after_release and unlock_misuse with -a spin (tests/after-release.bats,
 * tests/unlock-misuse.bats).
 */
#ifndef LS_SPINLOCK_H
#define LS_SPINLOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "lock.h"

#define LS_SPIN_STATE 4 /* sizeof(pthread_spinlock_t) */

#define LS_REGISTER_SPINALGO(a)                                                                              \
	static const struct ls_algo *const ls_spinalgo_ptr_##a                                               \
	    __attribute__((used, section("ls_spinalgos"), aligned(8))) = &(a)

/* True if a mutex algorithm fits a pthread_spinlock_t: its state fits,
 * and it needs nothing the spinlock family does not start (a hierarchical
 * lock's cluster topology is loaded for LOCKSWAP_ALGO's lock only). The
 * mutex family's `pthread` is glibc's mutex: the spin family has its own. */
static inline bool ls_spin_fits(const struct ls_algo *a)
{
	return a->state_size <= LS_SPIN_STATE && !(a->caps & (LS_CAP_HIER | LS_CAP_PASSTHROUGH));
}

/* Registry (locks/common/rwregistry.c): the family's algorithms, the
 * mutex algorithms that fit first (in their order), then the spin-only
 * ones (by rank, then name). */
size_t ls_spinalgo_count(void);
const struct ls_algo *ls_spinalgo_at(size_t i);
/* An algorithm of the family, or NULL (then, with ls_spinalgo_lookup, one
 * line in err: unknown, or a mutex algorithm that does not fit, with the
 * choices). */
const struct ls_algo *ls_spinalgo_find(const char *name);
const struct ls_algo *ls_spinalgo_lookup(const char *name, char *err, size_t errlen);
char *ls_spinalgo_names(char *buf, size_t len);

#endif
