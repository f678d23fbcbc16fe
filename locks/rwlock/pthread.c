/*
 * pthread.c - the reader-writer baseline: glibc's own pthread_rwlock_t,
 * reached through the shim.
 *
 * This entry is not a lock. With LS_RWCAP_PASSTHROUGH the shim hands every
 * pthread_rwlock_* call to glibc unchanged (interpose/rwlock.c), so a run
 * under LOCKSWAP_RWALGO=pthread, the default, measures glibc plus the cost
 * of interposition. Its operations are never called. (The spinlock family's
 * is locks/spin/pthread_spin.c.)
 */
#include "rwlock.h"

static const struct ls_rwalgo pthread_rwalgo = {
    .name = "pthread",
    .desc = "glibc's own pthread rwlock, through the shim (the baseline)",
    .caps = LS_RWCAP_PASSTHROUGH,
    .rank = 0,
};
LS_REGISTER_RWALGO(pthread_rwalgo);
