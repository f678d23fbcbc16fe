/*
 * rwlock_acquire.h - the acquisition paths of the rwlock family
 * (rwlock_acquire.c), as the entry points (rwlock.c) call them: the general
 * paths their fast paths fall back to, and the checked paths (any thread,
 * any rwlock, once configured) that an observer wraps or that replace the
 * fast ones once a thread is asynchronously cancelable.
 */
#ifndef LS_RWLOCK_ACQUIRE_H
#define LS_RWLOCK_ACQUIRE_H

#include <pthread.h>
#include <time.h>

/* What a fast path does not take for granted: a lock held by the caller
 * (read or write), write-held, or process-shared. */
int ls_rw_rdlock_general(pthread_rwlock_t *rw);
int ls_rw_wrlock_general(pthread_rwlock_t *rw);
int ls_rw_unlock_general(pthread_rwlock_t *rw);

/* The try operations of the fast entries (they test only for a
 * process-shared rwlock), and every checked operation. */
int ls_rw_tryrdlock_fast(pthread_rwlock_t *rw);
int ls_rw_trywrlock_fast(pthread_rwlock_t *rw);
int ls_rw_rdlock_checked(pthread_rwlock_t *rw);
int ls_rw_tryrdlock_checked(pthread_rwlock_t *rw);
int ls_rw_timedrdlock_checked(pthread_rwlock_t *rw, const struct timespec *abs);
int ls_rw_clockrdlock_checked(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abs);
int ls_rw_wrlock_checked(pthread_rwlock_t *rw);
int ls_rw_trywrlock_checked(pthread_rwlock_t *rw);
int ls_rw_timedwrlock_checked(pthread_rwlock_t *rw, const struct timespec *abs);
int ls_rw_clockwrlock_checked(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abs);
int ls_rw_unlock_checked(pthread_rwlock_t *rw);

#endif
