/*
 * pool.c - type-stable memory for queue nodes and out-of-line lock state.
 *
 * Region. One range of address space is reserved PROT_NONE at first use
 * (8 GiB, or less if the system refuses) and made read-write in 2 MiB steps
 * as it is carved; nothing is ever unmapped, so a pointer into the region
 * always points at readable memory. Line 0 is never handed out, so index 0
 * can mean "none".
 *
 * Nodes. Each thread has a cache, a singly linked list through the node's
 * last 8 bytes (LINK), so a freed node keeps its first 56 bytes as the
 * algorithm left them until it is reused (abortable locks may read a
 * recycled node and rely on tags or re-checks, never on those bytes being
 * zero). Past CACHE_MAX nodes, or at thread exit, a thread gives nodes to
 * the global list: a Treiber stack of 32-bit line indices whose head carries
 * a 32-bit tag, bumped on every change, so a pop that read a stale `next`
 * fails its CAS instead of corrupting the stack (ABA).
 *
 *	global head:	tag:32 | index:32	(index 0 = empty)
 *	free node:	LINK = next node (cache: pointer; global: index)
 *
 * A cache's `limit` is 0 until the thread has registered its exit hook, so
 * the first free (and every free after the hook has run at thread exit)
 * takes the slow path and registers: nodes freed during thread teardown are
 * not lost. While nodes are counted (ls_node_counting) the limit stays 0 and
 * the cache empty: every allocation and free is a slow path, which counts,
 * and the fast paths carry no test for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pool.h"
#include "wait.h"

#define LINE 64u
#define LINK(n) LS_NODE_LINK(n)
#define CACHE_MAX 64u
#define BATCH 16u
#define COMMIT_STEP (2u << 20)
#define EXT_CLASSES 64u /* ext blocks up to 4 KiB */

_Static_assert(LS_NODE_SIZE == LINE, "a node is one cache line");

static char *base;		      /* start of the reservation */
static size_t reserved;		      /* its length */
static _Atomic size_t carved;	      /* bytes handed out (bump pointer) */
static _Atomic size_t committed;      /* bytes made read-write */
static _Atomic int region_lock;	      /* serialises reserve and commit */
static _Atomic uint64_t node_head;    /* global free nodes: tag | index */
static _Atomic uint64_t ext_head[EXT_CLASSES];

bool ls_node_counting;
static _Atomic long nodes_in_use, nodes_max, nodes_carved;

#define cache ls_node_cache
__thread struct ls_node_cache ls_node_cache __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void region_lock_acquire(void)
{
	int z = 0;
	while (!atomic_compare_exchange_weak_explicit(&region_lock, &z, 1, memory_order_acquire,
						      memory_order_relaxed)) {
		z = 0;
		ls_cpu_relax();
	}
}

static void region_lock_release(void)
{
	atomic_store_explicit(&region_lock, 0, memory_order_release);
}

void ls_pool_fork_prepare(void)
{
	region_lock_acquire();
}

void ls_pool_fork_parent(void)
{
	region_lock_release();
}

void ls_pool_fork_child(void)
{
	region_lock_release();
}

static void die(const char *what)
{
	char msg[160];
	int n = snprintf(msg, sizeof msg, "lockswap: out of node memory (%s); aborting\n", what);
	if (write(2, msg, (size_t)n) < 0) {
	}
	abort();
}

/* Reserves the region once. Called on slow paths only. */
static void reserve(void)
{
	region_lock_acquire();
	if (!base) {
		for (size_t len = (size_t)8 << 30; len >= ((size_t)256 << 20); len /= 2) {
			void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (p != MAP_FAILED) {
				reserved = len;
				atomic_store_explicit(&carved, LINE, memory_order_relaxed); /* skip line 0 */
				/* release: pairs with the acquire load of base in carve */
				__atomic_store_n(&base, (char *)p, __ATOMIC_RELEASE);
				break;
			}
		}
	}
	region_lock_release();
	if (!base)
		die("cannot reserve address space");
}

/* Hands out `bytes` (multiple of LINE) of read-write region memory. */
static char *carve(size_t bytes)
{
	if (LS_UNLIKELY(!__atomic_load_n(&base, __ATOMIC_ACQUIRE)))
		reserve();
	size_t off = atomic_fetch_add_explicit(&carved, bytes, memory_order_relaxed);
	size_t end = off + bytes;
	if (end > reserved)
		die("region exhausted");
	if (end > atomic_load_explicit(&committed, memory_order_acquire)) {
		region_lock_acquire();
		size_t c = atomic_load_explicit(&committed, memory_order_relaxed);
		if (end > c) {
			size_t want = (end + COMMIT_STEP - 1) / COMMIT_STEP * COMMIT_STEP;
			if (want > reserved)
				want = reserved;
			if (mprotect(base + c, want - c, PROT_READ | PROT_WRITE) != 0) {
				region_lock_release();
				die("mprotect failed");
			}
			/* release: the pages are usable by whoever sees the new value */
			atomic_store_explicit(&committed, want, memory_order_release);
		}
		region_lock_release();
	}
	return base + off;
}

static uint32_t index_of(const void *p)
{
	return (uint32_t)(((const char *)p - base) / LINE);
}

static char *at(uint32_t idx)
{
	return base + (size_t)idx * LINE;
}

/* Treiber stack of lines linked through the word at `link_off`. */
static void stack_push(_Atomic uint64_t *head, char *p, size_t link_off)
{
	uint64_t old = atomic_load_explicit(head, memory_order_relaxed), nw;
	do {
		__atomic_store_n((uint64_t *)(p + link_off), (uint32_t)old, __ATOMIC_RELAXED);
		nw = ((old >> 32) + 1) << 32 | index_of(p);
		/* release: the link store is visible to the popper */
	} while (!atomic_compare_exchange_weak_explicit(head, &old, nw, memory_order_release,
							memory_order_relaxed));
}

static char *stack_pop(_Atomic uint64_t *head, size_t link_off)
{
	uint64_t old = atomic_load_explicit(head, memory_order_acquire), nw;
	do {
		uint32_t idx = (uint32_t)old;
		if (!idx)
			return NULL;
		/* The line may be popped and reused under us: then the tag has
		 * moved and the CAS fails. Reading it is safe (type-stable). */
		uint64_t next = __atomic_load_n((uint64_t *)(at(idx) + link_off), __ATOMIC_RELAXED);
		nw = ((old >> 32) + 1) << 32 | (uint32_t)next;
	} while (!atomic_compare_exchange_weak_explicit(head, &old, nw, memory_order_acquire,
							memory_order_acquire));
	return at((uint32_t)old);
}

static void cache_drain(struct ls_node_cache *c, unsigned keep)
{
	while (c->count > keep) {
		char *n = c->head;
		c->head = (char *)*LINK(n);
		c->count--;
		stack_push(&node_head, n, LS_NODE_SIZE - 8);
	}
}

static void thread_exit(void *arg)
{
	struct ls_node_cache *c = arg;
	cache_drain(c, 0);
	c->limit = 0; /* frees after this point come back to the slow path */
	c->registered = false;
}

static void make_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit) != 0)
		die("pthread_key_create failed");
}

static void cache_register(struct ls_node_cache *c)
{
	pthread_once(&exit_once, make_key);
	pthread_setspecific(exit_key, c);
	c->registered = true;
	c->limit = ls_node_counting ? 0 : CACHE_MAX;
}

static void count_alloc(void)
{
	long n = atomic_fetch_add_explicit(&nodes_in_use, 1, memory_order_relaxed) + 1;
	long m = atomic_load_explicit(&nodes_max, memory_order_relaxed);
	while (n > m && !atomic_compare_exchange_weak_explicit(&nodes_max, &m, n, memory_order_relaxed,
							       memory_order_relaxed)) {
	}
}

void *ls_node_alloc_slow(void)
{
	struct ls_node_cache *c = &cache;
	if (!c->registered)
		cache_register(c);
	if (ls_node_counting) {
		/* counting: no cache, one node at a time */
		char *n = stack_pop(&node_head, LS_NODE_SIZE - 8);
		if (!n) {
			n = carve(LINE);
			atomic_fetch_add_explicit(&nodes_carved, 1, memory_order_relaxed);
		}
		count_alloc();
		return n;
	}
	for (unsigned i = 0; i < BATCH; i++) {
		char *n = stack_pop(&node_head, LS_NODE_SIZE - 8);
		if (!n)
			break;
		__atomic_store_n(LINK(n), (uint64_t)(uintptr_t)c->head, __ATOMIC_RELAXED);
		c->head = n;
		c->count++;
	}
	if (!c->head) {
		char *p = carve((size_t)BATCH * LINE);
		atomic_fetch_add_explicit(&nodes_carved, BATCH, memory_order_relaxed);
		for (unsigned i = 0; i < BATCH; i++) {
			char *n = p + (size_t)i * LINE;
			__atomic_store_n(LINK(n), (uint64_t)(uintptr_t)c->head, __ATOMIC_RELAXED);
			c->head = n;
			c->count++;
		}
	}
	return ls_node_alloc();
}

void ls_node_free_slow(void)
{
	struct ls_node_cache *c = &cache;
	if (!c->registered)
		cache_register(c);
	if (ls_node_counting) {
		/* the node just freed is at the head of the cache */
		cache_drain(c, 0);
		atomic_fetch_sub_explicit(&nodes_in_use, 1, memory_order_relaxed);
		return;
	}
	if (c->count > c->limit)
		cache_drain(c, c->limit / 2);
}

void ls_node_stats(struct ls_node_stats *out)
{
	out->in_use = atomic_load_explicit(&nodes_in_use, memory_order_relaxed);
	out->max_in_use = atomic_load_explicit(&nodes_max, memory_order_relaxed);
	out->carved = atomic_load_explicit(&nodes_carved, memory_order_relaxed);
}

/* Out-of-line state: one free list per size class (multiple of LINE). The
 * link lives in the block's first word; blocks are zeroed on allocation. */
void *ls_ext_alloc(size_t size)
{
	size_t lines = (size + LINE - 1) / LINE;
	if (lines == 0 || lines > EXT_CLASSES)
		return NULL;
	char *p = stack_pop(&ext_head[lines - 1], 0);
	if (!p)
		p = carve(lines * LINE);
	memset(p, 0, lines * LINE);
	return p;
}

void ls_ext_free(void *p, size_t size)
{
	size_t lines = (size + LINE - 1) / LINE;
	if (!p || lines == 0 || lines > EXT_CLASSES)
		return;
	stack_push(&ext_head[lines - 1], p, 0);
}

bool ls_ext_owns(const void *p)
{
	const char *b = __atomic_load_n(&base, __ATOMIC_ACQUIRE);
	const char *q = p;
	return b && q >= b + LINE && q < b + atomic_load_explicit(&carved, memory_order_relaxed) &&
	       ((size_t)(q - b) % LINE) == 0;
}
