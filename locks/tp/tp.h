/*
 * tp.h - what the time-published locks (mcs_tp.c, clh_tp.c) share: their
 * thresholds, written once. He, Scherer, Scott, "Preemption Adaptivity in
 * Time-Published Queue-Based Spin Locks", TR 867, Rochester 2005
 * (../shared/papers/000_9c294dcad948dd76.txt), the constants of appendices
 * B.2.1 and B.3.1; the clock they compare is locks/common/tpclock.h's.
 *
 * The tunables (ls_params of both locks; tp.c has the defaults and why):
 *   LOCKSWAP_TP_MAX_CS_NS       MAXIMUM_CS_TIME: a holder whose critical
 *                               section is older seems preempted; a waiter
 *                               that fails or times out then yields
 *   LOCKSWAP_TP_UPDATE_DELAY_NS UPDATE_DELAY: a waiter whose published time
 *                               is older seems preempted and is passed over
 *   LOCKSWAP_TP_PATIENCE_NS     patience of one attempt of a blocking
 *                               acquisition (the paper's T); lock() retries
 *   LOCKSWAP_TP_CLOCK           the clock (tpclock.h)
 *   LOCKSWAP_TP_SPIN_FACTOR     a waiter spins this many times the waiting
 *                               policy's budget (LOCKSWAP_SPIN) before it
 *                               yields or parks (ls_tp_spin)
 * and mcs-tp's own LOCKSWAP_TP_TREADMILL (MAX_THREAD_NUM, mcs_tp.c).
 */
#ifndef LS_TP_TP_H
#define LS_TP_TP_H

#include <stdint.h>

#include "lock.h"
#include "tpclock.h"
#include "wait.h"

extern uint64_t ls_tp_max_cs_ns, ls_tp_update_delay_ns, ls_tp_patience_ns, ls_tp_spin_factor;

/* The spin budget of a TP waiter: LOCKSWAP_TP_SPIN_FACTOR x LOCKSWAP_SPIN
 * steps (for ls_spin_step_n). */
static inline unsigned ls_tp_spin(void)
{
	uint64_t n = (uint64_t)ls_wait_cfg.spin * ls_tp_spin_factor;
	return n < UINT32_MAX ? (unsigned)n : UINT32_MAX;
}

/* The ls_params both locks list (each adds its own, then {0}). */
#define LS_TP_PARAMS                                                                                         \
	LS_TP_MAX_CS_PARAM, LS_TP_UPDATE_DELAY_PARAM, LS_TP_PATIENCE_PARAM, LS_TP_CLOCK_PARAM,               \
	    LS_TP_SPIN_FACTOR_PARAM
#define LS_TP_MAX_CS_PARAM                                                                                   \
	{                                                                                                    \
		"LOCKSWAP_TP_MAX_CS_NS", "MAXIMUM_CS_TIME: a holder inside longer seems preempted (ns)",     \
		    &ls_tp_max_cs_ns, 1000, 1000000000                                                       \
	}
#define LS_TP_UPDATE_DELAY_PARAM                                                                             \
	{                                                                                                    \
		"LOCKSWAP_TP_UPDATE_DELAY_NS",                                                               \
		    "UPDATE_DELAY: a waiter whose timestamp is older seems preempted (ns)",                  \
		    &ls_tp_update_delay_ns, 1000, 1000000000                                                 \
	}
#define LS_TP_PATIENCE_PARAM                                                                                 \
	{                                                                                                    \
		"LOCKSWAP_TP_PATIENCE_NS", "patience of one attempt of a blocking acquisition (ns)",         \
		    &ls_tp_patience_ns, 1000, 1000000000                                                     \
	}
#define LS_TP_SPIN_FACTOR_PARAM                                                                              \
	{                                                                                                    \
		"LOCKSWAP_TP_SPIN_FACTOR",                                                                   \
		    "a waiter spins this many times LOCKSWAP_SPIN before it yields or parks",                \
		    &ls_tp_spin_factor, 1, 1u << 20                                                          \
	}

#endif
