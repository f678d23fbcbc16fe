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
 * empty. The newest block is attached to the thread's word ls_rd.last as a
 * lock's out-of-line state is (pool.h), the older ones chained behind it:
 * when the thread has exited and its thread-local storage is reused for
 * another thread or unmapped, the word no longer holds the block and the
 * pool reclaims the chain. So a thread's holds stay valid for as long as
 * any code runs on it, including every thread-specific-data destructor of
 * the program, whatever the order of their keys. A lookup is a scan, from the newest entry. The
 * table is what lets unlock tell a read unlock from a misuse without a
 * shared write, and what lets recursion be granted without any algorithm's
 * help. An entry records the rwlock's life too (shim_rwlock.h, "A life"):
 * one whose number is not the lock's is an earlier life's hold, forgotten
 * (ls_rd_current). The commonest case, a thread's only read hold, not recursive, has
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
	uint32_t gen;	/* the lock's life when the hold was taken */
};
_Static_assert(sizeof(struct ls_rdentry) == 24, "an entry stays 3 words");

#define LS_RD_BLOCK                                                                                          \
	((LS_EXT_MAX - sizeof(struct ls_ext_head) - 2 * sizeof(void *)) / sizeof(struct ls_rdentry))
struct ls_rdblock {
	struct ls_ext_head h;	 /* owner: &ls_rd.last while it is the newest */
	struct ls_rdblock *prev; /* older, not attached: freed with this one */
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
	struct ls_rdentry one; /* one.extra is always 0 */
	unsigned n;	       /* entries in e[] */
	ls_ext_word_t last;    /* overflow blocks, newest last (ls_rd_last) */
	struct ls_rdentry e[LS_RD_INLINE];
};
extern __thread struct ls_rdtable ls_rd __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* The newest overflow block, or NULL. relaxed: only this thread writes
 * the word (the pool only reads it). */
static inline struct ls_rdblock *ls_rd_last(void)
{
	return (struct ls_rdblock *)atomic_load_explicit(&ls_rd.last, memory_order_relaxed);
}

/* The slow parts, out of line (rwlock_held.c): a lookup among the overflow
 * blocks, a push that needs a block, and the return of an empty block. */
struct ls_rdentry *ls_rd_find_more(const struct ls_rwlock *l);
void ls_rd_push_more(const struct ls_rwlock *l, void *token, uint32_t gen);
void ls_rd_drop_block(struct ls_rdblock *b);

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
	if (ls_rd.one.lock != LS_RD_TABLE || ls_rd_last() || ls_rd.n > 1)
		return;
	if (ls_rd.n == 0) {
		ls_rd.one.lock = NULL;
	} else if (ls_rd.e[0].extra == 0) {
		ls_rd.one.token = ls_rd.e[0].token;
		ls_rd.one.gen = ls_rd.e[0].gen;
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
	return LS_UNLIKELY(ls_rd_last() != NULL) ? ls_rd_find_more(l) : NULL;
}

static inline void ls_rd_push(const struct ls_rwlock *l, void *token, uint32_t gen)
{
	if (!ls_rd.one.lock) {
		ls_rd.one = (struct ls_rdentry){l, token, 0, gen};
		return;
	}
	ls_rd_table();
	if (LS_LIKELY(ls_rd.n < LS_RD_INLINE && !ls_rd_last()))
		ls_rd.e[ls_rd.n++] = (struct ls_rdentry){l, token, 0, gen};
	else
		ls_rd_push_more(l, token, gen);
}

/* Removes e, of the table: the newest entry takes its place. */
static inline void ls_rd_remove(struct ls_rdentry *e)
{
	struct ls_rdblock *b = ls_rd_last();
	if (LS_LIKELY(!b)) {
		*e = ls_rd.e[--ls_rd.n];
		return;
	}
	*e = b->e[--b->n];
	if (b->n == 0)
		ls_rd_drop_block(b);
}

/* l's entry of its life gen, in the table, or NULL; an entry of l's that
 * speaks for an earlier life (destroyed and initialised again, freed and
 * reused, zeroed, overwritten by a copy) is removed: its hold ended with
 * that life, as under glibc. */
static inline struct ls_rdentry *ls_rd_current(const struct ls_rwlock *l, uint32_t gen)
{
	struct ls_rdentry *e;
	while ((e = ls_rd_find(l)) && LS_UNLIKELY(e->gen != gen))
		ls_rd_remove(e);
	return e;
}

#endif
