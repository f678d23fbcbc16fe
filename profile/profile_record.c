/*
 * profile_record.c - the contention profiler's recording layer: which
 * mutexes are contended, for how long, and from where (LOCKSWAP_PROFILE=1,
 * or `lockswap profile`). This file installs and starts it; the files
 * below do the work (profile_record.h draws the layers). The layer knows
 * the shim only through interpose/observe.h, and the report only as the
 * function registered with ls_prof_at_exit.
 *
 * Seen (observe.h): every lockswap mutex (through the shim's mutex
 * operations, wrapped), every mutex and condvar that goes to glibc (through
 * glibc's functions, wrapped: the pthread baseline and process-shared,
 * robust, PI and PP mutexes), and through the shim's events lockswap's own
 * condvars and the init and destroy of its mutexes and condvars
 * (profile_mutex.c, profile_cond.c); every pthread_rwlock_* and
 * pthread_spin_* call (profile_rwlock.c, profile_spin.c). Off, none of it
 * runs: nothing is installed, the shim keeps its own operations.
 *
 * Records (profile_records.c). A record (struct grec) is one mutex, condvar,
 * rwlock or spinlock from its creation (init, or first use for static
 * initialisers) to its destroy or re-initialisation; a later object at the
 * same address gets a new record. Records live in a global map from
 * address to live record and are never freed. Each carries the stack of
 * its creation (its name in the report) and one hot cache line written
 * under the mutex: the serial of its last acquirer (an acquisition by
 * another thread is a hand-off), the time it was acquired (hold time ends
 * at release, whichever thread releases), and the number of threads
 * waiting (contended path only; its maximum is the longest queue seen, for
 * any algorithm). That line moves between threads only when the mutex
 * itself does.
 *
 * Counts (profile_thread.c, profile_event.c). Every thread counts in its
 * own table (struct pthr): entries keyed by address (open addressing, a
 * one-entry MRU in front), each pointing at its record. Nothing shared is
 * written on the uncontended path except the hot line above. A thread's
 * table is merged into the records at thread exit (a pthread key
 * destructor), when it holds 4096 entries or call sites, and by the
 * report. An entry whose record has ended is merged into it and moved to
 * the live one at its next use. What each event costs: profile_event.h.
 *
 * Re-entry. libunwind (dlopen'ed only when profiling), dl_iterate_phdr and
 * the pthread key machinery may call pthread functions or the allocator. A
 * per-thread guard (profile_base.h) makes every wrapper a plain
 * pass-through while the profiler runs on that thread, and the profiler's
 * memory comes from mmap, never from the program's allocator. The global
 * lock is never held across a call into libunwind or the program. Calls
 * into libunwind and dl_iterate_phdr are counted in a gate that fork's
 * prepare handler closes and drains, so a child never inherits their locks
 * held.
 *
 * Exit and fork (profile_process.c). The report is written once per
 * process, at exit, _exit/_Exit or a fatal signal, by the writer
 * registered with ls_prof_at_exit (profile_out.c); a fork child starts from
 * zero and writes its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "observe.h"
#include "profile_cond.h"
#include "profile_mutex.h"
#include "profile_record.h"
#include "profile_records.h"
#include "profile_rwlock.h"
#include "profile_spin.h"
#include "profile_thread.h"
#include "stack.h"

/* ---- installation ---- */

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
	ls_prof_process_install(ob);
	ls_prof_on = true;
	return 0;
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
	ls_prof_process_start();
	ls_prof_guard_leave();
	return 0;
}
