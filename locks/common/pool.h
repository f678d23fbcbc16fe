/*
 * pool.h - queue nodes and out-of-line lock state, shared by every algorithm.
 *
 * All of it comes from chunks of address space mapped as the pool grows and
 * never unmapped, plus a small reserve inside the library's own image: the
 * memory is TYPE-STABLE. A node that has been freed and reused is still
 * readable memory, which is what lets the abortable and time-published locks
 * read a neighbour's node without knowing whether it is still the
 * neighbour's (they tag or re-check, as their papers say).
 *
 * Address space. The pool takes it in proportion to what it hands out:
 * chunks of 64 KiB first, then each as large as all the chunks before it,
 * at most 64 MiB (so its mappings exceed what it has carved by at most a
 * factor of 2 and 64 MiB, plus a fraction of a chunk), and each chunk a
 * side table of a byte per line (pool.c: 1/64 more, at least a page);
 * nothing is reserved ahead. A program that runs under RLIMIT_AS (ulimit -v, a sandbox, a limit
 * lowered after start) keeps its budget.
 *
 * When no address space is left. Lock paths cannot fail (a caller cannot
 * handle an error from pthread_mutex_lock on a NORMAL mutex), so:
 *   1. a chunk that cannot be mapped is asked for at half the size, down to
 *      what the request needs;
 *   2. then the RESERVE: LS_POOL_RESERVE bytes in the library's .bss, there
 *      as long as the library is, handed out a node (or one block) at a
 *      time, and only to callers that cannot fail: ls_node_alloc() and
 *      ls_ext_alloc_wait(), never ls_ext_alloc();
 *   3. then the caller WAITS: it naps (1 us, doubling up to 1 ms, on a futex
 *      nobody wakes, so not a cancellation point) and tries the free lists,
 *      a new chunk and the reserve again, until a node comes back (another
 *      thread's unlock frees one; nodes cached by a thread, at most 64,
 *      come back when it frees more or exits), a block comes back (a
 *      pthread_mutex_destroy), or address space does (the limit is raised,
 *      the program unmaps something). Nothing is printed, nothing aborts.
 * So lock() is never wrong and never fails; it can wait for ever only when
 * the program holds more acquisitions than memory can be found for (a
 * thousand queue-lock acquisitions held at once with no address space left)
 * and nobody releases one, where glibc's mutex, which needs no memory,
 * would go on. pthread_mutex_init of an algorithm with out-of-line state
 * uses ls_ext_alloc, which fails rather than take the reserve: the shim then
 * returns ENOMEM (see interpose/mutex.c).
 *
 * Queue nodes (LS_NODE_SIZE bytes, cache-line aligned, contents unspecified
 * on allocation; while a node is free its LAST 8 BYTES hold the free-list
 * link and its first 56 bytes keep whatever the algorithm last wrote, so put
 * fields that a late reader of a recycled node inspects in bytes 0..55):
 *   - every algorithm file has a class of its own (below, "Node classes"):
 *     a node is reused only within the class it was freed in;
 *   - ls_node_alloc() takes from the calling thread's cache of the class,
 *     then from the class's global lock-free free list, then carves new
 *     memory (then as above);
 *   - ls_node_free() may be called by ANY thread, including after the
 *     allocating thread has exited: the node goes to the caller's cache, so
 *     it may next be reused by a different thread (an algorithm that needs
 *     "only the owner reuses" for its ABA argument keeps its own per-thread
 *     pool on top, as locks/abortable/abortable.h does);
 *   - the pool writes nothing but the last 8 bytes of a freed node, and
 *     memory never handed out before is zero;
 *   - a thread's cache is bounded; the excess and everything left at thread
 *     exit goes back to the global list, so threads created and exited by
 *     the thousand do not grow the footprint. A thread whose exit hook
 *     cannot be registered (no pthread key left, or no memory for one)
 *     keeps no cache: its frees go straight to the global list.
 * No lock, no malloc, no syscall on the common path.
 *
 * Out-of-line state (ls_ext_*): blocks of the active algorithm's state size
 * rounded up to cache lines, used by the shim for algorithms whose state
 * does not fit in the mutex, and by the hierarchical locks for their
 * per-cluster lines (locks/hier/hier.h). ls_ext_owns() tells whether a
 * pointer is a block of the pool (so a stale pointer found in recycled
 * memory can be recognised without being dereferenced).
 *
 * Attaching a block to a lock (ls_ext_load, ls_ext_attach, ls_ext_detach),
 * written once for both: a word of the lock's inline state (an
 * ls_ext_word_t, NULL in the all-zero state) points at the block, whose
 * head (struct ls_ext_head) records the OWNER: the address of the word it
 * was attached to. A program may copy an unlocked lock by value; the copy's
 * word then points at its original's block, which is not the copy's own,
 * so the copy attaches a fresh one. Reading the head of a block that was
 * freed is safe: the memory is type-stable, and a freed block's first word
 * is a free-list link, odd, never the address of a word (pool.c). The
 * block is attached lazily, by whichever thread needs it first, with one
 * CAS after its contents are ready: threads that race allocate one each,
 * one wins, and the others free theirs and adopt the winner's. A word may also hold a
 * static MARKER (hier.h: a lock with no address space left for a block):
 * a read-only head whose owner is never a word, attached by the same CAS
 * and kept, like a block, until destroy (ls_ext_take) empties the word.
 *
 * Reclaiming the block of a lock that is gone. Programs often end a lock's
 * life without destroy: C++'s std::mutex and std::shared_mutex have
 * trivial destructors under glibc, and C programs free() a mutex because
 * glibc's destroy does nothing. So a block whose head names a `reclaim`
 * function (set before attaching; NULL: only destroy frees it) is also
 * freed by the pool once its owner's word no longer points back at it:
 * the lock's memory was freed and reused (zeroed by a constructor, or
 * anything else), unmapped, or re-initialised. The pool looks before an
 * allocation once the blocks handed out since its last look (from the
 * free lists or new memory) have half as many lines as were out after
 * that look, or the WINDOW's lines if more: the blocks in use stay within
 * about 1.5 times those whose word still holds them, plus the window, and
 * each look is paid for by the allocations since the last one. The window
 * is SCAN_MIN_LINES (pool.c) unless the program keeps coming back to
 * locks whose blocks went as idle ("Idle locks" below): when a quarter of
 * a window's lines went to such locks, it doubles; when under a sixteenth,
 * it halves back (pool.c, next_due). Those locks are alive, so the window
 * stays within 8 times their lines. A lock whose memory was freed but not yet written again (by the
 * allocator or the memory's next user) still holds its block and counts
 * as alive: a program's free heap keeps such words for a while (glibc's
 * free lists and merged free chunks leave a freed object's middle as it
 * was), so the blocks follow the live locks plus those words, which the
 * program's heap bounds (results/soak/README.md). The look (ls_ext_scan):
 *   1. each attached block's owner word is read with process_vm_readv on
 *      the own process, a read that cannot fault (a word whose page is
 *      gone reads as gone; one that is mapped but unreadable, PROT_NONE,
 *      as alive: mincore tells them apart);
 *   2. a block whose word no longer holds it is CLAIMED: its owner w
 *      becomes w|2 by CAS (never a word's address, never a free-list
 *      link, which is odd), so that from then on no ls_ext_load takes it
 *      for w's own;
 *   3. membarrier (MEMBARRIER_CMD_PRIVATE_EXPEDITED): every thread that
 *      loaded the owner as w before the claim has its loads and stores,
 *      including a store that put the block back in the word, ordered
 *      before what follows;
 *   4. the word is read again: if it holds the block again (a program
 *      copied a saved unlocked lock back over its original), the claim is
 *      undone; else the owner becomes w|4 (FREEING) by CAS and the pool
 *      takes the block's ATTACHED mark (below); a thread that meets a
 *      claimed block in its own word undoes the claim itself
 *      (ls_ext_attach), and waits out FREEING, which ends in a free. The
 *      attach decides on one reading of the owner at a time whether the
 *      block in the word is the lock's own (w, or w claimed or being
 *      freed: pool.c, owned_by), never on two, between which a claim
 *      could land and make the lock's own block look like another's;
 *   5. the block's reclaim function frees what its state holds (queue
 *      nodes, a nested block), then the block goes to its free list.
 * Exactly one of destroy and the pool frees a block: each takes its
 * ATTACHED mark (a bit per block in a side table of the chunk, set by the
 * CAS that attached it), and only the taker frees. A copy of an unlocked
 * lock never reaches a reclaimed block (its word's block names another
 * owner), and neither does a lock whose word was overwritten and then
 * restored (steps 3-4). Nothing is written into the lock's memory: the
 * pool reads the word, never the state, and an unlocker in flight touches
 * neither after its release (lock.h). Without process_vm_readv or
 * membarrier (seccomp, a kernel before 4.14) nothing is reclaimed, and
 * memory grows with the locks ever used, as destroy alone would free it.
 *
 * Idle locks. A lock whose memory was freed and not written since reads
 * exactly like a live idle one (results/soak/README.md), so waiting for
 * its word to change bounds the blocks by the program's heap, not by its
 * live locks. So a block marked `idle` (the mutexes' out-of-line states,
 * shim.h, and the hierarchical mutexes' lines, hier.h) is also freed while
 * its word still holds it, once its lock is idle and unused: every use
 * ENTERS the block first (ls_ext_enter: pushed on the thread's HOLDS, then
 * the owner checked) and LEAVES it when done (ls_hold_pop: a failed
 * attempt at once, an acquisition at its unlock, after the release), and
 * the look frees such a block only if
 *   1. it was not entered since the previous look (`used`, cleared by each
 *      look: a block goes at the second look after its last use, so locks
 *      in use keep theirs and re-attaching stays rare; a table of locks
 *      used in turn, larger than the window, loses its blocks at first,
 *      and the window grows until it holds them);
 *   2. after the claim and the barrier (steps 2-3 above) no thread's holds
 *      name it: the barrier orders each thread's push before its owner
 *      check, so either the look sees the hold or the thread sees the claim
 *      (and undoes it, ls_ext_attach, or waits out the free and attaches a
 *      fresh block to the word); a holder, a waiter and an unlocker before
 *      its release all hold it;
 *   3. no thread that exited held it (`pinned`: a lock held for ever stays
 *      held, as glibc's), and every thread's holds could be read (a
 *      thread whose holds overflowed, or that has no record, turns this
 *      off for good: then idle blocks wait for their words, as above).
 * The word keeps pointing at the freed block, whose owner no longer names
 * it, so the next use attaches a fresh block, as for a copy: an idle
 * lock's state is all its algorithm's init gives. The cost is on the fast
 * paths of the algorithms with a block only: a push and an owner check at
 * the lock, a compare and a pop at the unlock (results/soak/README.md).
 */
#ifndef LS_POOL_H
#define LS_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LS_NODE_SIZE 64

/* Node classes. A node is only ever reused by the algorithm that freed it:
 * each algorithm file that takes nodes names its class before any include,
 *
 *	#define LS_NODE_CLASS LS_NODES_CLH_TP
 *
 * and ls_node_alloc/ls_node_free there use that class's cache and free
 * list (a file that names none uses LS_NODES_SHARED). The algorithms that
 * read or write a neighbour's node after it may have been freed (the
 * abortable and time-published locks, see above) argue from their own
 * states and tags; a node last written by ANOTHER algorithm, or written
 * late by another algorithm after it was reused, breaks that argument. A
 * process that gives its locks several algorithms (LOCKSWAP_ALGO_MAP,
 * LOCKSWAP_RWALGO beside LOCKSWAP_ALGO) hung that way (clh-tp beside
 * clh-try: tests/unit/node_class.c, tests/progs/algo_map.c's `queues`).
 * The class is a constant, so the fast paths cost what they did. */
enum ls_node_class {
	LS_NODES_SHARED,
	LS_NODES_CLH,
	LS_NODES_MCS,
	LS_NODES_CLH_TRY,
	LS_NODES_MCS_TRY,
	LS_NODES_CLH_NB,
	LS_NODES_MCS_NB,
	LS_NODES_CLH_TP,
	LS_NODES_MCS_TP,
	LS_NODES_HCLH,
	LS_NODES_HMCS,
	LS_NODES_C_BO_MCS,
	LS_NODES_CNA,
	LS_NODES_MALTHUSIAN,
	LS_NODES_SHFL,
	LS_NODES_MCS_RW,
	LS_NODE_CLASSES
};
#ifndef LS_NODE_CLASS
#define LS_NODE_CLASS LS_NODES_SHARED
#endif

/* The per-thread caches, one per class, inline so that a queue lock's fast
 * path pays a few instructions for its node (see pool.c for the slow
 * paths). */
struct ls_node_cache {
	char *head;
	int room;	/* limit minus the nodes cached: a free that takes it below
			 * 0 takes the slow path (one decrement and one branch) */
	unsigned limit; /* 0: every free takes the slow path (see pool.c) */
};
extern __thread struct ls_node_cache ls_node_caches[LS_NODE_CLASSES]
    __attribute__((tls_model("initial-exec")));
/* The slow paths, one entry per class without arguments: a call with the
 * class in a register made the compiler keep the lock's pointer in a
 * callee-saved register across it, 3 instructions more on some fast paths. */
extern void *(*const ls_node_alloc_slow_at[LS_NODE_CLASSES])(void);
extern void (*const ls_node_free_slow_at[LS_NODE_CLASSES])(void);

#define LS_NODE_LINK(n) ((uint64_t *)((char *)(n) + LS_NODE_SIZE - 8))

/* True if ls_node_alloc() would take its slow path: lets a lock keep a
 * call-free fast path (no saved registers) and allocate out of line. */
static inline bool ls_node_cache_empty(void)
{
	return __builtin_expect(ls_node_caches[LS_NODE_CLASS].head == NULL, 0);
}

static inline void *ls_node_alloc(void)
{
	struct ls_node_cache *c = &ls_node_caches[LS_NODE_CLASS];
	char *n = c->head;
	if (__builtin_expect(!n, 0))
		return ls_node_alloc_slow_at[LS_NODE_CLASS]();
	c->head = (char *)(uintptr_t)*LS_NODE_LINK(n);
	c->room++;
	return n;
}

static inline void ls_node_free(void *node)
{
	struct ls_node_cache *c = &ls_node_caches[LS_NODE_CLASS];
	/* relaxed atomic: a popper elsewhere may read a stale copy of this word
	 * (it then fails its CAS); atomic keeps that read defined */
	__atomic_store_n(LS_NODE_LINK(node), (uint64_t)(uintptr_t)c->head, __ATOMIC_RELAXED);
	c->head = (char *)node;
	if (__builtin_expect(--c->room < 0, 0))
		ls_node_free_slow_at[LS_NODE_CLASS]();
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

#define LS_POOL_RESERVE (64u << 10)
#define LS_EXT_MAX 4096u

/* Zero-filled, 64-byte aligned, at most LS_EXT_MAX bytes. ls_ext_alloc returns NULL
 * when no memory can be had without the reserve; ls_ext_alloc_wait takes
 * the reserve and then waits (see above), and returns NULL only for a size
 * out of range. */
void *ls_ext_alloc(size_t size);
void *ls_ext_alloc_wait(size_t size);
void ls_ext_free(void *p, size_t size);
bool ls_ext_owns(const void *p);

/* The head of an attached block (see the file comment); what follows it is
 * its user's. */
struct ls_ext_head {
	const void *owner; /* the word it was attached to (| 2 claimed, | 4
			    * being freed: "Reclaiming"; odd when free) */
	const void *kind;  /* who laid the block out (an algorithm's ops), so
			    * that memory reused for another kind of lock
			    * never adopts it (ls_ext_adoptable) */
	/* Reclaimable blocks: the id (ls_ext_reclaim_id) of a function called
	 * by the pool when it frees the block of a lock that is gone, to free
	 * what the state holds (queue nodes, a nested block: what destroy
	 * frees); it may call ls_ext_take and ls_ext_free. 0: only destroy
	 * frees the block. An id, not a pointer: the head has room for the
	 * bytes below only so (hmcs's head line is full). */
	uint8_t reclaim;
	/* Reclaiming idle locks (see "Idle locks" above): */
	uint8_t idle;		/* the pool may free the block while its word
				 * still holds it (set before attaching) */
	_Atomic uint8_t used;	/* entered since the pool's last look */
	_Atomic uint8_t pinned; /* held by a thread that exited: kept while
				 * its word holds it */
};
_Static_assert(sizeof(struct ls_ext_head) == 24, "hmcs's head line has no room for more");

/* The id of reclaim function fn for a head's `reclaim` (registered at its
 * first use; at most 15 functions in all). */
uint8_t ls_ext_reclaim_id(void (*fn)(struct ls_ext_head *h));

/* A reclaim function for a block that holds nothing of its own. */
void ls_ext_holds_nothing(struct ls_ext_head *h);

/* Looks for blocks of locks that are gone and frees them (see
 * "Reclaiming"); returns how many. The pool calls it itself when its
 * blocks run out; tests call it to make a reclamation happen now. 0 at
 * once if another thread is looking. */
unsigned ls_ext_scan(void);
typedef struct ls_ext_head *_Atomic ls_ext_word_t;

/* ---- holds (see "Idle locks" above) ----
 * A thread's record of the blocks it is using: entered and not yet left.
 * slot[0] and slot[1] are NULL for ever, so that the top's two neighbours
 * can be read on an empty stack; a thread that has no record yet points at an empty one
 * whose top is its end, so that its first push takes the slow path. The
 * records live in the pool (type-stable: the pool reads any of them at
 * any time) and are reused after their thread's exit. */
#define LS_HOLD_SLOTS 34
#define LS_HOLD_BASE 2 /* the NULL slots below the first entry */
struct ls_holds {
	struct ls_ext_head **top; /* the next free slot */
	struct ls_ext_head **end; /* &slot[LS_HOLD_BASE + LS_HOLD_SLOTS] */
	struct ls_holds *next;	  /* every record made (pool.c) */
	_Atomic unsigned state;	  /* pool.c: free, in use, overflowed */
	_Atomic unsigned moves;	  /* odd while entries move (pool.c) */
	struct ls_ext_head *slot[LS_HOLD_BASE + LS_HOLD_SLOTS];
};
extern __thread struct ls_holds *ls_holds_me __attribute__((tls_model("initial-exec")));
void ls_hold_push_slow(struct ls_ext_head *h);
void ls_hold_pop_slow(struct ls_ext_head *h);

/* relaxed: the pool reads a thread's holds only after a barrier on every
 * thread (ls_ext_scan); the atomics keep the compiler from tearing them.
 * The top moves first, then the entry is written: a signal handler that
 * locks in between pushes above it and pops back (a push the other way
 * round would lose the entry to the handler's). A look that reads the top
 * before the entry is written reads a stale one: the thread's owner check,
 * after the look's barrier, then sees the claim. */
static inline void ls_hold_push(struct ls_ext_head *h)
{
	struct ls_holds *r = ls_holds_me;
	struct ls_ext_head **t = r->top;
	if (__builtin_expect(t == r->end, 0)) {
		ls_hold_push_slow(h);
		return;
	}
	__atomic_store_n(&r->top, t + 1, __ATOMIC_RELAXED);
	atomic_signal_fence(memory_order_seq_cst);
	__atomic_store_n(t, h, __ATOMIC_RELAXED);
}

/* An entry of h below the top goes (the top is another entry of h: a
 * release that entered the block again keeps one, pool.c). */
void ls_hold_drop_below(struct ls_ext_head *h);

/* Is h the block the thread entered last, or the one before (a block
 * whose lock's state holds another's word: a wrapper's out-of-line block
 * over hierarchical lines, c-rw-wp's lines under +bravo)? Then its release
 * needs no entering, and its pop is at the top once the inner one's is
 * done. */
static inline bool ls_hold_is_top(const struct ls_ext_head *h)
{
	struct ls_holds *r = ls_holds_me;
	return r->top[-1] == h || r->top[-2] == h;
}

/* The thread's last entry goes: an attempt that failed, whose block is the
 * last the thread entered (an algorithm leaves what it entered itself
 * before it fails), so that nothing of it need be kept across the call. */
static inline void ls_hold_drop_top(void)
{
	struct ls_holds *r = ls_holds_me;
	__atomic_store_n(&r->top, r->top - 1, __ATOMIC_RELAXED);
}

/* The last entry of h goes: the caller will not touch h again (until it
 * enters it anew). A thread that never entered h (an unlock by another
 * thread than the locker's, one too many) has nothing to drop. */
static inline void ls_hold_pop(struct ls_ext_head *h)
{
	struct ls_holds *r = ls_holds_me;
	struct ls_ext_head **t = r->top;
	if (__builtin_expect(t[-1] == h, 1))
		__atomic_store_n(&r->top, t - 1, __ATOMIC_RELAXED);
	else
		ls_hold_pop_slow(h);
}

/* True if h is a block attached to w. relaxed: the head of a block that was
 * freed may be rewritten by the pool (a free-list link). */
static inline bool ls_ext_mine(const ls_ext_word_t *w, const struct ls_ext_head *h)
{
	return h && __atomic_load_n(&h->owner, __ATOMIC_RELAXED) == (const void *)w;
}

/* Re-initialisation of memory that may have held a lock: h, found in w,
 * is a block of the pool attached to w by a lock of the same kind, so its
 * size and layout are what the caller expects. A word of recycled memory
 * may hold anything: the pointer is checked (ls_ext_owns) before the head
 * is read. relaxed: no other thread uses memory being initialised. */
static inline bool ls_ext_adoptable(const ls_ext_word_t *w, const struct ls_ext_head *h, const void *kind)
{
	return h && ls_ext_owns(h) && ls_ext_mine(w, h) &&
	       __atomic_load_n(&h->kind, __ATOMIC_RELAXED) == kind;
}

/* The block of w's own, or NULL (none yet, or a copy's: ls_ext_attach).
 * acquire: pairs with the release CAS in ls_ext_attach, so the block's
 * contents are seen. */
static inline struct ls_ext_head *ls_ext_load(ls_ext_word_t *w)
{
	struct ls_ext_head *h = atomic_load_explicit(w, memory_order_acquire);
	return __builtin_expect(ls_ext_mine(w, h), 1) ? h : NULL;
}

/* As ls_ext_load, for a use of the block: the block w holds as its own,
 * entered (pushed on the thread's holds, so that the pool frees it while
 * its word holds it only when no thread uses it: "Idle locks"), or NULL
 * (nothing entered). The holds' store and the owner's load are ordered on
 * every thread by the pool's barrier (membarrier), so no fence is paid
 * here: either the pool sees the hold or this thread sees the claim. The
 * caller leaves it with ls_hold_pop. */
static inline __attribute__((always_inline)) struct ls_ext_head *ls_ext_enter(ls_ext_word_t *w)
{
	struct ls_ext_head *h = atomic_load_explicit(w, memory_order_acquire);
	if (__builtin_expect(!h, 0))
		return NULL;
	ls_hold_push(h);
	atomic_signal_fence(memory_order_seq_cst);
	if (__builtin_expect(!ls_ext_mine(w, h), 0)) {
		ls_hold_pop(h);
		return NULL;
	}
	/* relaxed: a hint for the pool's next look */
	if (!atomic_load_explicit(&h->used, memory_order_relaxed))
		atomic_store_explicit(&h->used, 1, memory_order_relaxed);
	return h;
}

/* ls_ext_enter without a call, for a fast path whose every other case
 * goes to a slow path that starts over: NULL if w holds no block of its
 * own, or the thread's holds need their slow path, or the block is used
 * for the first time since the pool's last look (then nothing is
 * entered). */
static inline __attribute__((always_inline)) struct ls_ext_head *ls_ext_try_enter(ls_ext_word_t *w)
{
	struct ls_ext_head *h = atomic_load_explicit(w, memory_order_acquire);
	struct ls_holds *r = ls_holds_me;
	struct ls_ext_head **t = r->top;
	if (__builtin_expect(!h || t == r->end, 0))
		return NULL;
	__atomic_store_n(&r->top, t + 1, __ATOMIC_RELAXED); /* as ls_hold_push */
	atomic_signal_fence(memory_order_seq_cst);
	__atomic_store_n(t, h, __ATOMIC_RELAXED);
	atomic_signal_fence(memory_order_seq_cst);
	/* relaxed: a hint for the pool's next look */
	if (__builtin_expect(!ls_ext_mine(w, h) || !atomic_load_explicit(&h->used, memory_order_relaxed),
			     0)) {
		__atomic_store_n(&r->top, t, __ATOMIC_RELAXED); /* left */
		return NULL;
	}
	return h;
}

/* What w holds if it needs no attaching: a block of its own, or `marker`
 * (NULL: the caller has none); else NULL. acquire, as ls_ext_load. */
static inline struct ls_ext_head *ls_ext_attached(ls_ext_word_t *w, const struct ls_ext_head *marker)
{
	struct ls_ext_head *h = atomic_load_explicit(w, memory_order_acquire);
	return ls_ext_mine(w, h) || (marker && h == marker) ? h : NULL;
}

/* As ls_ext_alloc (wait: ls_ext_alloc_wait), for a block to attach to word w: not
 * the block w still names from an earlier life (freed while w named it,
 * "Idle locks"), unless it is the only one to be had. Attached again to
 * w, that block would put the same pointer back in the word, and an
 * attach that had read the word before, deciding on the earlier life
 * (not w's), could then replace the block its holders use (pool.c,
 * ls_ext_attach). */
void *ls_ext_alloc_for(const ls_ext_word_t *w, size_t size, bool wait);
/* Attaches `fresh` to w, unless a block of w's own or `marker` is there by
 * then (another thread attached it first: fresh, size bytes, is freed, and
 * that one adopted). fresh is a block with its contents ready (the CAS
 * publishes them; ls_ext_alloc_for gives it), whose owner ls_ext_attach
 * sets to w just before (a caller that sets it earlier lets a thread that
 * finds a stale pointer to the block in w, left there by a copy of an
 * earlier lock, take it for w's own before it is attached: the shim still
 * does), or `marker` itself. Whether the block found in w is w's own is
 * decided on one reading of its owner at a time (pool.c, owned_by).
 * Returns what w holds afterwards. A block of w's that the pool has claimed
 * while it still is in w (see "Reclaiming", step 4) is w's again. */
struct ls_ext_head *ls_ext_attach(ls_ext_word_t *w, struct ls_ext_head *fresh, size_t size,
				  const struct ls_ext_head *marker);

/* destroy(): empties w and returns what it held; the caller frees that
 * (ls_ext_free) if it was w's own (ls_ext_mine). For blocks that are not
 * reclaimable only (reclaim NULL): use ls_ext_take for the others. */
static inline struct ls_ext_head *ls_ext_detach(ls_ext_word_t *w)
{
	return atomic_exchange_explicit(w, NULL, memory_order_acq_rel);
}

/* destroy(): empties w; returns the block it held if that was w's own and
 * is now the caller's to free (ls_ext_free), else NULL (nothing, a
 * marker, a copy's block, or a block the pool is reclaiming). *held (if
 * held is not NULL) gets what w held. */
struct ls_ext_head *ls_ext_take(ls_ext_word_t *w, struct ls_ext_head **held);

#endif
