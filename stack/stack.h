/*
 * stack.h - the calling thread's stack, for the profiler (profile/: where a
 * mutex was created and where it was waited for) and the matcher of
 * per-mutex rules (match/: where a mutex was created). One unwinder for
 * both: libunwind's unw_backtrace, dlopen'ed by ls_stack_start (so a
 * process that needs no stacks never loads it).
 *
 * Frames are return addresses, innermost first, starting at the first frame
 * outside liblockswap.so (the shim, the profiler and the matcher are never
 * part of a stack they report).
 *
 * Re-entry. libunwind takes pthread mutexes of its own (they come back
 * through the shim); ls_stack_walking() is true on a thread while it is
 * inside the unwinder, so that what the shim does for those mutexes does
 * not walk again.
 *
 * fork. libunwind's locks must not be inherited held: calls into it (and
 * into dl_iterate_phdr by a user of the gate) are counted in a gate, which
 * ls_stack_fork_prepare closes and drains before fork, and whose state the
 * child resets. ls_stack_start registers these with pthread_atfork; a user
 * whose own prepare handler takes a lock that a thread inside the gate may
 * wait for (the profiler's global lock) calls ls_stack_fork_prepare itself
 * first (closing twice is harmless).
 */
#ifndef LS_STACK_H
#define LS_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Loads libunwind and takes a first stack (libunwind's first call takes
 * locks and allocates: better before main than on a lock path). Once per
 * process; later calls return what the first returned. Not on a lock path:
 * may dlopen, allocate and lock. 0, or -1 with one line in err. */
int ls_stack_start(char *err, size_t len);

/* Up to max return addresses of the caller's stack above liblockswap.so.
 * 0 if ls_stack_start has not succeeded, on a thread already inside the
 * unwinder, or, unless wait, while a fork is in progress (with wait, the
 * call waits for the fork to end instead). */
unsigned ls_stack_take(uintptr_t *out, unsigned max, bool wait);

/* True on a thread that is inside ls_stack_take. */
bool ls_stack_walking(void);

/* True if addr is in libunwind's code (a mutex it creates is its own). */
bool ls_stack_in_unwinder(uintptr_t addr);

/* The gate, for a caller of dl_iterate_phdr that must not run across fork:
 * enter returns false (and the caller does without) while a fork is in
 * progress. */
bool ls_stack_gate_enter(void);
void ls_stack_gate_leave(void);

void ls_stack_fork_prepare(void);
void ls_stack_fork_parent(void);
void ls_stack_fork_child(void);

#endif
