/*
 * rw_wake.c - whom a reader-writer lock's release wakes under
 * LOCKSWAP_WAIT=park: only the waiters it lets in (central), not every
 * sleeper (issue 26 item 3 for the rwlock family); and that a timed writer
 * that gives up takes no sleeping writer's wake-up with it.
 *
 *   rw_wake -a RWALGO [-k own|reader|writer] [-T SECONDS(30)] writer-out|reader-out|timed-out
 *
 * The main thread takes the lock; waiters then call rdlock or wrlock, each
 * started only once the previous one is asleep in futex(2) (proctask.h) or
 * holds the lock (a reader beside readers), so that they queue in that
 * order. A waiter that gets the lock holds it until told to release. Sleeps
 * are counted with voluntary_ctxt_switches: a sleeper woken for nothing
 * goes back to sleep and its count grows.
 *
 *   writer-out  main holds the write lock; readers R1 R2, then writers
 *               W1 W2 W3 W4 wait. Main releases: the readers may go, and
 *               one writer, the next (plus the one after it, which a
 *               ticket lock's new holder wakes early: turn.h). Once every
 *               waiter holds the lock or sleeps again, at most two of the
 *               writers that do not hold it may have been woken. A lock
 *               whose writer out wakes every sleeper (central before,
 *               pf-t: one wake-up for all) fails: three or four grew.
 *   reader-out  main holds a read lock; writer W1 claims or queues for the
 *               lock and waits for main; writers W2 W3 and then reader R1
 *               wait (R1 enters beside main where the kind lets it: it
 *               then holds, and releases after main). The last reader out
 *               lets W1 in: once every waiter holds the lock or sleeps
 *               again, at most one of those that do not hold it may have
 *               been woken (the next in line, which a queue lock's new
 *               holder wakes early: wait.h). A lock whose last reader out
 *               wakes every sleeper (central before: W2, W3, R1) fails.
 *   timed-out   main holds a read lock; writer W1 waits for main, asleep;
 *               main's timed write attempt (deadline: now) must give up,
 *               ETIMEDOUT, and take nothing of W1's with it: main's read
 *               unlock then lets W1 in. c-rw-wp under reader preference
 *               failed: its timed writer, giving up, cleared the bit of
 *               the indicator that W1 slept on (WWAIT) with main still
 *               counted, and main's departure then woke nobody.
 * -k says what every acquisition asks for (rwlock.h, PREFERENCE): the
 * algorithm's own policy (the default), reader preference (the default
 * kind) or writer preference (the _NP kind).
 * The algorithm's tunables are read from the environment, as the shim
 * reads them (c-rw-wp's readers must not run out of patience: the fall of
 * their barrier lets every writer on to its ticket).
 * Then every holder releases and every waiter must get the lock in turn
 * (no lost wake-up), and the lock is free at the end (trywrlock).
 *
 * Nothing depends on speed: every wait is for an event (a thread asleep in
 * futex(2), a thread holding the lock), bounded only by the watchdog
 * (SIGALRM after SECONDS: prints the phase, exit 1). The wake-up a release
 * issues happens inside that call (the woken thread is runnable before the
 * call returns), so a waiter seen asleep in futex(2) afterwards with an
 * unchanged count was not woken.
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
#include "rwlock/rwlock.h"
#include "wait.h"

#define FAIL_PREFIX "rw_wake: FAIL "
#include "fail.h"
#define OPT_PROG "rw_wake"
#include "opts.h"
#include "proctask.h"

#define MAXW 8

static const struct ls_rwalgo *algo;
static void *L;
static unsigned how = LS_RW_OWN_POLICY;
static const char *volatile phase = "start";

struct waiter {
	pthread_t t;
	char mode; /* 'r' or 'w' */
	const char *name;
	_Atomic pid_t tid;
	_Atomic int got, release, done;
	long sleeps; /* before main's release */
};
static struct waiter w[MAXW];
static int nw;

static void on_alarm(int sig)
{
	(void)sig;
	char msg[512];
	int n = snprintf(msg, sizeof msg, "rw_wake: FAIL algo=%s: watchdog fired in phase: %s\n",
			 algo ? algo->name : "?", phase);
	if (write(1, msg, (size_t)n) < 0) {
	}
	_exit(1);
}

static void nap(void)
{
	struct timespec ts = {0, 1000000};
	nanosleep(&ts, NULL);
}

static void *run_waiter(void *arg)
{
	struct waiter *me = arg;
	void *token = NULL;
	atomic_store(&me->tid, gettid());
	if (me->mode == 'w')
		algo->wrlock(L, how);
	else if (algo->rdlock(L, how, &token))
		fail("rdlock failed");
	atomic_store(&me->got, 1);
	while (!atomic_load(&me->release))
		nap(); /* glibc's nanosleep: not a futex */
	if (me->mode == 'w')
		algo->wrunlock(L);
	else
		algo->rdunlock(L, token);
	atomic_store(&me->done, 1);
	return NULL;
}

/* Starts waiter i and waits until it sleeps in futex(2) or holds. */
static void start(char mode, const char *name)
{
	struct waiter *me = &w[nw++];
	memset(me, 0, sizeof *me);
	me->mode = mode;
	me->name = name;
	if (pthread_create(&me->t, NULL, run_waiter, me))
		fail("pthread_create");
	phase = "waiting for a waiter to hold the lock or fall asleep in futex(2)";
	pid_t tid;
	while (!(tid = atomic_load(&me->tid)) || (!atomic_load(&me->got) && !proctask_in_futex(tid)))
		nap();
}

/* Once every waiter holds the lock or sleeps: those that do not hold it
 * and were woken since their count was taken, as a list in buf. */
static int woken(char *buf, size_t len)
{
	phase = "waiting for every waiter to hold the lock or sleep again";
	for (int i = 0; i < nw; i++)
		while (!atomic_load(&w[i].got) && !proctask_in_futex(atomic_load(&w[i].tid)))
			nap();
	int n = 0;
	buf[0] = 0;
	for (int i = 0; i < nw; i++) {
		if (atomic_load(&w[i].got))
			continue;
		long s = proctask_sleeps(atomic_load(&w[i].tid));
		if (s < 0)
			fail("cannot read /proc/self/task/%d/status", (int)w[i].tid);
		/* asleep again: a grown count is a wake-up for nothing */
		if (s != w[i].sleeps && atomic_load(&w[i].got) == 0) {
			n++;
			snprintf(buf + strlen(buf), len - strlen(buf), " %s", w[i].name);
		}
	}
	return n;
}

static void snapshot(void)
{
	for (int i = 0; i < nw; i++)
		if (!atomic_load(&w[i].got) && (w[i].sleeps = proctask_sleeps(atomic_load(&w[i].tid))) < 0)
			fail("cannot read /proc/self/task/%d/status", (int)w[i].tid);
}

/* Lets every holder go, and each waiter as soon as it gets the lock. */
static void finish(void)
{
	phase = "every waiter getting the lock in turn (a lost wake-up?)";
	for (int i = 0; i < nw; i++)
		atomic_store(&w[i].release, 1);
	for (int i = 0; i < nw; i++)
		pthread_join(w[i].t, NULL);
	phase = "the lock free at the end";
	if (algo->trywrlock(L, how) != 0)
		fail("trywrlock: the lock is not free once every waiter has released it");
	algo->wrunlock(L);
}

static void writer_out(void)
{
	char list[256];
	algo->wrlock(L, how);
	start('r', "R1");
	start('r', "R2");
	start('w', "W1");
	start('w', "W2");
	start('w', "W3");
	start('w', "W4");
	snapshot();
	phase = "main's write unlock";
	algo->wrunlock(L);
	phase = "waiting for a waiter to get the lock";
	for (;;) {
		bool any = false;
		for (int i = 0; i < nw; i++)
			any |= atomic_load(&w[i].got) != 0;
		if (any)
			break;
		nap();
	}
	woken(list, sizeof list);
	int writers = 0;
	for (int i = 2; i < nw; i++)
		if (!atomic_load(&w[i].got) && strstr(list, w[i].name))
			writers++;
	if (writers > 2)
		fail("the writer's release woke %d writers that could not go (woken:%s): it wakes only "
		     "the next",
		     writers, list);
	printf("rw_wake: writer-out algo=%s woken:%s\n", algo->name, list[0] ? list : " none");
	finish();
}

static void reader_out(void)
{
	char list[256];
	void *token = NULL;
	if (algo->rdlock(L, how, &token))
		fail("rdlock failed");
	start('w', "W1");
	start('w', "W2");
	start('w', "W3");
	start('r', "R1");
	snapshot();
	phase = "main's read unlock (and R1's, if it entered beside main)";
	algo->rdunlock(L, token);
	if (atomic_load(&w[3].got)) {
		atomic_store(&w[3].release, 1);
		while (!atomic_load(&w[3].done))
			nap();
	}
	phase = "waiting for W1 to get the lock";
	while (!atomic_load(&w[0].got))
		nap();
	int n = woken(list, sizeof list);
	if (n > 1)
		fail("the last reader's release woke%s, which could not go: it wakes only the writer it "
		     "lets in",
		     list);
	printf("rw_wake: reader-out algo=%s woken:%s\n", algo->name, list[0] ? list : " none");
	finish();
}

static void timed_out(void)
{
	void *token = NULL, *tok = NULL;
	if (algo->rdlock(L, how, &token))
		fail("rdlock failed");
	start('w', "W1");
	if (atomic_load(&w[0].got))
		fail("W1 got the write lock while main holds a read lock");
	phase = "main's timed write attempt, deadline now";
	uint64_t deadline = ls_now_ns();
	int e = algo->timedwrlock ? algo->timedwrlock(L, how, deadline)
				  : ls_rw_timed_fallback(algo, L, how, true, deadline, &tok);
	if (e != ETIMEDOUT)
		fail("a timed write attempt beside main's own read hold returned %d, not ETIMEDOUT", e);
	phase = "main's read unlock";
	algo->rdunlock(L, token);
	phase = "waiting for W1 to get the lock (a wake-up lost by the timed writer?)";
	while (!atomic_load(&w[0].got))
		nap();
	printf("rw_wake: timed-out algo=%s\n", algo->name);
	finish();
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	int c, secs = 30;
	static const char *const kinds[] = {"own", "reader", "writer"};
	static const unsigned kind_how[] = {LS_RW_OWN_POLICY, 0, LS_RW_PREFER_WRITER};
	while ((c = getopt(argc, argv, "a:k:T:")) != -1) {
		switch (c) {
		case 'a':
			name = optarg;
			break;
		case 'k':
			how = kind_how[opt_choose("k", "preference", optarg, kinds, 3)];
			break;
		case 'T':
			secs = (int)opt_number("T", optarg, 1, 3600);
			break;
		default:
			opt_error("usage: rw_wake -a RWALGO [-k own|reader|writer] [-T SECONDS] "
				  "writer-out|reader-out|timed-out");
		}
	}
	if (!name || optind != argc - 1)
		opt_error("usage: rw_wake -a RWALGO [-k own|reader|writer] [-T SECONDS] "
			  "writer-out|reader-out|timed-out");
	static const char *const cases[] = {"writer-out", "reader-out", "timed-out"};
	int which = opt_choose("", "case", argv[optind], cases, 3);
	char err[1400];
	if (!(algo = ls_rwalgo_lookup(name, err, sizeof err)) ||
	    ls_rwalgo_start(algo, opt_algo("mcs"), err, sizeof err))
		opt_error("-a: %s", err);
	if (algo->caps & LS_RWCAP_PASSTHROUGH)
		opt_error("-a: '%s' is not a lock (the shim hands it to glibc)", name);
	opt_rwparams_env();
	ls_wait_cfg.policy = LS_WAIT_PARK;
	ls_wait_cfg.spin = 16;
	ls_wait_cfg.yield = 2;
	fail_algo(name);
	signal(SIGALRM, on_alarm);
	alarm((unsigned)secs);
	if (!(L = ls_ext_alloc(algo->state_size)))
		fail("cannot allocate the lock");
	if (algo->init)
		algo->init(L);
	if (which == 0)
		writer_out();
	else if (which == 1)
		reader_out();
	else
		timed_out();
	if (algo->destroy)
		algo->destroy(L);
	return 0;
}
