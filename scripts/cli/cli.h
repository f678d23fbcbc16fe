/*
 * cli.h - the option handling that the lockswap commands share (lockswap.c,
 * lockswap-profile.c, lockswap-report.c): the options that choose how a
 * program runs (-a/-m/--config/-w/-s/-r/--spinalgo: `lockswap` applies
 * them, `lockswap profile` passes them on to it), unsigned values in a
 * range, the option that getopt refused, and the folder the command runs
 * from. (-m/--config: an algorithm per mutex, LOCKSWAP_ALGO_MAP /
 * LOCKSWAP_CONFIG.) Each program keeps its own
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

/* How PROG runs: -a/--algo, -m/--map, --config, -w/--wait, -s/--spin,
 * -r/--rwalgo, --spinalgo; NULL: not given. */
struct cli_run {
	const char *algo, *map, *config, *wait, *spin, *rwalgo, *spinalgo;
};
#define CLI_RUN_SHORT "a:m:w:s:r:"
/* the long-only ones' getopt values, beyond the commands' own */
#define CLI_OPT_CONFIG 0x1000
#define CLI_OPT_SPINALGO 0x1001
#define CLI_RUN_LONG                                                                                         \
	{"algo", required_argument, NULL, 'a'}, {"map", required_argument, NULL, 'm'},                       \
	    {"config", required_argument, NULL, CLI_OPT_CONFIG}, {"wait", required_argument, NULL, 'w'},     \
	    {"spin", required_argument, NULL, 's'}, {"rwalgo", required_argument, NULL, 'r'},                \
	{                                                                                                    \
		"spinalgo", required_argument, NULL, CLI_OPT_SPINALGO                                        \
	}

/* Takes getopt's option c (with arg) into r if it is one of the above. */
static inline bool cli_run_option(struct cli_run *r, int c, const char *arg)
{
	switch (c) {
	case 'a':
		r->algo = arg;
		return true;
	case 'm':
		r->map = arg;
		return true;
	case CLI_OPT_CONFIG:
		r->config = arg;
		return true;
	case 'w':
		r->wait = arg;
		return true;
	case 's':
		r->spin = arg;
		return true;
	case 'r':
		r->rwalgo = arg;
		return true;
	case CLI_OPT_SPINALGO:
		r->spinalgo = arg;
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
