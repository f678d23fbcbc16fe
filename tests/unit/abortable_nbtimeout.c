/*
 * abortable_nbtimeout.c - the non-blocking timeout property (Scott TR 773,
 * section 2; Marathe et al. section 3.1): a timed attempt on a lock whose
 * holder never releases returns ETIMEDOUT even while a neighbour in the
 * queue is stopped.
 *
 *   abortable_nbtimeout -a ALGO [-w spin|yield|park] [-p PATIENCE_NS(2000000)]
 *                       [-t TESTERS(3)] [-r ROUNDS(20)] [-s SEED(1)] [-W SECONDS(20)]
 *
 * Links build/liblocks.a directly. Threads:
 *   holder     takes the lock and keeps it until the end;
 *   waiter     one timed attempt with a patience of minutes: it waits in
 *              the queue behind the holder (we wait until the lock's first
 *              word, its tail in every abortable lock here, has changed),
 *              is stopped there, and stays stopped until the end;
 *   churner    timed attempts of 50 us in a loop, stopped ROUNDS times at
 *              random points of its acquire and timeout paths;
 *   testers    TESTERS threads, each making a timed attempt with PATIENCE.
 * Phase 1 stops the waiter, phase 2 also stops the churner in each round.
 * A stop is SIGUSR1, whose handler blocks in read() on a pipe. With the
 * neighbours stopped, the testers make their attempts; each must return
 * ETIMEDOUT, not before its deadline, and only then is the neighbour
 * resumed. An attempt that waited for a stopped neighbour would never
 * return: the watchdog
 * (-W, generous, so machine slowness cannot trip it) then fails the run
 * naming the phase. Nothing else is timed. At the end the holder releases,
 * everybody leaves, destroy() runs and no queue node may be in use.
 *
 * Output: "abortable_nbtimeout: OK algo=... attempts=... nodes_max_in_use=..."
 * and exit 0, or "abortable_nbtimeout: FAIL ..." and exit 1; bad usage exit 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "pool.h"
#include "wait.h"

#define FAIL_PREFIX "abortable_nbtimeout: FAIL "
#include "fail.h"
#define OPT_PROG "abortable_nbtimeout"
#include "opts.h"

static const struct ls_algo *algo;
static void *state;
static uint64_t patience = 2000000, seed = 1;
static unsigned testers = 3, rounds = 20, watchdog_s = 20;
struct nb {
	pthread_t t;
	int pipefd[2];
	_Atomic int stopped;
	_Atomic int ready; /* self is set: it may be stopped */
};
static struct nb nbs[2]; /* 0: waiter, 1: churner */
static __thread struct nb *self;
static _Atomic int quit, holder_go;
static _Atomic long attempts;
static const char *volatile phase_name = "start";

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "abortable_nbtimeout: FAIL watchdog expired during: ";
	ssize_t r = write(1, msg, sizeof msg - 1);
	r = write(1, (const char *)phase_name, strlen((const char *)phase_name));
	r = write(1, "\n", 1);
	(void)r;
	_exit(1);
}

/* The neighbour's stop: block until main writes to the pipe. */
static void on_stop(int sig)
{
	(void)sig;
	int e = errno;
	char c;
	atomic_store(&self->stopped, 1);
	while (read(self->pipefd[0], &c, 1) < 0 && errno == EINTR) {
	}
	atomic_store(&self->stopped, 0);
	errno = e;
}

static void *holder(void *arg)
{
	(void)arg;
	algo->lock(state);
	atomic_store(&holder_go, 1);
	while (!atomic_load(&quit))
		usleep(1000);
	algo->unlock(state);
	return NULL;
}

static void *waiter(void *arg)
{
	self = arg;
	atomic_store(&self->ready, 1);
	int r = algo->timedlock(state, ls_now_ns() + 600000000000ull);
	if (r == 0)
		algo->unlock(state); /* the holder let go: the end */
	else
		fail("waiter: timedlock returned %d after waiting for minutes", r);
	return NULL;
}

static void *churner(void *arg)
{
	self = arg;
	atomic_store(&self->ready, 1);
	while (!atomic_load(&quit)) {
		int r = algo->timedlock(state, ls_now_ns() + 50000);
		if (r == 0)
			algo->unlock(state);
		else if (r != ETIMEDOUT)
			fail("churner: timedlock returned %d", r);
	}
	return NULL;
}

static void *tester(void *arg)
{
	(void)arg;
	uint64_t deadline = ls_now_ns() + patience;
	int r = algo->timedlock(state, deadline);
	if (r == 0)
		fail("a timed attempt acquired a lock whose holder never released");
	if (r != ETIMEDOUT)
		fail("timedlock returned %d (%s), not ETIMEDOUT", r, strerror(r));
	if (ls_now_ns() < deadline)
		fail("timedlock returned ETIMEDOUT before its deadline");
	atomic_fetch_add(&attempts, 1);
	return NULL;
}

static void stop(struct nb *n)
{
	while (!atomic_load(&n->ready))
		usleep(100);
	pthread_kill(n->t, SIGUSR1);
	while (!atomic_load(&n->stopped))
		usleep(100);
}

static void resume(struct nb *n)
{
	if (write(n->pipefd[1], "x", 1) != 1)
		fail("write to pipe: %s", strerror(errno));
	while (atomic_load(&n->stopped))
		usleep(100);
}

static void run_testers(void)
{
	pthread_t t[64];
	for (unsigned i = 0; i < testers; i++)
		pthread_create(&t[i], NULL, tester, NULL);
	for (unsigned i = 0; i < testers; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	int c;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	while ((c = getopt(argc, argv, "a:w:p:t:r:s:W:")) != -1) {
		if (opt_algo_wait(c, optarg, &name))
			continue;
		switch (c) {
		case 'p':
			patience = opt_number("p", optarg, 1, 10000000000ul);
			break;
		case 't':
			testers = (unsigned)opt_number("t", optarg, 1, 64);
			break;
		case 'r':
			rounds = (unsigned)opt_number("r", optarg, 0, 100000);
			break;
		case 's':
			seed = opt_number("s", optarg, 0, ~0ul);
			break;
		case 'W':
			watchdog_s = (unsigned)opt_number("W", optarg, 1, 3600);
			break;
		default:
			fprintf(
			    stderr,
			    "usage: abortable_nbtimeout -a ALGO [-w WAIT] [-p NS] [-t N] [-r N] [-s SEED] "
			    "[-W SECONDS]\n");
			return 2;
		}
	}
	algo = opt_algo(name);
	if (!(algo->caps & LS_CAP_TIMEOUT) || !algo->timedlock)
		opt_error("-a: %s has no native timeout", name);
	ls_node_counting = true;
	srand((unsigned)seed);
	state = opt_state(algo);
	if (!state || pipe(nbs[0].pipefd) != 0 || pipe(nbs[1].pipefd) != 0)
		fail("setup");
	if (algo->init)
		algo->init(state);

	struct sigaction sa = {0};
	sa.sa_handler = on_stop;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGALRM, on_alarm);
	alarm(watchdog_s);

	pthread_t h;
	phase_name = "the holder takes the lock";
	pthread_create(&h, NULL, holder, NULL);
	while (!atomic_load(&holder_go))
		usleep(100);
	uint64_t first, now;
	memcpy(&first, state, sizeof first);

	/* Phase 1: a waiting neighbour, stopped in the queue. */
	phase_name = "the waiter enters the queue";
	pthread_create(&nbs[0].t, NULL, waiter, &nbs[0]);
	do {
		usleep(100);
		memcpy(&now, state, sizeof now);
	} while (now == first);
	stop(&nbs[0]);
	phase_name = "timed attempts behind a stopped waiter";
	run_testers();

	/* Phase 2: a neighbour stopped at random points of its own attempts
	 * (queueing, waiting, timing out), the waiter still stopped. */
	pthread_create(&nbs[1].t, NULL, churner, &nbs[1]);
	for (unsigned r = 0; r < rounds; r++) {
		usleep((useconds_t)(rand() % 2000));
		stop(&nbs[1]);
		phase_name = "timed attempts while a churning neighbour is stopped at a random point";
		run_testers();
		resume(&nbs[1]);
	}

	phase_name = "the end: waiter resumed, holder releases, everybody leaves";
	atomic_store(&quit, 1);
	resume(&nbs[0]);
	pthread_join(h, NULL);
	pthread_join(nbs[0].t, NULL);
	pthread_join(nbs[1].t, NULL);
	alarm(0);
	if (algo->destroy)
		algo->destroy(state);
	struct ls_node_stats ns;
	ls_node_stats(&ns);
	if (ns.in_use != 0)
		fail("%ld queue node(s) still in use after every thread left and destroy() ran", ns.in_use);
	printf("abortable_nbtimeout: OK algo=%s attempts=%ld nodes_max_in_use=%ld\n", algo->name,
	       atomic_load(&attempts), ns.max_in_use);
	return 0;
}
