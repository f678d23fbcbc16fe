/*
 * profile_records.c - the records (see profile_records.h): a map from
 * address to live record (open addressing, backward-shift deletion), the
 * call sites merged into them, and a record's life: created at init or
 * first use with its creation stack, ended at destroy or when the memory
 * turns out reused.
 */
#include <string.h>

#include "observe.h"
#include "profile_records.h"

#define GSITE_BUCKETS 16384

static struct grec **map; /* address -> live record, linear probing */
static size_t map_cap, map_used;
static struct gsite **gsites; /* GSITE_BUCKETS chains */

static size_t map_slot(uintptr_t a, size_t cap)
{
	return (size_t)(((uint64_t)a >> 3) * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
}

static struct grec *map_get(uintptr_t a)
{
	if (!map_cap)
		return NULL;
	for (size_t i = map_slot(a, map_cap);; i = (i + 1) & (map_cap - 1)) {
		struct grec *g = map[i];
		if (!g || g->addr == a)
			return g;
	}
}

static bool map_put(struct grec *g)
{
	if ((map_used + 1) * 2 > map_cap) {
		size_t cap = map_cap ? map_cap * 2 : 1024;
		struct grec **m = ls_prof_map(cap * sizeof *m);
		if (!m)
			return false;
		for (size_t i = 0; i < map_cap; i++)
			if (map[i]) {
				size_t j = map_slot(map[i]->addr, cap);
				while (m[j])
					j = (j + 1) & (cap - 1);
				m[j] = map[i];
			}
		ls_prof_unmap(map, map_cap * sizeof *map);
		map = m;
		map_cap = cap;
	}
	size_t i = map_slot(g->addr, map_cap);
	while (map[i])
		i = (i + 1) & (map_cap - 1);
	map[i] = g;
	map_used++;
	return true;
}

/* Backward-shift deletion keeps every probe sequence unbroken. */
static void map_del(struct grec *g)
{
	size_t i = map_slot(g->addr, map_cap);
	while (map[i] != g)
		i = (i + 1) & (map_cap - 1);
	for (size_t j = (i + 1) & (map_cap - 1); map[j]; j = (j + 1) & (map_cap - 1)) {
		size_t home = map_slot(map[j]->addr, map_cap);
		/* can map[j] move to the hole at i? (home not in (i, j]) */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			map[i] = map[j];
			i = j;
		}
	}
	map[i] = NULL;
	map_used--;
}

/* Under a map (observe.h): the algorithm and rule of a lockswap mutex, or
 * NULLs. Asked without the global lock (it may walk the stack). */
static const char *(*algo_of)(const pthread_mutex_t *), *(*rule_of)(const pthread_mutex_t *);
static const char *(*rw_algo_of)(const pthread_rwlock_t *), *(*rw_rule_of)(const pthread_rwlock_t *);
struct chosen {
	const char *algo, *rule;
};
static struct chosen chosen_of(uintptr_t addr, int kind, bool glibc)
{
	struct chosen c = {NULL, NULL};
	if (kind == PK_MUTEX && !glibc && algo_of) {
		c.algo = algo_of((const pthread_mutex_t *)addr);
		c.rule = rule_of((const pthread_mutex_t *)addr);
	} else if (kind == PK_RWLOCK && !glibc && rw_algo_of) {
		c.algo = rw_algo_of((const pthread_rwlock_t *)addr);
		c.rule = rw_rule_of((const pthread_rwlock_t *)addr);
	}
	return c;
}

/* Under the global lock. NULL if out of memory. */
static struct grec *grec_new(uintptr_t addr, int kind, bool glibc, int origin, const uintptr_t *f, unsigned n,
			     struct chosen c)
{
	struct grec *g = ls_prof_galloc(sizeof *g + n * sizeof *f);
	if (!g)
		return NULL;
	g->addr = addr;
	g->kind = (uint8_t)kind;
	g->glibc = glibc;
	g->origin = (uint8_t)origin;
	g->algo = c.algo;
	g->rule = c.rule;
	if (kind == PK_MUTEX) {
		g->mkind = ((const pthread_mutex_t *)addr)->__data.__kind;
	} else if (kind == PK_RWLOCK) {
		const pthread_rwlock_t *rw = (const pthread_rwlock_t *)addr;
		g->mkind = (int32_t)(rw->__data.__flags & 0xff) | (rw->__data.__shared ? RW_PSHARED : 0);
	}
	g->origin_frames = (uintptr_t *)(g + 1);
	g->norigin = n;
	g->pid = ls_prof.pid;
	g->internal = ls_stack_walking() || (n && ls_stack_in_unwinder(f[0]));
	memcpy(g->origin_frames, f, n * sizeof *f);
	if (!map_put(g))
		return NULL;
	g->id = kind == PK_MUTEX    ? ++ls_prof.nmutex
		: kind == PK_COND   ? ++ls_prof.ncond
		: kind == PK_RWLOCK ? ++ls_prof.nrwlock
				    : ++ls_prof.nspin;
	if (ls_prof.all_tail)
		ls_prof.all_tail->next_all = g;
	else
		ls_prof.all = g;
	ls_prof.all_tail = g;
	return g;
}

/* Under the global lock. */
static void grec_end(struct grec *g, int why)
{
	map_del(g);
	g->ended = (uint8_t)why;
	atomic_store_explicit(&g->dead, 1, memory_order_release);
}

struct grec *ls_prof_grec_find(uintptr_t addr, int kind, bool glibc)
{
	ls_prof_lock();
	struct grec *g = map_get(addr);
	if (g && g->kind != kind) {
		grec_end(g, END_REUSED); /* memory reused without destroy */
		g = NULL;
	}
	ls_prof_unlock();
	if (g)
		return g;
	uintptr_t f[PROF_MAX_FRAMES];
	unsigned n = ls_prof_take_stack(f, ls_prof.frames);
	ls_prof_cover_frames(f, n);
	struct chosen c = chosen_of(addr, kind, glibc);
	ls_prof_lock();
	g = map_get(addr);
	if (g && g->kind != kind) {
		grec_end(g, END_REUSED);
		g = NULL;
	}
	if (!g)
		g = grec_new(addr, kind, glibc, ORIGIN_FIRST_USE, f, n, c);
	ls_prof_unlock();
	return g;
}

/* ---- a record's life ---- */

void ls_prof_created(uintptr_t addr, int kind, bool glibc)
{
	if (!ls_prof_guard_enter())
		return;
	uintptr_t f[PROF_MAX_FRAMES];
	unsigned n = ls_prof_take_stack(f, ls_prof.frames);
	ls_prof_cover_frames(f, n);
	struct chosen c = chosen_of(addr, kind, glibc);
	ls_prof_lock();
	struct grec *old = map_get(addr);
	if (old)
		grec_end(old, END_REUSED); /* initialised again without destroy */
	if (!grec_new(addr, kind, glibc, ORIGIN_INIT, f, n, c))
		atomic_fetch_add_explicit(&ls_prof.unrecorded, 1, memory_order_relaxed);
	ls_prof_unlock();
	ls_prof_guard_leave();
}

void ls_prof_ended(uintptr_t addr)
{
	if (!ls_prof_guard_enter())
		return;
	ls_prof_lock();
	struct grec *g = map_get(addr);
	if (g)
		grec_end(g, END_DESTROYED);
	ls_prof_unlock();
	ls_prof_guard_leave();
}

/* ---- call sites ---- */

struct gsite *ls_prof_gsite(struct grec *g, uint32_t hash, bool read, const uintptr_t *f, uint32_t n)
{
	struct gsite **head = &gsites[hash % GSITE_BUCKETS], *x;
	for (x = *head; x; x = x->next_hash)
		if (x->g == g && x->hash == hash && x->read == read && x->nframes == n &&
		    !memcmp(x->frames, f, n * sizeof f[0]))
			return x;
	x = ls_prof_galloc(sizeof *x + n * sizeof f[0]);
	if (!x)
		return NULL;
	x->g = g;
	x->hash = hash;
	x->read = read;
	x->nframes = n;
	memcpy(x->frames, f, n * sizeof f[0]);
	x->next_hash = *head;
	*head = x;
	x->next_rec = g->sites;
	g->sites = x;
	return x;
}

bool ls_prof_records_init(const struct ls_observe *ob)
{
	algo_of = ob->algo_of;
	rule_of = ob->rule_of;
	rw_algo_of = ob->rw_algo_of;
	rw_rule_of = ob->rw_rule_of;
	gsites = ls_prof_map(GSITE_BUCKETS * sizeof *gsites);
	return gsites != NULL;
}
