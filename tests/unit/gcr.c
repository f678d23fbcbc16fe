/*
 * gcr.c - generic concurrency restriction (locks/wrap/gcr.c) around every
 * algorithm, under LOCKSWAP_WAIT=park (issue 20, item 3).
 *
 *   gcr -a ALGO|all [-x] [-p PERIOD] [-T SECONDS(60)] bound|readmit|timeout|trylock|misuse
 *   gcr-inject -a ALGO ... misuse-window
 *
 * The wrapper is composed around a counting double of ALGO (each algorithm
 * of `lockswap --names --cap lock` with -a all, one after the other in this
 * process), which records who is INSIDE the underlying lock: from the call
 * of its lock() until the call of its unlock(). Threads are driven one step
 * at a time, as in handoff.c: each holds the lock, once it has it, until it
 * is told to release, and a step ends when the lock has a holder and every
 * other thread sleeps in futex(2) (proctask.h). Nothing depends on speed:
 * every wait is for an event, bounded by the watchdog (SIGALRM: the phase is
 * printed, exit 1).
 *
 *   bound    LOCKSWAP_GCR_ACTIVE=2, approvals off: a holder and 5 threads
 *            that call lock(); at every step at most 2 threads are inside
 *            the underlying lock, until each has had it once. -x: the same
 *            without the wrapper, which must fail (6 inside).
 *   readmit  ACTIVE=2, PERIOD=-p (4): two threads take the lock over and
 *            over, each releasing only when told, so the active set never
 *            drains; X1, X2, X3 queue passive in that order. The k-th
 *            (k = 1..3) must enter the underlying lock after exactly k x
 *            PERIOD releases, not one before (FIFO, and the bound of
 *            gcr.c's header: (k+1) x PERIOD counting from k = 0), and then
 *            circulates with the others. LOCKSWAP_GCR_PERIOD=0 (no
 *            approvals) must fail: X1 starves.
 *   timeout  ACTIVE=1: with the lock held throughout, two timed waiters in
 *            the passive queue (the head times out first, then the other
 *            way round) and, with ACTIVE=2, one inside the underlying lock,
 *            return ETIMEDOUT, never before their deadline, and leave the
 *            wrapper's word as it was (no passive queue, the holder alone
 *            counted); then a timed waiter with a far deadline gets the
 *            lock when it is released.
 *   trylock  ACTIVE=1, a holder and a passive thread: trylock returns EBUSY
 *            at once (it never waits in the passive queue) and leaves the
 *            word as it was.
 *   misuse   (a tolerant base: tas) unlock of an unlocked lock, twice, and
 *            after a lock/unlock: the word stays 0 and the lock works.
 *   misuse-window  (build/unit/gcr-inject only, a tolerant base) ACTIVE=1:
 *            M's unlock of the unlocked lock stops between its decrement
 *            (the borrow is in the word) and its repair; A locks meanwhile,
 *            finds the set "full", queues passive and stops there; M
 *            repairs and returns; B takes the lock; A, the passive head,
 *            sleeps; B releases: A must get the lock, and the word end idle.
 *            (Reading the borrowed sign bit as PASSIVE, A did not set it,
 *            M's repair cleared it, B's release took the fast path and A
 *            slept for ever.) The stops are this file's ls_inject(), which
 *            replaces the inject build's (locks/common/inject.c): a thread
 *            that armed its gate stops at its next LS_INJECT() in gcr.c.
 *
 * White box: the checks read the wrapper word (LS_WRAP_WORD) with
 * gcr.c's encoding: ACTIVE in bits 0-15, APPROVED bit 30, PASSIVE bit 31.
 * Exit: 0 pass, 1 fail (a line says why), 2 usage.
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FAIL_PREFIX "gcr: FAIL "
#include "fail.h"
#include "lock.h"
#include "pool.h"
#include "proctask.h"
#include "wait.h"
#include "wrap/wrap.h"

#define W_ACTIVE 0xffffu
#define W_APPROVED (1u << 30)
#define W_PASSIVE (1u << 31)

static const struct ls_algo *real; /* the algorithm under test */
static const struct ls_algo *comp; /* dbl+gcr, or dbl alone (-x) */
static void *L;
static uint64_t *param_active, *param_period;
static const char *volatile phase = "start";
static char label[128];

/* ---- the counting double: ALGO, with who is inside ---- */

#define MAXT 8
static _Atomic int inside;
static _Atomic long releases;		  /* unlocks since the count was reset */
static _Atomic long entered_at[MAXT + 1]; /* releases when a thread first entered; -1 never */
static __thread int me = MAXT;		  /* MAXT: the main thread */

static void enter(void)
{
	atomic_fetch_add(&inside, 1);
	long never = -1;
	atomic_compare_exchange_strong(&entered_at[me], &never, atomic_load(&releases));
}

static void dbl_lock(void *s)
{
	enter();
	real->lock(s);
}

static int dbl_trylock(void *s)
{
	int r = real->trylock(s);
	if (r == 0)
		enter();
	return r;
}

static int dbl_timedlock(void *s, uint64_t deadline)
{
	enter();
	int r = real->timedlock ? real->timedlock(s, deadline) : ls_timedlock_fallback(real, s, deadline);
	if (r)
		atomic_fetch_sub(&inside, 1);
	return r;
}

static void dbl_unlock(void *s)
{
	atomic_fetch_sub(&inside, 1);
	atomic_fetch_add(&releases, 1);
	real->unlock(s);
}

static struct ls_algo dbl = {
    .name = "counted",
    .desc = "the algorithm under test, counting who is inside it",
    .lock = dbl_lock,
    .trylock = dbl_trylock,
    .timedlock = dbl_timedlock,
    .unlock = dbl_unlock,
};

/* ---- driven threads ---- */

struct worker {
	pthread_t t;
	int id;
	_Atomic pid_t tid;
	_Atomic int held, release, done, stop;
	bool circulate;	      /* take the lock again after each release, until stop */
	uint64_t patience_ns; /* timedlock with this patience; 0: lock() */
	_Atomic int result;
	_Atomic uint64_t deadline, returned;
	bool stop_once; /* stops at its first LS_INJECT() (see gate) */
	_Atomic int gate;
};
static bool stop_next; /* the next start()ed worker stops once */
static struct worker wk[MAXT];

static void nap(void)
{
	struct timespec ts = {0, 200000};
	nanosleep(&ts, NULL);
}

/* A thread's gate: 0 open; armed, the thread stops at its next LS_INJECT()
 * (1: stopped there) until it is 2. Only the inject build calls it. */
static __thread _Atomic int *gate;
#ifdef LS_FAULT_INJECT
void ls_inject(void)
{
	_Atomic int *g = gate;
	if (!g)
		return;
	gate = NULL;
	atomic_store(g, 1);
	while (atomic_load(g) != 2)
		nap();
}
#endif

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	me = w->id;
	atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
	if (w->stop_once)
		gate = &w->gate;
	do {
		if (w->patience_ns) {
			uint64_t d = ls_now_ns() + w->patience_ns;
			atomic_store(&w->deadline, d);
			int r = comp->timedlock(L, d);
			atomic_store(&w->returned, ls_now_ns());
			atomic_store(&w->result, r);
			if (r)
				break;
		} else {
			comp->lock(L);
		}
		atomic_store(&w->held, 1);
		while (!atomic_load(&w->release))
			nap();
		atomic_store(&w->release, 0);
		atomic_store(&w->held, 0);
		comp->unlock(L);
	} while (w->circulate && !atomic_load(&w->stop));
	atomic_store(&w->done, 1);
	return NULL;
}

static struct worker *start(int id, bool circulate, uint64_t patience_ns)
{
	struct worker *w = &wk[id];
	memset(w, 0, sizeof *w);
	w->id = id;
	w->circulate = circulate;
	w->patience_ns = patience_ns;
	w->stop_once = stop_next;
	stop_next = false;
	atomic_store(&w->result, -1);
	if (pthread_create(&w->t, NULL, worker_main, w))
		fail("%s: pthread_create", label);
	while (!atomic_load(&w->tid))
		nap();
	return w;
}

static bool asleep(struct worker *w)
{
	return atomic_load(&w->done) || atomic_load(&w->held) || proctask_in_futex(atomic_load(&w->tid));
}

/* A step has ended: someone holds the lock (main counts if it does), no
 * approval is pending, and every other started thread is asleep. */
static void settle(int n, bool main_holds)
{
	phase = "waiting for the threads to settle (a holder, the others asleep in futex)";
	for (;;) {
		bool ok = main_holds, quiet = !(atomic_load(LS_WRAP_WORD(L)) & W_APPROVED);
		for (int i = 0; i < n; i++) {
			ok |= atomic_load(&wk[i].held) != 0;
			quiet &= asleep(&wk[i]);
		}
		bool all_done = true;
		for (int i = 0; i < n; i++)
			all_done &= atomic_load(&wk[i].done) != 0;
		/* twice, a little apart: a thread between two sleeps is seen awake */
		if ((ok || all_done) && quiet) {
			nap();
			bool again = !(atomic_load(LS_WRAP_WORD(L)) & W_APPROVED);
			for (int i = 0; i < n; i++)
				again &= asleep(&wk[i]);
			if (again)
				return;
		}
		nap();
	}
}

/* The worker holding the lock (-1: none). */
static int holder(int n)
{
	for (int i = 0; i < n; i++)
		if (atomic_load(&wk[i].held))
			return i;
	return -1;
}

static void release(int i)
{
	atomic_store(&wk[i].release, 1);
	phase = "waiting for a holder to release";
	while (atomic_load(&wk[i].release))
		nap();
}

static void join_all(int n)
{
	for (int i = 0; i < n; i++)
		pthread_join(wk[i].t, NULL);
}

static uint32_t word(void)
{
	return atomic_load(LS_WRAP_WORD(L));
}

/* ---- the tests ---- */

static void test_bound(void)
{
	enum { N = 5, ACTIVE = 2 };
	*param_active = ACTIVE;
	*param_period = 0;
	comp->lock(L);
	for (int i = 0; i < N; i++)
		start(i, false, 0);
	settle(N, true);
	int got = 0, steps = 0;
	for (;;) {
		int in = atomic_load(&inside);
		if (in > ACTIVE)
			fail("%s: %d threads inside the underlying lock (the active set is %d)", label, in,
			     ACTIVE);
		int h = steps == 0 ? N : holder(N);
		if (h < 0)
			break;
		if (h == N)
			comp->unlock(L);
		else {
			release(h);
			got++;
		}
		steps++;
		settle(N, false);
	}
	join_all(N);
	if (got != N)
		fail("%s: %d of %d threads got the lock", label, got, N);
}

static void test_readmit(long p)
{
	enum { HOGS = 2, XS = 3, N = HOGS + XS };
	*param_active = 2;
	wk[0].id = 0;
	start(0, true, 0);
	phase = "waiting for the first hog to get the lock";
	while (!atomic_load(&wk[0].held))
		nap();
	start(1, true, 0);
	settle(2, false);
	for (int i = HOGS; i < N; i++) {
		start(i, true, 0);
		settle(i + 1, false);
		if (!(word() & W_PASSIVE))
			fail("%s: X%d is not passive (word 0x%x)", label, i - HOGS + 1, word());
	}
	atomic_store(&releases, 0);
	for (int i = 0; i <= MAXT; i++)
		atomic_store(&entered_at[i], -1);
	for (long r = 1; r <= (XS + 1) * p; r++) {
		int h = holder(N);
		if (h < 0)
			fail("%s: nobody holds the lock after %ld releases", label, r - 1);
		release(h);
		/* the approval of release k*p lets X_k in with no further
		 * release: wait for it; then the step settles */
		if (r % p == 0 && r / p <= XS) {
			int x = HOGS + (int)(r / p) - 1;
			phase = "waiting for the approved passive head to enter the underlying lock";
			while (atomic_load(&entered_at[x]) < 0)
				nap();
		}
		settle(N, false);
		for (int k = 1; k <= XS; k++) {
			long at = atomic_load(&entered_at[HOGS + k - 1]);
			if (r >= k * p && at != k * p)
				fail("%s: X%d entered the underlying lock at release %ld, expected %ld "
				     "(period %ld)",
				     label, k, at, k * p, p);
			if (r < k * p && at >= 0)
				fail("%s: X%d entered at release %ld, before its approval at %ld", label, k,
				     at, k * p);
		}
	}
	for (int i = 0; i < N; i++)
		atomic_store(&wk[i].stop, 1);
	for (int done = 0; !done;) {
		int h = holder(N);
		if (h >= 0)
			release(h);
		done = 1;
		for (int i = 0; i < N; i++)
			done &= atomic_load(&wk[i].done);
		nap();
	}
	join_all(N);
}

static void check_timed_out(struct worker *w, const char *who)
{
	int r = atomic_load(&w->result);
	if (r != ETIMEDOUT)
		fail("%s: %s returned %d, expected ETIMEDOUT", label, who, r);
	if (atomic_load(&w->returned) < atomic_load(&w->deadline))
		fail("%s: %s returned ETIMEDOUT %llu ns before its deadline", label, who,
		     (unsigned long long)(atomic_load(&w->deadline) - atomic_load(&w->returned)));
}

static void await_done(struct worker *w)
{
	while (!atomic_load(&w->done))
		nap();
	pthread_join(w->t, NULL);
}

static void test_timeout(void)
{
	*param_period = 0;
	/* the passive queue: head first, then the one behind it first */
	for (int order = 0; order < 2; order++) {
		*param_active = 1;
		comp->lock(L);
		struct worker *head = start(0, false, order ? 60000000 : 30000000);
		settle(1, true);
		struct worker *next = start(1, false, order ? 30000000 : 60000000);
		phase = "waiting, with the lock held, for both passive timed waiters to time out";
		await_done(order ? next : head);
		check_timed_out(order ? next : head,
				order ? "the passive thread behind the head" : "the passive head");
		await_done(order ? head : next);
		check_timed_out(order ? head : next,
				order ? "the passive head" : "the passive thread behind the head");
		if (word() != 1)
			fail("%s: the word is 0x%x after the passive timeouts, expected 1 (the holder)",
			     label, word());
		/* a far deadline: it gets the lock when the holder lets go */
		struct worker *far = start(2, false, 60000000000ull);
		settle(3, true);
		if (!(word() & W_PASSIVE))
			fail("%s: the timed waiter is not passive (word 0x%x)", label, word());
		comp->unlock(L);
		phase = "waiting for the passive timed waiter to get the lock";
		while (!atomic_load(&far->held))
			nap();
		release(2);
		await_done(far);
		if (word() != 0)
			fail("%s: the word is 0x%x at the end, expected 0", label, word());
	}
	/* inside the underlying lock */
	*param_active = 2;
	comp->lock(L);
	struct worker *in = start(3, false, 20000000);
	phase = "waiting, with the lock held, for the active timed waiter to time out";
	await_done(in);
	check_timed_out(in, "the timed waiter inside the underlying lock");
	if (word() != 1)
		fail("%s: the word is 0x%x after the active timeout, expected 1", label, word());
	comp->unlock(L);
	if (word() != 0)
		fail("%s: the word is 0x%x at the end, expected 0", label, word());
}

static void test_trylock(void)
{
	*param_active = 1;
	*param_period = 0;
	comp->lock(L);
	start(0, false, 0);
	settle(1, true);
	uint32_t before = word();
	phase = "trylock while the active set is full and a thread waits passive";
	int r = comp->trylock(L);
	if (r != EBUSY)
		fail("%s: trylock returned %d, expected EBUSY", label, r);
	if (word() != before || !(before & W_PASSIVE))
		fail("%s: the word went from 0x%x to 0x%x", label, before, word());
	comp->unlock(L);
	phase = "waiting for the passive thread to get the lock";
	while (!atomic_load(&wk[0].held))
		nap();
	release(0);
	join_all(1);
	if (comp->trylock(L) != 0)
		fail("%s: trylock of a free lock failed", label);
	comp->unlock(L);
	if (word() != 0)
		fail("%s: the word is 0x%x at the end, expected 0", label, word());
}

/* The lock still works after a misuse: lock, trylock EBUSY, unlock, idle. */
static void check_works(void)
{
	comp->lock(L);
	if (comp->trylock(L) != EBUSY)
		fail("%s: trylock of a held lock succeeded", label);
	comp->unlock(L);
	if (word() != 0)
		fail("%s: the word is 0x%x after lock/unlock", label, word());
}

static void test_misuse(void)
{
	*param_active = 1;
	for (int round = 0; round < 2; round++) {
		comp->unlock(L);
		comp->unlock(L);
		if (word() != 0)
			fail("%s: an unlock of an unlocked lock left the word 0x%x", label, word());
		check_works();
	}
}

/* M of misuse-window: one unlock of the unlocked lock, stopped at its gate. */
static void *misuser_main(void *arg)
{
	gate = arg;
	comp->unlock(L);
	return NULL;
}

static void await_gate(_Atomic int *g, const char *what)
{
	phase = what;
	while (atomic_load(g) != 1)
		nap();
}

static void test_misuse_window(void)
{
	*param_active = 1;
	*param_period = 0;
	_Atomic int mgate = 0;
	pthread_t m;
	if (pthread_create(&m, NULL, misuser_main, &mgate))
		fail("%s: pthread_create", label);
	await_gate(&mgate, "waiting for the unlock of the unlocked lock to stop after its decrement");
	if ((word() & W_ACTIVE) != W_ACTIVE)
		fail("%s: the stopped unlock left the word 0x%x, expected ACTIVE 0xffff", label, word());
	stop_next = true;
	struct worker *a = start(0, false, 0);
	await_gate(&a->gate, "waiting for A to queue passive while the borrow is in the word");
	atomic_store(&mgate, 2);
	pthread_join(m, NULL);
	struct worker *b = start(1, false, 0);
	phase = "waiting for B to take the lock";
	while (!atomic_load(&b->held))
		nap();
	atomic_store(&a->gate, 2);
	settle(2, false);
	if (holder(2) != 1)
		fail("%s: A holds the lock before B released it (word 0x%x)", label, word());
	if (!(word() & W_PASSIVE))
		fail("%s: A waits passive but the word 0x%x has no PASSIVE: B's release will not wake it",
		     label, word());
	release(1);
	phase = "waiting for the passive head A to get the lock once B released it";
	while (!atomic_load(&a->held))
		nap();
	release(0);
	join_all(2);
	if (word() != 0)
		fail("%s: the word is 0x%x at the end, expected 0", label, word());
	check_works();
}

static void on_alarm(int sig)
{
	(void)sig;
	char msg[512];
	int n = snprintf(msg, sizeof msg, "gcr: FAIL %s: watchdog fired in phase: %s\n", label, phase);
	if (write(1, msg, (size_t)n) < 0) {
	}
	_exit(1);
}

static uint64_t *param(const struct ls_algo *a, const char *env)
{
	for (const struct ls_param *p = a->params; p && p->env; p++)
		if (!strcmp(p->env, env))
			return p->value;
	return NULL;
}

/* The test on one algorithm, on a fresh state with the wrapper word before
 * it (as the shim lays out a pthread_mutex_t). */
/* The watchdog, armed again for each algorithm's run: a step waits for
 * threads to sleep, which beside busy loops takes a scheduling round, and
 * -a all runs 28 algorithms in turn (~3 s each beside three busy loops). */
static unsigned watchdog = 60;

static void run(const char *test, bool without, long period)
{
	static const struct ls_algo *composed;
	dbl.state_size = real->state_size;
	dbl.caps = real->caps;
	if (!composed) {
		char err[256];
		composed = ls_wrap_find("gcr")->wrap(&dbl, err, sizeof err);
		if (!composed)
			fail("cannot compose: %s", err);
		param_active = param(composed, "LOCKSWAP_GCR_ACTIVE");
		param_period = param(composed, "LOCKSWAP_GCR_PERIOD");
	}
	comp = without ? &dbl : composed;
	alarm(watchdog); /* per algorithm: -a all runs each in turn */
	snprintf(label, sizeof label, "%s %s%s", test, real->name, without ? " (no wrapper)" : "+gcr");
	size_t size = real->state_size > LS_INLINE_STATE ? LS_CACHELINE + real->state_size : 2 * LS_CACHELINE;
	char *block =
	    real->state_size > LS_INLINE_STATE ? ls_ext_alloc(size) : aligned_alloc(LS_CACHELINE, size);
	if (!block)
		fail("%s: no memory for the state", label);
	memset(block, 0, size);
	L = block + LS_CACHELINE;
	if (real->init)
		real->init(L);
	atomic_store(&inside, 0);
	for (int i = 0; i <= MAXT; i++)
		atomic_store(&entered_at[i], -1);
	/* the environment may override what each test sets (negative runs) */
	const char *ea = getenv("LOCKSWAP_GCR_ACTIVE"), *ep = getenv("LOCKSWAP_GCR_PERIOD");
	*param_period = (uint64_t)period;
	if (!strcmp(test, "bound"))
		test_bound();
	else if (!strcmp(test, "readmit")) {
		if (ep)
			*param_period = strtoull(ep, NULL, 10);
		if (ea)
			*param_active = strtoull(ea, NULL, 10);
		test_readmit(period);
	} else if (!strcmp(test, "timeout"))
		test_timeout();
	else if (!strcmp(test, "trylock"))
		test_trylock();
	else if (!strcmp(test, "misuse-window"))
		test_misuse_window();
	else
		test_misuse();
	if (real->destroy)
		real->destroy(L);
	if (real->state_size > LS_INLINE_STATE)
		ls_ext_free(block, size);
	else
		free(block);
	printf("gcr: OK %s\n", label);
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	bool without = false;
	long period = 4;
	int c;
	while ((c = getopt(argc, argv, "a:xp:T:")) != -1) {
		if (c == 'a')
			name = optarg;
		else if (c == 'x')
			without = true;
		else if (c == 'p')
			period = atol(optarg);
		else if (c == 'T')
			watchdog = (unsigned)atoi(optarg);
		else
			return 2;
	}
	const char *test = optind < argc ? argv[optind] : "";
	static const char *const tests[] = {"bound",   "readmit", "timeout",
					    "trylock", "misuse",  "misuse-window"};
	bool known = false;
	for (int i = 0; i < 6; i++)
		known |= !strcmp(test, tests[i]);
#ifndef LS_FAULT_INJECT
	if (!strcmp(test, "misuse-window")) {
		fprintf(stderr,
			"gcr: misuse-window stops threads at LS_INJECT(): run build/unit/gcr-inject\n");
		return 2;
	}
#endif
	if (!known || !name || period < 1 || period > 100 || watchdog < 1) {
		fprintf(stderr, "usage: gcr -a ALGO|all [-x] [-p PERIOD 1..100] [-T SECONDS] "
				"bound|readmit|timeout|trylock|misuse|misuse-window\n");
		return 2;
	}
	ls_wait_cfg.policy = LS_WAIT_PARK;
	signal(SIGALRM, on_alarm);
	if (!strcmp(name, "all")) {
		for (size_t i = 0; i < ls_algo_count(); i++) {
			real = ls_algo_at(i);
			if (!(real->caps & LS_CAP_PASSTHROUGH))
				run(test, without, period);
		}
		return 0;
	}
	real = ls_algo_find(name);
	if (!real || (real->caps & LS_CAP_PASSTHROUGH) || strchr(name, '+')) {
		char names[1024];
		fprintf(stderr, "gcr: -a: unknown lock '%s' (valid: all, %s)\n", name,
			ls_algo_names(names, sizeof names));
		return 2;
	}
	run(test, without, period);
	return 0;
}
