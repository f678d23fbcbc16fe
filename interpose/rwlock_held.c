/*
 * rwlock_held.c - the calling thread's read holds: the table itself, and
 * what rwlock_held.h keeps out of line (the overflow blocks, attached to the
 * thread's word so that the pool reclaims them once the thread is gone).
 */
#define _GNU_SOURCE

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
		nb->h.reclaim = rd_reclaim;
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
