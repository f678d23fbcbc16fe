/*
 * shim_rwlock.c - what the reader-writer lock and spinlock families share
 * (shim_rwlock.h), below them: the configuration their entry points read
 * (ls_rwg) and glibc's functions (ls_rwreal), which config.c fills, and the
 * out-of-line state of an rwlock.
 */
#define _GNU_SOURCE
#include "pool.h"
#include "shim_rwlock.h"

struct ls_rwglobal ls_rwg;
struct ls_rwreal ls_rwreal;

/* ---- out-of-line state of an rwlock, for ls_rwg's algorithm ---- */

size_t ls_rw_ext_size(void)
{
	return sizeof(struct ls_rwext) + ls_rwg.rw_size;
}

struct ls_rwext *ls_rw_ext_new(struct ls_rwlock *l, bool wait)
{
	struct ls_rwext *e = wait ? ls_ext_alloc_wait(ls_rw_ext_size()) : ls_ext_alloc(ls_rw_ext_size());
	if (e) {
		/* relaxed atomic: a stale copy of another rwlock may read it */
		__atomic_store_n(&e->h.owner, (const void *)&l->alg.ext, __ATOMIC_RELAXED);
		e->h.kind = ls_rwg.rw;
		if (ls_rwg.rw->init)
			ls_rwg.rw->init(e + 1);
	}
	return e;
}

__attribute__((noinline)) void *ls_rw_ext_attach(struct ls_rwlock *l)
{
	struct ls_rwext *e = ls_rw_ext_new(l, true);
	return (struct ls_rwext *)ls_ext_attach(&l->alg.ext, &e->h, ls_rw_ext_size(), NULL) + 1;
}
