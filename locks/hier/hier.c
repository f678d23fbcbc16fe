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

/* The kind of a lines block (pool.h): no lock's out-of-line state. */
static const char lines_kind;

static struct ls_hier_head *attach(ls_hier_lines_t *w, bool with_groups, const void *flat,
				   void (*init)(struct ls_hier_head *));

struct ls_hier_head *ls_hier_enter_attach(ls_hier_lines_t *w, bool with_groups, const void *flat,
					  void (*init)(struct ls_hier_head *))
{
	for (;;) {
		struct ls_hier_head *h = attach(w, with_groups, flat, init);
		if ((const void *)h == flat)
			return h;
		/* the pool may have freed it since (an idle lock's): again */
		if ((h = ls_hier_enter(w)))
			return h;
	}
}

static struct ls_hier_head *attach(ls_hier_lines_t *w, bool with_groups, const void *flat,
				   void (*init)(struct ls_hier_head *))
{
	const struct ls_ext_head *marker = flat; /* never written */
	struct ls_ext_head *seen = ls_ext_attached(w, marker);
	if (seen)
		return (struct ls_hier_head *)seen; /* another thread attached it */
	unsigned n = ls_topo_clusters(), g = with_groups ? ls_topo_groups() : 0;
	if (n < 1)
		n = 1;
	if (1 + n + g > LS_TOPO_MAX_CLUSTERS) { /* at most 64 lines per block */
		g = 0;
		if (n >= LS_TOPO_MAX_CLUSTERS)
			n = LS_TOPO_MAX_CLUSTERS - 1;
	}
	/* zero-filled; NULL when no address space is left (never the reserve):
	 * then the marker (hier.h, "No address space") */
	struct ls_hier_head *h = ls_ext_alloc_for(w, (size_t)(1 + n + g) * LS_CACHELINE, false);
	if (!h)
		return (struct ls_hier_head *)ls_ext_attach(w, (struct ls_ext_head *)marker, 0, marker);
	h->ext.kind = &lines_kind;
	h->ext.reclaim =
	    ls_ext_reclaim_id(ls_ext_holds_nothing); /* lines only: the pool frees it when the lock is gone */
	h->ext.idle = 1;			     /* every use enters it (hier.h) */
	/* relaxed: a hint; a fresh block outlives the pool's next look */
	atomic_store_explicit(&h->ext.used, 1, memory_order_relaxed);
	h->nclusters = n;
	h->ngroups = g;
	if (init)
		init(h); /* published by ls_ext_attach's release CAS */
	return (struct ls_hier_head *)ls_ext_attach(w, &h->ext, block_size(h), marker);
}

struct ls_hier_head *ls_hier_detach(ls_hier_lines_t *w)
{
	struct ls_ext_head *held, *own = ls_ext_take(w, &held);
	if (own)
		ls_ext_free(own, block_size((struct ls_hier_head *)own));
	return (struct ls_hier_head *)held;
}
