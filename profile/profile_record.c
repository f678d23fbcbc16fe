/*
 * profile_record.c - the contention profiler's recording layer: which
 * mutexes are contended, for how long, and from where (LOCKSWAP_PROFILE=1,
 * or `lockswap profile`). The bottom layer of profile/ (see
 * profile_record.h): it knows the shim only through interpose/observe.h,
 * and the report only as the function registered with ls_prof_at_exit.
 *
 * Seen (observe.h): every lockswap mutex (through the shim's mutex
 * operations, wrapped), every mutex and condvar that goes to glibc (through
 * glibc's functions, wrapped: the pthread baseline and process-shared,
 * robust, PI and PP mutexes), and through the shim's events lockswap's own
 * condvars and the init and destroy of its mutexes and condvars. Off, none
 * of it runs: nothing is installed, the shim keeps its own operations.
 *
 * Records. A record (struct grec) is one mutex or condvar from its creation
 * (init, or first use for static initialisers) to its destroy or
 * re-initialisation; a later object at the same address gets a new record.
 * Records live in a global map from address to live record and are never
 * freed. Each carries the stack of its creation (its name in the report)
 * and one hot cache line written under the mutex: the serial of its last
 * acquirer (an acquisition by another thread is a hand-off), the time it
 * was acquired (hold time ends at release, whichever thread releases), and
 * the number of threads waiting (contended path only; its maximum is the
 * longest queue seen, for any algorithm). That line moves between threads
 * only when the mutex itself does.
 *
 * Counts. Every thread counts in its own table (struct pthr): entries keyed
 * by address (open addressing, a one-entry MRU in front), each pointing at
 * its record. Nothing shared is written on the uncontended path except the
 * hot line above. A thread's table is merged into the records at thread exit
 * (a pthread key destructor), when it holds 4096 entries or call sites, and
 * by the report. An entry whose record has ended is merged into it and
 * moved to the live one at its next use.
 *
 * Costs when on. Acquisition: one trylock first (if it fails the first
 * attempt "found it held": contended), one clock read, a table lookup,
 * counters. Release: one clock read, the lookup (the MRU hits), the hold
 * histogram. Contention only: the waiters counter, a second clock read, and
 * (1 in LOCKSWAP_PROFILE_SAMPLE) unw_backtrace, taken while waiting, so its
 * cost overlaps the wait instead of lengthening the hold (it is included in
 * the wait time measured).
 *
 * Re-entry. libunwind (dlopen'ed only when profiling), dl_iterate_phdr and
 * the pthread key machinery may call pthread functions or the allocator. A
 * per-thread guard makes every wrapper a plain pass-through while the
 * profiler runs on that thread, and the profiler's memory comes from mmap,
 * never from the program's allocator. The global lock is never held across
 * a call into libunwind or the program. Calls into libunwind and
 * dl_iterate_phdr are counted in a gate that fork's prepare handler closes
 * and drains, so a child never inherits their locks held.
 *
 * Exit. The report is written by a destructor (exit from any thread), at
 * _exit/_Exit (the shim's `exiting` event), and by a handler of the fatal
 * signals whose disposition was the default (then the signal is re-raised):
 * each collects the counts and calls the registered writer (profile_out.c)
 * once per process. A fork child starts from zero and writes its own report
 * (FILE.PID); a vfork child writes nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "observe.h"
#include "profile_base.h"
#include "profile_cond.h"
#include "profile_event.h"
#include "profile_modules.h"
#include "profile_mutex.h"
#include "profile_record.h"
#include "profile_records.h"
#include "profile_rwlock.h"
#include "profile_spin.h"
#include "profile_thread.h"
#include "stack.h"
#include "tpclock.h"
#include "wait.h"

/* ---- installation ---- */

static void on_exiting(void);

int ls_prof_record_install(struct ls_observe *ob, char *err, size_t len)
{
	bool modules = ls_prof_modules_init(), records = ls_prof_records_init(ob);
	if (!modules || !records) {
		snprintf(err, len, "LOCKSWAP_PROFILE: cannot map the profiler's tables: %s", strerror(errno));
		return -1;
	}
	ls_prof.algo = ob->algo;
	ls_prof.passthrough = ob->passthrough;
	ls_prof.rwalgo = ob->rwalgo;
	ls_prof.spinalgo = ob->spinalgo;
	ls_prof.rw_passthrough = ob->rw_passthrough;
	ls_prof.spin_passthrough = ob->spin_passthrough;
	ls_prof.pid = (int)getpid();
	ls_prof.start_ns = ls_prof_now();
	cpu_set_t cpus;
	if (sched_getaffinity(0, sizeof cpus, &cpus) == 0)
		ls_prof.cpus = (unsigned)CPU_COUNT(&cpus);
	ssize_t n = readlink("/proc/self/exe", ls_prof.exe, sizeof ls_prof.exe - 1);
	ls_prof.exe[n > 0 ? n : 0] = '\0';

	ls_prof_mutex_install(ob);
	ls_prof_cond_install(ob);
	ls_prof_rwlock_install(ob);
	ls_prof_spin_install(ob);
	ob->ev.exiting = on_exiting;
	ls_prof_on = true;
	return 0;
}

/* ---- exit: the report's moment ---- */

static void (*writer)(void);
static _Atomic int reported_pid;

void ls_prof_at_exit(void (*write)(void))
{
	writer = write;
}

static void say(const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t k = write(ls_prof.err_fd, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

/* Once per process: collects every thread's counts under the global lock
 * and hands the records to the writer. `from_signal` (a fatal signal,
 * _exit): async-signal-safe work only, and the global lock only tried. */
static void report(bool from_signal)
{
	int pid = (int)getpid();
	/* a vfork child shares our memory: not its report to write */
	if (!writer || pid != ls_prof.pid)
		return;
	if (atomic_exchange_explicit(&reported_pid, pid, memory_order_acq_rel) == pid)
		return;
	if (from_signal) {
		bool locked = false;
		for (int i = 0; i < 1000 && !(locked = ls_prof_trylock()); i++) {
			struct timespec ms = {0, 100000};
			nanosleep(&ms, NULL);
		}
		if (!locked) {
			say("lockswap profile: not written: another thread was inside the profiler\n");
			return;
		}
	} else {
		ls_prof_modules_refresh();
		ls_prof_lock();
	}
	ls_prof_merge_all();
	writer();
	ls_prof_unlock();
}

__attribute__((destructor)) static void prof_fini(void)
{
	if (ls_prof_on)
		report(false);
}

/* _exit and _Exit (the shim's `exiting` event): they may be called in a
 * fork child or a signal handler. A vfork child, which shares the parent's
 * memory, writes nothing (its pid is not ours). */
static void on_exiting(void)
{
	report(true);
}

static const int fatal_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,	SIGABRT, SIGBUS, SIGFPE,
				    SIGSEGV, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ};

/* A fatal signal: write the report if it is safe (not interrupting the
 * profiler on this thread; report() only tries the global lock),
 * then die of the signal as the program would have. */
static void on_fatal(int sig)
{
	if (!ls_prof_tls.guard) {
		ls_prof_tls.guard = 1;
		report(true);
	}
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigaction(sig, &dfl, NULL);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);
}

/* ---- fork ---- */

/* The gate first: a thread inside it may wait for the global lock. */
static void fork_prepare(void)
{
	ls_stack_fork_prepare();
	ls_prof_lock();
}

static void fork_parent(void)
{
	ls_prof_unlock();
	ls_stack_fork_parent();
}

/* The child starts from zero: its report is its own activity. It keeps the
 * records (names) and the holds of the forking thread, which is now its
 * only thread. */
static void fork_child(void)
{
	struct pthr *me = ls_prof_tls.t;
	atomic_store_explicit(&ls_prof_glock.w, 0, memory_order_relaxed);
	ls_prof_modules_fork_child();
	ls_stack_fork_child();
	ls_prof_tls.tid = 0;
	ls_prof_threads_fork_child();
	uint64_t at = ls_prof_now();
	for (struct grec *g = ls_prof.all; g; g = g->next_all) {
		memset(g->n, 0, sizeof g->n);
		g->wait_sum = g->wait_max = g->hold_sum = g->hold_max = g->rd_wait_sum = g->rd_hold_sum = 0;
		memset(g->wait_h, 0, sizeof g->wait_h);
		memset(g->hold_h, 0, sizeof g->hold_h);
		for (struct gsite *s = g->sites; s; s = s->next_rec)
			s->count = s->timeouts = s->wait_ns = 0;
		atomic_store_explicit(&g->waiters, 0, memory_order_relaxed);
		atomic_store_explicit(&g->max_waiters, 0, memory_order_relaxed);
		bool mine = me && atomic_load_explicit(&g->last, memory_order_relaxed) == me->serial;
		if (!mine)
			atomic_store_explicit(&g->last, 0, memory_order_relaxed);
		if (atomic_load_explicit(&g->held_since, memory_order_relaxed))
			atomic_store_explicit(&g->held_since, mine ? at : 0, memory_order_relaxed);
	}
	atomic_store_explicit(&ls_prof.unrecorded, 0, memory_order_relaxed);
	atomic_store_explicit(&ls_prof.stackless, 0, memory_order_relaxed);
	ls_prof.pid = (int)getpid();
	ls_prof.start_ns = at;
	ls_prof.forked = true;
	atomic_store_explicit(&reported_pid, 0, memory_order_relaxed);
}

/* ---- start (after initialisation: may dlopen, allocate, lock) ---- */

int ls_prof_record_start(char *err, size_t len)
{
	ls_prof_guard_enter();
	char why[512];
	if (ls_stack_start(why, sizeof why)) {
		snprintf(err, len, "LOCKSWAP_PROFILE=1: %s", why);
		ls_prof_guard_leave();
		return -1;
	}
	ls_prof_modules_refresh();
	ls_prof_threads_start();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
		struct sigaction old, sa = {.sa_handler = on_fatal, .sa_flags = SA_RESETHAND | SA_NODEFER};
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			sigaction(fatal_signals[i], &sa, NULL);
	}
	ls_prof_guard_leave();
	return 0;
}
