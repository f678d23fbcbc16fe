/*
 * waiting.c - how a lock's waiters wait, per LOCKSWAP_WAIT (issue 2, item 8).
 *
 *   waiting -a ALGO -w spin|yield|park [-m lock|timed] [-n WAITERS(2)] [-T SECONDS(20)] [-f]
 *           [-S SAMPLES(200)]
 *
 * The main thread takes the lock; WAITERS threads then try to take it too
 * (lock(), or with -m timed the algorithm's own timedlock with a deadline an
 * hour away). While they wait:
 *   park        every waiter ends up asleep in the kernel, in futex(2)
 *               (/proc/self/task/TID/stat state 'S', .../syscall SYS_futex);
 *   spin, yield no waiter is ever seen asleep (SAMPLES looks, 1 ms apart:
 *               200 ms by default; every spin, yield or sleep budget of a
 *               lock is a few milliseconds at most, and a waiter that
 *               parks does so once its budget is spent).
 * Then the main thread unlocks and every waiter must get the lock in turn
 * (each unlocks after acquiring): under park that means the releaser woke a
 * sleeper, and each acquirer woke the next. A lost wake-up is a waiter that
 * never gets the lock: reported after SECONDS. With -f (FIFO locks, park
 * only) each waiter starts only once the previous one is asleep, i.e. queued,
 * and they must get the lock in that order. Exit 0, or 1 with a message.
 * Waiting is by polling /proc with 1 ms naps; nothing depends on timing to
 * pass (a slow machine only takes longer). Two broken doubles, registered in
 * this program only, show that the checks fail: selftest-spinner never
 * sleeps, selftest-nowake sleeps but its unlock wakes nobody, selftest-lifo
 * serves the last arrival first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "pool.h"
#include "wait.h"

#define OPT_PROG "waiting"
#include "opts.h"

static const struct ls_algo *algo;
static void *state;
static int timed;
static unsigned nwaiters = 2;
static int limit_ms = 20000;
static int fifo;
static int samples = 200;
static _Atomic unsigned next_turn; /* -f: acquisitions so far */

struct waiter {
	pthread_t thread;
	_Atomic pid_t tid;
	_Atomic int acquired;
	unsigned turn; /* -f: its rank among the acquisitions */
};
static struct waiter w[16];

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "waiting: FAIL algo=%s wait=%s: ", algo ? algo->name : "?",
		opt_policy_name(ls_wait_cfg.policy));
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void nap_ms(int ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
}

/* Reads /proc/self/task/TID/FILE into buf; returns its length. */
static size_t proc_read(pid_t tid, const char *file, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, file);
	FILE *f = fopen(path, "r");
	if (!f)
		die("cannot open %s: %s", path, strerror(errno));
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return n;
}

static char task_state(pid_t tid)
{
	char buf[512];
	proc_read(tid, "stat", buf, sizeof buf);
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		die("cannot parse /proc/self/task/%d/stat", (int)tid);
	return p[2];
}

/* The number of the system call the thread is blocked in, or -1. */
static long task_syscall(pid_t tid)
{
	char buf[256];
	proc_read(tid, "syscall", buf, sizeof buf);
	if (!strncmp(buf, "running", 7))
		return -1;
	return strtol(buf, NULL, 10);
}

static void *waiter(void *arg)
{
	struct waiter *me = arg;
	atomic_store_explicit(&me->tid, gettid(), memory_order_release);
	if (timed) {
		int r = algo->timedlock(state, ls_now_ns() + 3600ull * 1000000000u);
		if (r)
			die("timedlock with a deadline an hour away returned %d", r);
	} else {
		algo->lock(state);
	}
	me->turn = atomic_fetch_add_explicit(&next_turn, 1, memory_order_relaxed);
	atomic_store_explicit(&me->acquired, 1, memory_order_release);
	algo->unlock(state);
	return NULL;
}

/* ---- broken doubles (tests/waiting.bats checks that each is caught) ---- */

static void spinner_lock(void *st)
{
	_Atomic uint32_t *word = st;
	uint32_t z = 0;
	while (
	    !atomic_compare_exchange_weak_explicit(word, &z, 1, memory_order_acquire, memory_order_relaxed)) {
		z = 0;
		sched_yield();
	}
}

static int spinner_trylock(void *st)
{
	_Atomic uint32_t *word = st;
	uint32_t z = 0;
	return atomic_compare_exchange_strong_explicit(word, &z, 1, memory_order_acquire,
						       memory_order_relaxed)
		   ? 0
		   : EBUSY;
}

static void plain_unlock(void *st)
{
	atomic_store_explicit((_Atomic uint32_t *)st, 0, memory_order_release);
}

/* selftest-spinner: never sleeps, whatever the policy. */
static const struct ls_algo selftest_spinner = {
    .name = "selftest-spinner",
    .desc = "broken double: waiters never sleep",
    .rank = 1000,
    .state_size = 4,
    .lock = spinner_lock,
    .trylock = spinner_trylock,
    .unlock = plain_unlock,
};
LS_REGISTER_ALGO(selftest_spinner);

static void nowake_lock(void *st)
{
	_Atomic uint32_t *word = st;
	while (atomic_exchange_explicit(word, 1, memory_order_acquire))
		ls_futex_wait(word, 1, 0);
}

/* selftest-nowake: sleeps on the futex, whatever the policy; unlock wakes
 * nobody. */
static const struct ls_algo selftest_nowake = {
    .name = "selftest-nowake",
    .desc = "broken double: unlock never wakes a sleeper",
    .rank = 1001,
    .state_size = 4,
    .lock = nowake_lock,
    .trylock = spinner_trylock,
    .unlock = plain_unlock,
};
LS_REGISTER_ALGO(selftest_nowake);

/* selftest-lifo: sleepers are served last come, first served. */
struct lifo {
	pthread_mutex_t m; /* glibc's: no preload in this program */
	int held, top;
	_Atomic uint32_t *stack[16];
};
static __thread _Atomic uint32_t my_turn;

static void lifo_lock(void *st)
{
	struct lifo *l = st;
	pthread_mutex_lock(&l->m);
	if (!l->held) {
		l->held = 1;
		pthread_mutex_unlock(&l->m);
		return;
	}
	atomic_store_explicit(&my_turn, 0, memory_order_relaxed);
	l->stack[l->top++] = &my_turn;
	pthread_mutex_unlock(&l->m);
	while (!atomic_load_explicit(&my_turn, memory_order_acquire))
		ls_futex_wait(&my_turn, 0, 0);
}

static int lifo_trylock(void *st)
{
	struct lifo *l = st;
	pthread_mutex_lock(&l->m);
	int r = l->held ? EBUSY : 0;
	l->held = 1;
	pthread_mutex_unlock(&l->m);
	return r;
}

static void lifo_unlock(void *st)
{
	struct lifo *l = st;
	pthread_mutex_lock(&l->m);
	if (l->top == 0) {
		l->held = 0;
	} else {
		_Atomic uint32_t *t = l->stack[--l->top];
		atomic_store_explicit(t, 1, memory_order_release);
		ls_futex_wake(t, 1);
	}
	pthread_mutex_unlock(&l->m);
}

static const struct ls_algo selftest_lifo = {
    .name = "selftest-lifo",
    .desc = "broken double: claims FIFO, serves sleepers last come first served",
    .caps = LS_CAP_FIFO,
    .rank = 1002,
    .state_size = sizeof(struct lifo),
    .lock = lifo_lock,
    .trylock = lifo_trylock,
    .unlock = lifo_unlock,
};
LS_REGISTER_ALGO(selftest_lifo);

/* Waits until waiter i is asleep in futex(2). */
static void await_asleep(unsigned i)
{
	pid_t tid;
	while (!(tid = atomic_load_explicit(&w[i].tid, memory_order_acquire)))
		nap_ms(1);
	for (int ms = 0; !(task_state(tid) == 'S' && task_syscall(tid) == SYS_futex);) {
		if (++ms > limit_ms)
			die("waiter %u is not asleep in futex(2) after %d ms (state %c, syscall %ld)", i,
			    limit_ms, task_state(tid), task_syscall(tid));
		nap_ms(1);
	}
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	int c;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	while ((c = getopt(argc, argv, "a:w:m:n:T:fS:")) != -1) {
		if (opt_algo_wait(c, optarg, &name))
			continue;
		switch (c) {
		case 'm':
			timed = opt_choose("m", "mode", optarg, (const char *const[]){"lock", "timed"}, 2);
			break;
		case 'n':
			nwaiters = (unsigned)opt_number("n", optarg, 1, 16);
			break;
		case 'f':
			fifo = 1;
			break;
		case 'T':
			limit_ms = (int)opt_number("T", optarg, 1, 3600) * 1000;
			break;
		case 'S':
			samples = (int)opt_number("S", optarg, 1, 100000);
			break;
		default:
			fprintf(stderr,
				"usage: waiting -a ALGO -w spin|yield|park [-m lock|timed] [-n WAITERS] "
				"[-T SECONDS] [-f] [-S SAMPLES]\n");
			return 2;
		}
	}
	algo = opt_algo(name);
	if (fifo && ls_wait_cfg.policy != LS_WAIT_PARK)
		opt_error("-f needs -w park (a sleeping waiter is a queued one)");
	if (timed && !algo->timedlock)
		opt_error("-m timed: %s has no native timedlock", name);
	state = opt_state(algo);
	if (!state)
		die("cannot allocate the lock state");
	if (algo->init)
		algo->init(state);

	algo->lock(state);
	for (unsigned i = 0; i < nwaiters; i++) {
		if (pthread_create(&w[i].thread, NULL, waiter, &w[i]))
			die("pthread_create failed");
		if (fifo)
			await_asleep(i);
	}
	for (unsigned i = 0; i < nwaiters; i++)
		while (!atomic_load_explicit(&w[i].tid, memory_order_acquire))
			nap_ms(1);

	if (ls_wait_cfg.policy == LS_WAIT_PARK) {
		for (unsigned i = 0; i < nwaiters; i++)
			await_asleep(i);
	} else {
		for (int k = 0; k < samples; k++) {
			for (unsigned i = 0; i < nwaiters; i++) {
				pid_t tid = atomic_load_explicit(&w[i].tid, memory_order_relaxed);
				char s = task_state(tid);
				if (s == 'S')
					die("waiter %u is asleep in the kernel (syscall %ld) under a "
					    "policy that never sleeps",
					    i, task_syscall(tid));
			}
			nap_ms(1);
		}
	}
	for (unsigned i = 0; i < nwaiters; i++)
		if (atomic_load_explicit(&w[i].acquired, memory_order_acquire))
			die("waiter %u acquired a lock that was held", i);

	algo->unlock(state);
	for (unsigned i = 0; i < nwaiters; i++) {
		int ms = 0;
		while (!atomic_load_explicit(&w[i].acquired, memory_order_acquire)) {
			if (++ms > limit_ms)
				die("waiter %u never got the lock after it was released (lost wake-up)", i);
			nap_ms(1);
		}
		pthread_join(w[i].thread, NULL);
	}
	for (unsigned i = 0; fifo && i < nwaiters; i++)
		if (w[i].turn != i)
			die("not FIFO: waiter %u queued #%u but got the lock #%u", i, i + 1, w[i].turn + 1);
	if (algo->destroy)
		algo->destroy(state);
	printf("waiting: OK algo=%s wait=%s mode=%s waiters=%u%s\n", algo->name,
	       opt_policy_name(ls_wait_cfg.policy), timed ? "timed" : "lock", nwaiters, fifo ? " fifo" : "");
	return 0;
}
