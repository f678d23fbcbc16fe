/*
 * bind.c - an algorithm per lock (LOCKSWAP_ALGO_MAP, LOCKSWAP_CONFIG): the
 * rules' families, mutexes and rwlocks (the rwlocks' part: below): each
 * lockswap mutex is bound once, when it is initialised or first used, to
 * the rule its creation stack matches (match/match.h), and runs that rule's
 * algorithm until it is destroyed.
 *
 * Bindings. One entry per rule, plus one for the mutexes no rule names (the
 * default algorithm, LOCKSWAP_ALGO), in a read-only table mapped below
 * 4 GiB (MAP_32BIT): a mutex's __lock word, unused by lockswap otherwise,
 * holds its entry's address, 0 until it has one. An entry holds the
 * operations the dispatch calls (the algorithm's own, or for an algorithm
 * whose state is out of line the adapters below, which find the block) and
 * the algorithm itself.
 *
 * Paths. A mutex that has its binding carries LS_KIND_BOUND in __kind, and
 * ls_g.fast_kind is LS_KIND_BOUND under a map, so a bound NORMAL mutex
 * takes the fast path unchanged (a load of __kind, a compare, an indirect
 * call through ls_g), and ls_g's operations are the dispatchers here: two
 * instructions, a load of the __lock word and a jump through the entry
 * (map_lock compiles to `mov eax,[rdi-24]; jmp [rax]`). So an uncontended
 * lock+unlock pair costs 4 instructions more than the same algorithm as
 * LOCKSWAP_ALGO. Without a map none of this runs: fast_kind stays 0 and
 * ls_g holds the algorithm's operations, as before.
 *	A mutex without its binding (static initialiser, zeroed memory) never
 * has LS_KIND_BOUND, so it takes the slow path, whose operations
 * (ls_g.slow_*) here bind it first (map_bind_*), then call ls_g's. The
 * slow paths that use the algorithm directly (timed waits, the slices of an
 * asynchronously cancelable thread) go through ls_g.algo, which under a map
 * is map_algo: operations that bind and dispatch by mutex.
 *	If nothing can be mapped below 4 GiB, the table goes anywhere and the
 * __lock word holds the entry's offset in it: the dispatch then adds the
 * table's address, one instruction more per call (said under
 * LOCKSWAP_VERBOSE).
 *
 * Binding races. Two threads using a static mutex for the first time each
 * match it (one stack walk each) and CAS their entry into the __lock word
 * from 0: one wins, the other adopts the winner's. The winner then sets
 * LS_KIND_BOUND (after the word: a thread that sees the bit sees the word,
 * as x86-64 keeps loads in order; the shim exists for x86-64 only, its
 * symbol versions say so). A mutex copied by value copies its binding.
 *
 * Condition variables need nothing: a wait releases and re-takes its mutex
 * through the entry points, whatever the mutex's algorithm.
 *
 * Families. A rule's algorithm decides which locks it applies to (classify
 * below): a mutex algorithm's rule to mutexes, an rwlock algorithm's (the
 * names of `lockswap --names rwlock`) to rwlocks, `pthread`, a name of both,
 * to both; each family matches only its rules (match.h's mask) and has its
 * own '*' rule. The rwlocks' table, binding and dispatch are below
 * (ls_rwmap_configure). Spinlocks take no rules: a pthread_spinlock_t is 4
 * bytes, all of them the lock word, with no room for a binding, so a rule
 * naming a spinlock-only algorithm is a configuration error. A map without
 * mutex rules leaves the mutexes as LOCKSWAP_ALGO says (ls_g.map stays
 * false), one without rwlock rules the rwlocks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "match.h"
#include "pool.h"
#include "bind.h"
#include "shim_rwlock.h"
#include "spin/spinlock.h"
#include "wrap/wrap.h"
#include "shim.h"
#include "wait.h"

struct ls_bind {
	/* What the dispatchers call, on the inline state bytes. */
	void (*lock)(void *);
	int (*trylock)(void *);
	void (*unlock)(void *);
	/* The algorithm, and its own operations (the adapters call these on
	 * the out-of-line state). */
	const struct ls_algo *algo;
	void (*alock)(void *);
	int (*atrylock)(void *);
	void (*aunlock)(void *);
	bool ext;
	int rule; /* match.h's index, or LS_MATCH_NONE: the default */
} __attribute__((aligned(LS_CACHELINE)));

static struct ls_bind *table; /* nbind entries, read-only once configured */
static unsigned nbind;	      /* rules + 1 (the last: no rule) */
static uintptr_t bias;	      /* 0 if table is below 4 GiB; else the table's address - 64 */
static const char *dflt_name;
static _Atomic uint64_t *bound; /* mutexes bound to each entry */
static bool verbose;
static bool any_map;		      /* rules were read (of mutexes, rwlocks or both) */
static uint64_t mutex_rules;	      /* the rules of mutexes (match.h's mask) */
static int mutex_any = LS_MATCH_NONE; /* their '*' rule */

static inline uint32_t word_of(const struct ls_bind *b)
{
	return (uint32_t)((uintptr_t)b - bias);
}

static inline const struct ls_bind *entry_at(uint32_t w)
{
	return (const struct ls_bind *)(bias + w);
}

/* The entry of a mutex that has one (relaxed: see "Binding races"). */
static inline const struct ls_bind *bind_of(struct ls_mutex *m)
{
	return entry_at(atomic_load_explicit(&m->bind, memory_order_relaxed));
}

/* A word read from memory that may hold anything (pthread_mutex_init): the
 * entry it names, or NULL. */
static const struct ls_bind *entry_checked(uint32_t w)
{
	uintptr_t a = bias + w;
	if (!w || a < (uintptr_t)table || a >= (uintptr_t)(table + nbind) ||
	    (a - (uintptr_t)table) % sizeof *table)
		return NULL;
	return (const struct ls_bind *)a;
}

static const struct ls_bind *entry_for(int rule)
{
	return &table[rule == LS_MATCH_NONE ? nbind - 1 : (unsigned)rule];
}

/* ---- the dispatchers (ls_g's operations under a map) ---- */

/* The entry of a bound mutex: with the table below 4 GiB (near) the word is
 * the entry's address; else its offset from bias. */
static inline __attribute__((always_inline)) const struct ls_bind *entry_of(struct ls_mutex *m, bool near)
{
	uint32_t w = atomic_load_explicit(&m->bind, memory_order_relaxed);
	return near ? (const struct ls_bind *)(uintptr_t)w : entry_at(w);
}

/* For an algorithm whose state is out of line, as mutex.c's ext_state, but
 * with the mutex's algorithm, read only when a block must be attached,
 * so that the adapters below cost no more than ls_ext_lock and its kin. */
static __attribute__((noinline)) void *ext_attach(struct ls_mutex *m)
{
	return ls_mutex_ext_attach(m, bind_of(m)->algo);
}

static inline __attribute__((always_inline)) void *ext_state(struct ls_mutex *m)
{
	struct ls_ext *e = (struct ls_ext *)ls_ext_load(&m->alg.ext);
	if (LS_LIKELY(e))
		return e + 1;
	return ext_attach(m);
}

/* NAME_lock, _trylock, _unlock: the dispatchers (the entry's operation on
 * the inline bytes) and, for out-of-line states, the adapters (the
 * algorithm's own operation on the block). */
#define DISPATCH(name, near)                                                                                 \
	static void name##_lock(void *s)                                                                     \
	{                                                                                                    \
		entry_of(ls_mutex_of(s), near)->lock(s);                                                     \
	}                                                                                                    \
	static int name##_trylock(void *s)                                                                   \
	{                                                                                                    \
		return entry_of(ls_mutex_of(s), near)->trylock(s);                                           \
	}                                                                                                    \
	static void name##_unlock(void *s)                                                                   \
	{                                                                                                    \
		entry_of(ls_mutex_of(s), near)->unlock(s);                                                   \
	}                                                                                                    \
	static void name##_ext_lock(void *s)                                                                 \
	{                                                                                                    \
		struct ls_mutex *m = ls_mutex_of(s);                                                         \
		entry_of(m, near)->alock(ext_state(m));                                                      \
	}                                                                                                    \
	static int name##_ext_trylock(void *s)                                                               \
	{                                                                                                    \
		struct ls_mutex *m = ls_mutex_of(s);                                                         \
		return entry_of(m, near)->atrylock(ext_state(m));                                            \
	}                                                                                                    \
	static void name##_ext_unlock(void *s)                                                               \
	{                                                                                                    \
		struct ls_mutex *m = ls_mutex_of(s);                                                         \
		entry_of(m, near)->aunlock(ext_state(m));                                                    \
	}
DISPATCH(near, true)
DISPATCH(far, false)

/* ---- binding ---- */

static void count(const struct ls_bind *b)
{
	atomic_fetch_add_explicit(&bound[b - table], 1, memory_order_relaxed);
}

/* First use of a mutex without a binding: match, then one CAS from 0. */
static __attribute__((noinline)) const struct ls_bind *bind_first_use(struct ls_mutex *m)
{
	const struct ls_bind *b = entry_for(ls_match_caller(mutex_rules, mutex_any));
	uint32_t seen = 0;
	if (atomic_compare_exchange_strong_explicit(&m->bind, &seen, word_of(b), memory_order_release,
						    memory_order_relaxed)) {
		count(b);
		/* after the word (see "Binding races") */
		__atomic_fetch_or(&m->kind, LS_KIND_BOUND, __ATOMIC_RELEASE);
		return b;
	}
	return entry_at(seen); /* another thread bound it first: its choice stands */
}

static inline const struct ls_bind *bound_entry(struct ls_mutex *m)
{
	uint32_t w = atomic_load_explicit(&m->bind, memory_order_relaxed);
	if (LS_LIKELY(w))
		return entry_at(w);
	return bind_first_use(m);
}

static inline void *state_for(struct ls_mutex *m, const struct ls_bind *b)
{
	return b->ext ? ext_state(m) : m->alg.state;
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
	b->algo->lock(state_for(m, b));
}

static int m_trylock(void *s)
{
	struct ls_mutex *m = ls_mutex_of(s);
	const struct ls_bind *b = bound_entry(m);
	return b->algo->trylock(state_for(m, b));
}

static void m_unlock(void *s)
{
	struct ls_mutex *m = ls_mutex_of(s);
	const struct ls_bind *b = bound_entry(m);
	b->algo->unlock(state_for(m, b));
}

static int m_timedlock(void *s, uint64_t deadline)
{
	struct ls_mutex *m = ls_mutex_of(s);
	const struct ls_bind *b = bound_entry(m);
	const struct ls_algo *a = b->algo;
	void *state = state_for(m, b);
	return a->timedlock ? a->timedlock(state, deadline) : ls_timedlock_fallback(a, state, deadline);
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

/* ---- init, and what destroy destroys ---- */

int ls_map_init(struct ls_mutex *m, int type)
{
	/* Memory that held one of our mutexes (destroyed, or reused without
	 * destroy): its block goes back to the pool, or to the new mutex if
	 * the algorithm is the same. A word that names no entry is garbage
	 * and what it would point to is never read. */
	const struct ls_bind *old = entry_checked(atomic_load_explicit(&m->bind, memory_order_relaxed));
	struct ls_ext *olde = NULL;
	if (old && old->ext) {
		struct ls_ext_head *e = atomic_load_explicit(&m->alg.ext, memory_order_relaxed);
		if (ls_ext_adoptable(&m->alg.ext, e, old->algo))
			olde = (struct ls_ext *)e;
	}
	memset(m, 0, sizeof *m);
	m->kind = type;
	const struct ls_bind *b = entry_for(ls_match_caller(mutex_rules, mutex_any));
	const struct ls_algo *a = b->algo;
	if (olde && a != old->algo) {
		ls_ext_free(olde, sizeof(struct ls_ext) + old->algo->state_size);
		olde = NULL;
	}
	int r = 0;
	if (b->ext) {
		/* as without a map (mutex.c): failing is allowed here, and a
		 * mutex without its block attaches one at its first lock */
		struct ls_ext *e = olde;
		if (e) {
			/* the state and the wrapper word before it (shim.h) */
			memset((char *)(e + 1) - LS_WRAP_WORD_SIZE, 0, LS_WRAP_WORD_SIZE + a->state_size);
			if (a->init)
				a->init(e + 1);
		} else {
			e = ls_mutex_ext_new(m, a, false);
		}
		if (e)
			atomic_store_explicit(&m->alg.ext, &e->h, memory_order_release);
		else
			r = ENOMEM;
	} else if (a->init) {
		a->init(m->alg.state);
	}
	atomic_store_explicit(&m->bind, word_of(b), memory_order_release);
	m->kind = type | LS_KIND_BOUND;
	count(b);
	if (r)
		return r;
	if (LS_UNLIKELY(ls_events.init))
		ls_events.init(LS_OBJ_MUTEX, m);
	return 0;
}

bool ls_map_target(struct ls_mutex *m, const struct ls_algo **a, void **state, bool *ext)
{
	uint32_t w = atomic_load_explicit(&m->bind, memory_order_acquire);
	if (!w)
		return false;
	const struct ls_bind *b = entry_at(w);
	*a = b->algo;
	*state = state_for(m, b);
	*ext = b->ext;
	return true;
}

/* ---- the observer's queries ---- */

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
	return b ? b->algo->name : NULL;
}

const char *ls_map_rule_of(const pthread_mutex_t *mu)
{
	const struct ls_bind *b = query(mu);
	if (!b)
		return NULL;
	return b->rule == LS_MATCH_NONE ? "(default)" : ls_match_rule((unsigned)b->rule)->text;
}

/* ---- configuration ---- */

/* The table: below 4 GiB if the kernel has room there (MAP_32BIT asks for
 * the first 2 GiB), else anywhere. */
static void *map_table(size_t size, bool *near)
{
	void *p = MAP_FAILED;
#ifdef MAP_32BIT
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
#endif
	*near = p != MAP_FAILED && (uintptr_t)p + size <= UINT32_MAX;
	if (p != MAP_FAILED && !*near)
		munmap(p, size);
	if (!*near)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int fill(struct ls_bind *b, const struct ls_algo *a, int rule, const char *what, char *err, size_t len)
{
	if (a->caps & LS_CAP_PASSTHROUGH)
		a = &glibc_algo; /* the baseline, per mutex */
	if (a->state_size > LS_INLINE_STATE && sizeof(struct ls_ext) + a->state_size > LS_EXT_MAX) {
		snprintf(err, len, "%s: algorithm %s: state of %zu bytes exceeds the pool's blocks (%u)",
			 what, a->name, a->state_size, LS_EXT_MAX - (unsigned)sizeof(struct ls_ext));
		return -1;
	}
	b->algo = a;
	b->ext = a->state_size > LS_INLINE_STATE;
	b->alock = a->lock;
	b->atrylock = a->trylock;
	b->aunlock = a->unlock;
	bool near = bias == 0;
	b->lock = !b->ext ? a->lock : near ? near_ext_lock : far_ext_lock;
	b->trylock = !b->ext ? a->trylock : near ? near_ext_trylock : far_ext_trylock;
	b->unlock = !b->ext ? a->unlock : near ? near_ext_unlock : far_ext_unlock;
	b->rule = rule;
	map_algo.caps |= a->caps;
	return 0;
}

static void say_entry(const struct ls_bind *b)
{
	char caps[128];
	ls_say("lockswap: map: %s%s%s -> %s caps=%s state=%s",
	       b->rule == LS_MATCH_NONE ? "no rule" : "rule '",
	       b->rule == LS_MATCH_NONE ? "" : ls_match_rule((unsigned)b->rule)->text,
	       b->rule == LS_MATCH_NONE ? "" : "'", b->algo->name,
	       ls_caps_string(b->algo->caps, caps, sizeof caps), b->ext ? "out-of-line" : "inline");
}

/* The families a rule's target names: its mutex algorithm (*m) and its
 * rwlock algorithm (*rw), one or both (pthread) set; -1 with one line in
 * err if neither (an unknown name, or a spinlock algorithm). */
static int classify(const struct ls_rule *r, const struct ls_algo **m, const struct ls_rwalgo **rw, char *err,
		    size_t len)
{
	char mwhy[1300], rwhy[1300], names[1024], rnames[1024];
	const char *t = r->target, *plus = strchr(t, '+');
	*m = ls_algo_resolve(t, mwhy, sizeof mwhy); /* NAME or NAME+WRAPPER */
	/* a wrapper of the other family is never composed with this name */
	*rw = *m && plus ? NULL : ls_rwalgo_lookup(t, rwhy, sizeof rwhy);
	if (*m || *rw)
		return 0;
	if (ls_spinalgo_find(t))
		snprintf(err, len,
			 "%s: rule '%.100s': %s is a spinlock algorithm, and spinlocks take no rules (a "
			 "pthread_spinlock_t has 4 bytes, all the lock's: no room for a binding; "
			 "LOCKSWAP_SPINALGO chooses for every spinlock)",
			 r->where, r->text, t);
	else if (plus && !strstr(rwhy, "is not a wrapper"))
		snprintf(err, len, "%s: rule '%.100s': %s", r->where, r->text, rwhy);
	else if (plus)
		snprintf(err, len, "%s: rule '%.100s': %s", r->where, r->text, mwhy);
	else
		snprintf(
		    err, len,
		    "%s: rule '%.100s': unknown algorithm '%.64s' (valid: mutexes: %s, each as NAME+WRAPPER "
		    "with: %s; rwlocks: %s)",
		    r->where, r->text, t, ls_algo_names(names, sizeof names),
		    ls_wrap_names(mwhy, sizeof mwhy), ls_rwalgo_names(rnames, sizeof rnames));
	return -1;
}

int ls_map_configure(const struct ls_algo *dflt, bool verb, char *err, size_t len)
{
	const char *text = getenv("LOCKSWAP_ALGO_MAP"), *file = getenv("LOCKSWAP_CONFIG");
	char msg[1200];
	if (!text && !file)
		return 0;
	if (text && file) {
		snprintf(err, len, "LOCKSWAP_ALGO_MAP and LOCKSWAP_CONFIG are both set (valid: one of them)");
		return -1;
	}
	if (text ? ls_match_parse(text, err, len) : ls_match_parse_file(file, err, len))
		return -1;
	const char *origin = text ? "LOCKSWAP_ALGO_MAP" : "LOCKSWAP_CONFIG";
	unsigned n = ls_match_count();

	/* The families: a rule applies to the locks its algorithm is for
	 * (pthread: both), and each family has at most one '*' rule. */
	const struct ls_algo *ma[LS_MATCH_MAX];
	const struct ls_rwalgo *ra[LS_MATCH_MAX];
	uint64_t rw_rules = 0;
	int rw_any = LS_MATCH_NONE;
	for (unsigned i = 0; i < n; i++) {
		const struct ls_rule *r = ls_match_rule(i);
		if (classify(r, &ma[i], &ra[i], err, len))
			return -1;
		if (r->kind == LS_RULE_ANY) {
			int first = ma[i] && mutex_any != LS_MATCH_NONE ? mutex_any : rw_any;
			const char *fams = ma[i] && ra[i] ? "mutexes and rwlocks"
					   : ma[i]	  ? "mutexes"
							  : "rwlocks";
			if (ma[i] && mutex_any != LS_MATCH_NONE)
				ma[i] = NULL;
			if (ra[i] && rw_any != LS_MATCH_NONE)
				ra[i] = NULL;
			if (!ma[i] && !ra[i]) {
				snprintf(err, len,
					 "%s: rule '%.100s': a second '*' rule for %s (the first: '%.100s')",
					 r->where, r->text, fams, ls_match_rule((unsigned)first)->text);
				return -1;
			}
			if (ma[i])
				mutex_any = (int)i;
			if (ra[i])
				rw_any = (int)i;
		}
		if (ma[i])
			mutex_rules |= 1ull << i;
		if (ra[i])
			rw_rules |= 1ull << i;
	}
	const struct ls_algo *serial = (dflt->caps & LS_CAP_PASSTHROUGH) ? NULL : dflt;
	any_map = true;
	verbose = verb;
	if (!mutex_rules) { /* every mutex as LOCKSWAP_ALGO says, as without a map */
		if (verbose)
			ls_say("lockswap: map: %u rule%s from %s%s%s, none for mutexes", n, n == 1 ? "" : "s",
			       origin, file ? " " : "", file ? file : "");
		return ls_rwmap_configure(ra, n, rw_rules, rw_any, serial, verb, err, len);
	}

	glibc = ls_real; /* before an observer wraps it */
	nbind = n + 1;
	size_t size = (nbind * sizeof *table + 4095) & ~(size_t)4095;
	bool near;
	table = map_table(size, &near);
	bound = mmap(NULL, nbind * sizeof *bound, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!table || bound == MAP_FAILED) {
		snprintf(err, len, "%s: no memory for the rules' table", origin);
		return -1;
	}
	bias = near ? 0 : (uintptr_t)table - sizeof *table;
	for (unsigned i = 0; i + 1 < nbind; i++) {
		const struct ls_rule *r = ls_match_rule(i);
		snprintf(msg, sizeof msg, "%s: rule '%.100s'", r->where, r->text);
		/* a rule of rwlocks only: never chosen for a mutex */
		if (fill(&table[i], ma[i] ? ma[i] : dflt, ma[i] ? (int)i : LS_MATCH_NONE, msg, err, len))
			return -1;
	}
	snprintf(msg, sizeof msg, "%s: LOCKSWAP_ALGO (the algorithm of mutexes no rule names)", origin);
	if (fill(&table[nbind - 1], dflt, LS_MATCH_NONE, msg, err, len))
		return -1;
	mprotect(table, size, PROT_READ);
	int any = mutex_any;
	dflt_name = (any == LS_MATCH_NONE ? dflt : table[any].algo)->name;
	ls_g.map = true;
	ls_g.passthrough = false; /* LOCKSWAP_ALGO=pthread: glibc's mutex for the mutexes no rule names */
	ls_g.algo = &map_algo;
	ls_g.ext = false;
	ls_g.lock = near ? near_lock : far_lock;
	ls_g.trylock = near ? near_trylock : far_trylock;
	ls_g.unlock = near ? near_unlock : far_unlock;
	if (verbose) {
		ls_say("lockswap: map: %u rule%s from %s%s%s; dispatch %s", n, n == 1 ? "" : "s", origin,
		       file ? " " : "", file ? file : "",
		       near ? "by address (table below 4 GiB)"
			    : "by offset (no room below 4 GiB: one instruction more per call)");
		for (unsigned i = 0; i < nbind; i++)
			if (i + 1 < nbind ? (mutex_rules >> i & 1) : any == LS_MATCH_NONE)
				say_entry(&table[i]);
	}
	return rw_rules ? ls_rwmap_configure(ra, n, rw_rules, rw_any, serial, verb, err, len) : 0;
}

void ls_map_published(void)
{
	ls_g.slow_lock = map_bind_lock;
	ls_g.slow_trylock = map_bind_trylock;
	ls_g.slow_unlock = map_bind_unlock;
}

const char *ls_map_default_name(void)
{
	return dflt_name;
}

int ls_map_start(char *err, size_t len)
{
	return ls_match_start(err, len);
}

/* Under LOCKSWAP_VERBOSE, at exit: what each rule chose, and why a rule
 * chose nothing (a rule of both families: no mutex and no rwlock). */
void ls_map_report(void)
{
	struct ls_match_stats st;
	uint64_t total = 0, rwtotal = 0;
	const char *ra;
	for (unsigned i = 0; i < nbind; i++)
		total += atomic_load_explicit(&bound[i], memory_order_relaxed);
	for (unsigned i = 0; i < ls_match_count(); i++)
		rwtotal += ls_rwmap_bound((int)i, &ra);
	rwtotal += ls_rwmap_bound(LS_MATCH_NONE, &ra);
	ls_match_stats(&st);
	char rws[64] = "";
	if (ls_rwg.map)
		snprintf(rws, sizeof rws, ", %llu rwlocks bound", (unsigned long long)rwtotal);
	ls_say("lockswap: map: %llu mutexes bound%s, %llu stack walks, %llu without a walk, %llu return "
	       "addresses resolved",
	       (unsigned long long)total, rws, (unsigned long long)st.walks, (unsigned long long)st.unwalked,
	       (unsigned long long)st.resolved);
	for (unsigned i = 0; i < ls_match_count(); i++) {
		const char *text = ls_match_rule(i)->text;
		bool m = mutex_rules >> i & 1;
		uint64_t n = m ? atomic_load_explicit(&bound[i], memory_order_relaxed) : 0;
		ra = NULL;
		uint64_t nr = ls_rwmap_bound((int)i, &ra);
		if (n)
			ls_say("lockswap: map: rule '%s': %llu mutexes -> %s", text, (unsigned long long)n,
			       table[i].algo->name);
		if (nr)
			ls_say("lockswap: map: rule '%s': %llu rwlocks -> %s", text, (unsigned long long)nr,
			       ra);
		if (n || nr || (!m && !ra))
			continue; /* (!m && !ra: an rwlock rule while every rwlock is glibc's anyway) */
		char why[512];
		ls_match_why_not(i, why, sizeof why);
		ls_say("lockswap: map: rule '%s' matched no %s%s%s%s", text,
		       m && ra ? "mutex or rwlock"
		       : m     ? "mutex"
			       : "rwlock",
		       why[0] ? " (" : "", why, why[0] ? ")" : "");
	}
	uint64_t n = nbind ? atomic_load_explicit(&bound[nbind - 1], memory_order_relaxed) : 0;
	if (n)
		ls_say("lockswap: map: no rule: %llu mutexes -> %s", (unsigned long long)n,
		       table[nbind - 1].algo->name);
	ra = NULL;
	n = ls_rwmap_bound(LS_MATCH_NONE, &ra);
	if (n)
		ls_say("lockswap: map: no rule: %llu rwlocks -> %s", (unsigned long long)n, ra);
}

bool ls_map_any(void)
{
	return any_map;
}

/* ---- an algorithm per rwlock (LOCKSWAP_ALGO_MAP, LOCKSWAP_CONFIG) ----
 *
 * When a map has rules whose algorithm is an rwlock algorithm (ls_map_configure
 * sorts the rules into families), each rwlock is bound once, at
 * pthread_rwlock_init or first use, to the rule its creation stack matches
 * (match.h, among the rwlock rules), and runs that rule's algorithm until
 * it is destroyed, as above for mutexes.
 *
 * Bindings. One entry per rule, plus one for the rwlocks no rule names
 * (LOCKSWAP_RWALGO), in a read-only table mapped below 4 GiB if the kernel
 * has room there: __pad2 holds the rwlock's entry (its address, or its offset
 * from rw_bias when the table is above 4 GiB; 64 bits, so that no
 * instruction widens it), 0 until it has one. Binding races: as a mutex's, one CAS from 0; the loser adopts
 * the winner's entry. A copy by value copies its binding.
 *
 * Paths. ls_rwg.rw is map_rwalgo, whose operations find the rwlock's entry
 * (binding it first if need be) and call its algorithm on its state: the
 * general paths and every timed and try operation run through it unchanged,
 * with ls_rwg.rw_ext false, so that the state they pass is the rwlock itself
 * (offset 0). With the table below 4 GiB the read lock, the write lock and
 * the unlock have entries of their own (rwlock.c's rdlock_fast_map, wrlock_fast_map,
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

unsigned ls_rwmap_caps(struct ls_rwlock *l)
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
	return sizeof(struct ls_rwext) + a->state_size;
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

static struct ls_rwext *rw_ext_new(struct ls_rwlock *l, const struct ls_rwalgo *a, bool wait)
{
	struct ls_rwext *e = wait ? ls_ext_alloc_wait(rw_ext_size(a)) : ls_ext_alloc(rw_ext_size(a));
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
	struct ls_rwext *e = rw_ext_new(l, a, true);
	return (struct ls_rwext *)ls_ext_attach(&l->alg.ext, &e->h, rw_ext_size(a), NULL) + 1;
}

/* The state of a bound rwlock whose algorithm keeps it out of line. */
static inline void *rw_ext_state(struct ls_rwlock *l)
{
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_load(&l->alg.ext);
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
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_load(&l->alg.ext);
	if (LS_UNLIKELY(!e))
		return rwm_ext_rdlock_attach(l, how, token);
	return rw_near_entry(l)->ardlock(e + 1, how, token);
}

static __attribute__((noinline)) void rwm_ext_rdunlock_attach(struct ls_rwlock *l, void *token)
{
	/* (a copy by value of a held rwlock: see ls_rw_ext_state) */
	rw_near_entry(l)->ardunlock(rw_ext_attach(l), token);
}

static void rwm_ext_rdunlock(void *s, void *token)
{
	struct ls_rwlock *l = s;
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_load(&l->alg.ext);
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
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_load(&l->alg.ext);
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
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_load(&l->alg.ext);
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

int ls_rwmap_init(struct ls_rwlock *l, int kind)
{
	/* Memory that held one of our rwlocks: its block goes back to the
	 * pool, or to the new rwlock if the algorithm is the same. */
	const struct ls_rwbind *old = rw_entry_checked(atomic_load_explicit(&l->bind, memory_order_relaxed));
	struct ls_rwext *olde = NULL;
	if (old && old->ext) {
		struct ls_ext_head *e = atomic_load_explicit(&l->alg.ext, memory_order_relaxed);
		if (ls_ext_adoptable(&l->alg.ext, e, old->algo))
			olde = (struct ls_rwext *)e;
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
		struct ls_rwext *e = olde;
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

int ls_rwmap_destroy(struct ls_rwlock *l)
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

/* -- configuration, queries, report (bind.h) -- */

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
	void *p = map_table(size, &near);
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
