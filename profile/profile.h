/*
 * profile.h - the contention profiler (LOCKSWAP_PROFILE=1), as the rest of
 * the shim sees it. See profile.c for the design.
 *
 * When profiling is off, nothing here runs: ls_profile_install() returns at
 * once, ls_g and ls_real keep the plain operations, and the hooks below
 * are behind `if (LS_UNLIKELY(ls_prof_on))` on init, destroy and condvar
 * paths only (never on a mutex lock or unlock path).
 *
 * When it is on, ls_profile_install() (called by config.c once the
 * algorithm is chosen, before any mutex is used) points ls_g.lock, trylock,
 * timedlock and unlock, and glibc's mutex and condvar functions in ls_real,
 * at recording wrappers around the originals. Every lockswap mutex and
 * every mutex or condvar that goes to glibc is then seen without further
 * hooks; lockswap's own condvars and the init/destroy of its mutexes call
 * the functions below.
 */
#ifndef LS_PROFILE_H
#define LS_PROFILE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern bool ls_prof_on;

/* config.c, once ls_g is filled in and before it is published: installs the
 * wrappers if LOCKSWAP_PROFILE=1. Returns 0, or -1 with one line in err. */
int ls_profile_install(char *err, size_t errlen);

/* mutex.c: a lockswap mutex was initialised or destroyed (successfully). */
void ls_prof_mutex_init(pthread_mutex_t *m);
void ls_prof_mutex_destroy(pthread_mutex_t *m);

/* cond.c, for lockswap's own condvars: lifecycle, signals, and one wait
 * (begin returns a token for end; r is the wait's result). */
void ls_prof_cond_init(pthread_cond_t *c);
void ls_prof_cond_destroy(pthread_cond_t *c);
void ls_prof_cond_signal(pthread_cond_t *c, bool broadcast);
uint64_t ls_prof_cond_wait_begin(void);
void ls_prof_cond_wait_end(pthread_cond_t *c, uint64_t token, int r);

#endif
