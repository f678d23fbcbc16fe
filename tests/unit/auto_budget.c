/*
 * auto_budget.c - the spin budget that `auto` learns per mutex (issue 21,
 * item 1; locks/adaptive/auto.c, "the spin budget, learned per mutex"):
 * it shrinks when holders keep the lock past a waiter's budget (they block
 * or yield inside the critical section), and when the released lock is
 * taken again at once by a running thread (a hot lock); it grows back when
 * hand-offs are short again.
 *
 *   auto_budget block|hot [-w spin|yield|park] [-W SECONDS(30)]
 *
 * Links build/liblocks-tpoint.a (mk/default.mk): LS_TEST_POINT(id) calls
 * ls_test_point() below, so the test counts the waiter's steps and makes
 * every ordering by events, none by a clock. Two threads: the holder H
 * (main) and the waiter W. A round: H takes the lock, W calls lock() and
 * finds it held (one contended arrival: W's slow path), H releases when
 * the round's script says, W takes the lock and releases it. Counted in W:
 * spin steps on the held lock (LS_POINT_SPIN) and, once queued, steps of
 * the waiting policy before it sleeps (LS_POINT_QUEUED: under park, the
 * yields plus one). LOCKSWAP_SPIN is 256, LOCKSWAP_YIELD 64,
 * LOCKSWAP_AUTO_PROBE 4: W's arrivals 4, 8, 12... are probes, which spin the
 * whole budget and watch a lock they saw released (LS_POINT_WATCH).
 * Scripts of a round:
 *   long   H releases once W has queued (under park: once W is asleep in
 *          futex(2)): a probe or a spinner spends its whole budget, as
 *          behind a holder that blocks inside the critical section.
 *   short  H releases at W's first spin step, and W takes the lock (a probe
 *          watches it first: H leaves it free); if W does not spin, H
 *          releases once W has queued.
 *   hot    as short, but when a probe watches the released lock, H takes it
 *          again, and releases once W has queued.
 * Cases:
 *   block  40 long rounds: the first arrival spins all 256 steps (and under
 *          park yields 64 times before it sleeps); the arrivals that are not
 *          probes spin fewer and fewer steps, down to none (under park then
 *          sleeping without a yield), and stay there; probes spin all 256.
 *          Then short rounds until an arrival that is not a probe spins
 *          again (at most 40), and short rounds to settle (16); then one
 *          long round must spin all 256 steps: the budget grew back.
 *   hot    the same with hot rounds instead of long ones: no arrival ever
 *          spends its budget (W takes the lock at its first step, or a probe
 *          gives up on a hot lock), and still the arrivals that are not
 *          probes stop spinning; then short rounds bring the budget back.
 * With LOCKSWAP_AUTO_ADAPT=0 both cases fail (the budget never shrinks):
 * tests/auto.bats checks that too. A hang is caught by the watchdog (-W).
 *
 * Output: "auto_budget: OK ..." and exit 0; "auto_budget: FAIL ..." and
 * exit 1; bad usage one line and exit 2.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define OPT_PROG "auto_budget"
#include "fail.h"
#include "opts.h"
#include "proctask.h"

#define SPIN 256u
#define YIELD 64u
#define PROBE 4u
#define MAXR 256

enum script { LONG, SHORT, HOT };
static const char *const script_names[] = {"long", "short", "hot"};

static const struct ls_algo *algo;
static void *L;
static const char *volatile phase = "start";

/* W's side, reset by H before each round. */
static _Thread_local bool is_w;
static _Atomic pid_t w_tid;
static _Atomic int script;
static _Atomic unsigned spins, qsteps;
static _Atomic int queued, want_release, want_relock, watched;
/* H <-> W round hand-shake */
static _Atomic int go, done, quit;

/* The lock's word (auto.c: bit 0 LOCKED). */
static bool locked(void)
{
	return atomic_load_explicit((_Atomic uint32_t *)L, memory_order_acquire) & 1u;
}

static void relax(void)
{
	sched_yield();
}

void ls_test_point(enum ls_test_point id)
{
	if (!is_w)
		return;
	switch (id) {
	case LS_POINT_SPIN:
		if (atomic_fetch_add(&spins, 1) == 0 && atomic_load(&script) != LONG) {
			/* the first spin step: H releases, W goes on once it has */
			atomic_store(&want_release, 1);
			while (locked())
				relax();
		}
		break;
	case LS_POINT_QUEUED:
		atomic_fetch_add(&qsteps, 1);
		atomic_store(&queued, 1);
		break;
	case LS_POINT_WATCH:
		atomic_store(&watched, 1);
		if (atomic_load(&script) == HOT) {
			/* H takes the released lock again under the probe's eyes */
			atomic_store(&want_relock, 1);
			while (!locked())
				relax();
		}
		break;
	default:
		break;
	}
}

static void *w_main(void *arg)
{
	(void)arg;
	is_w = true;
	atomic_store(&w_tid, (pid_t)syscall(SYS_gettid));
	for (int r = 1;; r++) {
		while (atomic_load(&go) != r)
			if (atomic_load(&quit))
				return NULL;
			else
				relax();
		algo->lock(L);
		algo->unlock(L);
		atomic_store(&done, r);
	}
}

/* H waits until W is queued and, under park, asleep in futex(2) (its count
 * of queued steps is then final for this sleep). */
static void await_queued(void)
{
	while (!atomic_load(&queued))
		relax();
	if (ls_wait_cfg.policy == LS_WAIT_PARK)
		while (!proctask_in_futex(atomic_load(&w_tid)))
			relax();
}

struct round {
	unsigned spins, qsteps; /* qsteps: before W first slept (park) or was let go */
	bool probe, watched;
};

/* One round of the given script; returns what W did. */
static struct round play(int r, enum script sc)
{
	struct round out = {0};
	atomic_store(&script, sc);
	atomic_store(&spins, 0);
	atomic_store(&qsteps, 0);
	atomic_store(&queued, 0);
	atomic_store(&want_release, 0);
	atomic_store(&want_relock, 0);
	atomic_store(&watched, 0);
	algo->lock(L);
	phase = "waiting for W to spin or queue";
	atomic_store(&go, r);
	if (sc == LONG) {
		await_queued();
		out.qsteps = atomic_load(&qsteps);
		algo->unlock(L);
	} else {
		while (!atomic_load(&want_release) && !atomic_load(&queued))
			relax();
		if (atomic_load(&want_release)) {
			algo->unlock(L);
			if (sc == HOT) {
				phase = "waiting for W to take the lock or watch it";
				while (!atomic_load(&want_relock) && atomic_load(&done) != r)
					relax();
				if (atomic_load(&want_relock)) {
					algo->lock(L);
					phase = "waiting for W to queue after the hot lock";
					await_queued();
					algo->unlock(L);
				}
			}
		} else {
			await_queued();
			out.qsteps = atomic_load(&qsteps);
			algo->unlock(L);
		}
	}
	phase = "waiting for W to finish its round";
	while (atomic_load(&done) != r)
		relax();
	out.spins = atomic_load(&spins);
	out.watched = atomic_load(&watched);
	out.probe = r % PROBE == 0;
	return out;
}

static void watchdog(int sig)
{
	(void)sig;
	char buf[256];
	int n = snprintf(buf, sizeof buf, "auto_budget: FAIL watchdog: stuck %s\n", phase);
	if (write(1, buf, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

static const char *policy;

/* The rounds of one case: `bad` rounds that should shrink the budget to
 * nothing, then short rounds that should bring it back. */
static void run(enum script bad)
{
	static struct round rs[MAXR];
	int r = 0, zero_at = 0;
	char what[64];
	snprintf(what, sizeof what, "wait=%s %s rounds", policy, script_names[bad]);
	for (int i = 0; i < 40; i++) {
		r++;
		rs[r] = play(r, bad);
		struct round *x = &rs[r];
		if (r == 1) {
			if (bad == LONG ? x->spins != SPIN : !x->spins)
				fail("%s: the first arrival spun %u steps, expected %s", what, x->spins,
				     bad == LONG ? "all 256" : "some");
			if (bad == LONG && ls_wait_cfg.policy == LS_WAIT_PARK && x->qsteps != YIELD + 1)
				fail("%s: the first queued wait took %u steps before sleeping, expected %u "
				     "yields "
				     "and the sleep",
				     what, x->qsteps, YIELD);
		}
		if (bad == HOT && x->spins == SPIN && !x->probe)
			fail("%s: round %d spent the whole budget in a hot round", what, r);
		if (x->probe) {
			if (x->spins != SPIN && bad == LONG)
				fail("%s: probe round %d spun %u steps, expected all %u", what, r, x->spins,
				     SPIN);
			continue;
		}
		int prev = r - 1;
		while (prev > 0 && rs[prev].probe)
			prev--;
		if (bad == LONG && prev > 0 && x->spins > rs[prev].spins)
			fail("%s: round %d spun %u steps, more than round %d's %u: the budget grew while the "
			     "holder kept the lock",
			     what, r, x->spins, prev, rs[prev].spins);
		if (x->spins == 0 && !zero_at)
			zero_at = r;
		if (zero_at && x->spins)
			fail("%s: round %d spun %u steps after round %d spun none", what, r, x->spins,
			     zero_at);
	}
	if (!zero_at)
		fail("%s: after %d rounds an arrival that is not a probe still spins %u steps (first: %u): "
		     "the "
		     "budget did not shrink",
		     what, r, rs[r - (rs[r].probe ? 1 : 0)].spins, rs[1].spins);
	if (ls_wait_cfg.policy == LS_WAIT_PARK && bad == LONG && rs[r - 1].qsteps != 1)
		fail(
		    "%s: with no budget left the waiter took %u steps before sleeping, expected none but the "
		    "sleep",
		    what, rs[r - 1].qsteps);
	/* short rounds: the probes see short hand-offs and the budget grows back */
	int back_at = 0;
	for (int i = 0; i < 40 && !back_at; i++) {
		r++;
		rs[r] = play(r, SHORT);
		if (!rs[r].probe && rs[r].spins)
			back_at = r;
	}
	if (!back_at)
		fail("wait=%s: after %s rounds, 40 short rounds did not bring the budget back", policy,
		     script_names[bad]);
	for (int i = 0; i < 16; i++) {
		r++;
		rs[r] = play(r, SHORT);
	}
	do
		r++;
	while (r % PROBE == 0);
	if ((rs[r] = play(r, LONG)).spins != SPIN)
		fail("wait=%s: after the short rounds a waiter spins %u steps, expected the whole budget %u "
		     "again",
		     policy, rs[r].spins, SPIN);
	printf("auto_budget: OK wait=%s: %s rounds: spinning stopped at round %d (first %u steps); short "
	       "rounds: back at round %d, all %u steps at round %d\n",
	       policy, script_names[bad], zero_at, rs[1].spins, back_at, SPIN, r);
}

int main(int argc, char **argv)
{
	int c, secs = 30;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	if (argc < 2)
		opt_error("usage: auto_budget block|hot [-w spin|yield|park] [-W SECONDS]");
	enum script bad = opt_choose("", "case", argv[1], (const char *[]){"block", "hot"}, 2) ? HOT : LONG;
	optind = 2;
	while ((c = getopt(argc, argv, "w:W:")) != -1) {
		if (c == 'w')
			opt_policy(optarg);
		else if (c == 'W')
			secs = (int)opt_number("W", optarg, 1, 3600);
		else
			opt_error("usage: auto_budget block|hot [-w spin|yield|park] [-W SECONDS]");
	}
	policy = opt_policy_name(ls_wait_cfg.policy);
	fail_prefix = "auto_budget: FAIL ";
	algo = opt_algo("auto");
	ls_wait_cfg.spin = SPIN;
	ls_wait_cfg.yield = YIELD;
	opt_params(algo); /* LOCKSWAP_AUTO_ADAPT=0 and friends, from the environment */
	for (const struct ls_param *p = algo->params; p && p->env; p++) {
		if (!strcmp(p->env, "LOCKSWAP_AUTO_PROBE"))
			*p->value = PROBE;
		if (!strcmp(p->env, "LOCKSWAP_AUTO_HOT_NS"))
			*p->value = 1000; /* a short watch: nothing else touches the lock */
		if (!strcmp(p->env, "LOCKSWAP_AUTO_FAIR_NS") || !strcmp(p->env, "LOCKSWAP_AUTO_PASSES"))
			*p->value = p->max; /* no hand-offs: W competes for the lock it is woken to */
	}
	if (!(L = opt_state(algo)))
		fail("out of memory");
	signal(SIGALRM, watchdog);
	alarm((unsigned)secs);
	pthread_t w;
	if (pthread_create(&w, NULL, w_main, NULL))
		fail("pthread_create failed");
	run(bad);
	atomic_store(&quit, 1);
	pthread_join(w, NULL);
	return 0;
}
