/*
 * proctask.h - what /proc says about one of our threads: asleep in futex(2),
 * and how many times it has gone to sleep (voluntary context switches).
 * For the unit tests that check who sleeps and who is woken.
 */
#ifndef LS_TEST_PROCTASK_H
#define LS_TEST_PROCTASK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>

/* Reads /proc/self/task/TID/FILE into buf; returns false if it cannot. */
static inline bool proctask_read(pid_t tid, const char *file, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return true;
}

/* The thread is asleep ('S') in futex(2). */
static inline bool proctask_in_futex(pid_t tid)
{
	char buf[512];
	if (!proctask_read(tid, "stat", buf, sizeof buf))
		return false;
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] != 'S')
		return false;
	if (!proctask_read(tid, "syscall", buf, sizeof buf))
		return false;
	return strtol(buf, NULL, 10) == SYS_futex;
}

/* voluntary_ctxt_switches: bumped each time the thread goes to sleep (a
 * sched_yield does not count). -1 if unreadable. */
static inline long proctask_sleeps(pid_t tid)
{
	char buf[2048];
	if (!proctask_read(tid, "status", buf, sizeof buf))
		return -1;
	char *p = strstr(buf, "\nvoluntary_ctxt_switches:");
	return p ? strtol(p + strlen("\nvoluntary_ctxt_switches:"), NULL, 10) : -1;
}

#endif
