/*
 * tp_preempt - preemption tests of the time-published locks (TR 867,
 * ../shared/papers/000_9c294dcad948dd76.txt, section 2): a thread is
 * "preempted" by making it sleep inside a signal handler, which it leaves
 * only when the test says so.
 *
 *   tp_preempt -a ALGO [-w spin|yield|park] [-T WATCHDOG_S] TEST
 *
 *   stopped-waiter   H holds the lock; W queues behind H (seen in the lock
 *                    word, below) and is stopped; once W has been stopped
 *                    for 3 x UPDATE_DELAY its timestamp is stale; H
 *                    releases; two running threads must then make 1000
 *                    acquisitions while W is still stopped (W was removed
 *                    from the queue). Then W resumes and must get the lock.
 *                    Under park, W is first seen asleep in futex(2) (/proc)
 *                    and only then stopped, and the runners never spend
 *                    their spin budget: a parked waiter publishes no time,
 *                    so it must be passed over like a preempted one in
 *                    favour of the running waiters (and, woken by its
 *                    removal, re-queue and get the lock).
 *   holder-yields    H takes the lock and is stopped; two waiters call
 *                    lock(); with MAXIMUM_CS_TIME 100 us and patience 1 ms,
 *                    each must call sched_yield (counted by interposing it)
 *                    at least 3 times while H is stopped. Under "spin" only:
 *                    nothing else yields there.
 *   holder-no-yield  the same with MAXIMUM_CS_TIME 1 hour: for 200 ms (some
 *                    200 timeouts each) no waiter may yield.
 *   grantee-yields   H holds; W queues and is stopped with a fresh
 *                    timestamp (UPDATE_DELAY 1 hour: it looks live); V
 *                    queues behind W; H releases, and the lock goes to W,
 *                    which cannot run. With MAXIMUM_CS_TIME 100 us and
 *                    patience 1 ms for V (1 hour for W, which must stay
 *                    queued), V must call sched_yield at least 3 times
 *                    after H's unlock returned: the hand-over to a waiter
 *                    that has not run yet looks like a stalled holder (an
 *                    mcs-tp that cleared the holder field during the
 *                    hand-over said nothing then, and V spun against the
 *                    preempted grantee). Under "spin" only.
 *   timeouts         H holds and is stopped, W queues and is stopped; two
 *                    threads make 10 timedlock calls each with a 20 ms
 *                    deadline: every one returns ETIMEDOUT, never before its
 *                    deadline; trylock returns EBUSY; then H resumes and
 *                    releases and both threads get the lock (while W is
 *                    still stopped, except under "park": when every waiter
 *                    sleeps, mcs-tp grants the lock to the first sleeper,
 *                    which may be W, so W is resumed first).
 *   spin-factor      (yield and park) H holds the lock, running; W calls
 *                    lock() with LOCKSWAP_SPIN 65536 and
 *                    LOCKSWAP_TP_SPIN_FACTOR 65536: W must not yield before
 *                    it has spent 100 ms of CPU time waiting (at most some
 *                    10^8 spin steps on any CPU, far fewer than its budget,
 *                    and far more than 65536); then H releases and W gets
 *                    the lock. Control, same run: a second waiter with
 *                    factor 1 does yield (after 65536 steps) while H holds.
 *
 * Nothing here depends on speed: events are ordered by flags; a stopped
 * thread stays stopped until the others have done what is checked; waits
 * for staleness are sleeps of at least the threshold (the threshold is in
 * wall time, and a stopped thread cannot publish); every wait for progress
 * is bounded only by the watchdog (-T, default 60 s for each phase: it starts
 * again as a phase begins; SIGALRM: prints the phase
 * and exits 1). Each test also checks mutual exclusion (a counter updated
 * with a plain read and write) and that every queue node was given back.
 *
 * White box: "W is queued" is read from the lock state: its first word is
 * the queue tail in both locks (it changes from H's node to W's); for
 * mcs-tp also H's node must have its `next` (offset 16) set, because a
 * waiter stopped between swapping the tail and linking blocks the release
 * (the window of section 3 that MCS-TP cannot close). For other algorithms
 * (negative controls) only the tail is watched.
 *
 * Exit: 0 pass, 1 fail (a line says why), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "pool.h"
#include "proctask.h"
#include "tp/tp.h"
#include "tpclock.h"
#include "wait.h"

#define OPT_PROG "tp_preempt"
#include "opts.h"

static const struct ls_algo *algo;
static void *L;
static const char *volatile phase = "start";
static unsigned watchdog = 60; /* -T: seconds for each phase */

/* The phase the watchdog names, and its limit starts again (alarm(2)). */
static void set_phase(const char *what)
{
	phase = what;
	alarm(watchdog);
}

/* ---- sched_yield, counted per thread (the locks call this one: the test
 * links liblocks.a statically, so the executable's definition wins) ---- */
#define MAXT 8
static _Atomic unsigned long yields[MAXT];
static __thread int tid = -1;
int sched_yield(void)
{
	if (tid >= 0)
		atomic_fetch_add_explicit(&yields[tid], 1, memory_order_relaxed);
	return (int)syscall(SYS_sched_yield);
}

/* ---- stopping a thread: it sleeps in a SIGUSR1 handler until resumed ---- */
static _Atomic int stopped[MAXT], resume[MAXT];
static void on_usr1(int sig)
{
	(void)sig;
	int me = tid;
	atomic_store(&stopped[me], 1);
	while (!atomic_load(&resume[me])) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	atomic_store(&stopped[me], 0);
}

static void on_alarm(int sig)
{
	(void)sig;
	char msg[256];
	int n = snprintf(msg, sizeof msg, "tp_preempt: FAIL watchdog fired in phase: %s\n", phase);
	if (write(1, msg, (size_t)n) < 0) {
	}
	_exit(1);
}

static void fail(const char *fmt, const char *a)
{
	printf("tp_preempt: FAIL ");
	printf(fmt, a);
	printf("\n");
	exit(1);
}

static void msleep(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) && errno == EINTR) {
	}
}

/* Waits (bounded by the watchdog) for *flag to become at least v. */
static void await(_Atomic long *flag, long v, const char *what)
{
	set_phase(what);
	while (atomic_load(flag) < v)
		msleep(1);
}

/* ---- the protected data ---- */
static long counter;
static _Atomic long acquisitions;
static void critical(void)
{
	long c = counter;
	for (volatile int i = 0; i < 50; i++) {
	}
	counter = c + 1;
	atomic_fetch_add(&acquisitions, 1);
}

/* ---- threads ---- */
struct thr {
	pthread_t t;
	_Atomic pid_t ktid;
	int id;
	_Atomic long started, held, done, count;
	_Atomic int go, stop;
	int (*body)(struct thr *);
	int result;
};
static struct thr th[MAXT];

static void *run(void *arg)
{
	struct thr *t = arg;
	tid = t->id;
	atomic_store(&t->ktid, (pid_t)syscall(SYS_gettid));
	t->result = t->body(t);
	atomic_store(&t->done, 1);
	return NULL;
}

static void start(int id, int (*body)(struct thr *))
{
	th[id].id = id;
	th[id].body = body;
	pthread_create(&th[id].t, NULL, run, &th[id]);
}

static void stop_thread(int id)
{
	atomic_store(&resume[id], 0);
	pthread_kill(th[id].t, SIGUSR1);
	set_phase("waiting for a thread to stop in its signal handler");
	while (!atomic_load(&stopped[id]))
		msleep(1);
}

/* H: lock, say so, wait until told, unlock. */
static int holder(struct thr *t)
{
	algo->lock(L);
	critical();
	atomic_store(&t->held, 1);
	while (!atomic_load(&t->go))
		msleep(1);
	algo->unlock(L);
	return 0;
}

/* W: one lock() */
static int waiter_once(struct thr *t)
{
	atomic_store(&t->started, 1);
	algo->lock(L);
	critical();
	atomic_store(&t->held, 1);
	algo->unlock(L);
	return 0;
}

/* R: lock/unlock until told to stop */
static int runner(struct thr *t)
{
	atomic_store(&t->started, 1);
	while (!atomic_load(&t->stop)) {
		algo->lock(L);
		critical();
		algo->unlock(L);
		atomic_fetch_add(&t->count, 1);
	}
	return 0;
}

static uint64_t word(int i)
{
	return atomic_load((_Atomic uint64_t *)L + i);
}

/* W is in the queue behind H's node (see the header). */
static void await_queued(uint64_t tail_before)
{
	set_phase("waiting for the waiter to queue");
	while (word(0) == tail_before)
		msleep(1);
	if (!strcmp(algo->name, "mcs-tp")) {
		set_phase("waiting for the waiter to link behind the previous tail (mcs-tp)");
		while (!atomic_load((_Atomic uint64_t *)(uintptr_t)(tail_before + 16)))
			msleep(1);
	}
}

static void finish_checks(void)
{
	set_phase("joining");
	for (int i = 0; i < MAXT; i++)
		if (th[i].t)
			pthread_join(th[i].t, NULL);
	if (counter != atomic_load(&acquisitions)) {
		char b[64];
		snprintf(b, sizeof b, "%ld != %ld", counter, atomic_load(&acquisitions));
		fail("mutual exclusion: counter %s acquisitions (lost updates)", b);
	}
	if (algo->destroy)
		algo->destroy(L);
	struct ls_node_stats ns;
	ls_node_stats(&ns);
	if (ns.in_use != 0) {
		char b[32];
		snprintf(b, sizeof b, "%ld", ns.in_use);
		fail("%s queue node(s) still in use at the end", b);
	}
}

/* ---- the tests ---- */

/* H (thread 0) takes the lock and keeps it; W (thread 1) queues behind it.
 * Returns the tail word with W queued. */
static uint64_t holder_and_waiter(void)
{
	start(0, holder);
	await(&th[0].held, 1, "holder taking the lock");
	uint64_t tail_h = word(0);
	start(1, waiter_once);
	await_queued(tail_h);
	return word(0);
}

static void t_stopped_waiter(void)
{
	ls_tp_update_delay_ns = 1000000; /* 1 ms */
	ls_tp_patience_ns = 600000000000ull;
	ls_tp_max_cs_ns = 600000000000ull;
	uint64_t tail_w = holder_and_waiter();
	if (ls_wait_cfg.policy == LS_WAIT_PARK) {
		set_phase("waiting for the queued waiter to fall asleep in futex(2)");
		while (!proctask_in_futex(atomic_load(&th[1].ktid)))
			msleep(1);
		/* The runners stay live (they never spend their budget): the
		 * sleeper must be passed over in favour of a running waiter. */
		ls_wait_cfg.spin = UINT_MAX;
	}
	stop_thread(1);
	msleep(3); /* > UPDATE_DELAY: W's timestamp is stale from now on */
	start(2, runner);
	start(3, runner);
	await(&th[2].started, 1, "runner starting");
	await(&th[3].started, 1, "runner starting");
	await_queued(tail_w);	    /* a runner waits behind W */
	atomic_store(&th[0].go, 1); /* H releases */
	set_phase("runners making 1000 acquisitions while the waiter is stopped");
	while (atomic_load(&th[2].count) + atomic_load(&th[3].count) < 1000)
		msleep(1);
	if (!atomic_load(&stopped[1]) || atomic_load(&th[1].held))
		fail("%s", "the stopped waiter ran before it was resumed");
	long got = atomic_load(&th[2].count) + atomic_load(&th[3].count);
	atomic_store(&resume[1], 1);
	await(&th[1].held, 1, "the resumed waiter getting the lock");
	atomic_store(&th[2].stop, 1);
	atomic_store(&th[3].stop, 1);
	finish_checks();
	printf("tp_preempt: OK test=stopped-waiter algo=%s wait=%s acquisitions_while_stopped=%ld\n",
	       algo->name, opt_policy_name(ls_wait_cfg.policy), got);
}

static void t_holder(bool expect_yields)
{
	ls_tp_update_delay_ns = 1000000;
	ls_tp_patience_ns = 1000000;
	ls_tp_max_cs_ns = expect_yields ? 100000 : 3600000000000ull; /* 1 hour */
	start(0, holder);
	await(&th[0].held, 1, "holder taking the lock");
	stop_thread(0);
	start(1, waiter_once);
	start(2, waiter_once);
	await(&th[1].started, 1, "waiter starting");
	await(&th[2].started, 1, "waiter starting");
	unsigned long y1, y2;
	if (expect_yields) {
		set_phase("each waiter yielding 3 times while the holder is stopped");
		while (atomic_load(&yields[1]) < 3 || atomic_load(&yields[2]) < 3)
			msleep(1);
	} else {
		msleep(200); /* some 200 patience timeouts each */
	}
	y1 = atomic_load(&yields[1]);
	y2 = atomic_load(&yields[2]);
	if (!expect_yields && (y1 || y2)) {
		char b[64];
		snprintf(b, sizeof b, "%lu and %lu", y1, y2);
		fail("waiters yielded (%s times) although the holder's critical section is younger than "
		     "MAXIMUM_CS_TIME",
		     b);
	}
	if (atomic_load(&th[1].held) || atomic_load(&th[2].held))
		fail("%s", "a waiter got the lock while the holder held it");
	atomic_store(&resume[0], 1);
	atomic_store(&th[0].go, 1);
	await(&th[1].held, 1, "waiter getting the lock after the holder resumed");
	await(&th[2].held, 1, "waiter getting the lock after the holder resumed");
	finish_checks();
	printf("tp_preempt: OK test=%s algo=%s wait=%s yields=%lu,%lu\n",
	       expect_yields ? "holder-yields" : "holder-no-yield", algo->name,
	       opt_policy_name(ls_wait_cfg.policy), y1, y2);
}

static void t_grantee(void)
{
	ls_tp_update_delay_ns = 3600000000000ull; /* 1 hour: a stopped W looks live */
	ls_tp_patience_ns = 3600000000000ull;	  /* W's attempt never times out */
	ls_tp_max_cs_ns = 100000;
	uint64_t tail_w = holder_and_waiter();
	stop_thread(1);
	ls_tp_patience_ns = 1000000; /* V's attempts: 1 ms each */
	start(2, waiter_once);
	await_queued(tail_w); /* V waits behind W */
	atomic_store(&th[0].go, 1);
	await(&th[0].done, 1, "the holder's unlock returning");
	unsigned long y0 = atomic_load(&yields[2]);
	set_phase("the waiter behind the stopped grantee yielding 3 times");
	while (atomic_load(&yields[2]) < y0 + 3)
		msleep(1);
	if (atomic_load(&th[1].held) || atomic_load(&th[2].held))
		fail("%s", "a waiter got the lock while the grantee was stopped");
	atomic_store(&resume[1], 1);
	await(&th[1].held, 1, "the resumed grantee getting the lock");
	await(&th[2].held, 1, "the waiter behind it getting the lock");
	finish_checks();
	printf("tp_preempt: OK test=grantee-yields algo=%s wait=%s yields_after_release=%lu\n", algo->name,
	       opt_policy_name(ls_wait_cfg.policy), atomic_load(&yields[2]) - y0);
}

/* CPU time used so far by thread id, in ns. */
static uint64_t cpu_ns(int id)
{
	clockid_t c;
	struct timespec ts;
	if (pthread_getcpuclockid(th[id].t, &c) || clock_gettime(c, &ts))
		fail("%s", "cannot read a thread's CPU clock");
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void t_spin_factor(void)
{
	ls_tp_update_delay_ns = ls_tp_patience_ns = ls_tp_max_cs_ns = 3600000000000ull; /* 1 hour */
	ls_wait_cfg.spin = 1u << 16;
	ls_tp_spin_factor = 1u << 16;
	start(0, holder);
	await(&th[0].held, 1, "holder taking the lock");
	start(1, waiter_once);
	await(&th[1].started, 1, "waiter starting");
	set_phase("the waiter (factor 65536) spending 100 ms of CPU time");
	while (cpu_ns(1) < 100000000u && !atomic_load(&yields[1]))
		msleep(1);
	unsigned long y1 = atomic_load(&yields[1]);
	if (y1) {
		char b[32];
		snprintf(b, sizeof b, "%lu", y1);
		fail("a waiter yielded (%s times) before it had spun LOCKSWAP_TP_SPIN_FACTOR x LOCKSWAP_SPIN "
		     "steps",
		     b);
	}
	ls_tp_spin_factor = 1; /* read by each step: thread 2 spins the policy's budget only */
	start(2, waiter_once);
	set_phase("the control waiter (factor 1) yielding after 65536 spin steps");
	while (!atomic_load(&yields[2]))
		msleep(1);
	unsigned long ms = (unsigned long)(cpu_ns(1) / 1000000);
	atomic_store(&th[0].go, 1);
	await(&th[1].held, 1, "first waiter getting the lock");
	await(&th[2].held, 1, "second waiter getting the lock");
	finish_checks();
	printf("tp_preempt: OK test=spin-factor algo=%s wait=%s cpu_ms_without_yield=%lu\n", algo->name,
	       opt_policy_name(ls_wait_cfg.policy), ms);
}

static _Atomic long early, timeouts_seen;
static int timer(struct thr *t)
{
	atomic_store(&t->started, 1);
	for (int i = 0; i < 10; i++) {
		uint64_t d = ls_now_ns() + 20000000;
		int r = algo->timedlock(L, d);
		uint64_t now = ls_now_ns();
		if (r != ETIMEDOUT)
			return 1;
		if (now < d)
			atomic_fetch_add(&early, 1);
		atomic_fetch_add(&timeouts_seen, 1);
	}
	if (algo->trylock(L) != EBUSY)
		return 2;
	atomic_store(&t->count, 1); /* timeouts done */
	while (!atomic_load(&t->go))
		msleep(1);
	algo->lock(L);
	critical();
	algo->unlock(L);
	uint64_t d = ls_now_ns() + 60000000000ull;
	if (algo->timedlock(L, d) != 0)
		return 3;
	critical();
	algo->unlock(L);
	atomic_store(&t->held, 1);
	return 0;
}

static void t_timeouts(void)
{
	ls_tp_update_delay_ns = 1000000;
	ls_tp_patience_ns = 1000000;
	ls_tp_max_cs_ns = 100000;
	start(0, holder);
	await(&th[0].held, 1, "holder taking the lock");
	uint64_t tail_h = word(0);
	stop_thread(0);
	start(1, waiter_once);
	await_queued(tail_h);
	stop_thread(1);
	start(2, timer);
	start(3, timer);
	await(&th[2].count, 1, "timedlock calls timing out");
	await(&th[3].count, 1, "timedlock calls timing out");
	if (th[2].done || th[3].done)
		fail("%s",
		     "timedlock did not return ETIMEDOUT, or trylock did not return EBUSY, on the held lock");
	if (atomic_load(&early))
		fail("%s", "timedlock returned ETIMEDOUT before its deadline");
	/* H resumes and releases; the timers then lock. */
	atomic_store(&resume[0], 1);
	atomic_store(&th[0].go, 1);
	if (ls_wait_cfg.policy == LS_WAIT_PARK)
		atomic_store(&resume[1], 1); /* W may sleep: if every waiter sleeps,
						mcs-tp grants the first sleeper */
	atomic_store(&th[2].go, 1);
	atomic_store(&th[3].go, 1);
	await(&th[2].held, 1, "timedlock threads getting the lock after the holder released");
	await(&th[3].held, 1, "timedlock threads getting the lock after the holder released");
	if (ls_wait_cfg.policy != LS_WAIT_PARK && atomic_load(&th[1].held))
		fail("%s", "the stopped waiter ran before it was resumed");
	atomic_store(&resume[1], 1);
	await(&th[1].held, 1, "the resumed waiter getting the lock");
	if (th[2].result || th[3].result)
		fail("%s", "a timedlock thread failed");
	finish_checks();
	printf("tp_preempt: OK test=timeouts algo=%s wait=%s timeouts=%ld\n", algo->name,
	       opt_policy_name(ls_wait_cfg.policy), atomic_load(&timeouts_seen));
}

static void usage(const char *why)
{
	fprintf(stderr,
		"tp_preempt: %s (usage: tp_preempt -a ALGO [-w spin|yield|park] [-T WATCHDOG_S] "
		"stopped-waiter|holder-yields|holder-no-yield|grantee-yields|timeouts|spin-factor)\n",
		why);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *name = NULL, *test = NULL;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	int c;
	opterr = 0;
	while ((c = getopt(argc, argv, "a:T:w:")) != -1) {
		if (opt_algo_wait(c, optarg, &name))
			continue;
		if (c == 'T')
			watchdog = (unsigned)opt_number("T", optarg, 1, 3600);
		else
			usage("bad arguments");
	}
	if (optind + 1 < argc)
		usage("bad arguments");
	if (optind < argc)
		test = argv[optind];
	if (!name || !test)
		usage("-a ALGO and TEST are required");
	algo = ls_algo_find(name);
	if (!algo || !algo->trylock)
		usage("unknown algorithm");
	if (!strcmp(test, "timeouts") && !algo->timedlock)
		usage("the algorithm has no native timedlock");
	ls_node_counting = true;
	L = opt_state(algo);
	if (!L)
		opt_error("no memory for the lock's state");
	if (algo->init)
		algo->init(L);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	alarm(watchdog);

	if (!strcmp(test, "stopped-waiter"))
		t_stopped_waiter();
	else if (!strcmp(test, "holder-yields"))
		t_holder(true);
	else if (!strcmp(test, "holder-no-yield"))
		t_holder(false);
	else if (!strcmp(test, "grantee-yields"))
		t_grantee();
	else if (!strcmp(test, "timeouts"))
		t_timeouts();
	else if (!strcmp(test, "spin-factor"))
		t_spin_factor();
	else
		usage("unknown test");
	return 0;
}
