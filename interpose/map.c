/*
 * map.c - an algorithm per mutex (LOCKSWAP_ALGO_MAP, LOCKSWAP_CONFIG), and
 * the rules' families (rwlocks: rwlock.c): each
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
 * own '*' rule. The rwlocks' table, binding and dispatch are rwlock.c's
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
#include "rwshim.h"
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

/* ---- init and destroy ---- */

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

int ls_map_destroy(struct ls_mutex *m)
{
	uint32_t w = atomic_load_explicit(&m->bind, memory_order_acquire);
	if (!w) {
		/* never initialised nor used (a static initialiser): its state
		 * is all zero, unlocked, and no algorithm has seen it */
		m->kind = -1;
		if (LS_UNLIKELY(ls_events.destroy))
			ls_events.destroy(LS_OBJ_MUTEX, m);
		return 0;
	}
	const struct ls_bind *b = entry_at(w);
	return ls_mutex_destroy_algo(m, b->algo, state_for(m, b), b->ext);
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
void *ls_map_table(size_t size, bool *near)
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
	table = ls_map_table(size, &near);
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
