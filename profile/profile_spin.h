/*
 * profile_spin.h - the profiler's wrappers of spinlocks (profile_spin.c).
 */
#ifndef LS_PROFILE_SPIN_H
#define LS_PROFILE_SPIN_H

struct ls_observe;

/* At install: wraps ob's spinlock calls, keeping the originals. */
void ls_prof_spin_install(struct ls_observe *ob);

#endif
