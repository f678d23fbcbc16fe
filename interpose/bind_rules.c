/*
 * bind_rules.c - the top of the per-lock binding (bind.h says what a
 * binding is): the rules of an algorithm map (LOCKSWAP_ALGO_MAP,
 * LOCKSWAP_CONFIG) sorted into the families, mutexes and rwlocks, whose
 * entries bind_mutex.c and bind_rwlock.c then fill.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "match.h"
#include "spin/spinlock.h"
#include "wait.h"
#include "wrap/wrap.h"

static bool any_map; /* rules were read (of mutexes, rwlocks or both) */

/* The families a rule's target names: its mutex algorithm (*m) and its
 * rwlock algorithm (*rw), one or both (pthread) set; -1 with one line in
 * err if neither (an unknown name, or a spinlock algorithm). */
static int classify(const struct ls_rule *r, const struct ls_algo **m, const struct ls_rwalgo **rw, char *err,
		    size_t len)
{
	char mwhy[1300], rwhy[1300], names[1024], rnames[1024];
	const char *t = r->target, *plus = strchr(t, '+');
	*m = ls_algo_resolve(t, mwhy, sizeof mwhy); /* NAME or NAME+WRAPPER */
	/* a wrapper of the other family is never composed with this name */
	*rw = *m && plus ? NULL : ls_rwalgo_lookup(t, rwhy, sizeof rwhy);
	if (*m || *rw)
		return 0;
	if (ls_spinalgo_find(t))
		snprintf(err, len,
			 "%s: rule '%.100s': %s is a spinlock algorithm, and spinlocks take no rules (a "
			 "pthread_spinlock_t has 4 bytes, all the lock's: no room for a binding; "
			 "LOCKSWAP_SPINALGO chooses for every spinlock)",
			 r->where, r->text, t);
	else if (plus && !strstr(rwhy, "is not a wrapper"))
		snprintf(err, len, "%s: rule '%.100s': %s", r->where, r->text, rwhy);
	else if (plus)
		snprintf(err, len, "%s: rule '%.100s': %s", r->where, r->text, mwhy);
	else
		snprintf(
		    err, len,
		    "%s: rule '%.100s': unknown algorithm '%.64s' (valid: mutexes: %s, each as NAME+WRAPPER "
		    "with: %s; rwlocks: %s)",
		    r->where, r->text, t, ls_algo_names(names, sizeof names),
		    ls_wrap_names(mwhy, sizeof mwhy), ls_rwalgo_names(rnames, sizeof rnames));
	return -1;
}

int ls_map_configure(const struct ls_algo *dflt, bool verbose, char *err, size_t len)
{
	const char *text = getenv("LOCKSWAP_ALGO_MAP"), *file = getenv("LOCKSWAP_CONFIG");
	if (!text && !file)
		return 0;
	if (text && file) {
		snprintf(err, len, "LOCKSWAP_ALGO_MAP and LOCKSWAP_CONFIG are both set (valid: one of them)");
		return -1;
	}
	if (text ? ls_match_parse(text, err, len) : ls_match_parse_file(file, err, len))
		return -1;
	const char *origin = text ? "LOCKSWAP_ALGO_MAP" : "LOCKSWAP_CONFIG";
	unsigned n = ls_match_count();

	/* The families: a rule applies to the locks its algorithm is for
	 * (pthread: both), and each family has at most one '*' rule. */
	const struct ls_algo *ma[LS_MATCH_MAX];
	const struct ls_rwalgo *ra[LS_MATCH_MAX];
	uint64_t mutex_rules = 0, rw_rules = 0;
	int mutex_any = LS_MATCH_NONE, rw_any = LS_MATCH_NONE;
	for (unsigned i = 0; i < n; i++) {
		const struct ls_rule *r = ls_match_rule(i);
		if (classify(r, &ma[i], &ra[i], err, len))
			return -1;
		if (r->kind == LS_RULE_ANY) {
			int first = ma[i] && mutex_any != LS_MATCH_NONE ? mutex_any : rw_any;
			const char *fams = ma[i] && ra[i] ? "mutexes and rwlocks"
					   : ma[i]	  ? "mutexes"
							  : "rwlocks";
			if (ma[i] && mutex_any != LS_MATCH_NONE)
				ma[i] = NULL;
			if (ra[i] && rw_any != LS_MATCH_NONE)
				ra[i] = NULL;
			if (!ma[i] && !ra[i]) {
				snprintf(err, len,
					 "%s: rule '%.100s': a second '*' rule for %s (the first: '%.100s')",
					 r->where, r->text, fams, ls_match_rule((unsigned)first)->text);
				return -1;
			}
			if (ma[i])
				mutex_any = (int)i;
			if (ra[i])
				rw_any = (int)i;
		}
		if (ma[i])
			mutex_rules |= 1ull << i;
		if (ra[i])
			rw_rules |= 1ull << i;
	}
	const struct ls_algo *serial = (dflt->caps & LS_CAP_PASSTHROUGH) ? NULL : dflt;
	any_map = true;
	if (!mutex_rules) { /* every mutex as LOCKSWAP_ALGO says, as without a map */
		if (verbose)
			ls_say("lockswap: map: %u rule%s from %s%s%s, none for mutexes", n, n == 1 ? "" : "s",
			       origin, file ? " " : "", file ? file : "");
		return ls_bind_rwlock_configure(ra, n, rw_rules, rw_any, serial, verbose, err, len);
	}
	if (ls_bind_mutex_configure(ma, n, mutex_rules, mutex_any, dflt, origin, file, verbose, err, len))
		return -1;
	return rw_rules ? ls_bind_rwlock_configure(ra, n, rw_rules, rw_any, serial, verbose, err, len) : 0;
}

int ls_map_start(char *err, size_t len)
{
	return ls_match_start(err, len);
}

bool ls_map_any(void)
{
	return any_map;
}
