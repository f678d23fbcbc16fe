/*
 * registry.c - the list of algorithms, and parsing of their tunables.
 *
 * Every algorithm file in locks/ places a pointer to its `struct ls_algo` in the ls_algos
 * section (LS_REGISTER_ALGO); the linker gathers them between
 * __start_ls_algos and __stop_ls_algos. The registry sorts them once, by
 * rank then name, so that listings are stable whatever the link order.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "wait.h"
#include "wrap/wrap.h"

extern const struct ls_algo *const __start_ls_algos[] __attribute__((weak, visibility("hidden")));
extern const struct ls_algo *const __stop_ls_algos[] __attribute__((weak, visibility("hidden")));
extern const struct ls_option *const __start_ls_options[] __attribute__((weak, visibility("hidden")));
extern const struct ls_option *const __stop_ls_options[] __attribute__((weak, visibility("hidden")));
extern const struct ls_wrap *const __start_ls_wraps[] __attribute__((weak, visibility("hidden")));
extern const struct ls_wrap *const __stop_ls_wraps[] __attribute__((weak, visibility("hidden")));

#define MAX_ALGOS 64
static const struct ls_algo *sorted[MAX_ALGOS];
static size_t nsorted;
static _Atomic int state; /* 0 unsorted, 1 sorting, 2 sorted */

static int before(const struct ls_algo *a, const struct ls_algo *b)
{
	if (a->rank != b->rank)
		return a->rank < b->rank;
	return strcmp(a->name, b->name) < 0;
}

static void sort_once(void)
{
	if (LS_LIKELY(atomic_load_explicit(&state, memory_order_acquire) == 2))
		return;
	int expected = 0;
	if (!atomic_compare_exchange_strong_explicit(&state, &expected, 1, memory_order_acquire,
						     memory_order_acquire)) {
		while (atomic_load_explicit(&state, memory_order_acquire) != 2)
			ls_cpu_relax();
		return;
	}
	size_t n = 0;
	for (const struct ls_algo *const *p = __start_ls_algos; p && p < __stop_ls_algos; p++) {
		if (n == MAX_ALGOS)
			break;
		/* insertion sort: a few dozen entries at most */
		size_t i = n++;
		while (i > 0 && before(*p, sorted[i - 1])) {
			sorted[i] = sorted[i - 1];
			i--;
		}
		sorted[i] = *p;
	}
	nsorted = n;
	atomic_store_explicit(&state, 2, memory_order_release);
}

size_t ls_algo_count(void)
{
	sort_once();
	return nsorted;
}

const struct ls_algo *ls_algo_at(size_t i)
{
	sort_once();
	return i < nsorted ? sorted[i] : NULL;
}

static const struct ls_algo *base_find(const char *name, size_t len)
{
	sort_once();
	for (size_t i = 0; i < nsorted; i++)
		if (strlen(sorted[i]->name) == len && strncmp(sorted[i]->name, name, len) == 0)
			return sorted[i];
	return NULL;
}

const struct ls_algo *ls_algo_find(const char *name)
{
	char err[8];
	return ls_algo_resolve(name, err, sizeof err);
}

/* ---- wrappers (locks/wrap/wrap.h): BASE+WRAPPER ---- */

size_t ls_wrap_count(void)
{
	return __start_ls_wraps ? (size_t)(__stop_ls_wraps - __start_ls_wraps) : 0;
}

const struct ls_wrap *ls_wrap_at(size_t i)
{
	return i < ls_wrap_count() ? __start_ls_wraps[i] : NULL;
}

const struct ls_wrap *ls_wrap_find(const char *name)
{
	for (size_t i = 0; i < ls_wrap_count(); i++)
		if (strcmp(ls_wrap_at(i)->name, name) == 0)
			return ls_wrap_at(i);
	return NULL;
}

char *ls_wrap_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < ls_wrap_count() && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", ls_wrap_at(i)->name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return buf;
}

const struct ls_algo *ls_algo_resolve(const char *name, char *err, size_t errlen)
{
	char names[1024];
	const char *plus = strchr(name, '+');
	size_t len = plus ? (size_t)(plus - name) : strlen(name);
	const struct ls_algo *base = base_find(name, len);
	if (!base) {
		char wraps[256];
		snprintf(err, errlen, "unknown algorithm '%.*s'%s%.64s%s (valid: %s%s%s)",
			 (int)(len < 64 ? len : 64), name, plus ? " in '" : "", plus ? name : "",
			 plus ? "'" : "", ls_algo_names(names, sizeof names),
			 ls_wrap_count() ? "; each as NAME+WRAPPER with: " : "",
			 ls_wrap_count() ? ls_wrap_names(wraps, sizeof wraps) : "");
		return NULL;
	}
	if (!plus)
		return base;
	const struct ls_wrap *w = ls_wrap_find(plus + 1);
	if (!w) {
		snprintf(err, errlen, "unknown wrapper '%.64s' in '%.64s' (valid: %s)", plus + 1, name,
			 ls_wrap_count() ? ls_wrap_names(names, sizeof names) : "none");
		return NULL;
	}
	return w->wrap(base, err, errlen);
}

size_t ls_option_count(void)
{
	return __start_ls_options ? (size_t)(__stop_ls_options - __start_ls_options) : 0;
}

const struct ls_option *ls_option_at(size_t i)
{
	return i < ls_option_count() ? __start_ls_options[i] : NULL;
}

char *ls_algo_names(char *buf, size_t len)
{
	size_t used = 0;
	sort_once();
	buf[0] = '\0';
	for (size_t i = 0; i < nsorted && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", sorted[i]->name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return buf;
}

char *ls_caps_string(unsigned caps, char *buf, size_t len)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
	    {LS_CAP_PASSTHROUGH, "passthrough"},
	    {LS_CAP_FIFO, "fifo"},
	    {LS_CAP_TIMEOUT, "timeout"},
	    {LS_CAP_QNODE, "qnode"},
	    {LS_CAP_HIER, "hier"},
	};
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof names[0] && used < len; i++) {
		if (!(caps & names[i].bit))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[i].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (!buf[0])
		snprintf(buf, len, "-");
	return buf;
}

int ls_param_parse(const struct ls_param *p, const char *text, uint64_t *out, char *err, size_t errlen)
{
	/* Decimal digits, or 0x and hex digits; nothing else (no sign, no
	 * spaces, no octal: "010" is ten). */
	int base = 10;
	const char *d = text;
	if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) {
		base = 16;
		d += 2;
	}
	bool ok = *d != '\0';
	for (const char *q = d; *q && ok; q++)
		ok = base == 10 ? (*q >= '0' && *q <= '9') : isxdigit((unsigned char)*q) != 0;
	unsigned long long v = 0;
	if (ok) {
		errno = 0;
		v = strtoull(d, NULL, base);
		ok = errno == 0;
	}
	if (!ok) {
		snprintf(err, errlen, "%s: '%s' is not an unsigned integer (valid: %llu..%llu)", p->env, text,
			 (unsigned long long)p->min, (unsigned long long)p->max);
		return -1;
	}
	if (v < p->min || v > p->max) {
		snprintf(err, errlen, "%s: %llu is out of range (valid: %llu..%llu)", p->env, v,
			 (unsigned long long)p->min, (unsigned long long)p->max);
		return -1;
	}
	*out = v;
	return 0;
}

void ls_say(const char *fmt, ...)
{
	char buf[LS_SAY_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof buf - 2)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	/* write(2), not stdio: no locks, no buffering, safe before main */
	for (ssize_t off = 0, w; off < n; off += w)
		if ((w = write(2, buf + off, (size_t)(n - off))) <= 0)
			break;
}
