/*
 * unlock_misuse.c - an unlock of an unlocked lock, and an unlock too many,
 * return and leave the lock fully usable, under every algorithm and waiting
 * policy (issue 25; locks/lock.h, "Misuse that glibc tolerates").
 *
 *   unlock_misuse [-a ALGO[,ALGO...]|all|spin] [-w spin|yield|park|all] [-c CASE[,CASE...]]
 *                 [-W SECONDS]
 *
 * -a all: the mutex family; -a spin: the spinlock family (the mutex
 * algorithms that fit 4 bytes, and the spin-only ones); a name of either.
 *
 * Links build/liblocks-inject.a (mk/unlock.mk) for one test point only:
 * LS_POINT_WAITING / LS_POINT_PARKING tell that a waiter waits, so that
 * waiters queue in a known order. For each algorithm and policy, on a lock
 * state as the shim keeps it (inline, or an out-of-line block with a header
 * line), each misuse below, then the checks of "fully usable":
 *
 *   fresh      unlock of an all-zero state (a static initialiser: never
 *              locked; a hierarchical lock has no lines yet)
 *   init       unlock of a state just init()'ed
 *   twice      lock, unlock, unlock
 *   thrice     lock, unlock, unlock, unlock, after a first use
 *   handover   H holds, W waits; H unlocks (a hand-over to W); W takes the
 *              lock and unlocks; then H unlocks again, twice
 *
 * Fully usable: trylock takes the free lock (0) and finds it held (EBUSY);
 * three threads take it 200 times each under the policy, one at a time (an
 * occupant word); for the FIFO locks (LS_CAP_FIFO), three waiters that
 * queue in turn behind a holder get it in that order; and no queue node
 * stays in use (LOCKSWAP_STATS counting) once the lock is destroyed.
 *
 * Output: one line per algorithm and policy, "unlock_misuse: OK ...", exit
 * 0; "unlock_misuse: FAIL ..." and exit 1 (a crash is reported by the
 * signal handler; a hang by the watchdog); bad usage: one line, exit 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hier/topo.h"
#include "lock.h"
#include "pool.h"
#include "wait.h"

#include "fail.h"
#define OPT_PROG "unlock_misuse"
#include "opts.h"

static const struct ls_algo *algo;
static const char *wait_name = "?", *case_name = "?";
static void *L;
static const char *volatile phase = "start";

static void on_alarm(int sig)
{
	(void)sig;
	char msg[512];
	int n = snprintf(msg, sizeof msg,
			 "unlock_misuse: FAIL algo=%s wait=%s case=%s: watchdog expired in: %s\n",
			 algo ? algo->name : "?", wait_name, case_name, phase);
	if (write(1, msg, (size_t)n) < 0) {
	}
	_exit(1);
}

static void on_fault(int sig)
{
	char msg[512];
	int n = snprintf(msg, sizeof msg, "unlock_misuse: FAIL algo=%s wait=%s case=%s: signal %d in: %s\n",
			 algo ? algo->name : "?", wait_name, case_name, sig, phase);
	if (write(1, msg, (size_t)n) < 0) {
	}
	_exit(1);
}

/* ---- waiters that queue in a known order ---- */

#define MAXW 3
struct waiter {
	pthread_t t;
	_Atomic int waiting, parked, got, done;
	int order;
};
static struct waiter w[MAXW];
static __thread int me = -1;
static _Atomic int turns;

void ls_test_point(enum ls_test_point id)
{
	if (me < 0)
		return;
	/* auto's queued waiter steps its policy without spinning first
	 * when spinning has been failing (LS_POINT_QUEUED) */
	if (id == LS_POINT_WAITING || id == LS_POINT_QUEUED)
		atomic_store(&w[me].waiting, 1);
	else if (id == LS_POINT_PARKING)
		atomic_store(&w[me].parked, 1);
}

static void nap(void)
{
	struct timespec ts = {0, 1000000};
	nanosleep(&ts, NULL);
}

static bool waits(int i)
{
	if (atomic_load(&w[i].got))
		return true;
	return ls_wait_cfg.policy == LS_WAIT_PARK ? atomic_load(&w[i].parked) : atomic_load(&w[i].waiting);
}

static _Atomic int occupant = -1;

static void enter(int who)
{
	int o = atomic_exchange(&occupant, who);
	if (o != -1)
		fail("mutual exclusion: thread %d got the lock while %d held it", who, o);
}

static void leave(void)
{
	atomic_store(&occupant, -1);
}

static void *queued(void *arg)
{
	int i = (int)(intptr_t)arg;
	me = i;
	algo->lock(L);
	enter(i);
	w[i].order = atomic_fetch_add(&turns, 1);
	atomic_store(&w[i].got, 1);
	leave();
	algo->unlock(L);
	atomic_store(&w[i].done, 1);
	return NULL;
}

/* n waiters queue behind the main thread, which holds the lock, each once
 * the previous one waits; then main unlocks. FIFO locks: served in order. */
static void fifo_check(int n)
{
	phase = "queueing waiters behind a holder";
	algo->lock(L);
	atomic_store(&turns, 0);
	for (int i = 0; i < n; i++) {
		memset(&w[i], 0, sizeof w[i]);
		if (pthread_create(&w[i].t, NULL, queued, (void *)(intptr_t)i))
			fail("pthread_create");
		while (!waits(i))
			nap();
	}
	phase = "the waiters taking the lock";
	algo->unlock(L);
	for (int i = 0; i < n; i++)
		pthread_join(w[i].t, NULL);
	if (algo->caps & LS_CAP_FIFO)
		for (int i = 0; i < n; i++)
			if (w[i].order != i)
				fail("not FIFO after the misuse: the waiter queued %d-th got the lock %d-th",
				     i + 1, w[i].order + 1);
}

/* Three threads, 200 acquisitions each, one at a time. */
static long counter;
static void *user(void *arg)
{
	for (int i = 0; i < 200; i++) {
		algo->lock(L);
		enter((int)(intptr_t)arg);
		long c = counter;
		for (volatile int k = 0; k < 20; k++) {
		}
		counter = c + 1;
		leave();
		algo->unlock(L);
	}
	return NULL;
}

static void usable(void)
{
	phase = "trylock of the free lock";
	if (algo->trylock(L) != 0)
		fail("after the misuse, trylock of the free lock returned EBUSY");
	if (algo->trylock(L) != EBUSY)
		fail("after the misuse, trylock of the held lock did not return EBUSY");
	algo->unlock(L);
	phase = "three threads";
	pthread_t t[3];
	counter = 0;
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, user, (void *)(intptr_t)(10 + i)))
			fail("pthread_create");
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	if (counter != 600)
		fail("after the misuse, 3 x 200 acquisitions counted %ld (mutual exclusion broken)", counter);
	fifo_check(MAXW);
	phase = "trylock after use";
	if (algo->trylock(L) != 0)
		fail("after the misuse and later use, trylock of the free lock returned EBUSY");
	algo->unlock(L);
}

/* ---- the lock's memory ---- */

static void new_lock(bool init)
{
	L = opt_state(algo); /* as the shim places it (opts.h) */
	if (!L)
		fail("cannot allocate the lock state");
	if (init && algo->init)
		algo->init(L);
}

static void drop_lock(void)
{
	if (algo->destroy)
		algo->destroy(L);
	opt_state_free(algo, L);
}

/* H holds, W waits; H's unlock hands over to W, which takes the lock and
 * unlocks; then H unlocks twice more. */
static void handover_case(void)
{
	phase = "a hand-over to a waiter";
	algo->lock(L);
	memset(&w[0], 0, sizeof w[0]);
	if (pthread_create(&w[0].t, NULL, queued, (void *)(intptr_t)0))
		fail("pthread_create");
	while (!waits(0))
		nap();
	algo->unlock(L);
	pthread_join(w[0].t, NULL);
	phase = "unlocks too many after the hand-over";
	algo->unlock(L);
	algo->unlock(L);
}

static const char *const cases[] = {"fresh", "init", "twice", "thrice", "handover"};
#define NCASES 5
static bool want[NCASES];

static int run_algo(int policy)
{
	int runs = 0;
	ls_wait_cfg.policy = (enum ls_policy)policy;
	for (int c = 0; c < NCASES; c++) {
		if (!want[c])
			continue;
		runs++;
		case_name = cases[c];
		static char prefix[256];
		snprintf(prefix, sizeof prefix, "unlock_misuse: FAIL algo=%s wait=%s case=%s: ", algo->name,
			 wait_name, case_name);
		fail_prefix = prefix;
		new_lock(c != 0);
		phase = "the misuse";
		switch (c) {
		case 0:
		case 1:
			algo->unlock(L);
			break;
		case 2:
			algo->lock(L);
			algo->unlock(L);
			algo->unlock(L);
			break;
		case 3:
			algo->lock(L);
			algo->unlock(L);
			algo->lock(L);
			algo->unlock(L);
			algo->unlock(L);
			algo->unlock(L);
			break;
		default:
			handover_case();
			break;
		}
		usable();
		drop_lock();
	}
	return runs;
}

int main(int argc, char **argv)
{
	const char *names = "all", *wait = "all", *which = NULL;
	int c, watchdog = 60;
	while ((c = getopt(argc, argv, "a:w:c:W:")) != -1) {
		switch (c) {
		case 'a':
			names = optarg;
			break;
		case 'w':
			wait = optarg;
			break;
		case 'c':
			which = optarg;
			break;
		case 'W':
			watchdog = (int)opt_number("W", optarg, 1, 3600);
			break;
		default:
			opt_error(
			    "usage: unlock_misuse [-a ALGO[,ALGO...]|all|spin] [-w spin|yield|park|all] "
			    "[-c CASE[,CASE...]] [-W SECONDS]");
		}
	}
	for (int k = 0; k < NCASES; k++)
		want[k] = !which;
	if (which) {
		char *cs = strdup(which), *save = NULL;
		for (char *x = strtok_r(cs, ",", &save); x; x = strtok_r(NULL, ",", &save))
			want[opt_choose("c", "case", x, cases, NCASES)] = true;
		free(cs);
	}
	enum ls_policy p0, p1;
	opt_policy_range(wait, &p0, &p1);
	char list[1024];
	opt_algo_list(names, list, sizeof list);

	char err[256];
	if (ls_topo_setup("thread:2", NULL, err, sizeof err))
		fail("topology: %s", err);
	signal(SIGSEGV, on_fault);
	signal(SIGBUS, on_fault);
	signal(SIGALRM, on_alarm);
	ls_node_counting = true;
	ls_wait_cfg.spin = 16;
	ls_wait_cfg.yield = 2;

	for (char *a = strtok(list, ","); a; a = strtok(NULL, ",")) {
		algo = opt_lock_find(a);
		for (int p = (int)p0; p <= (int)p1; p++) {
			wait_name = opt_policy_name((enum ls_policy)p);
			alarm((unsigned)watchdog);
			/* the first use: per-thread pools (abortable.h) keep nodes */
			new_lock(true);
			algo->lock(L);
			algo->unlock(L);
			drop_lock();
			struct ls_node_stats before, after;
			ls_node_stats(&before);
			int runs = run_algo(p);
			ls_node_stats(&after);
			case_name = "all";
			if (after.in_use != before.in_use)
				fail("%ld queue node(s) still in use after the misuses and their checks",
				     after.in_use - before.in_use);
			printf("unlock_misuse: OK algo=%s wait=%s cases=%d\n", algo->name, wait_name, runs);
			fflush(stdout);
		}
	}
	return 0;
}
