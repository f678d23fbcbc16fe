/*
 * rwlock.h - the rwlock family's entry points (rwlock.c) as the
 * configuration (config.c) sees them. (The algorithms' interface is
 * locks/rwlock/rwlock.h, included as "rwlock/rwlock.h".)
 */
#ifndef LS_INTERPOSE_RWLOCK_H
#define LS_INTERPOSE_RWLOCK_H

#include <stdbool.h>

#include "observe.h"

/* The targets of the exported entry points, once configured: ls_rw_entries gives
 * the family's functions (glibc's under the passthrough; `fast` the ones
 * that take for granted that no thread is asynchronously cancelable, else
 * the checked ones, which an observer wraps), ls_rw_publish makes the entry points
 * jump to o's (config.c, after the observer's installation), and ls_rw_async_on swaps
 * every fast entry for the checked one (a thread is about to become
 * asynchronously cancelable: ls_async_on, shim.h). */
void ls_rw_entries(struct ls_rwlock_ops *o, bool fast);
void ls_rw_publish(const struct ls_rwlock_ops *o);
void ls_rw_async_on(void);

#endif
