/*
 * after_release.c - once unlock has made the lock available, the unlocker
 * touches neither the lock's memory nor its out-of-line block (issue 26,
 * locks/lock.h "After the release"; issue 25 item 2 for reader-writer locks
 * and spinlocks, locks/rwlock/rwlock.h); and trylock of a free lock is
 * never EBUSY for want of a step an unlocker has still to take.
 *
 *   after_release [-f mutex|rwlock] [-a ALGO[,ALGO...]|all|spin] [-m MUTEX]
 *                 [-w spin|yield|park|all] [-W SECONDS] [-N]
 *
 * -f mutex (the default): lock.h's algorithms, the mutex family's (-a all)
 * or the spinlock family's (-a spin: those that fit 4 bytes and the
 * spin-only ones; a name of either). -f rwlock: rwlock.h's, any name
 * `lockswap --names rwlock` prints (-a all: every base algorithm; a
 * NAME+WRAPPER composition alone, as a process composes a wrapper once),
 * `mutex` over -m's lock (default mcs; not one with per-cluster lines).
 *
 * Links build/liblocks-inject.a (mk/unlock.mk): the unlocker under test, U,
 * stops at LS_POINT_RELEASED, right after its release store. Meanwhile the
 * other threads of the scenario take the lock in turn and release it (a
 * waiter asleep for a wake-up that U has still to make is woken by signals
 * instead: every waiting loop re-checks after an interrupted futex wait),
 * then main takes it with trylock (trywrlock: it must succeed, the lock is
 * free), unlocks, destroys it and frees its memory: the page of an inline
 * state is unmapped, so any later access faults; an out-of-line block (the
 * state of alock, ptl, cal, cal-fp, clh-tp, or of an rwlock that does not
 * fit 24 bytes, as the shim keeps it, or the per-cluster lines of c-bo-mcs,
 * c-tkt-tkt, hclh, hmcs, c-rw-wp) goes back to the pool and is either
 * filled with a pattern of non-canonical pointers (a late read of a
 * pointer faults, a late write changes the pattern) or reused at once by a
 * fresh lock (a late write changes its bytes; the fresh lock must work).
 * Only then is U let go; it must return, and the memory must be as it was.
 *
 * -N: the same, with no destroy (issue 30: C++'s std::mutex never calls
 * it; C programs free a mutex without it). The lock's page is unmapped
 * while U is stopped; an out-of-line block is attached to the lock's word
 * in that page, as the shim attaches it; then the pool looks for blocks of
 * locks that are gone (ls_ext_scan, pool.h "Reclaiming") and must reclaim
 * the block and the lines of the unmapped lock (its reclaim function runs
 * the algorithm's destroy on the state, as the shim's does), which are
 * then filled with the pattern or reused by a fresh lock (whose page may
 * well be mapped at the unmapped one's address). *
 * Scenarios, one thread per token, in queue order: a role (U the unlocker
 * under test, P a holder before it, W a waiter behind it), for rwlocks a
 * mode (r read, w write), and a cluster (LOCKSWAP_CLUSTER=thread:4/2
 * semantics: 4 clusters in 2 groups, for the hierarchical locks; others
 * ignore it). The first token takes the lock, each next one starts once
 * the previous one waits (spins: LS_POINT_WAITING; under park, sleeps:
 * LS_POINT_PARKING) or holds (a reader beside readers), and once all wait
 * the holders release: each after the holders it found when it got the
 * lock, except U, which releases at once. LOCKSWAP_COHORT_PASSES (and
 * hmcs's group bound) is 1, so that U meets the pass bound; the
 * hierarchical locks run with their fast path on and off. "barge" (the
 * barging mutexes, under park): W has slept, been woken once (shfl's head
 * then disables stealing) and sleeps again when U releases; a trylock at
 * U's stop must succeed: the lock is free.
 *
 * Output: one line per algorithm and policy ("after_release: OK algo=...
 * wait=... runs=N") and exit 0; "after_release: FAIL ..." and exit 1 (a
 * fault, a changed byte, a trylock EBUSY, a leaked node, or the watchdog);
 * bad usage: one line, exit 2.
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
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hier/hier.h"
#include "hier/topo.h"
#include "lock.h"
#include "pool.h"
#include "rwlock/rwlock.h"
#include "wait.h"

#include "fail.h"
#define OPT_PROG "after_release"
#include "opts.h"

#define MAXT 4
#define PATTERN 0xa5

enum role { MAIN, UNL, OTHER };

/* ---- the lock under test: a mutex or spinlock (lock.h), or an rwlock ---- */

static const struct ls_algo *algo;     /* -f mutex */
static const struct ls_rwalgo *rwalgo; /* -f rwlock */

static const char *lock_name(void)
{
	return rwalgo ? rwalgo->name : algo ? algo->name : "?";
}

static size_t state_size(void)
{
	return rwalgo ? rwalgo->state_size : algo->state_size;
}

static bool inline_state(void)
{
	return state_size() <= (rwalgo ? LS_RW_INLINE_STATE : LS_INLINE_STATE);
}

static bool hier(void)
{
	return rwalgo ? (rwalgo->caps & LS_RWCAP_HIER) != 0 : (algo->caps & LS_CAP_HIER) != 0;
}

/* Where the lock keeps its per-cluster lines (hier.h), or -1: the
 * hierarchical mutexes but hbo and cna, which keep none; c-rw-wp, also
 * behind a wrapper's word (c-rw-wp+bravo: bravo's 8 bytes, rwlock.h); not
 * the mutex-serialised mode (main refuses a mutex with lines for it). */
static long lines_at(void)
{
	if (rwalgo) {
		if (!(rwalgo->caps & LS_RWCAP_HIER) || !strncmp(rwalgo->name, "mutex", 5))
			return -1;
		return ((rwalgo->caps & LS_RWCAP_WRAPPER) ? 8 : 0) + LS_HIER_LINES_AT;
	}
	return (algo->caps & LS_CAP_HIER) && strcmp(algo->name, "hbo") && strcmp(algo->name, "cna")
		   ? LS_HIER_LINES_AT
		   : -1;
}

static void x_init(void *st)
{
	if (rwalgo && rwalgo->init)
		rwalgo->init(st);
	else if (!rwalgo && algo->init)
		algo->init(st);
}

static void x_destroy(void *st)
{
	if (rwalgo && rwalgo->destroy)
		rwalgo->destroy(st);
	else if (!rwalgo && algo->destroy)
		algo->destroy(st);
}

/* Takes the lock (write: for writing); *token: a read hold's token. */
static void x_lock(void *st, bool write, void **token)
{
	*token = NULL;
	if (!rwalgo)
		algo->lock(st);
	else if (write)
		rwalgo->wrlock(st, 0);
	else if (rwalgo->rdlock(st, 0, token))
		fail("rdlock failed");
}

static void x_unlock(void *st, bool write, void *token)
{
	if (!rwalgo)
		algo->unlock(st);
	else if (write)
		rwalgo->wrunlock(st);
	else
		rwalgo->rdunlock(st, token);
}

/* trylock, trywrlock for an rwlock: 0 or EBUSY. */
static int x_trylock(void *st)
{
	return rwalgo ? rwalgo->trywrlock(st, 0) : algo->trylock(st);
}

/* ---- the scenario being run ---- */

struct thr {
	char role; /* 'U', 'P', 'W' */
	bool write;
	unsigned cluster;
	pthread_t t;
	_Atomic pid_t tid;
	_Atomic int waiting, parked, done, got;
};

static const char *wait_name, *scen_name, *mem_name;
static bool no_destroy;	  /* -N */
static void *L;		  /* the lock's state */
static char *page;	  /* inline: the mapped page that holds L */
static char *block;	  /* out of line: the shim's block (header + state) */
static size_t block_size; /* ... and its size */
static char *lines;	  /* hierarchical: the lock's lines block */
static size_t lines_size; /* ... and its size */
static struct thr th[MAXT];
static int nth;
static bool barge;
#define WRITER (1u << 30)
static _Atomic unsigned occupancy; /* readers inside, | WRITER */

static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER; /* not preloaded: glibc's */
static pthread_cond_t ev_cv = PTHREAD_COND_INITIALIZER;
static unsigned events;
enum { EV_GO = 1, EV_PAUSED = 2, EV_RESUME = 4, EV_UDONE = 8 };
static const char *volatile where_u = "not started", *volatile where_main = "starting";

static __thread int my = -1; /* index in th[], -1: main or a helper */
static __thread enum role role = OTHER;
static _Atomic int u_paused_once;

static void on_alarm(int sig)
{
	(void)sig;
	char msg[1024], ts[256] = "";
	size_t k = 0;
	for (int i = 0; i < nth && k < sizeof ts; i++)
		k += (size_t)snprintf(ts + k, sizeof ts - k, "%s%c%s%u:%s", i ? " " : "", th[i].role,
				      rwalgo ? (th[i].write ? "w" : "r") : "", th[i].cluster,
				      atomic_load(&th[i].done)	    ? "done"
				      : atomic_load(&th[i].got)	    ? "holds or releases"
				      : atomic_load(&th[i].parked)  ? "asleep"
				      : atomic_load(&th[i].waiting) ? "waiting"
								    : "started");
	int n = snprintf(msg, sizeof msg,
			 "after_release: FAIL algo=%s wait=%s scenario=\"%s\" memory=%s: watchdog expired; "
			 "unlocker: %s; main: %s; threads: %s\n",
			 lock_name(), wait_name, scen_name, mem_name, where_u, where_main, ts);
	if (write(1, msg, (size_t)n) < 0) {
	}
	_exit(1);
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	char msg[512];
	int n = snprintf(msg, sizeof msg,
			 "after_release: FAIL algo=%s wait=%s scenario=%s memory=%s: signal %d at %p in the "
			 "%s (unlocker: %s)%s\n",
			 lock_name(), wait_name, scen_name, mem_name, sig, si->si_addr,
			 role == UNL	? "unlocker"
			 : role == MAIN ? "main thread"
					: "another thread",
			 where_u, role == UNL ? ": it touched the lock's memory after its release" : "");
	if (write(1, msg, (size_t)n) < 0) {
	}
	_exit(1);
}

static void on_kick(int sig)
{
	(void)sig; /* only interrupts a futex wait */
}

static void post(unsigned ev)
{
	pthread_mutex_lock(&ev_mu);
	events |= ev;
	pthread_cond_broadcast(&ev_cv);
	pthread_mutex_unlock(&ev_mu);
}

static void await(unsigned ev)
{
	pthread_mutex_lock(&ev_mu);
	while (!(events & ev))
		pthread_cond_wait(&ev_cv, &ev_mu);
	pthread_mutex_unlock(&ev_mu);
}

/* Waits until cond, re-checking every millisecond (a poll, never a bound). */
#define POLL(cond)                                                                                           \
	do {                                                                                                 \
		while (!(cond)) {                                                                            \
			struct timespec ts_ = {0, 1000000};                                                  \
			nanosleep(&ts_, NULL);                                                               \
		}                                                                                            \
	} while (0)

void ls_test_point(enum ls_test_point id)
{
	if (role == UNL && id == LS_POINT_RELEASED && !atomic_exchange(&u_paused_once, 1)) {
		where_u = "stopped right after its release";
		post(EV_PAUSED);
		await(EV_RESUME);
		where_u = "let go after the release";
		return;
	}
	if (my < 0)
		return;
	/* auto's queued waiter steps its policy without spinning first
	 * when spinning has been failing (LS_POINT_QUEUED) */
	if (id == LS_POINT_WAITING || id == LS_POINT_QUEUED)
		atomic_store(&th[my].waiting, 1);
	else if (id == LS_POINT_PARKING)
		atomic_store(&th[my].parked, atomic_load(&th[my].parked) + 1);
}

/* Exclusion: a writer alone, readers only beside readers. */
static void enter(int who, bool write)
{
	unsigned o = write ? atomic_exchange(&occupancy, WRITER) : atomic_fetch_add(&occupancy, 1);
	if (write ? o != 0 : (o & WRITER) != 0)
		fail("exclusion: thread %d got the lock for %s beside %s", who, write ? "writing" : "reading",
		     o & WRITER ? "a writer" : "readers");
}

static void leave(bool write)
{
	if (write)
		atomic_store(&occupancy, 0);
	else
		atomic_fetch_sub(&occupancy, 1);
}

/* Whether thread i waits for the lock, as the scenario needs it to. */
static bool is_waiting(int i)
{
	if (atomic_load(&th[i].got))
		return true; /* it had no need to */
	return ls_wait_cfg.policy == LS_WAIT_PARK ? atomic_load(&th[i].parked) > 0
						  : atomic_load(&th[i].waiting);
}

static void *run_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	my = i;
	role = th[i].role == 'U' ? UNL : OTHER;
	ls_topo_thread_index = th[i].cluster; /* thread:N semantics (topo.h) */
	atomic_store(&th[i].tid, gettid());
	if (role == UNL)
		where_u = "locking";
	void *token;
	x_lock(L, th[i].write, &token);
	/* the holders before us (readers beside which we got in) release
	 * first, except U (it stops in its unlock) */
	bool before[MAXT] = {false};
	for (int j = 0; j < i; j++)
		before[j] = th[j].role != 'U' && atomic_load(&th[j].got) && !atomic_load(&th[j].done);
	atomic_store(&th[i].got, 1);
	enter(i, th[i].write);
	await(EV_GO); /* every other thread waits or holds by now */
	for (int j = 0; j < i; j++)
		if (before[j])
			POLL(atomic_load(&th[j].done));
	leave(th[i].write);
	if (role == UNL)
		where_u = "unlocking";
	x_unlock(L, th[i].write, token);
	if (role == UNL && !atomic_load(&u_paused_once))
		fail("the unlocker returned without passing LS_POINT_RELEASED (lock.h: each release path "
		     "has it)");
	if (role == UNL) {
		where_u = "returned from unlock";
		post(EV_UDONE);
	}
	atomic_store(&th[i].done, 1);
	return NULL;
}

/* ---- memory ---- */

/* The pool's reclaim function of an out-of-line block (-N): the state's
 * destroy, as the shim's. */
static void reclaim_state(struct ls_ext_head *h)
{
	x_destroy((char *)h + LS_CACHELINE);
}

static char *map_page(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fail("mmap: %s", strerror(errno));
	return p;
}

/* The lock's word for its out-of-line block (-N): where the shim keeps it,
 * offset 24 of a pthread_mutex_t, 0 of a pthread_rwlock_t. */
static ls_ext_word_t *block_word(void)
{
	return (ls_ext_word_t *)(page + (rwalgo ? 0 : 24));
}

static void *new_state(void)
{
	if (inline_state()) {
		page = map_page();
		/* where the shim puts it: offset 24 of a pthread_mutex_t (a
		 * spinlock is its state), 0 of a pthread_rwlock_t */
		L = page + (rwalgo ? 64 : 24);
		x_init(L);
	} else {
		/* as the shim: a header line, then the state (zero-filled) */
		block_size = LS_CACHELINE + state_size();
		block = ls_ext_alloc(block_size);
		if (!block)
			fail("ls_ext_alloc failed");
		L = block + LS_CACHELINE;
		x_init(L);
		if (no_destroy) { /* attached to the lock's word, reclaimable */
			page = map_page();
			struct ls_ext_head *h = (struct ls_ext_head *)block;
			h->reclaim = ls_ext_reclaim_id(reclaim_state);
			if (ls_ext_attach(block_word(), h, block_size, NULL) != h)
				fail("ls_ext_attach did not attach the block (test set-up)");
		}
	}
	return L;
}

/* Destroys the lock of new_state() and frees its memory. */
static void drop_state(void)
{
	x_destroy(L);
	if (!inline_state() && no_destroy) {
		if (ls_ext_take(block_word(), NULL) != (struct ls_ext_head *)block)
			fail("ls_ext_take did not give the lock's block back (test set-up)");
	}
	if (!inline_state())
		ls_ext_free(block, block_size);
	if (inline_state() || no_destroy)
		munmap(page, 4096);
}

/* The lines block of a hierarchical lock (attached at its first use). */
static void note_lines(void)
{
	lines = NULL;
	long at = lines_at();
	if (at < 0)
		return;
	struct ls_hier_head *h = *(struct ls_hier_head **)((char *)L + at);
	if (!h || ls_hier_is_flat(h))
		return;
	lines = (char *)h;
	lines_size = (size_t)(1 + h->nclusters + h->ngroups) * LS_CACHELINE;
}

/* A freed block keeps the pool's free-list link in its first 8 bytes. */
static void scribble(char *p, size_t n)
{
	memset(p + 8, PATTERN, n - 8);
}

static void check_pattern(const char *what, char *p, size_t n)
{
	for (size_t i = 8; i < n; i++)
		if ((unsigned char)p[i] != PATTERN)
			fail("the unlocker wrote byte %zu of the %s after its release (0x%02x, was 0x%02x)",
			     i, what, (unsigned char)p[i], PATTERN);
}

/* Later use of a lock: two threads, a plain counter (rwlocks: writes, and
 * reads that see no writer). */
static void *user(void *arg)
{
	long *got = arg;
	for (int i = 0; i < 100; i++) {
		bool write = !rwalgo || i % 2 == 0;
		void *token;
		x_lock(L, write, &token);
		enter(100, write);
		if (write)
			(*got)++;
		leave(write);
		x_unlock(L, write, token);
	}
	return NULL;
}

static void later_use(void)
{
	pthread_t u[2];
	long got[2] = {0, 0};
	for (int i = 0; i < 2; i++)
		if (pthread_create(&u[i], NULL, user, &got[i]))
			fail("pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(u[i], NULL);
	if (x_trylock(L) != 0)
		fail("the reused block's lock is not free after later use");
	x_unlock(L, true, NULL);
}

/* ---- one run ---- */

static void kick_others(void)
{
	for (int i = 0; i < nth; i++)
		if (th[i].role != 'U' && !atomic_load(&th[i].done) && atomic_load(&th[i].tid))
			pthread_kill(th[i].t, SIGUSR1);
}

/* "U0 W1" (lock.h's families) or "Uw0 Wr1" (rwlocks): role, mode,
 * cluster. */
static void parse(const char *spec)
{
	nth = 0;
	for (const char *s = spec; *s; s++) {
		if (*s == ' ')
			continue;
		if (nth == MAXT || !strchr("UPW", s[0]))
			fail("bad scenario '%s'", spec);
		memset(&th[nth], 0, sizeof th[nth]);
		th[nth].role = *s++;
		th[nth].write = true;
		if (rwalgo && (*s == 'r' || *s == 'w'))
			th[nth].write = *s++ == 'w';
		if (*s < '0' || *s > '3')
			fail("bad scenario '%s'", spec);
		th[nth].cluster = (unsigned)(*s - '0');
		nth++;
	}
}

/* -N: unmaps the lock's page without destroy, has the pool reclaim its
 * block or lines, and fills them with the pattern or (reuse) lets a fresh
 * lock, *L2, take them: returns them then. */
static char *forget(bool reuse, void **L2)
{
	where_main = "unmapping the lock's memory, without destroy";
	char *gone = inline_state() ? lines : block;
	size_t gone_size = inline_state() ? lines_size : block_size;
	if (munmap(page, 4096))
		fail("munmap: %s", strerror(errno));
	if (!gone)
		return NULL;
	where_main = "reclaiming its block";
	unsigned n = ls_ext_scan();
	/* a block on the free list starts with the pool's link, odd (pool.c) */
	if (!(__atomic_load_n((uintptr_t *)gone, __ATOMIC_RELAXED) & 1))
		fail("the pool did not reclaim the %s of the lock whose memory was unmapped (ls_ext_scan: "
		     "%u blocks)",
		     inline_state() ? "lines block" : "out-of-line state", n);
	if (!reuse) {
		scribble(gone, gone_size);
		return NULL;
	}
	/* a fresh lock of the same algorithm takes the block */
	*L2 = new_state();
	void *token;
	x_lock(*L2, true, &token);
	x_unlock(*L2, true, token);
	if (inline_state()) {
		note_lines();
		if (lines != gone)
			fail("the pool did not hand the reclaimed lines block out again (test set-up)");
	} else if (block != gone) {
		fail("the pool did not hand the reclaimed block out again (test set-up)");
	}
	return gone;
}

static void run(const char *spec, bool lines_reuse, bool barge_mode)
{
	scen_name = spec;
	barge = barge_mode;
	mem_name = inline_state() ? (lines_reuse ? "unmap+lines-reuse" : "unmap+lines-pattern")
				  : (lines_reuse ? "block-reuse" : "block-pattern");
	if (lines_at() < 0 && inline_state())
		mem_name = "unmap";
	if (no_destroy)
		mem_name = inline_state() ? (lines_at() < 0 ? "no-destroy+unmap"
					     : lines_reuse  ? "no-destroy+unmap+lines-reuse"
							    : "no-destroy+unmap+lines-pattern")
					  : (lines_reuse ? "no-destroy+unmap+block-reuse"
							 : "no-destroy+unmap+block-pattern");
	parse(spec);
	static char prefix[256];
	snprintf(prefix, sizeof prefix,
		 "after_release: FAIL algo=%s wait=%s scenario=\"%s\" memory=%s: ", lock_name(), wait_name,
		 spec, mem_name);
	fail_prefix = prefix;
	events = 0;
	atomic_store(&u_paused_once, 0);
	atomic_store(&occupancy, 0);
	new_state();
	role = MAIN;
	/* a first use: the hierarchical locks attach their lines, so that U's
	 * acquisition may take their fast path */
	void *token;
	x_lock(L, true, &token);
	x_unlock(L, true, token);
	where_main = "starting the threads";
	for (int i = 0; i < nth; i++) {
		if (pthread_create(&th[i].t, NULL, run_thread, (void *)(intptr_t)i))
			fail("pthread_create");
		if (i == 0)
			POLL(atomic_load(&th[0].got));
		else
			POLL(is_waiting(i));
		if (barge && i == 1) {
			/* wake W once, and let it sleep again (shfl's head then
			 * sets NOSTEAL while the lock is still held) */
			int p = atomic_load(&th[1].parked);
			while (atomic_load(&th[1].parked) == p) {
				pthread_kill(th[1].t, SIGUSR1);
				struct timespec ts = {0, 1000000};
				nanosleep(&ts, NULL);
			}
		}
	}
	note_lines();
	where_main = "waiting for the unlocker to stop after its release";
	post(EV_GO);
	await(EV_PAUSED);
	if (barge && x_trylock(L) != 0)
		fail("trylock returned EBUSY while the lock was free (a woken waiter had not taken it yet)");
	else if (barge)
		x_unlock(L, true, NULL);
	where_main = "waiting for the other threads (waking sleepers with signals)";
	for (;;) {
		bool all = true;
		for (int i = 0; i < nth; i++)
			if (th[i].role != 'U' && !atomic_load(&th[i].done))
				all = false;
		if (all)
			break;
		kick_others();
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < nth; i++)
		if (th[i].role != 'U')
			pthread_join(th[i].t, NULL);
	where_main = "trylock of the free lock";
	if (x_trylock(L) != 0)
		fail("trylock returned EBUSY with the lock free and nobody waiting, while the unlocker was "
		     "stopped after its release");
	x_unlock(L, true, NULL);
	char *reused = NULL;
	unsigned char *snap = NULL;
	size_t snap_n = 0;
	void *L2 = NULL;
	if (no_destroy) {
		reused = forget(lines_reuse, &L2);
	} else if (inline_state()) {
		where_main = "destroying the lock";
		x_destroy(L);
		where_main = "freeing its memory";
		char *old_page = page;
		if (lines && !lines_reuse) {
			scribble(lines, lines_size);
		} else if (lines) {
			/* a fresh lock of the same algorithm takes the block (its
			 * page is mapped first: it must not be the old one) */
			char *old_lines = lines;
			L2 = new_state();
			x_lock(L2, true, &token);
			x_unlock(L2, true, token);
			note_lines();
			if (lines != old_lines)
				fail("the pool did not hand the freed lines block out again (test set-up)");
			reused = lines;
		}
		if (munmap(old_page, 4096))
			fail("munmap: %s", strerror(errno));
	} else {
		where_main = "destroying the lock";
		x_destroy(L);
		where_main = "freeing its memory";
		ls_ext_free(block, block_size);
		if (!lines_reuse) {
			scribble(block, block_size);
		} else {
			char *old = block;
			L2 = new_state();
			if (block != old)
				fail("the pool did not hand the freed block out again (test set-up)");
			reused = block;
		}
	}
	if (reused) {
		snap_n = inline_state() ? lines_size : block_size;
		snap = malloc(snap_n);
		memcpy(snap, reused, snap_n);
	}
	where_main = "letting the unlocker go";
	post(EV_RESUME);
	await(EV_UDONE);
	for (int i = 0; i < nth; i++)
		if (th[i].role == 'U')
			pthread_join(th[i].t, NULL);
	where_main = "checking the memory";
	if (!reused && inline_state() && lines)
		check_pattern("lines block", lines, lines_size);
	else if (!reused && !inline_state())
		check_pattern("out-of-line state", block, block_size);
	if (reused) {
		for (size_t i = 8; i < snap_n; i++)
			if ((unsigned char)reused[i] != snap[i])
				fail("the unlocker wrote byte %zu of its freed block after its release, now "
				     "another "
				     "lock's (0x%02x, was 0x%02x)",
				     i, (unsigned char)reused[i], snap[i]);
		free(snap);
		L = L2;
		later_use();
		drop_state();
	}
	role = OTHER;
}

/* ---- driver ---- */

static const char *const hier_scenarios[] = {"U0",	 "U0 W0",    "U0 W0 W0", "U0 W1 W0",
					     "U0 W1",	 "U0 W2",    "P0 U0 W0", "P0 U0 W1",
					     "P1 U0 W0", "P0 U1 W2", "P0 U0 W2", NULL};
static const char *const flat_scenarios[] = {"U0", "U0 W0", "U0 W0 W0", "P0 U0 W0", NULL};
/* rwlocks: a read or a write unlock, letting in readers, a writer, or
 * nobody yet (a reader that is not the last one out) */
static const char *const rw_scenarios[] = {
    "Uw0",	   "Ur0",	  "Uw0 Ww0",	 "Uw0 Wr0",	"Uw0 Wr0 Wr0", "Uw0 Wr0 Ww0", "Ur0 Ww0",
    "Pr0 Ur0 Ww0", "Ur0 Pr0 Ww0", "Pw0 Ur0 Wr0", "Pw0 Ur0 Ww0", "Pw0 Uw0 Wr0", "Pw0 Uw0 Ww0", NULL};
/* and with clusters, for c-rw-wp's cohort: a pass inside the cluster, the
 * pass bound, the global lock to another cluster's writer or to readers */
static const char *const rw_hier_scenarios[] = {
    "Pw0 Uw0",	       "Pw0 Uw0 Ww1", "Pw1 Uw0 Ww0", "Pw0 Uw1 Ww2", "Pw0 Uw0 Wr1", "Pw0 Uw0 Ww0 Ww0",
    "Pw0 Uw0 Wr0 Ww1", "Pr0 Ur1 Ww2", "Ur0 Pr1 Ww1", "Pw0 Ur1 Wr2", NULL};

/* The locks a free word makes free to anybody (no hand-over to a waiter). */
static bool barging(void)
{
	static const char *const names[] = {"tas", "ttas", "backoff", "auto", "hbo", "mutexee", "shfl", NULL};
	for (int i = 0; names[i] && !rwalgo; i++)
		if (!strcmp(names[i], algo->name))
			return true;
	return false;
}

static int run_list(const char *const *sc)
{
	int runs = 0;
	for (int s = 0; sc[s]; s++)
		for (int reuse = 0; reuse < ((lines_at() >= 0 || !inline_state()) ? 2 : 1); reuse++) {
			run(sc[s], reuse, false);
			runs++;
		}
	return runs;
}

static int run_algo(int policy)
{
	const char *const *sc = rwalgo ? rw_scenarios : hier() ? hier_scenarios : flat_scenarios;
	int runs = 0;
	ls_wait_cfg.policy = (enum ls_policy)policy;
	for (int fp = 0; fp < (hier() ? 2 : 1); fp++) {
		ls_hier_fastpath = (uint64_t)!fp;
		runs += run_list(sc);
		if (rwalgo && hier())
			runs += run_list(rw_hier_scenarios);
	}
	ls_hier_fastpath = 1;
	if (policy == LS_WAIT_PARK && barging()) {
		run("U0 W0", false, true);
		runs++;
	}
	return runs;
}

static void set_params(const struct ls_param *p, const char *env, uint64_t v)
{
	for (; p && p->env; p++)
		if (!strcmp(p->env, env))
			*p->value = v;
}

static void set_param(const char *env, uint64_t v)
{
	if (!rwalgo) {
		set_params(algo->params, env, v);
		return;
	}
	for (size_t i = 0; i < ls_rwalgo_count(); i++)
		set_params(ls_rwalgo_at(i)->params, env, v);
}

/* -a for -f rwlock: names (each checked), or "all" (every base algorithm),
 * into list; the mutex-serialised mode over `mutex`. */
static void rw_list(const char *names, const struct ls_algo *mutex, char *list, size_t len)
{
	char err[1024];
	list[0] = 0;
	if (!strcmp(names, "all")) {
		for (size_t i = 0; i < ls_rwalgo_count(); i++) {
			const struct ls_rwalgo *a = ls_rwalgo_at(i);
			if (!(a->caps & (LS_RWCAP_PASSTHROUGH | LS_RWCAP_WRAPPER)))
				snprintf(list + strlen(list), len - strlen(list), "%s%s", list[0] ? "," : "",
					 a->name);
		}
	} else {
		snprintf(list, len, "%s", names);
	}
	char *copy = strdup(list), *save = NULL;
	for (char *a = strtok_r(copy, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		const struct ls_rwalgo *r = ls_rwalgo_lookup(a, err, sizeof err);
		if (!r)
			opt_error("-a: %s", err);
		if (r->caps & LS_RWCAP_PASSTHROUGH)
			opt_error("-a: '%s' is not a lock (the shim hands it to glibc)", a);
		if (ls_rwalgo_start(r, mutex, err, sizeof err))
			opt_error("-a: %s", err);
	}
	free(copy);
}

int main(int argc, char **argv)
{
	const char *names = "all", *wait = "all", *family = "mutex", *mname = "mcs";
	int c, watchdog = 120;
	while ((c = getopt(argc, argv, "f:a:m:w:W:N")) != -1) {
		switch (c) {
		case 'f':
			family = optarg;
			break;
		case 'a':
			names = optarg;
			break;
		case 'm':
			mname = optarg;
			break;
		case 'w':
			wait = optarg;
			break;
		case 'W':
			watchdog = (int)opt_number("W", optarg, 1, 3600);
			break;
		case 'N':
			no_destroy = true;
			break;
		default:
			opt_error("usage: after_release [-f mutex|rwlock] [-a ALGO[,ALGO...]|all|spin] [-m "
				  "MUTEX] [-w spin|yield|park|all] [-W SECONDS] [-N]");
		}
	}
	static const char *const families[] = {"mutex", "rwlock"};
	bool rw = opt_choose("f", "family", family, families, 2) == 1;
	enum ls_policy p0, p1;
	opt_policy_range(wait, &p0, &p1);
	const struct ls_algo *mutex = opt_algo(mname);
	if ((mutex->caps & LS_CAP_HIER) && strcmp(mutex->name, "hbo") && strcmp(mutex->name, "cna"))
		opt_error("-m: '%s' keeps per-cluster lines; the mutex-serialised mode is tested over "
			  "another lock (after_release -a %s tests it as a mutex)",
			  mname, mname);
	char list[2048];
	if (rw)
		rw_list(names, mutex, list, sizeof list);
	else
		opt_algo_list(names, list, sizeof list);

	char err[256];
	if (ls_topo_setup("thread:4/2", NULL, err, sizeof err))
		fail("topology: %s", err);
	/* -N tests the pool's protocol: it peeks even under a seccomp filter
	 * (LOCKSWAP_RECLAIM=on; its default, auto, would not, pool.h) */
	for (size_t i = 0; no_destroy && i < ls_option_count(); i++)
		if (!strcmp(ls_option_at(i)->env, "LOCKSWAP_RECLAIM") &&
		    ls_option_at(i)->parse("on", err, sizeof err))
			fail("LOCKSWAP_RECLAIM: %s", err);
	struct sigaction sa = {0};
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	struct sigaction k = {0};
	k.sa_handler = on_kick; /* no SA_RESTART: a futex wait returns EINTR */
	sigaction(SIGUSR1, &k, NULL);
	signal(SIGALRM, on_alarm);
	ls_node_counting = true;
	ls_wait_cfg.spin = 16;
	ls_wait_cfg.yield = 2;
	ls_cohort_passes = 1;

	for (char *a = strtok(list, ","); a; a = strtok(NULL, ",")) {
		if (rw)
			rwalgo = ls_rwalgo_find(a);
		else
			algo = opt_lock_find(a);
		set_param("LOCKSWAP_HMCS_GROUP_PASSES", 1);
		/* Time-published locks: no waiter times out or looks preempted,
		 * so that each is granted the lock in turn and none waits for
		 * the stopped unlocker to mark its node removed (which it may
		 * do after its release: the node is not the lock's memory). */
		set_param("LOCKSWAP_TP_PATIENCE_NS", 1000000000);
		set_param("LOCKSWAP_TP_UPDATE_DELAY_NS", 1000000000);
		set_param("LOCKSWAP_TP_MAX_CS_NS", 1000000000);
		/* c-rw-wp: no reader runs out of patience (the queue order of
		 * a scenario stays the one it sets up) */
		set_param("LOCKSWAP_CRWWP_PATIENCE", 10000000);
		for (int p = (int)p0; p <= (int)p1; p++) {
			static char prefix[256];
			wait_name = opt_policy_name((enum ls_policy)p);
			snprintf(prefix, sizeof prefix, "after_release: FAIL algo=%s wait=%s: ", lock_name(),
				 wait_name);
			fail_prefix = prefix;
			alarm((unsigned)watchdog);
			/* main's first use: nodes that a per-thread pool keeps
			 * (abortable.h) are not leaks */
			role = MAIN;
			new_state();
			for (int k = 0; k < 2; k++) {
				void *token;
				for (int w = 0; w < (rwalgo ? 2 : 1); w++) {
					x_lock(L, w == 0, &token);
					x_unlock(L, w == 0, token);
				}
				if (x_trylock(L) == 0)
					x_unlock(L, true, NULL);
			}
			drop_state();
			struct ls_node_stats before, after;
			ls_node_stats(&before);
			int runs = run_algo(p);
			ls_node_stats(&after);
			if (after.in_use != before.in_use)
				fail("%ld queue node(s) leaked", after.in_use - before.in_use);
			printf("after_release: OK algo=%s wait=%s runs=%d\n", lock_name(), wait_name, runs);
			fflush(stdout);
		}
	}
	return 0;
}
