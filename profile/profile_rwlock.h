/*
 * profile_rwlock.h - the profiler's wrappers of reader-writer locks
 * (profile_rwlock.c).
 */
#ifndef LS_PROFILE_RWLOCK_H
#define LS_PROFILE_RWLOCK_H

struct ls_observe;

/* At install: wraps ob's rwlock calls, keeping the originals. */
void ls_prof_rwlock_install(struct ls_observe *ob);

#endif
