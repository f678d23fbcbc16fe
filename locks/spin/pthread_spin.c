/*
 * pthread_spin.c - the spinlock baseline: glibc's own pthread_spinlock_t,
 * reached through the shim (locks/spin/spinlock.h).
 *
 * Not a lock: with LS_CAP_PASSTHROUGH the shim hands every pthread_spin_*
 * call to glibc unchanged (interpose/spin.c), so LOCKSWAP_SPINALGO=pthread,
 * the default, measures glibc plus the cost of interposition. Registered in
 * the spinlock family only; its operations are never called.
 */
#include "spinlock.h"

static const struct ls_algo pthread_spinalgo = {
    .name = "pthread",
    .desc = "glibc's own pthread spinlock, through the shim (the baseline)",
    .caps = LS_CAP_PASSTHROUGH,
    .rank = 0,
};
LS_REGISTER_SPINALGO(pthread_spinalgo);
