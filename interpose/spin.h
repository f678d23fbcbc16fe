/*
 * spin.h - the spinlock family's entry points (spin.c) as the configuration
 * (config.c) sees them. (The algorithms' interface is
 * locks/spin/spinlock.h.)
 */
#ifndef LS_INTERPOSE_SPIN_H
#define LS_INTERPOSE_SPIN_H

#include <stdbool.h>

#include "observe.h"

/* The targets of the exported entry points, once configured: ls_spin_entries gives
 * the family's functions (glibc's under the passthrough; `fast` the ones
 * that take for granted that no thread is asynchronously cancelable, else
 * the checked ones, which an observer wraps), ls_spin_publish makes the entry points
 * jump to o's (config.c, after the observer's installation), and ls_spin_async_on swaps
 * every fast entry for the checked one (a thread is about to become
 * asynchronously cancelable: ls_async_on, shim.h). */
void ls_spin_entries(struct ls_spin_ops *o, bool fast);
void ls_spin_publish(const struct ls_spin_ops *o);
void ls_spin_async_on(void);

#endif
