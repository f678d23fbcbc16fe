/*
 * rwregistry.c - the registries of the reader-writer lock family
 * (locks/rwlock/rwlock.h) and of the spinlock family (locks/spin/spinlock.h),
 * siblings of registry.c's for mutexes.
 *
 * Reader-writer algorithms and wrappers are gathered from the ls_rwalgos
 * section and sorted once by rank, then name. A NAME+WRAPPER composition is
 * built on first use into a small static table (one per wrapper: a wrapper
 * is bound to one inner algorithm per process, see rwlock.h), under a flag
 * that only configuration code and tests ever contend for.
 *
 * The spinlock family is the mutex algorithms that fit 4 bytes, then the
 * spin-only tables of the ls_spinalgos section.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "lock.h"
#include "rwlock/rwlock.h"
#include "spin/spinlock.h"
#include "wait.h"

extern const struct ls_rwalgo *const __start_ls_rwalgos[] __attribute__((weak, visibility("hidden")));
extern const struct ls_rwalgo *const __stop_ls_rwalgos[] __attribute__((weak, visibility("hidden")));
extern const struct ls_algo *const __start_ls_spinalgos[] __attribute__((weak, visibility("hidden")));
extern const struct ls_algo *const __stop_ls_spinalgos[] __attribute__((weak, visibility("hidden")));

#define MAX_TABLES 64

/* ---- a sorted list, built once ---- */

struct sorted {
	const void *t[MAX_TABLES];
	size_t n;
	_Atomic int state; /* 0 unsorted, 1 sorting, 2 sorted */
};

/* Sorts the n tables at p by (rank, name) into s, once; rank and name are
 * read through the callbacks (the two families' tables differ). */
static void sort_once(struct sorted *s, const void *const *p, size_t n, unsigned (*rank)(const void *),
		      const char *(*name)(const void *))
{
	if (LS_LIKELY(atomic_load_explicit(&s->state, memory_order_acquire) == 2))
		return;
	int expected = 0;
	if (!atomic_compare_exchange_strong_explicit(&s->state, &expected, 1, memory_order_acquire,
						     memory_order_acquire)) {
		while (atomic_load_explicit(&s->state, memory_order_acquire) != 2)
			ls_cpu_relax();
		return;
	}
	size_t k = 0;
	for (size_t j = 0; j < n && k < MAX_TABLES; j++) {
		size_t i = k++;
		while (i > 0 &&
		       (rank(p[j]) < rank(s->t[i - 1]) ||
			(rank(p[j]) == rank(s->t[i - 1]) && strcmp(name(p[j]), name(s->t[i - 1])) < 0))) {
			s->t[i] = s->t[i - 1];
			i--;
		}
		s->t[i] = p[j];
	}
	s->n = k;
	atomic_store_explicit(&s->state, 2, memory_order_release);
}

/* Appends "sep name" to buf at *used (no overrun). */
static void append(char *buf, size_t len, size_t *used, const char *sep, const char *name)
{
	if (*used >= len)
		return;
	int n = snprintf(buf + *used, len - *used, "%s%s", *used ? sep : "", name);
	if (n > 0)
		*used += (size_t)n;
}

/* ---- reader-writer locks ---- */

static struct sorted rw;

static unsigned rw_rank(const void *t)
{
	return ((const struct ls_rwalgo *)t)->rank;
}

static const char *rw_name(const void *t)
{
	return ((const struct ls_rwalgo *)t)->name;
}

static void rw_sort(void)
{
	size_t n = __start_ls_rwalgos ? (size_t)(__stop_ls_rwalgos - __start_ls_rwalgos) : 0;
	sort_once(&rw, (const void *const *)__start_ls_rwalgos, n, rw_rank, rw_name);
}

size_t ls_rwalgo_count(void)
{
	rw_sort();
	return rw.n;
}

const struct ls_rwalgo *ls_rwalgo_at(size_t i)
{
	rw_sort();
	return i < rw.n ? rw.t[i] : NULL;
}

static bool is_wrapper(const struct ls_rwalgo *a)
{
	return a->bind != NULL;
}

/* A base algorithm a wrapper may wrap: a lock, not itself a wrapper. */
static bool wrappable(const struct ls_rwalgo *a)
{
	return !is_wrapper(a) && !(a->caps & LS_RWCAP_PASSTHROUGH);
}

static const struct ls_rwalgo *find_table(const char *name, size_t len)
{
	rw_sort();
	for (size_t i = 0; i < rw.n; i++) {
		const struct ls_rwalgo *a = rw.t[i];
		if (strlen(a->name) == len && !strncmp(a->name, name, len))
			return a;
	}
	return NULL;
}

/* Compositions: at most one per wrapper. */
struct comp {
	struct ls_rwalgo t;
	const struct ls_rwalgo *wrapper, *inner;
	char name[96], desc[256], policy[256];
};
static struct comp comps[MAX_TABLES];
static size_t ncomps;
static _Atomic bool comps_busy;

static void comps_lock(void)
{
	bool f = false;
	while (!atomic_compare_exchange_weak_explicit(&comps_busy, &f, true, memory_order_acquire,
						      memory_order_relaxed)) {
		f = false;
		ls_cpu_relax();
	}
}

static void comps_unlock(void)
{
	atomic_store_explicit(&comps_busy, false, memory_order_release);
}

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static const struct ls_rwalgo *compose(const struct ls_rwalgo *inner, const struct ls_rwalgo *w, char *err,
				       size_t errlen)
{
	const struct ls_rwalgo *r = NULL;
	comps_lock();
	for (size_t i = 0; i < ncomps; i++) {
		if (comps[i].wrapper != w)
			continue;
		if (comps[i].inner == inner)
			r = &comps[i].t;
		else
			snprintf(
			    err, errlen,
			    "%s is already composed with %s in this process (one composition per wrapper)",
			    w->name, comps[i].inner->name);
		comps_unlock();
		return r;
	}
	if (ncomps == MAX_TABLES) {
		snprintf(err, errlen, "too many compositions");
	} else if (!w->bind(inner, err, errlen)) {
		struct comp *c = &comps[ncomps++];
		snprintf(c->name, sizeof c->name, "%s+%s", inner->name, w->name);
		snprintf(c->desc, sizeof c->desc, "%s, over %s", w->desc, inner->name);
		c->wrapper = w;
		c->inner = inner;
		c->t = *w;
		c->t.name = c->name;
		c->t.desc = c->desc;
		snprintf(c->policy, sizeof c->policy, "%s%s%s", inner->policy ? inner->policy : "",
			 w->policy ? "; " : "", w->policy ? w->policy : "");
		c->t.policy = c->policy;
		c->t.caps = w->caps | (inner->caps & w->keep_caps);
		c->t.state_size = round8(w->state_size) + inner->state_size;
		c->t.start = NULL; /* ls_rwalgo_start runs the parts' hooks */
		c->t.bind = NULL;  /* a composition is not a bare wrapper */
		r = &c->t;
	}
	comps_unlock();
	return r;
}

static struct comp *comp_of(const struct ls_rwalgo *a)
{
	for (size_t i = 0; i < ncomps; i++)
		if (&comps[i].t == a)
			return &comps[i];
	return NULL;
}

const struct ls_rwalgo *ls_rwalgo_lookup(const char *name, char *err, size_t errlen)
{
	char names[1024];
	const char *plus = strchr(name, '+');
	if (!plus) {
		const struct ls_rwalgo *a = find_table(name, strlen(name));
		if (a && !is_wrapper(a))
			return a;
		if (a)
			snprintf(
			    err, errlen,
			    "'%.64s' is a wrapper: name it after the lock it wraps, as NAME+%s (valid: %s)",
			    name, a->name, ls_rwalgo_names(names, sizeof names));
		else
			snprintf(err, errlen, "unknown algorithm '%.64s' (valid: %s)", name,
				 ls_rwalgo_names(names, sizeof names));
		return NULL;
	}
	const struct ls_rwalgo *inner = find_table(name, (size_t)(plus - name));
	const struct ls_rwalgo *w = find_table(plus + 1, strlen(plus + 1));
	if (!w || !is_wrapper(w)) {
		snprintf(err, errlen, "'%.64s': '%.32s' is not a wrapper (valid: %s)", name, plus + 1,
			 ls_rwalgo_names(names, sizeof names));
		return NULL;
	}
	if (!inner || !wrappable(inner)) {
		snprintf(err, errlen, "'%.64s': %s wraps a lock algorithm, not '%.*s' (valid: %s)", name,
			 w->name, (int)(plus - name), name, ls_rwalgo_names(names, sizeof names));
		return NULL;
	}
	return compose(inner, w, err, errlen);
}

const struct ls_rwalgo *ls_rwalgo_find(const char *name)
{
	char err[1400];
	return ls_rwalgo_lookup(name, err, sizeof err);
}

int ls_rwalgo_start(const struct ls_rwalgo *a, const struct ls_algo *mutex, char *err, size_t errlen)
{
	struct comp *c = comp_of(a);
	if (!c)
		return a->start ? a->start(mutex, err, errlen) : 0;
	if (c->inner->start && c->inner->start(mutex, err, errlen))
		return -1;
	if (c->inner->wrapped)
		c->inner->wrapped();
	if (c->wrapper->start && c->wrapper->start(mutex, err, errlen))
		return -1;
	/* the inner's size and capabilities may have been set by its start
	 * (the mutex-serialised mode takes fifo, timeout, qnode and hier from
	 * LOCKSWAP_ALGO's lock there) */
	c->t.state_size = round8(c->wrapper->state_size) + c->inner->state_size;
	c->t.caps = c->wrapper->caps | (c->inner->caps & c->wrapper->keep_caps);
	return 0;
}

const char *ls_rwalgo_selectable(size_t i, char *buf, size_t len)
{
	rw_sort();
	for (size_t k = 0; k < rw.n; k++) {
		const struct ls_rwalgo *a = rw.t[k];
		if (is_wrapper(a))
			continue;
		if (i-- == 0) {
			snprintf(buf, len, "%s", a->name);
			return buf;
		}
	}
	for (size_t k = 0; k < rw.n; k++) {
		const struct ls_rwalgo *w = rw.t[k];
		if (!is_wrapper(w))
			continue;
		for (size_t j = 0; j < rw.n; j++) {
			if (!wrappable(rw.t[j]))
				continue;
			if (i-- == 0) {
				snprintf(buf, len, "%s+%s", ((const struct ls_rwalgo *)rw.t[j])->name,
					 w->name);
				return buf;
			}
		}
	}
	return NULL;
}

char *ls_rwalgo_names(char *buf, size_t len)
{
	size_t used = 0;
	char tmp[160];
	rw_sort();
	buf[0] = '\0';
	for (size_t k = 0; k < rw.n; k++)
		if (!is_wrapper(rw.t[k]))
			append(buf, len, &used, ", ", ((const struct ls_rwalgo *)rw.t[k])->name);
	for (size_t k = 0; k < rw.n; k++)
		if (is_wrapper(rw.t[k])) {
			snprintf(tmp, sizeof tmp, "NAME+%s", ((const struct ls_rwalgo *)rw.t[k])->name);
			append(buf, len, &used, ", ", tmp);
		}
	return buf;
}

static const struct {
	unsigned bit;
	const char *name;
} rwcaps[] = {
    {LS_RWCAP_PASSTHROUGH, "passthrough"},
    {LS_RWCAP_FIFO, "fifo"},
    {LS_RWCAP_TIMEOUT, "timeout"},
    {LS_RWCAP_QNODE, "qnode"},
    {LS_RWCAP_HIER, "hier"},
    {LS_RWCAP_KIND, "kind"},
    {LS_RWCAP_EXCLUSIVE, "exclusive"},
    {LS_RWCAP_WRAPPER, "wrapper"},
};
#define NRWCAPS (sizeof rwcaps / sizeof rwcaps[0])

char *ls_rwcaps_string(unsigned caps, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NRWCAPS; i++)
		if (caps & rwcaps[i].bit)
			append(buf, len, &used, ",", rwcaps[i].name);
	if (!buf[0])
		snprintf(buf, len, "-");
	return buf;
}

unsigned ls_rwcap_bit(const char *name)
{
	for (size_t i = 0; i < NRWCAPS; i++)
		if (!strcmp(rwcaps[i].name, name))
			return rwcaps[i].bit;
	return 0;
}

const char *ls_rwcap_names(void)
{
	return "fifo, timeout, qnode, hier, passthrough, kind, exclusive, wrapper";
}

/* ---- spinlocks ---- */

static struct sorted spin;

static unsigned m_rank(const void *t)
{
	return ((const struct ls_algo *)t)->rank;
}

static const char *m_name(const void *t)
{
	return ((const struct ls_algo *)t)->name;
}

/* The mutex algorithms that fit and the spin-only ones, in one list. */
static void spin_sort(void)
{
	const void *all[MAX_TABLES];
	size_t n = 0;
	if (LS_LIKELY(atomic_load_explicit(&spin.state, memory_order_acquire) == 2))
		return;
	for (size_t i = 0; i < ls_algo_count() && n < MAX_TABLES; i++)
		if (ls_spin_fits(ls_algo_at(i)))
			all[n++] = ls_algo_at(i);
	for (const struct ls_algo *const *p = __start_ls_spinalgos;
	     p && p < __stop_ls_spinalgos && n < MAX_TABLES; p++)
		all[n++] = *p;
	sort_once(&spin, all, n, m_rank, m_name);
}

size_t ls_spinalgo_count(void)
{
	spin_sort();
	return spin.n;
}

const struct ls_algo *ls_spinalgo_at(size_t i)
{
	spin_sort();
	return i < spin.n ? spin.t[i] : NULL;
}

const struct ls_algo *ls_spinalgo_lookup(const char *name, char *err, size_t errlen)
{
	char names[1024];
	for (size_t i = 0; i < ls_spinalgo_count(); i++)
		if (!strcmp(ls_spinalgo_at(i)->name, name))
			return ls_spinalgo_at(i);
	const struct ls_algo *m = strchr(name, '+') ? NULL : ls_algo_find(name);
	if (strchr(name, '+'))
		snprintf(err, errlen,
			 "'%.64s': a wrapped lock keeps a word before its state, which a pthread_spinlock_t "
			 "has no "
			 "room for (valid: %s)",
			 name, ls_spinalgo_names(names, sizeof names));
	else if (m && m->state_size > LS_SPIN_STATE)
		snprintf(err, errlen, "%s needs %zu bytes of state, a pthread_spinlock_t has %d (valid: %s)",
			 name, m->state_size, LS_SPIN_STATE, ls_spinalgo_names(names, sizeof names));
	else if (m)
		snprintf(err, errlen,
			 "%s is hierarchical: its clusters are loaded for LOCKSWAP_ALGO only (valid: %s)",
			 name, ls_spinalgo_names(names, sizeof names));
	else
		snprintf(err, errlen, "unknown algorithm '%.64s' (valid: %s)", name,
			 ls_spinalgo_names(names, sizeof names));
	return NULL;
}

const struct ls_algo *ls_spinalgo_find(const char *name)
{
	char err[1400];
	return ls_spinalgo_lookup(name, err, sizeof err);
}

char *ls_spinalgo_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < ls_spinalgo_count(); i++)
		append(buf, len, &used, ", ", ls_spinalgo_at(i)->name);
	return buf;
}
