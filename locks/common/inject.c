/*
 * inject.c - fault injection for the stress build (-DLS_FAULT_INJECT).
 *
 * LS_INJECT() sits between the steps of every acquire, timeout and release
 * path. In the stress build it draws from a per-thread xorshift generator
 * and, with probabilities set by LOCKSWAP_INJECT (percent, default 5), either
 * spins for a random number of cpu_relax, or yields the processor. The seed
 * comes from LOCKSWAP_SEED (default 1) mixed with a per-thread counter, so a
 * failing seed can be replayed (as far as the scheduler allows). ls_inject
 * is weak: a unit test may replace it in its inject build, to stop a thread
 * at a named step (tests/unit/gcr.c, misuse-window).
 * In the ordinary build this file is empty.
 *
 * The instrumented archive (build/liblocks-inject.a) is also the
 * test-point build (-DLS_TEST_POINTS, lock.h): one build of the algorithms
 * for both, not two. A program that stops threads at test points defines
 * ls_test_point() and links with ls_inject sent to ls_inject_none (the
 * Makefile's TPOINT_LINK), so nothing is injected there; a stress program
 * defines no test point and gets the weak one below, which does nothing.
 */
#ifdef LS_FAULT_INJECT
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "lock.h"
#include "wait.h"

static _Atomic unsigned next_thread;
static __thread uint64_t rng;
static int percent = -1;
static uint64_t seed;

static uint64_t xorshift(void)
{
	uint64_t x = rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng = x;
}

__attribute__((weak)) void ls_inject(void)
{
	if (LS_UNLIKELY(percent < 0)) {
		const char *p = getenv("LOCKSWAP_INJECT"), *s = getenv("LOCKSWAP_SEED");
		seed = s ? strtoull(s, NULL, 10) : 1;
		percent = p ? atoi(p) : 5; /* benign race: every thread computes the same */
	}
	/* relaxed: a counter; each thread gets a distinct seed */
	if (LS_UNLIKELY(rng == 0))
		rng = (seed + 1) * 0x9e3779b97f4a7c15ull ^
		      (atomic_fetch_add_explicit(&next_thread, 1, memory_order_relaxed) + 1) *
			  0xbf58476d1ce4e5b9ull;
	uint64_t r = xorshift();
	if ((int)(r % 100) >= percent)
		return;
	if (r & 0x100) {
		sched_yield();
	} else {
		unsigned n = (unsigned)(r >> 16) % 2000;
		while (n--)
			ls_cpu_relax();
	}
}

/* What ls_inject is for the test-point programs (the Makefile's
 * TPOINT_LINK: --defsym=ls_inject=ls_inject_none). */
void ls_inject_none(void);
void ls_inject_none(void)
{
}

#ifdef LS_TEST_POINTS
/* For programs that stop no thread at a test point. */
__attribute__((weak)) void ls_test_point(enum ls_test_point id)
{
	(void)id;
}
#endif
#endif
