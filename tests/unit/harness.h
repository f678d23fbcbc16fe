/*
 * harness.h - what the generic validators (stress.c for mutexes, rwstress.c
 * for reader-writer locks) share: option values, tunables, per-thread
 * random streams, and async-signal-safe output for their hang reports.
 *
 * The including file defines HARNESS_NAME ("stress", "rwstress"), the
 * prefix of its usage errors: one line on stderr, exit 2.
 */
#ifndef LS_UNIT_HARNESS_H
#define LS_UNIT_HARNESS_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"

static __attribute__((noreturn, format(printf, 1, 2))) void usage_error(const char *fmt, ...)
{
	char msg[1400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", HARNESS_NAME, msg);
	exit(2);
}

/* An unsigned decimal option value in [lo, hi]; opt is the letter ("t") or
 * the variable's name. */
static unsigned long number(const char *opt, const char *s, unsigned long lo, unsigned long hi)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || errno || *end || v < lo || v > hi)
		usage_error("%s%s: invalid value '%s' (valid: %lu..%lu)", opt[1] ? "" : "-", opt, s, lo, hi);
	return (unsigned long)v;
}

/* The index of s among the n names. */
static int choose(const char *opt, const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	char valid[128] = "";
	for (int i = 0; i < n; i++)
		snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", i ? ", " : "", names[i]);
	usage_error("-%s: unknown value '%s' (valid: %s)", opt, s, valid);
}

/* Tunables from the environment, as the shim reads them. */
static void apply_params(const struct ls_param *p)
{
	for (; p && p->env; p++) {
		const char *v = getenv(p->env);
		char err[256];
		uint64_t x;
		if (!v)
			continue;
		if (ls_param_parse(p, v, &x, err, sizeof err))
			usage_error("%s", err);
		*p->value = x;
	}
}

/* splitmix64 of (seed, i): distinct, non-zero xorshift64 states. */
static uint64_t seed_stream(uint64_t seed, unsigned i)
{
	uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (z ^ (z >> 31)) | 1;
}

/* Output for a signal handler (write(2) only). */
static void put(const char *s)
{
	if (write(2, s, strlen(s)) < 0) {
	}
}

static void put_u(unsigned long v)
{
	char b[24];
	int i = sizeof b;
	b[--i] = '\0';
	do
		b[--i] = (char)('0' + v % 10);
	while (v /= 10);
	put(b + i);
}

#endif
