/*
 * fork_window.c - fork() while a waiter is stopped between the step that
 * made it visible to the lock and the next one (issue 31): the child's
 * release must not wait for it, nor hand it the lock.
 *
 *   fork_window -a ALGO[,ALGO...]|all|spin [-w spin|yield|park] [-k QUEUED(1)]
 *               [-W SECONDS(60)]
 *
 * Links build/liblocks-inject.a (mk/fork.mk), where LS_TEST_POINT(id) calls
 * ls_test_point() below. Per algorithm (and each policy of -w), in one
 * process: the main thread H takes the lock; QUEUED threads ask for it and
 * are known to wait (they have reached a waiting step: WAITING, PARKING or
 * QUEUED); then one more thread D asks for it and stops at
 * LS_POINT_VISIBLE (its node swapped into the tail, its ticket taken, and
 * nothing else written: the window a fork can leave a thread in), or, for
 * an algorithm without such a step (the TAS family), waits like the
 * others. H forks. In the child (a watchdog, -W, makes a hang a failure),
 * a thread C asks for the lock and is known to wait; H unlocks; C must get
 * the lock; then 2 threads take it 200 times each, counting under it (no
 * two inside, no count lost), and trylock finds it free at the end. In the
 * parent, D goes on; H unlocks; every thread gets the lock in turn.
 *
 * Output: a line "fork_window: OK ..." per run and exit 0; "FAIL ..." and
 * exit 1 (a child that hung or failed); bad usage one line and exit 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lock.h"
#include "pool.h"
#include "wait.h"

#include "fail.h"
#define OPT_PROG "fork_window"
#include "opts.h"

enum role { OTHER, QUEUER, WINDOW };
static __thread enum role role;
static __thread atomic_int *waiting_flag; /* set once this thread waits */

static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cv = PTHREAD_COND_INITIALIZER;
static atomic_int d_visible, d_go;

void ls_test_point(enum ls_test_point id)
{
	if (id == LS_POINT_WAITING || id == LS_POINT_PARKING || id == LS_POINT_QUEUED) {
		if (waiting_flag)
			atomic_store(waiting_flag, 1);
		return;
	}
	if (id == LS_POINT_VISIBLE && role == WINDOW && !atomic_load(&d_go)) {
		pthread_mutex_lock(&ev_mu);
		atomic_store(&d_visible, 1);
		pthread_cond_broadcast(&ev_cv);
		while (!atomic_load(&d_go))
			pthread_cond_wait(&ev_cv, &ev_mu);
		pthread_mutex_unlock(&ev_mu);
	}
}

static const struct ls_algo *algo;
static void *state;
static unsigned watchdog_s = 60;

struct waiter {
	enum role role;
	atomic_int waiting, done;
	pthread_t t;
};

static void *waiter_fn(void *p)
{
	struct waiter *w = p;
	role = w->role;
	waiting_flag = &w->waiting;
	algo->lock(state);
	waiting_flag = NULL;
	atomic_store(&w->done, 1);
	algo->unlock(state);
	return NULL;
}

/* Returns once w waits (or, for WINDOW, has stopped at VISIBLE). */
static void start(struct waiter *w, enum role r)
{
	w->role = r;
	atomic_store(&w->waiting, 0);
	atomic_store(&w->done, 0);
	if (pthread_create(&w->t, NULL, waiter_fn, w))
		fail("pthread_create");
	uint64_t until = ls_now_ns() + (uint64_t)watchdog_s * 1000000000u;
	while (!atomic_load(&w->waiting) && !(r == WINDOW && atomic_load(&d_visible))) {
		if (atomic_load(&w->done))
			fail("%s: a waiter got the lock while it was held", algo->name);
		if (ls_now_ns() > until)
			fail("%s: a waiter did not reach a waiting step in %u s", algo->name, watchdog_s);
		sched_yield();
	}
}

/* ---- the child ---- */

static atomic_int inside;
static long counter;

static void *user_fn(void *p)
{
	(void)p;
	for (int i = 0; i < 200; i++) {
		algo->lock(state);
		if (atomic_fetch_add(&inside, 1) != 0)
			fail("%s: two threads inside in the child", algo->name);
		long v = counter;
		__asm__ __volatile__("" ::: "memory");
		counter = v + 1;
		atomic_fetch_sub(&inside, 1);
		algo->unlock(state);
	}
	return NULL;
}

static void child(void)
{
	alarm(watchdog_s);
	struct waiter c;
	start(&c, OTHER); /* the child's own waiter, queued behind what fork left */
	algo->unlock(state);
	pthread_join(c.t, NULL);
	if (!atomic_load(&c.done))
		fail("%s: the child's waiter did not get the lock", algo->name);
	pthread_t u[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&u[i], NULL, user_fn, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(u[i], NULL);
	if (counter != 400)
		fail("%s: the child counted %ld, not 400", algo->name, counter);
	if (algo->trylock(state) != 0)
		fail("%s: the lock is not free at the end of the child", algo->name);
	algo->unlock(state);
	_exit(0);
}

static void run(unsigned queued)
{
	state = opt_state(algo);
	if (!state)
		fail("no memory for the lock");
	if (algo->init)
		algo->init(state);
	atomic_store(&d_visible, 0);
	atomic_store(&d_go, 0);
	counter = 0;
	algo->lock(state);
	struct waiter q[4], d;
	for (unsigned i = 0; i < queued; i++)
		start(&q[i], QUEUER);
	start(&d, WINDOW);
	bool window = atomic_load(&d_visible);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid == 0)
		child();
	int st;
	if (waitpid(pid, &st, 0) != pid)
		fail("waitpid");
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
		fail("%s (%s, %u queued, %s): the child hung", algo->name,
		     opt_policy_name(ls_wait_cfg.policy), queued,
		     window ? "one stopped at VISIBLE" : "no visible step");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("%s: the child failed (status 0x%x)", algo->name, st);
	pthread_mutex_lock(&ev_mu);
	atomic_store(&d_go, 1);
	pthread_cond_broadcast(&ev_cv);
	pthread_mutex_unlock(&ev_mu);
	algo->unlock(state);
	for (unsigned i = 0; i < queued; i++)
		pthread_join(q[i].t, NULL);
	pthread_join(d.t, NULL);
	if (algo->destroy)
		algo->destroy(state);
	printf("fork_window: OK %s %s queued=%u %s\n", algo->name, opt_policy_name(ls_wait_cfg.policy),
	       queued, window ? "window" : "no-window");
}

int main(int argc, char **argv)
{
	const char *names = NULL;
	enum ls_policy first = LS_WAIT_PARK, last = LS_WAIT_PARK;
	unsigned queued = 1;
	int c;
	while ((c = getopt(argc, argv, "a:w:k:W:")) != -1) {
		if (c == 'a')
			names = optarg;
		else if (c == 'w')
			opt_policy_range(optarg, &first, &last);
		else if (c == 'k')
			queued = (unsigned)opt_number("k", optarg, 0, 4);
		else if (c == 'W')
			watchdog_s = (unsigned)opt_number("W", optarg, 1, 3600);
		else
			opt_error(
			    "usage: fork_window -a ALGO|all|spin [-w POLICY|all] [-k 0..4] [-W SECONDS]");
	}
	if (!names)
		opt_algo(NULL);
	char list[4096];
	opt_algo_list(names, list, sizeof list);
	for (char *save = NULL, *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		algo = opt_lock_find(a);
		opt_params(algo);
		for (enum ls_policy p = first; p <= last; p++) {
			ls_wait_cfg.policy = p;
			run(queued);
		}
	}
	return 0;
}
