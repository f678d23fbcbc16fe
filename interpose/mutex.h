/*
 * mutex.h - the mutex family (mutex.c) as the condvar (mutex_cond.c) and
 * the configuration (config.c) see it.
 */
#ifndef LS_MUTEX_H
#define LS_MUTEX_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* For the condvar: release a mutex before waiting and take it back after,
 * saving and restoring a recursive count, and counting the waiter as a
 * user of the mutex in between (destroy is EBUSY meanwhile, as in glibc).
 * Both dispatch like the entry points. ls_mutex_unlock_for_wait returns 0
 * or EPERM (not the owner; then nothing has changed). */
int ls_mutex_unlock_for_wait(pthread_mutex_t *m, uint32_t *saved);
int ls_mutex_relock_after_wait(pthread_mutex_t *m, uint32_t saved);

/* ls_g's operations (config.c sets them): for algorithms whose state is
 * out of line, the fast path's, which find the block; and the slow path's
 * timed attempt. */
void ls_ext_lock(void *inline_state);
int ls_ext_trylock(void *inline_state);
void ls_ext_unlock(void *inline_state);
/* The timed attempt on the mutex holding these inline bytes: trylock, then
 * the deadline checks, then the algorithm's timedlock or the fallback. */
int ls_timedlock_inline(void *inline_state, clockid_t clock, const struct timespec *abs);
/* A thread is about to become asynchronously cancelable (ls_async_on):
 * every mutex call takes the slow path from now on. */
void ls_mutex_async_on(void);

#endif
