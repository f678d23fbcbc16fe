/*
 * tpclock.h - the time source of the time-published locks (mcs-tp, clh-tp):
 * He, Scherer, Scott, "Preemption Adaptivity in Time-Published Queue-Based
 * Spin Locks", TR 867, Rochester 2005
 * (../shared/papers/000_9c294dcad948dd76.txt), sections 1 and 2; mutexee
 * and the profiler use it too. The locks' thresholds are locks/tp/tp.h's.
 *
 * ls_tp_now() is the paper's gethrtime(): a cheap timestamp, in nanoseconds,
 * that threads on different cores can compare. It reads the TSC (rdtsc,
 * scaled to ns) when the CPU says the TSC is invariant, and
 * clock_gettime(CLOCK_MONOTONIC) otherwise; both count from the same epoch
 * as ls_now_ns() (see tpclock.c for the measurements and the checks).
 * LOCKSWAP_TP_CLOCK (ls_tp_clock_mode, a tunable of the TP locks): 0 TSC
 * when invariant, else clock_gettime; 1 always clock_gettime.
 */
#ifndef LS_TPCLOCK_H
#define LS_TPCLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lock.h"
#include "wait.h"

extern uint64_t ls_tp_clock_mode;
#define LS_TP_CLOCK_PARAM                                                                                    \
	{                                                                                                    \
		"LOCKSWAP_TP_CLOCK", "timestamps: 0 TSC if invariant, else clock_gettime; 1 clock_gettime",  \
		    &ls_tp_clock_mode, 0, 1                                                                  \
	}

/* Scale of the TSC, published once calibrated (tpclock.c). */
struct ls_tp_scale {
	uint64_t tsc0; /* TSC at the calibration point */
	uint64_t ns0;  /* CLOCK_MONOTONIC ns at the same point */
	uint64_t mult; /* ns per tick, as a 32.32 fixed-point number */
};
extern const struct ls_tp_scale *_Atomic ls_tp_scale;
uint64_t ls_tp_now_slow(void);

static inline uint64_t ls_tp_now(void)
{
#if defined(__x86_64__)
	/* acquire: pairs with the release store that publishes the scale */
	const struct ls_tp_scale *s = atomic_load_explicit(&ls_tp_scale, memory_order_acquire);
	if (LS_LIKELY(s != NULL)) {
		/* Signed: a core whose TSC reads a few ticks behind tsc0
		 * gives a time a few ns before ns0, not 2^64. */
		int64_t d = (int64_t)(__builtin_ia32_rdtsc() - s->tsc0);
		return s->ns0 + (uint64_t)(((__int128)d * (__int128)s->mult) >> 32);
	}
#endif
	return ls_tp_now_slow();
}

/* True if a timestamp published at t looks older than `delay` at `now`.
 * A time ahead of `now` (clock skew between cores) is fresh. A waiter asleep
 * in the kernel (LOCKSWAP_WAIT=park) publishes nothing, so its time goes
 * stale like a preempted waiter's: by the paper's rule it is not running. */
static inline bool ls_tp_older(uint64_t t, uint64_t now, uint64_t delay)
{
	return (int64_t)(now - t) > (int64_t)delay;
}

/* "tsc", "clock_gettime", or "calibrating" (TSC pending, clock_gettime
 * meanwhile); and the TSC frequency in kHz once calibrated (else 0). */
const char *ls_tp_clock_source(void);
uint64_t ls_tp_tsc_khz(void);
/* Whether the CPU and kernel say the TSC is invariant (cpuid 0x80000007
 * EDX bit 8, and constant_tsc and nonstop_tsc in /proc/cpuinfo). */
bool ls_tp_tsc_invariant(void);

#endif
