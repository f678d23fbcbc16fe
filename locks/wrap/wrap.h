/*
 * wrap.h - the interface between lockswap's registry and its lock wrappers.
 *
 * A wrapper is a mechanism that sits around ANY algorithm of locks/lock.h
 * and makes another algorithm of it, chosen at run time by a suffix:
 * LOCKSWAP_ALGO=BASE+WRAPPER (mcs+gcr). One wrapper = one file in
 * locks/wrap/ that defines one `struct ls_wrap` and registers it with
 * LS_REGISTER_WRAP(); everything else in the file is static.
 *
 * Composition. ls_algo_find("BASE+WRAPPER") (and ls_algo_resolve, which
 * says why a name is refused) calls the wrapper's wrap(base) the first time
 * a composition is named. wrap() returns a `struct ls_algo` that keeps
 * lock.h's contract in full, so that the shim, the harnesses and the tools
 * use it as any algorithm and know nothing else of the wrapper:
 *   name        "BASE+WRAPPER";
 *   state_size  the base's (the base's state, untouched, at the same
 *               address: inline stays inline);
 *   init, destroy  the base's;
 *   caps        the base's, minus what the wrapper does not keep (a
 *               wrapper that lets arrivals pass waiters drops LS_CAP_FIFO);
 *   params      the base's tunables, then the wrapper's (ls_wrap.params:
 *               one set, shared by every composition of the wrapper);
 *   rank        the base's.
 * wrap() may be called for several bases in one process (a test or a tool
 * composes many): each base gets its own ls_algo, and naming the same
 * composition again returns the same pointer. It refuses a base it cannot
 * wrap (the passthrough `pthread`, which is glibc's mutex and no lock of
 * lockswap's) with NULL and one line in err that names the valid choices.
 *
 * The wrapper word. A wrapper's per-lock state is ONE 32-bit word,
 * LS_WRAP_WORD(state): the 4 bytes just before the algorithm state. Whoever
 * hands states to a composed algorithm provides it: zero-filled together
 * with the state, copied with it, never touched by any algorithm. The shim
 * does for every mutex (pthread_mutex_t's __spins before an inline state,
 * the last 4 bytes of the out-of-line block's header before the other,
 * interpose/shim.h); a test harness that runs compositions allocates states
 * with the word before them (tests/unit/stress.c). So the word obeys the
 * same rules as an inline state:
 *   - ALL-ZERO MEANS IDLE: no thread counted or waiting in the wrapper
 *     (static initialisers and zeroed mutexes are never init'ed);
 *   - a byte copy of an unlocked, idle mutex is an unlocked, idle mutex.
 * What does not fit in 32 bits lives out of line, only while it is needed
 * (gcr: its passive queue, in a global table keyed by the word's address,
 * while threads wait there).
 *
 * A composed algorithm also keeps what the shim guarantees of every lock:
 *   - trylock() never waits (not in a wrapper's queues either);
 *   - timedlock() returns ETIMEDOUT by its deadline wherever the thread
 *     waits, the wrapper's queues included;
 *   - after the store that releases the base lock, unlock() touches
 *     neither the word nor the state (a futex wake on the word's address
 *     is allowed: the kernel tolerates a wake on memory gone or reused);
 *   - an unlock of an unlocked NORMAL mutex leaves the wrapper's
 *     bookkeeping as it was (the base answers for its own state);
 *   - a wrapper's global structures survive fork() (the child has one
 *     thread: whatever other threads left queued is dropped there).
 */
#ifndef LS_WRAP_H
#define LS_WRAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"

#define LS_WRAP_WORD(state) ((_Atomic uint32_t *)(void *)((char *)(state) - sizeof(uint32_t)))
#define LS_WRAP_MAX 64 /* compositions one wrapper can bind in a process */

struct ls_wrap {
	const char *name;	       /* the suffix: "gcr" in mcs+gcr */
	const char *desc;	       /* one line, with the paper and section */
	const struct ls_param *params; /* array ended by {0}, or NULL */
	/* The composition BASE+name (see above), or NULL with one line in err. */
	const struct ls_algo *(*wrap)(const struct ls_algo *base, char *err, size_t errlen);
};

#define LS_REGISTER_WRAP(w)                                                                                  \
	static const struct ls_wrap *const ls_wrap_ptr_##w                                                   \
	    __attribute__((used, section("ls_wraps"), aligned(8))) = &(w)

/* Registry (locks/common/registry.c). Wrappers in link order. */
size_t ls_wrap_count(void);
const struct ls_wrap *ls_wrap_at(size_t i);
const struct ls_wrap *ls_wrap_find(const char *name); /* NULL if unknown */
/* Writes "gcr, ..." (every wrapper's name) into buf; returns buf. */
char *ls_wrap_names(char *buf, size_t len);
/* An algorithm name or BASE+WRAPPER: the algorithm, or NULL and one line in
 * err naming the problem and the valid choices (no prefix: the caller adds
 * the variable or option it came from). ls_algo_find is the same without
 * the reason. */
const struct ls_algo *ls_algo_resolve(const char *name, char *err, size_t errlen);

#endif
