/*
 * observe.c - the shim's side of observe.h: it hands the observer the
 * operations it is about to call, takes back what the observer returns,
 * and keeps the event hooks (ls_events) for the entry points to call.
 *
 * _exit and _Exit are interposed here only to give an observer its
 * `exiting` event (the profiler writes its report there); without one they
 * end the process as glibc's do.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

#include <string.h>

#include "bind.h"
#include "rwshim.h"
#include "shim.h"

struct ls_events ls_events;

int ls_observe_setup(char *err, size_t errlen)
{
	struct ls_observe ob = {
	    .algo = ls_g.map ? ls_map_default_name() : ls_g.algo->name,
	    .passthrough = ls_g.passthrough,
	    .rwalgo = ls_rwg.map ? ls_rwmap_default_name() : ls_rwg.rw->name,
	    .spinalgo = ls_rwg.spin->name,
	    .rw_passthrough = !ls_rwg.rw_on,
	    .spin_passthrough = !ls_rwg.spin_on,
	    .algo_of = ls_g.map ? ls_map_algo_of : NULL,
	    .rule_of = ls_g.map ? ls_map_rule_of : NULL,
	    .rw_algo_of = ls_rwg.map ? ls_rwmap_algo_of : NULL,
	    .rw_rule_of = ls_rwg.map ? ls_rwmap_rule_of : NULL,
	    .mutex = {ls_g.lock, ls_g.trylock, ls_g.unlock, ls_g.timedlock},
	    .glibc = ls_real,
	};
	/* the rwlock and spinlock functions an observer may wrap: the checked
	 * ones, which need no swap when a thread becomes asynchronously
	 * cancelable (rwlock.c) */
	struct ls_rwlock_ops rw;
	struct ls_spin_ops spin;
	ls_rw_entries(&rw, false);
	ls_spin_entries(&spin, false);
	ob.rwlock = rw;
	ob.spin = spin;
	if (ls_observe_install(&ob, err, errlen))
		return -1;
	ls_g.lock = ob.mutex.lock;
	ls_g.trylock = ob.mutex.trylock;
	ls_g.unlock = ob.mutex.unlock;
	ls_g.timedlock = ob.mutex.timedlock;
	ls_real = ob.glibc;
	ls_events = ob.ev;
	/* untouched: the fast functions (function pointers compared as bytes:
	 * the structs hold nothing else) */
	if (!memcmp(&ob.rwlock, &rw, sizeof rw))
		ls_rw_entries(&ob.rwlock, true);
	if (!memcmp(&ob.spin, &spin, sizeof spin))
		ls_spin_entries(&ob.spin, true);
	ls_rw_publish(&ob.rwlock);
	ls_spin_publish(&ob.spin);
	return 0;
}

static __attribute__((noreturn)) void exit_now(int status)
{
	if (ls_events.exiting)
		ls_events.exiting();
	for (;;)
		syscall(SYS_exit_group, status);
}

LS_EXPORT __attribute__((noreturn, symver("_exit@@GLIBC_2.2.5"))) void ls__exit(int status)
{
	exit_now(status);
}

LS_EXPORT __attribute__((noreturn, symver("_Exit@@GLIBC_2.2.5"))) void ls__Exit(int status)
{
	exit_now(status);
}
