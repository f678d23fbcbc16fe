/*
 * rwlock_held.h - the calling thread's read holds (rwlock_held.c), at the
 * bottom of the rwlock family: the entry points' fast paths (rwlock.c) and
 * the acquisition paths (rwlock_acquire.c) read and write them.
 *
 * Read holds, per thread. Each thread keeps a table of the read locks it
 * holds: the lock's address, the algorithm's token (rwlock.h) and a count
 * of recursive holds. The first LS_RD_INLINE entries are in thread-local
 * storage; more go to blocks of the pool (ls_ext_alloc_wait: a read lock
 * never fails for want of memory, it may wait for it), given back when they
 * empty and at thread exit. A lookup is a scan, from the newest entry. The
 * table is what lets unlock tell a read unlock from a misuse without a
 * shared write, and what lets recursion be granted without any algorithm's
 * help. The commonest case, a thread's only read hold, not recursive, has
 * a slot of its own in front of the table (ls_rd.one), so that the fast
 * paths cost little: rdlock tests that slot with the lock's writer word and
 * writes it and the token's; unlock compares it with the lock and clears
 * it. (A direct-mapped table, or none for the algorithms that cannot block
 * a recursive reader, would cost no less there: the tokens must be kept and
 * a misuse told apart whatever the algorithm.)
 *
 */
#ifndef LS_RWLOCK_HELD_H
#define LS_RWLOCK_HELD_H

#include <stdint.h>

#include "pool.h"
#include "shim_rwlock.h"

#define LS_RD_INLINE 8

struct ls_rdentry {
	const struct ls_rwlock *lock;
	void *token;
	uint32_t extra; /* recursive holds beyond the first (counted by the shim) */
};

#define LS_RD_BLOCK ((LS_EXT_MAX - 2 * sizeof(void *)) / sizeof(struct ls_rdentry))
struct ls_rdblock {
	struct ls_rdblock *prev;
	size_t n;
	struct ls_rdentry e[LS_RD_BLOCK];
};

/* one.lock says where the holds are:
 *	NULL		none (n is 0, no block);
 *	a lock		one hold, of that lock, not recursive, its token in
 *			one.token (n is 0, no block): the fast paths' case;
 *	LS_RD_TABLE	in e[0..n) and the blocks.
 * The general paths move a hold from `one` to the table before they look
 * (ls_rd_table), and back when one is left (ls_rd_settle). */
#define LS_RD_TABLE ((const struct ls_rwlock *)1)
struct ls_rdtable {
	struct ls_rdentry one;	 /* one.extra is always 0 */
	unsigned n;		 /* entries in e[] */
	struct ls_rdblock *last; /* overflow blocks, newest last */
	struct ls_rdentry e[LS_RD_INLINE];
};
extern __thread struct ls_rdtable ls_rd __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* The slow parts, out of line (rwlock_held.c): a lookup among the overflow
 * blocks, and a push that needs a block. */
struct ls_rdentry *ls_rd_find_more(const struct ls_rwlock *l);
void ls_rd_push_more(const struct ls_rwlock *l, void *token);

/* The holds are in the table from now on. */
static inline void ls_rd_table(void)
{
	if (ls_rd.one.lock == LS_RD_TABLE)
		return;
	if (ls_rd.one.lock)
		ls_rd.e[ls_rd.n++] = ls_rd.one; /* n was 0 */
	ls_rd.one.lock = LS_RD_TABLE;
}

/* After a general path: `one` again when the table holds one hold that is
 * not recursive, or none. */
static inline void ls_rd_settle(void)
{
	if (ls_rd.one.lock != LS_RD_TABLE || ls_rd.last || ls_rd.n > 1)
		return;
	if (ls_rd.n == 0) {
		ls_rd.one.lock = NULL;
	} else if (ls_rd.e[0].extra == 0) {
		ls_rd.one.token = ls_rd.e[0].token;
		ls_rd.one.lock = ls_rd.e[0].lock;
		ls_rd.n = 0;
	}
}

/* l's entry, in the table (the holds are moved there), or NULL. */
static inline struct ls_rdentry *ls_rd_find(const struct ls_rwlock *l)
{
	ls_rd_table();
	for (unsigned i = ls_rd.n; i-- > 0;)
		if (ls_rd.e[i].lock == l)
			return &ls_rd.e[i];
	return LS_UNLIKELY(ls_rd.last != NULL) ? ls_rd_find_more(l) : NULL;
}

static inline void ls_rd_push(const struct ls_rwlock *l, void *token)
{
	if (!ls_rd.one.lock) {
		ls_rd.one = (struct ls_rdentry){l, token, 0};
		return;
	}
	ls_rd_table();
	if (LS_LIKELY(ls_rd.n < LS_RD_INLINE && !ls_rd.last))
		ls_rd.e[ls_rd.n++] = (struct ls_rdentry){l, token, 0};
	else
		ls_rd_push_more(l, token);
}

/* Removes e, of the table: the newest entry takes its place. */
static inline void ls_rd_remove(struct ls_rdentry *e)
{
	struct ls_rdblock *b = ls_rd.last;
	if (LS_LIKELY(!b)) {
		*e = ls_rd.e[--ls_rd.n];
		return;
	}
	*e = b->e[--b->n];
	if (b->n == 0) {
		ls_rd.last = b->prev;
		ls_ext_free(b, sizeof *b);
	}
}

#endif
