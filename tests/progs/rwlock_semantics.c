/*
 * rwlock_semantics - pthread_rwlock_* as glibc 2.36 gives it: static
 * initialisers, zeroed and copied rwlocks, readers sharing, EDEADLK for the
 * write holder, EBUSY, EINVAL (checked first, even when the lock is free),
 * ETIMEDOUT, EAGAIN past the reader limit, recursive reads under each kind
 * (pthread_rwlockattr_setkind_np), writer preference of the _NP kind, the
 * misuses glibc tolerates (unlock of an unheld rwlock, double unlocks, an
 * unlock by a thread that does not hold it, destroy of a held rwlock) and
 * process-shared rwlocks.
 *
 * An ordinary program: every case listed by `cases:` passes natively
 * (tests/rwlock.bats checks it). The `lockswap-cases:` line lists cases
 * that check what lockswap does better than glibc after a misuse (glibc
 * then leaves its reader count at -1 and every later writer waits for
 * ever); they fail natively, by design.
 *
 * Every word given runs in this one process, in order (one process per
 * algorithm and policy keeps the suite's budget): a case of either list,
 * or a set. `all` is every glibc case but eagain (slow), pshared (a fork)
 * and glibc-layout (glibc's own fields, for the passthrough);
 * `exclusive-ok` the same without the cases that need readers to share the
 * lock (the mutex-serialised mode); `own-ok` without the default kind's
 * reader preference (LOCKSWAP_RWPOLICY=algorithm). Among them, what a correct program
 * relies on of a lock's kind (issue 32): a default-kind lock admits a
 * reader while readers hold it and writers wait (reader-preference,
 * reader-waits-for-reader: glibc's tst-rwlock16), a timed writer keeps
 * readers out as an untimed one under the writer kind and lets them go on
 * when it gives up (timed-writer: tst-rwlock15), and under the default
 * kind lets readers pass (timed-writer-default).
 */
#include "check.h"

#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* A deadline that is reached quickly: 5 ms. Nothing else happens while a
 * waiter waits for it, and "not before the deadline" holds or fails
 * whatever its length (a lock without a timed path of its own polls until
 * then, a CPU's worth). */
#define SHORT (5 * MS)

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void init_kind(pthread_rwlock_t *l, int kind)
{
	pthread_rwlockattr_t a;
	CHECK_RC(pthread_rwlockattr_init(&a), 0);
	CHECK_RC(pthread_rwlockattr_setkind_np(&a, kind), 0);
	CHECK_RC(pthread_rwlock_init(l, &a), 0);
	CHECK_RC(pthread_rwlockattr_destroy(&a), 0);
}

/* What another thread gets from a try (undone if it succeeds). */
static void *tryrd_fn(void *p)
{
	int r = pthread_rwlock_tryrdlock(p);
	if (r == 0)
		CHECK_RC(pthread_rwlock_unlock(p), 0);
	return (void *)(intptr_t)r;
}
static void *trywr_fn(void *p)
{
	int r = pthread_rwlock_trywrlock(p);
	if (r == 0)
		CHECK_RC(pthread_rwlock_unlock(p), 0);
	return (void *)(intptr_t)r;
}
static int other_tryrd(pthread_rwlock_t *l)
{
	return in_thread(tryrd_fn, l);
}
static int other_trywr(pthread_rwlock_t *l)
{
	return in_thread(trywr_fn, l);
}

/* A thread that holds l (for writing or reading) until released. */
struct holder {
	pthread_rwlock_t *l;
	int write;
	atomic_int held, release;
	pid_t tid;
	pthread_t t;
	int rc;
};
static void *holder_fn(void *p)
{
	struct holder *h = p;
	h->tid = my_tid();
	h->rc = h->write ? pthread_rwlock_wrlock(h->l) : pthread_rwlock_rdlock(h->l);
	atomic_store_explicit(&h->held, 1, memory_order_release);
	await_at_least(&h->release, 1);
	if (h->rc == 0)
		h->rc = pthread_rwlock_unlock(h->l);
	return NULL;
}
/* Starts the holder; with wait_held, returns once it holds the lock. */
static void hold(struct holder *h, pthread_rwlock_t *l, int write, int wait_held)
{
	h->l = l;
	h->write = write;
	h->tid = 0;
	atomic_init(&h->held, 0);
	atomic_init(&h->release, 0);
	h->t = spawn(holder_fn, h);
	if (wait_held)
		await_at_least(&h->held, 1);
}
static void unhold(struct holder *h)
{
	atomic_store_explicit(&h->release, 1, memory_order_release);
	join(h->t);
	CHECK_RC(h->rc, 0);
}
/* A holder that is still waiting for the lock: it is blocked in it. */
static void await_blocked(struct holder *h)
{
	while (__atomic_load_n(&h->tid, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	if (!await_waiting(h->tid, 10000))
		FAIL("the %s thread never waited", h->write ? "writer" : "reader");
	CHECK_EQ(atomic_load_explicit(&h->held, memory_order_acquire), 0);
}

/* The basic behaviour of any usable rwlock: a write hold excludes
 * everyone, a read hold excludes writers; all returns 0 afterwards. */
static void usable(pthread_rwlock_t *l)
{
	CHECK_RC(pthread_rwlock_wrlock(l), 0);
	CHECK_RC(other_tryrd(l), EBUSY);
	CHECK_RC(other_trywr(l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	CHECK_RC(other_trywr(l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	CHECK_RC(other_trywr(l), 0);
	CHECK_RC(other_tryrd(l), 0);
}

/* ---- initialisation ---- */

static pthread_rwlock_t s_default = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t s_wnr = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static pthread_rwlock_t s_bss;

static void static_init(void)
{
	usable(&s_default);
	usable(&s_wnr);
	usable(&s_bss);
	pthread_rwlock_t *z = calloc(1, sizeof *z);
	usable(z);
	free(z);
	pthread_rwlock_t l;
	for (int k = 0; k < 3; k++) {
		init_kind(&l, k);
		usable(&l);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
	}
	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	usable(&l);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

/* An unlocked rwlock copied by value is a free rwlock of its own. */
static void copy(void)
{
	pthread_rwlock_t a, b;
	CHECK_RC(pthread_rwlock_init(&a, NULL), 0);
	CHECK_RC(pthread_rwlock_wrlock(&a), 0);
	CHECK_RC(pthread_rwlock_unlock(&a), 0);
	CHECK_RC(pthread_rwlock_rdlock(&a), 0);
	CHECK_RC(pthread_rwlock_unlock(&a), 0);
	memcpy(&b, &a, sizeof a);
	CHECK_RC(pthread_rwlock_wrlock(&b), 0);
	CHECK_RC(other_trywr(&a), 0); /* the original is not the copy */
	CHECK_RC(other_tryrd(&b), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(&b), 0);
	usable(&a);
	usable(&b);
	pthread_rwlock_t c = PTHREAD_RWLOCK_INITIALIZER, d = c;
	usable(&d);
}

/* Readers share (not under the mutex-serialised mode). */
static void share(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct holder h;
	hold(&h, &l, 0, 1);
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	CHECK_RC(other_tryrd(&l), 0);
	struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS);
	CHECK_RC(pthread_rwlock_timedrdlock(&l, &far), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	unhold(&h);
}

/* ---- errors ---- */

static void edeadlk(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS),
			farm = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	CHECK_RC(pthread_rwlock_wrlock(&l), 0);
	CHECK_RC(pthread_rwlock_rdlock(&l), EDEADLK);
	CHECK_RC(pthread_rwlock_wrlock(&l), EDEADLK);
	CHECK_RC(pthread_rwlock_timedrdlock(&l, &far), EDEADLK);
	CHECK_RC(pthread_rwlock_timedwrlock(&l, &far), EDEADLK);
	CHECK_RC(pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &farm), EDEADLK);
	CHECK_RC(pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &farm), EDEADLK);
	CHECK_RC(pthread_rwlock_tryrdlock(&l), EBUSY);
	CHECK_RC(pthread_rwlock_trywrlock(&l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	usable(&l);
}

static void einval(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct timespec bad[] = {{0, -1}, {0, 1000000000}, {1, 2000000000}};
	struct timespec ok = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	for (int round = 0; round < 2; round++) { /* free, then held by the caller */
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			CHECK_RC(pthread_rwlock_timedrdlock(&l, &bad[i]), EINVAL);
			CHECK_RC(pthread_rwlock_timedwrlock(&l, &bad[i]), EINVAL);
			CHECK_RC(pthread_rwlock_clockrdlock(&l, CLOCK_REALTIME, &bad[i]), EINVAL);
			CHECK_RC(pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &bad[i]), EINVAL);
		}
		static const clockid_t clocks[] = {CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
						   CLOCK_MONOTONIC_RAW,	     CLOCK_BOOTTIME,
						   CLOCK_REALTIME_COARSE,    42};
		for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
			CHECK_RC(pthread_rwlock_clockrdlock(&l, clocks[i], &ok), EINVAL);
			CHECK_RC(pthread_rwlock_clockwrlock(&l, clocks[i], &ok), EINVAL);
		}
		if (round == 0)
			CHECK_RC(pthread_rwlock_wrlock(&l), 0); /* EINVAL comes before EDEADLK */
	}
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	usable(&l);
}

static void etimedout(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct holder h;
	hold(&h, &l, 1, 1);
	struct timespec t;
	t = deadline_in(CLOCK_REALTIME, SHORT);
	CHECK_RC(pthread_rwlock_timedrdlock(&l, &t), ETIMEDOUT);
	CHECK_REACHED(CLOCK_REALTIME, t);
	t = deadline_in(CLOCK_REALTIME, SHORT);
	CHECK_RC(pthread_rwlock_timedwrlock(&l, &t), ETIMEDOUT);
	CHECK_REACHED(CLOCK_REALTIME, t);
	t = deadline_in(CLOCK_MONOTONIC, SHORT);
	CHECK_RC(pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &t), ETIMEDOUT);
	CHECK_REACHED(CLOCK_MONOTONIC, t);
	t = deadline_in(CLOCK_MONOTONIC, SHORT);
	CHECK_RC(pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &t), ETIMEDOUT);
	CHECK_REACHED(CLOCK_MONOTONIC, t);
	t = deadline_in(CLOCK_REALTIME, SHORT);
	CHECK_RC(pthread_rwlock_clockrdlock(&l, CLOCK_REALTIME, &t), ETIMEDOUT);
	CHECK_REACHED(CLOCK_REALTIME, t);
	struct timespec past = {0, 0}, negative = {-1, 0};
	CHECK_RC(pthread_rwlock_timedrdlock(&l, &past), ETIMEDOUT);
	CHECK_RC(pthread_rwlock_timedwrlock(&l, &past), ETIMEDOUT);
	CHECK_RC(pthread_rwlock_timedrdlock(&l, &negative), ETIMEDOUT);
	CHECK_RC(pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &negative), ETIMEDOUT);
	unhold(&h);
	/* a reader holds it: a writer times out */
	hold(&h, &l, 0, 1);
	t = deadline_in(CLOCK_REALTIME, SHORT);
	CHECK_RC(pthread_rwlock_timedwrlock(&l, &t), ETIMEDOUT);
	CHECK_REACHED(CLOCK_REALTIME, t);
	unhold(&h);
	/* a free lock is taken even with a deadline already past */
	CHECK_RC(pthread_rwlock_timedrdlock(&l, &past), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_timedwrlock(&l, &negative), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	usable(&l);
}

/* Released before the deadline, a timed waiter gets the lock. */
struct timed_waiter {
	pthread_rwlock_t *l;
	int write, clock;
	pid_t tid;
	int rc;
};
static void *timed_waiter_fn(void *p)
{
	struct timed_waiter *w = p;
	struct timespec t = deadline_in(CLOCK_MONOTONIC, FAR_NS), rt = deadline_in(CLOCK_REALTIME, FAR_NS);
	__atomic_store_n(&w->tid, my_tid(), __ATOMIC_RELEASE);
	if (w->clock)
		w->rc = w->write ? pthread_rwlock_clockwrlock(w->l, CLOCK_MONOTONIC, &t)
				 : pthread_rwlock_clockrdlock(w->l, CLOCK_MONOTONIC, &t);
	else
		w->rc =
		    w->write ? pthread_rwlock_timedwrlock(w->l, &rt) : pthread_rwlock_timedrdlock(w->l, &rt);
	if (w->rc == 0)
		w->rc = pthread_rwlock_unlock(w->l);
	return NULL;
}
static void timed_success(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	for (int k = 0; k < 4; k++) {
		struct timed_waiter w = {&l, k & 1, k >> 1, 0, -1};
		CHECK_RC(pthread_rwlock_wrlock(&l), 0);
		pthread_t t = spawn(timed_waiter_fn, &w);
		while (__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE) == 0)
			sched_yield();
		if (!await_waiting(w.tid, 10000))
			FAIL("the timed waiter never waited");
		CHECK_RC(pthread_rwlock_unlock(&l), 0);
		join(t);
		CHECK_RC(w.rc, 0);
	}
	usable(&l);
}

static void ebusy(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct holder h;
	hold(&h, &l, 1, 1);
	CHECK_RC(pthread_rwlock_tryrdlock(&l), EBUSY);
	CHECK_RC(pthread_rwlock_trywrlock(&l), EBUSY);
	unhold(&h);
	hold(&h, &l, 0, 1);
	CHECK_RC(pthread_rwlock_trywrlock(&l), EBUSY);
	unhold(&h);
	/* a reader that holds it, asking to write, waits for itself (glibc) */
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	CHECK_RC(pthread_rwlock_trywrlock(&l), EBUSY);
	struct timespec t = deadline_in(CLOCK_REALTIME, SHORT);
	CHECK_RC(pthread_rwlock_timedwrlock(&l, &t), ETIMEDOUT);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	usable(&l);
}

/* EAGAIN past glibc's reader limit, 2^28 - 1 holds (recursive, here). */
static void eagain(void)
{
	static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	const unsigned limit = (1u << 28) - 1;
	for (unsigned i = 0; i < limit; i++)
		if (pthread_rwlock_rdlock(&l) != 0)
			FAIL("rdlock %u of %u failed", i + 1, limit);
	struct timespec far = deadline_in(CLOCK_REALTIME, FAR_NS),
			farm = deadline_in(CLOCK_MONOTONIC, FAR_NS);
	CHECK_RC(pthread_rwlock_rdlock(&l), EAGAIN);
	CHECK_RC(pthread_rwlock_tryrdlock(&l), EAGAIN);
	CHECK_RC(pthread_rwlock_timedrdlock(&l, &far), EAGAIN);
	CHECK_RC(pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &farm), EAGAIN);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	CHECK_RC(pthread_rwlock_rdlock(&l), EAGAIN);
	CHECK_RC(other_trywr(&l), EBUSY);
}

/* ---- recursion and kinds ---- */

/* Default kind (and PREFER_WRITER_NP, the same in glibc): a reader that
 * holds the lock takes it again while a writer waits. */
static void recursive_kind(int kind)
{
	pthread_rwlock_t l;
	init_kind(&l, kind);
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	struct holder w;
	hold(&w, &l, 1, 0);
	await_blocked(&w);
	struct timespec t = deadline_in(CLOCK_REALTIME, FAR_NS);
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	CHECK_RC(pthread_rwlock_tryrdlock(&l), 0);
	CHECK_RC(pthread_rwlock_timedrdlock(&l, &t), 0);
	for (int i = 0; i < 3; i++)
		CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_EQ(atomic_load_explicit(&w.held, memory_order_acquire), 0); /* one hold left */
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	await_at_least(&w.held, 1); /* the writer gets it */
	unhold(&w);
	usable(&l);
}
static void recursive_default(void)
{
	recursive_kind(PTHREAD_RWLOCK_PREFER_READER_NP);
	recursive_kind(PTHREAD_RWLOCK_PREFER_WRITER_NP);
}

/* PREFER_WRITER_NONRECURSIVE_NP: while a writer waits, no reader gets in,
 * not even one that holds the lock already (glibc: a recursive rdlock
 * deadlocks, so a timed one times out). Static initialiser and attribute. */
static void nonrecursive_on(pthread_rwlock_t *l)
{
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	CHECK_RC(pthread_rwlock_rdlock(l), 0); /* no writer waits: recursion is fine */
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	struct holder w;
	hold(&w, l, 1, 0);
	await_blocked(&w);
	CHECK_RC(pthread_rwlock_tryrdlock(l), EBUSY);
	struct timespec t = deadline_in(CLOCK_REALTIME, SHORT);
	CHECK_RC(pthread_rwlock_timedrdlock(l, &t), ETIMEDOUT);
	CHECK_REACHED(CLOCK_REALTIME, t);
	CHECK_RC(other_tryrd(l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	await_at_least(&w.held, 1);
	CHECK_RC(other_tryrd(l), EBUSY);
	unhold(&w);
	usable(l);
}
static void nonrecursive(void)
{
	nonrecursive_on(&s_wnr);
	pthread_rwlock_t l;
	init_kind(&l, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	nonrecursive_on(&l);
}

/* glibc's default: a new reader passes a waiting writer (every lockswap
 * algorithm whose readers share the lock does the same for a default-kind
 * lock: rwlock.h, PREFERENCE). */
static void reader_preference(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	struct holder w;
	hold(&w, &l, 1, 0);
	await_blocked(&w);
	CHECK_RC(other_tryrd(&l), 0);
	struct holder r; /* and a blocking one, which then holds beside main */
	hold(&r, &l, 0, 1);
	unhold(&r);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	await_at_least(&w.held, 1);
	unhold(&w);
}

/* A reader that holds a default-kind lock waits, through a condvar, for a
 * reader of another thread to take it too, while writers keep asking for
 * it (the pattern of glibc's tst-rwlock16): the second reader must get in,
 * or both wait for ever. 20 rounds: in each the writers, which ask for the
 * lock all the while, are queued behind the first reader well before the
 * second (a thread start later) asks; they busy the CPUs for the whole
 * case, so more rounds cost and find nothing more. */
struct rr {
	pthread_rwlock_t *l;
	pthread_mutex_t m;
	pthread_cond_t cv;
	int in; /* under m: the second reader holds the lock */
	atomic_int stop;
};
static void *rr_writer(void *p)
{
	struct rr *x = p;
	while (!atomic_load_explicit(&x->stop, memory_order_acquire)) {
		CHECK_RC(pthread_rwlock_wrlock(x->l), 0);
		CHECK_RC(pthread_rwlock_unlock(x->l), 0);
	}
	return NULL;
}
static void *rr_second(void *p)
{
	struct rr *x = p;
	CHECK_RC(pthread_rwlock_rdlock(x->l), 0);
	CHECK_RC(pthread_mutex_lock(&x->m), 0);
	x->in = 1;
	CHECK_RC(pthread_cond_signal(&x->cv), 0);
	CHECK_RC(pthread_mutex_unlock(&x->m), 0);
	CHECK_RC(pthread_rwlock_unlock(x->l), 0);
	return NULL;
}
static void reader_waits_for_reader(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct rr x = {.l = &l, .m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	pthread_t w[2];
	for (int i = 0; i < 2; i++)
		w[i] = spawn(rr_writer, &x);
	for (int round = 0; round < 20; round++) {
		CHECK_RC(pthread_rwlock_rdlock(&l), 0);
		CHECK_RC(pthread_mutex_lock(&x.m), 0);
		x.in = 0;
		pthread_t t = spawn(rr_second, &x);
		while (!x.in)
			CHECK_RC(pthread_cond_wait(&x.cv, &x.m), 0);
		CHECK_RC(pthread_mutex_unlock(&x.m), 0);
		CHECK_RC(pthread_rwlock_unlock(&l), 0);
		join(t);
	}
	atomic_store_explicit(&x.stop, 1, memory_order_release);
	for (int i = 0; i < 2; i++)
		join(w[i]);
	usable(&l);
}

/* A timed writer waiting for a reader keeps new readers out as an untimed
 * one does, under the writer kind (not under the default kind), and gets
 * the lock when the reader leaves; one that gives up lets the readers it
 * kept out in, beside the reader that still holds the lock (the pattern of
 * glibc's tst-rwlock15). */
struct tw {
	pthread_rwlock_t *l;
	int64_t in_ns;
	pid_t tid;
	int rc;
};
static void *tw_fn(void *p)
{
	struct tw *t = p;
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, t->in_ns);
	__atomic_store_n(&t->tid, my_tid(), __ATOMIC_RELEASE);
	t->rc = pthread_rwlock_clockwrlock(t->l, CLOCK_MONOTONIC, &dl);
	if (t->rc == 0)
		CHECK_RC(pthread_rwlock_unlock(t->l), 0);
	else if (t->rc == ETIMEDOUT)
		CHECK_REACHED(CLOCK_MONOTONIC, dl);
	return NULL;
}
static void timed_writer_on(pthread_rwlock_t *l, int writer_kind)
{
	/* far deadline: it waits for main, and then gets the lock */
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	struct tw t = {l, FAR_NS, 0, -1};
	pthread_t th = spawn(tw_fn, &t);
	while (__atomic_load_n(&t.tid, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	if (!await_waiting(t.tid, 10000))
		FAIL("the timed writer never waited");
	struct holder r;
	if (writer_kind) {
		CHECK_RC(other_tryrd(l), EBUSY);
		hold(&r, l, 0, 0);
		await_blocked(&r);
	} else {
		CHECK_RC(other_tryrd(l), 0);
		hold(&r, l, 0, 1); /* beside main, the writer waiting */
		unhold(&r);
	}
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	join(th);
	CHECK_RC(t.rc, 0);
	if (writer_kind)
		unhold(&r);
	/* short deadline: it gives up while main reads; the reader behind it
	 * gets in beside main */
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	struct tw t2 = {l, SHORT, 0, -1};
	th = spawn(tw_fn, &t2);
	while (__atomic_load_n(&t2.tid, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	hold(&r, l, 0, 1); /* returns once it holds: main still does */
	join(th);
	CHECK_RC(t2.rc, ETIMEDOUT);
	unhold(&r);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	CHECK_RC(other_trywr(l), 0); /* nothing left behind */
	usable(l);
}
static void timed_writer(void)
{
	pthread_rwlock_t l;
	init_kind(&l, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	timed_writer_on(&l, 1);
	timed_writer_on(&s_wnr, 1);
}
static void timed_writer_default(void)
{
	pthread_rwlock_t d = PTHREAD_RWLOCK_INITIALIZER;
	timed_writer_on(&d, 0);
}

/* A timed acquisition that gives up leaves nothing behind. */
static void timeout_clean(void)
{
	for (int kind = 0; kind < 3; kind += 2) {
		pthread_rwlock_t l;
		init_kind(&l, kind);
		struct holder r;
		hold(&r, &l, 0, 1);
		struct timespec t = deadline_in(CLOCK_REALTIME, SHORT);
		CHECK_RC(pthread_rwlock_timedwrlock(&l, &t), ETIMEDOUT);
		CHECK_RC(other_tryrd(&l), 0); /* the writer that gave up keeps no reader out */
		unhold(&r);
		CHECK_RC(other_trywr(&l), 0);
		hold(&r, &l, 1, 1);
		t = deadline_in(CLOCK_MONOTONIC, SHORT);
		CHECK_RC(pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &t), ETIMEDOUT);
		t = deadline_in(CLOCK_MONOTONIC, SHORT);
		CHECK_RC(pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &t), ETIMEDOUT);
		unhold(&r);
		usable(&l);
	}
}

/* ---- misuse glibc tolerates (issue 25) ---- */

static void unlock_unheld(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(other_tryrd(&l), 0);
}

static void double_unlock_read(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(other_tryrd(&l), 0);
}

/* (glibc's read holds no longer keep writers out afterwards.) */
static void double_unlock_write(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_wrlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_wrlock(&l), 0);
	CHECK_RC(other_tryrd(&l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(other_tryrd(&l), 0);
}

/* An unlock by a thread that does not hold the write lock: glibc takes it
 * as a read unlock, returns 0, and the writer still holds the lock. */
static void *unlock_fn2(void *p)
{
	return (void *)(intptr_t)pthread_rwlock_unlock(p);
}
static void unlock_foreign_write(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_wrlock(&l), 0);
	CHECK_RC(in_thread(unlock_fn2, &l), 0);
	CHECK_RC(other_tryrd(&l), EBUSY);
	CHECK_RC(other_trywr(&l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(other_tryrd(&l), 0);
}

/* glibc's destroy does nothing: a held rwlock goes on working, and a
 * destroyed one can be used again (or initialised again). */
static void destroy(void)
{
	pthread_rwlock_t l;
	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	CHECK_RC(pthread_rwlock_wrlock(&l), 0);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
	CHECK_RC(other_tryrd(&l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
	CHECK_RC(other_trywr(&l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
	usable(&l);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	usable(&l);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

/* ---- process-shared: glibc's, across a fork ---- */

static void pshared(void)
{
	pthread_rwlock_t *l =
	    mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(l != MAP_FAILED);
	pthread_rwlockattr_t a;
	CHECK_RC(pthread_rwlockattr_init(&a), 0);
	CHECK_RC(pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	CHECK_RC(pthread_rwlock_init(l, &a), 0);
	CHECK_RC(pthread_rwlock_wrlock(l), 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* held by the parent: busy here; then a blocking lock that
		 * only the parent's unlock can end (a wake across processes) */
		if (pthread_rwlock_tryrdlock(l) != EBUSY || pthread_rwlock_trywrlock(l) != EBUSY)
			_exit(3);
		if (pthread_rwlock_wrlock(l) != 0)
			_exit(4);
		pthread_rwlock_unlock(l);
		_exit(0);
	}
	/* wait until the child sleeps in its wrlock, then release */
	if (!await_child_sleeping(pid, 10000))
		FAIL("the child never slept in pthread_rwlock_wrlock");
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	usable(l);
	CHECK_RC(pthread_rwlock_destroy(l), 0);
	munmap(l, sizeof *l);
}

/* ---- many read holds at once, released out of order ---- */

static void many_held(void)
{
	enum { N = 300 };
	pthread_rwlock_t *l = calloc(N, sizeof *l);
	CHECK(l);
	for (int i = 0; i < N; i++) {
		CHECK_RC(pthread_rwlock_rdlock(&l[i]), 0);
		if (i % 3 == 0)
			CHECK_RC(pthread_rwlock_rdlock(&l[i]), 0); /* recursive */
	}
	for (int i = 0; i < N; i += 37)
		CHECK_RC(other_trywr(&l[i]), EBUSY);
	/* release in a scrambled order: i * 7 mod N visits every i (gcd 1) */
	for (int k = 0; k < N; k++) {
		int i = (k * 7) % N;
		CHECK_RC(pthread_rwlock_unlock(&l[i]), 0);
		if (i % 3 == 0) {
			CHECK_RC(other_trywr(&l[i]), EBUSY);
			CHECK_RC(pthread_rwlock_unlock(&l[i]), 0);
		}
		CHECK_RC(other_trywr(&l[i]), 0);
	}
	free(l);
}

/* ---- exclusion under contention ---- */

struct mixed {
	pthread_rwlock_t *l;
	long counter;
	atomic_uint occ; /* readers, | 1 << 31 for a writer */
	int iters;	 /* 4000 a thread, sized (check.h) */
};
static void *mixed_fn(void *p)
{
	struct mixed *m = p;
	unsigned x = (unsigned)(uintptr_t)&x | 1;
	for (int i = 0; i < m->iters; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		if (x % 8 == 0) {
			CHECK_RC(pthread_rwlock_wrlock(m->l), 0);
			if (atomic_fetch_or(&m->occ, 1u << 31))
				FAIL("a writer beside someone");
			long v = m->counter;
			__asm__ __volatile__("" ::: "memory");
			m->counter = v + 1;
			atomic_fetch_and(&m->occ, ~(1u << 31));
		} else {
			CHECK_RC(pthread_rwlock_rdlock(m->l), 0);
			if (atomic_fetch_add(&m->occ, 1) & (1u << 31))
				FAIL("a reader beside a writer");
			atomic_fetch_sub(&m->occ, 1);
		}
		CHECK_RC(pthread_rwlock_unlock(m->l), 0);
	}
	return NULL;
}
static void exclusion(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct mixed m = {.l = &l, .iters = sized(4000)};
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		t[i] = spawn(mixed_fn, &m);
	for (int i = 0; i < 4; i++)
		join(t[i]);
	usable(&l);
}

/* glibc's own rwlock is at work: its reader count (units of 8) and its
 * write-phase bits are where glibc 2.36 keeps them. */
static void glibc_layout(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	CHECK_EQ(l.__data.__readers, 8);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_wrlock(&l), 0);
	CHECK_EQ(l.__data.__readers & 3, 3);
	CHECK_EQ(l.__data.__cur_writer, my_tid());
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
}

/* ---- lockswap: better than glibc after a misuse (fail natively) ---- */

static void ls_unheld_writer(void)
{
	unlock_unheld();
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	usable(&l);
}

static void ls_double_read_writer(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	usable(&l);
}

static void ls_double_write_usable(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_wrlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	usable(&l);
}

static void ls_foreign_write_writer(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_wrlock(&l), 0);
	CHECK_RC(in_thread(unlock_fn2, &l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	usable(&l);
}

/* A read lock unlocked by another thread: lockswap ignores that unlock
 * (glibc releases the hold); the holder's own unlock releases it. */
static void ls_foreign_read(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_rdlock(&l), 0);
	CHECK_RC(in_thread(unlock_fn2, &l), 0);
	CHECK_RC(other_trywr(&l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	usable(&l);
}

/* Unlocks too many by a writer whose unlock handed the lock to a blocked
 * reader (write = 1), and by a reader whose unlock handed it to a blocked
 * writer (write = 0): they change nothing (glibc takes each as a read
 * unlock, and releases the new holder's hold or drives its reader count
 * below zero). */
static void handover(int write)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(write ? pthread_rwlock_wrlock(&l) : pthread_rwlock_rdlock(&l), 0);
	struct holder h;
	hold(&h, &l, !write, 0);
	await_blocked(&h);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	await_at_least(&h.held, 1);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	/* the new holder still holds it */
	CHECK_RC(write ? other_trywr(&l) : other_tryrd(&l), EBUSY);
	unhold(&h);
	CHECK_RC(other_trywr(&l), 0); /* free again (glibc: its count is below zero) */
	usable(&l);
}

static void ls_handover_write(void)
{
	handover(1);
}

static void ls_handover_read(void)
{
	handover(0);
}

/* A waiter that is asynchronously cancelable is cancelled inside rdlock
 * or wrlock: it goes, and the lock works fully afterwards (under glibc a
 * cancelled reader stays counted and later writers wait for ever). */
static void *async_waiter_fn(void *p)
{
	struct holder *h = p;
	CHECK_RC(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL), 0);
	h->tid = my_tid();
	if (h->write)
		pthread_rwlock_wrlock(h->l);
	else
		pthread_rwlock_rdlock(h->l);
	FAIL("the cancelled waiter got the lock");
}
static void ls_async_cancel(void)
{
	for (int held_write = 0; held_write < 2; held_write++)
		for (int w = 0; w < 2; w++) {
			if (!held_write && !w)
				continue; /* a reader beside a reader does not wait */
			pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
			CHECK_RC(held_write ? pthread_rwlock_wrlock(&l) : pthread_rwlock_rdlock(&l), 0);
			struct holder h = {.l = &l, .write = w};
			pthread_t t = spawn(async_waiter_fn, &h);
			while (__atomic_load_n(&h.tid, __ATOMIC_ACQUIRE) == 0)
				sched_yield();
			if (!await_waiting(h.tid, 10000))
				FAIL("the waiter never waited");
			CHECK_RC(pthread_cancel(t), 0);
			CHECK(join(t) == PTHREAD_CANCELED);
			CHECK_RC(pthread_rwlock_unlock(&l), 0);
			struct timespec dl = deadline_in(CLOCK_MONOTONIC, 1000 * MS);
			CHECK_RC(pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &dl), 0);
			CHECK_RC(pthread_rwlock_unlock(&l), 0);
			usable(&l);
		}
}

static const struct test_case glibc_cases[] = {
    {"static-init", static_init},
    {"copy", copy},
    {"share", share},
    {"edeadlk", edeadlk},
    {"einval", einval},
    {"etimedout", etimedout},
    {"timed-success", timed_success},
    {"ebusy", ebusy},
    {"recursive-default", recursive_default},
    {"nonrecursive", nonrecursive},
    {"reader-preference", reader_preference},
    {"reader-waits-for-reader", reader_waits_for_reader},
    {"timed-writer", timed_writer},
    {"timed-writer-default", timed_writer_default},
    {"timeout-clean", timeout_clean},
    {"unlock-unheld", unlock_unheld},
    {"double-unlock-read", double_unlock_read},
    {"double-unlock-write", double_unlock_write},
    {"unlock-foreign-write", unlock_foreign_write},
    {"destroy", destroy},
    {"pshared", pshared},
    {"many-held", many_held},
    {"exclusion", exclusion},
    {"eagain", eagain},
    {"glibc-layout", glibc_layout},
    {NULL, NULL},
};

static const struct test_case ls_cases[] = {
    {"lockswap-unheld-writer", ls_unheld_writer},
    {"lockswap-double-read-writer", ls_double_read_writer},
    {"lockswap-double-write-usable", ls_double_write_usable},
    {"lockswap-foreign-write-writer", ls_foreign_write_writer},
    {"lockswap-foreign-read", ls_foreign_read},
    {"lockswap-async-cancel", ls_async_cancel},
    {"lockswap-handover-write", ls_handover_write},
    {"lockswap-handover-read", ls_handover_read},
    {NULL, NULL},
};

/* Run in `all` (every case but the slow eagain, the fork of pshared and
 * glibc's own layout), in `exclusive-ok` (also without the cases that
 * need readers to share the lock: the mutex-serialised mode admits one
 * reader at a time, by design) and in `own-ok` (`all` without the cases
 * of the default kind's reader preference, which LOCKSWAP_RWPOLICY=algorithm
 * trades for the algorithm's own policy). */
static bool in_all(const char *n, bool exclusive, bool own)
{
	static const char *const out[] = {"eagain", "pshared", "glibc-layout"};
	static const char *const prefer[] = {"reader-preference", "reader-waits-for-reader",
					     "timed-writer-default"};
	static const char *const shared[] = {"share", "nonrecursive", "timeout-clean", "timed-writer"};
	for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
		if (!strcmp(n, out[i]))
			return false;
	for (size_t i = 0; (exclusive || own) && i < sizeof prefer / sizeof prefer[0]; i++)
		if (!strcmp(n, prefer[i]))
			return false;
	for (size_t i = 0; exclusive && i < sizeof shared / sizeof shared[0]; i++)
		if (!strcmp(n, shared[i]))
			return false;
	return true;
}

static bool is_set(const char *w)
{
	return !strcmp(w, "all") || !strcmp(w, "exclusive-ok") || !strcmp(w, "own-ok");
}

/* The case named w, of either table, or NULL. */
static const struct test_case *find_case(const char *w)
{
	for (const struct test_case *c = glibc_cases; c->name; c++)
		if (!strcmp(w, c->name))
			return c;
	for (const struct test_case *c = ls_cases; c->name; c++)
		if (!strcmp(w, c->name))
			return c;
	return NULL;
}

/* Each word given, a set (all, exclusive-ok, own-ok) or a case of either
 * table, in order, in this one process (a failed check names its file and
 * line, and so its case); every word is known before any runs. */
int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "lockswap-cases:");
		for (const struct test_case *c = ls_cases; c->name; c++)
			fprintf(stderr, " %s", c->name);
		fputc('\n', stderr);
		return run_case(glibc_cases, argc, argv);
	}
	for (int i = 1; i < argc; i++)
		if (!is_set(argv[i]) && !find_case(argv[i]))
			return run_case(glibc_cases, 2, (char *[]){argv[0], argv[i], NULL});
	for (int i = 1; i < argc; i++) {
		if (!is_set(argv[i])) {
			find_case(argv[i])->fn();
			continue;
		}
		bool excl = !strcmp(argv[i], "exclusive-ok"), own = !strcmp(argv[i], "own-ok");
		for (const struct test_case *c = glibc_cases; c->name; c++)
			if (in_all(c->name, excl, own))
				c->fn();
	}
	return 0;
}
