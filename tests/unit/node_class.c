/*
 * node_class.c - a queue node is reused only by the algorithm that freed it
 * (locks/common/pool.h, "Node classes").
 *
 *   node_class [-a ALGO[,ALGO...]|all]
 *
 * The abortable and time-published locks read, and some write, a
 * neighbour's node after it may have been freed, and argue from their own
 * states and tags that this is harmless; a node another algorithm left, or
 * writes late, breaks the argument. A process with several algorithms
 * (LOCKSWAP_ALGO_MAP, LOCKSWAP_RWALGO beside LOCKSWAP_ALGO) hung that way:
 * clh-tp beside clh-try, all waiters asleep on nodes whose states no
 * protocol explains.
 *
 * For every mutex and rwlock algorithm that takes queue nodes (LS_CAP_QNODE,
 * LS_RWCAP_QNODE), in a child process of its own: this file (the pool's
 * shared class) takes 16 nodes, fills their first 56 bytes with a pattern
 * and frees them into the thread's cache; then the algorithm locks and
 * unlocks a lock of its own, uncontended, by every path it has (lock,
 * trylock, timedlock; read and write), and a mutex once more with a second
 * thread waiting (seen asleep in futex(2) before the release; it exits, and
 * its nodes go to the pool's global lists); then the 16 nodes are taken
 * back and must hold the pattern still: an algorithm that took one of them
 * wrote its state into it. Then 64 more nodes of the shared class must be
 * new (zero) or ours: none may be one the algorithm freed. Deterministic:
 * every wait is for an event (a watchdog of 60 s per algorithm). On the
 * pool of one class for all, every algorithm fails.
 *
 * Exit: 0 pass, 1 fail (a line per algorithm), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lock.h"
#define OPT_PROG "node_class"
#include "opts.h"
#include "pool.h"
#include "proctask.h"
#include "rwlock.h"
#include "wait.h"

enum { MARKED = 16, MORE = 64, BODY = LS_NODE_SIZE - 8, PATTERN = 0xa5 };

static void *marked[MARKED];

static void mark(void)
{
	for (int i = 0; i < MARKED; i++) {
		marked[i] = ls_node_alloc();
		memset(marked[i], PATTERN, BODY);
	}
	for (int i = MARKED - 1; i >= 0; i--)
		ls_node_free(marked[i]);
}

static bool all(const unsigned char *p, unsigned char v)
{
	for (int i = 0; i < BODY; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* The marked nodes untouched, and no node of the algorithm's in our class. */
static int check(const char *name)
{
	int bad = 0;
	for (int i = 0; i < MARKED; i++) {
		unsigned char *n = ls_node_alloc();
		if (!all(n, PATTERN)) {
			printf(
			    "node_class: FAIL %s: it wrote into node %p, freed by another user of the pool\n",
			    name, (void *)n);
			bad = 1;
		}
	}
	for (int i = 0; i < MORE; i++) {
		unsigned char *n = ls_node_alloc();
		if (!all(n, 0) && !all(n, PATTERN)) {
			printf("node_class: FAIL %s: its node %p went to another user of the pool\n", name,
			       (void *)n);
			bad = 1;
		}
	}
	return bad;
}

/* A second thread that waits for the lock (some algorithms take a node
 * only to wait), seen asleep in futex(2) before main releases; its nodes go
 * back to the pool's global lists when it exits. */
struct waiter {
	const struct ls_algo *a;
	void *s;
	_Atomic pid_t tid;
	atomic_bool done;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;
	atomic_store(&w->tid, gettid());
	w->a->lock(w->s);
	w->a->unlock(w->s);
	atomic_store(&w->done, true);
	return NULL;
}

static void contended(const struct ls_algo *a, void *s)
{
	struct waiter w = {.a = a, .s = s};
	pthread_t t;
	a->lock(s);
	if (pthread_create(&t, NULL, waiter_main, &w) != 0) {
		printf("node_class: FAIL %s: pthread_create\n", a->name);
		_exit(1);
	}
	while (!atomic_load(&w.tid) || !proctask_in_futex(atomic_load(&w.tid)))
		usleep(200);
	a->unlock(s);
	pthread_join(t, NULL);
}

/* A lock's state s, initialised, and the marked nodes in the cache. */
static bool ready(const char *name, void *s, void (*init)(void *))
{
	if (!s) {
		printf("node_class: FAIL %s: no memory for the state\n", name);
		return false;
	}
	if (init)
		init(s);
	mark();
	return true;
}

static int run_mutex(const struct ls_algo *a)
{
	opt_params(a);
	void *s = opt_state(a);
	if (!ready(a->name, s, a->init))
		return 1;
	for (int k = 0; k < 4; k++) {
		a->lock(s);
		a->unlock(s);
		if (a->trylock(s) == 0)
			a->unlock(s);
		if (a->timedlock && a->timedlock(s, ls_now_ns() + 1000000000ull) == 0)
			a->unlock(s);
	}
	contended(a, s);
	int bad = check(a->name);
	if (a->destroy)
		a->destroy(s);
	return bad;
}

static int run_rwlock(const struct ls_rwalgo *a)
{
	void *s = calloc(1, a->state_size + LS_CACHELINE);
	if (!ready(a->name, s, a->init))
		return 1;
	for (int k = 0; k < 4; k++) {
		void *tok = NULL;
		if (a->rdlock(s, 0, &tok) == 0)
			a->rdunlock(s, tok);
		if (a->tryrdlock(s, 0, &tok) == 0)
			a->rdunlock(s, tok);
		if (a->timedrdlock && a->timedrdlock(s, 0, ls_now_ns() + 1000000000ull, &tok) == 0)
			a->rdunlock(s, tok);
		a->wrlock(s, 0);
		a->wrunlock(s);
		if (a->trywrlock(s, 0) == 0)
			a->wrunlock(s);
		if (a->timedwrlock(s, 0, ls_now_ns() + 1000000000ull) == 0)
			a->wrunlock(s);
	}
	return check(a->name);
}

/* Each algorithm in a child of its own: a fresh pool. */
static int in_child(int (*fn)(const void *), const void *a, const char *name)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		printf("node_class: FAIL %s: fork: %s\n", name, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		alarm(60);
		int rc = fn(a);
		fflush(stdout);
		_exit(rc);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st)) {
		printf("node_class: FAIL %s: killed by signal %d\n", name, WTERMSIG(st));
		return 1;
	}
	if (WEXITSTATUS(st) == 0)
		printf("node_class: OK %s\n", name);
	return WEXITSTATUS(st) != 0;
}

static int mutex_fn(const void *a)
{
	return run_mutex(a);
}
static int rwlock_fn(const void *a)
{
	return run_rwlock(a);
}

static bool wanted(const char *list, const char *name)
{
	if (!strcmp(list, "all"))
		return true;
	size_t n = strlen(name);
	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *list = "all";
	int c;
	while ((c = getopt(argc, argv, "a:")) != -1) {
		if (c == 'a')
			list = optarg;
		else
			break;
	}
	if (c != -1 || optind != argc) {
		fprintf(stderr, "usage: node_class [-a ALGO[,ALGO...]|all]\n");
		return 2;
	}
	ls_wait_cfg.policy = LS_WAIT_PARK;
	int bad = 0, ran = 0;
	for (size_t i = 0; i < ls_algo_count(); i++) {
		const struct ls_algo *a = ls_algo_at(i);
		if (!(a->caps & LS_CAP_QNODE) || !wanted(list, a->name))
			continue;
		ran++;
		bad |= in_child(mutex_fn, a, a->name);
	}
	for (size_t i = 0; i < ls_rwalgo_count(); i++) {
		const struct ls_rwalgo *a = ls_rwalgo_at(i);
		if (!(a->caps & LS_RWCAP_QNODE) || a->start || !wanted(list, a->name))
			continue;
		ran++;
		bad |= in_child(rwlock_fn, a, a->name);
	}
	if (!ran) {
		fprintf(stderr, "node_class: -a %s: no algorithm that takes queue nodes\n", list);
		return 2;
	}
	return bad;
}
