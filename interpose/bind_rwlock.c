/*
 * bind_rwlock.c - the rwlocks' side of the per-lock binding (bind.h): their
 * entries, the adapters for an out-of-line state, the algorithm that
 * dispatches by rwlock, and glibc's own rwlock for the rwlocks a rule gives
 * it. bind.h says what a binding is.
 *
 * Paths. ls_rwg.rw is map_rwalgo, whose operations find the
 * rwlock's entry (binding it first if need be) and call its algorithm on its
 * state: the general paths and every timed and try operation run through it
 * unchanged, with ls_rwg.rw_ext false, so that the state they pass is the
 * rwlock itself (offset 0). With the table below 4 GiB the read lock, the
 * write lock and the unlock have entries of their own (rwlock.c's
 * rdlock_fast_map, wrlock_fast_map, unlock_fast_map, unlock_write_map):
 * they load the binding beside the writer word, send an rwlock without one
 * to the general path, and call the entry's operation: 3 instructions more
 * for a lock, 1 for an unlock than the same algorithm as LOCKSWAP_RWALGO.
 * An algorithm whose state is out of line gets adapters (rwm_ext_*) that
 * find the block, as the fast paths of LOCKSWAP_RWALGO do inline, and jump
 * to its operation: 2 more per call (results/map/rwcost.md). Without
 * rwlock rules none of this runs: ls_rwg.map is false and every path is as
 * before.
 *
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "bind.h"
#include "match.h"
#include "pool.h"
#include "shim_rwlock.h"
#include "wait.h"

static inline const struct ls_bind *rw_bound_entry(struct ls_rwlock *l)
{
	uint64_t w = atomic_load_explicit(&l->bind, memory_order_relaxed);
	if (LS_LIKELY(w))
		return ls_bind_at(&ls_bind_rwlocks, w);
	return ls_bind_first_use64(&ls_bind_rwlocks, &l->bind);
}

unsigned ls_rwmap_caps(struct ls_rwlock *l)
{
	return rw_bound_entry(l)->algo.rw->caps;
}

/* The state of a bound rwlock whose algorithm keeps it out of line. */
static __attribute__((noinline)) void *rw_ext_attach(struct ls_rwlock *l)
{
	return ls_rw_ext_attach_for(
	    l, ls_bind_at(&ls_bind_rwlocks, atomic_load_explicit(&l->bind, memory_order_relaxed))->algo.rw);
}

static inline void *rw_ext_state(struct ls_rwlock *l)
{
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_load(&l->alg.ext);
	if (LS_LIKELY(e))
		return e + 1;
	return rw_ext_attach(l);
}

static inline void *rw_state_for(struct ls_rwlock *l, const struct ls_bind *b)
{
	return b->ext ? rw_ext_state(l) : l->alg.state;
}

/* The bound algorithm, read only to attach a block (shim_rwlock.h). */
static const struct ls_rwalgo *rw_bound_algo(struct ls_rwlock *l)
{
	return ls_bind_at(&ls_bind_rwlocks, atomic_load_explicit(&l->bind, memory_order_relaxed))->algo.rw;
}

/* As rw_state_for, entered for an acquisition, or found for a release
 * (shim_rwlock.h, ls_rw_ext_release); left after either. */
static inline void *rw_state_enter(struct ls_rwlock *l, const struct ls_bind *b)
{
	return b->ext ? ls_rw_ext_enter(l, rw_bound_algo) : l->alg.state;
}

static inline void *rw_state_release(struct ls_rwlock *l, const struct ls_bind *b)
{
	return b->ext ? ls_rw_ext_release(l, rw_bound_algo) : l->alg.state;
}

static inline int rw_state_result(const struct ls_bind *b, void *st, int r)
{
	if (r && b->ext)
		ls_rw_ext_leave(st);
	return r;
}

/* ---- glibc's own rwlock, for one rwlock ---- */

/* glibc's rwlock takes its kind at init: the kind of the rwlock that owns
 * the block (its state word, at offset 0, is the rwlock: shim_rwlock.h),
 * whose owner is set before its state is initialised. */
static void g_init(void *s)
{
	const struct ls_rwext *e = (const struct ls_rwext *)s - 1;
	const struct ls_rwlock *l = __atomic_load_n(&e->h.owner, __ATOMIC_RELAXED);
	pthread_rwlockattr_t at;
	pthread_rwlockattr_init(&at);
	pthread_rwlockattr_setkind_np(&at, (int)l->flags);
	ls_rwreal.rw.init(s, &at);
	pthread_rwlockattr_destroy(&at);
}

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
    .init = g_init,
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

/* ---- the adapters for an out-of-line state ----
 *
 * Called by
 * rwlock.c's rdlock_fast_map and unlock_fast_map only (the table is below 4 GiB, the
 * rwlock is bound), they find the block as rdlock_fast_ext does, then jump
 * to the algorithm's own operation (the attaching, rare, apart: no register
 * is saved on the way). */
static inline const struct ls_bind *rw_near_entry(struct ls_rwlock *l)
{
	return (const struct ls_bind *)(uintptr_t)atomic_load_explicit(&l->bind, memory_order_relaxed);
}

static __attribute__((noinline)) int rwm_ext_rdlock_attach(struct ls_rwlock *l, unsigned how, void **token)
{
	void *st = ls_rw_ext_enter_slow(l, rw_bound_algo);
	int r = rw_near_entry(l)->own.rw.rdlock(st, how, token);
	if (r)
		ls_rw_ext_leave(st);
	return r;
}

static int rwm_ext_rdlock(void *s, unsigned how, void **token)
{
	struct ls_rwlock *l = s;
	struct ls_rwext *e = (struct ls_rwext *)ls_ext_enter(&l->alg.ext);
	if (LS_UNLIKELY(!e))
		return rwm_ext_rdlock_attach(l, how, token);
	int r = rw_near_entry(l)->own.rw.rdlock(e + 1, how, token);
	if (LS_UNLIKELY(r))
		ls_rw_ext_leave(e + 1);
	return r;
}

static void rwm_ext_rdunlock(void *s, void *token)
{
	struct ls_rwlock *l = s;
	void *st = ls_rw_ext_release(l, rw_bound_algo);
	rw_near_entry(l)->own.rw.rdunlock(st, token);
	ls_rw_ext_leave(st); /* compares the block only */
}

static void rwm_ext_wrlock(void *s, unsigned how)
{
	struct ls_rwlock *l = s;
	rw_near_entry(l)->own.rw.wrlock(ls_rw_ext_enter(l, rw_bound_algo), how);
}

static void rwm_ext_wrunlock(void *s)
{
	struct ls_rwlock *l = s;
	void *st = ls_rw_ext_release(l, rw_bound_algo);
	rw_near_entry(l)->own.rw.wrunlock(st);
	ls_rw_ext_leave(st); /* compares the block only */
}

/* ---- map_rwalgo: ls_rwg.rw under a map; the state is the rwlock ---- */

#define RWM_PROLOGUE(s, state_how)                                                                           \
	struct ls_rwlock *l = (s);                                                                           \
	const struct ls_bind *b = rw_bound_entry(l);                                                         \
	const struct ls_rwalgo *a = b->algo.rw;                                                              \
	void *st = state_how(l, b)

static int rwm_rdlock(void *s, unsigned how, void **token)
{
	RWM_PROLOGUE(s, rw_state_enter);
	return rw_state_result(b, st, a->rdlock(st, how, token));
}

static int rwm_tryrdlock(void *s, unsigned how, void **token)
{
	RWM_PROLOGUE(s, rw_state_enter);
	return rw_state_result(b, st, a->tryrdlock(st, how, token));
}

static int rwm_timedrdlock(void *s, unsigned how, uint64_t deadline, void **token)
{
	RWM_PROLOGUE(s, rw_state_enter);
	return rw_state_result(b, st,
			       a->timedrdlock ? a->timedrdlock(st, how, deadline, token)
					      : ls_rw_timed_fallback(a, st, how, false, deadline, token));
}

static void rwm_rdunlock(void *s, void *token)
{
	RWM_PROLOGUE(s, rw_state_release);
	a->rdunlock(st, token);
	if (b->ext)
		ls_rw_ext_leave(st); /* compares the block only */
}

static void rwm_wrlock(void *s, unsigned how)
{
	RWM_PROLOGUE(s, rw_state_enter);
	a->wrlock(st, how);
}

static int rwm_trywrlock(void *s, unsigned how)
{
	RWM_PROLOGUE(s, rw_state_enter);
	return rw_state_result(b, st, a->trywrlock(st, how));
}

static int rwm_timedwrlock(void *s, unsigned how, uint64_t deadline)
{
	RWM_PROLOGUE(s, rw_state_enter);
	return rw_state_result(b, st,
			       a->timedwrlock ? a->timedwrlock(st, how, deadline)
					      : ls_rw_timed_fallback(a, st, how, true, deadline, NULL));
}

static void rwm_wrunlock(void *s)
{
	RWM_PROLOGUE(s, rw_state_release);
	a->wrunlock(st);
	if (b->ext)
		ls_rw_ext_leave(st); /* compares the block only */
}

/* fork: the forking thread's read holds, entered when taken */
static void rwm_fork_rdheld(void *s, void **token, unsigned nth, unsigned holds)
{
	RWM_PROLOGUE(s, rw_state_for);
	if (a->fork_rdheld)
		a->fork_rdheld(st, token, nth, holds);
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
    .fork_rdheld = rwm_fork_rdheld,
};

/* ---- the observer's queries ---- */

static const struct ls_bind *rw_query(const pthread_rwlock_t *rw)
{
	struct ls_rwlock *l = (struct ls_rwlock *)rw;
	if (!ls_rwg.map || l->shared)
		return NULL;
	return rw_bound_entry(l);
}

const char *ls_rwmap_algo_of(const pthread_rwlock_t *rw)
{
	const struct ls_bind *b = rw_query(rw);
	return b ? b->name : NULL;
}

const char *ls_rwmap_rule_of(const pthread_rwlock_t *rw)
{
	const struct ls_bind *b = rw_query(rw);
	return b ? ls_bind_rule_text(b) : NULL;
}

const char *ls_rwmap_default_name(void)
{
	return ls_bind_rule(&ls_bind_rwlocks, ls_bind_rwlocks.any)->name;
}

/* ---- the rwlocks' entries ---- */

/* Unless every rwlock would be glibc's anyway (then nothing changes). */
int ls_bind_rwlock_configure(const struct ls_rwalgo *const *rules, unsigned n, uint64_t among, int any,
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
	struct ls_bindmap *f = &ls_bind_rwlocks;
	if (ls_bind_table(f, n, among, any)) {
		snprintf(err, len, "algorithm map: no memory for the rwlock rules' table");
		return -1;
	}
	for (unsigned i = 0; i < f->n; i++) {
		bool dflt_entry = i == n;
		const struct ls_rwalgo *a = dflt_entry || !(among >> i & 1) ? dflt : rules[i];
		if (a->caps & LS_RWCAP_PASSTHROUGH) {
			a = &glibc_rwalgo; /* the baseline, per rwlock */
		} else if (!dflt_entry &&
			   (among >> i & 1)) { /* (LOCKSWAP_RWALGO's was started and checked) */
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
		/* a rule of mutexes only: never chosen for an rwlock */
		struct ls_bind *e = &f->table[i];
		e->algo.rw = a;
		e->name = a->name;
		e->ext = a->state_size > LS_RW_INLINE_STATE;
		e->op.rw.rdlock = e->ext ? rwm_ext_rdlock : a->rdlock;
		e->op.rw.rdunlock = e->ext ? rwm_ext_rdunlock : a->rdunlock;
		e->op.rw.wrlock = e->ext ? rwm_ext_wrlock : a->wrlock;
		e->op.rw.wrunlock = e->ext ? rwm_ext_wrunlock : a->wrunlock;
		e->own.rw.rdlock = a->rdlock;
		e->own.rw.rdunlock = a->rdunlock;
		e->own.rw.wrlock = a->wrlock;
		e->own.rw.wrunlock = a->wrunlock;
		e->rule = dflt_entry || !(among >> i & 1) ? LS_MATCH_NONE : (int)i;
		if (dflt_entry || (among >> i & 1))
			map_rwalgo.caps |= a->caps & LS_RWCAP_HIER;
	}
	ls_bind_seal(f);
	if (verbose) {
		char caps[128];
		for (unsigned i = 0; i < f->n; i++) {
			if (i < n && !(among >> i & 1))
				continue;
			if (i == n && any != LS_MATCH_NONE)
				continue;
			ls_bind_say(&f->table[i], "rwlock ",
				    ls_rwcaps_string(f->table[i].algo.rw->caps, caps, sizeof caps));
		}
		if (!f->near)
			ls_say("lockswap: map: rwlocks dispatch by offset (no room below 4 GiB: more "
			       "instructions per call)");
	}
	ls_rwg.map = true;
	ls_rwg.map_near = f->near;
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
