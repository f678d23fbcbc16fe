/*
 * shim_cancel.h - asynchronous cancellation (shim_cancel.c), as every
 * family's entry points see it. shim_cancel.c says why and how.
 */
#ifndef LS_SHIM_CANCEL_H
#define LS_SHIM_CANCEL_H

#include <stdbool.h>

#include "lock.h"

/* Once a thread has made itself asynchronously cancelable (ls_async_cancel:
 * its type as last set through pthread_setcanceltype), fast_kind is
 * LS_KIND_SLOW (shim.h: no mutex has it) and the slow paths run such a
 * thread's calls with its type deferred (ls_cancel_defer, then
 * ls_cancel_restore with what it returned). */
extern __thread bool ls_async_cancel __attribute__((tls_model("initial-exec")));
int ls_cancel_defer(void);
void ls_cancel_restore(int old);
/* What each family does when a thread is about to become asynchronously
 * cancelable (its fast paths give way to checked ones): set by config.c
 * for the families that run lockswap's locks, NULL for glibc's. */
enum { LS_FAMILY_MUTEX, LS_FAMILY_RWLOCK, LS_FAMILY_SPIN, LS_FAMILIES };
extern void (*ls_async_on[LS_FAMILIES])(void);
/* The value of expr (an int), evaluated with the calling thread's cancel
 * type deferred if it is asynchronous. */
#define LS_CANCEL_DEFERRED(expr)                                                                             \
	({                                                                                                   \
		int r_;                                                                                      \
		if (LS_UNLIKELY(ls_async_cancel)) {                                                          \
			int o_ = ls_cancel_defer();                                                          \
			r_ = (expr);                                                                         \
			ls_cancel_restore(o_);                                                               \
		} else {                                                                                     \
			r_ = (expr);                                                                         \
		}                                                                                            \
		r_;                                                                                          \
	})

#endif
