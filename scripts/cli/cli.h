/*
 * cli.h - the option handling that the lockswap commands share (lockswap.c,
 * lockswap-profile.c, lockswap-report.c): the options that choose how a
 * program runs (-a/-w/-s: `lockswap` applies them, `lockswap profile` passes
 * them on to it), unsigned values in a range, the option that getopt
 * refused, and the folder the command runs from. Each program keeps its own
 * messages and exit statuses (README and the tests quote them).
 */
#ifndef LS_CLI_H
#define LS_CLI_H

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* How PROG runs: -a/--algo, -w/--wait, -s/--spin; NULL: not given. */
struct cli_run {
	const char *algo, *wait, *spin;
};
#define CLI_RUN_SHORT "a:w:s:"
#define CLI_RUN_LONG                                                                                         \
	{"algo", required_argument, NULL, 'a'}, {"wait", required_argument, NULL, 'w'},                      \
	{                                                                                                    \
		"spin", required_argument, NULL, 's'                                                         \
	}

/* Takes getopt's option c (with arg) into r if it is one of the above. */
static inline bool cli_run_option(struct cli_run *r, int c, const char *arg)
{
	switch (c) {
	case 'a':
		r->algo = arg;
		return true;
	case 'w':
		r->wait = arg;
		return true;
	case 's':
		r->spin = arg;
		return true;
	default:
		return false;
	}
}

/* True if s is an unsigned decimal integer in lo..hi. */
static inline bool cli_unsigned(const char *s, unsigned long long lo, unsigned long long hi)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	return *s && !*end && !errno && s[0] != '-' && v >= lo && v <= hi;
}

/* The option getopt_long (with opterr = 0) has just refused: "-x", or the
 * argument as written (a long option, or one missing its value). */
static inline const char *cli_refused(char **argv, char *buf, size_t len)
{
	if (optopt && optopt < 256)
		snprintf(buf, len, "-%c", optopt);
	else
		snprintf(buf, len, "%s", argv[optind - 1]);
	return buf;
}

/* The folder of this executable (buf holds PATH_MAX bytes), or NULL. */
static inline char *cli_self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return dirname(buf);
}

#endif
