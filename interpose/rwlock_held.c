/*
 * rwlock_held.c - the calling thread's read holds: the table itself, and
 * what rwlock_held.h keeps out of line (the overflow blocks, and their
 * return at thread exit).
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "pool.h"
#include "rwlock_held.h"

__thread struct ls_rdtable ls_rd __attribute__((tls_model("initial-exec")));

__attribute__((noinline)) struct ls_rdentry *ls_rd_find_more(const struct ls_rwlock *l)
{
	for (struct ls_rdblock *b = ls_rd.last; b; b = b->prev)
		for (size_t i = b->n; i-- > 0;)
			if (b->e[i].lock == l)
				return &b->e[i];
	return NULL;
}

static pthread_key_t rd_key;
static pthread_once_t rd_key_once = PTHREAD_ONCE_INIT;
static bool rd_key_ok;

/* At thread exit: the blocks go back to the pool (their holds stay held,
 * as a thread that exits holding a read lock leaves it in glibc). */
static void rd_exit(void *unused)
{
	(void)unused;
	while (ls_rd.last) {
		struct ls_rdblock *b = ls_rd.last;
		ls_rd.last = b->prev;
		ls_ext_free(b, sizeof *b);
	}
}

static void rd_key_create(void)
{
	rd_key_ok = pthread_key_create(&rd_key, rd_exit) == 0;
}

__attribute__((noinline)) void ls_rd_push_more(const struct ls_rwlock *l, void *token)
{
	struct ls_rdblock *b = ls_rd.last;
	if (!b || b->n == LS_RD_BLOCK) {
		b = ls_ext_alloc_wait(sizeof *b); /* zeroed; waits rather than fail */
		b->prev = ls_rd.last;
		ls_rd.last = b;
		pthread_once(&rd_key_once, rd_key_create);
		if (rd_key_ok)
			pthread_setspecific(rd_key, b); /* not NULL: rd_exit runs */
	}
	b->e[b->n++] = (struct ls_rdentry){l, token, 0};
}
