/*
 * pool.h - queue nodes and out-of-line lock state, shared by every algorithm.
 *
 * All of it comes from one region of address space reserved at first use and
 * never unmapped: the memory is TYPE-STABLE. A node that has been freed and
 * reused is still readable memory, which is what lets the abortable and
 * time-published locks read a neighbour's node without knowing whether it
 * is still the neighbour's (they tag or re-check, as their papers say).
 *
 * Queue nodes (LS_NODE_SIZE bytes, cache-line aligned, contents unspecified
 * on allocation; while a node is free its LAST 8 BYTES hold the free-list
 * link and its first 56 bytes keep whatever the algorithm last wrote, so put
 * fields that a late reader of a recycled node inspects in bytes 0..55):
 *   - ls_node_alloc() takes from the calling thread's cache, then from a
 *     global lock-free free list, then carves new memory;
 *   - ls_node_free() may be called by ANY thread, including after the
 *     allocating thread has exited: the node goes to the caller's cache, so
 *     it may next be reused by a different thread (an algorithm that needs
 *     "only the owner reuses" for its ABA argument keeps its own per-thread
 *     pool on top, as locks/abortable/abortable.h does);
 *   - the pool writes nothing but the last 8 bytes of a freed node;
 *   - a thread's cache is bounded; the excess and everything left at thread
 *     exit goes back to the global list, so threads created and exited by
 *     the thousand do not grow the footprint.
 * No lock, no malloc, no syscall on the common path.
 *
 * Out-of-line state (ls_ext_*): blocks of the active algorithm's state size
 * rounded up to cache lines, used by the shim for algorithms whose state
 * does not fit in the mutex. ls_ext_owns() tells whether a pointer is a
 * block of this region (so a stale pointer found in recycled memory can be
 * recognised without being dereferenced).
 */
#ifndef LS_POOL_H
#define LS_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LS_NODE_SIZE 64

/* The per-thread cache, inline so that a queue lock's fast path pays a few
 * instructions for its node (see pool.c for the slow paths). */
struct ls_node_cache {
	char *head;
	unsigned count;
	unsigned limit; /* 0: every free takes the slow path (see pool.c) */
	bool registered;
};
extern __thread struct ls_node_cache ls_node_cache __attribute__((tls_model("initial-exec")));
void *ls_node_alloc_slow(void);
void ls_node_free_slow(void);

#define LS_NODE_LINK(n) ((uint64_t *)((char *)(n) + LS_NODE_SIZE - 8))

/* True if ls_node_alloc() would take its slow path: lets a lock keep a
 * call-free fast path (no saved registers) and allocate out of line. */
static inline bool ls_node_cache_empty(void)
{
	return __builtin_expect(ls_node_cache.head == NULL, 0);
}

static inline void *ls_node_alloc(void)
{
	struct ls_node_cache *c = &ls_node_cache;
	char *n = c->head;
	if (__builtin_expect(!n, 0))
		return ls_node_alloc_slow();
	c->head = (char *)(uintptr_t)*LS_NODE_LINK(n);
	c->count--;
	return n;
}

static inline void ls_node_free(void *node)
{
	struct ls_node_cache *c = &ls_node_cache;
	/* relaxed atomic: a popper elsewhere may read a stale copy of this word
	 * (it then fails its CAS); atomic keeps that read defined */
	__atomic_store_n(LS_NODE_LINK(node), (uint64_t)(uintptr_t)c->head, __ATOMIC_RELAXED);
	c->head = (char *)node;
	if (__builtin_expect(++c->count > c->limit, 0))
		ls_node_free_slow();
}

/* Space accounting. Counting nodes in use runs only when ls_node_counting is
 * set (LOCKSWAP_STATS=1 or LOCKSWAP_VERBOSE=1 set it through the shim; tests
 * set it directly), before the first node is allocated. It costs nothing on
 * the fast path: while counting, thread caches are bypassed, so every
 * allocation and free takes the slow path, which counts. */
extern bool ls_node_counting;
struct ls_node_stats {
	long in_use;	 /* allocated and not yet freed (counting only) */
	long max_in_use; /* high-water mark of in_use (counting only) */
	long carved;	 /* nodes ever created: always counted */
};
void ls_node_stats(struct ls_node_stats *out);

/* fork(): the region lock must not be copied held into the child. The shim
 * registers these with pthread_atfork. */
void ls_pool_fork_prepare(void);
void ls_pool_fork_parent(void);
void ls_pool_fork_child(void);

void *ls_ext_alloc(size_t size); /* zero-filled, 64-byte aligned; NULL if exhausted */
void ls_ext_free(void *p, size_t size);
bool ls_ext_owns(const void *p);

#endif
