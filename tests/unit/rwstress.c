/*
 * rwstress.c - the generic validator every reader-writer lock algorithm is
 * run through (the rwlock family's build/unit/stress).
 *
 *   rwstress -a RWALGO[,RWALGO...] [-t THREADS(4)] [-n ITERS(2000)] [-l LOCKS(1)]
 *            [-r READ_PERCENT(80)] [-m lock|try|timed|mix] [-p PATIENCE_NS(20000)]
 *            [-k reader|writer|own] [-w spin|yield|park] [-S SPIN]
 *            [-s SEED(1)[,SEED...]] [-T SECONDS(0)] [-q]
 *
 * Links build/liblocks.a directly (no LD_PRELOAD): RWALGO is any name
 * `lockswap --names rwlock` prints (NAME+WRAPPER compositions too); `mutex`
 * serialises under LOCKSWAP_ALGO's lock (default LS_DEFAULT_ALGO, auto). THREADS threads
 * each make ITERS acquisitions of one of LOCKS locks, READ_PERCENT of them
 * for reading, by
 *   lock   rdlock / wrlock;
 *   try    tryrdlock / trywrlock retried until they succeed (EBUSY counted);
 *   timed  the timed operation (the algorithm's, or ls_rw_timed_fallback as
 *          the shim would use) with deadline now+PATIENCE_NS, retried after
 *          each ETIMEDOUT (counted);
 *   mix    one of the three at random, and now and then two locks at once
 *          (in index order, released in either order) and, holding a lock,
 *          a try or an expired timed attempt that must fail (EBUSY /
 *          ETIMEDOUT: a write hold excludes everything, a read hold
 *          excludes writers).
 * -k writer passes LS_RW_PREFER_WRITER (the _NP writer-preferring kind) to
 * every acquisition, own LS_RW_OWN_POLICY (the algorithm's own policy,
 * LOCKSWAP_RWPOLICY=algorithm); reader (the default: the default kind's
 * reader preference) passes nothing.
 *
 * Checks. Each lock has an occupancy word changed only by atomic RMWs
 * (totally ordered, whatever the lock's orderings): readers add 1, a writer
 * sets a bit; a writer must find it 0 (no reader, no writer beside it), a
 * reader must not find the bit. Writers also increment a plain counter by
 * a read, a delay (LS_INJECT in the -inject build) and a write, which loses
 * updates if two writers overlap; readers read it at entry and exit and
 * must see the same value (no writer beside a reader). At the end: every
 * thread finished (a lost wake-up or a lock left claimed by a timed-out
 * waiter is a hang, which the bats file's timeout turns into a failure
 * with this program's report of where each thread was), each counter
 * equals its lock's write acquisitions, every lock is free again (a try
 * for writing succeeds: no timeout left anything behind), destroy ran, no
 * queue node is in use; ETIMEDOUT never before the deadline; try returns
 * only 0/EBUSY (reads also EAGAIN, which is a failure here: few readers).
 *
 * Output: "rwstress: OK algo=... reads=... writes=... timeouts=...
 * max_readers=..." (max_readers: most readers seen inside one lock at
 * once), exit 0; or "rwstress: FAIL ..." lines, exit 1; bad usage: one
 * line, exit 2. On SIGTERM/SIGALRM (a hang): where each thread is, exit 1.
 * The -inject build (rwstress-inject) reads LOCKSWAP_INJECT and
 * LOCKSWAP_SEED (default -s).
 *
 * Several algorithms and seeds: each algorithm with each seed, each run in
 * a child process of its own (a fork: a process composes a wrapper once;
 * far cheaper than a program start, the suite's main cost: issue 35), one
 * after the other; a failed run's lines name algorithm and seed, and the
 * others still run (exit 1 if any failed, 2 at once on bad usage).
 * -T SECONDS: a watchdog per run (as a SIGALRM: where each thread is).
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
#include <sys/wait.h>
#include <unistd.h>

#include "hier/topo.h"
#include "lock.h"
#include "pool.h"
#include "rwlock/rwlock.h"
#include "wait.h"

#define OPT_PROG "rwstress"
#include "harness.h"
#include "opts.h"

#define mode_names opt_mode_names
/* -k: what every acquisition asks for (rwlock.h, PREFERENCE) */
static const char *const kind_names[] = {"reader", "writer", "own"};
static const unsigned kind_how[] = {0, LS_RW_PREFER_WRITER, LS_RW_OWN_POLICY};
static unsigned kind;

static const struct ls_rwalgo *algo;
static unsigned nthreads = 4, nlocks = 1, read_pct = 80, how;
static unsigned long iters = 2000;
static enum opt_mode mode = M_LOCK;
static uint64_t patience = 20000, seed = 1;
static bool quiet;

#define WRITER 0x80000000u

struct lk {
	void *state;
	_Atomic long writes; /* true count of write acquisitions */
	char pad1[LS_CACHELINE - sizeof(void *) - sizeof(long)];
	_Atomic uint32_t occ;  /* readers inside, | WRITER */
	_Atomic uint32_t maxr; /* most readers seen inside */
	_Atomic long counter;  /* the writers' racy counter */
	char pad2[LS_CACHELINE - 2 * sizeof(uint32_t) - sizeof(long)];
} __attribute__((aligned(LS_CACHELINE)));
static struct lk *locks;

enum phase { P_IDLE, P_ACQUIRE, P_INSIDE, P_RELEASE, P_DONE };
static const char *const phase_names[] = {"between acquisitions", "acquiring", "inside", "releasing", "done"};

struct thr {
	unsigned id;
	pthread_t tid;
	uint64_t rng;
	_Atomic unsigned long iter;
	_Atomic int phase;
	_Atomic unsigned lock, writing;
	long reads, writes, timeouts, busy;
} __attribute__((aligned(LS_CACHELINE)));
static struct thr *thr;

static _Atomic long failures;
static _Atomic unsigned started;

static void fail(bool always, const char *fmt, ...)
{
	if (atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed) >= 10 && !always)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "rwstress: FAIL algo=%s seed=%" PRIu64 ": %s\n", algo ? algo->name : "?", seed, msg);
}

static uint64_t rnd(struct thr *t)
{
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

/* ---- one hold ---- */

static int timed(struct lk *l, bool w, uint64_t deadline, void **token)
{
	if (w)
		return algo->timedwrlock ? algo->timedwrlock(l->state, how, deadline)
					 : ls_rw_timed_fallback(algo, l->state, how, true, deadline, token);
	return algo->timedrdlock ? algo->timedrdlock(l->state, how, deadline, token)
				 : ls_rw_timed_fallback(algo, l->state, how, false, deadline, token);
}

/* Acquires lock li for writing (w) or reading by mode m; the token of a
 * read hold goes to *token. */
static void acquire(struct thr *t, unsigned li, bool w, enum opt_mode m, void **token)
{
	struct lk *l = &locks[li];
	atomic_store_explicit(&t->lock, li, memory_order_relaxed);
	atomic_store_explicit(&t->writing, w, memory_order_relaxed);
	atomic_store_explicit(&t->phase, P_ACQUIRE, memory_order_relaxed);
	*token = NULL;
	int r;
	switch (m) {
	case M_LOCK:
		if (w)
			algo->wrlock(l->state, how);
		else if ((r = algo->rdlock(l->state, how, token)))
			fail(false, "rdlock returned %d (%s)", r, strerror(r));
		break;
	case M_TRY:
		for (unsigned n = 1;; n++) {
			r = w ? algo->trywrlock(l->state, how) : algo->tryrdlock(l->state, how, token);
			if (r == 0)
				break;
			if (r != EBUSY)
				fail(false, "try%slock returned %d (%s), not 0 or EBUSY", w ? "wr" : "rd", r,
				     strerror(r));
			t->busy++;
			if (n % 16 == 0)
				sched_yield();
			else
				pause_n(16);
		}
		break;
	default:
		for (;;) {
			uint64_t deadline = ls_now_ns() + patience;
			r = timed(l, w, deadline, token);
			if (r == 0)
				break;
			if (r != ETIMEDOUT) {
				fail(false, "timed%slock returned %d (%s)", w ? "wr" : "rd", r, strerror(r));
				continue;
			}
			uint64_t now = ls_now_ns();
			if (now < deadline)
				fail(false,
				     "timed%slock returned ETIMEDOUT %" PRIu64 " ns before its deadline",
				     w ? "wr" : "rd", deadline - now);
			t->timeouts++;
		}
		break;
	}
	if (w)
		t->writes++;
	else
		t->reads++;
}

static void enter(struct thr *t, unsigned li, bool w, long *seen)
{
	struct lk *l = &locks[li];
	atomic_store_explicit(&t->phase, P_INSIDE, memory_order_relaxed);
	if (w) {
		uint32_t o = atomic_fetch_or_explicit(&l->occ, WRITER, memory_order_relaxed);
		if (o & WRITER)
			fail(false, "lock %u: a writer entered beside another writer", li);
		else if (o)
			fail(false, "lock %u: a writer entered beside %u reader(s)", li, o);
		atomic_fetch_add_explicit(&l->writes, 1, memory_order_relaxed);
		return;
	}
	uint32_t o = atomic_fetch_add_explicit(&l->occ, 1, memory_order_relaxed);
	if (o & WRITER)
		fail(false, "lock %u: a reader entered beside a writer", li);
	uint32_t m = atomic_load_explicit(&l->maxr, memory_order_relaxed);
	while ((o & ~WRITER) + 1 > m &&
	       !atomic_compare_exchange_weak_explicit(&l->maxr, &m, (o & ~WRITER) + 1, memory_order_relaxed,
						      memory_order_relaxed))
		;
	*seen = atomic_load_explicit(&l->counter, memory_order_relaxed);
}

/* A writer's racy increment; a reader's look at the counter. */
static void work(struct thr *t, unsigned li, bool w, long seen)
{
	struct lk *l = &locks[li];
	uint64_t r = rnd(t);
	if (w) {
		long c = atomic_load_explicit(&l->counter, memory_order_relaxed);
		LS_INJECT();
		if (r % 64 == 0 && ls_wait_cfg.policy != LS_WAIT_SPIN)
			sched_yield();
		else
			pause_n((unsigned)(r % 32));
		LS_INJECT();
		atomic_store_explicit(&l->counter, c + 1, memory_order_relaxed);
		return;
	}
	if (r % 64 == 0 && ls_wait_cfg.policy != LS_WAIT_SPIN)
		sched_yield();
	else
		pause_n((unsigned)(r % 32));
	LS_INJECT();
	long now = atomic_load_explicit(&l->counter, memory_order_relaxed);
	if (now != seen)
		fail(false, "lock %u: the counter moved from %ld to %ld under a reader (a writer beside it)",
		     li, seen, now);
}

static void leave(struct thr *t, unsigned li, bool w)
{
	struct lk *l = &locks[li];
	(void)t;
	if (w) {
		uint32_t o = atomic_fetch_and_explicit(&l->occ, ~WRITER, memory_order_relaxed);
		if (o != WRITER)
			fail(false, "lock %u: a writer left with occupancy %#x (someone came in)", li, o);
		return;
	}
	uint32_t o = atomic_fetch_sub_explicit(&l->occ, 1, memory_order_relaxed);
	if ((o & WRITER) || !(o & ~WRITER))
		fail(false, "lock %u: a reader left with occupancy %#x", li, o);
}

/* Holding li (w: for writing): attempts that must fail. */
static void self_checks(struct thr *t, unsigned li, bool w)
{
	struct lk *l = &locks[li];
	uint64_t r = rnd(t);
	void *tok = NULL;
	int e;
	if (r % 16 == 0) {
		if ((e = algo->trywrlock(l->state, how)) != EBUSY)
			fail(false, "trywrlock of a lock held %s by the caller returned %d, not EBUSY",
			     w ? "for writing" : "for reading", e);
	} else if (r % 16 == 1 && w) {
		if ((e = algo->tryrdlock(l->state, how, &tok)) != EBUSY)
			fail(false, "tryrdlock of a lock held for writing returned %d, not EBUSY", e);
	} else if (r % 16 == 2) {
		uint64_t deadline = ls_now_ns() + (r >> 8) % 2000;
		if ((e = timed(l, true, deadline, &tok)) != ETIMEDOUT)
			fail(false, "timedwrlock of a held lock returned %d, not ETIMEDOUT", e);
		else if (ls_now_ns() < deadline)
			fail(false, "timedwrlock of a held lock returned ETIMEDOUT before its deadline");
	} else if (r % 16 == 3 && w) {
		uint64_t deadline = ls_now_ns() + (r >> 8) % 2000;
		if ((e = timed(l, false, deadline, &tok)) != ETIMEDOUT)
			fail(false, "timedrdlock of a lock held for writing returned %d, not ETIMEDOUT", e);
	}
}

static void release(struct thr *t, unsigned li, bool w, void *token)
{
	atomic_store_explicit(&t->lock, li, memory_order_relaxed);
	atomic_store_explicit(&t->phase, P_RELEASE, memory_order_relaxed);
	if (w)
		algo->wrunlock(locks[li].state);
	else
		algo->rdunlock(locks[li].state, token);
}

static enum opt_mode pick(struct thr *t)
{
	return mode == M_MIX ? (enum opt_mode)(rnd(t) % 3) : mode;
}

static bool pick_write(struct thr *t)
{
	return rnd(t) % 100 >= read_pct;
}

static void *worker(void *arg)
{
	struct thr *t = arg;
	atomic_fetch_add_explicit(&started, 1, memory_order_relaxed);
	while (atomic_load_explicit(&started, memory_order_relaxed) < nthreads)
		sched_yield();
	for (unsigned long i = 0; i < iters; i++) {
		atomic_store_explicit(&t->iter, i, memory_order_relaxed);
		unsigned a = nlocks > 1 ? (unsigned)(rnd(t) % nlocks) : 0;
		uint64_t r = rnd(t);
		void *ta, *tb;
		long sa = 0, sb = 0;
		if (mode == M_MIX && nlocks > 1 && r % 8 == 0) {
			unsigned b = (unsigned)((a + 1 + (r >> 8) % (nlocks - 1)) % nlocks);
			unsigned lo = a < b ? a : b, hi = a < b ? b : a;
			bool wlo = pick_write(t), whi = pick_write(t);
			acquire(t, lo, wlo, pick(t), &ta);
			acquire(t, hi, whi, pick(t), &tb);
			enter(t, lo, wlo, &sa);
			enter(t, hi, whi, &sb);
			work(t, lo, wlo, sa);
			work(t, hi, whi, sb);
			self_checks(t, hi, whi);
			leave(t, hi, whi);
			leave(t, lo, wlo);
			if ((r >> 16) & 1) {
				release(t, hi, whi, tb);
				release(t, lo, wlo, ta);
			} else {
				release(t, lo, wlo, ta);
				release(t, hi, whi, tb);
			}
		} else {
			bool w = pick_write(t);
			acquire(t, a, w, pick(t), &ta);
			enter(t, a, w, &sa);
			work(t, a, w, sa);
			if (mode == M_MIX)
				self_checks(t, a, w);
			leave(t, a, w);
			release(t, a, w, ta);
		}
		atomic_store_explicit(&t->phase, P_IDLE, memory_order_relaxed);
		pause_n((unsigned)(rnd(t) % 16));
	}
	atomic_store_explicit(&t->iter, iters, memory_order_relaxed);
	atomic_store_explicit(&t->phase, P_DONE, memory_order_release);
	return NULL;
}

/* ---- a hang: where every thread is (async-signal-safe: write only) ---- */

static void on_signal(int sig)
{
	(void)sig;
	put("rwstress: FAIL algo=");
	put(algo ? algo->name : "?");
	put(" seed=");
	put_u(seed);
	put(": stopped by a timeout (deadlock, lost wake-up, or a lock left held?)\n");
	for (unsigned i = 0; thr && i < nthreads; i++) {
		int ph = atomic_load_explicit(&thr[i].phase, memory_order_relaxed);
		put("rwstress:   thread ");
		put_u(i);
		put(": iteration ");
		put_u(atomic_load_explicit(&thr[i].iter, memory_order_relaxed));
		put(", ");
		put(phase_names[ph]);
		if (ph == P_ACQUIRE || ph == P_INSIDE || ph == P_RELEASE) {
			put(atomic_load_explicit(&thr[i].writing, memory_order_relaxed) ? " (write) lock "
											: " (read) lock ");
			put_u(atomic_load_explicit(&thr[i].lock, memory_order_relaxed));
		}
		put("\n");
	}
	_exit(1);
}

/* ---- broken doubles: tests/rwlock-stress.bats checks that each is caught ---- */

struct dbl {
	_Atomic uint32_t w; /* readers, | WRITER */
};

static int d_tryrd(void *st, unsigned h, void **tok)
{
	struct dbl *d = st;
	(void)h, (void)tok;
	uint32_t v = atomic_load_explicit(&d->w, memory_order_relaxed);
	return !(v & WRITER) && atomic_compare_exchange_strong_explicit(
				    &d->w, &v, v + 1, memory_order_acquire, memory_order_relaxed)
		   ? 0
		   : EBUSY;
}

static int d_rd(void *st, unsigned h, void **tok)
{
	while (d_tryrd(st, h, tok))
		sched_yield();
	return 0;
}

static void d_rdun(void *st, void *tok)
{
	(void)tok;
	atomic_fetch_sub_explicit(&((struct dbl *)st)->w, 1, memory_order_release);
}

static int d_trywr(void *st, unsigned h)
{
	uint32_t z = 0;
	(void)h;
	return atomic_compare_exchange_strong_explicit(&((struct dbl *)st)->w, &z, WRITER,
						       memory_order_acquire, memory_order_relaxed)
		   ? 0
		   : EBUSY;
}

static void d_wr(void *st, unsigned h)
{
	while (d_trywr(st, h))
		sched_yield();
}

static void d_wrun(void *st)
{
	atomic_fetch_and_explicit(&((struct dbl *)st)->w, ~WRITER, memory_order_release);
}

/* selftest-rw-nowait: writers do not wait for readers. */
static int d_trywr_nowait(void *st, unsigned h)
{
	struct dbl *d = st;
	(void)h;
	uint32_t v = atomic_load_explicit(&d->w, memory_order_relaxed);
	return !(v & WRITER) && atomic_compare_exchange_strong_explicit(
				    &d->w, &v, v | WRITER, memory_order_acquire, memory_order_relaxed)
		   ? 0
		   : EBUSY;
}

static void d_wr_nowait(void *st, unsigned h)
{
	while (d_trywr_nowait(st, h))
		sched_yield();
}

static const struct ls_rwalgo selftest_nowait = {
    .name = "selftest-rw-nowait",
    .desc = "broken double: a writer does not wait for the readers inside",
    .rank = 1000,
    .state_size = sizeof(struct dbl),
    .rdlock = d_rd,
    .tryrdlock = d_tryrd,
    .rdunlock = d_rdun,
    .wrlock = d_wr_nowait,
    .trywrlock = d_trywr_nowait,
    .wrunlock = d_wrun,
};
LS_REGISTER_RWALGO(selftest_nowait);

/* selftest-rw-stuck: a timed writer counts itself as waiting (readers
 * then stay out) and forgets to uncount itself when it gives up, so the
 * readers it kept out wait for ever. */
#define WWAIT 0x10000u

static int d_timedwr_stuck(void *st, unsigned h, uint64_t deadline)
{
	struct dbl *d = st;
	(void)h;
	atomic_fetch_add_explicit(&d->w, WWAIT, memory_order_relaxed);
	for (;;) {
		uint32_t v = atomic_load_explicit(&d->w, memory_order_relaxed);
		if (!(v & WRITER) && !(v & (WWAIT - 1)) &&
		    atomic_compare_exchange_strong_explicit(&d->w, &v, (v - WWAIT) | WRITER,
							    memory_order_acquire, memory_order_relaxed))
			return 0;
		if (ls_now_ns() >= deadline)
			return ETIMEDOUT; /* the bug: still counted as waiting */
		sched_yield();
	}
}

static int d_tryrd_stuck(void *st, unsigned h, void **tok)
{
	struct dbl *d = st;
	(void)h, (void)tok;
	uint32_t v = atomic_load_explicit(&d->w, memory_order_relaxed);
	return !(v & ~(WWAIT - 1)) && atomic_compare_exchange_strong_explicit(
					  &d->w, &v, v + 1, memory_order_acquire, memory_order_relaxed)
		   ? 0
		   : EBUSY;
}

static int d_rd_stuck(void *st, unsigned h, void **tok)
{
	while (d_tryrd_stuck(st, h, tok))
		sched_yield();
	return 0;
}

static const struct ls_rwalgo selftest_stuck = {
    .name = "selftest-rw-stuck",
    .desc = "broken double: a timed-out writer leaves its claim behind",
    .caps = LS_RWCAP_TIMEOUT,
    .rank = 1001,
    .state_size = sizeof(struct dbl),
    .rdlock = d_rd_stuck,
    .tryrdlock = d_tryrd_stuck,
    .rdunlock = d_rdun,
    .wrlock = d_wr,
    .trywrlock = d_trywr,
    .timedwrlock = d_timedwr_stuck,
    .wrunlock = d_wrun,
};
LS_REGISTER_RWALGO(selftest_stuck);

/* selftest-rw-leak: correct, but takes a queue node per read and never
 * gives it back. */
static int d_rd_leak(void *st, unsigned h, void **tok)
{
	*tok = ls_node_alloc();
	return d_rd(st, h, tok);
}

static const struct ls_rwalgo selftest_leak = {
    .name = "selftest-rw-leak",
    .desc = "broken double: leaks a queue node per read acquisition",
    .caps = LS_RWCAP_QNODE,
    .rank = 1002,
    .state_size = sizeof(struct dbl),
    .rdlock = d_rd_leak,
    .tryrdlock = d_tryrd,
    .rdunlock = d_rdun,
    .wrlock = d_wr,
    .trywrlock = d_trywr,
    .wrunlock = d_wrun,
};
LS_REGISTER_RWALGO(selftest_leak);

/* ---- set-up ---- */

/* An rwlock algorithm's tunables, as opt_params does a mutex algorithm's. */
static void rw_params(const struct ls_param *p)
{
	for (; p && p->env; p++) {
		const char *v = getenv(p->env);
		char err[256];
		if (v && ls_param_parse(p, v, p->value, err, sizeof err))
			opt_error("%s", err);
	}
}

/* After a run: every lock is free for writing, then for reading. */
static void *free_at_end(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < nlocks; i++) {
		struct lk *l = &locks[i];
		int e = algo->trywrlock(l->state, how);
		if (e)
			fail(true,
			     "lock %u is not free at the end: trywrlock returned %d (a timeout left "
			     "something behind?)",
			     i, e);
		else
			algo->wrunlock(l->state);
		void *tok = NULL;
		if ((e = algo->tryrdlock(l->state, how, &tok)))
			fail(true, "lock %u: tryrdlock returned %d at the end", i, e);
		else
			algo->rdunlock(l->state, tok);
	}
	return NULL;
}

/* One run of the algorithm named `name` with `seed`, in this process: 0
 * passed, 1 failed (its lines say why); bad usage exits 2. */
static int run_rw(const char *name)
{
	char err[1400];
	algo = ls_rwalgo_lookup(name, err, sizeof err);
	if (!algo)
		opt_error("-a: %s", err);
	if (algo->caps & LS_RWCAP_PASSTHROUGH)
		opt_error("-a: '%s' is not a lock (the shim hands it to glibc)", name);
	const char *mname = getenv("LOCKSWAP_ALGO");
	const struct ls_algo *mutex = ls_algo_find(mname ? mname : LS_DEFAULT_ALGO);
	if (!mutex)
		opt_error("LOCKSWAP_ALGO: unknown algorithm '%s'", mname);
	opt_params(mutex);
	for (size_t i = 0; i < ls_rwalgo_count(); i++)
		rw_params(ls_rwalgo_at(i)->params);
	if (ls_rwalgo_start(algo, (mutex->caps & LS_CAP_PASSTHROUGH) ? NULL : mutex, err, sizeof err))
		opt_error("%s", err);
	if ((algo->caps & LS_RWCAP_HIER) || (mutex->caps & LS_CAP_HIER)) {
		if (ls_topo_setup(getenv("LOCKSWAP_CLUSTER"), getenv("LOCKSWAP_TOPOLOGY"), err, sizeof err))
			opt_error("%s", err);
	}
	const char *y = getenv("LOCKSWAP_YIELD");
	if (y)
		ls_wait_cfg.yield = (unsigned)opt_number("LOCKSWAP_YIELD", y, 0, 100000000);
	char sbuf[32];
	snprintf(sbuf, sizeof sbuf, "%" PRIu64, seed);
	setenv("LOCKSWAP_SEED", sbuf, 0);
	ls_node_counting = true;

	size_t ssize = (algo->state_size + LS_CACHELINE - 1) / LS_CACHELINE * LS_CACHELINE;
	locks = aligned_alloc(LS_CACHELINE, sizeof *locks * nlocks);
	thr = aligned_alloc(LS_CACHELINE, sizeof *thr * nthreads);
	if (!locks || !thr)
		opt_error("out of memory");
	memset(locks, 0, sizeof *locks * nlocks);
	memset(thr, 0, sizeof *thr * nthreads);
	for (unsigned i = 0; i < nlocks; i++) {
		locks[i].state = aligned_alloc(LS_CACHELINE, ssize ? ssize : LS_CACHELINE);
		if (!locks[i].state)
			opt_error("out of memory");
		memset(locks[i].state, 0, ssize ? ssize : LS_CACHELINE);
		if (algo->init)
			algo->init(locks[i].state);
	}
	for (unsigned i = 0; i < nthreads; i++) {
		thr[i].id = i;
		thr[i].rng = seed_stream(seed, i);
		if (pthread_create(&thr[i].tid, NULL, worker, &thr[i]))
			opt_error("pthread_create failed");
	}
	long reads = 0, writes = 0, timeouts = 0, busy = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(thr[i].tid, NULL);
		if (atomic_load_explicit(&thr[i].phase, memory_order_acquire) != P_DONE)
			fail(true, "thread %u did not finish its %lu iterations", i, iters);
		reads += thr[i].reads;
		writes += thr[i].writes;
		timeouts += thr[i].timeouts;
		busy += thr[i].busy;
	}
	unsigned maxr = 0;
	for (unsigned i = 0; i < nlocks; i++) {
		struct lk *l = &locks[i];
		long want = atomic_load_explicit(&l->writes, memory_order_relaxed);
		long got = atomic_load_explicit(&l->counter, memory_order_relaxed);
		if (got != want)
			fail(true,
			     "lock %u: counter is %ld after %ld writes (lost updates: writers overlapped)", i,
			     got, want);
		if (atomic_load_explicit(&l->maxr, memory_order_relaxed) > maxr)
			maxr = atomic_load_explicit(&l->maxr, memory_order_relaxed);
	}
	/* every lock is free: nothing held, no claim left by a timeout (tried
	 * by a thread of its own, gone before the nodes are counted: the
	 * non-blocking mutex locks keep each thread's ring of nodes until it
	 * exits, locks/abortable/abortable.h part 4) */
	pthread_t checker;
	if (pthread_create(&checker, NULL, free_at_end, NULL))
		opt_error("pthread_create failed");
	pthread_join(checker, NULL);
	for (unsigned i = 0; i < nlocks; i++) {
		struct lk *l = &locks[i];
		if (algo->destroy)
			algo->destroy(l->state);
		free(l->state);
	}
	struct ls_node_stats ns;
	ls_node_stats(&ns);
	if (ns.in_use != 0)
		fail(true, "%ld queue node(s) still in use after every lock was released and destroyed",
		     ns.in_use);
	if (!(algo->caps & LS_RWCAP_QNODE) && ns.max_in_use > 0)
		fail(true, "used %ld queue node(s) without LS_RWCAP_QNODE", ns.max_in_use);

	char conf[320];
	snprintf(conf, sizeof conf,
		 "algo=%s kind=%s wait=%s threads=%u locks=%u reads=%u%% mode=%s iters=%lu patience=%" PRIu64
		 " seed=%" PRIu64 "%s",
		 algo->name, kind_names[kind], opt_policy_name(ls_wait_cfg.policy), nthreads, nlocks,
		 read_pct, mode_names[mode], iters, patience, seed,
#ifdef LS_FAULT_INJECT
		 " inject=yes"
#else
		 ""
#endif
	);
	long nf = atomic_load_explicit(&failures, memory_order_relaxed);
	if (nf) {
		fprintf(stderr, "rwstress: FAIL %s: %ld failure(s)\n", conf, nf);
		return 1;
	}
	if (!quiet)
		printf("rwstress: OK %s reads=%ld writes=%ld timeouts=%ld busy=%ld max_readers=%u "
		       "nodes_max_in_use=%ld\n",
		       conf, reads, writes, timeouts, busy, maxr, ns.max_in_use);
	return 0;
}

/* One run of opt_run_lists. */
static int run_seeded(const char *name, uint64_t s)
{
	seed = s;
	return run_rw(name);
}

int main(int argc, char **argv)
{
	char *name = NULL, *seeds = NULL;
	unsigned watchdog = 0;
	int c;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	const struct opt_stress shared = {&nthreads, &nlocks,	&watchdog, &iters,
					  &mode,     &patience, &seeds,	   &quiet};
	while ((c = getopt(argc, argv, "a:t:n:l:r:m:p:k:w:S:s:T:qh")) != -1) {
		if (opt_stress_arm(c, optarg, &shared))
			continue;
		switch (c) {
		case 'a':
			name = optarg;
			break;
		case 'r':
			read_pct = (unsigned)opt_number("r", optarg, 0, 100);
			break;
		case 'k':
			kind = (unsigned)opt_choose("k", "kind", optarg, kind_names, 3);
			how = kind_how[kind];
			break;
		case 'w':
			opt_policy(optarg);
			break;
		case 'h':
			printf("usage: rwstress -a RWALGO[,RWALGO...] [-t THREADS(4)] [-n ITERS(2000)] [-l "
			       "LOCKS(1)]\n"
			       "                [-r READ_PCT(80)] [-m lock|try|timed|mix] [-p "
			       "PATIENCE_NS(20000)]\n"
			       "                [-k reader|writer|own] [-w spin|yield|park] [-S SPIN]\n"
			       "                [-s SEED(1)[,SEED...]] [-T SECONDS(0: none)] [-q]\n");
			return 0;
		default:
			opt_error(
			    "usage: rwstress -a RWALGO[,RWALGO...] [-t N] [-n N] [-l N] [-r PCT] [-m "
			    "MODE] [-p NS] [-k KIND] [-w WAIT] [-S SPIN] [-s SEED[,SEED...]] [-T SECONDS] "
			    "[-q]");
		}
	}
	if (optind != argc)
		opt_error("unexpected argument '%s'", argv[optind]);
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	char err[1400], one[128];
	if (!name)
		opt_error("-a RWALGO is required (valid: %s)", ls_rwalgo_names(err, sizeof err));
	enum { MAX_ALGOS = 128, MAX_SEEDS = 64 };
	char *given[MAX_ALGOS];
	uint64_t seedn[MAX_SEEDS];
	unsigned na = opt_list("a", name, given, MAX_ALGOS), ns = opt_seeds(seeds, seedn, MAX_SEEDS, seed);
	if (na == 1 && ns == 1) {
		seed = seedn[0];
		alarm(watchdog);
		return run_rw(given[0]);
	}
	/* Several runs: each in a child of its own (fork: a process composes
	 * a wrapper with one inner lock, rwlock.h; the pool's counts, the
	 * -inject build's seed and every lock's tunables start afresh), the
	 * names checked first without composing any. */
	for (unsigned i = 0; i < na; i++) {
		bool known = false;
		for (size_t k = 0; !known && ls_rwalgo_selectable(k, one, sizeof one); k++)
			known = !strcmp(one, given[i]);
		if (!known) {
			if (!ls_rwalgo_lookup(given[i], err, sizeof err))
				opt_error("-a: %s", err);
			opt_error("-a: unknown algorithm '%s'", given[i]);
		}
	}
	return opt_run_lists(given, na, seedn, ns, watchdog, run_seeded);
}
