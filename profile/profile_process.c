/*
 * profile_process.c - the moments of the process (see profile_process.h).
 *
 * Exit. The report is written by a destructor (exit from any thread), at
 * _exit/_Exit (the shim's `exiting` event), and by a handler of the fatal
 * signals whose disposition was the default (then the signal is re-raised):
 * each collects the counts and calls the registered writer (profile_out.c)
 * once per process. A fork child starts from zero and writes its own report
 * (FILE.PID); a vfork child writes nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "observe.h"
#include "profile_modules.h"
#include "profile_process.h"
#include "profile_thread.h"

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

/* ---- installation and start ---- */

void ls_prof_process_install(struct ls_observe *ob)
{
	ob->ev.exiting = on_exiting;
}

void ls_prof_process_start(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
		struct sigaction old, sa = {.sa_handler = on_fatal, .sa_flags = SA_RESETHAND | SA_NODEFER};
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			sigaction(fatal_signals[i], &sa, NULL);
	}
}
