/*
 * bind.c - the per-lock binding's tables, at the bottom of the binding
 * (bind.h): for each family with rules, one table of entries below
 * 4 GiB; the word that binds a lock to its entry; a lock's first use, which
 * binds it; the counts of locks each rule chose, and the report at exit.
 * The same code serves mutexes and rwlocks; bind.h says what an entry
 * holds and why.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>

#include "bind.h"
#include "match.h"
#include "wait.h"

struct ls_bindmap ls_bind_mutexes = {.any = LS_MATCH_NONE};
struct ls_bindmap ls_bind_rwlocks = {.any = LS_MATCH_NONE};

/* The table: below 4 GiB if the kernel has room there (MAP_32BIT asks for
 * the first 2 GiB), else anywhere; NULL without memory. */
static void *map_table(size_t size, bool *near)
{
	void *p = MAP_FAILED;
#ifdef MAP_32BIT
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
#endif
	*near = p != MAP_FAILED && (uintptr_t)p + size <= UINT32_MAX;
	if (p != MAP_FAILED && !*near)
		munmap(p, size);
	if (!*near)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static size_t table_size(const struct ls_bindmap *f)
{
	return (f->n * sizeof *f->table + 4095) & ~(size_t)4095;
}

int ls_bind_table(struct ls_bindmap *f, unsigned nrules, uint64_t rules, int any)
{
	f->n = nrules + 1;
	f->table = map_table(table_size(f), &f->near);
	f->bound =
	    mmap(NULL, f->n * sizeof *f->bound, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!f->table || f->bound == MAP_FAILED) {
		f->table = NULL;
		return -1;
	}
	/* far: the offset of an entry from one entry before the table, never 0 */
	f->bias = f->near ? 0 : (uintptr_t)f->table - sizeof *f->table;
	f->rules = rules;
	f->any = any;
	return 0;
}

void ls_bind_seal(struct ls_bindmap *f)
{
	mprotect(f->table, table_size(f), PROT_READ);
}

const struct ls_bind *ls_bind_checked(const struct ls_bindmap *f, uint64_t w)
{
	uintptr_t a = f->bias + w;
	if (!w || a < (uintptr_t)f->table || a >= (uintptr_t)(f->table + f->n) ||
	    (a - (uintptr_t)f->table) % sizeof *f->table)
		return NULL;
	return (const struct ls_bind *)a;
}

const struct ls_bind *ls_bind_rule(const struct ls_bindmap *f, int rule)
{
	return &f->table[rule == LS_MATCH_NONE ? f->n - 1 : (unsigned)rule];
}

const struct ls_bind *ls_bind_match(const struct ls_bindmap *f)
{
	return ls_bind_rule(f, ls_match_caller(f->rules, f->any));
}

void ls_bind_count(struct ls_bindmap *f, const struct ls_bind *b)
{
	atomic_fetch_add_explicit(&f->bound[b - f->table], 1, memory_order_relaxed);
}

/* Binding races. Two threads using a lock for the first time each match it
 * (one stack walk each) and CAS their entry into its word from 0: one wins,
 * the other adopts the winner's. A lock copied by value copies its binding. */
const struct ls_bind *ls_bind_first_use32(struct ls_bindmap *f, _Atomic uint32_t *w, bool *won)
{
	const struct ls_bind *b = ls_bind_match(f);
	uint32_t seen = 0;
	/* release: a mutex's LS_KIND_BOUND follows it (bind.h, "Binding races") */
	*won = atomic_compare_exchange_strong_explicit(w, &seen, (uint32_t)ls_bind_word(f, b),
						       memory_order_release, memory_order_relaxed);
	if (!*won)
		return ls_bind_at(f, seen); /* another thread bound it first: its choice stands */
	ls_bind_count(f, b);
	return b;
}

const struct ls_bind *ls_bind_first_use64(struct ls_bindmap *f, _Atomic uint64_t *w)
{
	const struct ls_bind *b = ls_bind_match(f);
	uint64_t seen = 0;
	/* relaxed: an rwlock's paths read nothing else that the binding orders */
	if (!atomic_compare_exchange_strong_explicit(w, &seen, ls_bind_word(f, b), memory_order_relaxed,
						     memory_order_relaxed))
		return ls_bind_at(f, seen);
	ls_bind_count(f, b);
	return b;
}

const char *ls_bind_rule_text(const struct ls_bind *b)
{
	return b->rule == LS_MATCH_NONE ? "(default)" : ls_match_rule((unsigned)b->rule)->text;
}

void ls_bind_say(const struct ls_bind *b, const char *what, const char *caps)
{
	ls_say("lockswap: map: %s%s%s -> %s%s caps=%s state=%s",
	       b->rule == LS_MATCH_NONE ? "no rule" : "rule '",
	       b->rule == LS_MATCH_NONE ? "" : ls_match_rule((unsigned)b->rule)->text,
	       b->rule == LS_MATCH_NONE ? "" : "'", what, b->name, caps, b->ext ? "out-of-line" : "inline");
}

/* ---- the report at exit ---- */

static uint64_t bound_at(const struct ls_bindmap *f, unsigned i)
{
	return atomic_load_explicit(&f->bound[i], memory_order_relaxed);
}

/* Under LOCKSWAP_VERBOSE, at exit: what each rule chose, and why a rule
 * chose nothing (a rule of both families: no mutex and no rwlock). */
void ls_map_report(void)
{
	const struct ls_bindmap *mx = &ls_bind_mutexes, *rw = &ls_bind_rwlocks;
	struct ls_match_stats st;
	uint64_t total = 0, rwtotal = 0;
	for (unsigned i = 0; mx->table && i < mx->n; i++)
		total += bound_at(mx, i);
	for (unsigned i = 0; rw->table && i < rw->n; i++)
		rwtotal += bound_at(rw, i);
	ls_match_stats(&st);
	char rws[64] = "";
	if (rw->table)
		snprintf(rws, sizeof rws, ", %llu rwlocks bound", (unsigned long long)rwtotal);
	ls_say("lockswap: map: %llu mutexes bound%s, %llu stack walks, %llu without a walk, %llu return "
	       "addresses resolved",
	       (unsigned long long)total, rws, (unsigned long long)st.walks, (unsigned long long)st.unwalked,
	       (unsigned long long)st.resolved);
	for (unsigned i = 0; i < ls_match_count(); i++) {
		const char *text = ls_match_rule(i)->text;
		/* a rule of the family whose locks the map binds (an rwlock rule
		 * binds nothing while every rwlock is glibc's anyway) */
		bool m = mx->table && (mx->rules >> i & 1), r = rw->table && (rw->rules >> i & 1);
		uint64_t n = m ? bound_at(mx, i) : 0, nr = r ? bound_at(rw, i) : 0;
		if (n)
			ls_say("lockswap: map: rule '%s': %llu mutexes -> %s", text, (unsigned long long)n,
			       mx->table[i].name);
		if (nr)
			ls_say("lockswap: map: rule '%s': %llu rwlocks -> %s", text, (unsigned long long)nr,
			       rw->table[i].name);
		if (n || nr || (!m && !r))
			continue;
		char why[512];
		ls_match_why_not(i, why, sizeof why);
		ls_say("lockswap: map: rule '%s' matched no %s%s%s%s", text,
		       m && r ? "mutex or rwlock"
		       : m    ? "mutex"
			      : "rwlock",
		       why[0] ? " (" : "", why, why[0] ? ")" : "");
	}
	uint64_t n = mx->table ? bound_at(mx, mx->n - 1) : 0;
	if (n)
		ls_say("lockswap: map: no rule: %llu mutexes -> %s", (unsigned long long)n,
		       mx->table[mx->n - 1].name);
	n = rw->table ? bound_at(rw, rw->n - 1) : 0;
	if (n)
		ls_say("lockswap: map: no rule: %llu rwlocks -> %s", (unsigned long long)n,
		       rw->table[rw->n - 1].name);
}
