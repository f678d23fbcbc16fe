/*
 * rwlock_held.c - the calling thread's read holds: the table itself, and
 * what rwlock_held.h keeps out of line (the overflow blocks, attached to the
 * thread's word so that the pool reclaims them once the thread is gone);
 * and, in a fork child, the algorithm's fork_rdheld for each hold the
 * forking thread had (rwlock.h, FORK).
 */
#define _GNU_SOURCE

#include <pthread.h>

#include "fork.h"
#include "pool.h"
#include "rwlock_held.h"

__thread struct ls_rdtable ls_rd __attribute__((tls_model("initial-exec")));

__attribute__((noinline)) struct ls_rdentry *ls_rd_find_more(const struct ls_rwlock *l)
{
	for (struct ls_rdblock *b = ls_rd_last(); b; b = b->prev)
		for (size_t i = b->n; i-- > 0;)
			if (b->e[i].lock == l)
				return &b->e[i];
	return NULL;
}

static const char rd_kind; /* the kind of an overflow block (pool.h) */

/* The pool frees the newest block of a thread that is gone (its word was
 * reused or unmapped): the older ones chained behind it go first. Their
 * holds went with the thread, as a thread that exits holding a read lock
 * leaves it held in glibc. */
static void rd_reclaim(struct ls_ext_head *h)
{
	struct ls_rdblock *p = ((struct ls_rdblock *)h)->prev;
	while (p) {
		struct ls_rdblock *older = p->prev;
		ls_ext_free(p, sizeof *p);
		p = older;
	}
}

__attribute__((noinline)) void ls_rd_push_more(const struct ls_rwlock *l, void *token, uint32_t gen)
{
	struct ls_rdblock *b = ls_rd_last();
	if (!b || b->n == LS_RD_BLOCK) {
		struct ls_rdblock *nb = ls_ext_alloc_wait(sizeof *nb); /* zeroed; waits rather than fail */
		nb->h.kind = &rd_kind;
		nb->h.reclaim = ls_ext_reclaim_id(rd_reclaim);
		nb->prev = b;
		/* b leaves the word (it is ours: the pool never claims a
		 * block its word holds), nb takes its place */
		if (b)
			ls_ext_take(&ls_rd.last, NULL);
		ls_ext_attach(&ls_rd.last, &nb->h, sizeof *nb, NULL);
		b = nb;
	}
	b->e[b->n++] = (struct ls_rdentry){l, token, 0, gen};
}

__attribute__((noinline)) void ls_rd_drop_block(struct ls_rdblock *b)
{
	ls_ext_take(&ls_rd.last, NULL);
	if (b->prev)
		ls_ext_attach(&ls_rd.last, &b->prev->h, sizeof *b, NULL);
	ls_ext_free(b, sizeof *b);
}

/* ---- fork (rwlock.h, FORK) ---- */

/* Entry i of the table (the holds moved there), or NULL past the end. */
static struct ls_rdentry *rd_entry(size_t i)
{
	if (i < ls_rd.n)
		return &ls_rd.e[i];
	i -= ls_rd.n;
	for (struct ls_rdblock *b = ls_rd_last(); b; b = b->prev) {
		if (i < b->n)
			return &b->e[i];
		i -= b->n;
	}
	return NULL;
}

static bool rd_same(const struct ls_rdentry *e, const struct ls_rdentry *f)
{
	return e->lock == f->lock && e->gen == f->gen;
}

/* In a fork child, while the forking thread (ours) is its only thread
 * (fork.h runs it): the algorithm's fork_rdheld for each of our read holds,
 * lock by lock, of the locks in their current life (an entry of an earlier
 * life is no hold: ls_rd_current). */
static void rd_fork_child(void)
{
	const struct ls_rwalgo *a = ls_rwg.rw;
	if (!ls_rwg.rw_on || !a || !a->fork_rdheld || !ls_rd.one.lock)
		return;
	ls_rd_table();
	struct ls_rdentry *e, *f;
	for (size_t i = 0; (e = rd_entry(i)); i++) {
		struct ls_rwlock *l = (struct ls_rwlock *)e->lock;
		size_t j = 0;
		while (j < i && !rd_same(rd_entry(j), e))
			j++;
		if (j < i || l->shared || e->gen != ls_rw_gen(l))
			continue; /* done at its first entry; glibc's; an earlier life's */
		void *st = ls_rw_state_fast(l, ls_rwg.rw_ext);
		if (!st)
			continue;
		unsigned holds = 0, nth = 0;
		for (j = i; (f = rd_entry(j)); j++)
			holds += rd_same(f, e);
		for (j = i; (f = rd_entry(j)); j++)
			if (rd_same(f, e))
				a->fork_rdheld(st, &f->token, nth++, holds);
	}
	ls_rd_settle();
}

/* The forking thread's holds go to the table for the fork (parent and
 * child settle back at their next general path): then each unlock of
 * theirs takes the general path (rwlock_acquire.c), which, in a child
 * whose generation is not settled yet (a library's child handler that runs
 * before lockswap's: fork.h), settles it, so that rd_fork_child runs while
 * the hold is still in the table. Holds taken after this (the prepare
 * handlers that run after ours) go to the table too. */
static void rd_fork_prepare(void)
{
	ls_rd_table();
}

__attribute__((constructor)) static void rd_fork_register(void)
{
	ls_fork_at_child(rd_fork_child);
	pthread_atfork(rd_fork_prepare, NULL, NULL);
}
