/*
 * bind.h - an algorithm per lock (LOCKSWAP_ALGO_MAP, LOCKSWAP_CONFIG): the
 * per-lock binding, written once for mutexes and rwlocks. Each lockswap
 * mutex and rwlock is bound once, when it is initialised or first used, to
 * the rule its creation stack matches (match/match.h) among its family's
 * rules, and runs that rule's algorithm until it is destroyed.
 *
 * Files, top first: bind_rules.c sorts the rules into the families;
 * bind_mutex.c and bind_rwlock.c fill each family's entries (what a bound
 * lock runs) and hold the operations that dispatch by lock; bind.c keeps
 * the tables, binds a lock at its first use and reports at exit. mutex.c
 * and rwlock.c bind a lock at init and destroy what it ran.
 *
 * Families. A rule's algorithm decides which locks it applies to
 * (bind_rules.c): a mutex algorithm's rule to mutexes, an rwlock algorithm's (the
 * names of `lockswap --names rwlock`) to rwlocks, `pthread`, a name of both,
 * to both; each family matches only its rules (match.h's mask) and has its
 * own '*' rule. Spinlocks take no rules: a pthread_spinlock_t is 4 bytes,
 * all of them the lock word, with no room for a binding, so a rule naming a
 * spinlock-only algorithm is a configuration error. A map without mutex
 * rules leaves the mutexes as LOCKSWAP_ALGO says (ls_g.map stays false),
 * one without rwlock rules the rwlocks.
 *
 * Bindings. Per family, one entry per rule, plus one for the locks no rule
 * names (LOCKSWAP_ALGO, LOCKSWAP_RWALGO), in a read-only table mapped below
 * 4 GiB (MAP_32BIT): a lock's binding word, unused by lockswap otherwise (a
 * mutex's __lock, an rwlock's __pad2: 64 bits, so that no instruction
 * widens it), holds its entry's address, 0 until it has one. An entry
 * holds the operations the dispatch calls (the algorithm's own, or for an
 * algorithm whose state is out of line the adapters, which find the block)
 * and the algorithm itself. If nothing can be mapped below 4 GiB,
 * the table goes anywhere and the word holds the entry's offset in it: the
 * dispatch then adds the table's address, one instruction more per call
 * (said under LOCKSWAP_VERBOSE).
 *
 * Binding races (bind.c). Two threads using a lock for the first time
 * each match it (one stack walk each) and CAS their entry into its word
 * from 0: one wins, the other adopts the winner's. The winner of a mutex
 * then sets LS_KIND_BOUND (after the word: a thread that sees the bit sees
 * the word, as x86-64 keeps loads in order; the shim exists for x86-64
 * only, its symbol versions say so). A lock copied by value copies its
 * binding.
 *
 * `pthread` in a rule: glibc's own lock, kept out of line (40 and 56 bytes
 * do not fit the state bytes), run through the shim, which keeps glibc's
 * semantics itself (types, EDEADLK, recursion, misuse).
 */
#ifndef LS_BIND_H
#define LS_BIND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"
#include "rwlock/rwlock.h"

/* ---- a family's table (bind.c) ---- */

/* The operations an entry holds, of one family or the other. */
union ls_bind_ops {
	struct {
		void (*lock)(void *);
		int (*trylock)(void *);
		void (*unlock)(void *);
	} m;
	struct {
		int (*rdlock)(void *, unsigned, void **);
		void (*rdunlock)(void *, void *);
		void (*wrlock)(void *, unsigned);
		void (*wrunlock)(void *);
	} rw;
};

/* One entry: a rule (or the locks no rule names) and what a lock bound to
 * it runs. `op` is what the dispatch calls, on a mutex's state bytes or on
 * the rwlock itself: the algorithm's own operations, or for a state out of
 * line the adapters (bind_mutex.c, bind_rwlock.c), which find the block and
 * call `own`, the algorithm's. The ops come first: a mutex's dispatch is `jmp [entry]`. */
struct ls_bind {
	union ls_bind_ops op;
	union ls_bind_ops own;
	union {
		const struct ls_algo *m;
		const struct ls_rwalgo *rw;
	} algo;
	const char *name; /* the algorithm's */
	int rule;	  /* match.h's index, or LS_MATCH_NONE: no rule */
	bool ext;	  /* its state is out of line */
} __attribute__((aligned(LS_CACHELINE)));

/* A family's table: one entry per rule of the map, plus the last, for the
 * locks no rule names; read-only once configured, below 4 GiB if the
 * kernel has room there. A lock's binding word (a mutex's __lock, 32 bits;
 * an rwlock's __pad2, 64) holds its entry's address (near: bias is 0), or
 * else its offset from bias; 0 until the lock has one. */
struct ls_bindmap {
	struct ls_bind *table; /* NULL: the family has no rules */
	unsigned n;
	uintptr_t bias;
	bool near;
	uint64_t rules;		 /* the family's rules (match.h's mask) */
	int any;		 /* their '*' rule, or LS_MATCH_NONE */
	_Atomic uint64_t *bound; /* locks bound to each entry */
};
extern struct ls_bindmap ls_bind_mutexes __attribute__((visibility("hidden")));
extern struct ls_bindmap ls_bind_rwlocks __attribute__((visibility("hidden")));

static inline uint64_t ls_bind_word(const struct ls_bindmap *f, const struct ls_bind *b)
{
	return (uintptr_t)b - f->bias;
}

static inline const struct ls_bind *ls_bind_at(const struct ls_bindmap *f, uint64_t w)
{
	return (const struct ls_bind *)(f->bias + w);
}

/* The table of nrules rules (and the last entry), the family's rules and
 * '*' rule: 0, or -1 without memory. Sealed read-only once filled. */
int ls_bind_table(struct ls_bindmap *f, unsigned nrules, uint64_t rules, int any);
void ls_bind_seal(struct ls_bindmap *f);
/* The entry a word read from memory that may hold anything names (a lock
 * being initialised), or NULL. */
const struct ls_bind *ls_bind_checked(const struct ls_bindmap *f, uint64_t w);
/* The entry of a rule (LS_MATCH_NONE: the last), and of the rule the
 * calling thread's stack matches among the family's (a stack walk). */
const struct ls_bind *ls_bind_rule(const struct ls_bindmap *f, int rule);
const struct ls_bind *ls_bind_match(const struct ls_bindmap *f);
/* A lock was bound to b (for the report). */
void ls_bind_count(struct ls_bindmap *f, const struct ls_bind *b);
/* First use of a lock without a binding: match, then one CAS of the word
 * from 0 (release for a mutex's, relaxed for an rwlock's); a thread that
 * loses adopts the winner's entry (*won false). */
const struct ls_bind *ls_bind_first_use32(struct ls_bindmap *f, _Atomic uint32_t *w, bool *won);
const struct ls_bind *ls_bind_first_use64(struct ls_bindmap *f, _Atomic uint64_t *w);
/* The rule an entry stands for, as written, or "(default)". */
const char *ls_bind_rule_text(const struct ls_bind *b);
/* Under LOCKSWAP_VERBOSE: one line for an entry (what: "" or "rwlock "). */
void ls_bind_say(const struct ls_bind *b, const char *what, const char *caps);

/* ---- the map (bind_rules.c, bind_mutex.c, bind_rwlock.c, bind.c) ----
 *
 * LOCKSWAP_ALGO_MAP or LOCKSWAP_CONFIG: config.c calls ls_map_configure
 * once the default algorithms are chosen (LOCKSWAP_ALGO, for the mutexes
 * no rule names; LOCKSWAP_RWALGO, ls_rwg's, for the rwlocks) and before
 * the observer is installed; it fills ls_g for the mutexes' map (ls_g.map
 * set) and ls_rwg for the rwlocks' (ls_rwg.map set), each only if the map
 * has rules of that family, or returns -1 with one line in err. After the
 * observer: ls_map_published (the mutexes' slow paths). After ready:
 * ls_map_start (the matcher's start: may dlopen). At exit: ls_map_report,
 * every rule (verbose: LOCKSWAP_VERBOSE), or only the rules that matched
 * no lock. */
int ls_map_configure(const struct ls_algo *dflt, bool verbose, char *err, size_t errlen);
void ls_map_published(void);
int ls_map_start(char *err, size_t errlen);
void ls_map_report(bool verbose);
bool ls_map_any(void); /* rules were read: of mutexes (ls_g.map), rwlocks or both */
/* For the observer (observe.h): the algorithm of the locks no rule names,
 * and a lock's algorithm and rule (NULL for a lock glibc keeps, or
 * without the family's map). */
const char *ls_map_default_name(void);
const char *ls_map_algo_of(const pthread_mutex_t *m);
const char *ls_map_rule_of(const pthread_mutex_t *m);
const char *ls_rwmap_default_name(void);
const char *ls_rwmap_algo_of(const pthread_rwlock_t *rw);
const char *ls_rwmap_rule_of(const pthread_rwlock_t *rw);
/* For the rwlock family's paths: the capabilities of an rwlock's algorithm,
 * binding it first if it has no binding yet. For mutex.c's destroy: the
 * algorithm of a mutex that has its binding, its state (entered if out of
 * line: shim.h; the caller leaves it), and whether that
 * is out of line; false for one that has none (never initialised nor
 * used). */
struct ls_rwlock;
struct ls_mutex;
unsigned ls_rwmap_caps(struct ls_rwlock *l);
bool ls_map_target(struct ls_mutex *m, const struct ls_algo **a, void **state, bool *ext);

/* ---- each family's entries (bind_mutex.c, bind_rwlock.c) ----
 *
 * ls_map_configure's, once it has sorted the rules: the family's table
 * from the rules' algorithms (ma[i] or rules[i], for each i of the mask
 * among n rules; a NULL or unmasked one: the family's default), its '*'
 * rule, the family's default algorithm (the mutexes': dflt; the rwlocks':
 * ls_rwg's, and for their mutex-serialised mode the mutex algorithm, NULL
 * for pthread); then ls_g or ls_rwg for the map. 0, or -1 with one line in
 * err. */
int ls_bind_mutex_configure(const struct ls_algo *const *ma, unsigned n, uint64_t among, int any,
			    const struct ls_algo *dflt, const char *origin, const char *file, bool verbose,
			    char *err, size_t len);
int ls_bind_rwlock_configure(const struct ls_rwalgo *const *rules, unsigned n, uint64_t among, int any,
			     const struct ls_algo *mutex, bool verbose, char *err, size_t len);

#endif
