/*
 * profile_cond.h - the profiler's wrappers of condition variables
 * (profile_cond.c), above those of mutexes: a wait on glibc's condvar
 * releases and takes again glibc's mutex.
 */
#ifndef LS_PROFILE_COND_H
#define LS_PROFILE_COND_H

struct ls_observe;

/* At install: wraps glibc's condvar functions in ob, keeping the
 * originals, and sets the condvar hooks (signal, wait begin and end). */
void ls_prof_cond_install(struct ls_observe *ob);

#endif
