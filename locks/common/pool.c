/*
 * pool.c - type-stable memory for queue nodes and out-of-line lock state.
 *
 * Region. A directory of chunks, append-only: chunk 0 is the reserve (in
 * .bss), the others are mapped read-write (MAP_NORESERVE: no commit charge
 * until touched) when the previous one is used up, sized as pool.h says,
 * and never unmapped, so a pointer into a chunk always points at readable
 * memory. Every line has a 32-bit index, global across chunks: chunk k holds
 * the indices [first, first + lines). Line 0 (the reserve's first) is never
 * handed out, so index 0 can mean "none". Mapping and carving happen under
 * the region lock (slow paths only); a directory entry is complete before
 * nchunks counts it (release), so readers need no lock: at() is a binary
 * search on `first`, index_of() a scan from the newest chunk (a few dozen
 * chunks hold 64 GiB).
 *
 *	chunk:		base | first | lines | used (lines handed out)
 *	global head:	tag:32 | index:32	(index 0 = empty)
 *	free node:	LINK = next node (cache: pointer; global: index * 2 + 1)
 *	free block:	first word = next block: index * 2 + 1
 *
 * A global link is odd (index * 2 + 1): a freed block's first word is read
 * as an owner by a lock whose word still points at it (a copy of a
 * destroyed mutex, pool.h), and an odd value is never a word's address. A
 * bare index was one, for a word below 4 GiB (tests/unit/ext_owner.c).
 *
 * Nodes. Each class (pool.h) has a global list, and each thread a cache
 * per class (all limits set at once, one exit hook for all): a singly
 * linked list through the node's last 8 bytes (LINK), so a freed node
 * keeps its first 56 bytes as the algorithm left them until it is reused
 * (abortable locks may read a recycled node and rely on tags or re-checks,
 * never on those bytes being zero). Past CACHE_MAX nodes, or at thread
 * exit, a thread gives nodes to the global list: a Treiber stack of line
 * indices whose head carries a 32-bit tag, bumped on every change, so a
 * pop that read a stale `next` fails its CAS instead of corrupting the
 * stack (ABA).
 *
 * A cache's `limit` is 0 until the thread has registered its exit hook, so
 * the first free (and every free after the hook has run at thread exit)
 * takes the slow path and registers: nodes freed during thread teardown are
 * not lost. A thread that cannot register the hook keeps `limit` 0 and its
 * cache empty. While nodes are counted (ls_node_counting) the limit also
 * stays 0 and the cache empty: every allocation and free is a slow path,
 * which counts, and the fast paths carry no test for it.
 *
 * Out of address space (pool.h): a node or a block that must be had comes
 * from the reserve, one at a time, and then from waiting (take()).
 *
 * Side table (for reclaiming, pool.h). Each chunk has a byte per line: 0,
 * or at the first line of a block its size in lines (bits 0-6, written
 * when the block is carved: a line is carved once, as a node or as part of
 * a block of one size, for ever) and ATTACHED (bit 7: a reclaimable block
 * attached to its owner's word; set by the CAS that attached it, taken by
 * whichever of destroy and the pool frees it). The pool's look walks these
 * bytes, from block to block.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "peek.h"
#include "pool.h"
#include "wait.h"

#define LINE 64u
#define LINK(n) LS_NODE_LINK(n)
#define CACHE_MAX 64u
#define BATCH 16u
#define EXT_CLASSES (LS_EXT_MAX / LINE) /* one per block size */
#define CHUNK_FIRST ((size_t)64 << 10)	/* the first mapped chunk */
#define CHUNK_MAX ((size_t)64 << 20)	/* the largest */
#define CHUNK_MIN ((size_t)4 << 10)	/* a page: the smallest asked for */
#define MAX_CHUNKS 1024u		/* with the reserve; 64 GiB of chunks */
#define RESERVE_LINES (LS_POOL_RESERVE / LINE)
#define SIDE_LINES 0x7fu     /* side byte: a block's size in lines */
#define ATTACHED 0x80u	     /* side byte: attached, reclaimable */
#define CLAIMED 2u	     /* owner | CLAIMED: the pool looks at it */
#define FREEING 4u	     /* owner | FREEING: the pool frees it */
#define SCAN_MIN_LINES 2048u /* 128 KiB of blocks allocated between two looks, at least */

_Static_assert(LS_NODE_SIZE == LINE, "a node is one cache line");

struct chunk {
	char *base;
	uint32_t first, lines;
	_Atomic uint32_t used;
	_Atomic uint8_t *side; /* a byte per line (see the top) */
};

static char reserve_mem[LS_POOL_RESERVE] __attribute__((aligned(LINE)));
static _Atomic uint8_t reserve_side[RESERVE_LINES];
static struct chunk chunks[MAX_CHUNKS] = {
    {reserve_mem, 0, RESERVE_LINES, 1, reserve_side}}; /* line 0 is "none" */
static _Atomic uint32_t nchunks = 1;
static uint32_t current;			    /* the mapped chunk being carved, 0: none yet */
static size_t mapped;				    /* bytes of all mapped chunks */
static _Atomic int region_lock;			    /* serialises mapping and carving */
static _Atomic uint64_t node_head[LS_NODE_CLASSES]; /* global free nodes: tag | index */
static _Atomic uint64_t ext_head[EXT_CLASSES];
static _Atomic int scan_lock; /* one look at a time (ls_ext_scan) */
/* When to look (pool.h, "Reclaiming"): lines of blocks handed out and not
 * freed, handed out since the last look, those of them attached where a
 * block had been (a lock used again after the pool took its block as
 * idle's, or a copy's), and how many make the next look due. Counts for a
 * heuristic: relaxed. The shortest interval between looks, in lines
 * (ext_window), is the looks' own: written with the scan lock held. */
static _Atomic uint64_t ext_out_lines, ext_since, ext_again, ext_carved_lines, ext_due = SCAN_MIN_LINES;
static uint64_t ext_window = SCAN_MIN_LINES;
#define WINDOW_MAX ((uint64_t)1 << 40)

bool ls_node_counting;
static _Atomic long nodes_in_use, nodes_max, nodes_carved;

__thread struct ls_node_cache ls_node_caches[LS_NODE_CLASSES] __attribute__((tls_model("initial-exec")));
/* the thread's caches: registered (their limits set), and with an exit hook */
static __thread struct {
	bool registered;
	bool hooked; /* its exit hook is registered: it may keep nodes */
} me __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static bool exit_key_ok;
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

/* The scan lock: a look (ls_ext_scan) holds it, and so does fork, so that
 * a child never inherits blocks claimed by a look in another thread. */
static bool scan_lock_try(void)
{
	int z = 0;
	return atomic_compare_exchange_strong_explicit(&scan_lock, &z, 1, memory_order_acquire,
						       memory_order_relaxed);
}

static void scan_lock_release(void)
{
	atomic_store_explicit(&scan_lock, 0, memory_order_release);
}

void ls_pool_fork_prepare(void)
{
	while (!scan_lock_try())
		sched_yield(); /* a look takes milliseconds at most */
	region_lock_acquire();
}

void ls_pool_fork_parent(void)
{
	region_lock_release();
	scan_lock_release();
}

void ls_pool_fork_child(void)
{
	region_lock_release();
	scan_lock_release();
}

/* ---- the region ---- */

/* Under the region lock: maps a chunk of at least `need` bytes, as large as
 * pool.h says if possible, and makes it current. False if none can be had
 * (address space, the directory or the 32-bit index space is exhausted). */
static bool map_chunk(size_t need)
{
	/* relaxed: under the region lock, which orders every change of it */
	uint32_t n = atomic_load_explicit(&nchunks, memory_order_relaxed);
	if (n == MAX_CHUNKS)
		return false;
	const struct chunk *last = &chunks[n - 1];
	uint64_t first = (uint64_t)last->first + last->lines;
	size_t want = mapped < CHUNK_FIRST ? CHUNK_FIRST : mapped > CHUNK_MAX ? CHUNK_MAX : mapped;
	need = (need + CHUNK_MIN - 1) / CHUNK_MIN * CHUNK_MIN;
	for (size_t len = want; len >= need; len /= 2) {
		if (first + len / LINE > UINT32_MAX)
			continue;
		size_t side_len = (len / LINE + CHUNK_MIN - 1) / CHUNK_MIN * CHUNK_MIN;
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
		if (p == MAP_FAILED)
			continue;
		void *side = mmap(NULL, side_len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (side == MAP_FAILED) {
			munmap(p, len);
			continue;
		}
		chunks[n] = (struct chunk){(char *)p, (uint32_t)first, (uint32_t)(len / LINE), 0, side};
		/* release: the entry is complete for whoever counts it */
		atomic_store_explicit(&nchunks, n + 1, memory_order_release);
		current = n;
		mapped += len;
		return true;
	}
	return false;
}

/* Under the region lock: `lines` lines from chunk k, or NULL. */
static char *carve_from(uint32_t k, uint32_t lines)
{
	struct chunk *c = &chunks[k];
	/* relaxed: under the region lock; readers outside it use acquire */
	uint32_t used = atomic_load_explicit(&c->used, memory_order_relaxed);
	if (c->lines - used < lines)
		return NULL;
	/* release: ls_ext_owns may then look at the lines */
	atomic_store_explicit(&c->used, used + lines, memory_order_release);
	return c->base + (size_t)used * LINE;
}

/* New memory: `lines` lines from the current chunk or a new one; with
 * use_reserve, from the reserve if no chunk can be mapped. NULL if none. */
static char *carve(uint32_t lines, bool use_reserve)
{
	region_lock_acquire();
	char *p = current ? carve_from(current, lines) : NULL;
	if (!p && map_chunk((size_t)lines * LINE))
		p = carve_from(current, lines);
	if (!p && use_reserve)
		p = carve_from(0, lines);
	region_lock_release();
	return p;
}

/* The chunk that holds line p (handed out), from the newest. */
static const struct chunk *chunk_of(const void *p)
{
	const char *q = p;
	uint32_t n = atomic_load_explicit(&nchunks, memory_order_acquire);
	while (n--) {
		const struct chunk *c = &chunks[n];
		if (q >= c->base && q < c->base + (size_t)c->lines * LINE)
			return c;
	}
	return NULL; /* not reached for a line handed out */
}

/* The side byte of line p (see the top). */
static _Atomic uint8_t *side_of(const void *p)
{
	const struct chunk *c = chunk_of(p);
	return &c->side[(size_t)((const char *)p - c->base) / LINE];
}

static uint32_t index_of(const void *p)
{
	const char *q = p;
	uint32_t n = atomic_load_explicit(&nchunks, memory_order_acquire);
	while (n--) {
		const struct chunk *c = &chunks[n];
		if (q >= c->base && q < c->base + (size_t)c->lines * LINE)
			return c->first + (uint32_t)((size_t)(q - c->base) / LINE);
	}
	return 0; /* not reached: every line handed out is in a chunk */
}

static char *at(uint32_t idx)
{
	uint32_t lo = 0, hi = atomic_load_explicit(&nchunks, memory_order_acquire);
	while (hi - lo > 1) { /* the last chunk whose first <= idx */
		uint32_t mid = lo + (hi - lo) / 2;
		if (chunks[mid].first <= idx)
			lo = mid;
		else
			hi = mid;
	}
	return chunks[lo].base + (size_t)(idx - chunks[lo].first) * LINE;
}

/* Treiber stack of lines linked through the word at `link_off`. */
static void stack_push(_Atomic uint64_t *head, char *p, size_t link_off)
{
	uint32_t idx = index_of(p);
	/* relaxed: the CAS below orders; a stale value only fails it */
	uint64_t old = atomic_load_explicit(head, memory_order_relaxed), nw;
	do {
		/* relaxed atomic: published by the release CAS below; atomic so that a popper's stale read is
		 * defined. Odd: never a word's address (see the top) */
		__atomic_store_n((uint64_t *)(p + link_off), (uint64_t)(uint32_t)old << 1 | 1,
				 __ATOMIC_RELAXED);
		nw = ((old >> 32) + 1) << 32 | idx;
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
		/* relaxed: a stale link only fails the CAS, whose tag has moved */
		uint64_t next = __atomic_load_n((uint64_t *)(at(idx) + link_off), __ATOMIC_RELAXED);
		nw = ((old >> 32) + 1) << 32 | (uint32_t)(next >> 1);
	} while (!atomic_compare_exchange_weak_explicit(head, &old, nw, memory_order_acquire,
							memory_order_acquire));
	return at((uint32_t)old);
}

/* What must be had: `lines` lines from the free list at head (link at
 * link_off), or new memory, or the reserve; else nap and try again
 * (pool.h). *fresh: whether it is new memory. A nap is a futex wait on a
 * private word nobody wakes: a raw syscall, not a cancellation point (the
 * lock calls are not). */
static char *take(_Atomic uint64_t *head, size_t link_off, uint32_t lines, bool *fresh)
{
	for (uint64_t nap = 1000;; nap = nap < 1000000 ? nap * 2 : nap) {
		char *p = stack_pop(head, link_off);
		*fresh = !p;
		if (!p)
			p = carve(lines, true);
		if (p)
			return p;
		_Atomic uint32_t nobody = 0;
		ls_futex_wait(&nobody, 0, ls_now_ns() + nap);
	}
}

/* ---- nodes ---- */

/* Nodes in the cache: the limit minus the room left. */
static unsigned cached(const struct ls_node_cache *c)
{
	return (unsigned)((int)c->limit - c->room);
}

/* Sets the limit, keeping the nodes cached. */
static void set_limit(struct ls_node_cache *c, unsigned limit)
{
	unsigned n = cached(c);
	c->limit = limit;
	c->room = (int)limit - (int)n;
}

static void cache_drain(unsigned cls, unsigned keep)
{
	struct ls_node_cache *c = &ls_node_caches[cls];
	while (cached(c) > keep) {
		char *n = c->head;
		c->head = (char *)*LINK(n);
		c->room++;
		stack_push(&node_head[cls], n, LS_NODE_SIZE - 8);
	}
}

static void thread_exit(void *arg)
{
	(void)arg;
	for (unsigned k = 0; k < LS_NODE_CLASSES; k++) {
		cache_drain(k, 0);
		/* frees after this point come back to the slow path */
		set_limit(&ls_node_caches[k], 0);
	}
	me.registered = false;
	me.hooked = false;
}

static void make_key(void)
{
	exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

static void cache_register(void)
{
	pthread_once(&exit_once, make_key);
	me.registered = true;
	/* pthread_setspecific may need memory (keys past the 32nd); the value
	 * only has to be non-NULL for the hook to run */
	me.hooked = exit_key_ok && pthread_setspecific(exit_key, &me) == 0;
	for (unsigned k = 0; k < LS_NODE_CLASSES; k++)
		set_limit(&ls_node_caches[k], ls_node_counting || !me.hooked ? 0 : CACHE_MAX);
}

static void count_alloc(void)
{
	/* relaxed: statistics */
	long n = atomic_fetch_add_explicit(&nodes_in_use, 1, memory_order_relaxed) + 1;
	long m = atomic_load_explicit(&nodes_max, memory_order_relaxed);
	while (n > m && !atomic_compare_exchange_weak_explicit(&nodes_max, &m, n, memory_order_relaxed,
							       memory_order_relaxed)) {
	}
}

/* One node, for a thread that keeps no cache (counting, or no exit hook),
 * or when no batch can be carved. */
static char *node_one(unsigned cls)
{
	bool fresh;
	char *n = take(&node_head[cls], LS_NODE_SIZE - 8, 1, &fresh);
	/* relaxed: statistics */
	if (fresh)
		atomic_fetch_add_explicit(&nodes_carved, 1, memory_order_relaxed);
	return n;
}

static void *node_alloc_slow(unsigned cls)
{
	struct ls_node_cache *c = &ls_node_caches[cls];
	if (!me.registered)
		cache_register();
	if (ls_node_counting || !me.hooked) {
		char *n = node_one(cls);
		if (ls_node_counting)
			count_alloc();
		return n;
	}
	for (unsigned i = 0; i < BATCH; i++) {
		char *n = stack_pop(&node_head[cls], LS_NODE_SIZE - 8);
		if (!n)
			break;
		/* relaxed atomic: the cache is this thread's; atomic for a popper's stale read */
		__atomic_store_n(LINK(n), (uint64_t)(uintptr_t)c->head, __ATOMIC_RELAXED);
		c->head = n;
		c->room--;
	}
	if (!c->head) {
		/* new memory, a batch at a time; not from the reserve, which
		 * goes a node at a time to whoever has nothing else */
		char *p = carve(BATCH, false);
		if (!p)
			return node_one(cls);
		/* relaxed: statistics */
		atomic_fetch_add_explicit(&nodes_carved, BATCH, memory_order_relaxed);
		for (unsigned i = 0; i < BATCH; i++) {
			char *n = p + (size_t)i * LINE;
			/* relaxed atomic: as above */
			__atomic_store_n(LINK(n), (uint64_t)(uintptr_t)c->head, __ATOMIC_RELAXED);
			c->head = n;
			c->room--;
		}
	}
	char *n = c->head;
	c->head = (char *)(uintptr_t)*LINK(n);
	c->room++;
	return n;
}

static void node_free_slow(unsigned cls)
{
	struct ls_node_cache *c = &ls_node_caches[cls];
	if (!me.registered)
		cache_register();
	if (ls_node_counting) {
		/* the node just freed is at the head of the cache */
		cache_drain(cls, 0);
		/* relaxed: statistics */
		atomic_fetch_sub_explicit(&nodes_in_use, 1, memory_order_relaxed);
		return;
	}
	if (c->room < 0)
		cache_drain(cls, c->limit / 2);
}

#define SLOW(k)                                                                                              \
	static void *alloc_slow_##k(void)                                                                    \
	{                                                                                                    \
		return node_alloc_slow(k);                                                                   \
	}                                                                                                    \
	static void free_slow_##k(void)                                                                      \
	{                                                                                                    \
		node_free_slow(k);                                                                           \
	}
SLOW(0)
SLOW(1)
SLOW(2)
SLOW(3)
SLOW(4)
SLOW(5)
SLOW(6)
SLOW(7)
SLOW(8)
SLOW(9)
SLOW(10)
SLOW(11)
SLOW(12)
SLOW(13)
SLOW(14)
SLOW(15)
_Static_assert(LS_NODE_CLASSES == 16, "a slow path for each node class");
void *(*const ls_node_alloc_slow_at[LS_NODE_CLASSES])(void) = {
    alloc_slow_0,  alloc_slow_1,  alloc_slow_2,	 alloc_slow_3, alloc_slow_4,  alloc_slow_5,
    alloc_slow_6,  alloc_slow_7,  alloc_slow_8,	 alloc_slow_9, alloc_slow_10, alloc_slow_11,
    alloc_slow_12, alloc_slow_13, alloc_slow_14, alloc_slow_15};
void (*const ls_node_free_slow_at[LS_NODE_CLASSES])(void) = {
    free_slow_0,  free_slow_1,	free_slow_2,  free_slow_3, free_slow_4,	 free_slow_5,
    free_slow_6,  free_slow_7,	free_slow_8,  free_slow_9, free_slow_10, free_slow_11,
    free_slow_12, free_slow_13, free_slow_14, free_slow_15};

void ls_node_stats(struct ls_node_stats *out)
{
	/* relaxed: statistics, read once the threads are done */
	out->in_use = atomic_load_explicit(&nodes_in_use, memory_order_relaxed);
	out->max_in_use = atomic_load_explicit(&nodes_max, memory_order_relaxed);
	out->carved = atomic_load_explicit(&nodes_carved, memory_order_relaxed);
}

/* ---- out-of-line state ----
 * One free list per size class (multiple of LINE). The link lives in the
 * block's first word; blocks are zeroed on allocation. */

static uint32_t ext_lines(size_t size)
{
	size_t lines = (size + LINE - 1) / LINE;
	return lines == 0 || lines > EXT_CLASSES ? 0 : (uint32_t)lines;
}

/* A block off its free list: its ATTACHED mark cleared (a mark set late on
 * a block that destroy had already freed: a destroy racing with the lock's
 * first use, which POSIX leaves undefined). */
static char *ext_reused(char *p)
{
	/* relaxed: the block is this thread's; the mark is published again
	 * by the release of the next attach */
	atomic_fetch_and_explicit(side_of(p), (uint8_t)~ATTACHED, memory_order_relaxed);
	return p;
}

/* A block of new memory: its size in the side table. */
static char *ext_carved_now(char *p, uint32_t lines)
{
	/* relaxed: the look reads it to step over the block, and only
	 * trusts it with ATTACHED, which a release sets later */
	atomic_store_explicit(side_of(p), (uint8_t)lines, memory_order_relaxed);
	/* relaxed: counts (see next_due) */
	atomic_fetch_add_explicit(&ext_carved_lines, lines, memory_order_relaxed);
	return p;
}

/* From the free list, after a look if one is due: once the blocks handed
 * out since the last look have half as many lines as were out after it,
 * or the window's (see next_due). Then the garbage a look finds was made
 * since the last one, so blocks of locks that are gone never outnumber
 * about half of those alive (plus the window), and each look, whose cost
 * is the pool's size, is paid for by as many allocations (pool.h,
 * "Reclaiming"). */
static unsigned scan_locked(void);
static char *ext_pop(uint32_t lines)
{
	/* relaxed: counts (see ext_out_lines) */
	if (atomic_fetch_add_explicit(&ext_since, lines, memory_order_relaxed) + lines >=
	    atomic_load_explicit(&ext_due, memory_order_relaxed)) {
		/* Due: look, or wait for the look of another thread (which
		 * takes as long as the pool is large): carving meanwhile
		 * would grow the pool at the rate its garbage is made. */
		if (scan_lock_try())
			scan_locked();
		else
			while (atomic_load_explicit(&scan_lock, memory_order_relaxed))
				sched_yield();
	}
	char *p = stack_pop(&ext_head[lines - 1], 0);
	return p ? ext_reused(p) : NULL;
}

/* A block handed out: counted, zeroed. */
static void *ext_out(char *p, uint32_t lines)
{
	/* relaxed: counts (see ext_out_lines) */
	atomic_fetch_add_explicit(&ext_out_lines, lines, memory_order_relaxed);
	/* relaxed atomic: a look may still CAS the owner of a block it saw
	 * attached before (it fails on this value) */
	__atomic_store_n((const void **)p, NULL, __ATOMIC_RELAXED);
	memset(p + sizeof(void *), 0, (size_t)lines * LINE - sizeof(void *));
	return p;
}

void *ls_ext_alloc(size_t size)
{
	uint32_t lines = ext_lines(size);
	if (!lines)
		return NULL;
	char *p = ext_pop(lines);
	if (!p && (p = carve(lines, false)))
		ext_carved_now(p, lines);
	return p ? ext_out(p, lines) : NULL;
}

void *ls_ext_alloc_wait(size_t size)
{
	uint32_t lines = ext_lines(size);
	if (!lines)
		return NULL;
	char *p = ext_pop(lines);
	if (!p) {
		bool fresh;
		p = take(&ext_head[lines - 1], 0, lines, &fresh);
		p = fresh ? ext_carved_now(p, lines) : ext_reused(p);
	}
	return ext_out(p, lines);
}

void *ls_ext_alloc_for(const ls_ext_word_t *w, size_t size, bool wait)
{
	/* relaxed: a hint; ls_ext_attach decides */
	const void *stale = atomic_load_explicit((ls_ext_word_t *)w, memory_order_relaxed);
	void *p = wait ? ls_ext_alloc_wait(size) : ls_ext_alloc(size);
	if (!p || p != stale)
		return p;
	void *q = wait ? ls_ext_alloc_wait(size) : ls_ext_alloc(size);
	if (!q)
		return p; /* the only one: ls_ext_attach empties the word first */
	ls_ext_free(p, size);
	return q;
}

void ls_ext_free(void *p, size_t size)
{
	uint32_t lines = ext_lines(size);
	if (!p || !lines)
		return;
	/* relaxed: counts (see ext_out_lines) */
	atomic_fetch_sub_explicit(&ext_out_lines, lines, memory_order_relaxed);
	stack_push(&ext_head[lines - 1], p, 0);
}

void ls_ext_holds_nothing(struct ls_ext_head *h)
{
	(void)h;
}

/* Reclaim functions by id (pool.h); 0 is none. */
#define RECLAIMERS 16u
static void (*_Atomic reclaimers[RECLAIMERS])(struct ls_ext_head *h);

uint8_t ls_ext_reclaim_id(void (*fn)(struct ls_ext_head *h))
{
	for (uint8_t i = 1; i < RECLAIMERS; i++) {
		void (*seen)(struct ls_ext_head *) =
		    atomic_load_explicit(&reclaimers[i], memory_order_acquire);
		if (!seen && atomic_compare_exchange_strong_explicit(
				 &reclaimers[i], &seen, fn, memory_order_acq_rel, memory_order_acquire))
			return i;
		if (seen == fn)
			return i;
	}
	return 0; /* more functions than ids: destroy alone frees such blocks */
}

/* The owner of h, without the pool's marks: the word it is attached to,
 * if the pool is looking at it or about to free it (0 otherwise). */
static uintptr_t looked_at(const struct ls_ext_head *h)
{
	/* relaxed: the CASes that follow decide */
	uintptr_t o = (uintptr_t)__atomic_load_n(&h->owner, __ATOMIC_RELAXED);
	return o & (CLAIMED | FREEING) ? o & ~(uintptr_t)(CLAIMED | FREEING) : 0;
}

static bool cas_owner(struct ls_ext_head *h, uintptr_t from, uintptr_t to)
{
	const void *expected = (const void *)from;
	/* seq_cst: a look's claim comes before its barrier and its second
	 * read; every other change of the owner is decided by the owner's
	 * own modification order, which any CAS gives */
	return __atomic_compare_exchange_n(&h->owner, &expected, (const void *)to, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED);
}

/* Is `seen`, found in w, w's own block? Decided on one reading of its
 * owner at a time: w's, yes; claimed by a look for w (still in w, it is
 * w's): the claim undone (pool.h, "Reclaiming", step 4; the look's own undo
 * or free then fails its CAS), yes; being freed for w: wait, and read the
 * word again once it has changed (AGAIN; the free ends in a few
 * instructions, and no look is under way in a fork child: the prepare
 * handler takes the scan lock); anything else: no. Two readings (the
 * marks, then the owner) let a look claim the block between them: w's own
 * block, entered by its holders, then looked like another's, the attach
 * put a fresh one in w, and the look, finding w changed, gave the first
 * back to w: two blocks of one lock, a c-rw-wp reader counted in one and
 * leaving from the other. */
enum owned { NOT_OWNED, OWNED, AGAIN };
static enum owned owned_by(ls_ext_word_t *w, struct ls_ext_head *seen)
{
	for (;;) {
		/* relaxed: the CAS decides */
		uintptr_t o = (uintptr_t)__atomic_load_n(&seen->owner, __ATOMIC_RELAXED);
		if (o == (uintptr_t)w)
			return OWNED;
		if (!(o & (CLAIMED | FREEING)) || (o & ~(uintptr_t)(CLAIMED | FREEING)) != (uintptr_t)w)
			return NOT_OWNED;
		if (o & CLAIMED) {
			if (cas_owner(seen, o, (uintptr_t)w))
				return OWNED;
			continue;
		}
		sched_yield(); /* the pool frees it in a few instructions */
		if (atomic_load_explicit(w, memory_order_acquire) != seen)
			return AGAIN;
	}
}

struct ls_ext_head *ls_ext_attach(ls_ext_word_t *w, struct ls_ext_head *fresh, size_t size,
				  const struct ls_ext_head *marker)
{
	struct ls_ext_head *seen = atomic_load_explicit(w, memory_order_acquire);
	for (;;) {
		LS_TEST_POINT(LS_POINT_ATTACHING);
		if (seen == fresh && fresh != marker) {
			/* w holds a pointer to what fresh was in an earlier
			 * life (the only block ls_ext_alloc_for could give,
			 * or a copy of a lock saved before its block was
			 * freed, put back): empty w before fresh names it, so
			 * that no thread takes fresh for w's own unattached */
			atomic_compare_exchange_strong_explicit(w, &seen, NULL, memory_order_acquire,
								memory_order_acquire);
			seen = atomic_load_explicit(w, memory_order_acquire);
			continue;
		}
		enum owned own = (marker && seen == marker) ? OWNED : seen ? owned_by(w, seen) : NOT_OWNED;
		if (own == AGAIN) {
			seen = atomic_load_explicit(w, memory_order_acquire);
			continue;
		}
		if (own == OWNED) {
			if (fresh != marker)
				ls_ext_free(fresh, size); /* another thread attached first */
			return seen;
		}
		/* NULL, a copy's block or one freed while w still named it:
		 * replace it. relaxed: published by the CAS. A stale copy of
		 * another lock may read it (atomic). */
		if (fresh != marker)
			__atomic_store_n(&fresh->owner, (const void *)w, __ATOMIC_RELAXED);
		/* release: fresh's head and contents are visible to whoever
		 * loads the word with acquire (ls_ext_load); acquire: so are
		 * those of a block another thread attached */
		struct ls_ext_head *was = seen;
		if (atomic_compare_exchange_strong_explicit(w, &seen, fresh, memory_order_acq_rel,
							    memory_order_acquire)) {
			if (fresh == marker)
				return fresh;
			/* attached where a block was: see next_due. relaxed:
			 * counts */
			if (was && was != marker)
				atomic_fetch_add_explicit(&ext_again, ext_lines(size), memory_order_relaxed);
			if (fresh->reclaim)
				/* release: a look that sees the mark (acquire)
				 * sees the head written before the CAS */
				atomic_fetch_or_explicit(side_of(fresh), ATTACHED, memory_order_release);
			return fresh;
		}
	}
}

struct ls_ext_head *ls_ext_take(ls_ext_word_t *w, struct ls_ext_head **held)
{
	/* acq_rel, as ls_ext_detach: the block's contents are seen, and the
	 * empty word is ordered after the lock's last use */
	struct ls_ext_head *h = atomic_exchange_explicit(w, NULL, memory_order_acq_rel);
	if (held)
		*held = h;
	if (!h || !ls_ext_owns(h))
		return NULL; /* nothing, or a marker */
	/* relaxed: ours or not is decided by the mark below */
	uintptr_t o = (uintptr_t)__atomic_load_n(&h->owner, __ATOMIC_RELAXED);
	if (o != (uintptr_t)w && looked_at(h) != (uintptr_t)w)
		return NULL; /* a copy's block */
	if (!h->reclaim)
		return o == (uintptr_t)w ? h : NULL; /* only destroy frees it */
	/* acq_rel: the taking is ordered with the pool's (one of the two gets
	 * the mark) */
	if (!(atomic_fetch_and_explicit(side_of(h), (uint8_t)~ATTACHED, memory_order_acq_rel) & ATTACHED))
		return NULL; /* the pool has taken it: it frees it */
	/* Ours. A look that claimed it gives it back on finding the mark
	 * taken (ls_ext_scan): wait for that. acquire: pairs with its CAS. */
	while ((uintptr_t)__atomic_load_n(&h->owner, __ATOMIC_ACQUIRE) != (uintptr_t)w)
		sched_yield();
	return h;
}

/* ---- holds (pool.h, "Idle locks") ----
 * Records are blocks of the pool, never freed: a push-only list of every
 * record made, each free or in use by one thread. */

#define HOLDS_FREE 0u
#define HOLDS_USED 1u
#define HOLDS_OVER 2u /* | USED: a hold could not be recorded */

static struct ls_holds holds_none = {.top = &holds_none.slot[LS_HOLD_BASE],
				     .end = &holds_none.slot[LS_HOLD_BASE]};
/* The same, for a thread that could not take a record: it set holds_lost
 * itself, before any block it entered since, so its holds no longer
 * matter, and it does not ask again (each try took the pool's region lock
 * and a failing mmap, on every lock it entered, while no memory was left). */
static struct ls_holds holds_refused = {.top = &holds_refused.slot[LS_HOLD_BASE],
					.end = &holds_refused.slot[LS_HOLD_BASE]};
__thread struct ls_holds *ls_holds_me __attribute__((tls_model("initial-exec"))) = &holds_none;
static _Atomic(struct ls_holds *) holds_all;
/* Set for good when a thread's holds could not be recorded at all (no
 * record, no exit hook): the pool then frees no block its word holds. */
static _Atomic bool holds_lost;
static pthread_key_t holds_key;
static bool holds_key_ok;
static pthread_once_t holds_once = PTHREAD_ONCE_INIT;

/* Thread exit (the key's destructor; again if a later destructor entered a
 * lock, as glibc runs them up to 4 times): what the thread still holds
 * stays held for good, as glibc's mutex of a thread that exited holding it
 * (pinned: the pool frees the block only once its word no longer holds
 * it); the record is free for the next thread. */
static void holds_exit(void *arg)
{
	struct ls_holds *r = arg;
	for (struct ls_ext_head **t = &r->slot[LS_HOLD_BASE]; t < r->top; t++)
		if (*t)
			/* relaxed: read by the look after its barrier */
			atomic_store_explicit(&(*t)->pinned, 1, memory_order_relaxed);
	if (atomic_load_explicit(&r->state, memory_order_relaxed) & HOLDS_OVER)
		atomic_store_explicit(&holds_lost, true, memory_order_relaxed);
	ls_holds_me = &holds_none;
	__atomic_store_n(&r->top, &r->slot[LS_HOLD_BASE], __ATOMIC_RELAXED);
	/* release: a thread that takes the record sees it empty */
	atomic_store_explicit(&r->state, HOLDS_FREE, memory_order_release);
}

static void holds_make_key(void)
{
	holds_key_ok = pthread_key_create(&holds_key, holds_exit) == 0;
}

/* A record for the calling thread, or NULL (no memory, no exit hook). */
static struct ls_holds *holds_take(void)
{
	pthread_once(&holds_once, holds_make_key);
	if (!holds_key_ok)
		return NULL;
	struct ls_holds *r;
	for (r = atomic_load_explicit(&holds_all, memory_order_acquire); r; r = r->next) {
		unsigned f = HOLDS_FREE;
		if (atomic_load_explicit(&r->state, memory_order_relaxed) == HOLDS_FREE &&
		    atomic_compare_exchange_strong_explicit(&r->state, &f, HOLDS_USED, memory_order_acquire,
							    memory_order_relaxed))
			break;
	}
	if (!r) {
		r = ls_ext_alloc(sizeof(*r)); /* zeroed; never attached */
		if (!r)
			return NULL;
		r->top = &r->slot[LS_HOLD_BASE];
		r->end = &r->slot[LS_HOLD_BASE + LS_HOLD_SLOTS];
		atomic_store_explicit(&r->state, HOLDS_USED, memory_order_relaxed);
		r->next = atomic_load_explicit(&holds_all, memory_order_relaxed);
		/* release: the look reads a record's fields after finding it */
		while (!atomic_compare_exchange_weak_explicit(&holds_all, &r->next, r, memory_order_release,
							      memory_order_relaxed)) {
		}
	}
	if (pthread_setspecific(holds_key, r) != 0) {
		atomic_store_explicit(&r->state, HOLDS_FREE, memory_order_release);
		return NULL;
	}
	return r;
}

/* The record's entries are only ever moved here, between two increments of
 * `moves`, so that a look reading them meanwhile knows to trust nothing it
 * read (see holds_read); pushes and pops at the top move none. */
static void moves_begin(struct ls_holds *r)
{
	atomic_fetch_add_explicit(&r->moves, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void moves_end(struct ls_holds *r)
{
	atomic_fetch_add_explicit(&r->moves, 1, memory_order_release);
}

/* Drops the holes and the duplicates of a full record (an unlock by
 * another thread than the locker leaves the locker's entry behind: a lock
 * handed from thread to thread would fill it); one entry of a block is as
 * good as two. */
static void holds_compact(struct ls_holds *r)
{
	moves_begin(r);
	struct ls_ext_head **out = &r->slot[LS_HOLD_BASE];
	for (struct ls_ext_head **t = &r->slot[LS_HOLD_BASE]; t < r->top; t++) {
		bool keep = *t != NULL;
		for (struct ls_ext_head **u = &r->slot[LS_HOLD_BASE]; u < out && keep; u++)
			keep = *u != *t;
		if (keep)
			__atomic_store_n(out++, *t, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&r->top, out, __ATOMIC_RELAXED);
	moves_end(r);
}

void ls_hold_push_slow(struct ls_ext_head *h)
{
	struct ls_holds *r = ls_holds_me;
	if (r == &holds_refused)
		return;
	if (r == &holds_none) {
		r = holds_take();
		if (!r) {
			/* relaxed: read by the look after its barrier */
			atomic_store_explicit(&holds_lost, true, memory_order_relaxed);
			ls_holds_me = &holds_refused;
			return;
		}
		ls_holds_me = r;
	}
	if (r->top == r->end)
		holds_compact(r);
	if (r->top == r->end) {
		/* relaxed: read by the look after its barrier; for good (the
		 * pops to come cannot tell which hold was not recorded) */
		atomic_fetch_or_explicit(&r->state, HOLDS_OVER, memory_order_relaxed);
		return;
	}
	ls_hold_push(h);
}

/* An entry below the top becomes a hole (NULL), and holes at the top go
 * with it. Nothing moves. */
void ls_hold_pop_slow(struct ls_ext_head *h)
{
	struct ls_holds *r = ls_holds_me;
	struct ls_ext_head **t = r->top;
	while (--t > &r->slot[LS_HOLD_BASE - 1])
		if (*t == h)
			break;
	if (t == &r->slot[LS_HOLD_BASE - 1])
		return; /* never entered here */
	__atomic_store_n(t, NULL, __ATOMIC_RELAXED);
	t = r->top;
	while (t[-1] == NULL && t - 1 > &r->slot[LS_HOLD_BASE - 1])
		t--;
	__atomic_store_n(&r->top, t, __ATOMIC_RELAXED);
}

void ls_hold_drop_below(struct ls_ext_head *h)
{
	struct ls_holds *r = ls_holds_me;
	for (struct ls_ext_head **t = r->top - 1; --t > &r->slot[LS_HOLD_BASE - 1];)
		if (*t == h) {
			__atomic_store_n(t, NULL, __ATOMIC_RELAXED);
			return;
		}
}

/* ---- reclaiming (pool.h) ----
 * Under the scan lock: the blocks a look has found attached, a batch at a
 * time, and what peeking read of their words. */

struct look {
	struct ls_ext_head *h;
	uintptr_t w; /* its owner when seen */
	uint32_t lines;
	bool idle; /* claimed while its word held it (pool.h, "Idle locks") */
};
static struct look looks[LS_PEEK_MAX];
static uintptr_t peek_addr[LS_PEEK_MAX], peek_val[LS_PEEK_MAX];
static uint8_t peek_how[LS_PEEK_MAX];

/* Reads the words of looks[0..n). */
static bool peek_looks(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		peek_addr[i] = looks[i].w;
	return ls_peek_words(peek_addr, peek_val, peek_how, n);
}

/* Does the word of looks[i] hold its block no more? */
static bool gone(unsigned i)
{
	return peek_how[i] == LS_PEEK_GONE ||
	       (peek_how[i] == LS_PEEK_READ && peek_val[i] != (uintptr_t)looks[i].h);
}

/* Does the word of looks[i] still hold its block? */
static bool holds_it(unsigned i)
{
	return peek_how[i] == LS_PEEK_READ && peek_val[i] == (uintptr_t)looks[i].h;
}

/* The blocks every thread has entered and not left (pool.h, "Idle locks"),
 * read after a barrier: sorted in held[0..nheld). False if they cannot all
 * be known (entries moving, a hold not recorded, too many): then no block
 * that its word holds may be freed. */
#define HELD_MAX 8192u
static uintptr_t held[HELD_MAX];
static unsigned nheld;

static int cmp_uintptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

static bool holds_read(void)
{
	nheld = 0;
	/* relaxed: after the barrier */
	if (atomic_load_explicit(&holds_lost, memory_order_relaxed))
		return false;
	for (struct ls_holds *r = atomic_load_explicit(&holds_all, memory_order_acquire); r; r = r->next) {
		unsigned m1 = atomic_load_explicit(&r->moves, memory_order_acquire);
		if ((m1 & 1) || (atomic_load_explicit(&r->state, memory_order_relaxed) & HOLDS_OVER))
			return false;
		struct ls_ext_head **top = __atomic_load_n(&r->top, __ATOMIC_RELAXED);
		if (top < &r->slot[LS_HOLD_BASE] || top > &r->slot[LS_HOLD_BASE + LS_HOLD_SLOTS])
			return false;
		for (struct ls_ext_head **t = &r->slot[LS_HOLD_BASE]; t < top; t++) {
			struct ls_ext_head *h = __atomic_load_n(t, __ATOMIC_RELAXED);
			if (!h)
				continue;
			if (nheld == HELD_MAX)
				return false;
			held[nheld++] = (uintptr_t)h;
		}
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&r->moves, memory_order_relaxed) != m1)
			return false;
	}
	qsort(held, nheld, sizeof(held[0]), cmp_uintptr);
	return true;
}

static bool is_held(const struct ls_ext_head *h)
{
	uintptr_t key = (uintptr_t)h;
	return bsearch(&key, held, nheld, sizeof(held[0]), cmp_uintptr) != NULL;
}

/* May looks[i], whose word holds it, be claimed as an idle lock's? Not if
 * it was entered since the last look: that look is now (its `used` is
 * cleared), so a block goes at the second look after its last use. */
static bool idle_candidate(unsigned i)
{
	struct ls_ext_head *h = looks[i].h;
	/* relaxed: hints; the holds, read after the barrier, decide */
	if (!h->idle || atomic_load_explicit(&h->pinned, memory_order_relaxed) || !holds_it(i))
		return false;
	if (atomic_load_explicit(&h->used, memory_order_relaxed)) {
		atomic_store_explicit(&h->used, 0, memory_order_relaxed);
		return false;
	}
	return true;
}

/* Steps 1-5 of pool.h's "Reclaiming" for looks[0..n): frees the blocks of
 * locks that are gone, and of idle ones ("Idle locks"), and returns how
 * many; -1 if peeking failed (no claim is left behind). */
static int settle(unsigned n)
{
	if (!peek_looks(n))
		return -1;
	unsigned m = 0;
	LS_TEST_POINT(LS_POINT_POOL_CLAIMING); /* about to claim */
	for (unsigned i = 0; i < n; i++) {
		looks[i].idle = !gone(i) && idle_candidate(i);
		if ((looks[i].idle || gone(i)) && cas_owner(looks[i].h, looks[i].w, looks[i].w | CLAIMED))
			looks[m++] = looks[i];
	}
	if (!m)
		return 0;
	LS_TEST_POINT(LS_POINT_POOL_CLAIMING); /* claimed */
	bool ok = ls_peek_barrier() && peek_looks(m);
	bool holds = ok && holds_read();
	unsigned k = 0;
	for (unsigned i = 0; i < m; i++) {
		struct look l = looks[i];
		bool go = l.idle ? holds && holds_it(i) && !is_held(l.h) &&
				       !atomic_load_explicit(&l.h->pinned, memory_order_relaxed)
				 : gone(i);
		if (ok && go && cas_owner(l.h, l.w | CLAIMED, l.w | FREEING)) {
			/* acq_rel: as in ls_ext_take */
			if (atomic_fetch_and_explicit(side_of(l.h), (uint8_t)~ATTACHED,
						      memory_order_acq_rel) &
			    ATTACHED) {
				looks[k++] = l;
				continue;
			}
			cas_owner(l.h, l.w | FREEING, l.w); /* a destroy took it first: its own */
		} else {
			/* back in its word (a thread that met it there may
			 * have undone the claim already) */
			cas_owner(l.h, l.w | CLAIMED, l.w);
		}
	}
	for (unsigned i = 0; i < k; i++) {
		reclaimers[looks[i].h->reclaim](looks[i].h); /* what its state holds */
		ls_ext_free(looks[i].h, (size_t)looks[i].lines * LINE);
	}
	return ok ? (int)k : -1;
}

unsigned ls_ext_scan(void)
{
	if (!scan_lock_try())
		return 0;
	return scan_locked();
}

/* When the next look is due (see ext_pop), with the scan lock held: once
 * half as many lines as are out have been handed out, or the window,
 * whichever is more. The window is SCAN_MIN_LINES while the locks the pool
 * took as idle stay idle. When a quarter or more of a whole window's lines
 * went to locks used again after their block went (ext_again: each such
 * lock is alive, and is counted once per look, since only a look takes a
 * block), the looks came too often for the locks the program comes back
 * to: a working set larger than the window, used in turn, would otherwise
 * lose its blocks at every look and attach them again for ever, each time
 * paying an allocation and each look its peeks and barrier. The window
 * then doubles, so it stays within 8 times the lines of those live locks;
 * when fewer than a sixteenth went to them, it halves back. */
static void next_due(void)
{
	/* relaxed: counts */
	uint64_t out = atomic_load_explicit(&ext_out_lines, memory_order_relaxed);
	uint64_t since = atomic_load_explicit(&ext_since, memory_order_relaxed);
	uint64_t again = atomic_exchange_explicit(&ext_again, 0, memory_order_relaxed);
	if (since >= ext_window && again * 4 >= since && ext_window < WINDOW_MAX)
		ext_window *= 2;
	else if (again * 16 < since && ext_window > SCAN_MIN_LINES)
		ext_window /= 2;
	/* and at least half the blocks' lines on the free lists: a look walks
	 * the whole pool, so it is paid for by as many allocations, which the
	 * free lists serve without growing it (a pool grown for a working set
	 * and then left with few blocks out looked every SCAN_MIN_LINES) */
	uint64_t carved = atomic_load_explicit(&ext_carved_lines, memory_order_relaxed);
	uint64_t due = carved > out ? (carved - out) / 2 : 0;
	if (due < out / 2)
		due = out / 2;
	atomic_store_explicit(&ext_due, due > ext_window ? due : ext_window, memory_order_relaxed);
	atomic_store_explicit(&ext_since, 0, memory_order_relaxed);
}

/* ls_ext_scan with the scan lock held; releases it. */
static unsigned scan_locked(void)
{
	unsigned blocks = 0, n = 0;
	bool began = ls_peek_begin(), ok = began;
	uint32_t nc = atomic_load_explicit(&nchunks, memory_order_acquire);
	for (uint32_t k = 0; ok && k < nc; k++) {
		const struct chunk *c = &chunks[k];
		/* acquire: pairs with the release in carve_from */
		uint32_t used = atomic_load_explicit(&c->used, memory_order_acquire);
		for (uint32_t i = k == 0; ok && i < used;) {
			/* acquire: pairs with the release that set ATTACHED
			 * (ls_ext_attach), so the owner written before is seen */
			uint8_t b = atomic_load_explicit(&c->side[i], memory_order_acquire);
			uint32_t lines = b & SIDE_LINES;
			if (!lines) {
				i++;
				continue;
			}
			struct ls_ext_head *h = (struct ls_ext_head *)(c->base + (size_t)i * LINE);
			/* relaxed: a hint; the claim is a CAS from this value */
			uintptr_t o = (uintptr_t)__atomic_load_n(&h->owner, __ATOMIC_RELAXED);
			i += lines;
			if (!(b & ATTACHED) || !o || (o & 7))
				continue; /* free, not reclaimable, or being attached or taken */
			looks[n++] = (struct look){h, o, lines, false};
			if (n == LS_PEEK_MAX) {
				int r = settle(n);
				ok = r >= 0;
				blocks += r > 0 ? (unsigned)r : 0;
				n = 0;
			}
		}
	}
	if (ok && n) {
		int r = settle(n);
		ok = r >= 0;
		blocks += r > 0 ? (unsigned)r : 0;
	}
	if (began)
		ls_peek_end();
	next_due();
	scan_lock_release();
	return blocks;
}

bool ls_ext_owns(const void *p)
{
	const char *q = p;
	uint32_t n = atomic_load_explicit(&nchunks, memory_order_acquire);
	for (uint32_t k = 0; k < n; k++) {
		const struct chunk *c = &chunks[k];
		/* acquire: pairs with the release in carve_from */
		size_t used = atomic_load_explicit(&c->used, memory_order_acquire);
		if (q >= c->base + (k == 0 ? LINE : 0) && q < c->base + used * LINE)
			return ((size_t)(q - c->base) % LINE) == 0;
	}
	return false;
}
