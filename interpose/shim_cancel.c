/*
 * shim_cancel.c - asynchronous cancellation and the lock calls.
 *
 * glibc: a thread whose cancel type is asynchronous may be cancelled at any
 * instruction, also while it waits in pthread_mutex_lock, and glibc's mutex
 * survives it (one atomic lock word and a futex wait), so the cancel acts at
 * once and the mutex stays usable. A lock algorithm cannot be stopped at any
 * instruction: a thread cancelled inside an MCS queue leaves its node linked
 * and the lock dies with it; one cancelled between two steps of a release
 * loses the hand-over.
 *
 * So lockswap interposes pthread_setcanceltype. The first time a thread
 * makes itself asynchronously cancelable, ls_g.fast_kind becomes
 * LS_KIND_SLOW, which no mutex has, and every mutex call takes the slow path
 * from then on: the fast path keeps its instructions, and the cost (the slow
 * path's) falls only on programs that use asynchronous cancellation. There,
 * a thread whose type is asynchronous (ls_async_cancel: its type as last set
 * through this call) runs the call with its type deferred, and waits for a
 * lock in slices (mutex.c): the algorithm's timedlock, or the trylock
 * fallback for algorithms without one, with a deadline 1 ms away, doubling
 * up to 16 ms; between two slices, holding nothing and in no queue, it calls
 * pthread_testcancel, where a cancel that came meanwhile acts as it would
 * have under glibc. When the call returns its type is asynchronous again
 * (and a cancel that came during a call that did not wait acts there). The
 * condition variable does the same around its own steps (mutex_cond.c).
 *
 * What differs from glibc: the cancel of a waiting thread acts at the end
 * of the current slice (within 16 ms), not at once; such a waiter is not in
 * the algorithm's queue between slices (it polls, for the locks without
 * native timeout), so it is not FIFO and can be overtaken.
 *
 * Only the type set through pthread_setcanceltype is seen; glibc's own
 * temporary switches (around its blocking calls) never reach a mutex call.
 * LS_KIND_SLOW is never taken back: threads come and go, and counting the
 * asynchronous ones would put a cost on every thread exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "shim.h"
#include "shim_cancel.h"

__thread bool ls_async_cancel __attribute__((tls_model("initial-exec")));
void (*ls_async_on[LS_FAMILIES])(void);

int ls_cancel_defer(void)
{
	int old;
	ls_real_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old);
	return old;
}

void ls_cancel_restore(int old)
{
	ls_real_setcanceltype(old, &old);
}

LS_EXPORT __attribute__((symver("pthread_setcanceltype@@GLIBC_2.2.5"))) int
ls_pthread_setcanceltype(int type, int *oldtype)
{
	/* after initialisation, which set fast_kind once and for all */
	ls_ensure_init();
	/* the families that run lockswap's locks (config.c set their hooks) */
	bool any = false;
	for (int f = 0; f < LS_FAMILIES; f++)
		any |= ls_async_on[f] != NULL;
	if (type == PTHREAD_CANCEL_ASYNCHRONOUS && any) {
		/* before the thread is asynchronous: from its next lock call
		 * on, it takes the slow path (its own stores: no ordering with
		 * other threads is needed, they are not asynchronous) */
		ls_async_cancel = true;
		for (int f = 0; f < LS_FAMILIES; f++)
			if (ls_async_on[f])
				ls_async_on[f]();
	}
	int r = ls_real_setcanceltype(type, oldtype);
	if (r == 0 && type == PTHREAD_CANCEL_DEFERRED)
		ls_async_cancel = false;
	return r; /* EINVAL for any other type: nothing changed */
}
