/*
 * lockswap - run a program with liblockswap preloaded, or list algorithms.
 *
 *   lockswap --list                       algorithms, capabilities, descriptions
 *   lockswap --names [--cap CAP]... [--wrap W]  names only, one per line
 *   lockswap --names rwlock|spin [--cap CAP]...   the same for the other families
 *   lockswap --topology[=table]           clusters of the hierarchical locks
 *   lockswap [-a ALGO] [-m RULES | --config FILE] [-r RWALGO] [--spinalgo ALGO] [-w WAIT] [-s SPIN]
 *            [-v] [--stats] [--] PROG [ARGS...]
 *   lockswap SUBCOMMAND [ARGS...]         compare, profile, report
 *
 * A subcommand is a program of its own, lockswap-SUBCOMMAND, installed in the
 * same directory as this one (build/ or PREFIX/bin); each part of the tree
 * that adds one adds its program there, and this file only dispatches. It
 * runs with LOCKSWAP_COMMAND set to this program's path, so that it can run
 * programs through `lockswap` in turn.
 *
 * The algorithm list is linked in from the same sources as the library.
 * The library is found through LOCKSWAP_LIB, next to this executable (the
 * build tree), or in ../lib (an installed tree). Bad options: one line on
 * stderr and exit status 2; a program that cannot be run: status 127.
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
#include "lock.h"
#include "hier/topo.h"
#include "rwlock/rwlock.h"
#include "spin/spinlock.h"
#include "wrap/wrap.h"

static const char usage[] =
    "usage: lockswap [-a ALGO] [-m RULES | --config FILE] [-r RWALGO] [--spinalgo ALGO] [-w WAIT]\n"
    "                [-s SPIN] [-v] [--stats] [--] PROG [ARGS...]\n"
    "       lockswap compare|profile|report [ARGS...]   (lockswap SUBCOMMAND --help)\n"
    "       lockswap --list\n"
    "       lockswap --names [--cap CAP]... [--wrap WRAPPER]\n"
    "       lockswap --names [mutex|rwlock|spin] [--cap CAP]...\n"
    "       lockswap --topology[=table]\n"
    "\n"
    "Runs PROG with liblockswap.so preloaded, so that every pthread mutex in it\n"
    "uses the lock algorithm ALGO (and every rwlock RWALGO, every spinlock the\n"
    "--spinalgo one).\n"
    "\n"
    "  -a, --algo ALGO    lock algorithm (LOCKSWAP_ALGO; default ttas); see --list\n"
    "  -m, --map RULES    an algorithm per mutex or rwlock, by where it is created\n"
    "                     (LOCKSWAP_ALGO_MAP): PATTERN=ALGO,... with FUNCTION, FILE:LINE,\n"
    "                     MODULE.so or * (the rest; without it, -a's or -r's algorithm); an\n"
    "                     rwlock algorithm's rule applies to rwlocks, a mutex algorithm's to\n"
    "                     mutexes: -m 'cache_get=mcs-rw+bravo,*=auto'; see --list\n"
    "      --config FILE  the same rules from a file, one or more per line, # comments\n"
    "                     (LOCKSWAP_CONFIG)\n"
    "  -r, --rwalgo ALGO  reader-writer lock algorithm, or NAME+WRAPPER (LOCKSWAP_RWALGO;\n"
    "                     default pthread, glibc's own)\n"
    "      --spinalgo ALGO  spinlock algorithm (LOCKSWAP_SPINALGO; default pthread)\n"
    "  -w, --wait WAIT    waiting policy: spin, yield or park (LOCKSWAP_WAIT; default park)\n"
    "  -s, --spin N       spins before yielding or parking (LOCKSWAP_SPIN; default 256)\n"
    "  -v, --verbose      report the configuration and node statistics on stderr\n"
    "      --stats        count queue nodes in use and report them at exit\n"
    "      --list         list the algorithms with capabilities and descriptions\n"
    "      --names [FAMILY]  list algorithm names only, one per line: mutex (default),\n"
    "                     rwlock (every selectable name, NAME+WRAPPER included) or spin\n"
    "      --cap CAP      with --names: only algorithms with capability CAP\n"
    "                     (fifo, timeout, qnode, hier, passthrough, or lock = not passthrough;\n"
    "                     rwlock also: kind, exclusive, wrapper)\n"
    "      --wrap WRAPPER with --names: the compositions NAME+WRAPPER instead (e.g. gcr:\n"
    "                     mcs+gcr, ...), every one WRAPPER accepts, filtered by --cap\n"
    "      --topology     the clusters the hierarchical locks would use here (levels\n"
    "                     found by hwloc, cpu -> cluster table), following LOCKSWAP_CLUSTER\n"
    "                     and LOCKSWAP_TOPOLOGY; =table: only the cluster of each CPU\n"
    "  -h, --help         this text\n"
    "\n"
    "Algorithm tunables are environment variables; --list shows them.\n"
    "Exit status: PROG's, 2 for a bad option, 127 if PROG cannot be run.\n";

static __attribute__((noreturn)) void bad(const char *fmt, const char *arg, const char *valid)
{
	fprintf(stderr, "lockswap: ");
	fprintf(stderr, fmt, arg);
	if (valid)
		fprintf(stderr, " (valid: %s)", valid);
	fprintf(stderr, "\n");
	exit(2);
}

static const struct {
	const char *name;
	unsigned bit;
} caps[] = {
    {"fifo", LS_CAP_FIFO}, {"timeout", LS_CAP_TIMEOUT},		{"qnode", LS_CAP_QNODE},
    {"hier", LS_CAP_HIER}, {"passthrough", LS_CAP_PASSTHROUGH}, {"lock", 0}, /* special: not passthrough */
};

/* The wrappers section of --list: rows start with "+NAME", so that no tool
 * that reads the algorithm rows takes them for algorithms. */
static void list_wrappers(void)
{
	if (!ls_wrap_count())
		return;
	printf("\nWrappers: LOCKSWAP_ALGO=NAME+WRAPPER (e.g. mcs+%s) wraps any algorithm but pthread; the\n"
	       "  composition has NAME's capabilities but fifo, NAME's tunables and the wrapper's:\n",
	       ls_wrap_at(0)->name);
	for (size_t i = 0; i < ls_wrap_count(); i++) {
		const struct ls_wrap *w = ls_wrap_at(i);
		printf("+%-9s %s\n", w->name, w->desc);
		for (const struct ls_param *p = w->params; p && p->env; p++)
			printf("%-10s   %s=%llu: %s\n", "", p->env, (unsigned long long)*p->value, p->desc);
	}
}

/* The reader-writer family, rows "rwlock:NAME CAPS DESC": a name of its
 * own in the list (and in lockswap(7), made from it), which the mutex
 * rows' readers do not take for a mutex algorithm. */
static void list_rw(void)
{
	char c[128];
	printf("\nReader-writer locks (LOCKSWAP_RWALGO, -r; default pthread; NAME+WRAPPER composes a "
	       "wrapper):\n");
	for (size_t i = 0; i < ls_rwalgo_count(); i++) {
		const struct ls_rwalgo *a = ls_rwalgo_at(i);
		char name[64];
		snprintf(name, sizeof name, "rwlock:%s%s", a->bind ? "+" : "", a->name);
		printf("%-17s %-24s %s\n", name, ls_rwcaps_string(a->caps, c, sizeof c), a->desc);
		if (a->policy)
			printf("%-17s %-24s   policy: %s\n", "", "", a->policy);
		for (const struct ls_param *p = a->params; p && p->env; p++)
			printf("%-17s %-24s   %s=%llu: %s\n", "", "", p->env, (unsigned long long)*p->value,
			       p->desc);
	}
	printf(
	    "Preference (LOCKSWAP_RWPOLICY): kind (default) gives every rwlock its kind's, as glibc: reader\n"
	    "  preference for the default kind, writer preference for\n"
	    "  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, under every algorithm but the exclusive ones\n"
	    "  (one reader at a time, by design); algorithm runs each algorithm's own policy (policy:) on\n"
	    "  default-kind locks, where a reader that waits for another thread's reader may deadlock.\n"
	    "Capabilities of rwlocks: kind = its own policy is the kind's; exclusive = readers exclude\n"
	    "  each other; timeout = native timed reads (timed writes wait in every algorithm; the others\n"
	    "  poll tryrdlock for timed reads).\n");
}

/* The spinlock family, rows "spin:NAME CAPS DESC": the mutex algorithms
 * that fit 4 bytes, and the spin-only ones. */
static void list_spin(void)
{
	char c[128];
	printf(
	    "\nSpinlocks (LOCKSWAP_SPINALGO, --spinalgo; default pthread): algorithms whose state fits the\n"
	    "4 bytes of a pthread_spinlock_t:\n");
	for (size_t i = 0; i < ls_spinalgo_count(); i++) {
		const struct ls_algo *a = ls_spinalgo_at(i);
		char name[64];
		snprintf(name, sizeof name, "spin:%s", a->name);
		printf("%-17s %-24s %s\n", name, ls_caps_string(a->caps, c, sizeof c), a->desc);
	}
	printf("Mutex algorithms that do not fit:");
	const char *sep = " ";
	for (size_t i = 0; i < ls_algo_count(); i++)
		if (!ls_spin_fits(ls_algo_at(i)) && !(ls_algo_at(i)->caps & LS_CAP_PASSTHROUGH)) {
			printf("%s%s", sep, ls_algo_at(i)->name);
			sep = ", ";
		}
	printf("\n");
}

static void list(void)
{
	char c[128];
	printf("%-10s %-24s %s\n", "NAME", "CAPABILITIES", "DESCRIPTION");
	for (size_t i = 0; i < ls_algo_count(); i++) {
		const struct ls_algo *a = ls_algo_at(i);
		printf("%-10s %-24s %s\n", a->name, ls_caps_string(a->caps, c, sizeof c), a->desc);
		for (const struct ls_param *p = a->params; p && p->env; p++)
			printf("%-10s %-24s   %s=%llu: %s\n", "", "", p->env, (unsigned long long)*p->value,
			       p->desc);
	}
	printf("\nWaiting policies (LOCKSWAP_WAIT): spin, yield, park (default); algorithms without\n"
	       "\"timeout\" implement timedlock by polling trylock under the waiting policy.\n");
	list_wrappers();
	list_rw();
	list_spin();
	/* indented, so that no reader of the list takes a line for an
	 * algorithm row or a tunable (man/algorithms.awk) */
	printf("\nAn algorithm per mutex or rwlock (LOCKSWAP_ALGO_MAP, lockswap -m; or a file:\n"
	       "LOCKSWAP_CONFIG):\n"
	       "  rules PATTERN=ALGO, separated by commas. ALGO decides the family: a mutex\n"
	       "  algorithm's rule applies to mutexes, an rwlock algorithm's to rwlocks, pthread's\n"
	       "  to both; spinlocks take none (4 bytes: no room for a binding). A lock takes the\n"
	       "  first rule of its family that names a frame of the stack that created it\n"
	       "  (pthread_*_init, or the first use of a static initialiser), else its family's *\n"
	       "  (else LOCKSWAP_ALGO, LOCKSWAP_RWALGO):\n"
	       "    FUNCTION=ALGO   a function (its symbol, no debug information needed)\n"
	       "    FILE:LINE=ALGO  a call at that line (needs debug information or a debug file)\n"
	       "    MODULE=ALGO     code of a library (a name with .so) or a program (a path with /)\n"
	       "    MODULE+0xOFFSET=ALGO  the call that returns there (a stripped program's frame)\n"
	       "    *=ALGO          every other lock of ALGO's family\n"
	       "  pthread as ALGO: glibc's own lock for those mutexes and rwlocks. Examples:\n"
	       "    lockswap -m 'queue_push=mcs-tp,libfoo.so=ttas,*=pthread' -- ./app\n"
	       "    lockswap -m 'cache_get=mcs-rw+bravo,*=auto' -- ./app  (rwlocks made in\n"
	       "      cache_get: mcs-rw+bravo; other rwlocks: LOCKSWAP_RWALGO's; mutexes: auto)\n"
	       "  lockswap report --map proposes rules for a profile's most contended mutexes\n"
	       "  and rwlocks.\n");
}

/* The capabilities of a selectable name, as its composition would have
 * them (rwregistry.c: the wrapper's, plus the inner's it keeps), without
 * composing it: a process composes a wrapper with one inner algorithm only,
 * so composing every NAME+WRAPPER here would list the first alone. */
static bool rw_caps(const char *n, unsigned *caps)
{
	const char *plus = strchr(n, '+');
	const struct ls_rwalgo *inner = NULL, *w = NULL;
	for (size_t k = 0; k < ls_rwalgo_count(); k++) {
		const struct ls_rwalgo *a = ls_rwalgo_at(k);
		if (!plus && !strcmp(a->name, n))
			return *caps = a->caps, true;
		if (plus && strlen(a->name) == (size_t)(plus - n) && !strncmp(a->name, n, (size_t)(plus - n)))
			inner = a;
		if (plus && !strcmp(a->name, plus + 1))
			w = a;
	}
	if (!inner || !w)
		return false;
	*caps = w->caps | (inner->caps & w->keep_caps);
	return true;
}

static void rw_names(unsigned want, int want_lock)
{
	char buf[160];
	const char *n;
	for (size_t i = 0; (n = ls_rwalgo_selectable(i, buf, sizeof buf)); i++) {
		unsigned caps;
		if (!rw_caps(n, &caps) || (caps & want) != want)
			continue;
		if (want_lock && (caps & LS_RWCAP_PASSTHROUGH))
			continue;
		printf("%s\n", n);
	}
}

static void spin_names(unsigned want, int want_lock)
{
	for (size_t i = 0; i < ls_spinalgo_count(); i++) {
		const struct ls_algo *a = ls_spinalgo_at(i);
		if ((a->caps & want) != want || (want_lock && (a->caps & LS_CAP_PASSTHROUGH)))
			continue;
		printf("%s\n", a->name);
	}
}

/* `lockswap --names [--cap CAP]... [--wrap W]`: bases, or their compositions
 * BASE+W that W accepts (ls_algo_find composes them; their caps are the
 * composition's). */
static void names(unsigned want, int want_lock, const char *wrap)
{
	char name[256];
	for (size_t i = 0; i < ls_algo_count(); i++) {
		const struct ls_algo *a = ls_algo_at(i);
		if (wrap) {
			snprintf(name, sizeof name, "%s+%s", a->name, wrap);
			if (!(a = ls_algo_find(name)))
				continue;
		}
		if ((a->caps & want) != want)
			continue;
		if (want_lock && (a->caps & LS_CAP_PASSTHROUGH))
			continue;
		printf("%s\n", a->name);
	}
}

/* `lockswap --topology`: what the hierarchical locks would use here. */
static int topology(bool table_only)
{
	char err[1024];
	if (ls_topo_setup(getenv("LOCKSWAP_CLUSTER"), getenv("LOCKSWAP_TOPOLOGY"), err, sizeof err)) {
		fprintf(stderr, "lockswap: %s\n", err);
		return 2;
	}
	ls_topo_print(1, table_only);
	return 0;
}

static char *find_lib(void)
{
	static char path[PATH_MAX + 32];
	const char *env = getenv("LOCKSWAP_LIB");
	if (env) {
		if (access(env, R_OK) != 0)
			bad("LOCKSWAP_LIB: cannot read '%s'", env, NULL);
		return realpath(env, NULL);
	}
	char exe[PATH_MAX];
	char *dir = cli_self_dir(exe, sizeof exe);
	if (!dir) {
		fprintf(stderr, "lockswap: cannot find my own executable: %s\n", strerror(errno));
		exit(2);
	}
	snprintf(path, sizeof path, "%s/liblockswap.so", dir);
	if (access(path, R_OK) == 0)
		return path;
	snprintf(path, sizeof path, "%s/../lib/liblockswap.so", dir);
	if (access(path, R_OK) == 0)
		return realpath(path, NULL);
	fprintf(stderr,
		"lockswap: cannot find liblockswap.so next to %s or in %s/../lib (set LOCKSWAP_LIB)\n", dir,
		dir);
	exit(2);
}

static const char *const subcommands[] = {"compare", "profile", "report"};

/* `lockswap SUB ARGS...`: runs lockswap-SUB beside this program. */
static int subcommand(int argc, char **argv)
{
	char prog[PATH_MAX], self[PATH_MAX], exe[PATH_MAX];
	const char *dir = cli_self_dir(exe, sizeof exe);
	(void)argc;
	if (!dir)
		bad("cannot find my own directory to run '%s'", argv[1], NULL);
	snprintf(self, sizeof self, "%s/lockswap", dir);
	snprintf(prog, sizeof prog, "%s/lockswap-%s", dir, argv[1]);
	if (access(prog, X_OK) != 0) {
		fprintf(stderr, "lockswap: subcommand '%s' is not installed (no %s)\n", argv[1], prog);
		exit(2);
	}
	setenv("LOCKSWAP_COMMAND", self, 1);
	argv[1] = prog;
	execv(prog, argv + 1);
	fprintf(stderr, "lockswap: cannot run %s: %s\n", prog, strerror(errno));
	return 127;
}

int main(int argc, char **argv)
{
	for (size_t i = 0; argc > 1 && i < sizeof subcommands / sizeof subcommands[0]; i++)
		if (!strcmp(argv[1], subcommands[i]))
			return subcommand(argc, argv);

	enum { OPT_LIST = 256, OPT_NAMES, OPT_CAP, OPT_STATS, OPT_TOPOLOGY, OPT_WRAP };
	static const struct option opts[] = {
	    CLI_RUN_LONG,
	    {"verbose", no_argument, NULL, 'v'},
	    {"stats", no_argument, NULL, OPT_STATS},
	    {"list", no_argument, NULL, OPT_LIST},
	    {"names", no_argument, NULL, OPT_NAMES},
	    {"cap", required_argument, NULL, OPT_CAP},
	    {"wrap", required_argument, NULL, OPT_WRAP},
	    {"topology", optional_argument, NULL, OPT_TOPOLOGY},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_run run = {0};
	const char *wrap = NULL, *family = "mutex";
	int verbose = 0, stats = 0, do_list = 0, do_names = 0, want_lock = 0;
	unsigned want = 0;
	const char *capnames[16];
	size_t ncapnames = 0;
	char buf[1400];

	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+" CLI_RUN_SHORT "vh", opts, NULL)) != -1) {
		if (cli_run_option(&run, c, optarg))
			continue;
		switch (c) {
		case 'v':
			verbose = 1;
			break;
		case OPT_STATS:
			stats = 1;
			break;
		case OPT_LIST:
			do_list = 1;
			break;
		case OPT_NAMES:
			do_names = 1;
			/* `--names rwlock`: the family is the next word */
			if (optind < argc &&
			    (!strcmp(argv[optind], "mutex") || !strcmp(argv[optind], "rwlock") ||
			     !strcmp(argv[optind], "spin")))
				family = argv[optind++];
			break;
		case OPT_CAP:
			/* checked once the family is known */
			if (ncapnames == sizeof capnames / sizeof capnames[0])
				bad("%s", "--cap: too many", NULL);
			capnames[ncapnames++] = optarg;
			break;
		case OPT_WRAP:
			if (!ls_wrap_find(optarg))
				bad("--wrap: unknown wrapper '%s'", optarg, ls_wrap_names(buf, sizeof buf));
			wrap = optarg;
			break;
		case OPT_TOPOLOGY:
			if (optarg && strcmp(optarg, "table"))
				bad("--topology: unknown form '%s'", optarg, "--topology, --topology=table");
			return topology(optarg != NULL);
		case 'h':
			fputs(usage, stdout);
			return 0;
		case '?':
		default:
			bad("bad option or missing argument: %s (see lockswap --help)",
			    cli_refused(argv, buf, sizeof buf), NULL);
		}
	}
	if (do_list) {
		list();
		return 0;
	}
	bool rw = !strcmp(family, "rwlock");
	for (size_t k = 0; k < ncapnames; k++) {
		const char *cn = capnames[k];
		if (!strcmp(cn, "lock")) {
			want_lock = 1;
			continue;
		}
		unsigned bit = 0;
		if (rw) {
			bit = ls_rwcap_bit(cn);
		} else {
			for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
				if (!strcmp(caps[i].name, cn))
					bit = caps[i].bit;
		}
		if (!bit) {
			if (rw)
				snprintf(buf, sizeof buf, "%s, lock", ls_rwcap_names());
			else
				snprintf(buf, sizeof buf, "fifo, timeout, qnode, hier, passthrough, lock");
			bad("--cap: unknown capability '%s'", cn, buf);
		}
		want |= bit;
	}
	if (do_names) {
		if (wrap && strcmp(family, "mutex"))
			bad("--wrap: the %s family names its compositions itself (lockswap --names rwlock)",
			    family, NULL);
		if (rw)
			rw_names(want, want_lock);
		else if (!strcmp(family, "spin"))
			spin_names(want, want_lock);
		else
			names(want, want_lock, wrap);
		return 0;
	}
	if (want || want_lock)
		bad("%s", "--cap is only meaningful with --names", NULL);
	if (wrap)
		bad("%s", "--wrap is only meaningful with --names", NULL);
	if (optind >= argc)
		bad("%s", "no program to run (see lockswap --help)", NULL);

	if (run.algo && !ls_algo_resolve(run.algo, buf, sizeof buf))
		bad("-a: %s", buf, NULL);
	if (run.rwalgo && !ls_rwalgo_lookup(run.rwalgo, buf, sizeof buf))
		bad("-r: %s", buf, NULL);
	if (run.spinalgo && !ls_spinalgo_lookup(run.spinalgo, buf, sizeof buf))
		bad("--spinalgo: %s", buf, NULL);
	if (run.wait && strcmp(run.wait, "spin") && strcmp(run.wait, "yield") && strcmp(run.wait, "park"))
		bad("unknown waiting policy '%s'", run.wait, "spin, yield, park");
	if (run.spin && !cli_unsigned(run.spin, 0, 100000000))
		bad("--spin: '%s' is not an unsigned integer", run.spin, "0..100000000");
	if (run.map && run.config)
		bad("%s", "--map and --config: one of them (see lockswap --help)", NULL);
	if (run.config && access(run.config, R_OK) != 0)
		bad("--config: cannot read '%s'", run.config, NULL);

	const char *lib = find_lib();
	const char *old = getenv("LD_PRELOAD");
	static char preload[PATH_MAX * 4];
	if (old && *old)
		snprintf(preload, sizeof preload, "%s %s", lib, old);
	else
		snprintf(preload, sizeof preload, "%s", lib);
	setenv("LD_PRELOAD", preload, 1);
	if (run.algo)
		setenv("LOCKSWAP_ALGO", run.algo, 1);
	/* the rules are checked by the library, before PROG's main (exit 2) */
	if (run.map || run.config)
		unsetenv(run.map ? "LOCKSWAP_CONFIG" : "LOCKSWAP_ALGO_MAP");
	if (run.map)
		setenv("LOCKSWAP_ALGO_MAP", run.map, 1);
	if (run.config)
		setenv("LOCKSWAP_CONFIG", run.config, 1);
	if (run.rwalgo)
		setenv("LOCKSWAP_RWALGO", run.rwalgo, 1);
	if (run.spinalgo)
		setenv("LOCKSWAP_SPINALGO", run.spinalgo, 1);
	if (run.wait)
		setenv("LOCKSWAP_WAIT", run.wait, 1);
	if (run.spin)
		setenv("LOCKSWAP_SPIN", run.spin, 1);
	if (verbose)
		setenv("LOCKSWAP_VERBOSE", "1", 1);
	if (stats)
		setenv("LOCKSWAP_STATS", "1", 1);
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "lockswap: cannot run %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
