/*
 * rwlock.c - the pthread_rwlock_* entry points.
 *
 * How lockswap reads a pthread_rwlock_t (56 bytes on x86-64). The fields
 * glibc's static initialisers set, and the ones a debugger shows, keep
 * glibc's meaning; the algorithm gets the 24 bytes of glibc's counters and
 * futex words:
 *
 *	offset	glibc			lockswap
 *	 0	__readers ... __pad4	algorithm state, 24 bytes (LS_RW_INLINE_STATE),
 *					or, for a larger state, a pointer to an out-of-line
 *					block (struct rwext) in type-stable memory
 *	24	__cur_writer		write holder's kernel tid, 0 when not write-locked
 *	28	__shared		0; not 0 (process-shared): glibc's rwlock, and every
 *					call on it goes to glibc
 *	32	__rwelision, __pad1	unused (0)
 *	40	__pad2			unused (0); under an algorithm map with rwlock
 *					rules, the rwlock's binding (the map, below): 0
 *					until it has one
 *	48	__flags			the kind, as glibc stores it: 2 (the _NP writer-
 *					preferring initialiser, PREFER_WRITER_NONRECURSIVE_NP)
 *					asks for writer preference, anything else is glibc's
 *					default reader preference
 *
 * PTHREAD_RWLOCK_INITIALIZER, PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
 * and zeroed memory give an all-zero state, which every algorithm takes as
 * unlocked, so there is nothing to do at first use. An out-of-line block
 * records the rwlock it belongs to; a copy by value (or memory reused
 * without destroy) finds a block that is not its own and attaches a fresh
 * one, as mutex.c does.
 *
 * glibc 2.36's semantics, kept here whatever the algorithm (rwlock.h says
 * what the algorithms see):
 *   write holder   rdlock, wrlock and their timed variants: EDEADLK;
 *                  tryrdlock, trywrlock: EBUSY.
 *   reader         wrlock by a thread that holds a read lock waits for
 *                  itself, as in glibc (trywrlock: EBUSY, timed: ETIMEDOUT).
 *   recursion      under the default kind a thread may take a read lock it
 *                  holds again, even while a writer waits: the shim counts
 *                  it (per thread, below) and calls no algorithm; EAGAIN
 *                  past glibc's limit (2^28 - 1 holds). Under
 *                  PREFER_WRITER_NONRECURSIVE_NP every read goes to the
 *                  algorithm with writer preference asked for, so a reader
 *                  waits behind a waiting writer even if it holds the lock
 *                  (glibc deadlocks there; a timed attempt times out).
 *   timed          EINVAL first (a clock other than CLOCK_REALTIME and
 *                  CLOCK_MONOTONIC, tv_nsec outside [0, 1e9)), even when
 *                  the lock is free; then EDEADLK; then an attempt; then
 *                  ETIMEDOUT for a deadline already past. A NULL timespec
 *                  waits without limit, as in glibc. A CLOCK_REALTIME
 *                  deadline is converted to a CLOCK_MONOTONIC one when the
 *                  wait starts.
 *   unlock         by the write holder: a write unlock; by a thread holding
 *                  a read lock: a read unlock (the last of its recursive
 *                  holds releases the algorithm's); by any other thread: 0
 *                  and nothing changes. glibc would decrement its reader
 *                  count there: it releases one of another thread's read
 *                  holds, or, on an unheld rwlock, leaves a count of -1
 *                  that makes every later writer wait for ever (issue 25:
 *                  misuse must not hang).
 *   destroy        always 0, as glibc's (which does nothing): a held lock
 *                  stays as it is and keeps working; a free one gives its
 *                  out-of-line block back and stays usable (zero state).
 *   init           the kind in __flags as glibc stores it; process-shared
 *                  rwlocks are glibc's (their state must live in the shared
 *                  memory and work across processes).
 *
 * Read holds, per thread. Each thread keeps a table of the read locks it
 * holds: the lock's address, the algorithm's token (rwlock.h) and a count
 * of recursive holds. The first RD_INLINE entries are in thread-local
 * storage; more go to blocks of the pool (ls_ext_alloc_wait: a read lock
 * never fails for want of memory, it may wait for it), given back when they
 * empty and at thread exit. A lookup is a scan, from the newest entry. The
 * table is what lets unlock tell a read unlock from a misuse without a
 * shared write, and what lets recursion be granted without any algorithm's
 * help. The commonest case, a thread's only read hold, not recursive, has
 * a slot of its own in front of the table (rdtable.one), so that the fast
 * paths cost little: rdlock tests that slot with the lock's writer word and
 * writes it and the token's; unlock compares it with the lock and clears
 * it. (A direct-mapped table, or none for the algorithms that cannot block
 * a recursive reader, would cost no less there: the tokens must be kept and
 * a misuse told apart whatever the algorithm.)
 *
 * Asynchronous cancellation (cancel.c): once a thread has made itself
 * asynchronously cancelable, every call takes the checked path (the entry
 * points below), where such a thread runs the call with its type deferred, and
 * waits in slices (the algorithm's timed operation or the fallback, 1 ms
 * doubling to 16 ms) with pthread_testcancel between two, holding nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "match.h"
#include "pool.h"
#include "rwshim.h"
#include "wait.h"

struct ls_rwlock {
	union {
		unsigned char state[LS_RW_INLINE_STATE];
		ls_ext_word_t ext;
	} alg;
	union {
		struct {
			int32_t cur_writer;
			int32_t shared;
		};
		uint64_t writer_shared; /* both: the fast paths test them at once */
	};
	unsigned char elision[8];
	_Atomic uint64_t bind; /* under a map with rwlock rules: the rwlock's binding (below) */
	uint32_t flags;
	uint32_t pad5;
};
_Static_assert(sizeof(struct ls_rwlock) == sizeof(pthread_rwlock_t), "layout");
_Static_assert(offsetof(struct ls_rwlock, cur_writer) == offsetof(pthread_rwlock_t, __data.__cur_writer),
	       "cur_writer");
_Static_assert(offsetof(struct ls_rwlock, shared) == offsetof(pthread_rwlock_t, __data.__shared), "shared");
_Static_assert(offsetof(struct ls_rwlock, flags) == offsetof(pthread_rwlock_t, __data.__flags), "flags");
_Static_assert(offsetof(struct ls_rwlock, bind) == offsetof(pthread_rwlock_t, __data.__pad2), "bind");
_Static_assert(offsetof(struct ls_rwlock, alg) == 0 && offsetof(pthread_rwlock_t, __data.__pad4) + 4 == 24,
	       "state");

/* Header of an out-of-line state block (pool.h's way to attach one: its
 * owner is &rwlock->alg.ext); the state follows at +64. */
struct rwext {
	struct ls_ext_head h;
	char pad[LS_CACHELINE - sizeof(struct ls_ext_head)];
};

static inline int load_writer(struct ls_rwlock *l)
{
	return __atomic_load_n(&l->cur_writer, __ATOMIC_RELAXED);
}

static inline void store_writer(struct ls_rwlock *l, int tid)
{
	/* relaxed: read by other threads only to learn "not mine" */
	__atomic_store_n(&l->cur_writer, tid, __ATOMIC_RELAXED);
}

/* LS_RW_PREFER_WRITER for the _NP writer-preferring kind (glibc compares
 * __flags with it too), else 0. */
static inline unsigned how_of(const struct ls_rwlock *l)
{
	return l->flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP ? LS_RW_PREFER_WRITER : 0;
}

static unsigned map_caps(struct ls_rwlock *l);

/* Does the shim count this lock's recursive reads (rwlock.h)? */
static inline bool counts_recursion(struct ls_rwlock *l, unsigned how)
{
	return !how || ((ls_rwg.map ? map_caps(l) : ls_rwg.rw->caps) & LS_RWCAP_EXCLUSIVE);
}

/* Neither write-held nor process-shared: one relaxed load of both (a
 * writer's tid is never 0; a stale value only sends the caller to the
 * general path, which looks again). */
static inline bool plain(const struct ls_rwlock *l)
{
	return __atomic_load_n(&l->writer_shared, __ATOMIC_RELAXED) == 0;
}

static inline bool is_glibc(const struct ls_rwlock *l)
{
	/* acquire: pairs with the release in ls_rw_configure */
	return !__atomic_load_n(&ls_rwg.rw_on, __ATOMIC_ACQUIRE) || l->shared != 0;
}

/* ---- out-of-line state ---- */

static size_t ext_size(void)
{
	return sizeof(struct rwext) + ls_rwg.rw_size;
}

static struct rwext *ext_new(struct ls_rwlock *l, bool wait)
{
	struct rwext *e = wait ? ls_ext_alloc_wait(ext_size()) : ls_ext_alloc(ext_size());
	if (e) {
		/* relaxed atomic: a stale copy of another rwlock may read it */
		__atomic_store_n(&e->h.owner, (const void *)&l->alg.ext, __ATOMIC_RELAXED);
		e->h.kind = ls_rwg.rw;
		if (ls_rwg.rw->init)
			ls_rwg.rw->init(e + 1);
	}
	return e;
}

/* On a lock path, which cannot fail: the pool's reserve, or a wait. */
static __attribute__((noinline)) void *ext_attach(struct ls_rwlock *l)
{
	struct rwext *e = ext_new(l, true);
	return (struct rwext *)ls_ext_attach(&l->alg.ext, &e->h, ext_size(), NULL) + 1;
}

/* The pointer is NULL (static initialiser, zeroed memory) or was stored by
 * lockswap, for this lock or the one it was copied from: a block of the
 * region either way, safe to read (only init, which may meet garbage,
 * checks ls_ext_owns). */
static inline void *ext_state(struct ls_rwlock *l)
{
	struct rwext *e = (struct rwext *)ls_ext_load(&l->alg.ext);
	if (LS_LIKELY(e))
		return e + 1;
	return ext_attach(l);
}

/* For the fast paths: the state if no block needs attaching (ext says
 * whether it lives out of line; they are compiled once for each answer),
 * else NULL (they leave the attaching to the general paths, so that their
 * own code holds no call but the algorithm's). */
static inline __attribute__((always_inline)) void *state_fast(struct ls_rwlock *l, bool ext)
{
	if (!ext)
		return l->alg.state;
	struct rwext *e = (struct rwext *)ls_ext_load(&l->alg.ext);
	return LS_LIKELY(e) ? e + 1 : NULL;
}

/* The algorithm's state, attached if need be. */
static inline __attribute__((always_inline)) void *state_in(struct ls_rwlock *l, bool ext)
{
	return ext ? ext_state(l) : l->alg.state;
}

static inline void *state_of(struct ls_rwlock *l)
{
	return state_in(l, ls_rwg.rw_ext);
}

/* ---- an algorithm per rwlock (LOCKSWAP_ALGO_MAP, LOCKSWAP_CONFIG) ----
 *
 * When a map has rules whose algorithm is an rwlock algorithm (map.c sorts
 * the rules into families), each rwlock is bound once, at
 * pthread_rwlock_init or first use, to the rule its creation stack matches
 * (match.h, among the rwlock rules), and runs that rule's algorithm until
 * it is destroyed, as map.c does for mutexes.
 *
 * Bindings. One entry per rule, plus one for the rwlocks no rule names
 * (LOCKSWAP_RWALGO), in a read-only table mapped below 4 GiB if the kernel
 * has room there: __pad2 holds the rwlock's entry (its address, or its offset
 * from rw_bias when the table is above 4 GiB; 64 bits, so that no
 * instruction widens it), 0 until it has one. Binding races: as map.c's, one CAS from 0; the loser adopts the
 * winner's entry. A copy by value copies its binding.
 *
 * Paths. ls_rwg.rw is map_rwalgo, whose operations find the rwlock's entry
 * (binding it first if need be) and call its algorithm on its state: the
 * general paths and every timed and try operation run through it unchanged,
 * with ls_rwg.rw_ext false, so that the state they pass is the rwlock itself
 * (offset 0). With the table below 4 GiB the read lock, the write lock and
 * the unlock have entries of their own (rdlock_fast_map, wrlock_fast_map,
 * unlock_fast_map, unlock_write_map): they load the binding beside the
 * writer word, send an rwlock without one to the general path, and call the
 * entry's operation: 3 instructions more for a lock, 1 for an unlock than
 * the same algorithm as LOCKSWAP_RWALGO. An algorithm whose state is out of
 * line gets adapters (rwm_ext_*) that find the block, as the fast paths of
 * LOCKSWAP_RWALGO do inline, and jump to its operation: 2 more per call.
 * (results/map/rwcost.md.) Without rwlock rules none of this runs:
 * ls_rwg.map is false and every path is as before.
 *
 * `pthread` in a rule: glibc's own rwlock, kept out of line (56 bytes do not
 * fit the state bytes) with the rwlock's kind, run through the shim, which
 * keeps glibc's semantics itself (EDEADLK, recursion, misuse).
 */

struct ls_rwbind {
	/* what rdlock_fast_map and unlock_fast_map call, on the rwlock */
	int (*rdlock)(void *, unsigned, void **);
	void (*rdunlock)(void *, void *);
	void (*wrlock)(void *, unsigned);
	void (*wrunlock)(void *);
	/* the algorithm, and its own operations (the adapters call them on
	 * the out-of-line state) */
	const struct ls_rwalgo *algo;
	int (*ardlock)(void *, unsigned, void **);
	void (*ardunlock)(void *, void *);
	void (*awrlock)(void *, unsigned);
	void (*awrunlock)(void *);
	bool ext;
	int rule; /* match.h's index, or LS_MATCH_NONE: the default */
} __attribute__((aligned(LS_CACHELINE)));

static struct ls_rwbind *rw_table; /* rw_nbind entries, read-only once configured */
static unsigned rw_nbind;	   /* rules + 1 (the last: no rule) */
static uintptr_t rw_bias;	   /* 0 if rw_table is below 4 GiB */
static uint64_t rw_rules;	   /* the rwlock rules (match.h's mask) */
static int rw_any = LS_MATCH_NONE; /* their '*' rule */
static _Atomic uint64_t *rw_bound; /* rwlocks bound to each entry */

static inline uint64_t rw_word_of(const struct ls_rwbind *b)
{
	return (uintptr_t)b - rw_bias;
}

static inline const struct ls_rwbind *rw_entry_at(uint64_t w)
{
	return (const struct ls_rwbind *)(rw_bias + w);
}

/* A word read from memory that may hold anything (init): its entry or NULL. */
static const struct ls_rwbind *rw_entry_checked(uint64_t w)
{
	uintptr_t a = rw_bias + w;
	if (!w || a < (uintptr_t)rw_table || a >= (uintptr_t)(rw_table + rw_nbind) ||
	    (a - (uintptr_t)rw_table) % sizeof *rw_table)
		return NULL;
	return (const struct ls_rwbind *)a;
}

static const struct ls_rwbind *rw_entry_for(int rule)
{
	return &rw_table[rule == LS_MATCH_NONE ? rw_nbind - 1 : (unsigned)rule];
}

/* First use of an rwlock without a binding: match, then one CAS from 0. */
static __attribute__((noinline)) const struct ls_rwbind *rw_bind_first_use(struct ls_rwlock *l)
{
	const struct ls_rwbind *b = rw_entry_for(ls_match_caller(rw_rules, rw_any));
	uint64_t seen = 0;
	if (atomic_compare_exchange_strong_explicit(&l->bind, &seen, rw_word_of(b), memory_order_relaxed,
						    memory_order_relaxed)) {
		atomic_fetch_add_explicit(&rw_bound[b - rw_table], 1, memory_order_relaxed);
		return b;
	}
	return rw_entry_at(seen); /* another thread bound it first: its choice stands */
}

static inline const struct ls_rwbind *rw_bound_entry(struct ls_rwlock *l)
{
	uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
	if (LS_LIKELY(w))
		return rw_entry_at(w);
	return rw_bind_first_use(l);
}

static unsigned map_caps(struct ls_rwlock *l)
{
	return rw_bound_entry(l)->algo->caps;
}

/* -- glibc's own rwlock, for one rwlock -- */

static int g_rdlock(void *s, unsigned how, void **token)
{
	(void)how, (void)token;
	return ls_rwreal.rw.rdlock(s);
}

static int g_tryrdlock(void *s, unsigned how, void **token)
{
	(void)how, (void)token;
	return ls_rwreal.rw.tryrdlock(s);
}

static struct timespec g_ts(uint64_t deadline)
{
	return (struct timespec){(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
}

static int g_timedrdlock(void *s, unsigned how, uint64_t deadline, void **token)
{
	(void)how, (void)token;
	struct timespec ts = g_ts(deadline);
	return ls_rwreal.rw.clockrdlock(s, CLOCK_MONOTONIC, &ts);
}

static void g_unlock_read(void *s, void *token)
{
	(void)token;
	ls_rwreal.rw.unlock(s);
}

static void g_wrlock(void *s, unsigned how)
{
	(void)how;
	ls_rwreal.rw.wrlock(s);
}

static int g_trywrlock(void *s, unsigned how)
{
	(void)how;
	return ls_rwreal.rw.trywrlock(s);
}

static int g_timedwrlock(void *s, unsigned how, uint64_t deadline)
{
	(void)how;
	struct timespec ts = g_ts(deadline);
	return ls_rwreal.rw.clockwrlock(s, CLOCK_MONOTONIC, &ts);
}

static void g_wrunlock(void *s)
{
	ls_rwreal.rw.unlock(s);
}

static void g_destroy(void *s)
{
	ls_rwreal.rw.destroy(s);
}

static const struct ls_rwalgo glibc_rwalgo = {
    .name = "pthread",
    .desc = "glibc's own rwlock, for the rwlocks a rule gives it",
    .caps = LS_RWCAP_TIMEOUT | LS_RWCAP_KIND,
    .state_size = sizeof(pthread_rwlock_t),
    .destroy = g_destroy,
    .rdlock = g_rdlock,
    .tryrdlock = g_tryrdlock,
    .timedrdlock = g_timedrdlock,
    .rdunlock = g_unlock_read,
    .wrlock = g_wrlock,
    .trywrlock = g_trywrlock,
    .timedwrlock = g_timedwrlock,
    .wrunlock = g_wrunlock,
};

/* -- out-of-line states of the rwlock's own algorithm -- */

static size_t rw_ext_size(const struct ls_rwalgo *a)
{
	return sizeof(struct rwext) + a->state_size;
}

/* a's state in a block (zeroed or fresh) of rwlock l */
static void rw_state_init(const struct ls_rwlock *l, const struct ls_rwalgo *a, void *st)
{
	if (a == &glibc_rwalgo) {
		/* glibc's rwlock takes its kind at init */
		pthread_rwlockattr_t at;
		pthread_rwlockattr_init(&at);
		pthread_rwlockattr_setkind_np(&at, (int)l->flags);
		ls_rwreal.rw.init(st, &at);
		pthread_rwlockattr_destroy(&at);
	} else if (a->init) {
		a->init(st);
	}
}

static struct rwext *rw_ext_new(struct ls_rwlock *l, const struct ls_rwalgo *a, bool wait)
{
	struct rwext *e = wait ? ls_ext_alloc_wait(rw_ext_size(a)) : ls_ext_alloc(rw_ext_size(a));
	if (e) {
		__atomic_store_n(&e->h.owner, (const void *)&l->alg.ext, __ATOMIC_RELAXED);
		e->h.kind = a;
		rw_state_init(l, a, e + 1);
	}
	return e;
}

static __attribute__((noinline)) void *rw_ext_attach(struct ls_rwlock *l)
{
	const struct ls_rwalgo *a = rw_entry_at(atomic_load_explicit(&l->bind, memory_order_relaxed))->algo;
	struct rwext *e = rw_ext_new(l, a, true);
	return (struct rwext *)ls_ext_attach(&l->alg.ext, &e->h, rw_ext_size(a), NULL) + 1;
}

/* The state of a bound rwlock whose algorithm keeps it out of line. */
static inline void *rw_ext_state(struct ls_rwlock *l)
{
	struct rwext *e = (struct rwext *)ls_ext_load(&l->alg.ext);
	if (LS_LIKELY(e))
		return e + 1;
	return rw_ext_attach(l);
}

static inline void *rw_state_for(struct ls_rwlock *l, const struct ls_rwbind *b)
{
	return b->ext ? rw_ext_state(l) : l->alg.state;
}

/* The fast paths' adapters for an out-of-line state: called by
 * rdlock_fast_map and unlock_fast_map only (the table is below 4 GiB, the
 * rwlock is bound), they find the block as rdlock_fast_ext does, then jump
 * to the algorithm's own operation (the attaching, rare, apart: no register
 * is saved on the way). */
static inline const struct ls_rwbind *rw_near_entry(struct ls_rwlock *l)
{
	return (const struct ls_rwbind *)(uintptr_t)atomic_load_explicit(&l->bind, memory_order_relaxed);
}

static __attribute__((noinline)) int rwm_ext_rdlock_attach(struct ls_rwlock *l, unsigned how, void **token)
{
	void *st = rw_ext_attach(l);
	return rw_near_entry(l)->ardlock(st, how, token);
}

static int rwm_ext_rdlock(void *s, unsigned how, void **token)
{
	struct ls_rwlock *l = s;
	struct rwext *e = (struct rwext *)ls_ext_load(&l->alg.ext);
	if (LS_UNLIKELY(!e))
		return rwm_ext_rdlock_attach(l, how, token);
	return rw_near_entry(l)->ardlock(e + 1, how, token);
}

static __attribute__((noinline)) void rwm_ext_rdunlock_attach(struct ls_rwlock *l, void *token)
{
	/* (a copy by value of a held rwlock: see ext_state) */
	rw_near_entry(l)->ardunlock(rw_ext_attach(l), token);
}

static void rwm_ext_rdunlock(void *s, void *token)
{
	struct ls_rwlock *l = s;
	struct rwext *e = (struct rwext *)ls_ext_load(&l->alg.ext);
	if (LS_UNLIKELY(!e)) {
		rwm_ext_rdunlock_attach(l, token);
		return;
	}
	rw_near_entry(l)->ardunlock(e + 1, token);
}

static __attribute__((noinline)) void rwm_ext_wrlock_attach(struct ls_rwlock *l, unsigned how)
{
	void *st = rw_ext_attach(l);
	rw_near_entry(l)->awrlock(st, how);
}

static void rwm_ext_wrlock(void *s, unsigned how)
{
	struct ls_rwlock *l = s;
	struct rwext *e = (struct rwext *)ls_ext_load(&l->alg.ext);
	if (LS_UNLIKELY(!e)) {
		rwm_ext_wrlock_attach(l, how);
		return;
	}
	rw_near_entry(l)->awrlock(e + 1, how);
}

static __attribute__((noinline)) void rwm_ext_wrunlock_attach(struct ls_rwlock *l)
{
	rw_near_entry(l)->awrunlock(rw_ext_attach(l));
}

static void rwm_ext_wrunlock(void *s)
{
	struct ls_rwlock *l = s;
	struct rwext *e = (struct rwext *)ls_ext_load(&l->alg.ext);
	if (LS_UNLIKELY(!e)) {
		rwm_ext_wrunlock_attach(l);
		return;
	}
	rw_near_entry(l)->awrunlock(e + 1);
}

/* -- map_rwalgo: ls_rwg.rw under a map; the state is the rwlock -- */

#define RWM_PROLOGUE(s)                                                                                      \
	struct ls_rwlock *l = (s);                                                                           \
	const struct ls_rwbind *b = rw_bound_entry(l);                                                       \
	const struct ls_rwalgo *a = b->algo;                                                                 \
	void *st = rw_state_for(l, b)

static int rwm_rdlock(void *s, unsigned how, void **token)
{
	RWM_PROLOGUE(s);
	return a->rdlock(st, how, token);
}

static int rwm_tryrdlock(void *s, unsigned how, void **token)
{
	RWM_PROLOGUE(s);
	return a->tryrdlock(st, how, token);
}

static int rwm_timedrdlock(void *s, unsigned how, uint64_t deadline, void **token)
{
	RWM_PROLOGUE(s);
	return a->timedrdlock ? a->timedrdlock(st, how, deadline, token)
			      : ls_rw_timed_fallback(a, st, how, false, deadline, token);
}

static void rwm_rdunlock(void *s, void *token)
{
	RWM_PROLOGUE(s);
	a->rdunlock(st, token);
}

static void rwm_wrlock(void *s, unsigned how)
{
	RWM_PROLOGUE(s);
	a->wrlock(st, how);
}

static int rwm_trywrlock(void *s, unsigned how)
{
	RWM_PROLOGUE(s);
	return a->trywrlock(st, how);
}

static int rwm_timedwrlock(void *s, unsigned how, uint64_t deadline)
{
	RWM_PROLOGUE(s);
	return a->timedwrlock ? a->timedwrlock(st, how, deadline)
			      : ls_rw_timed_fallback(a, st, how, true, deadline, NULL);
}

static void rwm_wrunlock(void *s)
{
	RWM_PROLOGUE(s);
	a->wrunlock(st);
}

static struct ls_rwalgo map_rwalgo = {
    .name = "map",
    .desc = "an algorithm per rwlock (LOCKSWAP_ALGO_MAP)",
    .caps = LS_RWCAP_TIMEOUT,
    .state_size = LS_RW_INLINE_STATE,
    .rdlock = rwm_rdlock,
    .tryrdlock = rwm_tryrdlock,
    .timedrdlock = rwm_timedrdlock,
    .rdunlock = rwm_rdunlock,
    .wrlock = rwm_wrlock,
    .trywrlock = rwm_trywrlock,
    .timedwrlock = rwm_timedwrlock,
    .wrunlock = rwm_wrunlock,
};

/* -- init and destroy under the map -- */

static int rw_map_init(struct ls_rwlock *l, int kind)
{
	/* Memory that held one of our rwlocks: its block goes back to the
	 * pool, or to the new rwlock if the algorithm is the same. */
	const struct ls_rwbind *old = rw_entry_checked(atomic_load_explicit(&l->bind, memory_order_relaxed));
	struct rwext *olde = NULL;
	if (old && old->ext) {
		struct ls_ext_head *e = atomic_load_explicit(&l->alg.ext, memory_order_relaxed);
		if (ls_ext_adoptable(&l->alg.ext, e, old->algo))
			olde = (struct rwext *)e;
	}
	memset(l, 0, sizeof *l);
	l->flags = (uint32_t)kind; /* as glibc: the kind itself */
	const struct ls_rwbind *b = rw_entry_for(ls_match_caller(rw_rules, rw_any));
	const struct ls_rwalgo *a = b->algo;
	if (olde && a != old->algo) {
		ls_ext_free(olde, rw_ext_size(old->algo));
		olde = NULL;
	}
	int r = 0;
	if (b->ext) {
		struct rwext *e = olde;
		if (e) {
			memset(e + 1, 0, a->state_size);
			rw_state_init(l, a, e + 1);
		} else {
			e = rw_ext_new(l, a, false); /* none: attached at first use, as without a map */
		}
		if (e)
			atomic_store_explicit(&l->alg.ext, &e->h, memory_order_release);
		else
			r = ENOMEM;
	} else if (a->init) {
		a->init(l->alg.state);
	}
	atomic_store_explicit(&l->bind, rw_word_of(b), memory_order_relaxed);
	atomic_fetch_add_explicit(&rw_bound[b - rw_table], 1, memory_order_relaxed);
	return r;
}

static int rw_map_destroy(struct ls_rwlock *l)
{
	uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
	if (!w)
		return 0; /* never initialised nor used: nothing to give back */
	const struct ls_rwbind *b = rw_entry_at(w);
	const struct ls_rwalgo *a = b->algo;
	if (b->ext && !ls_ext_load(&l->alg.ext))
		return 0;
	void *st = rw_state_for(l, b);
	if (a->trywrlock(st, 0))
		return 0; /* held or waited for: glibc's destroy changes nothing either */
	a->wrunlock(st);
	if (a->destroy)
		a->destroy(st);
	if (b->ext) {
		struct ls_ext_head *e = ls_ext_detach(&l->alg.ext);
		if (ls_ext_mine(&l->alg.ext, e))
			ls_ext_free(e, rw_ext_size(a));
	}
	return 0;
}

/* -- configuration, queries, report (rwshim.h) -- */

int ls_rwmap_configure(const struct ls_rwalgo *const *rules, unsigned n, uint64_t among, int any,
		       const struct ls_algo *mutex, bool verbose, char *err, size_t len)
{
	const struct ls_rwalgo *dflt = ls_rwg.rw;
	bool any_lock = !(dflt->caps & LS_RWCAP_PASSTHROUGH);
	for (unsigned i = 0; i < n; i++)
		any_lock |= (among >> i & 1) && !(rules[i]->caps & LS_RWCAP_PASSTHROUGH);
	if (!any_lock) {
		/* every rwlock glibc's, whichever rule it takes: as without rules */
		if (verbose)
			ls_say("lockswap: map: every rwlock rule names pthread, as LOCKSWAP_RWALGO does: "
			       "every rwlock is glibc's");
		return 0;
	}
	rw_nbind = n + 1;
	size_t size = (rw_nbind * sizeof *rw_table + 4095) & ~(size_t)4095;
	bool near;
	void *p = ls_map_table(size, &near);
	rw_bound = mmap(NULL, rw_nbind * sizeof *rw_bound, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!p || rw_bound == MAP_FAILED) {
		snprintf(err, len, "algorithm map: no memory for the rwlock rules' table");
		return -1;
	}
	rw_table = p;
	rw_bias = near ? 0 : (uintptr_t)rw_table - sizeof *rw_table;
	for (unsigned i = 0; i < rw_nbind; i++) {
		bool dflt_entry = i == n;
		if (!dflt_entry && !(among >> i & 1)) {
			rw_table[i].rule = LS_MATCH_NONE; /* not an rwlock rule: never chosen */
			rw_table[i].algo = dflt;
			continue;
		}
		const struct ls_rwalgo *a = dflt_entry ? dflt : rules[i];
		if (a->caps & LS_RWCAP_PASSTHROUGH) {
			a = &glibc_rwalgo; /* the baseline, per rwlock */
		} else if (!dflt_entry) {  /* (LOCKSWAP_RWALGO's was started and checked) */
			const struct ls_rule *r = ls_match_rule(i);
			char why[1400];
			if (ls_rwalgo_start(a, mutex, why, sizeof why)) {
				snprintf(err, len, "%s: rule '%.100s': %s", r->where, r->text, why);
				return -1;
			}
			if (a->state_size > LS_RW_INLINE_STATE && LS_CACHELINE + a->state_size > LS_EXT_MAX) {
				snprintf(
				    err, len,
				    "%s: rule '%.100s': rwlock algorithm %s: state of %zu bytes exceeds the "
				    "pool's blocks (%u)",
				    r->where, r->text, a->name, a->state_size, LS_EXT_MAX - LS_CACHELINE);
				return -1;
			}
		}
		struct ls_rwbind *e = &rw_table[i];
		e->algo = a;
		e->ext = a->state_size > LS_RW_INLINE_STATE;
		e->rdlock = e->ext ? rwm_ext_rdlock : a->rdlock;
		e->rdunlock = e->ext ? rwm_ext_rdunlock : a->rdunlock;
		e->wrlock = e->ext ? rwm_ext_wrlock : a->wrlock;
		e->wrunlock = e->ext ? rwm_ext_wrunlock : a->wrunlock;
		e->ardlock = a->rdlock;
		e->ardunlock = a->rdunlock;
		e->awrlock = a->wrlock;
		e->awrunlock = a->wrunlock;
		e->rule = dflt_entry ? LS_MATCH_NONE : (int)i;
		map_rwalgo.caps |= a->caps & LS_RWCAP_HIER;
	}
	mprotect(rw_table, size, PROT_READ);
	rw_rules = among;
	rw_any = any;
	if (verbose) {
		char caps[128];
		for (unsigned i = 0; i < rw_nbind; i++) {
			const struct ls_rwbind *b = &rw_table[i];
			if (i < n && !(among >> i & 1))
				continue;
			if (i == n && any != LS_MATCH_NONE)
				continue;
			ls_say("lockswap: map: %s%s%s -> rwlock %s caps=%s state=%s",
			       b->rule == LS_MATCH_NONE ? "no rule" : "rule '",
			       b->rule == LS_MATCH_NONE ? "" : ls_match_rule((unsigned)b->rule)->text,
			       b->rule == LS_MATCH_NONE ? "" : "'", b->algo->name,
			       ls_rwcaps_string(b->algo->caps, caps, sizeof caps),
			       b->ext ? "out-of-line" : "inline");
		}
		if (!near)
			ls_say("lockswap: map: rwlocks dispatch by offset (no room below 4 GiB: more "
			       "instructions per call)");
	}
	ls_rwg.map = true;
	ls_rwg.map_near = near;
	ls_rwg.rw = &map_rwalgo;
	ls_rwg.rdlock = map_rwalgo.rdlock;
	ls_rwg.rdunlock = map_rwalgo.rdunlock;
	ls_rwg.wrlock = map_rwalgo.wrlock;
	ls_rwg.wrunlock = map_rwalgo.wrunlock;
	ls_rwg.rw_size = map_rwalgo.state_size;
	ls_rwg.rw_ext = false;
	__atomic_store_n(&ls_rwg.rw_on, true, __ATOMIC_RELEASE);
	return 0;
}

const char *ls_rwmap_default_name(void)
{
	const struct ls_rwbind *b = rw_entry_for(rw_any);
	return b->algo->name;
}

static const struct ls_rwbind *rw_query(const pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (!ls_rwg.map || l->shared)
		return NULL;
	return rw_bound_entry(l);
}

const char *ls_rwmap_algo_of(const pthread_rwlock_t *rw)
{
	const struct ls_rwbind *b = rw_query(rw);
	return b ? b->algo->name : NULL;
}

const char *ls_rwmap_rule_of(const pthread_rwlock_t *rw)
{
	const struct ls_rwbind *b = rw_query(rw);
	if (!b)
		return NULL;
	return b->rule == LS_MATCH_NONE ? "(default)" : ls_match_rule((unsigned)b->rule)->text;
}

uint64_t ls_rwmap_bound(int rule, const char **algo)
{
	if (!ls_rwg.map)
		return 0;
	if (rule != LS_MATCH_NONE && !(rw_rules >> rule & 1))
		return 0;
	const struct ls_rwbind *b = &rw_table[rule == LS_MATCH_NONE ? rw_nbind - 1 : (unsigned)rule];
	*algo = b->algo->name;
	return atomic_load_explicit(&rw_bound[b - rw_table], memory_order_relaxed);
}

/* ---- the calling thread's read holds ---- */

#define RD_INLINE 8

struct rdentry {
	const struct ls_rwlock *lock;
	void *token;
	uint32_t extra; /* recursive holds beyond the first (counted by the shim) */
};

#define RD_BLOCK ((LS_EXT_MAX - 2 * sizeof(void *)) / sizeof(struct rdentry))
struct rdblock {
	struct rdblock *prev;
	size_t n;
	struct rdentry e[RD_BLOCK];
};

/* one.lock says where the holds are:
 *	NULL		none (n is 0, no block);
 *	a lock		one hold, of that lock, not recursive, its token in
 *			one.token (n is 0, no block): the fast paths' case;
 *	RD_TABLE	in e[0..n) and the blocks.
 * The general paths move a hold from `one` to the table before they look
 * (rd_table), and back when one is left (rd_settle). */
#define RD_TABLE ((const struct ls_rwlock *)1)
struct rdtable {
	struct rdentry one;   /* one.extra is always 0 */
	unsigned n;	      /* entries in e[] */
	struct rdblock *last; /* overflow blocks, newest last */
	struct rdentry e[RD_INLINE];
};
static __thread struct rdtable rd __attribute__((tls_model("initial-exec")));

/* The holds are in the table from now on. */
static inline void rd_table(void)
{
	if (rd.one.lock == RD_TABLE)
		return;
	if (rd.one.lock)
		rd.e[rd.n++] = rd.one; /* n was 0 */
	rd.one.lock = RD_TABLE;
}

/* After a general path: `one` again when the table holds one hold that is
 * not recursive, or none. */
static inline void rd_settle(void)
{
	if (rd.one.lock != RD_TABLE || rd.last || rd.n > 1)
		return;
	if (rd.n == 0) {
		rd.one.lock = NULL;
	} else if (rd.e[0].extra == 0) {
		rd.one.token = rd.e[0].token;
		rd.one.lock = rd.e[0].lock;
		rd.n = 0;
	}
}

static __attribute__((noinline)) struct rdentry *rd_find_more(const struct ls_rwlock *l)
{
	for (struct rdblock *b = rd.last; b; b = b->prev)
		for (size_t i = b->n; i-- > 0;)
			if (b->e[i].lock == l)
				return &b->e[i];
	return NULL;
}

/* l's entry, in the table (the holds are moved there), or NULL. */
static inline struct rdentry *rd_find(const struct ls_rwlock *l)
{
	rd_table();
	for (unsigned i = rd.n; i-- > 0;)
		if (rd.e[i].lock == l)
			return &rd.e[i];
	return LS_UNLIKELY(rd.last != NULL) ? rd_find_more(l) : NULL;
}

static pthread_key_t rd_key;
static pthread_once_t rd_key_once = PTHREAD_ONCE_INIT;
static bool rd_key_ok;

/* At thread exit: the blocks go back to the pool (their holds stay held,
 * as a thread that exits holding a read lock leaves it in glibc). */
static void rd_exit(void *unused)
{
	(void)unused;
	while (rd.last) {
		struct rdblock *b = rd.last;
		rd.last = b->prev;
		ls_ext_free(b, sizeof *b);
	}
}

static void rd_key_create(void)
{
	rd_key_ok = pthread_key_create(&rd_key, rd_exit) == 0;
}

static __attribute__((noinline)) void rd_push_more(const struct ls_rwlock *l, void *token)
{
	struct rdblock *b = rd.last;
	if (!b || b->n == RD_BLOCK) {
		b = ls_ext_alloc_wait(sizeof *b); /* zeroed; waits rather than fail */
		b->prev = rd.last;
		rd.last = b;
		pthread_once(&rd_key_once, rd_key_create);
		if (rd_key_ok)
			pthread_setspecific(rd_key, b); /* not NULL: rd_exit runs */
	}
	b->e[b->n++] = (struct rdentry){l, token, 0};
}

static inline void rd_push(const struct ls_rwlock *l, void *token)
{
	if (!rd.one.lock) {
		rd.one = (struct rdentry){l, token, 0};
		return;
	}
	rd_table();
	if (LS_LIKELY(rd.n < RD_INLINE && !rd.last))
		rd.e[rd.n++] = (struct rdentry){l, token, 0};
	else
		rd_push_more(l, token);
}

/* Removes e, of the table: the newest entry takes its place. */
static inline void rd_remove(struct rdentry *e)
{
	struct rdblock *b = rd.last;
	if (LS_LIKELY(!b)) {
		*e = rd.e[--rd.n];
		return;
	}
	*e = b->e[--b->n];
	if (b->n == 0) {
		rd.last = b->prev;
		ls_ext_free(b, sizeof *b);
	}
}

/* ---- acquisitions ---- */

enum op { LOCK, TRY, TIMED };
struct timed_arg {
	clockid_t clock;
	const struct timespec *abs; /* NULL: no limit (glibc) */
};

/* An asynchronously cancelable thread never waits inside an algorithm: it
 * waits in slices, and between two, holding nothing, lets a pending cancel
 * act (mutex.c does the same). deadline: UINT64_MAX for none. */
static int sliced(void *st, bool write, unsigned how, uint64_t deadline, void **token)
{
	const struct ls_rwalgo *a = ls_rwg.rw;
	for (uint64_t slice = LS_SLICE_MIN_NS;; slice = slice < LS_SLICE_MAX_NS ? 2 * slice : slice) {
		uint64_t end = ls_now_ns() + slice;
		if (end > deadline)
			end = deadline;
		int r;
		if (write)
			r = a->timedwrlock ? a->timedwrlock(st, how, end)
					   : ls_rw_timed_fallback(a, st, how, true, end, token);
		else
			r = a->timedrdlock ? a->timedrdlock(st, how, end, token)
					   : ls_rw_timed_fallback(a, st, how, false, end, token);
		if (r != ETIMEDOUT)
			return r;
		if (end == deadline)
			return ETIMEDOUT;
		pthread_testcancel();
	}
}

/* The algorithm's part of an acquisition: 0, or EBUSY / ETIMEDOUT / EAGAIN. */
static int attempt(void *st, bool write, unsigned how, enum op op, const struct timed_arg *t, void **token)
{
	const struct ls_rwalgo *a = ls_rwg.rw;
	if (op == LOCK && LS_LIKELY(!ls_async_cancel)) {
		if (write) {
			a->wrlock(st, how);
			return 0;
		}
		return a->rdlock(st, how, token);
	}
	int r = write ? a->trywrlock(st, how) : a->tryrdlock(st, how, token);
	if (r != EBUSY || op == TRY)
		return r;
	uint64_t deadline = UINT64_MAX;
	if (op == TIMED && t->abs) {
		if ((r = ls_to_deadline(t->clock, t->abs, &deadline)))
			return r;
	}
	if (LS_UNLIKELY(ls_async_cancel))
		return sliced(st, write, how, deadline, token);
	if (deadline == UINT64_MAX) { /* a timed call with a NULL timespec */
		if (write) {
			a->wrlock(st, how);
			return 0;
		}
		return a->rdlock(st, how, token);
	}
	if (write)
		return a->timedwrlock ? a->timedwrlock(st, how, deadline)
				      : ls_rw_timed_fallback(a, st, how, true, deadline, token);
	return a->timedrdlock ? a->timedrdlock(st, how, deadline, token)
			      : ls_rw_timed_fallback(a, st, how, false, deadline, token);
}

static inline __attribute__((always_inline)) int rd_acquire(struct ls_rwlock *l, enum op op,
							    const struct timed_arg *t)
{
	int w = load_writer(l);
	if (LS_UNLIKELY(w != 0) && w == ls_self_tid())
		return op == TRY ? EBUSY : EDEADLK;
	unsigned how = how_of(l);
	if (LS_UNLIKELY(rd.one.lock != NULL) && counts_recursion(l, how)) {
		struct rdentry *e = rd_find(l);
		int r = !e ? -1 : e->extra >= LS_RW_MAX_RECURSION - 1 ? EAGAIN : 0;
		if (r == 0)
			e->extra++;
		rd_settle();
		if (r >= 0)
			return r;
	}
	void *token = NULL;
	int r = attempt(state_of(l), false, how, op, t, &token);
	if (LS_UNLIKELY(r))
		return r;
	rd_push(l, token);
	return 0;
}

static inline __attribute__((always_inline)) int wr_acquire(struct ls_rwlock *l, enum op op,
							    const struct timed_arg *t)
{
	int tid = ls_self_tid();
	if (LS_UNLIKELY(load_writer(l) == tid))
		return op == TRY ? EBUSY : EDEADLK;
	int r = attempt(state_of(l), true, how_of(l), op, t, NULL);
	if (LS_UNLIKELY(r))
		return r;
	store_writer(l, tid);
	return 0;
}

/* The same with the calling thread's cancel type deferred: it is
 * asynchronously cancelable (cancel.c). */
static __attribute__((noinline)) int acquire_async(struct ls_rwlock *l, bool write, enum op op,
						   const struct timed_arg *t)
{
	int old = ls_cancel_defer();
	int r = write ? wr_acquire(l, op, t) : rd_acquire(l, op, t);
	ls_cancel_restore(old);
	return r;
}

/* ---- the entry points ----
 *
 * Each exported pthread_rwlock_* is one indirect jump through `entry`,
 * whose targets are chosen once, when the configuration is read:
 *   before     the *_first functions: initialise, then jump again;
 *   glibc's    under the passthrough (LOCKSWAP_RWALGO=pthread, the default)
 *              glibc's own functions: the program runs glibc's code and
 *              pays one jump per call, nothing else;
 *   lockswap's the fast functions (compiled once for inline and once for
 *              out-of-line state), which take for granted what holds until
 *              a thread of the process makes itself asynchronously
 *              cancelable; ls_rw_async_on (cancel.c) then swaps them for the
 *              checked functions, which test everything on every call (as
 *              the mutexes' LS_KIND_SLOW does). An observer (the profiler)
 *              is given the checked functions to wrap, and the entries jump
 *              to its wrappers (observe.h).
 * Why not an IFUNC, which could bind the program straight to glibc's
 * functions: ld.so relocates a library bound at load time (BIND_NOW, as
 * Debian builds libcrypto.so.3) before the preloaded liblockswap.so, so it
 * would call the resolver before liblockswap's own relocations are done,
 * and print "Relink ... for IFUNC symbol" on stderr in every such program
 * (results/rwlock/README.md shows it).
 *
 * The jump's load is relaxed on x86-64: there every load is an acquire in
 * the hardware, and the compiler cannot move the callee's loads of the
 * configuration above the load of the callee's address; C11's acquire would
 * cost an instruction more (GCC 12: mov, then jmp, instead of jmp *mem). */
#if defined(__x86_64__)
#define ENTRY_ORDER __ATOMIC_RELAXED
#else
#define ENTRY_ORDER __ATOMIC_ACQUIRE
#endif
#define ENTRY(op) ((__typeof__(entry.op))__atomic_load_n(&entry.op, ENTRY_ORDER))

static struct ls_rwlock_ops entry; /* (below, with its first targets) */
static int rdlock_general(pthread_rwlock_t *rw);
static int wrlock_general(pthread_rwlock_t *rw);
static int unlock_general(pthread_rwlock_t *rw);
static int unlock_write_in(pthread_rwlock_t *rw);
static int unlock_write_ext(pthread_rwlock_t *rw);
static int unlock_write_map(pthread_rwlock_t *rw);

/* -- read -- */

/* The fast read lock: the caller holds no read lock (so none of this one),
 * and the lock is neither write-held (so not by the caller) nor
 * process-shared. The hold is registered before the call, which writes its
 * token in place: the call then keeps nothing of ours alive. */
static inline __attribute__((always_inline)) int rdlock_fast(pthread_rwlock_t *rw, bool ext)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (LS_UNLIKELY((__atomic_load_n(&l->writer_shared, __ATOMIC_RELAXED) | (uintptr_t)rd.one.lock) != 0))
		return rdlock_general(rw);
	/* (not before: a process-shared rwlock's first word is glibc's) */
	void *st = state_fast(l, ext);
	if (ext && LS_UNLIKELY(!st))
		return rdlock_general(rw);
	rd.one.token = NULL;
	rd.one.lock = l;
	int r = ls_rwg.rdlock(st, how_of(l), &rd.one.token);
	if (LS_UNLIKELY(r))
		rd.one.lock = NULL;
	return r;
}

/* The fast read lock under a map whose table is below 4 GiB: as
 * rdlock_fast, for a bound rwlock (one without its binding takes the general
 * path, which binds it), calling its entry's operation on the rwlock. */
static __attribute__((noinline)) int rdlock_fast_map(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
	if (LS_UNLIKELY(
		(__atomic_load_n(&l->writer_shared, __ATOMIC_RELAXED) | (uintptr_t)rd.one.lock) != 0 || !w))
		return rdlock_general(rw);
	rd.one.token = NULL;
	rd.one.lock = l;
	int r = ((const struct ls_rwbind *)(uintptr_t)w)->rdlock(l->alg.state, how_of(l), &rd.one.token);
	if (LS_UNLIKELY(r))
		rd.one.lock = NULL;
	return r;
}

/* Everything the fast read lock does not take for granted: a read lock by
 * a thread that holds some read lock or this lock's write lock, of a
 * write-held lock, of a process-shared lock. */
static __attribute__((noinline)) int rdlock_general(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (l->shared)
		return ls_rwreal.rw.rdlock(rw);
	return rd_acquire(l, LOCK, NULL);
}

static __attribute__((noinline)) int rdlock_fast_in(pthread_rwlock_t *rw)
{
	return rdlock_fast(rw, false);
}

static __attribute__((noinline)) int rdlock_fast_ext(pthread_rwlock_t *rw)
{
	return rdlock_fast(rw, true);
}

/* The checked read lock: any thread, any rwlock, once initialised. */
static int rdlock_checked(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (is_glibc(l))
		return ls_rwreal.rw.rdlock(rw);
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async(l, false, LOCK, NULL);
	return rd_acquire(l, LOCK, NULL);
}

static int tryrdlock_fast(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (l->shared)
		return ls_rwreal.rw.tryrdlock(rw);
	return rd_acquire(l, TRY, NULL);
}

static int tryrdlock_checked(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (is_glibc(l))
		return ls_rwreal.rw.tryrdlock(rw);
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async(l, false, TRY, NULL);
	return rd_acquire(l, TRY, NULL);
}

/* The timed variants (checked, whatever the entries): EINVAL before
 * anything else, as glibc. */
static int timed(pthread_rwlock_t *rw, bool write, clockid_t clock, const struct timespec *abs)
{
	if (!ls_valid_clock(clock) || (abs && (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L)))
		return EINVAL;
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	struct timed_arg t = {clock, abs};
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async(l, write, TIMED, &t);
	return write ? wr_acquire(l, TIMED, &t) : rd_acquire(l, TIMED, &t);
}

static int timedrdlock_checked(pthread_rwlock_t *rw, const struct timespec *abs)
{
	if (is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.timedrdlock(rw, abs);
	return timed(rw, false, CLOCK_REALTIME, abs);
}

static int clockrdlock_checked(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abs)
{
	if (is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.clockrdlock(rw, clock, abs);
	return timed(rw, false, clock, abs);
}

/* -- write -- */

/* The fast write lock: the lock is neither write-held nor process-shared
 * (so the caller is not its writer). */
static inline __attribute__((always_inline)) int wrlock_fast(pthread_rwlock_t *rw, bool ext)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (LS_UNLIKELY(!plain(l)))
		return wrlock_general(rw);
	void *st = state_fast(l, ext); /* (not before: see rdlock_fast) */
	if (ext && LS_UNLIKELY(!st))
		return wrlock_general(rw);
	ls_rwg.wrlock(st, how_of(l));
	store_writer(l, ls_self_tid());
	return 0;
}

static __attribute__((noinline)) int wrlock_general(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (l->shared)
		return ls_rwreal.rw.wrlock(rw);
	return wr_acquire(l, LOCK, NULL);
}

/* The fast write lock under a map whose table is below 4 GiB: as
 * wrlock_fast, for a bound rwlock, through its entry. */
static __attribute__((noinline)) int wrlock_fast_map(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
	if (LS_UNLIKELY(!plain(l) || !w))
		return wrlock_general(rw);
	((const struct ls_rwbind *)(uintptr_t)w)->wrlock(l->alg.state, how_of(l));
	store_writer(l, ls_self_tid());
	return 0;
}

static __attribute__((noinline)) int wrlock_fast_in(pthread_rwlock_t *rw)
{
	return wrlock_fast(rw, false);
}

static __attribute__((noinline)) int wrlock_fast_ext(pthread_rwlock_t *rw)
{
	return wrlock_fast(rw, true);
}

static int wrlock_checked(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (is_glibc(l))
		return ls_rwreal.rw.wrlock(rw);
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async(l, true, LOCK, NULL);
	return wr_acquire(l, LOCK, NULL);
}

static int trywrlock_fast(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (l->shared)
		return ls_rwreal.rw.trywrlock(rw);
	return wr_acquire(l, TRY, NULL);
}

static int trywrlock_checked(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (is_glibc(l))
		return ls_rwreal.rw.trywrlock(rw);
	if (LS_UNLIKELY(ls_async_cancel))
		return acquire_async(l, true, TRY, NULL);
	return wr_acquire(l, TRY, NULL);
}

static int timedwrlock_checked(pthread_rwlock_t *rw, const struct timespec *abs)
{
	if (is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.timedwrlock(rw, abs);
	return timed(rw, true, CLOCK_REALTIME, abs);
}

static int clockwrlock_checked(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abs)
{
	if (is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.clockwrlock(rw, clock, abs);
	return timed(rw, true, clock, abs);
}

/* -- unlock -- */

static __attribute__((noinline)) int release(struct ls_rwlock *l)
{
	int w = load_writer(l);
	if (w != 0 && w == ls_self_tid()) {
		/* before the release: afterwards the lock may be gone */
		store_writer(l, 0);
		ls_rwg.wrunlock(state_of(l));
		return 0;
	}
	struct rdentry *e = rd_find(l);
	if (LS_UNLIKELY(!e) || e->extra) {
		if (e)
			e->extra--;
		/* else not held by the caller: see "unlock" above */
		rd_settle();
		return 0;
	}
	void *token = e->token;
	rd_remove(e);
	rd_settle();
	ls_rwg.rw->rdunlock(state_of(l), token);
	return 0;
}

/* The fast unlock: the caller's only read hold, of this lock, not
 * recursive (so the lock is neither write-held nor process-shared); the
 * rest, a write unlock first, out of line (so that the read path saves no
 * register). */
static inline __attribute__((always_inline)) int unlock_fast(pthread_rwlock_t *rw, bool ext)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (LS_LIKELY(rd.one.lock == l)) {
		/* l is lockswap's (so its first word is ours): a block was
		 * attached when it was taken */
		void *st = state_fast(l, ext);
		if (!ext || LS_LIKELY(st != NULL)) {
			void *token = rd.one.token;
			rd.one.lock = NULL;
			ls_rwg.rdunlock(st, token);
			return 0;
		}
	}
	return ext ? unlock_write_ext(rw) : unlock_write_in(rw);
}

/* The write unlock by its writer of a lock that is not process-shared;
 * anything else is general. */
static inline __attribute__((always_inline)) int unlock_write(pthread_rwlock_t *rw, bool ext)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	uint64_t ws = __atomic_load_n(&l->writer_shared, __ATOMIC_RELAXED);
	if (ws == 0 || ws != (uint32_t)ls_self_tid())
		return unlock_general(rw);
	/* before the release: afterwards the lock may be gone */
	store_writer(l, 0);
	ls_rwg.wrunlock(state_in(l, ext));
	return 0;
}

static __attribute__((noinline)) int unlock_general(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (l->shared)
		return ls_rwreal.rw.unlock(rw);
	return release(l);
}

/* The write unlock under a map whose table is below 4 GiB (a write-held
 * rwlock is bound). */
static __attribute__((noinline)) int unlock_write_map(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	uint64_t ws = __atomic_load_n(&l->writer_shared, __ATOMIC_RELAXED);
	if (ws == 0 || ws != (uint32_t)ls_self_tid())
		return unlock_general(rw);
	store_writer(l, 0); /* before the release: afterwards the lock may be gone */
	uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
	((const struct ls_rwbind *)(uintptr_t)w)->wrunlock(l->alg.state);
	return 0;
}

static __attribute__((noinline)) int unlock_write_in(pthread_rwlock_t *rw)
{
	return unlock_write(rw, false);
}

static __attribute__((noinline)) int unlock_write_ext(pthread_rwlock_t *rw)
{
	return unlock_write(rw, true);
}

/* The fast unlock under a map whose table is below 4 GiB: a read hold's
 * rwlock was bound when it was taken. */
static __attribute__((noinline)) int unlock_fast_map(pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (LS_LIKELY(rd.one.lock == l)) {
		void *token = rd.one.token;
		rd.one.lock = NULL;
		uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
		((const struct ls_rwbind *)(uintptr_t)w)->rdunlock(l->alg.state, token);
		return 0;
	}
	return unlock_write_map(rw);
}

static __attribute__((noinline)) int unlock_fast_in(pthread_rwlock_t *rw)
{
	return unlock_fast(rw, false);
}

static __attribute__((noinline)) int unlock_fast_ext(pthread_rwlock_t *rw)
{
	return unlock_fast(rw, true);
}

static int unlock_checked(pthread_rwlock_t *rw)
{
	if (is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.unlock(rw);
	return LS_CANCEL_DEFERRED(release((struct ls_rwlock *)rw));
}

/* ---- init / destroy ---- */

static int init_rwlock(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	int kind = PTHREAD_RWLOCK_DEFAULT_NP, pshared = PTHREAD_PROCESS_PRIVATE;
	if (attr) {
		pthread_rwlockattr_getkind_np(attr, &kind);
		pthread_rwlockattr_getpshared(attr, &pshared);
	}
	if (!ls_rwg.rw_on || pshared != PTHREAD_PROCESS_PRIVATE)
		return ls_rwreal.rw.init(rw, attr);
	if (ls_rwg.map)
		return rw_map_init(l, kind);

	/* Memory that held one of our rwlocks (destroyed, or reused without
	 * destroy): keep its out-of-line block. A pointer outside the region
	 * is garbage and is never dereferenced. */
	struct rwext *old = NULL;
	if (ls_rwg.rw_ext) {
		struct ls_ext_head *e = atomic_load_explicit(&l->alg.ext, memory_order_relaxed);
		if (ls_ext_adoptable(&l->alg.ext, e, ls_rwg.rw))
			old = (struct rwext *)e;
	}
	memset(l, 0, sizeof *l);
	l->flags = (uint32_t)kind; /* as glibc: the kind itself */
	if (old) {
		memset(old + 1, 0, ls_rwg.rw_size);
		if (ls_rwg.rw->init)
			ls_rwg.rw->init(old + 1);
		atomic_store_explicit(&l->alg.ext, &old->h, memory_order_release);
	} else if (ls_rwg.rw_ext) {
		/* As for mutexes (mutex.c): where failing is allowed, no
		 * memory without the pool's reserve is ENOMEM, and the rwlock
		 * is still valid, like a static initialiser. */
		struct rwext *e = ext_new(l, false);
		if (!e)
			return ENOMEM;
		atomic_store_explicit(&l->alg.ext, &e->h, memory_order_release);
	} else if (ls_rwg.rw->init) {
		ls_rwg.rw->init(l->alg.state);
	}
	return 0;
}

static int init_checked(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	return LS_CANCEL_DEFERRED(init_rwlock(rw, attr));
}

static int destroy_rwlock(struct ls_rwlock *l)
{
	if (ls_rwg.map)
		return rw_map_destroy(l);
	if (ls_rwg.rw_ext && !ls_ext_load(&l->alg.ext))
		return 0; /* never used here: nothing to give back */
	void *st = state_of(l);
	const struct ls_rwalgo *a = ls_rwg.rw;
	if (a->trywrlock(st, 0))
		return 0; /* held or waited for: glibc's destroy changes nothing either */
	a->wrunlock(st);
	if (a->destroy)
		a->destroy(st);
	if (ls_rwg.rw_ext) {
		struct ls_ext_head *e = ls_ext_detach(&l->alg.ext);
		if (ls_ext_mine(&l->alg.ext, e))
			ls_ext_free(e, ext_size());
	}
	return 0;
}

static int destroy_checked(pthread_rwlock_t *rw)
{
	if (is_glibc((struct ls_rwlock *)rw))
		return ls_rwreal.rw.destroy(rw);
	return LS_CANCEL_DEFERRED(destroy_rwlock((struct ls_rwlock *)rw));
}

/* ---- choosing the entries ---- */

/* Before the configuration: initialise, then jump again. */
#define FIRST(op, params, args)                                                                              \
	static int op##_first params                                                                         \
	{                                                                                                    \
		ls_ensure_init();                                                                            \
		return ENTRY(op) args;                                                                       \
	}
FIRST(init, (pthread_rwlock_t * rw, const pthread_rwlockattr_t *a), (rw, a))
FIRST(destroy, (pthread_rwlock_t * rw), (rw))
FIRST(rdlock, (pthread_rwlock_t * rw), (rw))
FIRST(tryrdlock, (pthread_rwlock_t * rw), (rw))
FIRST(timedrdlock, (pthread_rwlock_t * rw, const struct timespec *t), (rw, t))
FIRST(clockrdlock, (pthread_rwlock_t * rw, clockid_t c, const struct timespec *t), (rw, c, t))
FIRST(wrlock, (pthread_rwlock_t * rw), (rw))
FIRST(trywrlock, (pthread_rwlock_t * rw), (rw))
FIRST(timedwrlock, (pthread_rwlock_t * rw, const struct timespec *t), (rw, t))
FIRST(clockwrlock, (pthread_rwlock_t * rw, clockid_t c, const struct timespec *t), (rw, c, t))
FIRST(unlock, (pthread_rwlock_t * rw), (rw))

static struct ls_rwlock_ops entry = {
    init_first,	  destroy_first,   rdlock_first,      tryrdlock_first,	 timedrdlock_first, clockrdlock_first,
    wrlock_first, trywrlock_first, timedwrlock_first, clockwrlock_first, unlock_first,
};

void ls_rw_entries(struct ls_rwlock_ops *o, bool fast)
{
	if (!ls_rwg.rw_on) {
		*o = ls_rwreal.rw;
		return;
	}
	bool ext = ls_rwg.rw_ext, map = ls_rwg.map && ls_rwg.map_near;
	*o = (struct ls_rwlock_ops){
	    .init = init_checked,
	    .destroy = destroy_checked,
	    .rdlock = !fast ? rdlock_checked
		      : map ? rdlock_fast_map
		      : ext ? rdlock_fast_ext
			    : rdlock_fast_in,
	    .tryrdlock = fast ? tryrdlock_fast : tryrdlock_checked,
	    .timedrdlock = timedrdlock_checked,
	    .clockrdlock = clockrdlock_checked,
	    .wrlock = !fast ? wrlock_checked
		      : map ? wrlock_fast_map
		      : ext ? wrlock_fast_ext
			    : wrlock_fast_in,
	    .trywrlock = fast ? trywrlock_fast : trywrlock_checked,
	    .timedwrlock = timedwrlock_checked,
	    .clockwrlock = clockwrlock_checked,
	    .unlock = !fast ? unlock_checked
		      : map ? unlock_fast_map
		      : ext ? unlock_fast_ext
			    : unlock_fast_in,
	};
}

/* release: pairs with the acquire of ls_g.ready in ls_ensure_init (the
 * *_first functions) and, on x86-64, with the hardware's (ENTRY_ORDER). */
#define PUBLISH(op) __atomic_store_n(&entry.op, o->op, __ATOMIC_RELEASE)

void ls_rw_publish(const struct ls_rwlock_ops *o)
{
	PUBLISH(init);
	PUBLISH(destroy);
	PUBLISH(rdlock);
	PUBLISH(tryrdlock);
	PUBLISH(timedrdlock);
	PUBLISH(clockrdlock);
	PUBLISH(wrlock);
	PUBLISH(trywrlock);
	PUBLISH(timedwrlock);
	PUBLISH(clockwrlock);
	PUBLISH(unlock);
}

/* A fast entry becomes the checked one (an observer's wrapper, or glibc's
 * function, stays). */
#define TO_CHECKED(op, from, to)                                                                             \
	do {                                                                                                 \
		__typeof__(entry.op) f_ = from;                                                              \
		__atomic_compare_exchange_n(&entry.op, &f_, to, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);  \
	} while (0)

void ls_rw_async_on(void)
{
	TO_CHECKED(rdlock, rdlock_fast_in, rdlock_checked);
	TO_CHECKED(rdlock, rdlock_fast_ext, rdlock_checked);
	TO_CHECKED(rdlock, rdlock_fast_map, rdlock_checked);
	TO_CHECKED(tryrdlock, tryrdlock_fast, tryrdlock_checked);
	TO_CHECKED(wrlock, wrlock_fast_in, wrlock_checked);
	TO_CHECKED(wrlock, wrlock_fast_ext, wrlock_checked);
	TO_CHECKED(wrlock, wrlock_fast_map, wrlock_checked);
	TO_CHECKED(trywrlock, trywrlock_fast, trywrlock_checked);
	TO_CHECKED(unlock, unlock_fast_in, unlock_checked);
	TO_CHECKED(unlock, unlock_fast_ext, unlock_checked);
	TO_CHECKED(unlock, unlock_fast_map, unlock_checked);
}

/* ---- the exported symbols: one jump each ---- */

#define EXPORT(op, v1, params, args)                                                                         \
	LS_EXPORT __attribute__((symver("pthread_rwlock_" #op "@@GLIBC_2.34"),                               \
				 symver("pthread_rwlock_" #op "@" v1))) int ls_pthread_rwlock_##op params    \
	{                                                                                                    \
		return ENTRY(op) args;                                                                       \
	}
EXPORT(init, "GLIBC_2.2.5", (pthread_rwlock_t * rw, const pthread_rwlockattr_t *a), (rw, a))
EXPORT(destroy, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
EXPORT(rdlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
EXPORT(tryrdlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
EXPORT(timedrdlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw, const struct timespec *t), (rw, t))
EXPORT(clockrdlock, "GLIBC_2.30", (pthread_rwlock_t * rw, clockid_t c, const struct timespec *t), (rw, c, t))
EXPORT(wrlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
EXPORT(trywrlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
EXPORT(timedwrlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw, const struct timespec *t), (rw, t))
EXPORT(clockwrlock, "GLIBC_2.30", (pthread_rwlock_t * rw, clockid_t c, const struct timespec *t), (rw, c, t))
EXPORT(unlock, "GLIBC_2.2.5", (pthread_rwlock_t * rw), (rw))
