/*
 * shim_rwlock.h - what the reader-writer lock and spinlock families share with
 * the configuration (config.c) and the binding (bind.h), below them: the
 * layout of a pthread_rwlock_t, the configuration the entry points read
 * (ls_rwg, filled by config.c, defined in shim_rwlock.c), glibc's functions, and
 * the out-of-line state of an rwlock.
 *
 * The two families are chosen apart from the mutexes: LOCKSWAP_RWALGO
 * (locks/rwlock/rwlock.h) and LOCKSWAP_SPINALGO (locks/spin/spinlock.h),
 * both `pthread` (glibc's own, through the shim) by default. They share the
 * mutex shim's initialisation (ls_init, ls_g.ready), its waiting policy and
 * its handling of asynchronous cancellation (shim_cancel.c).
 *
 * How lockswap reads a pthread_rwlock_t (56 bytes on x86-64). The fields
 * glibc's static initialisers set, and the ones a debugger shows, keep
 * glibc's meaning; the algorithm gets the 24 bytes of glibc's counters and
 * futex words:
 *
 *	offset	glibc			lockswap
 *	 0	__readers ... __pad4	algorithm state, 24 bytes (LS_RW_INLINE_STATE),
 *					or, for a larger state, a pointer to an out-of-line
 *					block (struct ls_rwext) in type-stable memory
 *	24	__cur_writer		write holder's kernel tid, 0 when not write-locked
 *	28	__shared		0; not 0 (process-shared): glibc's rwlock, and every
 *					call on it goes to glibc
 *	32	__rwelision, __pad1	unused (0)
 *	40	__pad2			unused (0); under an algorithm map with rwlock
 *					rules, the rwlock's binding (bind.h): 0 until it
 *					has one
 *	48	__flags			the kind, as glibc stores it: 2 (the _NP writer-
 *					preferring initialiser, PREFER_WRITER_NONRECURSIVE_NP)
 *					asks for writer preference, anything else is glibc's
 *					default reader preference
 *	52	(padding)		the rwlock's life (below): 0 until init or the
 *					first read lock stamps it
 *
 * PTHREAD_RWLOCK_INITIALIZER, PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
 * and zeroed memory give an all-zero state, which every algorithm takes as
 * unlocked, so there is nothing to do at first use. An out-of-line block
 * records the rwlock it belongs to; a copy by value (or memory reused
 * without destroy) finds a block that is not its own and attaches a fresh
 * one, as a mutex does.
 *
 * A life. The per-thread table of read holds (rwlock_held.h) knows an
 * rwlock by its address, and an address outlives a lock: destroy (which
 * does nothing, as glibc's) and init again, the memory freed and reused for
 * another rwlock, zeroed, or overwritten by a copy. So each life of an
 * rwlock has a number, `gen`, which init stamps and the first read lock
 * stamps if it is 0 (a static initialiser, zeroed memory): a read hold
 * records it, and an entry whose number is not the lock's speaks for an
 * earlier life and is forgotten, as glibc's init forgets its readers.
 * Numbers come from per-thread ranges of a 32-bit counter that skips 0, so
 * that the entry stays 24 bytes; a stale entry is mistaken for a hold only
 * if its lock's address is reused after 2^32 lives have been stamped in
 * between. A copy of an rwlock carries its original's number, and an
 * address holds one rwlock at a time, so a copy never passes for the lock
 * it overwrote (unless it is a saved copy of that same lock, which is a
 * copy of a lock in use: undefined).
 */
#ifndef LS_SHIM_RWLOCK_H
#define LS_SHIM_RWLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "pool.h"
#include "rwlock/rwlock.h"
#include "shim.h"

/* glibc's functions, for the passthrough and the process-shared rwlocks. */
struct ls_rwreal {
	struct ls_rwlock_ops rw;
	struct ls_spin_ops spin;
};
extern struct ls_rwreal ls_rwreal;

/* The configuration the rwlock and spinlock functions read (the exported
 * entry points jump to them: rwlock.c, spin.c). */
struct ls_rwglobal {
	bool rw_on;   /* an rwlock algorithm (not the passthrough) is in use */
	bool rw_ext;  /* its state lives out of line */
	bool spin_on; /* a spinlock algorithm (not the passthrough) is in use */
	const struct ls_rwalgo *rw;
	/* rw's operations of the fast paths, one load away */
	int (*rdlock)(void *, unsigned, void **);
	void (*rdunlock)(void *, void *);
	void (*wrlock)(void *, unsigned);
	void (*wrunlock)(void *);
	const struct ls_algo *spin;
	size_t rw_size; /* rw->state_size, final once started */
	bool map;	/* an algorithm per rwlock (rwlock.c): rw is the map's dispatcher */
	bool map_near;	/* its table is below 4 GiB: the map's own fast entries */
	/* the `how` of a default-kind lock ([0]) and of a
	 * PREFER_WRITER_NONRECURSIVE_NP one ([1]): the kind's preference
	 * (0, LS_RW_PREFER_WRITER), or under LOCKSWAP_RWPOLICY=algorithm
	 * the algorithm's own policy for the default kind (rwlock.h) */
	unsigned how[2];
} __attribute__((aligned(LS_CACHELINE)));
/* hidden: the fast paths call through it with one instruction */
extern struct ls_rwglobal ls_rwg __attribute__((visibility("hidden")));

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
	uint32_t gen; /* its life (above); 0: not stamped yet */
};
_Static_assert(sizeof(struct ls_rwlock) == sizeof(pthread_rwlock_t), "layout");
_Static_assert(offsetof(struct ls_rwlock, cur_writer) == offsetof(pthread_rwlock_t, __data.__cur_writer),
	       "cur_writer");
_Static_assert(offsetof(struct ls_rwlock, shared) == offsetof(pthread_rwlock_t, __data.__shared), "shared");
_Static_assert(offsetof(struct ls_rwlock, flags) == offsetof(pthread_rwlock_t, __data.__flags), "flags");
_Static_assert(offsetof(struct ls_rwlock, bind) == offsetof(pthread_rwlock_t, __data.__pad2), "bind");
_Static_assert(offsetof(struct ls_rwlock, gen) == offsetof(pthread_rwlock_t, __data.__flags) + 4 &&
		   offsetof(struct ls_rwlock, gen) + 4 == sizeof(pthread_rwlock_t),
	       "gen: the padding after __flags");
_Static_assert(offsetof(struct ls_rwlock, alg) == 0 && offsetof(pthread_rwlock_t, __data.__pad4) + 4 == 24,
	       "state");

/* Header of an out-of-line state block (pool.h's way to attach one: its
 * owner is &rwlock->alg.ext); the state follows at +64. */
struct ls_rwext {
	struct ls_ext_head h;
	char pad[LS_CACHELINE - sizeof(struct ls_ext_head)];
};

static inline int ls_rw_load_writer(struct ls_rwlock *l)
{
	return __atomic_load_n(&l->cur_writer, __ATOMIC_RELAXED);
}

static inline void ls_rw_store_writer(struct ls_rwlock *l, int tid)
{
	/* relaxed: read by other threads only to learn "not mine" */
	__atomic_store_n(&l->cur_writer, tid, __ATOMIC_RELAXED);
}

/* What every acquisition of l asks of the algorithm (rwlock.h,
 * PREFERENCE): by l's kind (glibc compares __flags with the _NP writer
 * kind too) and LOCKSWAP_RWPOLICY. */
static inline unsigned ls_rw_how(const struct ls_rwlock *l)
{
	return ls_rwg.how[l->flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP];
}

/* Neither write-held nor process-shared: one relaxed load of both (a
 * writer's tid is never 0; a stale value only sends the caller to the
 * general path, which looks again). */
static inline bool ls_rw_plain(const struct ls_rwlock *l)
{
	return __atomic_load_n(&l->writer_shared, __ATOMIC_RELAXED) == 0;
}

/* The life's number; relaxed: a change of life is not a synchronization
 * (glibc's destroy and init are none either). */
static inline uint32_t ls_rw_gen(const struct ls_rwlock *l)
{
	return __atomic_load_n(&l->gen, __ATOMIC_RELAXED);
}

/* A fresh number (shim_rwlock.c): never 0, unique until 2^32 are made. */
uint32_t ls_rw_gen_new(void);

/* l's number, stamped now if it had none (the first read lock of a static
 * initialiser or of zeroed memory). relaxed CAS: whoever stamps first, every
 * reader of this life records the same number. */
static inline uint32_t ls_rw_gen_stamp(struct ls_rwlock *l)
{
	uint32_t g = ls_rw_gen(l);
	if (LS_LIKELY(g))
		return g;
	uint32_t fresh = ls_rw_gen_new();
	if (__atomic_compare_exchange_n(&l->gen, &g, fresh, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return fresh;
	return g;
}

static inline bool ls_rw_is_glibc(const struct ls_rwlock *l)
{
	/* acquire: pairs with the release in ls_rw_configure */
	return !__atomic_load_n(&ls_rwg.rw_on, __ATOMIC_ACQUIRE) || l->shared != 0;
}

/* ---- out-of-line state (shim_rwlock.c) ----
 *
 * For algorithm a: the size of a block, header and state; a fresh block for
 * l, its state initialised (NULL only if wait is false and no memory can be
 * had without the pool's reserve); on a lock path, which cannot fail, a
 * block attached now (the pool's reserve, or a wait), or the one another
 * thread attached first. ls_rw_ext_attach does the last for ls_rwg's
 * algorithm. */
size_t ls_rw_ext_size(const struct ls_rwalgo *a);
struct ls_rwext *ls_rw_ext_new(struct ls_rwlock *l, const struct ls_rwalgo *a, bool wait);
void *ls_rw_ext_attach_for(struct ls_rwlock *l, const struct ls_rwalgo *a);
void *ls_rw_ext_attach(struct ls_rwlock *l);

/* The pointer is NULL (static initialiser, zeroed memory) or was stored by
 * lockswap, for this lock or the one it was copied from: a block of the
 * region either way, safe to read (only init, which may meet garbage,
 * checks ls_ext_owns).
 *
 * Using the block (pool.h, "Idle locks", as shim.h's mutexes): an
 * acquisition ENTERS it (ls_rw_ext_enter: attached, for algorithm
 * algo_of(l), if need be), a failed one leaves it at once, and a release
 * finds it with ls_rw_ext_release (the caller's hold on the top of its
 * holds, or entered again: an unlock out of order, by another thread, one
 * too many, of a copy) and leaves it after the algorithm's release
 * (ls_rw_ext_leave). ls_rw_state_fast and ls_rw_state_fast_held are the
 * fast paths' (NULL: take the general path). */
typedef const struct ls_rwalgo *ls_rwalgo_of_fn(struct ls_rwlock *l);
void *ls_rw_ext_enter_slow(struct ls_rwlock *l, ls_rwalgo_of_fn *algo_of);
void *ls_rw_ext_release_slow(struct ls_rwlock *l, ls_rwalgo_of_fn *algo_of);
const struct ls_rwalgo *ls_rwg_algo(struct ls_rwlock *l); /* ls_rwg.rw */

static inline __attribute__((always_inline)) void *ls_rw_ext_enter(struct ls_rwlock *l,
								   ls_rwalgo_of_fn *algo_of)
{
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_enter(&l->alg.ext);
	if (LS_LIKELY(e))
		return e + 1;
	return ls_rw_ext_enter_slow(l, algo_of);
}

static inline __attribute__((always_inline)) void *ls_rw_ext_release(struct ls_rwlock *l,
								     ls_rwalgo_of_fn *algo_of)
{
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_load(&l->alg.ext);
	if (LS_LIKELY(e && ls_hold_is_top(&e->h)))
		return e + 1;
	return ls_rw_ext_release_slow(l, algo_of);
}

static inline void ls_rw_ext_leave(void *st)
{
	ls_hold_pop(&((struct ls_rwext *)st - 1)->h);
}

/* For the fast paths: the state if no block needs attaching (ext says
 * whether it lives out of line; they are compiled once for each answer),
 * else NULL (they leave the attaching to the general paths, so that their
 * own code holds no call but the algorithm's): entered, for an
 * acquisition; for a release, only if the caller's hold is the top of its
 * holds; or neither (fork's look at the holds, which the forking thread
 * has). */
static inline __attribute__((always_inline)) void *ls_rw_state_fast(struct ls_rwlock *l, bool ext)
{
	if (!ext)
		return l->alg.state;
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_load(&l->alg.ext);
	return LS_LIKELY(e) ? e + 1 : NULL;
}

static inline __attribute__((always_inline)) void *ls_rw_state_fast_enter(struct ls_rwlock *l, bool ext)
{
	if (!ext)
		return l->alg.state;
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_try_enter(&l->alg.ext);
	return LS_LIKELY(e) ? e + 1 : NULL;
}

static inline __attribute__((always_inline)) void *ls_rw_state_fast_held(struct ls_rwlock *l, bool ext)
{
	if (!ext)
		return l->alg.state;
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_load(&l->alg.ext);
	return LS_LIKELY(e && ls_hold_is_top(&e->h)) ? e + 1 : NULL;
}

/* ls_rwg's algorithm's state: for an acquisition (entered), for a release
 * (ls_rw_ext_release), and left after either. */
static inline __attribute__((always_inline)) void *ls_rw_state_enter(struct ls_rwlock *l, bool ext)
{
	return ext ? ls_rw_ext_enter(l, ls_rwg_algo) : l->alg.state;
}

static inline __attribute__((always_inline)) void *ls_rw_state_release(struct ls_rwlock *l, bool ext)
{
	return ext ? ls_rw_ext_release(l, ls_rwg_algo) : l->alg.state;
}

static inline __attribute__((always_inline)) void ls_rw_state_leave(void *st, bool ext)
{
	if (ext)
		ls_rw_ext_leave(st);
}

#endif
