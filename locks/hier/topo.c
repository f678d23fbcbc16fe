/*
 * topo.c - cluster ids from hwloc (see topo.h): the LOCKSWAP_CLUSTER and
 * LOCKSWAP_TOPOLOGY options, loading the topology, the tables, the slow
 * path of the lookup, and `lockswap --topology`.
 *
 * libhwloc is never linked: it is dlopen'ed by the start hook when the
 * chosen algorithm is hierarchical (LS_CAP_HIER), used through the few
 * functions below, and closed once the tables are built. Inline helpers of
 * hwloc's headers that call into the library are not used (they would be
 * link-time references); objects are walked through their fields.
 *
 * Re-entry. hwloc takes pthread mutexes while it loads; they go through the
 * shim to the hierarchical algorithm, whose ls_cluster() sees no table yet
 * and answers 0. Nothing on that path loads the topology, and the start hook
 * runs once, so there is no recursion.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "topo.h"
#include "wait.h"

/* glibc 2.35+; weak so that the library still loads on an older one */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

struct ls_topo ls_topo = {.nclusters = 1};
__thread uint32_t ls_topo_thread_index __attribute__((tls_model("initial-exec"))) = UINT32_MAX;
/* what the lookup reads without rseq: never a valid index */
static __thread uint32_t no_index __attribute__((tls_model("initial-exec"))) = UINT32_MAX;

static long tls_offset(const void *var)
{
	return (long)((const char *)var - (const char *)__builtin_thread_pointer());
}

/* ---- levels ---- */

enum level { AUTO, PACKAGE, NUMA, L3, L2, CORE, PU, THREADS, NLEVELS };
static const char *const level_name[NLEVELS] = {"auto", "package", "numa", "l3",
						"l2",	"core",	   "pu",   "thread"};
/* the candidates of auto and of the group level, outermost first */
static const enum level hw_levels[] = {PACKAGE, NUMA, L3, L2, CORE};
#define NHW (sizeof hw_levels / sizeof hw_levels[0])

/* ---- configuration (parse hooks, before main) ---- */

static struct {
	enum level level;
	unsigned threads; /* N of thread:N */
	unsigned groups;  /* G of thread:N/G */
	char topology[4096];
	bool has_topology, xml;
	bool verbose;
} cfg = {.level = AUTO};

/* What was found, for --topology and LOCKSWAP_VERBOSE. */
static struct {
	bool loaded;
	enum level level, group_level;
	unsigned objs[NLEVELS];	   /* objects of each level in the topology (0: none) */
	unsigned reached[NLEVELS]; /* clusters the machine's CPUs fall into */
	unsigned npu, ncpu;
	double load_ms;
	char source[64];
} found;

static uint8_t cpu_table[LS_TOPO_MAX_CPUS];
static uint8_t identity[LS_TOPO_MAX_CLUSTERS];
static uint32_t ncpu_table; /* entries of cpu_table, once built */
static uint8_t group_table[LS_TOPO_MAX_CLUSTERS];

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_cluster(const char *v, char *err, size_t len)
{
	for (int l = AUTO; l < THREADS; l++)
		if (l != PU && !strcmp(v, level_name[l])) {
			cfg.level = (enum level)l;
			return 0;
		}
	if (!strncmp(v, "thread:", 7)) {
		const char *d = v + 7;
		char *end;
		errno = 0;
		unsigned long n = strtoul(d, &end, 10), g = 0;
		bool ok = *d >= '0' && *d <= '9' && !errno && n >= 1 && n <= LS_TOPO_MAX_CLUSTERS;
		if (ok && *end == '/') {
			d = end + 1;
			g = strtoul(d, &end, 10);
			ok = *d >= '0' && *d <= '9' && !errno && g > 1 && g < n;
		}
		if (ok && !*end) {
			cfg.level = THREADS;
			cfg.threads = (unsigned)n;
			cfg.groups = (unsigned)g;
			/* known now: threads may ask from the start */
			for (unsigned c = 0; c < n; c++) {
				identity[c] = (uint8_t)c;
				group_table[c] = (uint8_t)(c * g / n);
			}
			ls_topo.off = tls_offset(&ls_topo_thread_index);
			ls_topo.table = identity;
			ls_topo.group_of = group_table;
			ls_topo.ngroups = (uint32_t)g;
			ls_topo.threads = true;
			/* relaxed: published by the release store of n that follows */
			atomic_store_explicit(&ls_topo.nclusters, (uint32_t)n, memory_order_relaxed);
			/* release: the fields above are visible to whoever sees n */
			atomic_store_explicit(&ls_topo.n, (uint32_t)n, memory_order_release);
			return 0;
		}
		return fail(err, len,
			    "LOCKSWAP_CLUSTER: '%.64s': expected thread:N or thread:N/G with 1 <= N <= %u, 1 "
			    "< G < N (valid: auto, numa, package, l3, l2, core, thread:N, thread:N/G)",
			    v, LS_TOPO_MAX_CLUSTERS);
	}
	return fail(err, len,
		    "LOCKSWAP_CLUSTER: unknown level '%.64s' (valid: auto, numa, package, l3, l2, core, "
		    "thread:N, thread:N/G)",
		    v);
}

/* Skips "(...)" at s, if any; NULL if unbalanced. */
static const char *skip_attrs(const char *s)
{
	if (*s != '(')
		return s;
	while (*s && *s != ')')
		s++;
	return *s ? s + 1 : NULL;
}

/* Synthetic descriptions are checked by hwloc when the topology is loaded;
 * here only their shape, so that a run that never loads it still rejects
 * garbage: a leading (ATTRIBUTES), then tokens NAME:COUNT(ATTRIBUTES) or
 * [NAME(ATTRIBUTES)], attributes optional, separated by blanks. */
static bool synthetic_shape_ok(const char *s)
{
	bool levels = false;
	s = skip_attrs(s);
	while (s && *s) {
		if (*s == ' ' || *s == '\t') {
			s++;
			continue;
		}
		bool bracket = *s == '[';
		s += bracket;
		const char *name = s;
		while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'))
			s++;
		if (s == name)
			return false;
		if (bracket) {
			s = skip_attrs(s);
			if (!s || *s++ != ']')
				return false;
		} else {
			if (*s++ != ':' || *s < '1' || *s > '9')
				return false;
			while (*s >= '0' && *s <= '9')
				s++;
			s = skip_attrs(s);
			levels = true;
		}
		if (s && *s && *s != ' ' && *s != '\t')
			return false;
	}
	return s && levels;
}

static int parse_topology(const char *v, char *err, size_t len)
{
	size_t n = strlen(v);
	if (n == 0 || n >= sizeof cfg.topology)
		return fail(err, len,
			    "LOCKSWAP_TOPOLOGY: %s (valid: an hwloc synthetic description such as \"pack:2 "
			    "[numa] l3:2 core:2 pu:1\", or an XML file)",
			    n ? "too long" : "empty");
	memcpy(cfg.topology, v, n + 1);
	cfg.has_topology = true;
	cfg.xml = strchr(v, '/') || (n > 4 && !strcmp(v + n - 4, ".xml"));
	if (cfg.xml) {
		if (access(v, R_OK) != 0)
			return fail(err, len, "LOCKSWAP_TOPOLOGY: cannot read XML file '%.256s': %s", v,
				    strerror(errno));
	} else if (!synthetic_shape_ok(v)) {
		return fail(err, len,
			    "LOCKSWAP_TOPOLOGY: malformed synthetic description '%.256s' (valid: e.g. "
			    "\"pack:2 [numa] l3:2 core:2 pu:1\", or an XML file path)",
			    v);
	}
	return 0;
}

/* ---- hwloc, through dlopen ---- */

struct hw {
	void *dl;
	hwloc_topology_t t;
	unsigned (*get_api_version)(void);
	int (*topology_init)(hwloc_topology_t *);
	int (*set_synthetic)(hwloc_topology_t, const char *);
	int (*set_xml)(hwloc_topology_t, const char *);
	int (*set_components)(hwloc_topology_t, unsigned long, const char *);
	int (*set_all_types_filter)(hwloc_topology_t, enum hwloc_type_filter_e);
	int (*set_type_filter)(hwloc_topology_t, hwloc_obj_type_t, enum hwloc_type_filter_e);
	int (*topology_load)(hwloc_topology_t);
	void (*topology_destroy)(hwloc_topology_t);
	int (*get_type_depth)(hwloc_topology_t, hwloc_obj_type_t);
	int (*get_nbobjs_by_depth)(hwloc_topology_t, int);
	hwloc_obj_t (*get_obj_by_depth)(hwloc_topology_t, int, unsigned);
	int (*bitmap_isset)(hwloc_const_bitmap_t, unsigned);
};

#define HWLOC_SONAME "libhwloc.so.15"

static int hw_open(struct hw *h, char *err, size_t len)
{
	memset(h, 0, sizeof *h);
	h->dl = dlopen(HWLOC_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h->dl)
		return fail(err, len,
			    "LOCKSWAP_CLUSTER: hierarchical locks need hwloc (Debian package libhwloc15): "
			    "%s; or set LOCKSWAP_CLUSTER=thread:N",
			    dlerror());
	struct {
		void *fp;
		const char *name;
	} syms[] = {
	    {&h->get_api_version, "hwloc_get_api_version"},
	    {&h->topology_init, "hwloc_topology_init"},
	    {&h->set_synthetic, "hwloc_topology_set_synthetic"},
	    {&h->set_xml, "hwloc_topology_set_xml"},
	    {&h->set_components, "hwloc_topology_set_components"},
	    {&h->set_all_types_filter, "hwloc_topology_set_all_types_filter"},
	    {&h->set_type_filter, "hwloc_topology_set_type_filter"},
	    {&h->topology_load, "hwloc_topology_load"},
	    {&h->topology_destroy, "hwloc_topology_destroy"},
	    {&h->get_type_depth, "hwloc_get_type_depth"},
	    {&h->get_nbobjs_by_depth, "hwloc_get_nbobjs_by_depth"},
	    {&h->get_obj_by_depth, "hwloc_get_obj_by_depth"},
	    {&h->bitmap_isset, "hwloc_bitmap_isset"},
	};
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		void *p = dlsym(h->dl, syms[i].name);
		if (!p) {
			dlclose(h->dl);
			return fail(err, len, "LOCKSWAP_CLUSTER: %s has no %s", HWLOC_SONAME, syms[i].name);
		}
		memcpy(syms[i].fp, &p, sizeof p);
	}
	unsigned v = h->get_api_version();
	if (v >> 16 != HWLOC_API_VERSION >> 16) {
		dlclose(h->dl);
		return fail(err, len,
			    "LOCKSWAP_CLUSTER: %s has API version 0x%x, lockswap was built for 0x%x",
			    HWLOC_SONAME, v, HWLOC_API_VERSION);
	}
	return 0;
}

static void hw_close(struct hw *h)
{
	if (h->t)
		h->topology_destroy(h->t);
	dlclose(h->dl);
}

static int hw_load(struct hw *h, char *err, size_t len)
{
	if (h->topology_init(&h->t) != 0) {
		h->t = NULL;
		return fail(err, len, "LOCKSWAP_CLUSTER: hwloc_topology_init failed: %s", strerror(errno));
	}
	/* Only the levels we use; no I/O, no CPUID backend (in a VM every
	 * CPUID instruction is a trap). */
	h->set_all_types_filter(h->t, HWLOC_TYPE_FILTER_KEEP_NONE);
	static const hwloc_obj_type_t keep[] = {HWLOC_OBJ_PACKAGE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
						HWLOC_OBJ_CORE};
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
		h->set_type_filter(h->t, keep[i], HWLOC_TYPE_FILTER_KEEP_ALL);
	h->set_components(h->t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "linuxio");
	h->set_components(h->t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
	if (cfg.has_topology && cfg.xml) {
		if (h->set_xml(h->t, cfg.topology) != 0)
			return fail(err, len, "LOCKSWAP_TOPOLOGY: cannot use XML file '%.256s': %s",
				    cfg.topology, strerror(errno));
	} else if (cfg.has_topology) {
		if (h->set_synthetic(h->t, cfg.topology) != 0)
			return fail(err, len,
				    "LOCKSWAP_TOPOLOGY: hwloc rejects the synthetic description '%.256s' "
				    "(valid: e.g. \"pack:2 [numa] l3:2 core:2 pu:1\")",
				    cfg.topology);
	}
	if (h->topology_load(h->t) != 0)
		return fail(err, len, "LOCKSWAP_TOPOLOGY: hwloc cannot load %s%.256s%s: %s",
			    cfg.has_topology ? "'" : "this machine's topology",
			    cfg.has_topology ? cfg.topology : "", cfg.has_topology ? "'" : "",
			    strerror(errno));
	return 0;
}

static int depth_of(struct hw *h, enum level l)
{
	static const hwloc_obj_type_t type[NLEVELS] = {
	    [PACKAGE] = HWLOC_OBJ_PACKAGE, [NUMA] = HWLOC_OBJ_NUMANODE, [L3] = HWLOC_OBJ_L3CACHE,
	    [L2] = HWLOC_OBJ_L2CACHE,	   [CORE] = HWLOC_OBJ_CORE,	[PU] = HWLOC_OBJ_PU,
	};
	int d = h->get_type_depth(h->t, type[l]);
	return d == HWLOC_TYPE_DEPTH_UNKNOWN || d == HWLOC_TYPE_DEPTH_MULTIPLE ? INT32_MIN : d;
}

/* The object of level l (at depth d) that contains pu, or NULL. */
static hwloc_obj_t container(struct hw *h, hwloc_obj_t pu, enum level l, int d)
{
	if (l == NUMA) {
		int n = h->get_nbobjs_by_depth(h->t, d);
		for (int i = 0; i < n; i++) {
			hwloc_obj_t o = h->get_obj_by_depth(h->t, d, (unsigned)i);
			if (o && o->cpuset && h->bitmap_isset(o->cpuset, pu->os_index))
				return o;
		}
		return NULL;
	}
	for (hwloc_obj_t o = pu; o; o = o->parent)
		if (o->depth == d)
			return o;
	return NULL;
}

/* Dense ids (in logical order) of the level-l objects the CPUs fall into:
 * ids[cpu]; returns how many, 0 if the level does not exist. */
static unsigned partition(struct hw *h, hwloc_obj_t *pus, unsigned ncpu, enum level l, uint16_t *ids)
{
	int d = depth_of(h, l);
	if (d == INT32_MIN)
		return 0;
	int nobj = h->get_nbobjs_by_depth(h->t, d);
	if (nobj <= 0)
		return 0;
	int *rank = calloc((size_t)nobj, sizeof *rank); /* logical index -> id + 1 */
	if (!rank)
		return 0;
	for (unsigned c = 0; c < ncpu; c++) {
		hwloc_obj_t o = container(h, pus[c], l, d);
		ids[c] = o ? (uint16_t)o->logical_index : 0;
		rank[ids[c]] = 1;
	}
	unsigned n = 0;
	for (int i = 0; i < nobj; i++)
		if (rank[i])
			rank[i] = (int)++n;
	for (unsigned c = 0; c < ncpu; c++)
		ids[c] = (uint16_t)(rank[ids[c]] - 1);
	free(rank);
	return n;
}

/* True if the partition `outer` is a function of `inner` (coarser or equal). */
static bool coarser(const uint16_t *outer, const uint16_t *inner, unsigned ncpu, unsigned ninner)
{
	static int seen[LS_TOPO_MAX_CPUS];
	if (ninner > LS_TOPO_MAX_CPUS)
		return false;
	for (unsigned i = 0; i < ninner; i++)
		seen[i] = -1;
	for (unsigned c = 0; c < ncpu; c++) {
		if (seen[inner[c]] == -1)
			seen[inner[c]] = outer[c];
		else if (seen[inner[c]] != outer[c])
			return false;
	}
	return true;
}

static unsigned ncpu_of_machine(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	if (n < 1)
		n = 1;
	return n > (long)LS_TOPO_MAX_CPUS ? LS_TOPO_MAX_CPUS : (unsigned)n;
}

/* Builds the tables from the loaded topology. */
static int build(struct hw *h, char *err, size_t len)
{
	int dpu = depth_of(h, PU);
	int npu = dpu == INT32_MIN ? 0 : h->get_nbobjs_by_depth(h->t, dpu);
	if (npu <= 0)
		return fail(err, len, "LOCKSWAP_TOPOLOGY: the topology has no PU");
	unsigned ncpu = ncpu_of_machine();
	static hwloc_obj_t pus[LS_TOPO_MAX_CPUS];
	static uint16_t ids[NLEVELS][LS_TOPO_MAX_CPUS];
	if (!cfg.has_topology) {
		/* this machine: CPU i is the PU whose OS index is i */
		for (int i = 0; i < npu; i++) {
			hwloc_obj_t p = h->get_obj_by_depth(h->t, dpu, (unsigned)i);
			if (p && p->os_index + 1 > ncpu && p->os_index < LS_TOPO_MAX_CPUS)
				ncpu = p->os_index + 1;
		}
		for (unsigned c = 0; c < ncpu; c++)
			pus[c] = NULL;
		for (int i = 0; i < npu; i++) {
			hwloc_obj_t p = h->get_obj_by_depth(h->t, dpu, (unsigned)i);
			if (p && p->os_index < ncpu)
				pus[p->os_index] = p;
		}
	}
	for (unsigned c = 0; c < ncpu; c++) /* a synthetic machine, or CPUs hwloc does not list */
		if (cfg.has_topology || !pus[c])
			pus[c] = h->get_obj_by_depth(h->t, dpu, c % (unsigned)npu);
	found.npu = (unsigned)npu;
	found.ncpu = ncpu;
	for (size_t i = 0; i < NHW; i++) {
		enum level l = hw_levels[i];
		int d = depth_of(h, l);
		found.objs[l] = d == INT32_MIN ? 0 : (unsigned)h->get_nbobjs_by_depth(h->t, d);
		found.reached[l] = partition(h, pus, ncpu, l, ids[l]);
	}

	enum level level = cfg.level;
	if (level == AUTO) {
		level = CORE;
		unsigned best = 0;
		for (size_t i = 0; i + 1 < NHW; i++) { /* not core itself */
			unsigned n = found.reached[hw_levels[i]];
			if (n > 1 && (best == 0 || n < best)) {
				best = n;
				level = hw_levels[i];
			}
		}
	}
	if (!found.reached[level]) {
		/* the level does not exist here (a synthetic machine without
		 * caches): one cluster, as on a machine with one of it */
		for (unsigned c = 0; c < ncpu; c++)
			ids[level][c] = 0;
		found.reached[level] = 1;
	}
	unsigned ncl = found.reached[level];

	/* groups: the innermost other level coarser than the clusters that
	 * still splits them */
	enum level group = AUTO;
	unsigned ngroups = 0;
	for (size_t i = 0; i < NHW; i++) {
		enum level l = hw_levels[i];
		unsigned n = found.reached[l];
		if (l == level || n <= 1 || n >= ncl || !coarser(ids[l], ids[level], ncpu, ncl))
			continue;
		if (n > ngroups) {
			ngroups = n;
			group = l;
		}
	}
	found.level = level;
	found.group_level = group;

	for (unsigned c = 0; c < ncpu; c++)
		cpu_table[c] = (uint8_t)(ids[level][c] % LS_TOPO_MAX_CLUSTERS);
	if (ncl > LS_TOPO_MAX_CLUSTERS)
		ncl = LS_TOPO_MAX_CLUSTERS;
	if (ngroups) {
		for (unsigned c = 0; c < ncpu; c++)
			group_table[cpu_table[c]] = (uint8_t)(ids[group][c] % LS_TOPO_MAX_CLUSTERS);
		if (ngroups > LS_TOPO_MAX_CLUSTERS)
			ngroups = LS_TOPO_MAX_CLUSTERS;
	}
	ls_topo.table = cpu_table;
	ls_topo.group_of = group_table;
	ls_topo.ngroups = ngroups;
	ncpu_table = ncpu;
	/* rseq's cpu_id if glibc registered it (a thread for which the kernel
	 * refused reads -2 there, and takes the slow path) */
	if (&__rseq_offset && &__rseq_size && __rseq_size >= 8)
		ls_topo.off = (long)__rseq_offset + 4;
	else
		ls_topo.off = tls_offset(&no_index);
	/* release: the tables above are visible to whoever reads a count */
	atomic_store_explicit(&ls_topo.nclusters, ncl, memory_order_release);
	atomic_store_explicit(&ls_topo.n, ncpu, memory_order_release);
	return 0;
}

static int load(char *err, size_t len)
{
	if (cfg.level == THREADS) {
		snprintf(found.source, sizeof found.source, "threads");
		found.level = THREADS;
		found.loaded = true;
		return 0;
	}
	uint64_t t0 = ls_now_ns();
	struct hw h;
	if (hw_open(&h, err, len))
		return -1;
	int r = hw_load(&h, err, len);
	if (r == 0)
		r = build(&h, err, len);
	hw_close(&h);
	if (r)
		return r;
	found.load_ms = (double)(ls_now_ns() - t0) / 1e6;
	snprintf(found.source, sizeof found.source, "%s",
		 !cfg.has_topology ? "this machine"
		 : cfg.xml	   ? "XML file"
				   : "synthetic");
	found.loaded = true;
	return 0;
}

static void describe(char *buf, size_t len)
{
	if (found.level == THREADS) {
		if (cfg.groups)
			snprintf(buf, len,
				 "thread:%u/%u (threads round-robin in order of first use; cluster c in "
				 "group c*%u/%u)",
				 cfg.threads, cfg.groups, cfg.groups, cfg.threads);
		else
			snprintf(buf, len, "thread:%u (threads round-robin in order of first use)",
				 cfg.threads);
		return;
	}
	int n = snprintf(buf, len, "level=%s%s, %u cluster%s", level_name[found.level],
			 cfg.level == AUTO ? " (auto)" : "", (unsigned)ls_topo.nclusters,
			 ls_topo.nclusters == 1 ? "" : "s");
	if (n > 0 && (size_t)n < len) {
		if (ls_topo.ngroups)
			snprintf(buf + n, len - (size_t)n, ", groups=%s (%u)", level_name[found.group_level],
				 ls_topo.ngroups);
		else
			snprintf(buf + n, len - (size_t)n, ", no groups");
	}
}

/* ---- the options ---- */

static int cluster_start(const struct ls_algo *a, int verbose, char *err, size_t len)
{
	if (!(a->caps & LS_CAP_HIER))
		return 0; /* never map hwloc for the others */
	cfg.verbose = verbose != 0;
	if (load(err, len))
		return -1;
	if (verbose) {
		char d[256];
		describe(d, sizeof d);
		if (found.level == THREADS)
			ls_say("lockswap: clusters %s", d);
		else
			ls_say("lockswap: clusters %s; topology of %s read in %.2f ms", d, found.source,
			       found.load_ms);
	}
	return 0;
}

static const struct ls_option cluster_option = {
    .env = "LOCKSWAP_CLUSTER",
    .desc =
	"cluster level of the hierarchical locks: auto (default), numa, package, l3, l2, core, thread:N[/G]",
    .parse = parse_cluster,
    .start = cluster_start,
};
LS_REGISTER_OPTION(cluster_option);

static const struct ls_option topology_option = {
    .env = "LOCKSWAP_TOPOLOGY",
    .desc = "machine for the hierarchical locks: hwloc synthetic description or XML file (default: this one)",
    .parse = parse_topology,
};
LS_REGISTER_OPTION(topology_option);

/* ---- the lookup's slow path ---- */

static _Atomic uint32_t next_thread;

unsigned ls_cluster_slow(void)
{
	if (ls_topo.threads) {
		/* relaxed: a counter; each thread gets a distinct value */
		uint32_t k = atomic_fetch_add_explicit(&next_thread, 1, memory_order_relaxed);
		uint32_t c = k % atomic_load_explicit(&ls_topo.nclusters, memory_order_relaxed);
		ls_topo_thread_index = c;
		if (cfg.verbose)
			ls_say("lockswap: thread %ld (#%u) is in cluster %u", (long)syscall(SYS_gettid), k,
			       c);
		return c;
	}
	/* acquire: pairs with the release that publishes the table */
	uint32_t n = atomic_load_explicit(&ls_topo.n, memory_order_acquire);
	if (n == 0)
		return 0;	  /* not published (yet): one cluster */
	int cpu = sched_getcpu(); /* vDSO; without rseq, or a CPU beyond the table */
	return cpu < 0 ? 0 : ls_topo.table[(unsigned)cpu % n];
}

/* ---- lockswap --topology ---- */

int ls_topo_setup(const char *cluster, const char *topology, char *err, size_t len)
{
	if (cluster && parse_cluster(cluster, err, len))
		return -1;
	if (topology && parse_topology(topology, err, len))
		return -1;
	return load(err, len);
}

static void out(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1) < 0) { /* nothing */
	}
}

void ls_topo_print(int fd, bool table_only)
{
	unsigned ncpu = ncpu_table;
	if (table_only) {
		for (unsigned c = 0; c < ncpu; c++)
			out(fd, "%s%u", c ? "," : "", cpu_table[c]);
		out(fd, "\n");
		return;
	}
	char d[256];
	describe(d, sizeof d);
	if (found.level == THREADS) {
		out(fd, "clusters: %s\n", d);
		return;
	}
	out(fd, "topology: %s (%u PUs, %u CPUs here), read in %.2f ms\n", found.source, found.npu, found.ncpu,
	    found.load_ms);
	out(fd, "%-8s %8s %9s\n", "level", "objects", "clusters");
	for (size_t i = 0; i < NHW; i++) {
		enum level l = hw_levels[i];
		if (found.objs[l])
			out(fd, "%-8s %8u %9u\n", level_name[l], found.objs[l], found.reached[l]);
		else
			out(fd, "%-8s %8s %9s\n", level_name[l], "-", "-");
	}
	out(fd, "clusters: %s\n", d);
	out(fd, "%5s %8s%s\n", "cpu", "cluster", ls_topo.ngroups ? "    group" : "");
	for (unsigned c = 0; c < ncpu; c++) {
		if (ls_topo.ngroups)
			out(fd, "%5u %8u %8u\n", c, cpu_table[c], group_table[cpu_table[c]]);
		else
			out(fd, "%5u %8u\n", c, cpu_table[c]);
	}
}
