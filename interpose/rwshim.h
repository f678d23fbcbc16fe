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
#include <stdint.h>

#include "rwlock/rwlock.h"
#include "shim.h"

/* glibc's functions, for the passthrough and the process-shared rwlocks. */
struct ls_rwreal {
	struct ls_rwlock_ops rw;
	struct ls_spin_ops spin;
};
extern struct ls_rwreal ls_rwreal;

/* The configuration the rwlock and spinlock functions read (the exported
 * entry points jump to them: rwlock.c, spin.c). */
struct ls_rwglobal {
	bool rw_on;   /* an rwlock algorithm (not the passthrough) is in use */
	bool rw_ext;  /* its state lives out of line */
	bool spin_on; /* a spinlock algorithm (not the passthrough) is in use */
	const struct ls_rwalgo *rw;
	/* rw's operations of the fast paths, one load away */
	int (*rdlock)(void *, unsigned, void **);
	void (*rdunlock)(void *, void *);
	void (*wrlock)(void *, unsigned);
	void (*wrunlock)(void *);
	const struct ls_algo *spin;
	size_t rw_size; /* rw->state_size, final once started */
	bool map;	/* an algorithm per rwlock (rwlock.c): rw is the map's dispatcher */
	bool map_near;	/* its table is below 4 GiB: the map's own fast entries */
} __attribute__((aligned(LS_CACHELINE)));
/* hidden: the fast paths call through it with one instruction */
extern struct ls_rwglobal ls_rwg __attribute__((visibility("hidden")));

/* config.c: glibc's functions, then LOCKSWAP_RWALGO and LOCKSWAP_SPINALGO
 * (after LOCKSWAP_ALGO: the mutex-serialised mode uses its algorithm).
 * Returns 0, or -1 with one line in msg (a configuration error). */
void ls_rw_resolve_glibc(void);
int ls_rw_configure(const struct ls_algo *mutex, bool verbose, char *msg, size_t len);

/* An algorithm per rwlock (rwlock.c), for the rules of an algorithm map
 * whose algorithm is an rwlock algorithm (map.c sorts them): after
 * ls_rw_configure, with the rules' algorithms (rules[i], for each i in the
 * mask `among` of n rules), their '*' rule (`any`, or LS_MATCH_NONE: then
 * LOCKSWAP_RWALGO's) and the mutex algorithm for the mutex-serialised mode
 * (NULL: pthread). Sets ls_rwg.map, unless every rwlock would be glibc's
 * anyway; 0, or -1 with one line in err. The rest: for the observer, the
 * algorithm and rule of an rwlock (NULL if it is glibc's, or without the
 * map), and for the report at exit, how many rwlocks a rule (or
 * LS_MATCH_NONE: none) chose and its algorithm. */
int ls_rwmap_configure(const struct ls_rwalgo *const *rules, unsigned n, uint64_t among, int any,
		       const struct ls_algo *mutex, bool verbose, char *err, size_t len);
const char *ls_rwmap_default_name(void);
const char *ls_rwmap_algo_of(const pthread_rwlock_t *rw);
const char *ls_rwmap_rule_of(const pthread_rwlock_t *rw);
uint64_t ls_rwmap_bound(int rule, const char **algo);

/* The targets of the exported entry points, once configured (rwlock.c,
 * spin.c): ls_*_entries gives the family's functions (glibc's under the
 * passthrough; `fast` the ones that take for granted that no thread is
 * asynchronously cancelable, else the checked ones, which an observer
 * wraps), ls_*_publish makes the entry points jump to o's (observe.c,
 * after the observer's installation), and ls_*_async_on swaps every fast
 * entry for the checked one (cancel.c: a thread is about to become
 * asynchronously cancelable). */
void ls_rw_entries(struct ls_rwlock_ops *o, bool fast);
void ls_rw_publish(const struct ls_rwlock_ops *o);
void ls_rw_async_on(void);
void ls_spin_entries(struct ls_spin_ops *o, bool fast);
void ls_spin_publish(const struct ls_spin_ops *o);
void ls_spin_async_on(void);

#endif
