/*
 * profile_rows.c - the order of a profile's rows (see profile_rows.h):
 * heapsort, with no allocation and no recursion (the library sorts at exit,
 * from _exit or a fatal signal).
 */
#include <stddef.h>

#include "profile_rows.h"

static uint64_t row_key(const struct ls_prof_row *r, int key)
{
	switch (key) {
	case LS_SORT_HOLD:
		return r->hold_ns;
	case LS_SORT_CONTENDED:
		return r->cond ? r->n[LS_PROF_WAITS] + r->n[LS_PROF_CTIMEOUT]
			       : r->n[LS_PROF_CONTENDED] + r->n[LS_PROF_RDCONTENDED];
	case LS_SORT_ACQUIRED:
		return r->cond ? r->n[LS_PROF_WAITS] + r->n[LS_PROF_CTIMEOUT] : ls_prof_acquired(r);
	default:
		return r->wait_ns;
	}
}

/* a goes before b */
static bool row_before(const struct ls_prof_row *a, const struct ls_prof_row *b, int key)
{
	uint64_t x = row_key(a, key), y = row_key(b, key);
	if (x != y)
		return x > y;
	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns;
	return a->id < b->id;
}

static bool site_before(const struct ls_prof_site *a, const struct ls_prof_site *b)
{
	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns;
	if (a->count != b->count)
		return a->count > b->count;
	return a->stack < b->stack;
}

#define HEAPSORT(T, base, n, before)                                                                         \
	do {                                                                                                 \
		T *a_ = (base), t_;                                                                          \
		size_t n_ = (n);                                                                             \
		for (size_t k_ = n_ / 2; k_-- > 0;)                                                          \
			HEAP_SIFT(T, a_, k_, n_, before);                                                    \
		for (size_t e_ = n_; e_-- > 1;) {                                                            \
			t_ = a_[0];                                                                          \
			a_[0] = a_[e_];                                                                      \
			a_[e_] = t_;                                                                         \
			HEAP_SIFT(T, a_, 0, e_, before);                                                     \
		}                                                                                            \
	} while (0)
/* max-heap on "after": the root is the element that sorts last */
#define HEAP_SIFT(T, a, start, end, before)                                                                  \
	do {                                                                                                 \
		size_t r_ = (start);                                                                         \
		for (;;) {                                                                                   \
			size_t c_ = 2 * r_ + 1;                                                              \
			if (c_ >= (end))                                                                     \
				break;                                                                       \
			if (c_ + 1 < (end) && before(&a[c_], &a[c_ + 1]))                                    \
				c_++;                                                                        \
			if (!before(&a[r_], &a[c_]))                                                         \
				break;                                                                       \
			T s_ = a[r_];                                                                        \
			a[r_] = a[c_];                                                                       \
			a[c_] = s_;                                                                          \
			r_ = c_;                                                                             \
		}                                                                                            \
	} while (0)

static int sort_key;
static bool row_before_k(const struct ls_prof_row *a, const struct ls_prof_row *b)
{
	return row_before(a, b, sort_key);
}

void ls_prof_sort(struct ls_prof_row *rows, unsigned n, int key)
{
	sort_key = key;
	HEAPSORT(struct ls_prof_row, rows, n, row_before_k);
	for (unsigned i = 0; i < n; i++)
		HEAPSORT(struct ls_prof_site, rows[i].sites, rows[i].nsites, site_before);
}
