/*
 * lock.h - the interface between lockswap's interposition layer and its lock
 * algorithms.
 *
 * One algorithm = one file in locks/FAMILY/ that defines one `struct ls_algo` and
 * registers it with LS_REGISTER_ALGO(); everything else in the file is static.
 * Algorithms never see pthread_mutex_t: they get a pointer to their own state.
 *
 * State. An algorithm declares `state_size`. If it is at most LS_INLINE_STATE
 * (16 bytes) the state lives inside the pthread_mutex_t itself, at offset 0;
 * otherwise the shim keeps it out of line in type-stable memory (ls_ext_*),
 * attached lazily. Either way:
 *   - the state arrives zero-filled and ALL-ZERO MUST BE A VALID UNLOCKED
 *     STATE (static initialisers and zeroed mutexes are never init'ed);
 *   - any unlocked state, copied byte for byte elsewhere, must be a valid
 *     unlocked state there (programs copy unlocked mutexes by value), so an
 *     inline state never points into itself;
 *   - init() may be NULL; it runs on pthread_mutex_init and after an
 *     out-of-line state is attached;
 *   - the 4 bytes just before the state are a wrapper's (locks/wrap/wrap.h:
 *     LOCKSWAP_ALGO=mcs+gcr): no algorithm touches them; the shim zeroes
 *     them with the state.
 *
 * Ownership. unlock() may be called by a thread other than the one that
 * locked (glibc tolerates it for NORMAL mutexes and programs rely on it), so
 * anything unlock() needs (e.g. the holder's queue node) is kept in the
 * state, not in thread-local storage. A thread may hold any number of locks.
 *
 * Misuse that glibc tolerates. unlock() of an unlocked lock (never locked,
 * or unlocked twice) returns and leaves the lock unlocked and fully usable:
 * it must not follow a stale holder pointer, serve a ticket nobody took, or
 * free a node twice. Only a misuse that races with another thread's lock or
 * unlock of the same mutex may do harm (README, Known limits).
 *
 * After the release. Once unlock() has made the lock available to another
 * thread (LS_TEST_POINT(LS_POINT_RELEASED) right after that store, on every
 * path), that thread may lock, unlock, destroy and free or unmap the mutex
 * before this one returns (the reference-counted object pattern; glibc's
 * bug 13690). So from there unlock touches neither the state nor an
 * out-of-line block of it, except by a futex wake on its address (the
 * kernel tolerates a wake on memory that is gone or reused; every waiter
 * here tolerates a spurious wake-up). No algorithm relies on destroy()
 * for this: C++'s std::mutex never calls it, and C programs free a mutex
 * without it. Queue nodes are the releaser's or type-stable (pool.h)
 * and may be touched. trylock() of an unlocked lock never returns EBUSY for
 * want of a step an unlocker has still to take.
 *
 * Memory orders (DEVELOPERS.md, Conventions). Every atomic access names its
 * order. A relaxed one says why next to it (a hint a CAS then decides, a
 * field published by the release that follows, the holder field that only
 * an unlock ordered after this acquisition reads, a statistic...), except
 * the failure order of a compare-exchange, relaxed throughout: a failed CAS
 * only tells that the word has changed, and what the code does next is
 * ordered by its next access.
 *
 * Results. lock() never fails. trylock() returns 0 or EBUSY. timedlock()
 * returns 0 or ETIMEDOUT; the deadline is absolute, in ls_now_ns() time
 * (CLOCK_MONOTONIC nanoseconds); the shim has already validated the caller's
 * timespec and converted it. Algorithms without LS_CAP_TIMEOUT leave
 * timedlock NULL and the shim uses ls_timedlock_fallback() (see wait.h).
 */
#ifndef LS_LOCK_H
#define LS_LOCK_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define LS_INLINE_STATE 16 /* bytes available inside pthread_mutex_t */
#define LS_CACHELINE 64

/* Capabilities, shown by `lockswap --list` and used by the tests to choose
 * which end-to-end cases an algorithm must pass. */
enum {
	LS_CAP_FIFO = 1u << 0,	      /* waiters acquire in arrival order */
	LS_CAP_TIMEOUT = 1u << 1,     /* native abortable timed acquisition */
	LS_CAP_QNODE = 1u << 2,	      /* uses queue nodes from ls_node_alloc */
	LS_CAP_HIER = 1u << 3,	      /* hierarchical (cluster-aware) */
	LS_CAP_PASSTHROUGH = 1u << 4, /* not a lock: the shim defers to glibc */
};

/* A tunable of an algorithm, set from the environment by the shim (and
 * validated like every LOCKSWAP_ variable: a malformed or out-of-range value
 * is a configuration error). *value holds the default until then. */
struct ls_param {
	const char *env;  /* e.g. "LOCKSWAP_CAL_NODES" */
	const char *desc; /* one line, with the unit */
	uint64_t *value;
	uint64_t min, max;
};

struct ls_algo {
	const char *name; /* as given to LOCKSWAP_ALGO */
	const char *desc; /* one line, with the paper and section */
	unsigned caps;	  /* LS_CAP_* */
	unsigned rank;	  /* order in `lockswap --list` (ascending) */
	size_t state_size;
	const struct ls_param *params; /* array ended by {0}, or NULL */

	void (*init)(void *state);    /* may be NULL */
	void (*destroy)(void *state); /* may be NULL; lock is unlocked */
	void (*lock)(void *state);
	int (*trylock)(void *state);			     /* 0 / EBUSY */
	int (*timedlock)(void *state, uint64_t deadline_ns); /* 0 / ETIMEDOUT; may be NULL */
	void (*unlock)(void *state);
};

/* The algorithm a program gets when LOCKSWAP_ALGO is unset (issue 33: the
 * mutex chooses its regime by measuring; issue 21 kept ttas before it met
 * the targets). The shim uses it (interpose/config.c), `lockswap --help` and
 * `--list` show it, and lockswap(7) and the tests hold README to it. */
#define LS_DEFAULT_ALGO "auto"

/* Registration: the table is placed in the ls_algos section, so adding an
 * algorithm is adding a file. Tests that link liblocks.a statically must use
 * --whole-archive (the Makefile does). */
#define LS_REGISTER_ALGO(a)                                                                                  \
	static const struct ls_algo *const ls_algo_ptr_##a                                                   \
	    __attribute__((used, section("ls_algos"), aligned(8))) = &(a)

/* A LOCKSWAP_ variable that is not an algorithm's numeric tunable, owned by
 * a module other than the shim's core (the topology, the profiler, ...).
 * The module registers it with LS_REGISTER_OPTION(); the shim then knows the
 * name (an unknown LOCKSWAP_ variable is a configuration error) and, during
 * initialisation, before main:
 *   - calls parse(value, ...) if the variable is set: it validates and
 *     stores the value, and returns 0, or -1 with one line in err that names
 *     the problem and the valid choices (the shim prints it and exits 2);
 *   - then calls start(algo, verbose, ...) for every registered option, set
 *     or not, once the algorithm is chosen and ls_init() has finished (so
 *     start may take pthread mutexes, dlopen, allocate): same contract for
 *     errors. Either hook may be NULL. No option code runs on a lock path. */
struct ls_option {
	const char *env;  /* e.g. "LOCKSWAP_CLUSTER" */
	const char *desc; /* one line: values and default */
	int (*parse)(const char *value, char *err, size_t errlen);
	int (*start)(const struct ls_algo *algo, int verbose, char *err, size_t errlen);
};
#define LS_REGISTER_OPTION(o)                                                                                \
	static const struct ls_option *const ls_option_ptr_##o                                               \
	    __attribute__((used, section("ls_options"), aligned(8))) = &(o)

/* Registry (locks/common/registry.c). */
const struct ls_algo *ls_algo_find(const char *name); /* NULL if unknown */
size_t ls_algo_count(void);
const struct ls_algo *ls_algo_at(size_t i); /* sorted by rank, then name */
/* Writes "a, b, c" (all names) into buf; returns buf. */
char *ls_algo_names(char *buf, size_t len);
/* Parses an unsigned decimal value for p (suffixes none; "0x" hex allowed)
 * into *out. Returns 0, or -1 with a one-line reason in err. */
/* One line on stderr, newline added, by write(2): no locks, no buffering,
 * safe before main and inside the library. */
void ls_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define LS_SAY_MAX 4096 /* longest line ls_say writes, newline included */
int ls_param_parse(const struct ls_param *p, const char *text, uint64_t *out, char *err, size_t errlen);
/* Registered options (LS_REGISTER_OPTION), in link order. */
size_t ls_option_count(void);
const struct ls_option *ls_option_at(size_t i);
/* Writes "fifo,timeout,qnode" style capability list; returns buf. */
char *ls_caps_string(unsigned caps, char *buf, size_t len);

/* Fault injection for the stress tests: algorithms call LS_INJECT() between
 * the steps of their acquire, timeout and release paths. It compiles to
 * nothing except in the stress build (-DLS_FAULT_INJECT), where it inserts a
 * random delay or sched_yield (see tests/unit/inject.c). */
#ifdef LS_FAULT_INJECT
void ls_inject(void);
#define LS_INJECT() ls_inject()
#else
#define LS_INJECT() ((void)0)
#endif

/* Test points for deterministic tests of races: an algorithm marks with
 * LS_TEST_POINT(id) a step where a test must be able to stop a thread (to
 * hold a releaser inside a window until a waiter's deadline has passed).
 * It compiles to nothing except in the test-point build (-DLS_TEST_POINTS,
 * build/liblocks-tpoint.a, mk/trylock.mk), where it calls ls_test_point(),
 * which the test defines (tests/unit/trylock_handover.c,
 * tests/unit/after_release.c). */
enum ls_test_point {
	LS_POINT_ENQUEUED,	/* a waiter is in the tail, not yet linked to its predecessor */
	LS_POINT_LEAVING,	/* a waiter out of patience has told its predecessor it leaves */
	LS_POINT_RELEASING,	/* a releaser that cannot hand over at once has marked its node */
	LS_POINT_STAYING,	/* a waiter out of patience stays for its releasing predecessor */
	LS_POINT_RELEASED,	/* unlock has made the lock available: from here on it touches
				 * neither the state nor its block (see "After the release") */
	LS_POINT_WAITING,	/* a thread spins, yields or backs off (ls_cpu_relax, wait.h) */
	LS_POINT_PARKING,	/* a thread is about to sleep on a futex (wait.c) */
	LS_POINT_POOL_CLAIMING, /* the pool is about to claim blocks that seem gone, and has (pool.h) */
	LS_POINT_SCAN,		/* a release looks at one more waiter (cna: bounded per release) */
	LS_POINT_SPIN,		/* a waiter spins a step on a held lock (auto) */
	LS_POINT_QUEUED,	/* a queued waiter takes a step of its waiting policy (auto) */
	LS_POINT_NAP,		/* a woken head naps instead of sleeping until woken (auto, BATCH) */
	LS_POINT_REARRIVE,	/* a waiter flushed from the list by a change of regime arrives
				 * again (auto) */
	LS_POINT_WOKEN,		/* a woken head is about to compete for the lock (auto) */
	LS_POINT_VISIBLE,	/* a waiter has made itself visible to the lock (its node swapped
				 * into the tail, its ticket taken) and written nothing else yet:
				 * where fork() may leave a thread (tests/unit/fork_window.c) */
	LS_POINT_ATTACHING,	/* an attach has read the lock's word and not yet decided
				 * whether the block there is the lock's own (pool.h) */
	LS_POINT_HANDING,	/* a releaser found a successor behind it and has not yet
				 * handed over (clh-try) */
	LS_NPOINTS
};
#ifdef LS_TEST_POINTS
void ls_test_point(enum ls_test_point id);
#define LS_TEST_POINT(id) ls_test_point(id)
#else
#define LS_TEST_POINT(id) ((void)0)
#endif

#define LS_LIKELY(x) __builtin_expect(!!(x), 1)
#define LS_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
