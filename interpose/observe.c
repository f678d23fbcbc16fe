/*
 * observe.c - the shim's side of observe.h, at the bottom of interpose/: it
 * finds the observers (LS_REGISTER_OBSERVER) and runs their installation on
 * the struct config.c fills in, and keeps the event hooks (ls_events) for
 * the entry points to call.
 *
 * _exit and _Exit are interposed here only to give an observer its
 * `exiting` event (the profiler writes its report there); without one they
 * end the process as glibc's do.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

#include "observe.h"

struct ls_events ls_events;

/* The observers (LS_REGISTER_OBSERVER). */
extern const ls_observe_install_fn __start_ls_observers[] __attribute__((weak, visibility("hidden")));
extern const ls_observe_install_fn __stop_ls_observers[] __attribute__((weak, visibility("hidden")));

int ls_observe_run(struct ls_observe *ob, char *err, size_t errlen)
{
	for (const ls_observe_install_fn *f = __start_ls_observers; f && f < __stop_ls_observers; f++)
		if ((*f)(ob, err, errlen))
			return -1;
	return 0;
}

static __attribute__((noreturn)) void exit_now(int status)
{
	if (ls_events.exiting)
		ls_events.exiting();
	for (;;)
		syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"), noreturn, symver("_exit@@GLIBC_2.2.5"))) void ls__exit(int status)
{
	exit_now(status);
}

__attribute__((visibility("default"), noreturn, symver("_Exit@@GLIBC_2.2.5"))) void ls__Exit(int status)
{
	exit_now(status);
}
