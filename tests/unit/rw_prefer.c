/*
 * rw_prefer.c - what a reader-writer lock gives the preference a lock asks
 * for, and its timed writers (issue 32, items 3 and 4), through the
 * algorithm's table, under LOCKSWAP_WAIT=park.
 *
 *   rw_prefer -a RWALGO [-T SECONDS(60)] CASE...
 *   CASE: reader|writer|own|timed-reader|timed-writer|timed-own, or all
 *   (every case that applies to RWALGO), run in turn in this process, each
 *   on a fresh lock, an OK line each; a failure names the case.
 *
 * (the mutex-serialised mode takes LOCKSWAP_ALGO's lock, default mcs) *
 * The name says what every acquisition asks for (rwlock.h, PREFERENCE):
 * reader preference (nothing: the default kind), writer preference
 * (LS_RW_PREFER_WRITER: the _NP writer kind), the algorithm's own policy
 * (LS_RW_OWN_POLICY). The main thread takes a read lock; then threads come
 * one at a time, each started once the one before holds the lock or is
 * asleep in futex(2) (proctask.h), i.e. waits:
 *
 *   reader, writer, own
 *       W asks to write and waits for main. Then R asks to read:
 *       - where the lock asks for reader preference (reader; own, for an
 *         algorithm whose own policy is the kind's), R gets the lock beside
 *         main, with W waiting, and so does a tryrdlock of another thread
 *         (a reader that holds the lock may wait for another reader while
 *         writers wait: glibc's tst-rwlock16);
 *       - where it asks for writer preference (writer; own, for the others,
 *         but NAME+bravo's biased readers, which pass waiting writers by
 *         design), tryrdlock is EBUSY and R waits until W has had the lock.
 *       Then main releases: W, and R, get the lock in turn.
 *   timed-reader, timed-writer, timed-own
 *       The same with a timed writer: T, with a deadline an hour away,
 *       keeps R out exactly as W did (or, under reader preference, does
 *       not), and gets the lock when main releases. Then T2, with a
 *       deadline 50 ms away, waits; R2 asks to read behind it; when T2's
 *       deadline passes it must return ETIMEDOUT (not before its
 *       deadline), and R2 must get the lock beside main, which still holds
 *       it (glibc's tst-rwlock15: the readers a timed writer kept out go on
 *       when it gives up). Then a timed writer T3 waits behind a writer:
 *       main takes the write lock, T3 (50 ms) waits, then W3 and R3 behind
 *       it; T3 gives up; when main releases, W3 and R3 get the lock, one
 *       after the other. The lock is free at the end (trywrlock): nothing
 *       was left behind.
 * An algorithm whose readers exclude each other (capability exclusive, the
 * mutex-serialised mode) admits one reader by design: the reader cases do
 * not apply to it (usage error), the writer ones do, with R waiting for
 * main too.
 *
 * Nothing depends on speed: every wait is for an event (a thread asleep in
 * futex(2), holding the lock, or returned), bounded only by the watchdog
 * (SIGALRM after SECONDS: prints the phase, exit 1); the 50 ms deadlines
 * may pass before the threads behind them arrive, which changes nothing
 * the checks look at. Exit: 0 pass, 1 fail (a line says why), 2 usage.
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

#include "lock.h"
#include "pool.h"
#include "rwlock/rwlock.h"
#include "wait.h"

#define FAIL_PREFIX "rw_prefer: FAIL "
#include "fail.h"
#define OPT_PROG "rw_prefer"
#include "opts.h"
#include "proctask.h"

#define MS 1000000ull

static const struct ls_rwalgo *algo;
static void *L;
static unsigned how;
static const char *volatile phase = "start";

struct actor {
	pthread_t t;
	char mode; /* 'r' read, 'w' write, 't' timed write */
	const char *name;
	uint64_t patience; /* 't': deadline = start + patience */
	_Atomic pid_t tid;
	_Atomic int got, returned, release, done;
	int rc;
	uint64_t deadline, at; /* 't': its deadline; when it returned */
};

static void on_alarm(int sig)
{
	(void)sig;
	char msg[512];
	int n = snprintf(msg, sizeof msg, "rw_prefer: FAIL algo=%s how=%u: watchdog fired in phase: %s\n",
			 algo ? algo->name : "?", how, phase);
	if (write(1, msg, (size_t)n) < 0) {
	}
	_exit(1);
}

static void nap(void)
{
	struct timespec ts = {0, 1000000};
	nanosleep(&ts, NULL);
}

static void *run(void *arg)
{
	struct actor *a = arg;
	void *token = NULL;
	atomic_store(&a->tid, gettid());
	if (a->mode == 'w') {
		algo->wrlock(L, how);
	} else if (a->mode == 't') {
		a->deadline = ls_now_ns() + a->patience;
		/* (a table without one polls, as the shim would) */
		a->rc = algo->timedwrlock ? algo->timedwrlock(L, how, a->deadline)
					  : ls_rw_timed_fallback(algo, L, how, true, a->deadline, NULL);
		a->at = ls_now_ns();
		atomic_store(&a->returned, 1);
		if (a->rc) {
			atomic_store(&a->done, 1);
			return NULL;
		}
	} else if ((a->rc = algo->rdlock(L, how, &token))) {
		fail("%s: rdlock returned %d", a->name, a->rc);
	}
	atomic_store(&a->got, 1);
	while (!atomic_load(&a->release))
		nap(); /* glibc's nanosleep: not a futex */
	if (a->mode == 'r')
		algo->rdunlock(L, token);
	else
		algo->wrunlock(L);
	atomic_store(&a->done, 1);
	return NULL;
}

static bool holds(struct actor *a)
{
	return atomic_load(&a->got);
}

static bool asleep(struct actor *a)
{
	return !atomic_load(&a->got) && !atomic_load(&a->returned) && proctask_in_futex(atomic_load(&a->tid));
}

/* Starts an actor and waits until it holds the lock, sleeps in futex(2)
 * (it waits), or has returned without the lock (a timed one). */
static void start(struct actor *a, char mode, const char *name, uint64_t patience)
{
	memset(a, 0, sizeof *a);
	a->mode = mode;
	a->name = name;
	a->patience = patience;
	if (pthread_create(&a->t, NULL, run, a))
		fail("pthread_create");
	phase = name;
	while (!atomic_load(&a->tid) || (!holds(a) && !atomic_load(&a->returned) && !asleep(a)))
		nap();
}

static void release(struct actor *a)
{
	atomic_store(&a->release, 1);
}

static void await_flag(_Atomic int *f, const char *what)
{
	phase = what;
	while (!atomic_load(f))
		nap();
}

static void join(struct actor *a)
{
	release(a);
	pthread_join(a->t, NULL);
}

static void *try_read(void *arg)
{
	(void)arg;
	void *token = NULL;
	int r = algo->tryrdlock(L, how, &token);
	if (r == 0)
		algo->rdunlock(L, token);
	return (void *)(intptr_t)r;
}

static int other_tryrd(void)
{
	pthread_t t;
	void *r;
	if (pthread_create(&t, NULL, try_read, NULL))
		fail("pthread_create");
	pthread_join(t, &r);
	return (int)(intptr_t)r;
}

/* Does a reader that comes while readers hold the lock and a writer waits
 * get in? reader: must; writer: must not; -1: not checked. */
static int expect_pass;

/* Main holds a read lock; the waiting writer X (W or T) is asleep. */
static void reader_arrives(struct actor *x, struct actor *r)
{
	int t = other_tryrd();
	if (expect_pass == 1 && t != 0)
		fail("tryrdlock returned %d beside a reader, with %s waiting: no reader preference", t,
		     x->name);
	if (expect_pass == 0 && t != EBUSY)
		fail("tryrdlock returned %d beside a reader, with %s waiting: a reader passed a waiting "
		     "writer",
		     t, x->name);
	start(r, 'r', "R: a reader while main reads and a writer waits", 0);
	if (expect_pass == 1 && !holds(r))
		fail("R waits beside a reader while %s waits: no reader preference (a reader that "
		     "holds the lock and waits for R would wait for ever)",
		     x->name);
	if (expect_pass == 0 && holds(r))
		fail("R got the lock beside a reader while %s waits: a reader passed a waiting writer",
		     x->name);
}

/* After main's release, with x (a writer) and r (a reader) waiting or
 * holding: each gets the lock, never both at once. */
static void both_in_turn(struct actor *x, struct actor *r)
{
	phase = "the writer and the reader get the lock in turn";
	while (!holds(x) && !holds(r))
		nap();
	struct actor *first = holds(x) ? x : r, *second = first == x ? r : x;
	if (holds(second) && (first->mode != 'r' || second->mode != 'r'))
		fail("%s and %s hold the lock at once", first->name, second->name);
	join(first);
	await_flag(&second->got, "the second of the writer and the reader gets the lock");
	join(second);
}

static void pref_case(char xmode)
{
	void *token = NULL;
	struct actor x, r;
	if (algo->rdlock(L, how, &token))
		fail("main's rdlock");
	start(&x, xmode,
	      xmode == 't' ? "T: a timed writer (an hour) behind main's read"
			   : "W: a writer behind main's read",
	      3600 * 1000 * MS);
	if (holds(&x) || atomic_load(&x.returned))
		fail("%s did not wait for main's read lock", x.name);
	reader_arrives(&x, &r);
	phase = "main's read unlock";
	algo->rdunlock(L, token);
	if (expect_pass == 0) {
		/* writer preference: the writer first */
		await_flag(&x.got, "the writer gets the lock once main is out");
		if (holds(&r))
			fail("R holds the lock beside the writer");
	}
	both_in_turn(&x, &r);
	if (x.mode == 't' && x.rc != 0)
		fail("T returned %d", x.rc);
}

/* T2: a timed writer that gives up while main reads, R2 behind it. */
static void timed_gives_up_behind_readers(void)
{
	void *token = NULL;
	struct actor t, r;
	if (algo->rdlock(L, how, &token))
		fail("main's rdlock");
	start(&t, 't', "T2: a timed writer (50 ms) behind main's read", 50 * MS);
	start(&r, 'r', "R2: a reader behind T2", 0);
	await_flag(&t.returned, "T2 gives up at its deadline");
	if (t.rc != ETIMEDOUT)
		fail("T2 returned %d, not ETIMEDOUT, while main held a read lock", t.rc);
	if (t.at < t.deadline)
		fail("T2 returned ETIMEDOUT %llu ns before its deadline",
		     (unsigned long long)(t.deadline - t.at));
	await_flag(&r.got, "R2 gets the lock beside main once T2 has given up (tst-rwlock15)");
	join(&t);
	algo->rdunlock(L, token);
	join(&r);
}

/* T3: a timed writer that gives up behind a writer, W3 and R3 behind it. */
static void timed_gives_up_behind_writer(void)
{
	struct actor t, w, r;
	algo->wrlock(L, how);
	start(&t, 't', "T3: a timed writer (50 ms) behind main's write", 50 * MS);
	start(&w, 'w', "W3: a writer behind T3", 0);
	start(&r, 'r', "R3: a reader behind W3", 0);
	await_flag(&t.returned, "T3 gives up at its deadline");
	if (t.rc != ETIMEDOUT)
		fail("T3 returned %d, not ETIMEDOUT, while main held the write lock", t.rc);
	join(&t);
	if (holds(&w) || holds(&r))
		fail("a waiter got the lock while main held it for writing");
	phase = "main's write unlock";
	algo->wrunlock(L);
	both_in_turn(&w, &r);
}

static void free_at_end(void)
{
	phase = "the lock free at the end";
	if (algo->trywrlock(L, how) != 0)
		fail("trywrlock: the lock is not free once every thread has released it");
	algo->wrunlock(L);
	void *token = NULL;
	if (algo->tryrdlock(L, how, &token) != 0)
		fail("tryrdlock: the lock is not free once every thread has released it");
	algo->rdunlock(L, token);
}

static const char *const cases[] = {"reader", "writer", "own", "timed-reader", "timed-writer", "timed-own"};

/* One case on a fresh lock: main's checks, then the lock free and destroyed. */
static void run_case(const char *name, int which)
{
	static const unsigned hows[] = {0, LS_RW_PREFER_WRITER, LS_RW_OWN_POLICY};
	how = hows[which % 3];
	bool excl = algo->caps & LS_RWCAP_EXCLUSIVE;
	/* own: the kind's (reader preference, for a default-kind lock) for
	 * an algorithm with capability kind; biased readers of NAME+bravo
	 * pass waiting writers, so its own policy is not checked here */
	if (how == 0)
		expect_pass = 1;
	else if (how == LS_RW_PREFER_WRITER)
		expect_pass = 0;
	else
		expect_pass = algo->caps & LS_RWCAP_KIND ? 1 : algo->caps & LS_RWCAP_WRAPPER ? -1 : 0;
	if (excl)
		expect_pass = 0; /* R waits for main, whoever waits */
	static char prefix[256];
	snprintf(prefix, sizeof prefix, FAIL_PREFIX "algo=%s case=%s: ", name, cases[which]);
	fail_prefix = prefix;
	phase = "start";
	if (!(L = ls_ext_alloc(algo->state_size)))
		fail("cannot allocate the lock");
	if (algo->init)
		algo->init(L);
	if (which < 3) {
		pref_case('w');
	} else {
		pref_case('t');
		if (!excl)
			timed_gives_up_behind_readers();
		timed_gives_up_behind_writer();
	}
	free_at_end();
	if (algo->destroy)
		algo->destroy(L);
	printf("rw_prefer: OK algo=%s case=%s\n", name, cases[which]);
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	int c, secs = 60;
	while ((c = getopt(argc, argv, "a:T:")) != -1) {
		switch (c) {
		case 'a':
			name = optarg;
			break;
		case 'T':
			secs = (int)opt_number("T", optarg, 1, 3600);
			break;
		default:
			opt_error("usage: rw_prefer -a RWALGO [-T SECONDS] CASE...");
		}
	}
	if (!name || optind >= argc)
		opt_error("usage: rw_prefer -a RWALGO [-T SECONDS] "
			  "reader|writer|own|timed-reader|timed-writer|timed-own|all...");
	char err[1400];
	const char *mname = getenv("LOCKSWAP_ALGO"); /* the mutex-serialised mode's lock */
	if (!(algo = ls_rwalgo_lookup(name, err, sizeof err)) ||
	    ls_rwalgo_start(algo, opt_algo(mname ? mname : "mcs"), err, sizeof err))
		opt_error("-a: %s", err);
	if (algo->caps & LS_RWCAP_PASSTHROUGH)
		opt_error("-a: '%s' is not a lock (the shim hands it to glibc)", name);
	bool excl = algo->caps & LS_RWCAP_EXCLUSIVE;
	/* the cases, in order; all: every case that applies to the algorithm */
	int which[64], n = 0;
	for (int i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "all")) {
			for (int k = 0; k < 6; k++)
				if (!excl || k % 3 == 1)
					if (n < 64)
						which[n++] = k;
			continue;
		}
		int k = opt_choose("", "case", argv[i], cases, 6);
		if (excl && k % 3 != 1)
			opt_error("-a: %s's readers exclude each other (one reader at a time, by design): "
				  "only the writer cases apply",
				  name);
		if (n < 64)
			which[n++] = k;
	}
	opt_rwparams_env();
	ls_wait_cfg.policy = LS_WAIT_PARK;
	ls_wait_cfg.spin = 16;
	ls_wait_cfg.yield = 2;
	fail_algo(name);
	signal(SIGALRM, on_alarm);
	alarm((unsigned)secs);
	for (int i = 0; i < n; i++)
		run_case(name, which[i]);
	return 0;
}
