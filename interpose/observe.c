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

#include "shim.h"

struct ls_events ls_events;

int ls_observe_setup(char *err, size_t errlen)
{
	struct ls_observe ob = {
	    .algo = ls_g.map ? ls_map_default_name() : ls_g.algo->name,
	    .passthrough = ls_g.passthrough,
	    .algo_of = ls_g.map ? ls_map_algo_of : NULL,
	    .rule_of = ls_g.map ? ls_map_rule_of : NULL,
	    .mutex = {ls_g.lock, ls_g.trylock, ls_g.unlock, ls_g.timedlock},
	    .glibc = ls_real,
	};
	if (ls_observe_install(&ob, err, errlen))
		return -1;
	ls_g.lock = ob.mutex.lock;
	ls_g.trylock = ob.mutex.trylock;
	ls_g.unlock = ob.mutex.unlock;
	ls_g.timedlock = ob.mutex.timedlock;
	ls_real = ob.glibc;
	ls_events = ob.ev;
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
