/*
 * bind.h - an algorithm per lock (LOCKSWAP_ALGO_MAP, LOCKSWAP_CONFIG): the
 * interface of bind.c to the families above it and to the configuration.
 * See bind.c for the design.
 */
#ifndef LS_BIND_H
#define LS_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim_rwlock.h"
#include "shim.h"

/* ---- an algorithm per mutex ----
 *
 * LOCKSWAP_ALGO_MAP or LOCKSWAP_CONFIG: config.c calls ls_map_configure
 * once the default algorithm is chosen (LOCKSWAP_ALGO, for the mutexes no
 * rule names) and before the observer is installed; it fills ls_g for the
 * map (ls_g.map set) or returns -1 with one line in err. After the
 * observer: ls_map_published (the slow paths' operations). After ready:
 * ls_map_start (the matcher's start: may dlopen). mutex.c calls ls_map_init
 * and ls_map_target for every lockswap mutex when ls_g.map is set. */
int ls_map_configure(const struct ls_algo *dflt, bool verbose, char *err, size_t errlen);
void ls_map_published(void);
int ls_map_start(char *err, size_t errlen);
const char *ls_map_default_name(void); /* the algorithm of mutexes no rule names */
void ls_map_report(void);	       /* at exit, under LOCKSWAP_VERBOSE */
bool ls_map_any(void);		       /* rules were read: of mutexes (ls_g.map), rwlocks or both */
int ls_map_init(struct ls_mutex *m, int type);
/* For destroy (mutex.c): the algorithm of a mutex that has its binding,
 * its state, and whether that is out of line; false for one that has none
 * (never initialised nor used). */
bool ls_map_target(struct ls_mutex *m, const struct ls_algo **a, void **state, bool *ext);
/* The observer's queries (observe.h). */
const char *ls_map_algo_of(const pthread_mutex_t *m);
const char *ls_map_rule_of(const pthread_mutex_t *m);

/* ---- an algorithm per rwlock ----
 *
 * For the rules of an algorithm map whose algorithm is an rwlock algorithm
 * (ls_map_configure sorts them): after
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

/* The rwlock family's side (rwlock.c, rwlock_acquire.c): an rwlock's
 * algorithm's capabilities (binding it first if need be), its init and its
 * destroy under the map. */
unsigned ls_rwmap_caps(struct ls_rwlock *l);
int ls_rwmap_init(struct ls_rwlock *l, int kind);
int ls_rwmap_destroy(struct ls_rwlock *l);

/* An rwlock's entry: what its fast paths call (rwlock.c's *_fast_map, with
 * the table below 4 GiB: the word is the entry's address). */
struct ls_rwbind {
	/* what rdlock_fast_map and unlock_fast_map call, on the rwlock */
	int (*rdlock)(void *, unsigned, void **);
	void (*rdunlock)(void *, void *);
	void (*wrlock)(void *, unsigned);
	void (*wrunlock)(void *);
	/* the algorithm, and its own operations (the adapters call them on
	 * the out-of-line state) */
	const struct ls_rwalgo *algo;
	int (*ardlock)(void *, unsigned, void **);
	void (*ardunlock)(void *, void *);
	void (*awrlock)(void *, unsigned);
	void (*awrunlock)(void *);
	bool ext;
	int rule; /* match.h's index, or LS_MATCH_NONE: the default */
} __attribute__((aligned(LS_CACHELINE)));

#endif
