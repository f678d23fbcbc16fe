/*
 * auto_table.c - `auto`'s choice among its regimes as the lock itself runs
 * it (locks/adaptive/auto.c, issue 33): the records' table, the holder's
 * steps every 16th contended event, the release count in `stat`, the regime
 * written back to the mutex, under a fake clock, so that each regime's rate
 * is made up by the test and nothing depends on timing.
 *
 *   auto_table [-W SECONDS(120)]
 *
 * Linked with -Wl,--wrap=ls_now_ns against build/liblocks-inject.a
 * (mk/default.mk): auto.c's calls of the clock come here (wait.c's own do
 * not: they are inside its object file, and the test uses no deadline and
 * the yield policy, which never sleeps on a futex). The fake clock moves
 * only when the test says: at every release (LS_POINT_RELEASED, after the
 * release store) by DT[regime in force] ns, and by 1 ns at every reading
 * (so that a napping head, which waits for the clock, cannot wait for ever
 * once the others are done; at most a few ns a release, under 0.5% of a
 * DT). So a regime's rate, releases over fake time, is 1e9 / DT[regime]
 * whatever the scheduler does, and how many releases a decision takes is
 * all that the machine's load changes. The regime in force is read from the
 * mutex's `stat` word (auto.c's header: the second 32-bit word of the
 * state, bits 0-1).
 *
 * Three threads lock and unlock one mutex; a holder waits (yielding, at
 * most PATIENCE times) until another thread is waiting (a test point of a
 * spinning, queued or napping waiter), so that nearly every release is a
 * contended event. 4 phases of PHASE releases each, the rates (DT, ns per
 * release) changing between them; LOCKSWAP_AUTO_EXPLORE 3 (a trial of each
 * regime at least every 8 windows) and windows of 40 us (about 40
 * releases). In the second half of each phase, the regime that must be
 * chosen holds at least 70% of the releases (the rest: trials):
 *   sleep  SLEEP 1000, SPIN 1500, BATCH 1500: the mutex stays in SLEEP,
 *          where it starts
 *   spin   SLEEP 1000, SPIN 600: it moves to SPIN
 *   back   SLEEP 600, SPIN 1500 (spinning loses): back to SLEEP
 *   batch  SLEEP 1000, BATCH 600: it moves to BATCH
 * With LOCKSWAP_AUTO_REGIME=1 (no choice) the spin phase fails; so does any
 * choice that cannot leave home or picks the slower regime.
 * Output: "auto_table: OK ..." per phase and exit 0; "auto_table: FAIL
 * ..." and exit 1; bad usage one line and exit 2.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OPT_PROG "auto_table"
#include "fail.h"
#include "opts.h"

#define THREADS 3
#define PHASES 4
#define WINDOW 40000u /* ns: about 40 releases */
#define PHASE 2400ul  /* releases: about 60 windows */
#define PATIENCE 1000 /* yields a holder waits for a waiter */
#define NREG 3

static const char *const regime_name[NREG] = {"SLEEP", "SPIN", "BATCH"};
static const struct {
	const char *name;
	unsigned dt[NREG]; /* fake ns per release in each regime */
	unsigned want;	   /* the regime that must be chosen */
	unsigned from;	   /* releases of the phase from which it is counted (of PHASE) */
	double share;	   /* its least share of those releases */
} phases[PHASES] = {
    {"sleep", {1000, 1500, 1500}, 0, PHASE / 2, 0.70},
    {"spin", {1000, 600, 1500}, 1, PHASE / 2, 0.70},
    {"back", {600, 1500, 1500}, 0, PHASE / 2, 0.70},
    {"batch", {1000, 1500, 600}, 2, PHASE / 2, 0.70},
};

static const struct ls_algo *algo;
static void *L;
static _Atomic uint64_t fake;	  /* the fake clock (ns) */
static _Atomic unsigned long rel; /* releases so far */
static _Atomic unsigned long in[PHASES][NREG];
static _Atomic int stop;
static _Atomic int bad_regime = -1;
static _Atomic unsigned long waits; /* steps of waiting threads */

uint64_t __real_ls_now_ns(void);
uint64_t __wrap_ls_now_ns(void);
uint64_t __wrap_ls_now_ns(void)
{
	return atomic_fetch_add(&fake, 1) + 1;
}

static unsigned regime_now(void)
{
	/* auto.c's state: word, then stat, whose bits 0-1 are the regime */
	return atomic_load_explicit((_Atomic uint32_t *)L + 1, memory_order_relaxed) & 3u;
}

void ls_test_point(enum ls_test_point id)
{
	if (id == LS_POINT_SPIN || id == LS_POINT_QUEUED || id == LS_POINT_NAP)
		atomic_fetch_add(&waits, 1);
	if (id != LS_POINT_RELEASED)
		return;
	unsigned long n = atomic_fetch_add(&rel, 1);
	unsigned p = (unsigned)(n / PHASE);
	if (p >= PHASES) {
		atomic_store(&stop, 1);
		return;
	}
	unsigned r = regime_now();
	if (r >= NREG) {
		atomic_store(&bad_regime, (int)r);
		return;
	}
	atomic_fetch_add(&fake, phases[p].dt[r]);
	if (n % PHASE >= phases[p].from)
		atomic_fetch_add(&in[p][r], 1);
}

static void set_param(const char *env, uint64_t v)
{
	for (const struct ls_param *p = algo->params; p && p->env; p++)
		if (!strcmp(p->env, env)) {
			*p->value = v;
			return;
		}
	fail("auto has no tunable %s", env);
}

static void *worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		algo->lock(L);
		/* contended, every time: the holder waits (a while, not for
		 * ever: the others may be done) until another thread waits */
		unsigned long w = atomic_load(&waits);
		for (int i = 0; i < PATIENCE && atomic_load(&waits) == w && !atomic_load(&stop); i++)
			sched_yield();
		algo->unlock(L);
	}
	return NULL;
}

static void watchdog(int sig)
{
	(void)sig;
	char buf[160];
	int n = snprintf(buf, sizeof buf, "auto_table: FAIL watchdog: %lu releases only\n",
			 (unsigned long)atomic_load(&rel));
	if (write(1, buf, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

int main(int argc, char **argv)
{
	int c, secs = 120;
	const char *usage = "usage: auto_table [-W SECONDS]";
	while ((c = getopt(argc, argv, "W:")) != -1) {
		if (c == 'W')
			secs = (int)opt_number("W", optarg, 1, 3600);
		else
			opt_error("%s", usage);
	}
	if (optind != argc)
		opt_error("%s", usage);
	fail_prefix = "auto_table: FAIL ";
	/* yield: no futex waits, whose deadlines would be read on the real
	 * clock (wait.c) */
	ls_wait_cfg.policy = LS_WAIT_YIELD;
	algo = opt_algo("auto");
	opt_params(algo);
	set_param("LOCKSWAP_AUTO_WINDOW_NS", WINDOW);
	set_param("LOCKSWAP_AUTO_EXPLORE", 3);
	set_param("LOCKSWAP_AUTO_NAP_NS", 64);
	atomic_store(&fake, __real_ls_now_ns());
	if (!(L = opt_state(algo)))
		fail("out of memory");
	if (regime_now() != 0)
		fail("a fresh mutex is in regime %u, not SLEEP", regime_now());
	signal(SIGALRM, watchdog);
	alarm((unsigned)secs);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			fail("pthread_create failed");
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (atomic_load(&bad_regime) >= 0)
		fail("the mutex's stat held regime %d", atomic_load(&bad_regime));
	int failed = 0;
	for (unsigned p = 0; p < PHASES; p++) {
		unsigned long all = 0, got = atomic_load(&in[p][phases[p].want]);
		for (unsigned r = 0; r < NREG; r++)
			all += atomic_load(&in[p][r]);
		double share = all ? (double)got / (double)all : 0;
		printf("auto_table: %s %s: %s in %.1f%% of %lu releases (SLEEP %lu, SPIN %lu, BATCH %lu)\n",
		       share >= phases[p].share ? "OK" : "FAIL", phases[p].name, regime_name[phases[p].want],
		       share * 100, all, (unsigned long)atomic_load(&in[p][0]),
		       (unsigned long)atomic_load(&in[p][1]), (unsigned long)atomic_load(&in[p][2]));
		if (share < phases[p].share)
			failed = 1;
	}
	return failed;
}
