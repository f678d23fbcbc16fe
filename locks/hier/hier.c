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

struct ls_hier_head *ls_hier_attach(ls_hier_lines_t *w, bool with_groups, const void *flat,
				    void (*init)(struct ls_hier_head *))
{
	struct ls_hier_head *marker = (struct ls_hier_head *)flat; /* never written */
	for (;;) {
		struct ls_hier_head *seen = atomic_load_explicit(w, memory_order_acquire);
		if (ls_hier_mine(w, seen) || seen == marker)
			return seen; /* another thread attached it */
		unsigned n = ls_topo_clusters(), g = with_groups ? ls_topo_groups() : 0;
		if (n < 1)
			n = 1;
		if (1 + n + g > LS_TOPO_MAX_CLUSTERS) { /* at most 64 lines per block */
			g = 0;
			if (n >= LS_TOPO_MAX_CLUSTERS)
				n = LS_TOPO_MAX_CLUSTERS - 1;
		}
		/* zero-filled; NULL when no address space is left (never the
		 * reserve): then the marker (hier.h, "No address space") */
		struct ls_hier_head *h = ls_ext_alloc((size_t)(1 + n + g) * LS_CACHELINE);
		if (h) {
			h->nclusters = n;
			h->ngroups = g;
			if (init)
				init(h);
			/* relaxed: published by the release CAS below */
			__atomic_store_n(&h->owner, (void *)w, __ATOMIC_RELAXED);
		}
		/* release: the head and the zeroed lines are visible to whoever
		 * loads the word with acquire (ls_hier_load) */
		if (atomic_compare_exchange_strong_explicit(w, &seen, h ? h : marker, memory_order_acq_rel,
							    memory_order_relaxed))
			return h ? h : marker;
		if (h)
			ls_ext_free(h, block_size(h));
	}
}

struct ls_hier_head *ls_hier_detach(ls_hier_lines_t *w)
{
	struct ls_hier_head *h = atomic_exchange_explicit(w, NULL, memory_order_acq_rel);
	if (ls_hier_mine(w, h))
		ls_ext_free(h, block_size(h));
	return h;
}
