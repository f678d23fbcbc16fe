/*
 * bind_mutex.c - the mutexes' side of the per-lock binding (bind.h): their
 * entries, the dispatch by mutex, and glibc's own mutex for the mutexes a
 * rule gives it. bind.h says what a binding is.
 *
 * Paths. A mutex that has its binding carries LS_KIND_BOUND in
 * __kind, and ls_g.fast_kind is LS_KIND_BOUND under a map, so a bound
 * NORMAL mutex takes the fast path unchanged (a load of __kind, a compare,
 * an indirect call through ls_g), and ls_g's operations are the dispatchers
 * here: two instructions, a load of the __lock word and a jump through the
 * entry (near_lock compiles to `mov eax,[rdi-24]; jmp [rax]`). So an
 * uncontended lock+unlock pair costs 4 instructions more than the same
 * algorithm as LOCKSWAP_ALGO. Without a map none of this runs: fast_kind
 * stays 0 and ls_g holds the algorithm's operations, as before.
 *	A mutex without its binding (static initialiser, zeroed memory) never
 * has LS_KIND_BOUND, so it takes the slow path, whose operations
 * (ls_g.slow_*) here bind it first (map_bind_*), then call ls_g's. The
 * slow paths that use the algorithm directly (timed waits, the slices of an
 * asynchronously cancelable thread) go through ls_g.algo, which under a map
 * is map_algo: operations that bind and dispatch by mutex. Condition
 * variables need nothing: a wait releases and re-takes its mutex through
 * the entry points, whatever the mutex's algorithm.
 *
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "bind.h"
#include "match.h"
#include "pool.h"
#include "shim.h"
#include "wait.h"

static const char *dflt_name; /* the algorithm of the mutexes no rule names */

/* The entry of a mutex that has one (relaxed: see "Binding races"). */
static inline const struct ls_bind *bind_of(struct ls_mutex *m)
{
	return ls_bind_at(&ls_bind_mutexes, atomic_load_explicit(&m->bind, memory_order_relaxed));
}

/* ---- the dispatchers (ls_g's operations under a map) ---- */

/* The entry of a bound mutex: with the table below 4 GiB (near) the word is
 * the entry's address; else its offset from bias. */
static inline __attribute__((always_inline)) const struct ls_bind *entry_of(struct ls_mutex *m, bool near)
{
	uint32_t w = atomic_load_explicit(&m->bind, memory_order_relaxed);
	return near ? (const struct ls_bind *)(uintptr_t)w : ls_bind_at(&ls_bind_mutexes, w);
}

/* For an algorithm whose state is out of line, as mutex.c's ext_*, but
 * with the mutex's algorithm, read only when a block must be attached,
 * so that the adapters below cost no more than ls_ext_lock and its kin. */
static const struct ls_algo *bound_algo(struct ls_mutex *m)
{
	return bind_of(m)->algo.m;
}

/* NAME_lock, _trylock, _unlock: the dispatchers (the entry's operation on
 * the inline bytes) and, for out-of-line states, the adapters (the
 * algorithm's own operation on the block). */
#define DISPATCH(name, near)                                                                                 \
	static void name##_lock(void *s)                                                                     \
	{                                                                                                    \
		entry_of(ls_mutex_of(s), near)->op.m.lock(s);                                                \
	}                                                                                                    \
	static int name##_trylock(void *s)                                                                   \
	{                                                                                                    \
		return entry_of(ls_mutex_of(s), near)->op.m.trylock(s);                                      \
	}                                                                                                    \
	static void name##_unlock(void *s)                                                                   \
	{                                                                                                    \
		entry_of(ls_mutex_of(s), near)->op.m.unlock(s);                                              \
	}                                                                                                    \
	static __attribute__((noinline)) void name##_ext_lock_slow(void *s)                                  \
	{                                                                                                    \
		struct ls_mutex *m = ls_mutex_of(s);                                                         \
		entry_of(m, near)->own.m.lock(ls_mutex_ext_enter(m, bound_algo));                            \
	}                                                                                                    \
	static void name##_ext_lock(void *s)                                                                 \
	{                                                                                                    \
		/* the slow path apart, so that this one saves no register */                                \
		struct ls_mutex *m = ls_mutex_of(s);                                                         \
		struct ls_ext *e = (struct ls_ext *)ls_ext_try_enter(&m->alg.ext);                           \
		if (LS_LIKELY(e))                                                                            \
			entry_of(m, near)->own.m.lock(e + 1);                                                \
		else                                                                                         \
			name##_ext_lock_slow(s);                                                             \
	}                                                                                                    \
	static int name##_ext_trylock(void *s)                                                               \
	{                                                                                                    \
		struct ls_mutex *m = ls_mutex_of(s);                                                         \
		void *st = ls_mutex_ext_enter(m, bound_algo);                                                \
		int r = entry_of(m, near)->own.m.trylock(st);                                                \
		if (r)                                                                                       \
			ls_mutex_ext_leave(st);                                                              \
		return r;                                                                                    \
	}                                                                                                    \
	static void name##_ext_unlock(void *s)                                                               \
	{                                                                                                    \
		struct ls_mutex *m = ls_mutex_of(s);                                                         \
		ls_mutex_ext_unlock(m, bound_algo, entry_of(m, near)->own.m.unlock);                         \
	}
DISPATCH(near, true)
DISPATCH(far, false)

/* ---- binding at first use ---- */

static __attribute__((noinline)) const struct ls_bind *bind_first_use(struct ls_mutex *m)
{
	bool won;
	const struct ls_bind *b = ls_bind_first_use32(&ls_bind_mutexes, &m->bind, &won);
	if (won) /* after the word (see "Binding races") */
		__atomic_fetch_or(&m->kind, LS_KIND_BOUND, __ATOMIC_RELEASE);
	return b;
}

static inline const struct ls_bind *bound_entry(struct ls_mutex *m)
{
	uint32_t w = atomic_load_explicit(&m->bind, memory_order_relaxed);
	if (LS_LIKELY(w))
		return ls_bind_at(&ls_bind_mutexes, w);
	return bind_first_use(m);
}

/* The state for an operation of b's algorithm, entered if out of line
 * (shim.h), and an attempt's result, the state left if it failed. */
static inline void *state_for(struct ls_mutex *m, const struct ls_bind *b)
{
	return b->ext ? ls_mutex_ext_enter(m, bound_algo) : m->alg.state;
}

static inline int state_result(const struct ls_bind *b, void *state, int r)
{
	if (r && b->ext)
		ls_mutex_ext_leave(state);
	return r;
}

/* ls_g.slow_*: bind, then ls_g's operation (which an observer may wrap). */
static void map_bind_lock(void *s)
{
	bound_entry(ls_mutex_of(s));
	ls_g.lock(s);
}

static int map_bind_trylock(void *s)
{
	bound_entry(ls_mutex_of(s));
	return ls_g.trylock(s);
}

static void map_bind_unlock(void *s)
{
	bound_entry(ls_mutex_of(s));
	ls_g.unlock(s);
}

/* ---- ls_g.algo under a map: binds, then dispatches by mutex ---- */

static void m_lock(void *s)
{
	struct ls_mutex *m = ls_mutex_of(s);
	const struct ls_bind *b = bound_entry(m);
	b->algo.m->lock(state_for(m, b));
}

static int m_trylock(void *s)
{
	struct ls_mutex *m = ls_mutex_of(s);
	const struct ls_bind *b = bound_entry(m);
	void *state = state_for(m, b);
	return state_result(b, state, b->algo.m->trylock(state));
}

static void m_unlock(void *s)
{
	struct ls_mutex *m = ls_mutex_of(s);
	const struct ls_bind *b = bound_entry(m);
	if (b->ext)
		ls_mutex_ext_unlock(m, bound_algo, b->algo.m->unlock);
	else
		b->algo.m->unlock(m->alg.state);
}

static int m_timedlock(void *s, uint64_t deadline)
{
	struct ls_mutex *m = ls_mutex_of(s);
	const struct ls_bind *b = bound_entry(m);
	const struct ls_algo *a = b->algo.m;
	void *state = state_for(m, b);
	return state_result(b, state,
			    a->timedlock ? a->timedlock(state, deadline)
					 : ls_timedlock_fallback(a, state, deadline));
}

static struct ls_algo map_algo = {
    .name = "map",
    .desc = "an algorithm per mutex (LOCKSWAP_ALGO_MAP)",
    .state_size = LS_INLINE_STATE,
    .lock = m_lock,
    .trylock = m_trylock,
    .timedlock = m_timedlock,
    .unlock = m_unlock,
};

/* ---- glibc's own mutex, for one mutex ----
 *
 * `pthread` in a rule: the mutex runs glibc's own code on a pthread_mutex_t
 * of glibc's kept out of line (40 bytes do not fit in the state bytes),
 * with glibc's functions as they were before any observer wrapped them (an
 * observer sees the mutex through ls_g's operations, like any other).
 * All-zero is glibc's unlocked NORMAL mutex, so no init is needed. */

static struct ls_glibc glibc;

static void glibc_lock(void *s)
{
	glibc.mutex_lock(s);
}

static int glibc_trylock(void *s)
{
	return glibc.mutex_trylock(s) ? EBUSY : 0;
}

static void glibc_unlock(void *s)
{
	glibc.mutex_unlock(s);
}

static int glibc_timedlock(void *s, uint64_t deadline)
{
	struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
	return glibc.mutex_clocklock(s, CLOCK_MONOTONIC, &ts) ? ETIMEDOUT : 0;
}

static void glibc_destroy(void *s)
{
	glibc.mutex_destroy(s);
}

static const struct ls_algo glibc_algo = {
    .name = "pthread",
    .desc = "glibc's own mutex, for the mutexes a rule gives it",
    .caps = LS_CAP_TIMEOUT,
    .state_size = sizeof(pthread_mutex_t),
    .destroy = glibc_destroy,
    .lock = glibc_lock,
    .trylock = glibc_trylock,
    .timedlock = glibc_timedlock,
    .unlock = glibc_unlock,
};

/* ---- what mutex.c asks ---- */

bool ls_map_target(struct ls_mutex *m, const struct ls_algo **a, void **state, bool *ext)
{
	uint32_t w = atomic_load_explicit(&m->bind, memory_order_acquire);
	if (!w)
		return false;
	const struct ls_bind *b = ls_bind_at(&ls_bind_mutexes, w);
	*a = b->algo.m;
	*state = state_for(m, b);
	*ext = b->ext;
	return true;
}

static const struct ls_bind *query(const pthread_mutex_t *mu)
{
	struct ls_mutex *m = (struct ls_mutex *)mu;
	if (!ls_g.map || ls_mutex_is_glibc(mu) || m->kind < 0)
		return NULL;
	return bound_entry(m);
}

const char *ls_map_algo_of(const pthread_mutex_t *mu)
{
	const struct ls_bind *b = query(mu);
	return b ? b->name : NULL;
}

const char *ls_map_rule_of(const pthread_mutex_t *mu)
{
	const struct ls_bind *b = query(mu);
	return b ? ls_bind_rule_text(b) : NULL;
}

const char *ls_map_default_name(void)
{
	return dflt_name;
}

void ls_map_published(void)
{
	ls_g.slow_lock = map_bind_lock;
	ls_g.slow_trylock = map_bind_trylock;
	ls_g.slow_unlock = map_bind_unlock;
}

/* ---- the mutexes' entries ---- */

static int fill(struct ls_bind *b, const struct ls_algo *a, int rule, const char *what, char *err, size_t len)
{
	if (a->caps & LS_CAP_PASSTHROUGH)
		a = &glibc_algo; /* the baseline, per mutex */
	if (a->state_size > LS_INLINE_STATE && sizeof(struct ls_ext) + a->state_size > LS_EXT_MAX) {
		snprintf(err, len, "%s: algorithm %s: state of %zu bytes exceeds the pool's blocks (%u)",
			 what, a->name, a->state_size, LS_EXT_MAX - (unsigned)sizeof(struct ls_ext));
		return -1;
	}
	b->algo.m = a;
	b->name = a->name;
	b->ext = a->state_size > LS_INLINE_STATE;
	b->own.m.lock = a->lock;
	b->own.m.trylock = a->trylock;
	b->own.m.unlock = a->unlock;
	bool near = ls_bind_mutexes.near;
	b->op.m.lock = !b->ext ? a->lock : near ? near_ext_lock : far_ext_lock;
	b->op.m.trylock = !b->ext ? a->trylock : near ? near_ext_trylock : far_ext_trylock;
	b->op.m.unlock = !b->ext ? a->unlock : near ? near_ext_unlock : far_ext_unlock;
	b->rule = rule;
	map_algo.caps |= a->caps;
	return 0;
}

int ls_bind_mutex_configure(const struct ls_algo *const *ma, unsigned n, uint64_t among, int any,
			    const struct ls_algo *dflt, const char *origin, const char *file, bool verbose,
			    char *err, size_t len)
{
	char msg[1200];
	glibc = ls_real; /* before an observer wraps it */
	struct ls_bindmap *f = &ls_bind_mutexes;
	if (ls_bind_table(f, n, among, any)) {
		snprintf(err, len, "%s: no memory for the rules' table", origin);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct ls_rule *r = ls_match_rule(i);
		snprintf(msg, sizeof msg, "%s: rule '%.100s'", r->where, r->text);
		/* a rule of rwlocks only: never chosen for a mutex */
		if (fill(&f->table[i], ma[i] ? ma[i] : dflt, ma[i] ? (int)i : LS_MATCH_NONE, msg, err, len))
			return -1;
	}
	snprintf(msg, sizeof msg, "%s: LOCKSWAP_ALGO (the algorithm of mutexes no rule names)", origin);
	if (fill(&f->table[n], dflt, LS_MATCH_NONE, msg, err, len))
		return -1;
	ls_bind_seal(f);
	dflt_name = (any == LS_MATCH_NONE ? dflt : f->table[any].algo.m)->name;
	ls_g.map = true;
	ls_g.passthrough = false; /* LOCKSWAP_ALGO=pthread: glibc's mutex for the mutexes no rule names */
	ls_g.algo = &map_algo;
	ls_g.ext = false;
	ls_g.lock = f->near ? near_lock : far_lock;
	ls_g.trylock = f->near ? near_trylock : far_trylock;
	ls_g.unlock = f->near ? near_unlock : far_unlock;
	if (verbose) {
		char caps[128];
		ls_say("lockswap: map: %u rule%s from %s%s%s; dispatch %s", n, n == 1 ? "" : "s", origin,
		       file ? " " : "", file ? file : "",
		       f->near ? "by address (table below 4 GiB)"
			       : "by offset (no room below 4 GiB: one instruction more per call)");
		for (unsigned i = 0; i < f->n; i++)
			if (i < n ? (among >> i & 1) : any == LS_MATCH_NONE)
				ls_bind_say(&f->table[i], "",
					    ls_caps_string(f->table[i].algo.m->caps, caps, sizeof caps));
	}
	return 0;
}
