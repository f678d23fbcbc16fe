/*
 * handoff.c - who a FIFO lock wakes, under LOCKSWAP_WAIT=park (issue 12,
 * "hand-off to a sleeper without paying for the wake-up in the critical
 * path").
 *
 *   handoff -a ALGO [-T SECONDS(30)] only-next|prewake
 *
 * The main thread H takes the lock; waiters W1, W2, (W3) then call lock(),
 * each started only once the previous one is asleep in futex(2), so they
 * queue in that order. Each holds the lock, once it gets it, until told to
 * release. Sleeps are counted with voluntary_ctxt_switches (proctask.h): a
 * sleeper woken for nothing goes back to sleep and the count grows.
 *
 *   only-next  H releases; W1 gets the lock and holds it; W3, two places
 *              behind W1, must not have been woken (by H's release or by
 *              W1's acquisition): its sleep count is unchanged once it is
 *              seen asleep again. A lock whose release wakes every sleeper
 *              (the old ticket lock: all sleep on one word) fails.
 *   prewake    H releases; W1 gets the lock and holds it; W2, next in line,
 *              must be woken while W1 holds the lock (W1 wakes it as it
 *              acquires, so that the wake-up overlaps the critical section
 *              instead of following the release): its sleep count grows
 *              (it wakes, spins and yields its budget, sleeps again). A lock
 *              that wakes W2 only when W1 releases fails by the watchdog.
 * Then the waiters release in turn and must each get the lock, in order.
 *
 * Two broken doubles, registered in this program only, show that each check
 * can fail: selftest-herd is a ticket lock whose waiters all sleep on the
 * one "now serving" word, woken all at once by each release; selftest-late
 * is a ticket lock that wakes only the next waiter, but only at release.
 *
 * Nothing depends on speed: every wait is for an event, bounded only by the
 * watchdog (SIGALRM after SECONDS: prints the phase, exit 1). The wake-up a
 * release or acquisition issues happens inside that call (the woken thread
 * is runnable before the call returns), so a sleeper seen asleep in futex(2)
 * afterwards with an unchanged count was not woken.
 *
 * Exit: 0 pass, 1 fail (a line says why), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "pool.h"
#include "proctask.h"
#include "queue/turn.h"
#include "wait.h"

static const struct ls_algo *algo;
static void *L;
static const char *volatile phase = "start";

struct waiter {
	pthread_t t;
	_Atomic pid_t tid;
	_Atomic int held, release;
	unsigned turn;
};
static struct waiter w[3];
static _Atomic unsigned turns;

/* ---- broken doubles (tests/oversub.bats checks that each is caught) ---- */

struct dticket {
	_Atomic uint32_t next, owner, sleepers;
};

static void herd_lock(void *st)
{
	struct dticket *l = st;
	uint32_t t = atomic_fetch_add(&l->next, 1), o;
	while ((o = atomic_load(&l->owner) & ~LS_PARKED) != t)
		ls_wait_while_eq(&l->owner, o);
}

static int never_trylock(void *st)
{
	(void)st;
	return EBUSY;
}

static void herd_unlock(void *st)
{
	struct dticket *l = st;
	ls_word_publish(&l->owner, (atomic_load(&l->owner) + 1) & ~LS_PARKED);
}

static const struct ls_algo selftest_herd = {
    .name = "selftest-herd",
    .desc = "broken double: every release wakes every sleeper",
    .caps = LS_CAP_FIFO,
    .rank = 1000,
    .state_size = sizeof(struct dticket),
    .lock = herd_lock,
    .trylock = never_trylock,
    .unlock = herd_unlock,
};
LS_REGISTER_ALGO(selftest_herd);

static void late_lock(void *st)
{
	struct dticket *l = st;
	uint32_t t = atomic_fetch_add(&l->next, 1);
	ls_turn_wait(&l->owner, &l->sleepers, t, t); /* and no turn_wake: late */
}

static void late_unlock(void *st)
{
	struct dticket *l = st;
	uint32_t o = atomic_load(&l->owner) + 1;
	atomic_exchange(&l->owner, o);
	turn_wake(&l->sleepers, o);
}

static const struct ls_algo selftest_late = {
    .name = "selftest-late",
    .desc = "broken double: the next waiter is woken only at release",
    .caps = LS_CAP_FIFO,
    .rank = 1001,
    .state_size = sizeof(struct dticket),
    .lock = late_lock,
    .trylock = never_trylock,
    .unlock = late_unlock,
};
LS_REGISTER_ALGO(selftest_late);

static void on_alarm(int sig)
{
	(void)sig;
	char msg[256];
	int n = snprintf(msg, sizeof msg, "handoff: FAIL algo=%s: watchdog fired in phase: %s\n",
			 algo ? algo->name : "?", phase);
	if (write(1, msg, (size_t)n) < 0) {
	}
	_exit(1);
}

static void fail(const char *fmt, long a, long b)
{
	printf("handoff: FAIL algo=%s: ", algo->name);
	printf(fmt, a, b);
	printf("\n");
	exit(1);
}

static void nap(void)
{
	struct timespec ts = {0, 1000000};
	nanosleep(&ts, NULL);
}

static void *waiter(void *arg)
{
	struct waiter *me = arg;
	atomic_store(&me->tid, (pid_t)syscall(SYS_gettid));
	algo->lock(L);
	me->turn = atomic_fetch_add(&turns, 1);
	atomic_store(&me->held, 1);
	while (!atomic_load(&me->release))
		nap();
	algo->unlock(L);
	return NULL;
}

static void await_asleep(int i)
{
	phase = "waiting for a waiter to fall asleep in futex(2)";
	while (!atomic_load(&w[i].tid))
		nap();
	while (!proctask_in_futex(atomic_load(&w[i].tid)))
		nap();
}

static void await_held(int i)
{
	phase = "waiting for a waiter to get the lock";
	while (!atomic_load(&w[i].held))
		nap();
}

int main(int argc, char **argv)
{
	const char *name = NULL, *test = NULL;
	unsigned watchdog = 30;
	int c;
	while ((c = getopt(argc, argv, "a:T:")) != -1) {
		if (c == 'a')
			name = optarg;
		else if (c == 'T')
			watchdog = (unsigned)atoi(optarg);
		else
			return 2;
	}
	if (optind < argc)
		test = argv[optind];
	char names[1024];
	if (!name || !(algo = ls_algo_find(name)) || (algo->caps & LS_CAP_PASSTHROUGH)) {
		fprintf(stderr, "handoff: -a: unknown lock '%s' (valid: %s)\n", name ? name : "",
			ls_algo_names(names, sizeof names));
		return 2;
	}
	if (!test || (strcmp(test, "only-next") && strcmp(test, "prewake"))) {
		fprintf(stderr, "handoff: unknown test '%s' (valid: only-next, prewake)\n", test ? test : "");
		return 2;
	}
	if (watchdog < 1 || watchdog > 3600) {
		fprintf(stderr, "handoff: -T: invalid value (valid: 1..3600)\n");
		return 2;
	}
	ls_wait_cfg.policy = LS_WAIT_PARK;
	signal(SIGALRM, on_alarm);
	alarm(watchdog);
	L = algo->state_size > LS_INLINE_STATE ? ls_ext_alloc(algo->state_size) : calloc(1, LS_CACHELINE);
	if (!L)
		fail("cannot allocate the lock state%s%s", 0, 0);
	if (algo->init)
		algo->init(L);

	int n = !strcmp(test, "only-next") ? 3 : 2;
	algo->lock(L);
	for (int i = 0; i < n; i++) {
		pthread_create(&w[i].t, NULL, waiter, &w[i]);
		await_asleep(i);
	}
	int watched = n - 1; /* W3 for only-next, W2 for prewake */
	pid_t wt = atomic_load(&w[watched].tid);
	long before = proctask_sleeps(wt);
	if (before < 0)
		fail("cannot read voluntary_ctxt_switches%s%ld", 0, 0);
	algo->unlock(L);
	await_held(0);
	long after;
	if (n == 3) {
		await_asleep(2);
		after = proctask_sleeps(wt);
		if (after != before)
			fail("the waiter two places behind the new holder was woken (it went to sleep %ld "
			     "more "
			     "time(s)): only the next waiter may be (%ld)",
			     after - before, 0);
	} else {
		phase = "the next waiter being woken while its predecessor holds the lock (the holder "
			"must wake it as it acquires)";
		while ((after = proctask_sleeps(wt)) == before)
			nap();
	}
	if (atomic_load(&w[1].held))
		fail("mutual exclusion: two waiters hold the lock (%ld, %ld)", 0, 1);
	for (int i = 0; i < n; i++) {
		await_held(i);
		atomic_store(&w[i].release, 1);
		pthread_join(w[i].t, NULL);
		if (w[i].turn != (unsigned)i)
			fail("not FIFO: waiter %ld got the lock #%ld", i + 1, (long)w[i].turn + 1);
	}
	if (algo->destroy)
		algo->destroy(L);
	printf("handoff: OK test=%s algo=%s sleeps_of_watched_waiter=+%ld\n", test, algo->name,
	       after - before);
	return 0;
}
