/*
 * auto.c - the guarantees of the `auto` lock (locks/adaptive/auto.c) that
 * the generic harnesses do not check: its bound on unfairness, and its
 * waiter list across fork().
 *
 *   auto CASE [-w spin|yield|park] [-k PASSES] [-r REGIME] [-T SECONDS(30)]
 *
 * -r sets LOCKSWAP_AUTO_REGIME (0 choose, 1 sleep, 2 spin, 3 batch; default
 * 0): the bounds hold in every regime.
 * Cases (each prints one line "auto: OK ..." and exits 0, or "auto: FAIL
 * ..." and exits 1):
 *   passes  The main thread holds the lock; thread B calls lock() and is
 *           queued (under park: seen asleep in futex(2); otherwise: seen
 *           in the list, through the lock's WAITERS bit). The main thread
 *           then releases and at once re-takes the lock, over and over,
 *           counting its releases. B must get the lock at the latest at
 *           release PASSES+1 (LOCKSWAP_AUTO_PASSES=PASSES, default 3; the
 *           time bound is switched off). The count is exact: nothing
 *           depends on timing.
 *   fair    Same, with the count bound switched off and the time bound
 *           LOCKSWAP_AUTO_FAIR_NS at 1 ms: B must get the lock (a lost
 *           guarantee shows as a run stopped after SECONDS). Reports after
 *           how many releases and how long.
 *   none    Same with both bounds switched off: reports how many releases
 *           B needed in SECONDS, or that it never got the lock (a control:
 *           shows what the bounds prevent; never fails).
 *   fork    Two threads wait in the list when the process forks. In the
 *           child, whose list holds the nodes of threads that do not exist
 *           there, the forking thread releases the lock and four new
 *           threads contend for it (1000 acquisitions each, with passes 0:
 *           every release hands off to the head): they must all finish
 *           (the stale nodes are unlinked, never handed the lock). Park
 *           only: there a waiter seen asleep is a queued one.
 *   deadline A timed waiter T queued behind the head A, both asleep; A is
 *           then held in a signal handler and the holder releases: the
 *           release wakes A (the head), which cannot run, so the lock stays
 *           free while T sleeps to its deadline. T must return 0 with the
 *           lock, after its deadline (issue 21, item 2: a timed waiter is
 *           re-evaluated at its deadline; without it, ETIMEDOUT with the
 *           lock free all along). Then A gets the lock. Park only. If the
 *           machine is so slow that T's deadline passes before the holder
 *           releases, the round is repeated with twice the patience.
 * Linked with build/liblocks.a directly (no LD_PRELOAD).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../progs/check.h" /* task_state */
#include "lock.h"
#include "wait.h"

#define OPT_PROG "auto"
#include "opts.h"

static const struct ls_algo *algo;
static void *state;
static int limit_ms = 30000;

/* One line "file:line: auto: FAIL wait=POLICY: ..." and exit 1 (check.h). */
#define die(...) FAIL("auto: FAIL wait=%s: %s", opt_policy_name(ls_wait_cfg.policy), msg(__VA_ARGS__))

static const char *msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *msg(const char *fmt, ...)
{
	static char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return buf;
}

static void nap_ms(int ms)
{
	usleep((useconds_t)ms * 1000);
}

static void set_param(const char *env, uint64_t v)
{
	for (const struct ls_param *p = algo->params; p && p->env; p++)
		if (!strcmp(p->env, env)) {
			*p->value = v;
			return;
		}
	die("auto has no tunable %s", env);
}

/* The lock word's WAITERS bit (locks/adaptive/auto.c): somebody is queued. */
static int queued(void)
{
	return (atomic_load_explicit((_Atomic uint32_t *)state, memory_order_relaxed) & 0x4u) != 0;
}

/* Waits until thread tid is queued on the lock: asleep under park (which
 * only a queued waiter does), in the list otherwise (one waiter only). */
static void await_queued(_Atomic pid_t *tidp)
{
	pid_t tid;
	int ms = 0;
	while (!(tid = atomic_load_explicit(tidp, memory_order_acquire)))
		nap_ms(1);
	while (!(ls_wait_cfg.policy == LS_WAIT_PARK ? task_state(tid) == 'S' : queued())) {
		if (++ms > limit_ms)
			die("the waiter is not queued after %d ms", limit_ms);
		nap_ms(1);
	}
}

/* ---- passes, fair, none ---- */

static _Atomic pid_t b_tid;
static _Atomic int b_done;
static unsigned long releases; /* the main thread's, written under the lock */
static unsigned long b_saw;    /* releases when B got the lock */

static void *b_thread(void *arg)
{
	(void)arg;
	atomic_store_explicit(&b_tid, (pid_t)syscall(SYS_gettid), memory_order_release);
	algo->lock(state);
	b_saw = releases;
	atomic_store_explicit(&b_done, 1, memory_order_relaxed);
	algo->unlock(state);
	return NULL;
}

/* Runs the barging scenario; returns the releases B needed, or 0 if it did
 * not get the lock within `ms` (ms 0: wait as long as it takes). */
static unsigned long barge(int ms)
{
	pthread_t b;
	algo->lock(state);
	if (pthread_create(&b, NULL, b_thread, NULL))
		die("pthread_create failed");
	await_queued(&b_tid);
	uint64_t end = ms ? ls_now_ns() + (uint64_t)ms * 1000000u : 0;
	for (unsigned long i = 0;; i++) {
		releases++;
		algo->unlock(state);
		algo->lock(state);
		if (atomic_load_explicit(&b_done, memory_order_relaxed))
			break;
		if (end && (i & 1023) == 0 && ls_now_ns() > end) {
			algo->unlock(state);
			pthread_join(b, NULL);
			return 0;
		}
	}
	algo->unlock(state);
	pthread_join(b, NULL);
	return b_saw;
}

/* ---- fork ---- */

static _Atomic pid_t w_tid[2];
static _Atomic unsigned long child_total;

static void *w_thread(void *arg)
{
	_Atomic pid_t *me = arg;
	atomic_store_explicit(me, (pid_t)syscall(SYS_gettid), memory_order_release);
	algo->lock(state);
	algo->unlock(state);
	return NULL;
}

static void *child_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		algo->lock(state);
		atomic_fetch_add_explicit(&child_total, 1, memory_order_relaxed);
		algo->unlock(state);
	}
	return NULL;
}

static void fork_case(void)
{
	pthread_t w[2];
	set_param("LOCKSWAP_AUTO_PASSES", 0);
	algo->lock(state);
	for (int i = 0; i < 2; i++) {
		if (pthread_create(&w[i], NULL, w_thread, (void *)&w_tid[i]))
			die("pthread_create failed");
		await_queued(&w_tid[i]); /* asleep: queued (park only) */
	}
	pid_t pid = fork();
	if (pid < 0)
		die("fork failed");
	if (pid == 0) {
		alarm((unsigned)(limit_ms / 1000));
		algo->unlock(state);
		pthread_t c[4];
		for (int i = 0; i < 4; i++)
			if (pthread_create(&c[i], NULL, child_thread, NULL))
				_exit(3);
		for (int i = 0; i < 4; i++)
			pthread_join(c[i], NULL);
		_exit(atomic_load(&child_total) == 4000 ? 0 : 4);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid failed");
	algo->unlock(state);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	if (WIFSIGNALED(status))
		die("fork: the child was killed by signal %d (deadlock in the child?)", WTERMSIG(status));
	if (WEXITSTATUS(status))
		die("fork: the child exited with %d", WEXITSTATUS(status));
}

/* ---- deadline ---- */

static _Atomic pid_t a_tid, t_tid;
static _Atomic int a_hold, a_held;
static uint64_t t_deadline, t_back;
static int t_rc;

static void hold_here(int sig)
{
	(void)sig;
	atomic_store(&a_held, 1);
	while (atomic_load(&a_hold)) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
}

static void *a_thread(void *arg)
{
	(void)arg;
	atomic_store_explicit(&a_tid, (pid_t)syscall(SYS_gettid), memory_order_release);
	algo->lock(state);
	algo->unlock(state);
	return NULL;
}

static void *t_thread(void *arg)
{
	(void)arg;
	atomic_store_explicit(&t_tid, (pid_t)syscall(SYS_gettid), memory_order_release);
	t_rc = algo->timedlock(state, t_deadline);
	t_back = ls_now_ns();
	if (!t_rc)
		algo->unlock(state);
	return NULL;
}

/* One round; returns false if it proved nothing (T's deadline passed before
 * the holder released: too slow a machine for this patience). */
static bool deadline_round(uint64_t patience_ns)
{
	pthread_t a, t;
	atomic_store(&a_tid, 0);
	atomic_store(&t_tid, 0);
	atomic_store(&a_held, 0);
	algo->lock(state);
	if (pthread_create(&a, NULL, a_thread, NULL))
		die("pthread_create failed");
	await_queued(&a_tid); /* asleep: the list's head */
	t_deadline = ls_now_ns() + patience_ns;
	if (pthread_create(&t, NULL, t_thread, NULL))
		die("pthread_create failed");
	await_queued(&t_tid); /* asleep behind A */
	atomic_store(&a_hold, 1);
	if (syscall(SYS_tgkill, getpid(), atomic_load(&a_tid), SIGUSR1))
		die("tgkill failed");
	while (!atomic_load(&a_held))
		nap_ms(1);
	bool in_time = ls_now_ns() < t_deadline;
	algo->unlock(state); /* wakes A, which is held: the lock stays free */
	pthread_join(t, NULL);
	atomic_store(&a_hold, 0);
	pthread_join(a, NULL);
	if (!in_time)
		return false;
	if (t_rc)
		die("deadline: the timed waiter returned %d (%s) at its deadline with the lock free since "
		    "the "
		    "release; expected 0",
		    t_rc, t_rc == ETIMEDOUT ? "ETIMEDOUT" : "?");
	if (t_back < t_deadline)
		die("deadline: the timed waiter got the lock %.3f ms before its deadline, while the woken "
		    "head could not run",
		    (double)(t_deadline - t_back) / 1e6);
	if (algo->trylock(state))
		die("deadline: the lock is not free after both waiters left");
	algo->unlock(state);
	return true;
}

static void deadline_case(void)
{
	set_param("LOCKSWAP_AUTO_PASSES", (0xffffffu) - 1);
	set_param("LOCKSWAP_AUTO_FAIR_NS", UINT64_MAX);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = hold_here;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction failed");
	for (uint64_t p = 200000000; p <= 6400000000u; p *= 2)
		if (deadline_round(p))
			return;
	die("deadline: the machine never released within the patience (up to 6.4 s)");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: auto passes|fair|none|fork|deadline [-w spin|yield|park] [-k PASSES] "
				"[-r REGIME] [-T SECONDS]\n");
		return 2;
	}
	const char *c = argv[1];
	unsigned long k = 3, regime = 0;
	int opt;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	optind = 2;
	while ((opt = getopt(argc, argv, "w:k:r:T:")) != -1) {
		switch (opt) {
		case 'w':
			opt_policy(optarg);
			break;
		case 'k':
			k = (unsigned long)opt_number("k", optarg, 0, 1u << 24);
			break;
		case 'r':
			regime = (unsigned long)opt_number("r", optarg, 0, 3);
			break;
		case 'T':
			limit_ms = (int)opt_number("T", optarg, 1, 3600) * 1000;
			break;
		default:
			return 2;
		}
	}
	if (!(algo = ls_algo_find("auto"))) {
		fprintf(stderr, "auto: the auto lock is not linked in\n");
		return 2;
	}
	state = aligned_alloc(LS_CACHELINE, LS_CACHELINE);
	if (!state)
		die("out of memory");
	memset(state, 0, LS_CACHELINE);
	const char *pol = opt_policy_name(ls_wait_cfg.policy);
	set_param("LOCKSWAP_AUTO_REGIME", regime);

	if (!strcmp(c, "passes")) {
		set_param("LOCKSWAP_AUTO_PASSES", k);
		set_param("LOCKSWAP_AUTO_FAIR_NS", UINT64_MAX);
		unsigned long n = barge(0);
		if (n > k + 1)
			die("passes: the queued waiter got the lock at release %lu; the bound is %lu", n,
			    k + 1);
		printf("auto: OK passes wait=%s: the queued waiter got the lock at release %lu (bound %lu)\n",
		       pol, n, k + 1);
	} else if (!strcmp(c, "fair")) {
		set_param("LOCKSWAP_AUTO_PASSES", (0xffffffu) - 1);
		set_param("LOCKSWAP_AUTO_FAIR_NS", 1000000);
		uint64_t t0 = ls_now_ns();
		unsigned long n = barge(0);
		printf(
		    "auto: OK fair wait=%s: the queued waiter got the lock at release %lu, after %.2f ms\n",
		    pol, n, (double)(ls_now_ns() - t0) / 1e6);
	} else if (!strcmp(c, "none")) {
		set_param("LOCKSWAP_AUTO_PASSES", (0xffffffu) - 1);
		set_param("LOCKSWAP_AUTO_FAIR_NS", UINT64_MAX);
		unsigned long n = barge(limit_ms / 10);
		if (n)
			printf("auto: OK none wait=%s: without bounds the queued waiter got the lock at "
			       "release %lu\n",
			       pol, n);
		else
			printf("auto: OK none wait=%s: without bounds the queued waiter did not get the lock "
			       "in %lu "
			       "releases (%d ms)\n",
			       pol, releases, limit_ms / 10);
	} else if (!strcmp(c, "fork")) {
		if (ls_wait_cfg.policy != LS_WAIT_PARK) {
			fprintf(stderr, "auto: fork needs -w park (a sleeping waiter is a queued one)\n");
			return 2;
		}
		fork_case();
		printf("auto: OK fork wait=%s: the child's threads got past the stale waiters\n", pol);
	} else if (!strcmp(c, "deadline")) {
		if (ls_wait_cfg.policy != LS_WAIT_PARK) {
			fprintf(stderr, "auto: deadline needs -w park (a sleeping waiter is a queued one)\n");
			return 2;
		}
		deadline_case();
		printf("auto: OK deadline wait=%s: a timed waiter behind a woken head that could not run got "
		       "the free lock at its deadline\n",
		       pol);
	} else {
		fprintf(stderr, "auto: unknown case '%s' (valid: passes, fair, none, fork, deadline)\n", c);
		return 2;
	}
	return 0;
}
