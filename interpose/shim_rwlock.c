/*
 * shim_rwlock.c - what the reader-writer lock and spinlock families share
 * (shim_rwlock.h), below them: the configuration their entry points read
 * (ls_rwg) and glibc's functions (ls_rwreal), which config.c fills, and the
 * out-of-line state of an rwlock.
 */
#define _GNU_SOURCE
#include "pool.h"
#include "shim_rwlock.h"

struct ls_rwglobal ls_rwg = {.how = {0, LS_RW_PREFER_WRITER}};
struct ls_rwreal ls_rwreal;

/* ---- the lives of rwlocks (shim_rwlock.h) ---- */

#define GEN_RANGE 4096u
static _Atomic uint32_t gen_next = 1;
static __thread uint32_t gen_mine, gen_left;

uint32_t ls_rw_gen_new(void)
{
	for (;;) {
		if (LS_UNLIKELY(!gen_left)) {
			/* relaxed: the numbers only need to be distinct */
			gen_mine = atomic_fetch_add_explicit(&gen_next, GEN_RANGE, memory_order_relaxed);
			gen_left = GEN_RANGE;
		}
		gen_left--;
		uint32_t g = gen_mine++;
		if (g) /* 0 is "not stamped" (after the counter wraps) */
			return g;
	}
}

/* ---- out-of-line state of an rwlock ---- */

size_t ls_rw_ext_size(const struct ls_rwalgo *a)
{
	return sizeof(struct ls_rwext) + a->state_size;
}

/* The pool frees the block of an rwlock that is gone without destroy
 * (pool.h, "Reclaiming"): first what its state holds, as destroy would. */
static void rw_ext_reclaim(struct ls_ext_head *h)
{
	const struct ls_rwalgo *a = h->kind;
	if (a->destroy)
		a->destroy((struct ls_rwext *)h + 1);
}

struct ls_rwext *ls_rw_ext_new(struct ls_rwlock *l, const struct ls_rwalgo *a, bool wait)
{
	struct ls_rwext *e = ls_ext_alloc_for(&l->alg.ext, ls_rw_ext_size(a), wait);
	if (e) {
		/* relaxed atomic: a stale copy of another rwlock may read it;
		 * before the state's init, which may read it (bind_rwlock.c) */
		__atomic_store_n(&e->h.owner, (const void *)&l->alg.ext, __ATOMIC_RELAXED);
		e->h.kind = a;
		e->h.reclaim = ls_ext_reclaim_id(rw_ext_reclaim);
		e->h.idle = 1; /* every use enters it (shim_rwlock.h) */
		/* relaxed: a hint; a fresh block outlives the pool's next look */
		atomic_store_explicit(&e->h.used, 1, memory_order_relaxed);
		if (a->init)
			a->init(e + 1);
	}
	return e;
}

void *ls_rw_ext_attach_for(struct ls_rwlock *l, const struct ls_rwalgo *a)
{
	struct ls_rwext *e = ls_rw_ext_new(l, a, true);
	return (struct ls_rwext *)ls_ext_attach(&l->alg.ext, &e->h, ls_rw_ext_size(a), NULL) + 1;
}

__attribute__((noinline)) void *ls_rw_ext_attach(struct ls_rwlock *l)
{
	return ls_rw_ext_attach_for(l, ls_rwg.rw);
}

const struct ls_rwalgo *ls_rwg_algo(struct ls_rwlock *l)
{
	(void)l;
	return ls_rwg.rw;
}

__attribute__((noinline)) void *ls_rw_ext_enter_slow(struct ls_rwlock *l, ls_rwalgo_of_fn *algo_of)
{
	for (;;) {
		ls_rw_ext_attach_for(l, algo_of(l));
		/* the pool may have freed it since (an idle lock's block): again */
		struct ls_rwext *e = (struct ls_rwext *)ls_ext_enter(&l->alg.ext);
		if (e)
			return e + 1;
	}
}

__attribute__((noinline)) void *ls_rw_ext_release_slow(struct ls_rwlock *l, ls_rwalgo_of_fn *algo_of)
{
	void *st = ls_rw_ext_enter(l, algo_of);
	ls_hold_drop_below(&((struct ls_rwext *)st - 1)->h); /* the acquisition's, if any */
	return st;
}
