/*
 * rwshim.h - what the reader-writer lock and spinlock entry points
 * (rwlock.c, spin.c) share with the configuration (config.c).
 *
 * The two families are chosen apart from the mutexes: LOCKSWAP_RWALGO
 * (locks/rwlock/rwlock.h) and LOCKSWAP_SPINALGO (locks/spin/spinlock.h),
 * both `pthread` (glibc's own, through the shim) by default. They share the
 * mutex shim's initialisation (ls_init, ls_g.ready), its waiting policy and
 * its handling of asynchronous cancellation (cancel.c).
 */
#ifndef LS_RWSHIM_H
#define LS_RWSHIM_H

#include <pthread.h>
#include <stdbool.h>

#include "rwlock/rwlock.h"
#include "shim.h"

/* glibc's functions, for the passthrough and the process-shared rwlocks. */
struct ls_rwreal {
	int (*rw_init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
	int (*rw_destroy)(pthread_rwlock_t *);
	int (*rw_rdlock)(pthread_rwlock_t *);
	int (*rw_tryrdlock)(pthread_rwlock_t *);
	int (*rw_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*rw_clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*rw_wrlock)(pthread_rwlock_t *);
	int (*rw_trywrlock)(pthread_rwlock_t *);
	int (*rw_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*rw_clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*rw_unlock)(pthread_rwlock_t *);
	int (*spin_init)(pthread_spinlock_t *, int);
	int (*spin_destroy)(pthread_spinlock_t *);
	int (*spin_lock)(pthread_spinlock_t *);
	int (*spin_trylock)(pthread_spinlock_t *);
	int (*spin_unlock)(pthread_spinlock_t *);
};
extern struct ls_rwreal ls_rwreal;

/* The configuration the rwlock and spinlock entry points read. Until
 * ls_init() has run, rw_on and spin_on are false, so every call takes the
 * slow path, which initialises first. */
struct ls_rwglobal {
	bool rw_on;    /* an rwlock algorithm (not the passthrough) is in use */
	bool rw_glibc; /* ready, and the passthrough is: every call goes to glibc */
	bool rw_ext;   /* its state lives out of line */
	bool spin_on;  /* a spinlock algorithm (not the passthrough) is in use */
	const struct ls_rwalgo *rw;
	/* rw's operations of the fast paths, one load away */
	int (*rdlock)(void *, unsigned, void **);
	void (*rdunlock)(void *, void *);
	void (*wrlock)(void *, unsigned);
	void (*wrunlock)(void *);
	const struct ls_algo *spin;
	size_t rw_size; /* rw->state_size, final once started */
} __attribute__((aligned(LS_CACHELINE)));
extern struct ls_rwglobal ls_rwg;

/* config.c: glibc's functions, then LOCKSWAP_RWALGO and LOCKSWAP_SPINALGO
 * (after LOCKSWAP_ALGO: the mutex-serialised mode uses its algorithm).
 * Returns 0, or -1 with one line in msg (a configuration error). */
void ls_rw_resolve_glibc(void);
int ls_rw_configure(const struct ls_algo *mutex, bool verbose, char *msg, size_t len);

#endif
