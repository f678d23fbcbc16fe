/*
 * rwlock.h - the interface between lockswap's shim and its reader-writer
 * lock algorithms (pthread_rwlock_t), written as locks/lock.h is for mutexes.
 *
 * One algorithm = one file in locks/rwlock/ that defines one `struct
 * ls_rwalgo` and registers it with LS_REGISTER_RWALGO(); everything else in
 * the file is static. Algorithms never see pthread_rwlock_t: they get a
 * pointer to their own state. The shim is interpose/rwlock*.c; the glibc
 * semantics (kinds, EDEADLK, recursion, misuse) live there, once, not in the
 * algorithms.
 *
 * STATE. An algorithm declares `state_size`. If it is at most
 * LS_RW_INLINE_STATE (24 bytes) the state lives inside the pthread_rwlock_t,
 * at offset 0 (glibc's __readers ... __pad4, see interpose/shim_rwlock.h for the
 * layout); otherwise the shim keeps it out of line in type-stable memory
 * (ls_ext_*, at most LS_EXT_MAX bytes with the shim's header), attached
 * lazily at first use. Either way, as for mutexes:
 *   - the state arrives zero-filled and ALL-ZERO MUST BE A VALID UNLOCKED
 *     STATE (PTHREAD_RWLOCK_INITIALIZER, the _NP writer-preferring one and
 *     zeroed memory are never init'ed);
 *   - any unlocked state copied byte for byte elsewhere must be a valid
 *     unlocked state there (programs copy unlocked rwlocks by value), so an
 *     inline state never points into itself;
 *   - init() may be NULL; it runs on pthread_rwlock_init and after an
 *     out-of-line state is attached; destroy() may be NULL and runs on an
 *     unlocked lock only.
 *
 * WHO CALLS WHAT. The shim calls rdunlock() only from a thread that holds a
 * read lock it took with rdlock/tryrdlock/timedrdlock, and wrunlock() only
 * from the thread that holds the write lock (glibc, too, treats an unlock by
 * any other thread as a read unlock; the shim answers a misuse itself and
 * never passes it on). So an algorithm may keep per-thread data about its
 * holds. A thread may hold any number of rwlocks, for read on several at
 * once.
 *
 * READ TOKENS. Every read acquisition may leave a token (a void *, e.g. the
 * reader's queue node or its slot in a readers table) in *token; the shim
 * keeps it with that hold, per thread, and gives it back to rdunlock(). An
 * algorithm that needs none ignores the argument (the shim passes a valid
 * pointer and starts it at NULL). A write hold has no token: a writer is
 * alone, so what its release needs goes in the state (as mcs.c keeps its
 * holder's node).
 *
 * RECURSION AND KINDS (pthread_rwlockattr_setkind_np, glibc's __flags).
 *   - PTHREAD_RWLOCK_PREFER_READER_NP (the default; PREFER_WRITER_NP is the
 *     same in glibc): a thread may take a read lock it already holds, even
 *     while a writer waits. The SHIM grants such a recursive read itself (it
 *     counts the thread's holds, up to glibc's reader limit, then EAGAIN)
 *     and calls no algorithm, so algorithms never see a recursive read
 *     under this kind and none can deadlock on one.
 *   - PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: every read acquisition,
 *     recursive or not, goes to the algorithm with LS_RW_PREFER_WRITER in
 *     `how`, so a reader that holds the lock waits behind a writer as in
 *     glibc (a recursive reader deadlocks there; a timed one times out).
 *   LS_RWCAP_EXCLUSIVE marks an algorithm whose readers exclude each other
 *   (the mutex-serialised mode): there the shim grants recursive reads
 *   itself under both kinds, since nesting would deadlock without any
 *   writer.
 *
 * PREFERENCE: what `how` asks of an acquisition. The kind lives in the
 * pthread_rwlock_t (where static initialisers put it), not in the
 * algorithm's state, so the shim says it on every call; a lock is asked the
 * same way for as long as it is in use (its kind changes only when it is
 * initialised again, unlocked).
 *   0                    reader preference, glibc's default kind: a reader
 *                        that arrives while readers hold the lock gets in,
 *                        even with writers waiting (a program may hold a
 *                        read lock while it waits for another thread's read
 *                        of the same lock: glibc's tst-rwlock16). Every
 *                        algorithm gives it, in a reader-preferring variant
 *                        of its own or by another protocol on the same state
 *                        for such locks (its header says which), but those
 *                        whose readers exclude each other (EXCLUSIVE: one
 *                        reader at a time, by design).
 *   LS_RW_PREFER_WRITER  the _NP writer-preferring kind: a writer that waits
 *                        for the readers inside keeps every new reader out
 *                        (tryrdlock EBUSY) until it has had the lock or given
 *                        up (glibc's tst-rwlock15), and readers never starve
 *                        writers. Beyond that the algorithm's order holds: a
 *                        reader that waited for one writer may enter before
 *                        the writers queued after that one (FIFO mcs-rw,
 *                        phase-fair pf-t; README).
 *   LS_RW_OWN_POLICY     the algorithm's own policy (`policy` below), for a
 *                        default-kind lock under LOCKSWAP_RWPOLICY=algorithm
 *                        (the shim then asks _NP locks with
 *                        LS_RW_PREFER_WRITER alone, which every own policy
 *                        meets). It must never starve a writer unless it is
 *                        the kind's (central). Never with LS_RW_PREFER_WRITER.
 *   LS_RWCAP_KIND marks an algorithm whose own policy is the kind's, as
 *   glibc (so LS_RW_OWN_POLICY changes nothing there).
 *
 * RESULTS.
 *   rdlock      0, or EAGAIN when the algorithm cannot count one more
 *               reader (its limit is at least LS_RW_MIN_READERS holds);
 *   tryrdlock   0, EBUSY, EAGAIN;
 *   timedrdlock 0, ETIMEDOUT, EAGAIN;
 *   wrlock      never fails; trywrlock 0 or EBUSY; timedwrlock 0 or
 *               ETIMEDOUT.
 *   Deadlines are absolute, in ls_now_ns() time (CLOCK_MONOTONIC ns; a
 *   deadline past 64 bits is LS_DEADLINE_NEVER, wait.h); the shim has
 *   validated the caller's timespec and clock, tried the matching try
 *   operation once, and converted the deadline (ls_deadline_ns).
 *   A timed or try attempt that fails leaves nothing behind: no reader or
 *   writer counted, no announcement that keeps others waiting, no node.
 *
 * TIMED WRITERS. Every lock algorithm has a native timedwrlock: a timed
 * writer waits as an untimed writer does under the same `how`, in the
 * algorithm's own queue or phase, and keeps new readers out as an untimed
 * one would (under LS_RW_PREFER_WRITER: from when it waits for the readers
 * inside); when its deadline passes it leaves, and the readers it kept out
 * go on at once (glibc's tst-rwlock15). A writer that cannot hand back what
 * it took to wait (a ticket served in turn) waits, until it can take one
 * that is served at once, the way a reader waits for a write phase: its
 * header says so. Timed reads may be native (LS_RWCAP_TIMEOUT) or left to
 * ls_rw_timed_fallback() (timedrdlock NULL): tryrdlock polled under the
 * waiting policy until the deadline (a timed reader keeps nobody out, so
 * polling changes nothing for the others; it can be overtaken).
 *
 * WAITING. Only through locks/common/wait.h (ls_spin_step,
 * ls_wait_while_eq[_until], the LS_PARKED word protocol, futexes), so that
 * LOCKSWAP_WAIT (spin, yield, park) applies; every algorithm must work under
 * each policy with more threads than cores. LS_INJECT() goes between the
 * steps of acquire, timeout and release paths (the validator's fault
 * injection). After the store that releases a lock to others, an unlock
 * touches neither the state nor anything the next holder may free.
 *
 * WRAPPERS. A wrapper (BRAVO) is an ls_rwalgo with LS_RWCAP_WRAPPER and a
 * bind() hook; it is not selectable alone. The name NAME+WRAPPER (lockswap's
 * convention for wrappers, as mcs+gcr for mutexes) composes it with the base
 * algorithm NAME: ls_rwalgo_find("pf-t+bravo") calls bravo's bind(pf-t's
 * table), which keeps it in a static of the wrapper's file and may refuse
 * (one line in err: a passthrough, another wrapper), and returns a composed
 * table built by the registry:
 *   name        "NAME+WRAPPER";
 *   state       the wrapper's state_size bytes, rounded up to 8, then the
 *               inner algorithm's state: the wrapper reaches the inner
 *               state at ls_rw_inner_state(state, its own state_size) and
 *               calls the inner table's operations on it (the inner keeps
 *               its own contract, including its tokens: a wrapper that
 *               takes the inner read lock passes its token through);
 *   caps        the wrapper's (WRAPPER kept), plus the inner's caps that
 *               the wrapper lists in keep_caps;
 *   policy      the inner's, then the wrapper's own words about it;
 *   params      the wrapper's (the inner's are read as well, as every
 *               algorithm's are);
 *   operations  the wrapper's (which call the inner's timedwrlock, and its
 *               timedrdlock or the fallback).
 * A process composes a wrapper with one inner algorithm (bind is called
 * again only with the same inner); asking for a second, different
 * composition of the same wrapper fails with one line (the shim composes
 * once, at start; a test composes once per run).
 *
 * THE MUTEX-SERIALISED MODE. An algorithm may have a start() hook, called
 * once when the configuration is read, before any lock is used, with the
 * mutex algorithm LOCKSWAP_ALGO chose: `mutex` (locks/rwlock/mutex.c) takes
 * every rwlock as that mutex lock and sets its own state_size from it then.
 * state_size is read only after start() (ls_rwalgo_start below).
 *
 * FORK. In the child of fork() only the forking thread is left; it held
 * locks but waited for none. An algorithm whose waiters leave nothing that
 * names them (a ticket, a count, a claim) handles it in its own slow paths
 * (fork.h; central.c), or has fork_rdheld: the shim calls it in the child,
 * while the forking thread is still its only thread (lockswap's
 * pthread_atfork child handler, or the first slow path of a library's
 * handler that runs before it: fork.h), once for each read hold the forking
 * thread had at fork (nth = 0 .. holds - 1 among its `holds` holds of that
 * lock), with the hold's token, which it may replace. Such a lock was
 * read-held at fork, so no writer held it: every writer that had a place
 * in it then (a ticket, a node, a claim) and every reader that waited was
 * a thread that is gone, and fork_rdheld passes them over, leaving the
 * readers that held it counted (a lock another thread held at fork stays
 * held, as under glibc; an algorithm that cannot tell such a reader from a
 * waiting one says so in its header). A wrapper whose reader held the
 * lock without the inner lock (a BRAVO fast read) calls the inner's once
 * with holds = 0 (nth 0, a token of NULL): no hold of the forking thread is
 * counted there, and every writer in the inner lock, waiting or holding it
 * (the wrapper's writer holds it while it waits for the wrapper's
 * readers), was a thread that is gone: all are passed over, and the
 * readers of other threads that hold it stay. A write hold
 * of the forking thread needs nothing: its unlock in the child is not the
 * writer's (its thread has a new id), so the lock stays held, as glibc's
 * does.
 *
 * REGISTRATION in the ls_rwalgos section (a sibling of ls_algos, so neither
 * family sees the other's tables): adding an algorithm is adding a file;
 * `lockswap --list` shows it, `lockswap --names rwlock` prints it, and every
 * end-to-end rwlock test whose capabilities it has runs it (tests/helpers.bash,
 * rwalgos). Tunables are ls_params, validated with every LOCKSWAP_ variable.
 */
#ifndef LS_RWLOCK_H
#define LS_RWLOCK_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"

#define LS_RW_INLINE_STATE 24 /* bytes available inside pthread_rwlock_t, offset 0 */
/* Every algorithm counts at least this many read holds at once (threads,
 * plus nested holds under PREFER_WRITER_NONRECURSIVE) before rdlock says
 * EAGAIN. The shim's own limit for a thread's recursive holds of one rwlock
 * under the default kind is glibc's, LS_RW_MAX_RECURSION. */
#define LS_RW_MIN_READERS (1u << 22)
#define LS_RW_MAX_RECURSION ((1u << 28) - 1) /* glibc: 2^31 >> PTHREAD_RWLOCK_READER_SHIFT (3), minus 1 */

/* `how`, given to every acquisition (PREFERENCE above); 0 is reader
 * preference */
enum {
	LS_RW_PREFER_WRITER = 1u << 0, /* the lock's kind is PREFER_WRITER_NONRECURSIVE_NP */
	LS_RW_OWN_POLICY = 1u << 1,    /* the algorithm's own policy (LOCKSWAP_RWPOLICY=algorithm) */
};

/* Does `how` ask for glibc's reader preference? */
static inline bool ls_rw_reader_pref(unsigned how)
{
	return !(how & (LS_RW_PREFER_WRITER | LS_RW_OWN_POLICY));
}

/* Capabilities, shown by `lockswap --list` and used by the tests to choose
 * which end-to-end cases an algorithm must pass (`lockswap --names rwlock
 * --cap NAME`). The first five mean what lock.h's do. */
enum {
	LS_RWCAP_FIFO = 1u << 0,	/* served in arrival order (a run of readers together) */
	LS_RWCAP_TIMEOUT = 1u << 1,	/* native timed reads too (timed writes: every lock) */
	LS_RWCAP_QNODE = 1u << 2,	/* uses queue nodes from ls_node_alloc */
	LS_RWCAP_HIER = 1u << 3,	/* cluster-aware (locks/hier/topo.h) */
	LS_RWCAP_PASSTHROUGH = 1u << 4, /* not a lock: the shim defers to glibc */
	LS_RWCAP_KIND = 1u << 5,	/* its own policy is the kind's, as glibc */
	LS_RWCAP_EXCLUSIVE = 1u << 6,	/* readers exclude each other (mutex-serialised) */
	LS_RWCAP_WRAPPER = 1u << 7,	/* a wrapper, or a NAME+WRAPPER composition */
};

struct ls_rwalgo {
	const char *name; /* as given to LOCKSWAP_RWALGO */
	const char *desc; /* one line, with the paper and section */
	/* Its own policy, a few words (lockswap --list; LS_RW_OWN_POLICY);
	 * NULL for a passthrough. */
	const char *policy;
	unsigned caps; /* LS_RWCAP_* */
	unsigned rank; /* order in `lockswap --list` (ascending) */
	size_t state_size;
	const struct ls_param *params; /* array ended by {0}, or NULL */

	void (*init)(void *state);				   /* may be NULL */
	void (*destroy)(void *state);				   /* may be NULL; the lock is unlocked */
	int (*rdlock)(void *state, unsigned how, void **token);	   /* 0 / EAGAIN */
	int (*tryrdlock)(void *state, unsigned how, void **token); /* 0 / EBUSY / EAGAIN */
	/* may be NULL (the fallback) */
	int (*timedrdlock)(void *state, unsigned how, uint64_t deadline, void **token);
	void (*rdunlock)(void *state, void *token);
	void (*wrlock)(void *state, unsigned how);
	int (*trywrlock)(void *state, unsigned how);			  /* 0 / EBUSY */
	int (*timedwrlock)(void *state, unsigned how, uint64_t deadline); /* 0 / ETIMEDOUT */
	void (*wrunlock)(void *state);

	/* May be NULL. Called once before any lock is used, with the mutex
	 * algorithm of LOCKSWAP_ALGO (or NULL when it is `pthread`); returns 0,
	 * or -1 with one line in err (a configuration error). */
	int (*start)(const struct ls_algo *mutex, char *err, size_t errlen);
	/* Wrappers only (LS_RWCAP_WRAPPER): see WRAPPERS above. */
	int (*bind)(const struct ls_rwalgo *inner, char *err, size_t errlen);
	unsigned keep_caps; /* wrappers: the inner's caps a composition keeps */
	/* May be NULL: see FORK above. */
	void (*fork_rdheld)(void *state, void **token, unsigned nth, unsigned holds);
	/* May be NULL. Called after start when the algorithm is started as
	 * a composition's inner lock (NAME+WRAPPER), before any lock is used:
	 * a wrapper may call fork_rdheld with holds 0 (FORK above), which may
	 * need what the bare algorithm's own paths can skip (the
	 * mutex-serialised mode's write mark, locks/rwlock/mutex.c). */
	void (*wrapped)(void);
};

#define LS_REGISTER_RWALGO(a)                                                                                \
	static const struct ls_rwalgo *const ls_rwalgo_ptr_##a                                               \
	    __attribute__((used, section("ls_rwalgos"), aligned(8))) = &(a)

/* A wrapper's view of its inner algorithm's state. */
static inline void *ls_rw_inner_state(void *state, size_t wrapper_size)
{
	return (char *)state + ((wrapper_size + 7) & ~(size_t)7);
}

/* Registry (locks/common/rwregistry.c). Base algorithms and wrappers,
 * sorted by rank, then name; compositions are not in this list. */
size_t ls_rwalgo_count(void);
const struct ls_rwalgo *ls_rwalgo_at(size_t i);
/* A base algorithm, or a NAME+WRAPPER composition (built and bound on first
 * use); NULL if unknown, a bare wrapper, or refused (then, with
 * ls_rwalgo_lookup, one line in err naming the problem and the choices). */
const struct ls_rwalgo *ls_rwalgo_find(const char *name);
const struct ls_rwalgo *ls_rwalgo_lookup(const char *name, char *err, size_t errlen);
/* Runs a's start hook (and its inner's, for a composition) with the mutex
 * algorithm; a composition's state_size is final afterwards. 0, or -1 with
 * one line in err. */
int ls_rwalgo_start(const struct ls_rwalgo *a, const struct ls_algo *mutex, char *err, size_t errlen);
/* Writes "pthread, mutex, ..., NAME+WRAPPER" (every selectable name: each
 * base algorithm, then "+WRAPPER" once per wrapper) into buf; returns buf. */
char *ls_rwalgo_names(char *buf, size_t len);
/* Every selectable name, one at a time, i = 0, 1, ...: each base algorithm,
 * then each wrapper composed with each base algorithm it can wrap (a
 * lock, not a passthrough, not a wrapper). NULL past the end. Writes into
 * buf, which it returns. */
const char *ls_rwalgo_selectable(size_t i, char *buf, size_t len);
/* "fifo,timeout,kind" style list of LS_RWCAP_* names; returns buf. */
char *ls_rwcaps_string(unsigned caps, char *buf, size_t len);
/* The capability bit of a name ("fifo", ...), or 0 if unknown. */
unsigned ls_rwcap_bit(const char *name);
/* Every capability name, comma-separated (for error messages). */
const char *ls_rwcap_names(void);

/* The timed fallback of reads for algorithms without native timed reads
 * (and of writes for a table without timedwrlock: none in locks/rwlock/):
 * the try operation (tryrdlock if write is false, else trywrlock), retried
 * under the
 * waiting policy (sleeping in doubling naps from 1 us to 1 ms under park)
 * until it succeeds or the deadline passes. 0, ETIMEDOUT, or tryrdlock's
 * EAGAIN. */
int ls_rw_timed_fallback(const struct ls_rwalgo *a, void *state, unsigned how, bool write, uint64_t deadline,
			 void **token);

#endif
