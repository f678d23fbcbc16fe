/*
 * profile_mutex.h - the profiler's wrappers of mutexes (profile_mutex.c):
 * the shim's mutex operations, glibc's mutex functions, and the init and
 * destroy events of lockswap's own mutexes and condvars (observe.h).
 */
#ifndef LS_PROFILE_MUTEX_H
#define LS_PROFILE_MUTEX_H

#include <pthread.h>
#include <stdbool.h>

struct ls_observe;

/* At install: wraps ob's mutex operations and glibc's mutex functions,
 * keeping the originals, and sets the init and destroy hooks. */
void ls_prof_mutex_install(struct ls_observe *ob);

/* Whether an unlock of glibc's mutex m will release it (glibc refuses a
 * non-owner's for every kind that checks ownership; a recursive one counts
 * down). */
bool ls_prof_glibc_releases(pthread_mutex_t *m);

#endif
