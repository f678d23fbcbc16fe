/*
 * fail.h - how a unit test fails: one line on stdout, FAIL_PREFIX (or what
 * the test has since pointed fail_prefix at) and the message, then _exit(1):
 * no exit handlers run, since other threads may be inside a lock.
 */
#ifndef LS_UNIT_FAIL_H
#define LS_UNIT_FAIL_H

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#ifndef FAIL_PREFIX
#define FAIL_PREFIX "FAIL "
#endif
static const char *fail_prefix = FAIL_PREFIX;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn, unused));
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(fail_prefix, stdout);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	_exit(1);
}

/* From here on, failures name the algorithm: FAIL_PREFIX "algo=NAME: ". */
static inline void fail_algo(const char *name)
{
	static char prefix[192];
	snprintf(prefix, sizeof prefix, FAIL_PREFIX "algo=%s: ", name);
	fail_prefix = prefix;
}

#endif
