/*
 * stress.c - the generic validator every lock algorithm is run through
 * (in the spirit of Concurrency Kit's regressions/ck_spinlock/validate).
 *
 *   stress -a ALGO[,ALGO...] [-t THREADS(4)] [-n ITERS(2000)] [-l LOCKS(1)]
 *          [-m lock|try|timed|mix] [-p PATIENCE_NS(20000)]
 *          [-w spin|yield|park] [-S SPIN] [-s SEED(1)[,SEED...]]
 *          [-T SECONDS(0)] [-q]
 *
 * Links build/liblocks.a directly (no LD_PRELOAD). THREADS threads each make
 * ITERS acquisitions of one of LOCKS locks (chosen at random), by
 *   lock   lock();
 *   try    trylock() retried until it succeeds (EBUSY counted as "busy");
 *   timed  timedlock() with deadline now+PATIENCE_NS (the algorithm's own,
 *          or ls_timedlock_fallback() as the shim would use), retried after
 *          each ETIMEDOUT (counted as "timeouts");
 *   mix    one of the three at random, and also, now and then: two locks
 *          held at once (taken in index order, released in either order);
 *          trylock and an expired timedlock on a lock the thread holds (must
 *          fail with EBUSY / ETIMEDOUT); unlock by another thread (a helper
 *          thread releases the lock the worker took).
 * In the critical section it checks mutual exclusion two ways: an
 * "occupant" word exchanged on entry and exit (must be 0 on entry, still
 * ours on exit) and a plain counter incremented by a read, a delay (with
 * LS_INJECT(), so the -inject build stretches it) and a write, which loses
 * updates if two threads overlap. At the end: every thread finished, each
 * counter equals the acquisitions of its lock, destroy() has run, and no
 * queue node is still in use (ls_node_stats, counting enabled here). Also:
 * ETIMEDOUT never comes before the deadline, trylock returns only 0/EBUSY,
 * timedlock only 0/ETIMEDOUT.
 *
 * Several algorithms and seeds: each algorithm with each seed, each run in
 * a child process of its own (a fork: far cheaper than a program start,
 * the suite's main cost, issue 35; and each run starts from a fresh pool,
 * as a program does), one
 * after the other; a failed run's lines name algorithm and seed, and the
 * others still run (exit 1 if any failed, 2 at once on bad usage).
 * -T SECONDS: a watchdog per run (as a SIGALRM: where each thread is).
 *
 * STRESS_STALLS=1 adds a line "stress: stalls longest_ms=... timeouts_in_it=...
 * seconds=...": the longest stretch in which no thread acquired (sampled
 * every 2 ms), the timeouts counted during it, and the run's duration, to
 * tell a livelock (timeouts but no acquisition) from a slow run.
 *
 * STRESS_COUNT_NODES=0 leaves node counting off, so that the pool's per-thread
 * caches are exercised (counting bypasses them), and skips the node checks
 * (nodes_max_in_use=-1).
 *
 * Environment: the algorithm's ls_params (e.g. LOCKSWAP_ALOCK_SLOTS), read as
 * the shim reads them; for a hierarchical algorithm, LOCKSWAP_CLUSTER and
 * LOCKSWAP_TOPOLOGY (locks/hier/topo.h; e.g. thread:4 for four clusters on any
 * machine); LOCKSWAP_YIELD (park's yield phase, as in the shim);
 * in the -inject build LOCKSWAP_INJECT (percent) and LOCKSWAP_SEED (defaults
 * to -s). On SIGTERM/SIGINT/SIGALRM (e.g. from `timeout`: a deadlock, a lost
 * wake-up, or a livelock) it prints where each thread is and whether it
 * moved in the next 200 ms, and exits 1.
 *
 * The workers start together (each waits, yielding, until all run), and now
 * and then a holder yields inside the critical section (not under spin), so
 * that even short runs on a loaded 2-core machine contend.
 *
 * Output: one line "stress: OK algo=... wait=... threads=... acquisitions=...
 * timeouts=... nodes_max_in_use=..." (not with -q) and exit 0; or lines
 * "stress: FAIL ..." and exit 1. Bad usage: one line, exit 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lock.h"
#include "hier/topo.h"
#include "pool.h"
#include "spin/spinlock.h"
#include "wait.h"

#define OPT_PROG "stress"
#include "harness.h"
#include "opts.h"

#define mode_names opt_mode_names

static const struct ls_algo *algo;
static unsigned nthreads = 4, nlocks = 1;
static unsigned long iters = 2000;
static enum opt_mode mode = M_LOCK;
static uint64_t patience = 20000, seed = 1;
static bool quiet;

/* One lock and what it protects, on lines of their own. */
struct slot {
	void *state;
	_Atomic long acquired; /* true count, atomic */
	char pad1[LS_CACHELINE - sizeof(void *) - sizeof(long)];
	_Atomic unsigned occupant; /* 0, or thread id + 1 while inside */
	_Atomic long counter;	   /* the racy counter: read, delay, write */
	char pad2[LS_CACHELINE - sizeof(unsigned) - sizeof(long) - 4];
} __attribute__((aligned(LS_CACHELINE)));
static struct slot *slots;

enum phase { P_IDLE, P_ACQUIRE, P_INSIDE, P_RELEASE, P_DONE };
static const char *const phase_names[] = {"between acquisitions", "acquiring", "inside", "releasing", "done"};

struct thr {
	unsigned id;
	pthread_t tid;
	uint64_t rng;
	_Atomic unsigned long iter;
	_Atomic int phase;
	_Atomic unsigned lock; /* the lock it is acquiring/holding/releasing */
	long acquisitions, timeouts, busy, cross;
} __attribute__((aligned(LS_CACHELINE)));
static struct thr *thr;

static _Atomic long failures;
static _Atomic unsigned started; /* workers that have reached the start line */

static void vfail(bool always, const char *fmt, va_list ap)
{
	/* During the run, report the first few and count all. */
	if (atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed) >= 10 && !always)
		return;
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	fprintf(stderr, "stress: FAIL algo=%s seed=%" PRIu64 ": %s\n", algo->name, seed, msg);
}

static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(false, fmt, ap);
	va_end(ap);
}

/* The end-of-run checks: always reported. */
static void fail_final(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(true, fmt, ap);
	va_end(ap);
}

static uint64_t rnd(struct thr *t)
{
	/* xorshift64 */
	uint64_t x = t->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return t->rng = x;
}

static void pause_n(unsigned n)
{
	while (n--)
		ls_cpu_relax();
}

/* ---- the unlock helper (mix mode): unlock from another thread ---- */

static pthread_mutex_t helper_mu = PTHREAD_MUTEX_INITIALIZER; /* glibc's: no preload here */
static pthread_cond_t helper_cv = PTHREAD_COND_INITIALIZER, helper_done_cv = PTHREAD_COND_INITIALIZER;
static struct slot *helper_req;
static bool helper_quit;
static pthread_t helper_tid;

static void *helper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&helper_mu);
	for (;;) {
		while (!helper_req && !helper_quit)
			pthread_cond_wait(&helper_cv, &helper_mu);
		if (helper_req) {
			algo->unlock(helper_req->state);
			helper_req = NULL;
			pthread_cond_broadcast(&helper_done_cv);
		} else {
			break;
		}
	}
	pthread_mutex_unlock(&helper_mu);
	return NULL;
}

static void unlock_elsewhere(struct slot *s)
{
	pthread_mutex_lock(&helper_mu);
	while (helper_req) /* another worker's request is pending */
		pthread_cond_wait(&helper_done_cv, &helper_mu);
	helper_req = s;
	pthread_cond_signal(&helper_cv);
	while (helper_req == s)
		pthread_cond_wait(&helper_done_cv, &helper_mu);
	pthread_mutex_unlock(&helper_mu);
}

/* ---- acquire, check, release ---- */

static void acquire(struct thr *t, unsigned li, enum opt_mode m)
{
	struct slot *s = &slots[li];
	atomic_store_explicit(&t->lock, li, memory_order_relaxed);
	atomic_store_explicit(&t->phase, P_ACQUIRE, memory_order_relaxed);
	switch (m) {
	case M_LOCK:
		algo->lock(s->state);
		break;
	case M_TRY:
		for (unsigned n = 1;; n++) {
			int r = algo->trylock(s->state);
			if (r == 0)
				break;
			if (r != EBUSY)
				fail("trylock returned %d (%s), not 0 or EBUSY", r, strerror(r));
			t->busy++;
			/* Retrying: pause, and yield now and then so that a
			 * preempted holder gets to run on an oversubscribed box. */
			if (n % 16 == 0)
				sched_yield();
			else
				pause_n(16);
		}
		break;
	case M_TIMED:
		for (;;) {
			uint64_t deadline = ls_now_ns() + patience;
			int r = algo->timedlock ? algo->timedlock(s->state, deadline)
						: ls_timedlock_fallback(algo, s->state, deadline);
			if (r == 0)
				break;
			if (r != ETIMEDOUT) {
				fail("timedlock returned %d (%s), not 0 or ETIMEDOUT", r, strerror(r));
				continue;
			}
			uint64_t now = ls_now_ns();
			if (now < deadline)
				fail("timedlock returned ETIMEDOUT %" PRIu64 " ns before its deadline",
				     deadline - now);
			/* the sole writer; atomic for the stall sampler */
			__atomic_store_n(&t->timeouts, t->timeouts + 1, __ATOMIC_RELAXED);
		}
		break;
	case M_MIX:
		break;
	}
	t->acquisitions++;
	atomic_fetch_add_explicit(&s->acquired, 1, memory_order_relaxed);
}

static void enter(struct thr *t, unsigned li)
{
	struct slot *s = &slots[li];
	atomic_store_explicit(&t->phase, P_INSIDE, memory_order_relaxed);
	/* An RMW reads the latest value in the word's modification order, so a
	 * thread still inside is seen whatever the lock's orderings. */
	unsigned prev = atomic_exchange_explicit(&s->occupant, t->id + 1, memory_order_relaxed);
	if (prev)
		fail("mutual exclusion: thread %u entered lock %u held by thread %u", t->id, li, prev - 1);
}

/* selftest-nolock (below) must be caught however the threads are
 * scheduled: beside busy processes one worker can run all its acquisitions
 * in one time slice while the others wait for a CPU, and then nothing
 * overlaps. So the first thread inside lock 0 stays there, between its read
 * of the counter and its write, until another thread has entered the lock
 * and written the counter (at most 10 s): both the occupant check and the
 * lost update then happen on every run. */
static const struct ls_algo selftest_nolock;
static _Atomic int nolock_held; /* 0, 1 while a thread holds on, 2 after */

static void nolock_hold(struct slot *s, long c)
{
	int none = 0;
	if (!atomic_compare_exchange_strong(&nolock_held, &none, 1))
		return;
	uint64_t until = ls_now_ns() + 10000000000ull;
	while (atomic_load_explicit(&s->counter, memory_order_relaxed) == c && ls_now_ns() < until)
		sched_yield();
	atomic_store(&nolock_held, 2);
}

static void modify(struct thr *t, unsigned li)
{
	struct slot *s = &slots[li];
	/* relaxed: under the lock's acquire/release this is a plain
	 * read-modify-write; without mutual exclusion it loses updates. */
	long c = atomic_load_explicit(&s->counter, memory_order_relaxed);
	LS_INJECT();
	if (algo == &selftest_nolock && li == 0 && nthreads > 1)
		nolock_hold(s, c);
	uint64_t r = rnd(t);
	/* Now and then give the CPU away while holding the lock, so that the
	 * others contend (and yield or park) even when the machine runs one
	 * worker at a time. Not under spin: there the holder would wait for a
	 * spinner's time slice to end, on every hand-off of a FIFO lock. */
	if (r % 64 == 0 && ls_wait_cfg.policy != LS_WAIT_SPIN)
		sched_yield();
	else
		pause_n((unsigned)(r % 32));
	LS_INJECT();
	atomic_store_explicit(&s->counter, c + 1, memory_order_relaxed);
}

static void leave(struct thr *t, unsigned li)
{
	struct slot *s = &slots[li];
	unsigned prev = atomic_exchange_explicit(&s->occupant, 0, memory_order_relaxed);
	if (prev != t->id + 1)
		fail("mutual exclusion: lock %u was entered by %s while thread %u was inside", li,
		     prev ? "another thread" : "nobody (occupant cleared)", t->id);
}

/* While holding li: trylock must say EBUSY, an expired timedlock
 * ETIMEDOUT (both exercise the failure paths with the lock surely held). */
static void self_checks(struct thr *t, unsigned li)
{
	struct slot *s = &slots[li];
	uint64_t r = rnd(t);
	if (r % 16 == 0) {
		int e = algo->trylock(s->state);
		if (e != EBUSY)
			fail("trylock of a lock held by the caller returned %d, not EBUSY", e);
	} else if (r % 16 == 1) {
		uint64_t deadline = ls_now_ns() + (r >> 8) % 2000;
		int e = algo->timedlock ? algo->timedlock(s->state, deadline)
					: ls_timedlock_fallback(algo, s->state, deadline);
		if (e != ETIMEDOUT)
			fail("timedlock of a lock held by the caller returned %d, not ETIMEDOUT", e);
		else if (ls_now_ns() < deadline)
			fail("timedlock of a held lock returned ETIMEDOUT before its deadline");
	}
}

static void release(struct thr *t, unsigned li, bool elsewhere)
{
	atomic_store_explicit(&t->lock, li, memory_order_relaxed);
	atomic_store_explicit(&t->phase, P_RELEASE, memory_order_relaxed);
	if (elsewhere) {
		t->cross++;
		unlock_elsewhere(&slots[li]);
	} else {
		algo->unlock(slots[li].state);
	}
}

static enum opt_mode pick(struct thr *t)
{
	return mode == M_MIX ? (enum opt_mode)(rnd(t) % 3) : mode;
}

static void *worker(void *arg)
{
	struct thr *t = arg;
	/* Start together: wait (yielding, so that every worker gets a CPU on
	 * an oversubscribed machine) until all workers are running. Without
	 * this, short runs on 2 cores see the workers one after the other. */
	atomic_fetch_add_explicit(&started, 1, memory_order_relaxed);
	while (atomic_load_explicit(&started, memory_order_relaxed) < nthreads)
		sched_yield();
	for (unsigned long i = 0; i < iters; i++) {
		atomic_store_explicit(&t->iter, i, memory_order_relaxed);
		unsigned a = nlocks > 1 ? (unsigned)(rnd(t) % nlocks) : 0;
		uint64_t r = rnd(t);
		if (mode == M_MIX && nlocks > 1 && r % 8 == 0) {
			/* Two locks at once, in index order (no deadlock). */
			unsigned b = (unsigned)((a + 1 + (r >> 8) % (nlocks - 1)) % nlocks);
			unsigned lo = a < b ? a : b, hi = a < b ? b : a;
			acquire(t, lo, pick(t));
			acquire(t, hi, pick(t));
			enter(t, lo);
			enter(t, hi);
			modify(t, lo);
			modify(t, hi);
			self_checks(t, hi);
			leave(t, hi);
			leave(t, lo);
			bool hi_first = (r >> 16) & 1;
			release(t, hi_first ? hi : lo, false);
			release(t, hi_first ? lo : hi, false);
		} else {
			acquire(t, a, pick(t));
			enter(t, a);
			modify(t, a);
			if (mode == M_MIX)
				self_checks(t, a);
			leave(t, a);
			release(t, a, mode == M_MIX && (r >> 8) % 32 == 0);
		}
		atomic_store_explicit(&t->phase, P_IDLE, memory_order_relaxed);
		pause_n((unsigned)(rnd(t) % 16)); /* non-critical section, shorter: contention */
	}
	atomic_store_explicit(&t->iter, iters, memory_order_relaxed);
	atomic_store_explicit(&t->phase, P_DONE, memory_order_release);
	return NULL;
}

/* ---- STRESS_STALLS: the longest stretch without an acquisition ---- */

static _Atomic bool stalls_stop;
static uint64_t stall_worst_ns, stall_run_ns;
static long stall_worst_timeouts;

static void sums(unsigned long *it, long *to)
{
	*it = 0;
	*to = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		*it += atomic_load_explicit(&thr[i].iter, memory_order_relaxed);
		*to += __atomic_load_n(&thr[i].timeouts, __ATOMIC_RELAXED);
	}
}

static void *stall_sampler(void *arg)
{
	(void)arg;
	unsigned long it0, it;
	long to0, to;
	uint64_t start = ls_now_ns(), since = start;
	sums(&it0, &to0);
	while (!atomic_load_explicit(&stalls_stop, memory_order_relaxed)) {
		struct timespec nap = {0, 2000000};
		nanosleep(&nap, NULL);
		sums(&it, &to);
		uint64_t now = ls_now_ns();
		if (it != it0) {
			it0 = it;
			to0 = to;
			since = now;
		} else if (now - since > stall_worst_ns) {
			stall_worst_ns = now - since;
			stall_worst_timeouts = to - to0;
		}
	}
	stall_run_ns = ls_now_ns() - start;
	return NULL;
}

/* ---- diagnostics on timeout (async-signal-safe: write only) ---- */

static void on_signal(int sig)
{
	put("stress: FAIL algo=");
	put(algo ? algo->name : "?");
	put(" seed=");
	put_u(seed);
	put(sig == SIGALRM || sig == SIGTERM ? ": stopped by a timeout (deadlock or lost wake-up?)\n"
					     : ": interrupted\n");
	/* Deadlock or just slow? Look again 200 ms later. */
	unsigned long before[64];
	unsigned n = nthreads < 64 ? nthreads : 64;
	for (unsigned i = 0; thr && i < n; i++)
		before[i] = atomic_load_explicit(&thr[i].iter, memory_order_relaxed);
	struct timespec nap = {0, 200000000};
	nanosleep(&nap, NULL);
	for (unsigned i = 0; thr && i < nthreads; i++) {
		int ph = atomic_load_explicit(&thr[i].phase, memory_order_relaxed);
		unsigned long it = atomic_load_explicit(&thr[i].iter, memory_order_relaxed);
		put("stress:   thread ");
		put_u(i);
		put(": iteration ");
		put_u(it);
		if (i < n && ph != P_DONE) {
			put(it == before[i] ? " (no progress in 200 ms)" : " (progressing: +");
			if (it != before[i]) {
				put_u(it - before[i]);
				put(" in 200 ms)");
			}
		}
		put(", ");
		put(phase_names[ph]);
		if (ph == P_ACQUIRE || ph == P_INSIDE || ph == P_RELEASE) {
			put(" lock ");
			put_u(atomic_load_explicit(&thr[i].lock, memory_order_relaxed));
		}
		put("\n");
	}
	_exit(1);
}

/* ---- broken doubles: tests/stress.bats checks that each is caught ---- *
 * Registered in this program only (not in liblocks.a), named selftest-*. */

struct dbl {
	_Atomic uint32_t word;
};

static void dbl_nop(void *st)
{
	(void)st;
}

static int dbl_try_ok(void *st)
{
	(void)st;
	return 0;
}

/* selftest-nolock: no mutual exclusion at all. */
static const struct ls_algo selftest_nolock = {
    .name = "selftest-nolock",
    .desc = "broken double: lock and unlock do nothing",
    .rank = 1000,
    .state_size = sizeof(struct dbl),
    .lock = dbl_nop,
    .trylock = dbl_try_ok,
    .unlock = dbl_nop,
};
LS_REGISTER_ALGO(selftest_nolock);

static int dbl_trylock(void *st)
{
	struct dbl *l = st;
	uint32_t z = 0;
	return atomic_compare_exchange_strong_explicit(&l->word, &z, 1, memory_order_acquire,
						       memory_order_relaxed)
		   ? 0
		   : EBUSY;
}

static void dbl_lock(void *st)
{
	while (dbl_trylock(st))
		sched_yield();
}

static void dbl_unlock(void *st)
{
	struct dbl *l = st;
	atomic_store_explicit(&l->word, 0, memory_order_release);
}

/* selftest-leak: a correct lock that takes a queue node per acquisition
 * and never gives it back. */
static void dbl_lock_leak(void *st)
{
	(void)ls_node_alloc();
	dbl_lock(st);
}

static const struct ls_algo selftest_leak = {
    .name = "selftest-leak",
    .desc = "broken double: leaks a queue node per acquisition",
    .caps = LS_CAP_QNODE,
    .rank = 1001,
    .state_size = sizeof(struct dbl),
    .lock = dbl_lock_leak,
    .trylock = dbl_trylock,
    .unlock = dbl_unlock,
};
LS_REGISTER_ALGO(selftest_leak);

/* selftest-early: a correct lock whose timedlock gives up at once, before
 * its deadline, on every other call. */
static int dbl_timedlock_early(void *st, uint64_t deadline)
{
	static __thread unsigned calls;
	(void)deadline;
	if (calls++ % 2 == 0)
		return ETIMEDOUT;
	dbl_lock(st);
	return 0;
}

static const struct ls_algo selftest_early = {
    .name = "selftest-early",
    .desc = "broken double: timedlock returns ETIMEDOUT before the deadline",
    .caps = LS_CAP_TIMEOUT,
    .rank = 1002,
    .state_size = sizeof(struct dbl),
    .lock = dbl_lock,
    .trylock = dbl_trylock,
    .timedlock = dbl_timedlock_early,
    .unlock = dbl_unlock,
};
LS_REGISTER_ALGO(selftest_early);

/* ---- set-up ---- */

/* A line of its own, zero-filled, 8-aligned like the shim's inline state
 * (offset 24 of a pthread_mutex_t), or a block of the pool (opts.h). */
static void *state_alloc(void)
{
	void *p = opt_state(algo);
	if (!p)
		opt_error("algorithm %s: no memory for a state of %zu bytes", algo->name, algo->state_size);
	return p;
}

static void state_free(void *p)
{
	opt_state_free(algo, p);
}

/* a spin-only algorithm (locks/spin/spinlock.h) is a lock.h lock too */
static const struct ls_algo *find_algo(const char *name)
{
	return name && !ls_algo_find(name) && ls_spinalgo_find(name) ? ls_spinalgo_find(name)
								     : opt_algo(name);
}

/* One run of the algorithm named `name` with `seed`, in this process: 0
 * passed, 1 failed (its lines say why); bad usage exits 2. */
static int run_one(const char *name)
{
	algo = find_algo(name);
	opt_params(algo);
	if (algo->caps & LS_CAP_HIER) {
		char err[1024];
		if (ls_topo_setup(getenv("LOCKSWAP_CLUSTER"), getenv("LOCKSWAP_TOPOLOGY"), err, sizeof err))
			opt_error("%s", err);
	}
	const char *y = getenv("LOCKSWAP_YIELD");
	if (y)
		ls_wait_cfg.yield = (unsigned)opt_number("LOCKSWAP_YIELD", y, 0, 100000000);

	/* The -inject build draws its delays from LOCKSWAP_SEED: follow -s. */
	char sbuf[32];
	snprintf(sbuf, sizeof sbuf, "%" PRIu64, seed);
	setenv("LOCKSWAP_SEED", sbuf, 0);

	/* Counting nodes makes the pool bypass its per-thread caches (pool.h),
	 * so STRESS_COUNT_NODES=0 runs the caches instead, without the leak
	 * check. */
	const char *cn = getenv("STRESS_COUNT_NODES");
	bool counting = !cn || strcmp(cn, "0") != 0;
	ls_node_counting = counting;
	slots = aligned_alloc(LS_CACHELINE, sizeof *slots * nlocks);
	thr = aligned_alloc(LS_CACHELINE, sizeof *thr * nthreads);
	if (!slots || !thr) {
		perror("stress: aligned_alloc");
		exit(2);
	}
	memset(slots, 0, sizeof *slots * nlocks);
	memset(thr, 0, sizeof *thr * nthreads);
	for (unsigned i = 0; i < nlocks; i++) {
		slots[i].state = state_alloc();
		if (algo->init)
			algo->init(slots[i].state);
	}
	if (mode == M_MIX && pthread_create(&helper_tid, NULL, helper, NULL)) {
		perror("stress: pthread_create");
		exit(2);
	}
	for (unsigned i = 0; i < nthreads; i++) {
		thr[i].id = i;
		thr[i].rng = seed_stream(seed, i);
		if (pthread_create(&thr[i].tid, NULL, worker, &thr[i])) {
			perror("stress: pthread_create");
			exit(2);
		}
	}
	const char *st = getenv("STRESS_STALLS");
	bool stalls = st && !strcmp(st, "1");
	pthread_t sampler;
	if (stalls && pthread_create(&sampler, NULL, stall_sampler, NULL)) {
		perror("stress: pthread_create");
		exit(2);
	}
	long acq = 0, timeouts = 0, busy = 0, cross = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(thr[i].tid, NULL);
		if (atomic_load_explicit(&thr[i].phase, memory_order_acquire) != P_DONE ||
		    atomic_load_explicit(&thr[i].iter, memory_order_relaxed) != iters)
			fail_final("thread %u did not finish its %lu iterations", i, iters);
		acq += thr[i].acquisitions;
		timeouts += thr[i].timeouts;
		busy += thr[i].busy;
		cross += thr[i].cross;
	}
	if (stalls) {
		atomic_store_explicit(&stalls_stop, true, memory_order_relaxed);
		pthread_join(sampler, NULL);
	}
	if (mode == M_MIX) {
		pthread_mutex_lock(&helper_mu);
		helper_quit = true;
		pthread_cond_signal(&helper_cv);
		pthread_mutex_unlock(&helper_mu);
		pthread_join(helper_tid, NULL);
	}

	long counted = 0;
	for (unsigned i = 0; i < nlocks; i++) {
		long want = atomic_load_explicit(&slots[i].acquired, memory_order_relaxed);
		long got = atomic_load_explicit(&slots[i].counter, memory_order_relaxed);
		if (got != want)
			fail_final("lock %u: counter is %ld after %ld acquisitions (lost updates: no mutual "
				   "exclusion)",
				   i, got, want);
		counted += got;
		if (algo->destroy)
			algo->destroy(slots[i].state);
		state_free(slots[i].state);
	}
	if (counted != acq)
		fail_final("counters sum to %ld, threads counted %ld acquisitions", counted, acq);

	struct ls_node_stats ns = {.max_in_use = -1};
	if (counting)
		ls_node_stats(&ns);
	if (ns.in_use != 0)
		fail_final("%ld queue node(s) still in use after every lock was released and destroyed",
			   ns.in_use);
	if (!(algo->caps & LS_CAP_QNODE) && ns.max_in_use > 0)
		fail_final("used %ld queue node(s) without LS_CAP_QNODE", ns.max_in_use);

	long nf = atomic_load_explicit(&failures, memory_order_relaxed);
	char conf[256];
	snprintf(conf, sizeof conf,
		 "algo=%s wait=%s spin=%u yield=%u threads=%u locks=%u mode=%s iters=%lu patience=%" PRIu64
		 " seed=%" PRIu64 "%s",
		 algo->name, opt_policy_name(ls_wait_cfg.policy), ls_wait_cfg.spin, ls_wait_cfg.yield,
		 nthreads, nlocks, mode_names[mode], iters, patience, seed,
#ifdef LS_FAULT_INJECT
		 " inject=yes"
#else
		 ""
#endif
	);
	if (nf) {
		fprintf(stderr, "stress: FAIL %s: %ld failure(s)\n", conf, nf);
		return 1;
	}
	if (!quiet)
		printf("stress: OK %s acquisitions=%ld timeouts=%ld busy=%ld cross_unlocks=%ld "
		       "nodes_max_in_use=%ld\n",
		       conf, acq, timeouts, busy, cross, ns.max_in_use);
	if (stalls)
		printf("stress: stalls longest_ms=%.1f timeouts_in_it=%ld seconds=%.2f\n",
		       stall_worst_ns / 1e6, stall_worst_timeouts, stall_run_ns / 1e9);
	return 0;
}

/* One run of opt_run_lists. */
static int run_seeded(const char *name, uint64_t s)
{
	seed = s;
	return run_one(name);
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	char *seeds = NULL;
	unsigned watchdog = 0;
	int c;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	ls_wait_cfg.spin = LS_WAIT_SPIN_DEFAULT;
	const struct opt_stress shared = {&nthreads, &nlocks,	&watchdog, &iters,
					  &mode,     &patience, &seeds,	   &quiet};
	while ((c = getopt(argc, argv, "a:t:n:l:m:p:w:S:s:T:qh")) != -1) {
		if (opt_algo_wait(c, optarg, &name) || opt_stress_arm(c, optarg, &shared))
			continue;
		switch (c) {
		case 'h':
			printf(
			    "usage: stress -a ALGO[,ALGO...] [-t THREADS(4)] [-n ITERS(2000)] [-l LOCKS(1)]\n"
			    "              [-m lock|try|timed|mix] [-p PATIENCE_NS(20000)]\n"
			    "              [-w spin|yield|park] [-S SPIN] [-s SEED(1)[,SEED...]]\n"
			    "              [-T SECONDS(0: none)] [-q]\n");
			return 0;
		default:
			opt_error("usage: stress -a ALGO[,ALGO...] [-t N] [-n N] [-l N] [-m MODE] [-p NS] "
				  "[-w WAIT] [-S SPIN] [-s SEED[,SEED...]] [-T SECONDS] [-q]");
		}
	}
	if (optind != argc)
		opt_error("unexpected argument '%s'", argv[optind]);
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	enum { MAX_ALGOS = 128, MAX_SEEDS = 64 };
	char *given[MAX_ALGOS], *names = name ? strdup(name) : NULL;
	uint64_t seedn[MAX_SEEDS];
	unsigned na = names ? opt_list("a", names, given, MAX_ALGOS) : 1,
		 ns = opt_seeds(seeds, seedn, MAX_SEEDS, seed);
	if (!names)
		given[0] = NULL; /* opt_algo's error */
	if (na == 1 && ns == 1) {
		seed = seedn[0];
		alarm(watchdog);
		int r = run_one(given[0]);
		free(names);
		return r;
	}
	/* Several runs: each in a child of its own (opt_run_lists), the names
	 * checked first. */
	for (unsigned i = 0; i < na; i++)
		find_algo(given[i]);
	int failed = opt_run_lists(given, na, seedn, ns, watchdog, run_seeded);
	free(names);
	return failed;
}
