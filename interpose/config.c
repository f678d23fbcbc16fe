/*
 * config.c - the configuration, at the top of interpose/: glibc's functions,
 * the environment, the families composed, reporting.
 *
 * ls_init() (shim.c) runs it once, from the library's constructor or
 * earlier from the first pthread call of another library's constructor;
 * it finds it by registration (LS_REGISTER_CONFIG), so that the entry
 * points below never name it. It resolves glibc's own entry points, reads
 * every LOCKSWAP_ variable, composes the families (the mutexes' algorithm
 * and its map, bind.h; the rwlocks' and spinlocks'; the observer, observe.h;
 * what asynchronous cancellation changes in each) and either publishes the
 * chosen algorithms or, on any bad value, prints one line and exits with
 * status 2: before main, never a silent fallback.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bind.h"
#include "mutex.h"
#include "observe.h"
#include "pool.h"
#include "rwlock.h"
#include "shim.h"
#include "shim_cancel.h"
#include "shim_rwlock.h"
#include "spin.h"
#include "spin/spinlock.h"
#include "wait.h"
#include "wrap/wrap.h"

extern char **environ;

static bool verbose, stats;
static pid_t config_pid; /* the process that read the configuration */

#define DEFAULT_ALGO LS_DEFAULT_ALGO

static __attribute__((noreturn)) void config_error(const char *msg)
{
	ls_say("lockswap: %s", msg);
	_exit(2);
}

static void *real_sym(const char *name, const char *version)
{
	void *p = dlvsym(RTLD_NEXT, name, version);
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	if (!p) {
		ls_say("lockswap: cannot find glibc's %s@%s", name, version);
		_exit(2);
	}
	return p;
}

static void rw_resolve_glibc(void);

static void resolve_glibc(void)
{
	ls_real.mutex_init = real_sym("pthread_mutex_init", "GLIBC_2.2.5");
	ls_real.mutex_destroy = real_sym("pthread_mutex_destroy", "GLIBC_2.2.5");
	ls_real.mutex_lock = real_sym("pthread_mutex_lock", "GLIBC_2.2.5");
	ls_real.mutex_trylock = real_sym("pthread_mutex_trylock", "GLIBC_2.34");
	ls_real.mutex_timedlock = real_sym("pthread_mutex_timedlock", "GLIBC_2.34");
	ls_real.mutex_clocklock = real_sym("pthread_mutex_clocklock", "GLIBC_2.34");
	ls_real.mutex_unlock = real_sym("pthread_mutex_unlock", "GLIBC_2.2.5");
	ls_real.cond_init = real_sym("pthread_cond_init", "GLIBC_2.3.2");
	ls_real.cond_destroy = real_sym("pthread_cond_destroy", "GLIBC_2.3.2");
	ls_real.cond_wait = real_sym("pthread_cond_wait", "GLIBC_2.3.2");
	ls_real.cond_timedwait = real_sym("pthread_cond_timedwait", "GLIBC_2.3.2");
	ls_real.cond_clockwait = real_sym("pthread_cond_clockwait", "GLIBC_2.34");
	ls_real.cond_signal = real_sym("pthread_cond_signal", "GLIBC_2.3.2");
	ls_real.cond_broadcast = real_sym("pthread_cond_broadcast", "GLIBC_2.3.2");
	ls_real_setcanceltype = real_sym("pthread_setcanceltype", "GLIBC_2.2.5");
	rw_resolve_glibc();
}

/* The variables the shim itself reads; algorithm tunables are added from
 * the registry. */
static const char *const own_vars[] = {
    "LOCKSWAP_ALGO",	"LOCKSWAP_WAIT",     "LOCKSWAP_SPIN",	  "LOCKSWAP_YIELD", "LOCKSWAP_VERBOSE",
    "LOCKSWAP_STATS",	"LOCKSWAP_ALGO_MAP", "LOCKSWAP_CONFIG",	  "LOCKSWAP_LIB", /* read by the lockswap
										     command only */
    "LOCKSWAP_COMMAND", /* set by the lockswap command for its subcommands */
    "LOCKSWAP_RESULTS", /* read by lockswap compare only (where its results go) */
    "LOCKSWAP_RWALGO",	"LOCKSWAP_RWPOLICY", "LOCKSWAP_SPINALGO",
};

static bool rw_known_var(const char *name, size_t len);
static size_t rw_list_params(char *list, size_t used, size_t size);
static int rw_configure(const struct ls_algo *mutex, bool verbose, char *msg, size_t len);
static int observe_setup(char *err, size_t errlen);

/* The first registered parameter with this name. */
static const struct ls_param *first_with(const char *env)
{
	for (size_t i = 0; i < ls_algo_count(); i++)
		for (const struct ls_param *p = ls_algo_at(i)->params; p && p->env; p++)
			if (!strcmp(p->env, env))
				return p;
	return NULL;
}

/* ---- wrappers (locks/wrap/wrap.h): LOCKSWAP_ALGO=BASE+WRAPPER ---- */

/* A tunable of a wrapper (they are shared by all its compositions). */
static bool wrap_param_known(const char *name, size_t len)
{
	for (size_t i = 0; i < ls_wrap_count(); i++)
		for (const struct ls_param *p = ls_wrap_at(i)->params; p && p->env; p++)
			if (strlen(p->env) == len && !strncmp(p->env, name, len))
				return true;
	return false;
}

/* Appends ", VAR" for every wrapper tunable to list (used bytes of size). */
static size_t list_wrap_params(char *list, size_t used, size_t size)
{
	for (size_t i = 0; i < ls_wrap_count(); i++)
		for (const struct ls_param *p = ls_wrap_at(i)->params; p && p->env && used < size; p++)
			used += (size_t)snprintf(list + used, size - used, ", %s", p->env);
	return used;
}

/* Sets each tunable of params (ended by {0}, or NULL) that the environment
 * gives; a malformed or out-of-range value is a configuration error. */
static void parse_params(const struct ls_param *params)
{
	char msg[1400];
	for (const struct ls_param *p = params; p && p->env; p++) {
		const char *v = getenv(p->env);
		uint64_t x;
		if (!v)
			continue;
		if (ls_param_parse(p, v, &x, msg, sizeof msg))
			config_error(msg);
		*p->value = x;
	}
}

/* Every wrapper's tunables are validated, whatever the algorithm, and
 * before the algorithm is composed (a composition reads them). */
static void parse_wrap_params(void)
{
	for (size_t i = 0; i < ls_wrap_count(); i++)
		parse_params(ls_wrap_at(i)->params);
}

/* LOCKSWAP_ALGO: an algorithm, or BASE+WRAPPER; one line and exit 2 if it
 * is neither. */
static const struct ls_algo *resolve_algo(const char *name)
{
	char msg[1400], why[1300];
	parse_wrap_params();
	const struct ls_algo *a = ls_algo_resolve(name, why, sizeof why);
	if (!a) {
		snprintf(msg, sizeof msg, "LOCKSWAP_ALGO: %s", why);
		config_error(msg);
	}
	return a;
}

static bool known_var(const char *name, size_t len)
{
	if (wrap_param_known(name, len))
		return true;
	for (size_t i = 0; i < sizeof own_vars / sizeof own_vars[0]; i++)
		if (strlen(own_vars[i]) == len && !strncmp(own_vars[i], name, len))
			return true;
	for (size_t i = 0; i < ls_option_count(); i++)
		if (strlen(ls_option_at(i)->env) == len && !strncmp(ls_option_at(i)->env, name, len))
			return true;
	for (size_t i = 0; i < ls_algo_count(); i++)
		for (const struct ls_param *p = ls_algo_at(i)->params; p && p->env; p++)
			if (strlen(p->env) == len && !strncmp(p->env, name, len))
				return true;
	return rw_known_var(name, len);
}

/* The edit distance of a and b (Levenshtein, letters compared without
 * case: LOCKSWAP_algo is near LOCKSWAP_ALGO); 64 for names that long. */
static size_t distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t row[64];
	if (la >= 64 || lb >= 64)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + ((a[i - 1] | 32) != (b[j - 1] | 32));
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

/* Into out: the known variables (list: "A, B, ...") nearest to name (len
 * bytes), at most 3, if the nearest is near: a third of the letters after
 * LOCKSWAP_ wrong at most (one for a short name). Empty if none is. */
static void nearest_vars(const char *name, size_t len, const char *list, char *out, size_t size)
{
	const size_t pre = 9; /* "LOCKSWAP_" */
	size_t best = 64, found = 0, used = 0, limit = (len - pre + 2) / 3;
	out[0] = '\0';
	for (int pass = 0; pass < 2; pass++)
		for (const char *p = list; *p;) {
			size_t n = strcspn(p, ",");
			size_t d = distance(name + pre, len - pre, p + pre, n > pre ? n - pre : 0);
			if (pass == 0 && d < best)
				best = d;
			else if (pass == 1 && d == best && best <= (limit ? limit : 1) && found < 3 &&
				 used < size) {
				used += (size_t)snprintf(out + used, size - used, "%s%.*s", found ? ", " : "",
							 (int)n, p);
				found++;
			}
			p += n;
			while (*p == ',' || *p == ' ')
				p++;
		}
}

/* An unknown LOCKSWAP_ variable is a configuration error (a typo must not
 * run silently with the default): one line naming it, the nearest valid
 * names if some are near, and where every name is listed. */
static void check_unknown_vars(void)
{
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "LOCKSWAP_", 9) != 0)
			continue;
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
		if (known_var(*e, len))
			continue;
		/* every variable the library knows: with all the families'
		 * tunables this is a few hundred bytes over 1 KiB */
		char list[LS_SAY_MAX - 256];
		size_t used = 0;
		list[0] = '\0';
		for (size_t i = 0; i < sizeof own_vars / sizeof own_vars[0] && used < sizeof list; i++)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
						 own_vars[i]);
		for (size_t i = 0; i < ls_option_count() && used < sizeof list; i++)
			used +=
			    (size_t)snprintf(list + used, sizeof list - used, ", %s", ls_option_at(i)->env);
		used = list_wrap_params(list, used, sizeof list);
		for (size_t i = 0; i < ls_algo_count() && used < sizeof list; i++)
			for (const struct ls_param *p = ls_algo_at(i)->params;
			     p && p->env && used < sizeof list; p++)
				if (first_with(p->env) == p) /* algorithms may share a tunable */
					used +=
					    (size_t)snprintf(list + used, sizeof list - used, ", %s", p->env);
		used = rw_list_params(list, used, sizeof list);
		char near[256], msg[LS_SAY_MAX];
		nearest_vars(*e, len, list, near, sizeof near);
		snprintf(msg, sizeof msg,
			 "unknown variable %.*s (%s%s%s every variable is in lockswap(7), the tunables in "
			 "lockswap --list --long)",
			 (int)len, *e, near[0] ? "did you mean " : "no valid name is near it:", near,
			 near[0] ? "?" : "");
		config_error(msg);
	}
}

static bool parse_bool(const char *var, const char *v)
{
	if (!v)
		return false;
	if (!strcmp(v, "0"))
		return false;
	if (!strcmp(v, "1"))
		return true;
	char msg[256];
	snprintf(msg, sizeof msg, "%s: '%.64s' is not valid (valid: 0, 1)", var, v);
	config_error(msg);
}

static void configure(void)
{
	char msg[1400];

	config_pid = getpid();
	check_unknown_vars();

	const char *name = getenv("LOCKSWAP_ALGO");
	if (!name)
		name = DEFAULT_ALGO;
	const struct ls_algo *a = resolve_algo(name);

	const char *w = getenv("LOCKSWAP_WAIT");
	if (w) {
		if (!strcmp(w, "spin"))
			ls_wait_cfg.policy = LS_WAIT_SPIN;
		else if (!strcmp(w, "yield"))
			ls_wait_cfg.policy = LS_WAIT_YIELD;
		else if (!strcmp(w, "park"))
			ls_wait_cfg.policy = LS_WAIT_PARK;
		else {
			snprintf(msg, sizeof msg,
				 "LOCKSWAP_WAIT: unknown policy '%.64s' (valid: spin, yield, park)", w);
			config_error(msg);
		}
	}

	const char *s = getenv("LOCKSWAP_SPIN");
	if (s) {
		static uint64_t spin;
		static const struct ls_param spin_param = {"LOCKSWAP_SPIN", "", &spin, 0, 100000000};
		uint64_t v;
		if (ls_param_parse(&spin_param, s, &v, msg, sizeof msg))
			config_error(msg);
		ls_wait_cfg.spin = (unsigned)v;
	}

	const char *y = getenv("LOCKSWAP_YIELD");
	if (y) {
		static uint64_t yield;
		static const struct ls_param yield_param = {"LOCKSWAP_YIELD", "", &yield, 0, 100000000};
		uint64_t v;
		if (ls_param_parse(&yield_param, y, &v, msg, sizeof msg))
			config_error(msg);
		ls_wait_cfg.yield = (unsigned)v;
	}

	/* Every algorithm's tunables are validated, not only the chosen
	 * one's: a typo must not pass silently because of the algorithm. */
	for (size_t i = 0; i < ls_algo_count(); i++)
		parse_params(ls_algo_at(i)->params);

	for (size_t i = 0; i < ls_option_count(); i++) {
		const struct ls_option *o = ls_option_at(i);
		const char *v = getenv(o->env);
		if (v && o->parse && o->parse(v, msg, sizeof msg))
			config_error(msg);
	}

	verbose = parse_bool("LOCKSWAP_VERBOSE", getenv("LOCKSWAP_VERBOSE"));
	stats = parse_bool("LOCKSWAP_STATS", getenv("LOCKSWAP_STATS"));
	ls_node_counting = verbose || stats;

	if (verbose) {
		static const char *const policy[] = {"spin", "yield", "park"};
		char caps[128];
		ls_say("lockswap: algorithm=%s wait=%s spin=%u yield=%u caps=%s state=%s", a->name,
		       policy[ls_wait_cfg.policy], ls_wait_cfg.spin, ls_wait_cfg.yield,
		       ls_caps_string(a->caps, caps, sizeof caps),
		       a->state_size > LS_INLINE_STATE ? "out-of-line" : "inline");
		for (const struct ls_param *p = a->params; p && p->env; p++)
			ls_say("lockswap: %s=%llu (%s)", p->env, (unsigned long long)*p->value, p->desc);
		if (!a->timedlock && !(a->caps & LS_CAP_PASSTHROUGH))
			ls_say("lockswap: timedlock by fallback (trylock polled under the waiting policy)");
	}

	if (rw_configure(a, verbose, msg, sizeof msg)) /* LOCKSWAP_RWALGO, LOCKSWAP_SPINALGO */
		config_error(msg);

	if (a->state_size > LS_INLINE_STATE && sizeof(struct ls_ext) + a->state_size > LS_EXT_MAX) {
		snprintf(msg, sizeof msg, "algorithm %s: state of %zu bytes exceeds the pool's blocks (%u)",
			 a->name, a->state_size, LS_EXT_MAX - (unsigned)sizeof(struct ls_ext));
		config_error(msg);
	}

	ls_g.algo = a;
	ls_g.passthrough = (a->caps & LS_CAP_PASSTHROUGH) != 0;
	ls_g.ext = a->state_size > LS_INLINE_STATE;
	ls_g.lock = ls_g.ext ? ls_ext_lock : a->lock;
	ls_g.trylock = ls_g.ext ? ls_ext_trylock : a->trylock;
	ls_g.unlock = ls_g.ext ? ls_ext_unlock : a->unlock;
	ls_g.timedlock = ls_timedlock_inline;
	if (ls_map_configure(a, verbose, msg, sizeof msg)) /* an algorithm per mutex */
		config_error(msg);
	if (observe_setup(msg, sizeof msg)) /* an observer (the profiler) may wrap the above */
		config_error(msg);
	ls_g.slow_lock = ls_g.lock;
	ls_g.slow_trylock = ls_g.trylock;
	ls_g.slow_unlock = ls_g.unlock;
	if (ls_g.map)
		ls_map_published();
	ls_g.fast_kind = ls_g.passthrough ? -1 : ls_g.map ? LS_KIND_BOUND : 0;
	/* what a thread that becomes asynchronously cancelable changes, in
	 * each family that runs lockswap's locks (shim_cancel.c) */
	ls_async_on[LS_FAMILY_MUTEX] = ls_g.passthrough ? NULL : ls_mutex_async_on;
	ls_async_on[LS_FAMILY_RWLOCK] = ls_rwg.rw_on ? ls_rw_async_on : NULL;
	ls_async_on[LS_FAMILY_SPIN] = ls_rwg.spin_on ? ls_spin_async_on : NULL;
}

/* ---- LOCKSWAP_RWALGO and LOCKSWAP_SPINALGO ---- */

static void rw_resolve_glibc(void)
{
	ls_rwreal.rw.init = real_sym("pthread_rwlock_init", "GLIBC_2.34");
	ls_rwreal.rw.destroy = real_sym("pthread_rwlock_destroy", "GLIBC_2.34");
	ls_rwreal.rw.rdlock = real_sym("pthread_rwlock_rdlock", "GLIBC_2.34");
	ls_rwreal.rw.tryrdlock = real_sym("pthread_rwlock_tryrdlock", "GLIBC_2.34");
	ls_rwreal.rw.timedrdlock = real_sym("pthread_rwlock_timedrdlock", "GLIBC_2.34");
	ls_rwreal.rw.clockrdlock = real_sym("pthread_rwlock_clockrdlock", "GLIBC_2.34");
	ls_rwreal.rw.wrlock = real_sym("pthread_rwlock_wrlock", "GLIBC_2.34");
	ls_rwreal.rw.trywrlock = real_sym("pthread_rwlock_trywrlock", "GLIBC_2.34");
	ls_rwreal.rw.timedwrlock = real_sym("pthread_rwlock_timedwrlock", "GLIBC_2.34");
	ls_rwreal.rw.clockwrlock = real_sym("pthread_rwlock_clockwrlock", "GLIBC_2.34");
	ls_rwreal.rw.unlock = real_sym("pthread_rwlock_unlock", "GLIBC_2.34");
	ls_rwreal.spin.init = real_sym("pthread_spin_init", "GLIBC_2.34");
	ls_rwreal.spin.destroy = real_sym("pthread_spin_destroy", "GLIBC_2.34");
	ls_rwreal.spin.lock = real_sym("pthread_spin_lock", "GLIBC_2.34");
	ls_rwreal.spin.trylock = real_sym("pthread_spin_trylock", "GLIBC_2.34");
	ls_rwreal.spin.unlock = real_sym("pthread_spin_unlock", "GLIBC_2.34");
}

static bool rw_known_var(const char *name, size_t len)
{
	for (size_t i = 0; i < ls_rwalgo_count(); i++)
		for (const struct ls_param *p = ls_rwalgo_at(i)->params; p && p->env; p++)
			if (strlen(p->env) == len && !strncmp(p->env, name, len))
				return true;
	return false;
}

/* The rwlock algorithms' tunables, each once: c-rw-wp shares the cohort
 * locks' LOCKSWAP_COHORT_PASSES and LOCKSWAP_HIER_FASTPATH with the mutex
 * family (listed already), and algorithms of the family may share one too. */
static size_t rw_list_params(char *list, size_t used, size_t size)
{
	for (size_t i = 0; i < ls_rwalgo_count() && used < size; i++)
		for (const struct ls_param *p = ls_rwalgo_at(i)->params; p && p->env && used < size; p++) {
			bool seen = first_with(p->env) != NULL;
			for (size_t k = 0; k < i && !seen; k++)
				for (const struct ls_param *q = ls_rwalgo_at(k)->params; q && q->env; q++)
					seen |= !strcmp(q->env, p->env);
			if (!seen)
				used += (size_t)snprintf(list + used, size - used, ", %s", p->env);
		}
	return used;
}

static int rw_configure(const struct ls_algo *mutex, bool verbose, char *msg, size_t len)
{
	char err[1300], caps[128]; /* (fits msg with its prefix, as resolve_algo's why) */
	static const char *const policy[] = {"spin", "yield", "park"};

	/* Every rwlock algorithm's tunables are validated, as the mutexes'. */
	for (size_t i = 0; i < ls_rwalgo_count(); i++)
		for (const struct ls_param *p = ls_rwalgo_at(i)->params; p && p->env; p++) {
			const char *v = getenv(p->env);
			uint64_t x;
			if (!v)
				continue;
			if (ls_param_parse(p, v, &x, msg, len))
				return -1;
			*p->value = x;
		}

	const char *name = getenv("LOCKSWAP_RWALGO");
	const struct ls_rwalgo *rw = ls_rwalgo_lookup(name ? name : "pthread", err, sizeof err);
	if (!rw) {
		snprintf(msg, len, "LOCKSWAP_RWALGO: %s", err);
		return -1;
	}
	const struct ls_algo *m = (mutex->caps & LS_CAP_PASSTHROUGH) ? NULL : mutex;
	if (ls_rwalgo_start(rw, m, err, sizeof err)) {
		snprintf(msg, len, "LOCKSWAP_RWALGO=%s: %s", rw->name, err);
		return -1;
	}
	if (rw->state_size > LS_RW_INLINE_STATE && LS_CACHELINE + rw->state_size > LS_EXT_MAX) {
		snprintf(msg, len, "rwlock algorithm %s: state of %zu bytes exceeds the pool's blocks (%u)",
			 rw->name, rw->state_size, LS_EXT_MAX - LS_CACHELINE);
		return -1;
	}

	/* LOCKSWAP_RWPOLICY: the kind's preference (default), or the
	 * algorithm's own policy for every default-kind lock (rwlock.h) */
	const char *pol = getenv("LOCKSWAP_RWPOLICY");
	bool own = pol && !strcmp(pol, "algorithm");
	if (pol && !own && strcmp(pol, "kind")) {
		snprintf(msg, len, "LOCKSWAP_RWPOLICY: unknown policy '%.64s' (valid: kind, algorithm)", pol);
		return -1;
	}

	name = getenv("LOCKSWAP_SPINALGO");
	const struct ls_algo *sp = ls_spinalgo_lookup(name ? name : "pthread", err, sizeof err);
	if (!sp) {
		snprintf(msg, len, "LOCKSWAP_SPINALGO: %s", err);
		return -1;
	}

	if (verbose) {
		ls_say("lockswap: rwlock algorithm=%s wait=%s caps=%s state=%s", rw->name,
		       policy[ls_wait_cfg.policy], ls_rwcaps_string(rw->caps, caps, sizeof caps),
		       rw->state_size > LS_RW_INLINE_STATE ? "out-of-line" : "inline");
		for (const struct ls_param *p = rw->params; p && p->env; p++)
			ls_say("lockswap: %s=%llu (%s)", p->env, (unsigned long long)*p->value, p->desc);
		if (rw->policy)
			ls_say("lockswap: rwlock policy=%s (%s)", own ? "algorithm" : "kind",
			       own || (rw->caps & LS_RWCAP_EXCLUSIVE)
				   ? rw->policy
				   : "the kind's: reader preference, writer preference for the _NP kind");
		if (!(rw->caps & (LS_RWCAP_PASSTHROUGH | LS_RWCAP_TIMEOUT)))
			ls_say("lockswap: rwlock timed reads by fallback (tryrdlock polled under the waiting "
			       "policy)");
		ls_say("lockswap: spinlock algorithm=%s caps=%s", sp->name,
		       ls_caps_string(sp->caps, caps, sizeof caps));
	}

	ls_rwg.rw = rw;
	ls_rwg.rdlock = rw->rdlock;
	ls_rwg.rdunlock = rw->rdunlock;
	ls_rwg.wrlock = rw->wrlock;
	ls_rwg.wrunlock = rw->wrunlock;
	ls_rwg.rw_size = rw->state_size;
	ls_rwg.how[0] = own ? LS_RW_OWN_POLICY : 0;
	ls_rwg.rw_ext = rw->state_size > LS_RW_INLINE_STATE;
	ls_rwg.spin = sp;
	/* release: the fields above are seen by whoever reads these with
	 * acquire (the entry points' fast paths) */
	__atomic_store_n(&ls_rwg.rw_on, !(rw->caps & LS_RWCAP_PASSTHROUGH), __ATOMIC_RELEASE);
	__atomic_store_n(&ls_rwg.spin_on, !(sp->caps & LS_CAP_PASSTHROUGH), __ATOMIC_RELEASE);
	return 0;
}

/* ---- the observer (observe.h) ----
 *
 * Once ls_g and ls_real are filled in and before they are published: the
 * observers registered with LS_REGISTER_OBSERVER (the profiler) get the
 * operations the shim is about to call and what they run on, and the shim
 * then calls what they leave. 0, or -1 with one line in err. */
static int observe_setup(char *err, size_t errlen)
{
	struct ls_observe ob = {
	    .algo = ls_g.map ? ls_map_default_name() : ls_g.algo->name,
	    .passthrough = ls_g.passthrough,
	    .rwalgo = ls_rwg.map ? ls_rwmap_default_name() : ls_rwg.rw->name,
	    .spinalgo = ls_rwg.spin->name,
	    .rw_passthrough = !ls_rwg.rw_on,
	    .spin_passthrough = !ls_rwg.spin_on,
	    .algo_of = ls_g.map ? ls_map_algo_of : NULL,
	    .rule_of = ls_g.map ? ls_map_rule_of : NULL,
	    .rw_algo_of = ls_rwg.map ? ls_rwmap_algo_of : NULL,
	    .rw_rule_of = ls_rwg.map ? ls_rwmap_rule_of : NULL,
	    .mutex = {ls_g.lock, ls_g.trylock, ls_g.unlock, ls_g.timedlock},
	    .glibc = ls_real,
	};
	/* the rwlock and spinlock functions an observer may wrap: the checked
	 * ones, which need no swap when a thread becomes asynchronously
	 * cancelable (rwlock.c) */
	struct ls_rwlock_ops rw;
	struct ls_spin_ops spin;
	ls_rw_entries(&rw, false);
	ls_spin_entries(&spin, false);
	ob.rwlock = rw;
	ob.spin = spin;
	if (ls_observe_run(&ob, err, errlen))
		return -1;
	ls_g.lock = ob.mutex.lock;
	ls_g.trylock = ob.mutex.trylock;
	ls_g.unlock = ob.mutex.unlock;
	ls_g.timedlock = ob.mutex.timedlock;
	ls_real = ob.glibc;
	ls_events = ob.ev;
	/* untouched: the fast functions (function pointers compared as bytes:
	 * the structs hold nothing else) */
	if (!memcmp(&ob.rwlock, &rw, sizeof rw))
		ls_rw_entries(&ob.rwlock, true);
	if (!memcmp(&ob.spin, &spin, sizeof spin))
		ls_spin_entries(&ob.spin, true);
	ls_rw_publish(&ob.rwlock);
	ls_spin_publish(&ob.spin);
	return 0;
}

/* After ready: the options' start hooks may use pthread mutexes. */
static void start_options(void)
{
	char msg[1400];
	for (size_t i = 0; i < ls_option_count(); i++) {
		const struct ls_option *o = ls_option_at(i);
		if (o->start && o->start(ls_g.algo, verbose, msg, sizeof msg))
			config_error(msg);
	}
}

/* ---- the configuration, as ls_init runs it (shim.h) ---- */

static void config_configure(void)
{
	resolve_glibc();
	configure();
}

static void config_start(void)
{
	char msg[1400];
	if (ls_map_any() && ls_map_start(msg, sizeof msg)) /* the matcher: may dlopen */
		config_error(msg);
	start_options();
}

static const struct ls_config config = {config_configure, config_start};
LS_REGISTER_CONFIG(config);

__attribute__((destructor)) static void dtor(void)
{
	/* the rules that matched nothing: once, by the process that read them
	 * (a forked child that exits has the parent's counts) */
	if (ls_map_any() && (verbose || getpid() == config_pid))
		ls_map_report(verbose);
	if (!verbose && !stats)
		return;
	struct ls_node_stats st;
	ls_node_stats(&st);
	ls_say("lockswap: nodes in_use=%ld max_in_use=%ld carved=%ld", st.in_use, st.max_in_use, st.carved);
}
