/*
 * profile_thread.c - the per-thread tables (see profile_thread.h): the
 * registry of threads, their tables' growth, merges into the records, and
 * a thread's exit.
 */
#include <pthread.h>
#include <string.h>

#include "profile_modules.h"
#include "profile_records.h"
#include "profile_thread.h"

#define TABLE_CAP 4096 /* entries or call sites per thread before a merge */

static uint64_t next_serial;

static struct pthr *threads; /* registry, under the global lock */
static pthread_key_t exit_key;
static bool have_key;

__attribute__((noinline)) void ls_prof_carry(struct tent *e, uint32_t *h, unsigned b, bool wait)
{
	ls_prof_lock();
	(wait ? e->g->wait_h : e->g->hold_h)[b] += (uint64_t)h[b] + 1;
	__atomic_store_n(&h[b], 0, __ATOMIC_RELAXED);
	ls_prof_unlock();
}

/* Under the global lock: adds an entry into its record, leaving it zero. */
static void merge_entry(struct tent *e)
{
	struct grec *g = e->g;
	for (int i = 0; i < LS_PROF_NCOUNT; i++)
		g->n[i] += TAKE(e->n[i]);
	g->wait_sum += TAKE(e->wait_sum);
	g->hold_sum += TAKE(e->hold_sum);
	g->rd_wait_sum += TAKE(e->rd_wait_sum);
	g->rd_hold_sum += TAKE(e->rd_hold_sum);
	uint64_t wm = TAKE(e->wait_max), hm = TAKE(e->hold_max);
	if (wm > g->wait_max)
		g->wait_max = wm;
	if (hm > g->hold_max)
		g->hold_max = hm;
	for (int b = 0; b < LS_PROF_BUCKETS; b++) {
		g->wait_h[b] += TAKE(e->wait_h[b]);
		g->hold_h[b] += TAKE(e->hold_h[b]);
	}
}

/* Under the global lock. */
static void merge_site(struct tsite *s)
{
	uint64_t c = TAKE(s->count), to = TAKE(s->timeouts), w = TAKE(s->wait_ns);
	if (!c && !to)
		return;
	struct gsite *x = ls_prof_gsite(s->g, s->hash, s->read, s->frames, s->nframes);
	if (!x) {
		atomic_fetch_add_explicit(&ls_prof.unrecorded, c + to, memory_order_relaxed);
		return;
	}
	x->count += c;
	x->timeouts += to;
	x->wait_ns += w;
}

/* Under the global lock. */
static void merge_thread(struct pthr *t)
{
	for (uint32_t i = 0; i < t->cap; i++) {
		struct tent *e = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
		if (e)
			merge_entry(e);
	}
	for (int b = 0; b < SITE_BUCKETS; b++)
		for (struct tsite *s = __atomic_load_n(&t->sites[b], __ATOMIC_ACQUIRE); s; s = s->next)
			merge_site(s);
}

void ls_prof_merge_all(void)
{
	for (struct pthr *t = threads; t; t = t->next)
		merge_thread(t);
}

/* Empties a thread's table (its counts already merged, or discarded). */
static void reset_table(struct pthr *t)
{
	ls_prof_arena_free(&t->arena);
	memset(t->slots, 0, t->cap * sizeof *t->slots);
	memset(t->sites, 0, sizeof t->sites);
	t->mru = NULL;
	t->nent = t->nsites = 0;
}

static void flush_table(struct pthr *t)
{
	ls_prof_lock();
	merge_thread(t);
	reset_table(t);
	ls_prof_unlock();
}

__attribute__((noinline)) struct pthr *ls_prof_pthr_new(void)
{
	struct pthr *t = ls_prof_map(sizeof *t);
	if (!t)
		return NULL;
	t->cap = 64;
	t->slots = ls_prof_map(t->cap * sizeof *t->slots);
	if (!t->slots) {
		ls_prof_unmap(t, sizeof *t);
		return NULL;
	}
	t->sample_left = 1;
	ls_prof_lock();
	t->serial = ++next_serial;
	t->next = threads;
	if (threads)
		threads->prev = t;
	threads = t;
	ls_prof.threads++;
	ls_prof_unlock();
	ls_prof_tls.t = t;
	if (have_key)
		pthread_setspecific(exit_key, t);
	return t;
}

static void pthr_free(struct pthr *t)
{
	ls_prof_arena_free(&t->arena);
	ls_prof_unmap(t->slots, t->cap * sizeof *t->slots);
	ls_prof_unmap(t, sizeof *t);
}

/* Thread exit (pthread key destructor): merge, unregister, free. */
static void pthr_exit(void *p)
{
	struct pthr *t = p;
	if (t != ls_prof_tls.t) /* a stale value (see ls_prof_threads_fork_child) */
		return;
	ls_prof_tls.guard = 1;
	ls_prof_tls.t = NULL;
	ls_prof_lock();
	merge_thread(t);
	if (t->prev)
		t->prev->next = t->next;
	else
		threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	ls_prof_unlock();
	pthr_free(t);
	ls_prof_tls.guard = 0;
}

static bool grow_slots(struct pthr *t)
{
	uint32_t cap = t->cap * 2;
	struct tent **s = ls_prof_map(cap * sizeof *s);
	if (!s)
		return false;
	ls_prof_lock(); /* the report reads other threads' slots */
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->slots[i]) {
			size_t j = ls_prof_tslot(t->slots[i]->key, cap);
			while (s[j])
				j = (j + 1) & (cap - 1);
			s[j] = t->slots[i];
		}
	struct tent **old = t->slots;
	uint32_t oldcap = t->cap;
	t->slots = s;
	t->cap = cap;
	ls_prof_unlock();
	ls_prof_unmap(old, oldcap * sizeof *old);
	return true;
}

__attribute__((noinline)) struct tent *ls_prof_entry_slow(struct pthr *t, uintptr_t key, int kind, bool glibc)
{
	struct tent *e = ls_prof_lookup(t, key);
	if (e) {
		ls_prof_lock();
		merge_entry(e); /* into the ended record */
		ls_prof_unlock();
	}
	struct grec *g = ls_prof_grec_find(key, kind, glibc);
	if (!g) {
		atomic_fetch_add_explicit(&ls_prof.unrecorded, 1, memory_order_relaxed);
		return NULL;
	}
	if (!e) {
		if (t->nent >= TABLE_CAP)
			flush_table(t);
		if ((t->nent + 1) * 2 > t->cap && !grow_slots(t))
			return NULL;
		e = ls_prof_arena_alloc(&t->arena, sizeof *e);
		if (!e) {
			atomic_fetch_add_explicit(&ls_prof.unrecorded, 1, memory_order_relaxed);
			return NULL;
		}
		e->key = key;
		e->g = g;
		size_t i = ls_prof_tslot(key, t->cap);
		while (t->slots[i])
			i = (i + 1) & (t->cap - 1);
		/* release: the report reads the entry through this pointer */
		__atomic_store_n(&t->slots[i], e, __ATOMIC_RELEASE);
		t->nent++;
	}
	e->g = g;
	t->mru = e;
	return e;
}

void ls_prof_site_add(struct pthr *t, struct grec *g, bool read, const uintptr_t *f, unsigned n,
		      uint64_t wait, bool timeout)
{
	uint32_t h = ls_prof_hash_stack(g, read, f, n);
	struct tsite *s;
	for (s = t->sites[h % SITE_BUCKETS]; s; s = s->next)
		if (s->g == g && s->hash == h && s->read == read && s->nframes == n &&
		    !memcmp(s->frames, f, n * sizeof *f))
			break;
	if (!s) {
		if (t->nsites >= TABLE_CAP)
			flush_table(t);
		ls_prof_cover_frames(f, n);
		s = ls_prof_arena_alloc(&t->arena, sizeof *s + n * sizeof *f);
		if (!s) {
			atomic_fetch_add_explicit(&ls_prof.unrecorded, 1, memory_order_relaxed);
			return;
		}
		s->g = g;
		s->hash = h;
		s->read = read;
		s->nframes = n;
		memcpy(s->frames, f, n * sizeof *f);
		s->next = t->sites[h % SITE_BUCKETS];
		__atomic_store_n(&t->sites[h % SITE_BUCKETS], s, __ATOMIC_RELEASE);
		t->nsites++;
	}
	if (timeout)
		BUMP(s->timeouts, 1);
	else
		BUMP(s->count, 1);
	BUMP(s->wait_ns, wait);
}

void ls_prof_threads_start(void)
{
	have_key = pthread_key_create(&exit_key, pthr_exit) == 0;
}

void ls_prof_threads_fork_child(void)
{
	struct pthr *me = ls_prof_tls.t;
	for (struct pthr *t = threads, *next; t; t = next) {
		next = t->next;
		if (t != me)
			pthr_free(t);
	}
	threads = me;
	ls_prof.threads = 0;
	if (me) {
		me->next = me->prev = NULL;
		reset_table(me);
		ls_prof.threads = 1;
	}
}
