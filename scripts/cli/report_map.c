/*
 * report_map.c - `lockswap report --map` (see report_map.h).
 *
 * The algorithm of a hot mutex, unless --algo names one, from its counts
 * (a starting point: `lockswap compare --per-lock` measures):
 *   more threads than CPUs        mutexee (spins, then sleeps; never hands
 *                                 the lock to a sleeping waiter)
 *   queues of 3 or more waiters   mcs (FIFO, each waiter spins on its own
 *                                 line)
 *   otherwise                     ttas
 * and of a hot rwlock, unless --rwalgo names one: pf-t+bravo when its reads
 * outnumber its writes 4 to 1 (BRAVO's reader bias), else pf-t (phase-fair).
 * Each family's rules name only its own locks (the algorithm decides the
 * family: interpose/bind_rules.c), so candidates are checked within a family.
 * A rule matches any frame of a creation stack (match/match.h), so a rule is
 * proposed only if it names no frame of another mutex's saved creation
 * stack (other than mutexes given the same algorithm): the innermost frame
 * outside the C and C++ runtimes first, as a function, then as FILE:LINE
 * (or, without either, a stripped program's, as MODULE+0xOFFSET), then the
 * frames above it. A profile keeps LOCKSWAP_PROFILE_FRAMES frames
 * of each stack (8 by default); the matcher looks at 32, so a rule can
 * still name a frame deeper than the profile saw.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_map.h"

/* A rule's pattern: a function, FILE:LINE, or MODULE+0xOFFSET (a frame
 * without either: a stripped program's). */
enum ckind { C_FUNC, C_LINE, C_OFFSET };
struct cand {
	enum ckind k;
	const char *v;
};

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* The candidate's text for frame fr (s: stack, f: frame), or NULL. buf for
 * MODULE+0xOFFSET. */
static const char *cand_text(const struct ls_prof *p, const char *const *const *syms, unsigned s, unsigned f,
			     enum ckind k, char *buf, size_t len)
{
	const struct ls_prof_frame *fr = &p->stacks[s].f[f];
	switch (k) {
	case C_FUNC:
		return syms[s][f];
	case C_LINE:
		return fr->line;
	default:
		if (!fr->module)
			return NULL;
		snprintf(buf, len, "%s+0x%llx", base_of(fr->module), (unsigned long long)fr->offset);
		return buf;
	}
}

static const char *choose(const struct ls_prof *p, const struct ls_prof_row *r, const char *algo,
			  unsigned cpus)
{
	if (algo)
		return algo;
	if (cpus && p->h.threads > cpus)
		return "mutexee";
	if (r->max_waiters >= 3)
		return "mcs";
	return "ttas";
}

/* An rwlock's: phase-fair (pf-t: neither readers nor writers starve),
 * behind BRAVO's reader bias when reads outnumber writes 4 to 1 (one inner
 * algorithm for every +bravo rule: a process composes a wrapper once). */
static const char *choose_rw(const struct ls_prof_row *r, const char *algo)
{
	if (algo)
		return algo;
	uint64_t rd = r->n[LS_PROF_RDLOCK] + r->n[LS_PROF_RDTRY] + r->n[LS_PROF_RDTIMED];
	uint64_t wr = r->n[LS_PROF_LOCK] + r->n[LS_PROF_TRY] + r->n[LS_PROF_TIMED];
	return rd >= 4 * wr ? "pf-t+bravo" : "pf-t";
}

/* One family's rows: mutexes or rwlocks (a rule applies to the family its
 * algorithm is for). */
struct family {
	const char *noun; /* "mutex", "rwlock" */
	const struct ls_prof_row *rows;
	unsigned n;
	bool rw;
};

/* Does stack s have a frame that the candidate names? */
static bool names(const struct ls_prof *p, const char *const *const *syms, unsigned s, struct cand c)
{
	char buf[600];
	if (s >= p->nstacks)
		return false;
	for (unsigned f = 0; f < p->stacks[s].n; f++) {
		const char *v = cand_text(p, syms, s, f, c.k, buf, sizeof buf);
		if (v && !strcmp(v, c.v))
			return true;
	}
	return false;
}

/* The candidate catches no mutex but those given `want` (alg[i]: the
 * algorithm chosen for mutex i, NULL for the rest): 0, or the id of one it
 * would catch too. */
static unsigned catches_other(const struct ls_prof *p, const char *const *const *syms,
			      const struct family *fam, const char **alg, struct cand c, const char *want)
{
	for (unsigned i = 0; i < fam->n; i++)
		if (names(p, syms, fam->rows[i].stack, c) && (!alg[i] || strcmp(alg[i], want)))
			return fam->rows[i].id;
	return 0;
}

static bool contended(const struct ls_prof_row *r, bool rw)
{
	if (r->wait_ns || r->n[LS_PROF_CONTENDED] || r->n[LS_PROF_TIMEOUT])
		return true;
	return rw && (r->n[LS_PROF_RDCONTENDED] || r->n[LS_PROF_RDTIMEOUT]);
}

/* A family's comment lines, and its rules into rule[0..fam->n) (NULL: none). */
static int propose(FILE *out, const struct ls_prof *p, const char *const *const *syms,
		   const struct family *fam, unsigned top, const char *algo, unsigned cpus, char **rule)
{
	unsigned n = fam->n;
	const char **alg = calloc(n + 1, sizeof *alg);
	if (!alg)
		return -1;
	unsigned hot = 0;
	for (unsigned i = 0; i < n && hot < top; i++) {
		const struct ls_prof_row *r = &fam->rows[i];
		/* glibc's for its attributes (robust, process-shared...): no map
		 * can change it; glibc's under LOCKSWAP_ALGO=pthread: it can */
		bool attrs = fam->rw ? strstr(r->type, "pshared") != NULL : r->glibc && strchr(r->type, '+');
		if (attrs || !contended(r, fam->rw))
			continue;
		alg[i] = fam->rw ? choose_rw(r, algo) : choose(p, r, algo, cpus);
		hot++;
	}
	if (!fam->rw)
		fprintf(out, "# lockswap report --map: %u contended mutex%s of %u, by wait time%s\n", hot,
			hot == 1 ? "" : "es", n,
			algo ? "" : "; algorithms from their counts (--algo to choose)");
	else
		fprintf(out, "# and %u contended rwlock%s of %u, by wait time%s\n", hot, hot == 1 ? "" : "s",
			n, algo ? "" : "; algorithms from their counts (--rwalgo to choose)");
	for (unsigned i = 0; i < n; i++) {
		const struct ls_prof_row *r = &fam->rows[i];
		if (!alg[i])
			continue;
		const struct ls_prof_stack *s = r->stack < p->nstacks ? &p->stacks[r->stack] : NULL;
		const char *why = s && s->n ? NULL : "no creation stack in the profile";
		struct cand c = {C_FUNC, NULL}, inner = {C_FUNC, NULL};
		unsigned other = 0;
		static char texts[3][600], innerbuf[600];
		for (unsigned f = s ? ls_prof_naming_frame(s) : 0; !why && !c.v && s && f < s->n; f++) {
			if (s->f[f].module && ls_prof_runtime_module(s->f[f].module))
				continue;
			/* by name if it has one, else by where its call returns */
			for (enum ckind k = C_FUNC; k <= C_OFFSET && !c.v; k++) {
				if (k == C_OFFSET && (syms[r->stack][f] || s->f[f].line))
					break;
				struct cand x = {
				    k, cand_text(p, syms, r->stack, f, k, texts[k], sizeof texts[k])};
				if (!x.v)
					continue;
				unsigned o = catches_other(p, syms, fam, alg, x, alg[i]);
				if (!o)
					c = x;
				else if (!inner.v) {
					snprintf(innerbuf, sizeof innerbuf, "%s", x.v);
					inner = (struct cand){k, innerbuf};
					other = o;
				}
			}
		}
		char whybuf[1024];
		if (!why && !c.v && inner.v) {
			snprintf(
			    whybuf, sizeof whybuf,
			    "its creation site %s also created %s #%u, which these rules give another "
			    "algorithm, and no frame of its stack names it alone; a larger --top may take "
			    "both",
			    inner.v, fam->noun, other);
			why = whybuf;
		} else if (!why && !c.v) {
			why = "no frame of its creation stack has a name";
		}
		if (fam->rw)
			fprintf(
			    out,
			    "# rwlock #%u: wait %.3f ms, %llu contended (%llu reads), longest queue %llu: ",
			    r->id, (double)r->wait_ns / 1e6,
			    (unsigned long long)(r->n[LS_PROF_CONTENDED] + r->n[LS_PROF_RDCONTENDED]),
			    (unsigned long long)r->n[LS_PROF_RDCONTENDED],
			    (unsigned long long)r->max_waiters);
		else
			fprintf(out, "# mutex #%u: wait %.3f ms, %llu contended, longest queue %llu: ", r->id,
				(double)r->wait_ns / 1e6, (unsigned long long)r->n[LS_PROF_CONTENDED],
				(unsigned long long)r->max_waiters);
		if (why) {
			fprintf(out, "left out (%s)\n", why);
			alg[i] = NULL;
			continue;
		}
		size_t len = strlen(c.v) + strlen(alg[i]) + 2;
		rule[i] = malloc(len);
		if (!rule[i]) {
			free(alg);
			return -1;
		}
		snprintf(rule[i], len, "%s=%s", c.v, alg[i]);
		bool dup = false;
		for (unsigned k = 0; k < i; k++)
			dup |= rule[k] && !strcmp(rule[k], rule[i]);
		fprintf(out, "%s%s\n", rule[i], dup ? " (as above)" : "");
		if (dup) {
			free(rule[i]);
			rule[i] = NULL;
		}
	}
	free(alg);
	return 0;
}

int report_map(FILE *out, const struct ls_prof *p, const char *const *const *syms, unsigned top,
	       const char *algo, const char *rwalgo, unsigned cpus)
{
	const struct family fams[2] = {{"mutex", p->mutex, p->h.nmutex, false},
				       {"rwlock", p->rwlock, p->h.nrwlock, true}};
	char **rule[2];
	int r = 0;
	for (int f = 0; f < 2; f++)
		rule[f] = calloc(fams[f].n + 1, sizeof *rule[f]);
	for (int f = 0; f < 2 && !r; f++) {
		if (!rule[f])
			r = -1;
		else if ((f == 0 || fams[f].n) &&
			 propose(out, p, syms, &fams[f], top, f ? rwalgo : algo, cpus, rule[f]))
			r = -1;
	}
	if (!r) {
		bool first = true;
		fputs("LOCKSWAP_ALGO_MAP='", out);
		for (int f = 0; f < 2; f++)
			for (unsigned i = 0; i < fams[f].n; i++)
				if (rule[f][i]) {
					fprintf(out, "%s%s", first ? "" : ",", rule[f][i]);
					first = false;
				}
		/* the rest as profiled: the rwlocks' '*' first, so that a
		 * '*=pthread' after it is the mutexes' alone */
		if (p->h.nrwlock && p->h.rwalgo && *p->h.rwalgo && strcmp(p->h.rwalgo, "pthread")) {
			fprintf(out, "%s*=%s", first ? "" : ",", p->h.rwalgo);
			first = false;
		}
		const char *rest = p->h.algo && *p->h.algo ? p->h.algo : "ttas";
		fprintf(out, "%s*=%s'\n", first ? "" : ",", rest);
	}
	for (int f = 0; f < 2; f++) {
		for (unsigned i = 0; rule[f] && i < fams[f].n; i++)
			free(rule[f][i]);
		free(rule[f]);
	}
	return r || ferror(out) ? -1 : 0;
}
