/*
 * auto_regime.c - what each of `auto`'s regimes makes a waiter do
 * (locks/adaptive/auto.c, issue 33), and the flush that a change to SPIN
 * makes: deterministic, by events, through the test points.
 *
 *   auto_regime sleep|spin|batch|flush [-w spin|yield|park] [-W SECONDS(60)]
 *
 * Links build/liblocks-inject.a (mk/default.mk): LS_TEST_POINT(id) calls
 * ls_test_point() below, which counts the waiter W's steps. Two threads: the
 * holder H (main) and W. LOCKSWAP_SPIN is 64, LOCKSWAP_YIELD 16.
 *   sleep  (LOCKSWAP_AUTO_REGIME=1) H holds; W arrives: W must not spin on
 *          the word (no LS_POINT_SPIN) and, under park, must sleep at once
 *          (one LS_POINT_QUEUED step: the sleep, no yield). H releases; W
 *          gets the lock.
 *   spin   (=2) the same, but W must spin all 64 steps on the word, and
 *          under park yield 16 times before it sleeps (17 queued steps).
 *   batch  (=3; LOCKSWAP_AUTO_NAP_NS 300 ms) W queues and sleeps; H releases
 *          (which wakes W, the head) and takes the lock again before W looks
 *          (rounds where W wins that race are played again). W must find it
 *          taken and nap (LS_POINT_NAP). H then releases and re-takes the
 *          lock 1000 times: none of these releases may wake W, which leaves
 *          its nap only when the nap is over (a futex timeout never ends
 *          early, so leaving before 300 ms means a release woke it). Then H
 *          releases for good and W must take the free lock after its nap (no
 *          lost wake-up: a napping head wakes itself). Park only.
 *   flush  (=0, choosing; LOCKSWAP_AUTO_WINDOW_NS 1 ms) W queues and sleeps
 *          in SLEEP, the regime a mutex starts in; H releases and re-takes
 *          the lock, the contended events step the choice, whose first trial
 *          is SPIN: the change must flush the list, and W arrive again
 *          (LS_POINT_REARRIVE) and spin (LS_POINT_SPIN) while still in the
 *          same lock() call. Rounds where W gets the lock first (most: each
 *          release wakes it, and it may win) are played again, a fresh mutex
 *          each, up to 5000.
 * Output: "auto_regime: OK ..." and exit 0; "auto_regime: FAIL ..." and exit
 * 1; bad usage one line and exit 2. A hang is caught by the watchdog (-W).
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

#define OPT_PROG "auto_regime"
#include "fail.h"
#include "opts.h"
#include "proctask.h"

#define SPIN 64u
#define YIELD 16u
#define NAP_NS 300000000ull

static const struct ls_algo *algo;
static void *L;
static const char *volatile phase = "start";

static _Thread_local bool is_w;
static _Atomic pid_t w_tid;
static _Atomic unsigned spins, qsteps, naps, rearrived, spins_after;
static _Atomic uint64_t nap_at;	     /* when W began its last nap */
static _Atomic uint64_t early_leave; /* ns a nap ended before its time (0: none) */
static _Atomic int go, done, got, quit;
static _Atomic bool hold_w, relocked; /* batch: W looks once H has the lock again */

static void relax(void)
{
	sched_yield();
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

/* A nap that ends: it must have lasted NAP_NS, unless the lock is W's. */
static void nap_over(void)
{
	uint64_t at = atomic_load(&nap_at);
	if (at) {
		uint64_t now = ls_now_ns();
		if (now - at < NAP_NS && !atomic_load(&early_leave))
			atomic_store(&early_leave, NAP_NS - (now - at));
		atomic_store(&nap_at, 0);
	}
}

void ls_test_point(enum ls_test_point id)
{
	if (!is_w)
		return;
	switch (id) {
	case LS_POINT_SPIN:
		atomic_fetch_add(&spins, 1);
		if (atomic_load(&rearrived))
			atomic_fetch_add(&spins_after, 1);
		break;
	case LS_POINT_QUEUED:
		atomic_fetch_add(&qsteps, 1);
		break;
	case LS_POINT_WOKEN:
		/* batch: W looks only once H has taken the lock again */
		while (atomic_load(&hold_w) && !atomic_load(&relocked))
			sched_yield();
		break;
	case LS_POINT_NAP:
		nap_over();
		atomic_fetch_add(&naps, 1);
		atomic_store(&nap_at, ls_now_ns());
		break;
	case LS_POINT_REARRIVE:
		atomic_store(&rearrived, 1);
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
		nap_over();
		atomic_store(&got, r);
		algo->unlock(L);
		atomic_store(&done, r);
	}
}

static int round_no;

/* Starts a round: W calls lock() on the lock H holds. */
static void start_round(void)
{
	atomic_store(&spins, 0);
	atomic_store(&qsteps, 0);
	atomic_store(&naps, 0);
	atomic_store(&rearrived, 0);
	atomic_store(&spins_after, 0);
	atomic_store(&nap_at, 0);
	atomic_store(&early_leave, 0);
	round_no++;
	atomic_store(&go, round_no);
}

/* W is queued and, under park, asleep in futex(2). */
static bool w_asleep(void)
{
	return proctask_in_futex(atomic_load(&w_tid));
}

static void await_w_done(void)
{
	phase = "waiting for W to finish its round";
	while (atomic_load(&done) != round_no)
		relax();
}

static void case_fixed(unsigned regime)
{
	const char *name = regime == 1 ? "sleep" : "spin";
	set_param("LOCKSWAP_AUTO_REGIME", regime);
	algo->lock(L);
	start_round();
	phase = "waiting for W to queue";
	/* W's wait ends in a sleep under park; under yield and spin it keeps
	 * stepping: wait until it has taken more steps than a sleep would */
	if (ls_wait_cfg.policy == LS_WAIT_PARK)
		while (!w_asleep())
			relax();
	else
		while (atomic_load(&qsteps) < 2 * (SPIN + YIELD) + 2)
			relax();
	unsigned s = atomic_load(&spins), q = atomic_load(&qsteps);
	algo->unlock(L);
	await_w_done();
	if (atomic_load(&got) != round_no)
		fail("%s: W did not get the lock", name);
	unsigned want_s = regime == 1 ? 0 : SPIN;
	if (s != want_s)
		fail("%s: W spun %u steps on the held lock before it queued; expected %u", name, s, want_s);
	if (ls_wait_cfg.policy == LS_WAIT_PARK) {
		unsigned want_q = regime == 1 ? 1 : YIELD + 1;
		if (q != want_q)
			fail("%s: W took %u queued steps before it slept; expected %u", name, q, want_q);
	}
	printf("auto_regime: OK %s wait=%s: W spun %u steps on the word, %u queued steps before %s\n", name,
	       opt_policy_name(ls_wait_cfg.policy), s, q,
	       ls_wait_cfg.policy == LS_WAIT_PARK ? "it slept" : "H released");
}

static void case_batch(void)
{
	set_param("LOCKSWAP_AUTO_REGIME", 3);
	set_param("LOCKSWAP_AUTO_NAP_NS", NAP_NS);
	/* No hand-off by age: W may sleep longer than the 1 ms bound before H
	 * sees it asleep (a busy machine), and the release would then hand it
	 * the lock every round, which is the bound's job, not the race's. */
	set_param("LOCKSWAP_AUTO_FAIR_NS", 600000000000ull);
	for (int attempt = 1;; attempt++) {
		if (attempt > 50)
			fail("batch: in 50 rounds W always won the lock at its wake-up");
		algo->lock(L);
		start_round();
		phase = "waiting for W to queue and sleep";
		while (!w_asleep())
			relax();
		/* release (wakes W, the head) and take the lock again before W
		 * looks (its LS_POINT_WOKEN waits for it: on a busy machine the
		 * wake-up would otherwise run W first, on this CPU) */
		atomic_store(&relocked, false);
		atomic_store(&hold_w, true);
		algo->unlock(L);
		algo->lock(L);
		atomic_store(&relocked, true);
		phase = "waiting for W to look and nap";
		while (!atomic_load(&naps) && atomic_load(&got) != round_no)
			relax();
		if (atomic_load(&got) == round_no) {
			/* W won the race: play again */
			algo->unlock(L);
			await_w_done();
			continue;
		}
		phase = "waiting for W to sleep in its nap";
		while (!w_asleep() && !atomic_load(&early_leave) && atomic_load(&naps) == 1)
			relax();
		for (int i = 0; i < 1000; i++) {
			algo->unlock(L);
			algo->lock(L);
		}
		uint64_t early = atomic_load(&early_leave);
		if (early)
			fail("batch: W left its nap %.1f ms early while H released and re-took the lock: a "
			     "release woke the napping head",
			     (double)early / 1e6);
		if (atomic_load(&got) == round_no)
			fail("batch: W got the lock H holds");
		unsigned n = atomic_load(&naps);
		algo->unlock(L); /* for good: W must take it after its nap */
		await_w_done();
		if (atomic_load(&early_leave))
			fail("batch: W left a nap early");
		printf("auto_regime: OK batch wait=park: 1000 releases did not wake the napping head (%u "
		       "nap%s); it took the free lock after its nap (round %d)\n",
		       n, n == 1 ? "" : "s", attempt);
		return;
	}
}

static void case_flush(void)
{
	set_param("LOCKSWAP_AUTO_REGIME", 0);
	set_param("LOCKSWAP_AUTO_WINDOW_NS", 1000000);
	for (int attempt = 1;; attempt++) {
		if (attempt > 5000)
			fail("flush: in 5000 rounds W always got the lock before the first change of regime");
		/* a fresh mutex: it starts in SLEEP with a fresh record */
		memset(L, 0, algo->state_size);
		algo->lock(L);
		start_round();
		phase = "waiting for W to queue and sleep";
		while (!w_asleep())
			relax();
		if (atomic_load(&spins))
			fail("flush: W spun %u steps arriving in SLEEP", atomic_load(&spins));
		phase = "releasing and re-taking until W arrives again";
		uint64_t end = ls_now_ns() + 5000000000ull;
		while (!atomic_load(&rearrived) && atomic_load(&got) != round_no && ls_now_ns() < end) {
			algo->unlock(L);
			algo->lock(L);
		}
		bool again = atomic_load(&rearrived);
		algo->unlock(L);
		await_w_done();
		if (!again)
			continue;
		if (!atomic_load(&spins_after) && atomic_load(&qsteps) == 0)
			fail("flush: W arrived again but neither spun nor waited");
		printf("auto_regime: OK flush wait=%s: the change to SPIN flushed the list; W arrived again "
		       "and spun %u steps (round %d)\n",
		       opt_policy_name(ls_wait_cfg.policy), atomic_load(&spins_after), attempt);
		return;
	}
}

static void watchdog(int sig)
{
	(void)sig;
	char buf[256];
	int n = snprintf(buf, sizeof buf, "auto_regime: FAIL watchdog: stuck %s\n", phase);
	if (write(1, buf, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

int main(int argc, char **argv)
{
	int c, secs = 60;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	const char *usage = "usage: auto_regime sleep|spin|batch|flush [-w spin|yield|park] [-W SECONDS]";
	if (argc < 2)
		opt_error("%s", usage);
	static const char *const names[] = {"sleep", "spin", "batch", "flush"};
	unsigned which = opt_choose("", "case", argv[1], names, 4);
	optind = 2;
	while ((c = getopt(argc, argv, "w:W:")) != -1) {
		if (c == 'w')
			opt_policy(optarg);
		else if (c == 'W')
			secs = (int)opt_number("W", optarg, 1, 3600);
		else
			opt_error("%s", usage);
	}
	if (which == 2 && ls_wait_cfg.policy != LS_WAIT_PARK)
		opt_error("batch needs -w park (a napping head is asleep)");
	if (which == 3 && ls_wait_cfg.policy != LS_WAIT_PARK)
		opt_error("flush needs -w park (a queued waiter is asleep)");
	fail_prefix = "auto_regime: FAIL ";
	algo = opt_algo("auto");
	ls_wait_cfg.spin = SPIN;
	ls_wait_cfg.yield = YIELD;
	opt_params(algo);
	/* no hand-offs: W competes for the lock it is woken to */
	set_param("LOCKSWAP_AUTO_FAIR_NS", UINT64_MAX);
	set_param("LOCKSWAP_AUTO_PASSES", (0xffffffu) - 1);
	if (!(L = opt_state(algo)))
		fail("out of memory");
	signal(SIGALRM, watchdog);
	alarm((unsigned)secs);
	pthread_t w;
	if (pthread_create(&w, NULL, w_main, NULL))
		fail("pthread_create failed");
	switch (which) {
	case 0:
		case_fixed(1);
		break;
	case 1:
		case_fixed(2);
		break;
	case 2:
		case_batch();
		break;
	default:
		case_flush();
		break;
	}
	atomic_store(&quit, 1);
	pthread_join(w, NULL);
	return 0;
}
