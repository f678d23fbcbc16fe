/*
 * lockswap-profile - `lockswap profile`: run a program under the contention
 * profiler (profile/profile.c).
 *
 *   lockswap profile [-a ALGO] [-m RULES | --config FILE] [-r RWALGO] [--spinalgo ALGO]
 *                    [-w WAIT] [-s SPIN] [-o FILE] [--frames N] [--sample N] [--top N] [--] PROG [ARGS...]
 *
 * It sets the LOCKSWAP_PROFILE variables and runs `lockswap -a ALGO -- PROG`
 * (the lockswap beside it, or $LOCKSWAP_COMMAND), so the algorithm, the
 * library and every check are lockswap's own. The default algorithm is
 * pthread: glibc's mutex, so the program is profiled as it is. Bad options:
 * one line and exit status 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage[] =
    "usage: lockswap profile [-a ALGO] [-m RULES | --config FILE] [-r RWALGO] [--spinalgo ALGO]\n"
    "                        [-w WAIT] [-s SPIN] [-o FILE] [--frames N] [--sample N] [--top N]\n"
    "                        [--] PROG [ARGS...]\n"
    "\n"
    "Runs PROG under lockswap's contention profiler and prints, when it exits, the\n"
    "mutexes (condvars, rwlocks, spinlocks) that cost it the most waiting, with where\n"
    "each was created and the call sites (stacks) of its contended acquisitions.\n"
    "\n"
    "  -a, --algo ALGO   lock algorithm (default pthread: glibc's own mutex, the program\n"
    "                    as it is); `lockswap --list` shows the others\n"
    "  -m, --map RULES   an algorithm per mutex (LOCKSWAP_ALGO_MAP; see lockswap --list);\n"
    "                    the table and the JSON name each mutex's algorithm and rule\n"
    "      --config FILE the same rules from a file (LOCKSWAP_CONFIG)\n"
    "  -r, --rwalgo ALGO reader-writer lock algorithm (LOCKSWAP_RWALGO; default pthread:\n"
    "                    glibc's own rwlock)\n"
    "      --spinalgo ALGO  spinlock algorithm (LOCKSWAP_SPINALGO; default pthread)\n"
    "  -w, --wait WAIT   waiting policy for lockswap's algorithms: spin, yield, park\n"
    "  -s, --spin N      spins before yielding or parking\n"
    "  -o, --out FILE    also save the profile: JSON, or CSV if FILE ends in .csv\n"
    "                    (LOCKSWAP_PROFILE_OUT); `lockswap report FILE` re-renders a\n"
    "                    JSON profile with file:line; fork children and programs PROG\n"
    "                    runs write FILE.PID\n"
    "      --frames N    frames per call site, 1..64 (LOCKSWAP_PROFILE_FRAMES; default 8)\n"
    "      --sample N    call site of 1 in N contended acquisitions (LOCKSWAP_PROFILE_SAMPLE;\n"
    "                    default 1: every one; counts and times are always exact)\n"
    "      --top N       mutexes (and of each other kind) in the table on stderr\n"
    "                    (LOCKSWAP_PROFILE_TOP; default 10; 0: no table)\n"
    "  -h, --help        this text\n"
    "\n"
    "Same as: LOCKSWAP_PROFILE=1 lockswap -a ALGO [-r RWALGO] ... -- PROG ARGS...\n"
    "Exit status: PROG's; 2 for a bad option; 127 if PROG cannot be run.\n";

static __attribute__((noreturn)) void bad(const char *what, const char *arg, const char *valid)
{
	fprintf(stderr, "lockswap profile: %s '%s'", what, arg);
	if (valid)
		fprintf(stderr, " (valid: %s)", valid);
	fputc('\n', stderr);
	exit(2);
}

static const char *number(const char *opt, const char *v, unsigned long long lo, unsigned long long hi)
{
	if (!cli_unsigned(v, lo, hi)) {
		char what[64], valid[64];
		snprintf(what, sizeof what, "%s: invalid value", opt);
		snprintf(valid, sizeof valid, "%llu..%llu", lo, hi);
		bad(what, v, valid);
	}
	return v;
}

int main(int argc, char **argv)
{
	enum { OPT_FRAMES = 256, OPT_SAMPLE, OPT_TOP };
	static const struct option opts[] = {
	    CLI_RUN_LONG,
	    {"out", required_argument, NULL, 'o'},
	    {"frames", required_argument, NULL, OPT_FRAMES},
	    {"sample", required_argument, NULL, OPT_SAMPLE},
	    {"top", required_argument, NULL, OPT_TOP},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_run run = {.algo = "pthread"};
	int c;
	opterr = 0;
	/* argv[0] may be the full path lockswap ran us by */
	while ((c = getopt_long(argc, argv, "+" CLI_RUN_SHORT "o:h", opts, NULL)) != -1) {
		if (cli_run_option(&run, c, optarg))
			continue;
		switch (c) {
		case 'o':
			if (!*optarg)
				bad("--out: invalid value", optarg, "a file name");
			setenv("LOCKSWAP_PROFILE_OUT", optarg, 1);
			break;
		case OPT_FRAMES:
			setenv("LOCKSWAP_PROFILE_FRAMES", number("--frames", optarg, 1, 64), 1);
			break;
		case OPT_SAMPLE:
			setenv("LOCKSWAP_PROFILE_SAMPLE", number("--sample", optarg, 1, 1000000000), 1);
			break;
		case OPT_TOP:
			setenv("LOCKSWAP_PROFILE_TOP", number("--top", optarg, 0, 1000000), 1);
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default: {
			char opt[64];
			bad("bad option or missing argument:", cli_refused(argv, opt, sizeof opt), NULL);
		}
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "lockswap profile: no program to run (see lockswap profile --help)\n");
		return 2;
	}

	char cmd[PATH_MAX];
	const char *env = getenv("LOCKSWAP_COMMAND");
	if (env && *env) {
		snprintf(cmd, sizeof cmd, "%s", env);
	} else {
		char self[PATH_MAX];
		const char *dir = cli_self_dir(self, sizeof self);
		if (!dir) {
			fprintf(stderr, "lockswap profile: cannot find my own directory: %s\n",
				strerror(errno));
			return 2;
		}
		/* beside it (build/), else the installed one: this program is
		 * PREFIX/libexec/lockswap/lockswap-profile */
		snprintf(cmd, sizeof cmd, "%s/lockswap", dir);
		if (access(cmd, X_OK) != 0)
			snprintf(cmd, sizeof cmd, "%s/../../bin/lockswap", dir);
	}
	setenv("LOCKSWAP_PROFILE", "1", 1);

	char **args = calloc((size_t)argc + 24, sizeof *args);
	if (!args) {
		fprintf(stderr, "lockswap profile: out of memory\n");
		return 2;
	}
	int k = 0;
	args[k++] = cmd;
	args[k++] = "-a";
	args[k++] = (char *)run.algo;
	if (run.map) {
		args[k++] = "-m";
		args[k++] = (char *)run.map;
	}
	if (run.config) {
		args[k++] = "--config";
		args[k++] = (char *)run.config;
	}
	if (run.rwalgo) {
		args[k++] = "-r";
		args[k++] = (char *)run.rwalgo;
	}
	if (run.spinalgo) {
		args[k++] = "--spinalgo";
		args[k++] = (char *)run.spinalgo;
	}
	if (run.wait) {
		args[k++] = "-w";
		args[k++] = (char *)run.wait;
	}
	if (run.spin) {
		args[k++] = "-s";
		args[k++] = (char *)run.spin;
	}
	args[k++] = "--";
	for (int i = optind; i < argc; i++)
		args[k++] = argv[i];
	args[k] = NULL;
	execv(cmd, args);
	fprintf(stderr, "lockswap profile: cannot run %s: %s\n", cmd, strerror(errno));
	return 127;
}
