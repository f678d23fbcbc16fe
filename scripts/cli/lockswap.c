/*
 * lockswap - run a program with liblockswap preloaded, or list algorithms.
 *
 *   lockswap --list [--long]              algorithms, capabilities, descriptions
 *   lockswap --names [--cap CAP]... [--wrap W]  names only, one per line
 *   lockswap --names rwlock|spin [--cap CAP]...   the same for the other families
 *   lockswap --topology[=table]           clusters of the hierarchical locks
 *   lockswap --version
 *   lockswap [-a ALGO] [-m RULES | --config FILE] [-r RWALGO] [--spinalgo ALGO] [-w WAIT] [-s SPIN]
 *            [-v] [--stats] [--] PROG [ARGS...]
 *   lockswap SUBCOMMAND [ARGS...]         compare, profile, report
 *
 * A subcommand is a program of its own, lockswap-SUBCOMMAND: beside this one
 * in the build tree, in PREFIX/libexec/lockswap when installed; each part of
 * the tree that adds one adds its program there, and this file only
 * dispatches. It runs with LOCKSWAP_COMMAND set to this program's path, so
 * that it can run programs through `lockswap` in turn. A word that is no
 * subcommand is a program to run; if none of that name can be run either,
 * the message names the subcommands, and the nearest when it is close.
 *
 * The algorithm list is linked in from the same sources as the library.
 * The library is found through LOCKSWAP_LIB, next to this executable (the
 * build tree), or in ../lib/TRIPLET/lockswap (an installed tree: the
 * Makefile's LS_PKGLIB). Before running PROG, one line on stderr warns when
 * the loader will not preload the library into it: a statically linked
 * program, a 32-bit one, one that runs setuid, setgid or with file
 * capabilities (the loader's secure mode). Bad options: one line on stderr
 * and exit status 2; a program that cannot be run: status 127.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli.h"
#include "lock.h"
#include "hier/topo.h"
#include "rwlock/rwlock.h"
#include "spin/spinlock.h"
#include "wrap/wrap.h"

/* From the Makefile (LAYOUT_DEFS); these defaults for a compiler run by hand. */
#ifndef LS_VERSION
#define LS_VERSION "unknown"
#endif
#ifndef LS_PKGLIB
#define LS_PKGLIB "lib/lockswap"
#endif
#ifndef LS_LIBEXEC
#define LS_LIBEXEC "libexec/lockswap"
#endif

static const char usage[] =
    "usage: lockswap [-a ALGO] [-m RULES | --config FILE] [-r RWALGO] [--spinalgo ALGO] [-w WAIT]\n"
    "                [-s SPIN] [-v] [--stats] [--] PROG [ARGS...]\n"
    "       lockswap compare|profile|report [ARGS...]   (lockswap SUBCOMMAND --help)\n"
    "       lockswap --list [--long]\n"
    "       lockswap --names [--cap CAP]... [--wrap WRAPPER]\n"
    "       lockswap --names [mutex|rwlock|spin] [--cap CAP]...\n"
    "       lockswap --topology[=table]\n"
    "       lockswap --version\n"
    "\n"
    "Runs PROG with liblockswap.so preloaded, so that every pthread mutex in it\n"
    "uses the lock algorithm ALGO (and every rwlock RWALGO, every spinlock the\n"
    "--spinalgo one).\n"
    "\n"
    "  -a, --algo ALGO    lock algorithm (LOCKSWAP_ALGO; default " LS_DEFAULT_ALGO "); see --list\n"
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
    "      --list         list the algorithms with capabilities, descriptions and the\n"
    "                     names of their tunables, in 100 columns\n"
    "      --long         with --list: every tunable with its default and what it does\n"
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
    "      --version      lockswap's version\n"
    "  -h, --help         this text\n"
    "\n"
    "Algorithm tunables are environment variables; --list --long shows them.\n"
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

/* ---- --list ---- */

/* --list fits this many columns; --list --long prints each tunable on a
 * line of its own, as long as it is (man/algorithms.awk reads that form). */
#define LIST_WIDTH 100
static bool list_long;

/* The next piece of text at p that a line break may not split: a word,
 * with the words after it that start with a digit ("AMP 7.4", "TOCS
 * 1991,"), so that a citation stays whole. Its length, from p. */
static size_t piece(const char *p)
{
	size_t n = strcspn(p, " ");
	while (p[n] == ' ' && p[n + 1] >= '0' && p[n + 1] <= '9')
		n += 1 + strcspn(p + n + 1, " ");
	return n;
}

/* Prints `lead` (indent columns wide), then text's words wrapped at
 * LIST_WIDTH, each next line indented as much (--long: one line, as
 * man/algorithms.awk reads it). */
static void wrapped(const char *lead, int indent, const char *text)
{
	if (list_long) {
		printf("%-*s%s\n", indent, lead, text);
		return;
	}
	int col = printf("%-*s", indent, lead);
	bool first = true;
	for (const char *p = text; *p;) {
		while (*p == ' ')
			p++;
		size_t n = piece(p);
		if (!n)
			break;
		if (!first && col + 1 + (int)n > LIST_WIDTH) {
			col = printf("\n%*s", indent, "") - 1;
			first = true;
		}
		col += printf("%s%.*s", first ? "" : " ", (int)n, p);
		first = false;
		p += n;
	}
	putchar('\n');
}

/* A row: NAME CAPS DESC, the description wrapped under itself. */
static void row(const char *name, int namew, const char *caps, int capsw, const char *desc)
{
	char lead[256];
	snprintf(lead, sizeof lead, "%-*s %-*s ", namew, name, capsw, caps);
	wrapped(lead, namew + capsw + 2, desc);
}

/* An algorithm's tunables: with --long, one line each as "  LOCKSWAP_X=N:
 * what"; else their names and defaults, wrapped, after "tunables:". */
static void tunables(const struct ls_param *params, int indent)
{
	char text[4096];
	size_t at = 0;
	if (!params || !params->env)
		return;
	for (const struct ls_param *p = params; p->env; p++) {
		if (list_long) {
			printf("%-*s  %s=%llu: %s\n", indent, "", p->env, (unsigned long long)*p->value,
			       p->desc);
			continue;
		}
		int k = snprintf(text + at, sizeof text - at, "%s%s=%llu", at ? ", " : "", p->env,
				 (unsigned long long)*p->value);
		if (k > 0 && (size_t)k < sizeof text - at)
			at += (size_t)k;
	}
	if (!list_long)
		wrapped("", indent, text);
}

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
		char lead[64];
		snprintf(lead, sizeof lead, "+%-9s ", w->name);
		wrapped(lead, 11, w->desc);
		tunables(w->params, 11);
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
		row(name, 17, ls_rwcaps_string(a->caps, c, sizeof c), 18, a->desc);
		if (a->policy) {
			char p[256];
			snprintf(p, sizeof p, "policy: %s", a->policy);
			wrapped("", 37, p);
		}
		tunables(a->params, 37);
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
	char c[128], misfits[2048];
	size_t at = 0;
	printf(
	    "\nSpinlocks (LOCKSWAP_SPINALGO, --spinalgo; default pthread): algorithms whose state fits the\n"
	    "4 bytes of a pthread_spinlock_t:\n");
	for (size_t i = 0; i < ls_spinalgo_count(); i++) {
		const struct ls_algo *a = ls_spinalgo_at(i);
		char name[64];
		snprintf(name, sizeof name, "spin:%s", a->name);
		row(name, 17, ls_caps_string(a->caps, c, sizeof c), 18, a->desc);
	}
	misfits[0] = '\0';
	for (size_t i = 0; i < ls_algo_count(); i++)
		if (!ls_spin_fits(ls_algo_at(i)) && !(ls_algo_at(i)->caps & LS_CAP_PASSTHROUGH)) {
			int k = snprintf(misfits + at, sizeof misfits - at, "%s%s", at ? ", " : "",
					 ls_algo_at(i)->name);
			if (k > 0 && (size_t)k < sizeof misfits - at)
				at += (size_t)k;
		}
	wrapped("Mutex algorithms that do not fit: ", 34, misfits);
}

static void list(void)
{
	char c[128];
	printf("%-10s %-18s %s\n", "NAME", "CAPABILITIES", "DESCRIPTION");
	for (size_t i = 0; i < ls_algo_count(); i++) {
		const struct ls_algo *a = ls_algo_at(i);
		char d[512];
		snprintf(d, sizeof d, "%s%s", a->desc,
			 strcmp(a->name, LS_DEFAULT_ALGO) ? "" : " [the default: LOCKSWAP_ALGO unset]");
		row(a->name, 10, ls_caps_string(a->caps, c, sizeof c), 18, d);
		tunables(a->params, 30);
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
	       "    FUNCTION=ALGO   a function (its symbol, or its debug file's: the names\n"
	       "                    lockswap report prints)\n"
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
	if (!list_long)
		printf(
		    "\nWhat each tunable does: lockswap --list --long; all of it, and the library's other\n"
		    "  variables: lockswap(7).\n");
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

/* path is a readable file: its real path (malloc'd), or NULL. */
static char *readable(const char *path)
{
	return access(path, R_OK) == 0 ? realpath(path, NULL) : NULL;
}

static char *find_lib(void)
{
	static char path[PATH_MAX + 64];
	const char *env = getenv("LOCKSWAP_LIB");
	if (env) {
		if (access(env, R_OK) != 0)
			bad("LOCKSWAP_LIB: cannot read '%s'", env, NULL);
		return realpath(env, NULL);
	}
	char exe[PATH_MAX];
	char *dir = cli_self_dir(exe, sizeof exe), *found;
	if (!dir) {
		fprintf(stderr, "lockswap: cannot find my own executable: %s\n", strerror(errno));
		exit(2);
	}
	snprintf(path, sizeof path, "%s/liblockswap.so", dir);
	if ((found = readable(path)))
		return found;
	snprintf(path, sizeof path, "%s/../" LS_PKGLIB "/liblockswap.so", dir);
	if ((found = readable(path)))
		return found;
	fprintf(stderr,
		"lockswap: cannot find liblockswap.so next to %s or in %s/../" LS_PKGLIB
		" (set LOCKSWAP_LIB)\n",
		dir, dir);
	exit(2);
}

static const char *const subcommands[] = {"compare", "profile", "report"};
#define NSUB (sizeof subcommands / sizeof subcommands[0])

/* `lockswap SUB ARGS...`: runs lockswap-SUB beside this program (build/),
 * or from PREFIX/libexec/lockswap (installed). */
static int subcommand(int argc, char **argv)
{
	char prog[PATH_MAX + 64], self[PATH_MAX + 16], exe[PATH_MAX], other[PATH_MAX + 64];
	const char *dir = cli_self_dir(exe, sizeof exe);
	(void)argc;
	if (!dir)
		bad("cannot find my own directory to run '%s'", argv[1], NULL);
	snprintf(self, sizeof self, "%s/lockswap", dir);
	snprintf(prog, sizeof prog, "%s/lockswap-%s", dir, argv[1]);
	snprintf(other, sizeof other, "%s/../" LS_LIBEXEC "/lockswap-%s", dir, argv[1]);
	if (access(prog, X_OK) != 0) {
		if (access(other, X_OK) != 0) {
			fprintf(stderr, "lockswap: subcommand '%s' is not installed (no %s, nor %s)\n",
				argv[1], prog, other);
			exit(2);
		}
		char *real = realpath(other, NULL);
		snprintf(prog, sizeof prog, "%s", real ? real : other);
		free(real);
	}
	setenv("LOCKSWAP_COMMAND", self, 1);
	argv[1] = prog;
	execv(prog, argv + 1);
	fprintf(stderr, "lockswap: cannot run %s: %s\n", prog, strerror(errno));
	return 127;
}

/* The edit distance of a and b (Levenshtein), for "did you mean". */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];
	if (la >= 64 || lb >= 64)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* PROG could not be run (err): one line, exit 127. A bare word that is no
 * program may have been meant as a subcommand: the line names them, and
 * the nearest if it is near (a third of its letters wrong at most). */
static __attribute__((noreturn)) void cannot_run(const char *prog, int err)
{
	if (err != ENOENT || strchr(prog, '/')) {
		fprintf(stderr, "lockswap: cannot run %s: %s\n", prog, strerror(err));
		exit(127);
	}
	size_t best = 0;
	for (size_t i = 1; i < NSUB; i++)
		if (distance(prog, subcommands[i]) < distance(prog, subcommands[best]))
			best = i;
	size_t d = distance(prog, subcommands[best]), len = strlen(subcommands[best]);
	fprintf(stderr, "lockswap: cannot run %s: no such program, nor subcommand", prog);
	if (d <= (len + 2) / 3)
		fprintf(stderr, " (did you mean lockswap %s?", subcommands[best]);
	else
		fprintf(stderr, " (");
	fprintf(stderr, "%ssubcommands: compare, profile, report)\n", d <= (len + 2) / 3 ? " " : "");
	exit(127);
}

/* ---- what the loader will do with PROG ---- */

/* PROG as execvp finds it (PATH searched for a bare name), into out. */
static bool find_program(const char *prog, char *out, size_t len)
{
	if (strchr(prog, '/'))
		return snprintf(out, len, "%s", prog) < (int)len;
	const char *path = getenv("PATH");
	for (const char *p = path && *path ? path : "/bin:/usr/bin"; *p;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		snprintf(out, len, "%.*s%s%s", (int)n, p, n ? "/" : "", prog);
		struct stat st;
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return true;
		p += n + (c != NULL);
	}
	return false;
}

/* One line on stderr if the loader will not preload the library into
 * PROG: it has no loader (statically linked), is 32-bit, or runs in the
 * loader's secure mode (setuid or setgid to another user or group, or with
 * file capabilities), where LD_PRELOAD's paths are ignored. PROG runs
 * anyway: the line says its mutexes stay glibc's. */
static void check_program(const char *prog)
{
	char path[PATH_MAX];
	struct stat st;
	if (!find_program(prog, path, sizeof path) || stat(path, &st) != 0)
		return;
	const char *why = NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
		why = "it is setuid: the loader ignores LD_PRELOAD's paths for it";
	else if ((st.st_mode & S_ISGID) && st.st_gid != getgid())
		why = "it is setgid: the loader ignores LD_PRELOAD's paths for it";
	else if (getxattr(path, "security.capability", NULL, 0) > 0)
		why = "it has file capabilities: the loader ignores LD_PRELOAD's paths for it";
	int fd = why ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		Elf64_Ehdr eh;
		if (read(fd, &eh, sizeof eh) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
			if (eh.e_ident[EI_CLASS] == ELFCLASS32) {
				why = "it is a 32-bit program, and liblockswap.so is 64-bit: the loader "
				      "skips it";
			} else if (eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 4096) {
				bool interp = false;
				for (unsigned i = 0; i < eh.e_phnum && !interp; i++) {
					Elf64_Phdr ph;
					if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) !=
					    (ssize_t)sizeof ph)
						break;
					interp = ph.p_type == PT_INTERP;
				}
				if (!interp)
					why = "it is statically linked: no loader runs, so nothing is "
					      "preloaded";
			}
		}
		close(fd);
	}
	if (why)
		fprintf(stderr, "lockswap: warning: %s: %s; its locks stay glibc's\n", path, why);
}

int main(int argc, char **argv)
{
	for (size_t i = 0; argc > 1 && i < NSUB; i++)
		if (!strcmp(argv[1], subcommands[i]))
			return subcommand(argc, argv);

	enum { OPT_LIST = 256, OPT_NAMES, OPT_CAP, OPT_STATS, OPT_TOPOLOGY, OPT_WRAP, OPT_LONG, OPT_VERSION };
	static const struct option opts[] = {
	    CLI_RUN_LONG,
	    {"verbose", no_argument, NULL, 'v'},
	    {"stats", no_argument, NULL, OPT_STATS},
	    {"list", no_argument, NULL, OPT_LIST},
	    {"names", no_argument, NULL, OPT_NAMES},
	    {"cap", required_argument, NULL, OPT_CAP},
	    {"wrap", required_argument, NULL, OPT_WRAP},
	    {"topology", optional_argument, NULL, OPT_TOPOLOGY},
	    {"long", no_argument, NULL, OPT_LONG},
	    {"version", no_argument, NULL, OPT_VERSION},
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
		case OPT_LONG:
			list_long = true;
			break;
		case OPT_VERSION:
			printf("lockswap %s\n", LS_VERSION);
			return 0;
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
	if (list_long)
		bad("%s", "--long is only meaningful with --list", NULL);
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
	check_program(argv[optind]);
	execvp(argv[optind], argv + optind);
	cannot_run(argv[optind], errno);
}
