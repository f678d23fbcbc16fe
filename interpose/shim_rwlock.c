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

/* ---- out-of-line state of an rwlock ---- */

size_t ls_rw_ext_size(const struct ls_rwalgo *a)
{
	return sizeof(struct ls_rwext) + a->state_size;
}

struct ls_rwext *ls_rw_ext_new(struct ls_rwlock *l, const struct ls_rwalgo *a, bool wait)
{
	struct ls_rwext *e = wait ? ls_ext_alloc_wait(ls_rw_ext_size(a)) : ls_ext_alloc(ls_rw_ext_size(a));
	if (e) {
		/* relaxed atomic: a stale copy of another rwlock may read it;
		 * before the state's init, which may read it (bind_rwlock.c) */
		__atomic_store_n(&e->h.owner, (const void *)&l->alg.ext, __ATOMIC_RELAXED);
		e->h.kind = a;
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
