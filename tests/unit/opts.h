/*
 * opts.h - the command line of the unit and stress test programs, parsed one
 * way: a bad option is one line on stderr, "PROG: -X: what is wrong (valid:
 * what is right)", and exit status 2 (the bats files check both). Define
 * OPT_PROG, the program's name, before including this file. Also here: the
 * state of the lock the options chose, allocated as the shim would.
 */
#ifndef LS_UNIT_OPTS_H
#define LS_UNIT_OPTS_H

#ifndef OPT_PROG
#error "define OPT_PROG (the program's name) before including opts.h"
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock.h"
#include "pool.h"
#include "rwlock/rwlock.h"
#include "spin/spinlock.h"
#include "wait.h"

/* A bad option (or a failed set-up): "PROG: message" on stderr, exit 2. */
static void opt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn, unused));
static void opt_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, OPT_PROG ": %s\n", msg);
	exit(2);
}

/* The value of option -opt (a one-letter name; a longer one, such as an
 * environment variable's, is printed as it is): an unsigned decimal, or
 * hexadecimal after 0x, in lo..hi. */
static inline unsigned long long opt_number(const char *opt, const char *s, unsigned long long lo,
					    unsigned long long hi)
{
	char *end;
	errno = 0;
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	unsigned long long v = strtoull(s, &end, hex ? 16 : 10);
	if (s[0] < '0' || s[0] > '9' || errno || *end || v < lo || v > hi)
		opt_error("%s%s: invalid value '%s' (valid: %llu..%llu)", opt[1] ? "" : "-", opt, s, lo, hi);
	return v;
}

/* The index of s among names[0..n-1], the values of option -opt ("": an
 * argument), which are `what` (a mode, a policy...). */
static inline int opt_choose(const char *opt, const char *what, const char *s, const char *const *names,
			     int n)
{
	char valid[256] = "";
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	for (int i = 0; i < n; i++)
		snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", i ? ", " : "",
			 names[i]);
	opt_error("%s%s%sunknown %s '%s' (valid: %s)", *opt ? "-" : "", opt, *opt ? ": " : "", what, s,
		  valid);
}

/* Waiting policies by name, and -w POLICY into ls_wait_cfg.policy. */
static inline const char *opt_policy_name(enum ls_policy p)
{
	static const char *const names[] = {"spin", "yield", "park"};
	return names[p];
}
static inline void opt_policy(const char *s)
{
	const char *names[] = {opt_policy_name(LS_WAIT_SPIN), opt_policy_name(LS_WAIT_YIELD),
			       opt_policy_name(LS_WAIT_PARK)};
	ls_wait_cfg.policy = (enum ls_policy)opt_choose("w", "policy", s, names, 3);
}

/* -a ALGO and -w POLICY, which most of the programs take: true if getopt's
 * c was one of them (the name goes to *name, the policy to ls_wait_cfg). */
static inline bool opt_algo_wait(int c, const char *arg, const char **name)
{
	if (c == 'a')
		*name = arg;
	else if (c == 'w')
		opt_policy(arg);
	return c == 'a' || c == 'w';
}

/* -a ALGO: the algorithm named s (NULL: -a was not given), a lock (not the
 * pthread passthrough). */
static inline const struct ls_algo *opt_algo(const char *s)
{
	char names[1024];
	if (!s)
		opt_error("-a ALGO is required (valid: %s)", ls_algo_names(names, sizeof names));
	const struct ls_algo *a = ls_algo_find(s);
	if (!a)
		opt_error("-a: unknown algorithm '%s' (valid: %s)", s, ls_algo_names(names, sizeof names));
	if (a->caps & LS_CAP_PASSTHROUGH)
		opt_error("-a: '%s' is not a lock (the shim hands it to glibc)", s);
	return a;
}

/* A lock.h algorithm by name: the mutex family's, or else a spin-only one
 * of the spinlock family's (spin/spinlock.h: ticket16); NULL if neither. */
static inline const struct ls_algo *opt_lock_find(const char *s)
{
	const struct ls_algo *a = ls_algo_find(s);
	return a ? a : ls_spinalgo_find(s);
}

/* -a ALGO[,ALGO...]|all|spin into `list` (comma-separated; all: every lock
 * of the mutex family, not the passthrough; spin: every lock of the
 * spinlock family), each name checked as opt_algo does (a spin-only name
 * too: look them up with opt_lock_find). */
static inline void opt_algo_list(const char *s, char *list, size_t len)
{
	bool spin = !strcmp(s, "spin");
	if (strcmp(s, "all") && !spin) {
		snprintf(list, len, "%s", s);
		char *copy = strdup(list), *save = NULL;
		for (char *a = strtok_r(copy, ",", &save); a; a = strtok_r(NULL, ",", &save))
			if (ls_algo_find(a) || !ls_spinalgo_find(a))
				opt_algo(a);
		free(copy);
		return;
	}
	list[0] = 0;
	size_t n = spin ? ls_spinalgo_count() : ls_algo_count();
	for (size_t i = 0; i < n; i++) {
		const struct ls_algo *a = spin ? ls_spinalgo_at(i) : ls_algo_at(i);
		if (!(a->caps & LS_CAP_PASSTHROUGH))
			snprintf(list + strlen(list), len - strlen(list), "%s%s", list[0] ? "," : "",
				 a->name);
	}
}

/* The rwlock family's tunables from the environment, as the shim reads
 * them (every algorithm's: a composition's inner ones too). */
static inline void opt_rwparams_env(void)
{
	char err[512];
	for (size_t i = 0; i < ls_rwalgo_count(); i++)
		for (const struct ls_param *p = ls_rwalgo_at(i)->params; p && p->env; p++) {
			const char *v = getenv(p->env);
			uint64_t x;
			if (v && ls_param_parse(p, v, &x, err, sizeof err))
				opt_error("%s", err);
			if (v)
				*p->value = x;
		}
}

/* -w POLICY|all: the range of policies [*first, *last] to run. */
static inline void opt_policy_range(const char *s, enum ls_policy *first, enum ls_policy *last)
{
	const char *names[] = {opt_policy_name(LS_WAIT_SPIN), opt_policy_name(LS_WAIT_YIELD),
			       opt_policy_name(LS_WAIT_PARK), "all"};
	int p = opt_choose("w", "policy", s, names, 4);
	*first = p == 3 ? LS_WAIT_SPIN : (enum ls_policy)p;
	*last = p == 3 ? LS_WAIT_PARK : (enum ls_policy)p;
}

/* The algorithm's tunables from the environment, as the shim sets them (a
 * bad value is a bad option). */
static inline void opt_params(const struct ls_algo *a)
{
	for (const struct ls_param *p = a->params; p && p->env; p++) {
		const char *v = getenv(p->env);
		char err[256];
		if (v && ls_param_parse(p, v, p->value, err, sizeof err))
			opt_error("%s", err);
	}
}

/* A zero-filled state for a lock of algorithm a, placed as the shim places
 * it, with the wrapper word just before it (a composition NAME+WRAPPER
 * keeps its per-lock word there: wrap/wrap.h): out of line after a header
 * line (ls_ext_alloc) when it does not fit the mutex's inline bytes; else
 * at offset 24 of a cache line of its own, like the inline state of a
 * pthread_mutex_t. NULL without memory. Free it with opt_state_free. */
#define OPT_STATE_AT 24
static inline void *opt_state(const struct ls_algo *a)
{
	char *p;
	if (a->state_size > LS_INLINE_STATE) {
		p = ls_ext_alloc(LS_CACHELINE + a->state_size);
		return p ? p + LS_CACHELINE : NULL;
	}
	p = aligned_alloc(LS_CACHELINE, LS_CACHELINE);
	if (!p)
		return NULL;
	memset(p, 0, LS_CACHELINE);
	return p + OPT_STATE_AT;
}
static inline void opt_state_free(const struct ls_algo *a, void *p)
{
	if (a->state_size > LS_INLINE_STATE)
		ls_ext_free((char *)p - LS_CACHELINE, LS_CACHELINE + a->state_size);
	else
		free((char *)p - OPT_STATE_AT);
}

/* ---- lists of algorithms and seeds (stress, rwstress: -a A,B -s 1,2) ---- */

#include <inttypes.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* The comma-separated values of option -opt, s cut in place, into
 * out[0..max-1]; their count (at least 1, or a bad option). */
static unsigned opt_list(const char *opt, char *s, char **out, unsigned max) __attribute__((unused));
static unsigned opt_list(const char *opt, char *s, char **out, unsigned max)
{
	unsigned n = 0;
	char *save = NULL;
	for (char *v = strtok_r(s, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
		if (n == max)
			opt_error("-%s: more than %u values", opt, max);
		out[n++] = v;
	}
	if (!n)
		opt_error("-%s: no value", opt);
	return n;
}

/* The options stress and rwstress share, each parsed into the program's own
 * variable: -t THREADS -n ITERS -l LOCKS -m MODE -p PATIENCE_NS -S SPIN
 * -s SEED[,SEED...] (kept as given, for opt_seeds) -T SECONDS -q. */
enum opt_mode { M_LOCK, M_TRY, M_TIMED, M_MIX };
static const char *const opt_mode_names[] __attribute__((unused)) = {"lock", "try", "timed", "mix"};
struct opt_stress {
	unsigned *nthreads, *nlocks, *watchdog;
	unsigned long *iters;
	enum opt_mode *mode;
	uint64_t *patience;
	char **seeds;
	bool *quiet;
};

/* Option c with argument arg, if it is one of the shared ones: true once
 * parsed into o's variable, false for the caller's own switch. */
static inline bool opt_stress_arm(int c, char *arg, const struct opt_stress *o)
{
	switch (c) {
	case 't':
		*o->nthreads = (unsigned)opt_number("t", arg, 1, 1024);
		return true;
	case 'n':
		*o->iters = opt_number("n", arg, 1, 100000000);
		return true;
	case 'l':
		*o->nlocks = (unsigned)opt_number("l", arg, 1, 100000);
		return true;
	case 'm':
		*o->mode = (enum opt_mode)opt_choose("m", "mode", arg, opt_mode_names, 4);
		return true;
	case 'p':
		*o->patience = opt_number("p", arg, 0, 100000000000ul);
		return true;
	case 'S':
		ls_wait_cfg.spin = (unsigned)opt_number("S", arg, 0, 100000000);
		return true;
	case 's':
		*o->seeds = arg;
		return true;
	case 'T':
		*o->watchdog = (unsigned)opt_number("T", arg, 0, 86400);
		return true;
	case 'q':
		*o->quiet = true;
		return true;
	}
	return false;
}

/* -s's list (seeds, cut in place; NULL: not given) into out[0..max-1],
 * `dflt` when not given; their count. */
static inline unsigned opt_seeds(char *seeds, uint64_t *out, unsigned max, uint64_t dflt)
{
	if (!seeds) {
		out[0] = dflt;
		return 1;
	}
	char *v[max];
	unsigned n = opt_list("s", seeds, v, max);
	for (unsigned i = 0; i < n; i++)
		out[i] = opt_number("s", v[i], 0, ~0ul);
	return n;
}

/* Every name with every seed, each run in a child of its own (a fork, far
 * cheaper than a program start: the pool's nodes, type-stable, keep what
 * the last algorithm left in them, a process composes a wrapper with one
 * inner lock, the -inject build reads its seed once), each under a
 * watchdog of `watchdog` seconds (0: none; SIGALRM, which the caller
 * handles). run(name, seed) is one run: 0, 1 (failed), 2 (bad usage: the
 * whole command stops with 2). Returns 0 if every run passed, else 1; a
 * child killed by a signal is named on stderr. */
static int opt_run_lists(char **names, unsigned na, const uint64_t *seeds, unsigned ns, unsigned watchdog,
			 int (*run)(const char *name, uint64_t seed)) __attribute__((unused));
static int opt_run_lists(char **names, unsigned na, const uint64_t *seeds, unsigned ns, unsigned watchdog,
			 int (*run)(const char *name, uint64_t seed))
{
	int failed = 0;
	for (unsigned i = 0; i < na; i++)
		for (unsigned k = 0; k < ns; k++) {
			fflush(NULL);
			pid_t pid = fork();
			if (pid < 0)
				opt_error("fork failed");
			if (pid == 0) {
				alarm(watchdog);
				exit(run(names[i], seeds[k])); /* the sanitizers' checks at exit too */
			}
			int st;
			while (waitpid(pid, &st, 0) < 0)
				;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
				return 2;
			if (!WIFEXITED(st) || WEXITSTATUS(st)) {
				failed = 1;
				if (!WIFEXITED(st))
					fprintf(stderr,
						"%s: FAIL algo=%s seed=%" PRIu64 ": killed by signal %d\n",
						OPT_PROG, names[i], seeds[k], WTERMSIG(st));
			}
		}
	return failed;
}

#endif
