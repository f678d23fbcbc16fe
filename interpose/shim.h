/*
 * shim.h - what the interposition layer's files share (shim.c defines it).
 *
 * How lockswap reads a pthread_mutex_t (40 bytes on x86-64). The fields
 * glibc's static initialisers set, and the ones a debugger shows, keep
 * glibc's meaning; the algorithm gets the 16 bytes glibc uses for its
 * robust-list links, which lockswap never needs:
 *
 *	offset	glibc		lockswap
 *	 0	__lock		unused (0); under LOCKSWAP_ALGO_MAP the mutex's
 *				binding (map.c): 0 until it has one
 *	 4	__count		recursion count (RECURSIVE only)
 *	 8	__owner		owner's kernel tid (RECURSIVE, ERRORCHECK), 0 when unlocked
 *	12	__nusers	condvar waiters that released the mutex and have not
 *				taken it back (glibc counts them there too): destroy
 *				is EBUSY while it is not 0 (mutex.c)
 *	16	__kind		type in bits 0-1; a glibc bit (robust 16, PI 32, PP 64,
 *				process-shared 128) means "glibc's mutex"; -1 destroyed;
 *				under a map, LS_KIND_BOUND once the binding is set
 *	20	__spins...	the wrapper word (locks/wrap/wrap.h: the 4 bytes
 *				before the state belong to a wrapper such as
 *				LOCKSWAP_ALGO=mcs+gcr; 0 when idle)
 *	24	__list		algorithm state, 16 bytes (LS_INLINE_STATE), or, for an
 *				algorithm whose state is larger, a pointer to an
 *				out-of-line block (struct ls_ext) in type-stable memory
 *
 * Static initialisers and zeroed memory give kind 0..3 and an all-zero
 * state, which every algorithm takes as unlocked, so there is nothing to do
 * at first use: the mapping from mutex to lock is the address itself, O(1),
 * with no table and no global lock. An out-of-line block records the mutex
 * it belongs to (the address of its state word: pool.h, ls_ext_*); a mutex
 * copied by value (or memory reused without destroy) finds a block that is
 * not its own and attaches a fresh one.
 *
 * Mutexes glibc must own (process-shared: the lock must live in the shared
 * memory itself and work across processes, which lockswap's per-process
 * node pools cannot; robust: the kernel's robust-list protocol walks
 * glibc's __list links; priority inheritance and protection: the kernel's
 * PI futexes and priority ceilings need glibc's lock word) are passed to
 * glibc untouched, and so is every call on them.
 */
#ifndef LS_SHIM_H
#define LS_SHIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "lock.h"
#include "observe.h"
#include "pool.h"

#define LS_EXPORT __attribute__((visibility("default")))

#define KIND_TYPE_MASK 3
#define KIND_ROBUST 16
#define KIND_PI 32
#define KIND_GLIBC_BITS (KIND_ROBUST | KIND_PI | 64 | 128)
/* Under a map: the mutex has its binding (map.c). Far from glibc's bits, so
 * that a debugger still reads the type in bits 0-1. */
#define LS_KIND_BOUND (1 << 24)

struct ls_mutex {
	_Atomic uint32_t bind; /* map.c */
	uint32_t count;
	int32_t owner;
	uint32_t cond_users;
	int32_t kind;
	uint32_t wrap_word; /* LS_WRAP_WORD(alg.state): a wrapper's, never the shim's */
	union {
		unsigned char state[LS_INLINE_STATE];
		ls_ext_word_t ext; /* the block: struct ls_ext */
	} alg;
};
_Static_assert(sizeof(struct ls_mutex) == sizeof(pthread_mutex_t), "layout");
_Static_assert(offsetof(struct ls_mutex, kind) == offsetof(pthread_mutex_t, __data.__kind), "kind");
_Static_assert(offsetof(struct ls_mutex, count) == offsetof(pthread_mutex_t, __data.__count), "count");
_Static_assert(offsetof(struct ls_mutex, owner) == offsetof(pthread_mutex_t, __data.__owner), "owner");
_Static_assert(offsetof(struct ls_mutex, cond_users) == offsetof(pthread_mutex_t, __data.__nusers), "nusers");
_Static_assert(offsetof(struct ls_mutex, alg) % 8 == 0, "state alignment");
#define LS_WRAP_WORD_SIZE sizeof(uint32_t)
_Static_assert(offsetof(struct ls_mutex, alg) - offsetof(struct ls_mutex, wrap_word) == LS_WRAP_WORD_SIZE,
	       "the wrapper word is just before the inline state");
_Static_assert(offsetof(struct ls_mutex, alg) == LS_OBS_STATE_OFFSET, "observe.h");

/* Header of an out-of-line state block; the state follows at +64, and the
 * header's last 4 bytes are the state's wrapper word (zeroed with it). */
struct ls_ext {
	struct ls_ext_head h; /* owner: &mutex->alg.ext */
	char pad[LS_CACHELINE - sizeof(struct ls_ext_head) - LS_WRAP_WORD_SIZE];
	uint32_t wrap_word;
};
_Static_assert(sizeof(struct ls_ext) == LS_CACHELINE, "the state follows the header at +64");

/* glibc's functions, for the mutexes and condvars it keeps (struct ls_glibc:
 * an observer may wrap them, see observe.h), and glibc's
 * pthread_setcanceltype (shim_cancel.c, mutex_cond.c), which no observer sees. */
extern struct ls_glibc ls_real;
extern int (*ls_real_setcanceltype)(int, int *);

/*
 * The configuration the entry points read, in one cache line. Until
 * ls_init() has run, fast_kind is -1, which no mutex has, so every call
 * takes the slow path, which initialises first: mutexes locked before the
 * library's constructor (by other libraries' constructors) work.
 */
struct ls_global {
	int fast_kind; /* 0 once ready; stays -1 under passthrough; LS_KIND_SLOW (shim_cancel.c) */
	/* the fast path's operations, on the inline state bytes */
	bool ext;	  /* algorithm state lives out of line */
	bool passthrough; /* LOCKSWAP_ALGO=pthread */
	void (*lock)(void *);
	int (*trylock)(void *);
	void (*unlock)(void *);
	/* the slow path's timed attempt (ls_timedlock_inline); an observer
	 * may wrap these four (observe.h) */
	int (*timedlock)(void *, clockid_t, const struct timespec *);
	const struct ls_algo *algo;
	_Atomic int ready; /* 0 never, 1 in progress, 2 done */
	bool map;	   /* LOCKSWAP_ALGO_MAP or LOCKSWAP_CONFIG: an algorithm per mutex */
	/* What the slow paths call on the state bytes: without a map, the
	 * operations above; with one, map.c's, which give a mutex without a
	 * binding its binding first, then call the operations above. */
	void (*slow_lock)(void *);
	int (*slow_trylock)(void *);
	void (*slow_unlock)(void *);
} __attribute__((aligned(LS_CACHELINE)));

extern struct ls_global ls_g;

/* ---- readiness (shim.c) ----
 *
 * ls_init() runs the configuration once: from the library's constructor,
 * or earlier from the first pthread call of another library's constructor
 * (every entry point calls ls_ensure_init() on its slow path); it is
 * idempotent and thread-safe (a CAS on ls_g.ready; latecomers wait). The
 * configuration sits above every family, so it registers itself
 * (LS_REGISTER_CONFIG, config.c) and the families find it without naming
 * it: `configure` fills ls_g, ls_real and the families' configuration
 * before ready is published (on a bad value it prints one line and exits
 * with status 2), `start` runs after (it may use pthread locks and
 * dlopen). */
struct ls_config {
	void (*configure)(void);
	void (*start)(void);
};
#define LS_REGISTER_CONFIG(c)                                                                                \
	static const struct ls_config *const ls_config_ptr_##c                                               \
	    __attribute__((used, section("ls_config"), aligned(8))) = &(c)
void ls_init(void);

/* The calling thread's kernel tid, cached per thread (shim.c resets it in
 * a fork child): the owner of a RECURSIVE/ERRORCHECK mutex, the writer of
 * an rwlock. */
extern __thread int ls_tls_tid __attribute__((tls_model("initial-exec")));
int ls_self_tid_slow(void);
static inline int ls_self_tid(void)
{
	int t = ls_tls_tid;
	return LS_LIKELY(t) ? t : ls_self_tid_slow();
}

/* Once a thread has made itself asynchronously cancelable, fast_kind is
 * LS_KIND_SLOW, which no mutex has (shim_cancel.h). */
#define LS_KIND_SLOW (-2)

/* The clocks of the clock variants (pthread_mutex_clocklock,
 * pthread_rwlock_clock*lock): glibc accepts these two, EINVAL otherwise. */
static inline bool ls_valid_clock(clockid_t c)
{
	return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC;
}
/* A caller's timespec becomes a deadline through ls_deadline_ns (wait.h):
 * overflow-safe, a time past 64 bits of nanoseconds never comes. */
/* An asynchronously cancelable thread waits in slices this long, doubling
 * (mutex.c, rwlock.c). */
#define LS_SLICE_MIN_NS 1000000u
#define LS_SLICE_MAX_NS 16000000u

/* Out-of-line state (shim.c), for mutex.c's mutexes and map.c's (each of
 * its mutex's algorithm). The mutex of an inline state's bytes; a fresh block
 * initialised for algorithm a (NULL only if !wait and there is no memory
 * without the pool's reserve); a block for a attached to the mutex now (on
 * a lock path: never fails), or the one another thread attached first. */
static inline struct ls_mutex *ls_mutex_of(void *inline_state)
{
	return (struct ls_mutex *)((char *)inline_state - offsetof(struct ls_mutex, alg));
}
struct ls_ext *ls_mutex_ext_new(struct ls_mutex *m, const struct ls_algo *a, bool wait);
void *ls_mutex_ext_attach(struct ls_mutex *m, const struct ls_algo *a);

/* Using an out-of-line state (pool.h, "Idle locks"): a thread enters the
 * block before the algorithm sees it and leaves it once it is done with it
 * (a failed trylock or timedlock at once; a lock at its unlock), so that
 * the pool frees the block of an idle mutex, even while its word holds it,
 * only when no thread is using it. ls_mutex_ext_enter: the state of m's
 * block, entered; attached (for algorithm algo_of(m)) if need be. */
typedef const struct ls_algo *ls_algo_of_fn(struct ls_mutex *m); /* read only to attach */
void *ls_mutex_ext_enter_slow(struct ls_mutex *m, ls_algo_of_fn *algo_of);
static inline __attribute__((always_inline)) void *ls_mutex_ext_enter(struct ls_mutex *m,
								      ls_algo_of_fn *algo_of)
{
	struct ls_ext *e = (struct ls_ext *)ls_ext_enter(&m->alg.ext);
	if (LS_LIKELY(e))
		return e + 1;
	return ls_mutex_ext_enter_slow(m, algo_of);
}

/* The state of m's block, entered or not. */
static inline void ls_mutex_ext_leave(void *state)
{
	ls_hold_pop(&((struct ls_ext *)state - 1)->h);
}

/* unlock: the algorithm's unlock on m's state, then the hold goes. The
 * state the caller holds is the top of its holds (it entered it last):
 * else (an unlock out of order, by another thread than the locker's, one
 * too many, of a copy) the block is entered for the call, and the hold
 * taken at the lock, if any, goes too. */
void ls_mutex_ext_unlock_slow(struct ls_mutex *m, ls_algo_of_fn *algo_of, void (*unlock)(void *));
static inline __attribute__((always_inline)) void
ls_mutex_ext_unlock(struct ls_mutex *m, ls_algo_of_fn *algo_of, void (*unlock)(void *))
{
	struct ls_ext *e = (struct ls_ext *)ls_ext_load(&m->alg.ext);
	if (LS_LIKELY(e && ls_hold_is_top(&e->h))) {
		unlock(e + 1);
		ls_hold_pop(&e->h);
		return;
	}
	ls_mutex_ext_unlock_slow(m, algo_of, unlock);
}
static inline void ls_ensure_init(void)
{
	if (LS_UNLIKELY(atomic_load_explicit(&ls_g.ready, memory_order_acquire) != 2))
		ls_init();
}

/* True if glibc owns this mutex (or every mutex, under passthrough). */
static inline bool ls_mutex_is_glibc(const pthread_mutex_t *m)
{
	return ls_g.passthrough || (((const struct ls_mutex *)m)->kind & KIND_GLIBC_BITS);
}

#endif
