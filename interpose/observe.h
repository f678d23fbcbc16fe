/*
 * observe.h - the shim's interface to an observer (the profiler, profile/):
 * what the shim offers it and what it gives back. The only header of
 * interpose/ that an observer includes; it never sees shim.h, ls_g or
 * ls_real.
 *
 * Installation. Before main, once the algorithm is chosen and before the
 * shim publishes its configuration (so before any mutex is used through
 * it), config.c calls the observer's install function (registered with
 * LS_REGISTER_OBSERVER, below) with a struct ls_observe filled in: the operations the shim is about to call
 * and what they run on. The observer may replace any operation with a wrapper that calls the original (which
 * it keeps), and may set any event hook; the shim then calls exactly what the struct holds. It returns 0, or
 * -1 with one line in err (the shim prints it and exits 2, as for any configuration error). Installation is
 * once per process and final.
 *
 * Off. An observer that is not wanted (LOCKSWAP_PROFILE unset) returns 0
 * with the struct untouched: the shim then calls the very functions it
 * would have called without an observer, the fast path (a load of __kind,
 * a compare, an indirect call) is the same instructions, and every event
 * site is one test of a NULL hook on an init, destroy, condvar or exit
 * path, never on a mutex lock or unlock path.
 *
 * Coverage. Every lockswap mutex acquisition and release goes through
 * `mutex` (the fast path and the slow path alike); every call on a mutex or
 * condvar that glibc keeps (LOCKSWAP_ALGO=pthread, process-shared, robust,
 * priority-inheritance and -protection mutexes, process-shared condvars)
 * goes through `glibc`. The events cover what neither sees: the life of
 * lockswap's own mutexes and condvars, the condvar's signals and waits, and
 * the end of the process by _exit or _Exit.
 *
 * Re-entry. A wrapper or hook may itself call pthread functions (a pthread
 * key, dlopen'ed code): they come back through the same wrappers, so an
 * observer needs a per-thread guard of its own.
 *
 * Reader-writer locks and spinlocks (issue 19) are observed one level
 * higher than mutexes: `rwlock` and `spin` are the whole pthread_rwlock_*
 * and pthread_spin_* calls, as the exported entry points make them (every
 * call of the program goes through exactly one of them, init and destroy
 * included, so no event is needed for their lives). When the family is
 * glibc's (LOCKSWAP_RWALGO / LOCKSWAP_SPINALGO unset or pthread) they are
 * glibc's own functions; otherwise the shim's, which keep glibc's semantics
 * themselves (recursive reads, EDEADLK, misuse, and process-shared rwlocks,
 * which they hand to glibc without coming back here). A wrapper sees
 * glibc's results either way, so one wrapper serves both: a failed try
 * first (EBUSY) is contention unless the caller holds the write lock
 * (__cur_writer is the writer's tid in glibc's rwlocks and lockswap's); a
 * read and a write are told apart by the operation. Off, the entry points
 * jump straight to these functions (one indirect jump each; rwlock.c).
 *
 * An algorithm per mutex (LOCKSWAP_ALGO_MAP, interpose/map.c): `mutex` stays
 * the operations the entry points call, which dispatch by mutex below the
 * observer's wrappers, so wrappers work unchanged; `algo` is the algorithm
 * of the mutexes no rule names, and algo_of/rule_of name each mutex's;
 * rw_algo_of/rw_rule_of the same for rwlocks (whose calls the observer
 * wraps whole, above the dispatch).
 *
 * A new field is zero for an observer that does not know it, and a NULL
 * hook or an untouched operation is always valid.
 */
#ifndef LS_OBSERVE_H
#define LS_OBSERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The operations on a lockswap mutex, as the entry points call them: the
 * chosen algorithm's own (or the shim's out-of-line-state adapters), on
 * the mutex's state bytes. lock never fails; trylock returns 0 if it took
 * the lock; timedlock returns 0, ETIMEDOUT or EINVAL (the deadline is
 * absolute, on `clock`: CLOCK_REALTIME or CLOCK_MONOTONIC). Ownership,
 * recursion and the mutex types are the shim's, outside these: a recursive
 * relock by its owner does not call them. */
struct ls_mutex_ops {
	void (*lock)(void *state);
	int (*trylock)(void *state);
	void (*unlock)(void *state);
	int (*timedlock)(void *state, clockid_t clock, const struct timespec *abs);
};

/* The state bytes are at a fixed offset in the pthread_mutex_t (shim.h
 * asserts it): the mutex whose operation this is. */
#define LS_OBS_STATE_OFFSET 24
static inline pthread_mutex_t *ls_obs_mutex_of(void *state)
{
	return (pthread_mutex_t *)((char *)state - LS_OBS_STATE_OFFSET);
}

/* glibc's functions for the mutexes and condvars glibc keeps, with glibc's
 * results. (The shim keeps glibc's pthread_setcanceltype apart: no
 * observer sees it.) A lockswap mutex keeps glibc's meaning of __kind
 * (type in bits 0-1, the attribute bits, -1 once destroyed), __owner and
 * __count (recursive mutexes), so an observer reads a mutex's type the
 * same way whoever owns it. */
struct ls_glibc {
	int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
	int (*mutex_destroy)(pthread_mutex_t *);
	int (*mutex_lock)(pthread_mutex_t *);
	int (*mutex_trylock)(pthread_mutex_t *);
	int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*mutex_unlock)(pthread_mutex_t *);
	int (*cond_init)(pthread_cond_t *, const pthread_condattr_t *);
	int (*cond_destroy)(pthread_cond_t *);
	int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*cond_signal)(pthread_cond_t *);
	int (*cond_broadcast)(pthread_cond_t *);
};

/* Every pthread_rwlock_* call (see the header), with glibc's results. */
struct ls_rwlock_ops {
	int (*init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
	int (*destroy)(pthread_rwlock_t *);
	int (*rdlock)(pthread_rwlock_t *);
	int (*tryrdlock)(pthread_rwlock_t *);
	int (*timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*wrlock)(pthread_rwlock_t *);
	int (*trywrlock)(pthread_rwlock_t *);
	int (*timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*unlock)(pthread_rwlock_t *);
};

/* Every pthread_spin_* call, likewise. */
struct ls_spin_ops {
	int (*init)(pthread_spinlock_t *, int);
	int (*destroy)(pthread_spinlock_t *);
	int (*lock)(pthread_spinlock_t *);
	int (*trylock)(pthread_spinlock_t *);
	int (*unlock)(pthread_spinlock_t *);
};

/* The objects whose lives the events report. */
enum ls_obj { LS_OBJ_MUTEX, LS_OBJ_COND };

/* Events on lockswap's own objects (glibc's are seen through struct
 * ls_glibc), each called by the thread doing the call, after the fact.
 * Any hook may be NULL. */
struct ls_events {
	/* A successful pthread_mutex_init / pthread_cond_init (the object is
	 * in its initial state), and a successful destroy (the memory may be
	 * reused as soon as the hook returns). An object used without init
	 * (static initialiser, zeroed memory) has no init event: its first
	 * operation is its first sign of life. */
	void (*init)(enum ls_obj kind, void *obj);
	void (*destroy)(enum ls_obj kind, void *obj);
	/* pthread_cond_signal / _broadcast, before it wakes anyone. */
	void (*cond_signal)(pthread_cond_t *c, bool broadcast);
	/* A wait on a condvar: begin before the mutex is released, end once
	 * it is held again (or the wait failed), with begin's return value and
	 * the wait's result r. Both or neither. The mutex's release and
	 * re-acquisition inside the wait go through `mutex` as usual. */
	uint64_t (*cond_wait_begin)(pthread_cond_t *c);
	void (*cond_wait_end)(pthread_cond_t *c, uint64_t token, int r);
	/* The process ends by _exit or _Exit: async-signal-safe work only
	 * (they may be called in a fork child or a signal handler). */
	void (*exiting)(void);
};

struct ls_observe {
	/* What runs (read-only). */
	const char *algo;	       /* LOCKSWAP_ALGO: every lockswap mutex's algorithm, or under a map
					  the algorithm of the mutexes no rule names */
	bool passthrough;	       /* LOCKSWAP_ALGO=pthread: every mutex and condvar is glibc's */
	const char *rwalgo, *spinalgo; /* LOCKSWAP_RWALGO, LOCKSWAP_SPINALGO */
	bool rw_passthrough;	       /* every rwlock is glibc's */
	bool spin_passthrough;	       /* every spinlock is glibc's */
	/* Under a map, NULL without one: the name of the algorithm a lockswap
	 * mutex runs, and the rule that chose it (as written, or "(default)"
	 * when no rule names it); NULL for a mutex that glibc keeps. For a
	 * mutex being initialised (the init event) or in use (any operation);
	 * a mutex used for the first time gets its binding here if it has
	 * none yet (a stack walk): ask once per mutex. */
	const char *(*algo_of)(const pthread_mutex_t *m);
	const char *(*rule_of)(const pthread_mutex_t *m);
	/* The same for rwlocks, under a map with rwlock rules (NULL without
	 * one; then rwalgo is every lockswap rwlock's algorithm, else the
	 * algorithm of the rwlocks no rule names). */
	const char *(*rw_algo_of)(const pthread_rwlock_t *rw);
	const char *(*rw_rule_of)(const pthread_rwlock_t *rw);
	/* The operations the shim will call: wrap by replacing them. */
	struct ls_mutex_ops mutex;
	struct ls_glibc glibc;
	struct ls_rwlock_ops rwlock;
	struct ls_spin_ops spin;
	/* The hooks, all NULL on entry. */
	struct ls_events ev;
};

/* Registration. An observer does not link against the shim by name: it
 * puts its install function in the ls_observers section, as an algorithm
 * registers itself (LS_REGISTER_ALGO), and the shim calls every one it
 * finds there, once, in link order, each on the struct the previous one
 * left (observe.c). The function returns 0, or -1 with one line in err. */
typedef int (*ls_observe_install_fn)(struct ls_observe *ob, char *err, size_t errlen);
#define LS_REGISTER_OBSERVER(fn)                                                                             \
	static const ls_observe_install_fn ls_observer_ptr_##fn                                              \
	    __attribute__((used, section("ls_observers"), aligned(8))) = (fn)

/* The shim's side (observe.c), for interpose/ alone: the hooks the entry
 * points call (NULL unless an observer set them), and the installation,
 * which config.c runs once ls_g and ls_real are filled in and before they
 * are published. */
extern struct ls_events ls_events;
int ls_observe_run(struct ls_observe *ob, char *err, size_t errlen);

#endif
