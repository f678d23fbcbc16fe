/*
 * pthread.c - the baseline: glibc's own mutex, reached through the shim.
 *
 * This entry is not a lock. With LS_CAP_PASSTHROUGH the shim hands every
 * mutex and condition variable call to glibc unchanged, so a run under
 * LOCKSWAP_ALGO=pthread measures glibc plus the cost of interposition.
 * Its operations are never called.
 *
 * After the release and misuse (lock.h): glibc's own (its unlock makes only
 * a futex call after its release since glibc's bug 13690 was fixed).
 */
#include "lock.h"

static const struct ls_algo pthread_algo = {
    .name = "pthread",
    .desc = "glibc's own pthread mutex, through the shim (the baseline)",
    .caps = LS_CAP_PASSTHROUGH,
    .rank = 0,
};
LS_REGISTER_ALGO(pthread_algo);
