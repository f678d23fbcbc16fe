/*
 * handoff.c - who a FIFO lock wakes, under LOCKSWAP_WAIT=park (issue 12,
 * "hand-off to a sleeper without paying for the wake-up in the critical
 * path").
 *
 *   handoff -a ALGO [-T SECONDS(30)] [-n WAITERS] only-next|prewake|awake|order|spinner
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
 *   awake      (-n N, default 5) H releases; W1 gets the lock and holds it;
 *              W2 .. W(N-1) must all be woken while W1 holds it, and WN must
 *              not be: a lock that keeps the next N-2 waiters awake (shfl
 *              with LOCKSWAP_SHFL_AWAKE=N-3: W2 heads the queue and keeps
 *              N-3 behind it awake).
 *   order      (-n N, default 3) H releases and each waiter releases as soon
 *              as it gets the lock; prints the order, e.g. "order=2,3,1"
 *              (the caller checks it: malthusian culls and re-admits).
 *   spinner    W1 sleeps; then the policy becomes spin and a spinner S calls
 *              lock(); H releases: S must get the lock without W1 being
 *              woken (mutexee: unlock watches LOCKSWAP_MUTEXEE_WAKE_NS for a
 *              spinner, here 10 s, before it wakes a sleeper); then S
 *              releases (window back to its default) and W1 gets the lock.
 * Then the waiters release in turn and must each get the lock, in order
 * (only-next, prewake, awake).
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
#include <stdarg.h>
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

#define OPT_PROG "handoff"
#include "opts.h"

static const struct ls_algo *algo;
static void *L;
static const char *volatile phase = "start";

#define MAXW 8
struct waiter {
	pthread_t t;
	_Atomic pid_t tid;
	_Atomic int held, release;
	unsigned turn;
};
static struct waiter w[MAXW + 1];
static _Atomic unsigned turns;
static bool hold = true; /* waiters hold the lock until released */

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

/* turn.h's ticket word, waited for as ls_tkt_wait does but without waking
 * the next ticket's sleeper on acquisition. */
static void late_lock(void *st)
{
	_Atomic uint64_t *w = st;
	uint32_t t;
	if (ls_tkt_take(w, &t))
		return;
	struct ls_spin s = LS_SPIN_INIT;
	for (;;) {
		uint64_t v = atomic_load(w);
		if (ls_tkt_turn(v) == t)
			break;
		if (!ls_spin_step(&s))
			continue;
		v = atomic_fetch_or(w, ls_tkt_bit(t)) | ls_tkt_bit(t);
		if (ls_tkt_turn(v) == t)
			break;
		ls_futex_wait_bits(ls_tkt_futex(w), ls_tkt_futex_val(v), 0, ls_tkt_bit(t));
		s = (struct ls_spin)LS_SPIN_INIT;
	}
	/* and no wake-up of t + 1: late */
}

static void late_unlock(void *st)
{
	ls_tkt_unlock(st);
}

static const struct ls_algo selftest_late = {
    .name = "selftest-late",
    .desc = "broken double: the next waiter is woken only at release",
    .caps = LS_CAP_FIFO,
    .rank = 1001,
    .state_size = sizeof(uint64_t),
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

static __attribute__((format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("handoff: FAIL algo=%s: ", algo->name);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	exit(1);
}

static void nap(void)
{
	struct timespec ts = {0, 1000000};
	nanosleep(&ts, NULL);
}

static void await_asleep(int i)
{
	phase = "waiting for a waiter to fall asleep in futex(2)";
	while (!atomic_load(&w[i].tid))
		nap();
	while (!proctask_in_futex(atomic_load(&w[i].tid)))
		nap();
}

static void *waiter(void *arg)
{
	struct waiter *me = arg;
	atomic_store(&me->tid, (pid_t)syscall(SYS_gettid));
	algo->lock(L);
	me->turn = atomic_fetch_add(&turns, 1);
	atomic_store(&me->held, 1);
	while (hold && !atomic_load(&me->release))
		nap();
	algo->unlock(L);
	return NULL;
}

/* The algorithm's tunable named env (as the shim sets it), or NULL. */
static uint64_t *param(const char *env)
{
	for (const struct ls_param *p = algo->params; p && p->env; p++)
		if (!strcmp(p->env, env))
			return p->value;
	return NULL;
}

/* Waits until waiter i has gone to sleep again since `before`. */
static long await_woken(int i, long before, const char *what)
{
	long now;
	phase = what;
	while ((now = proctask_sleeps(atomic_load(&w[i].tid))) == before)
		nap();
	return now;
}

/* Waiter i has not been woken since `before`: it is still asleep in
 * futex(2) and has not gone to sleep again. (A wake-up is issued inside the
 * call that issues it, which has returned: a woken thread is runnable, or
 * asleep again with a higher count.) */
static void check_not_woken(int i, long before, const char *who)
{
	pid_t t = atomic_load(&w[i].tid);
	long now = proctask_sleeps(t);
	if (!proctask_in_futex(t) || now != before)
		fail("%s: woken (it is running, or went to sleep %ld more time(s))", who, now - before);
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
	int c, n = 0;
	while ((c = getopt(argc, argv, "a:T:n:")) != -1) {
		if (c == 'a')
			name = optarg;
		else if (c == 'T')
			watchdog = (unsigned)opt_number("T", optarg, 1, 3600);
		else if (c == 'n')
			n = (int)opt_number("n", optarg, 1, MAXW);
		else
			return 2;
	}
	if (optind < argc)
		test = argv[optind];
	algo = opt_algo(name);
	static const char *const tests[] = {"only-next", "prewake", "awake", "order", "spinner"};
	static const int default_n[] = {3, 2, 5, 3, 1};
	if (!test)
		opt_error("a test is required (valid: only-next, prewake, awake, order, spinner)");
	int mode = opt_choose("", "test", test, tests, 5);
	if (!n || mode < 2 || mode == 4)
		n = default_n[mode];
	opt_params(algo);
	ls_wait_cfg.policy = LS_WAIT_PARK;
	signal(SIGALRM, on_alarm);
	alarm(watchdog);
	L = opt_state(algo);
	if (!L)
		fail("cannot allocate the lock state");
	if (algo->init)
		algo->init(L);
	hold = mode != 3;

	algo->lock(L);
	long before[MAXW + 1];
	for (int i = 0; i < n; i++) {
		pthread_create(&w[i].t, NULL, waiter, &w[i]);
		await_asleep(i);
		before[i] = proctask_sleeps(atomic_load(&w[i].tid));
		if (before[i] < 0)
			fail("cannot read voluntary_ctxt_switches");
	}
	uint64_t *window = param("LOCKSWAP_MUTEXEE_WAKE_NS"), saved = window ? *window : 0;
	int total = n;
	if (mode == 4) { /* the spinner: w[n] */
		if (window)
			*window = 10000000000ull;
		ls_wait_cfg.policy = LS_WAIT_SPIN;
		pthread_create(&w[n].t, NULL, waiter, &w[n]);
		total = n + 1;
	}
	algo->unlock(L);
	if (mode == 3) { /* order */
		printf("handoff: OK test=order algo=%s order=", algo->name);
		for (int i = 0; i < n; i++)
			pthread_join(w[i].t, NULL);
		for (unsigned t = 0; t < (unsigned)n; t++)
			for (int i = 0; i < n; i++)
				if (w[i].turn == t)
					printf("%s%d", t ? "," : "", i + 1);
		printf("\n");
		return 0;
	}
	int first = mode == 4 ? n : 0;
	await_held(first);
	long after = 0;
	switch (mode) {
	case 0:
		check_not_woken(2, before[2], "the waiter two places behind the new holder");
		break;
	case 1:
		after = await_woken(1, before[1],
				    "the next waiter being woken while its predecessor holds the "
				    "lock (the holder must wake it as it acquires)");
		break;
	case 2:
		for (int i = 1; i < n - 1; i++)
			await_woken(i, before[i], "the waiters behind the holder being kept awake");
		check_not_woken(n - 1, before[n - 1], "the last waiter, beyond the window kept awake");
		break;
	case 4:
		check_not_woken(0, before[0], "the sleeper, when a spinner took the lock");
		if (window)
			*window = saved;
		break;
	}
	for (int i = 1; i < total; i++)
		if (i != first && atomic_load(&w[i].held))
			fail("mutual exclusion: waiters %d and %d hold the lock", first + 1, i + 1);
	for (int k = 0; k < total; k++) {
		int i = mode == 4 ? (k + n) % total : k;
		await_held(i);
		atomic_store(&w[i].release, 1);
		pthread_join(w[i].t, NULL);
		if (mode != 2 && mode != 4 && w[i].turn != (unsigned)i)
			fail("not FIFO: waiter %d got the lock #%u", i + 1, w[i].turn + 1);
	}
	if (algo->destroy)
		algo->destroy(L);
	printf("handoff: OK test=%s algo=%s%s\n", test, algo->name,
	       mode == 1 ? (after > before[1] ? " next_waiter_woken" : "") : "");
	return 0;
}
