/*
 * hier.c - what the hierarchical locks share (hier.h): the cohort pass
 * bound and the per-cluster lines.
 */
#include "hier.h"

uint64_t ls_cohort_passes = LS_COHORT_PASSES_DEFAULT;
uint64_t ls_hier_fastpath = 1;

static size_t block_size(const struct ls_hier_head *h)
{
	return (size_t)(1 + h->nclusters + h->ngroups) * LS_CACHELINE;
}

struct ls_hier_head *ls_hier_attach(ls_hier_lines_t *w, bool with_groups)
{
	for (;;) {
		struct ls_hier_head *seen = atomic_load_explicit(w, memory_order_acquire);
		if (ls_hier_mine(w, seen))
			return seen; /* another thread attached it */
		unsigned n = ls_topo_clusters(), g = with_groups ? ls_topo_groups() : 0;
		if (n < 1)
			n = 1;
		if (1 + n + g > LS_TOPO_MAX_CLUSTERS) { /* at most 64 lines per block */
			g = 0;
			if (n >= LS_TOPO_MAX_CLUSTERS)
				n = LS_TOPO_MAX_CLUSTERS - 1;
		}
		/* zero-filled; ls_ext_alloc fails only above 64 lines */
		struct ls_hier_head *h = ls_ext_alloc((size_t)(1 + n + g) * LS_CACHELINE);
		h->nclusters = n;
		h->ngroups = g;
		__atomic_store_n(&h->owner, (void *)w, __ATOMIC_RELAXED);
		/* release: the head and the zeroed lines are visible to whoever
		 * loads the word with acquire (ls_hier_load) */
		if (atomic_compare_exchange_strong_explicit(w, &seen, h, memory_order_acq_rel, memory_order_relaxed))
			return h;
		ls_ext_free(h, block_size(h));
	}
}

void ls_hier_detach(ls_hier_lines_t *w)
{
	struct ls_hier_head *h = atomic_exchange_explicit(w, NULL, memory_order_acq_rel);
	if (ls_hier_mine(w, h))
		ls_ext_free(h, block_size(h));
}

/* xorshift32, one per thread: only decorrelates the waiters. */
static __thread uint32_t rng;

static uint32_t random32(void)
{
	uint32_t x = rng;
	if (LS_UNLIKELY(x == 0))
		x = (uint32_t)(uintptr_t)&rng | 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rng = x;
}

bool ls_hier_backoff(struct ls_spin *s, uint64_t *limit, uint64_t max, uint64_t deadline)
{
	uint64_t until = ls_now_ns() + random32() % *limit;
	if (deadline && until > deadline)
		until = deadline;
	if (*limit < max)
		*limit = *limit * 2 < max ? *limit * 2 : max;
	do {
		if (ls_spin_step(s))
			return true;
	} while (ls_now_ns() < until);
	return false;
}
