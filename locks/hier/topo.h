/*
 * topo.h - which cluster is this thread on now: cluster ids for the
 * hierarchical locks (locks/hier/), from hwloc.
 *
 * A cluster is a group of CPUs that share something worth keeping a lock
 * inside (Herlihy & Shavit, AMP 7.8: "processors in the same cluster
 * communicate efficiently through a shared cache"): a NUMA node, a package,
 * an L3 or L2 cache, a core. LOCKSWAP_CLUSTER chooses the level:
 *
 *   auto      the outermost of package, numa, l3, l2 that splits this
 *             machine's CPUs into more than one cluster; on a machine with
 *             one of everything, each core is a cluster (the default)
 *   numa, package, l3, l2, core
 *             that level (one cluster if the machine has one of it)
 *   thread:N  no topology: the k-th thread to ask for its cluster (k = 0, 1,
 *             ... in the order of their first hierarchical lock operation)
 *             is in cluster k mod N, for ever; so that two cores can
 *             exercise N clusters deterministically. lockbench applies the
 *             same rule to its own threads (scripts/bench/lockbench.c --clusters).
 *   thread:N/G  the same, and cluster c in group c*G/N (1 < G < N): a
 *             middle level for the three-level locks (hmcs)
 *
 * LOCKSWAP_TOPOLOGY describes a machine we do not have, for hwloc: a
 * synthetic description ("pack:2 [numa] l3:2 core:2 pu:1") or an XML file
 * (a path containing '/' or ending in .xml); real CPU i is then the PU of
 * logical index i mod (number of PUs).
 *
 * Loading. The topology is read only when a hierarchical algorithm is
 * selected (the option's start hook, after the shim's initialisation) or by
 * `lockswap --topology`: libhwloc is dlopen'ed then, with I/O discovery and
 * the x86 CPUID backend off, turned into a plain table cpu -> cluster and a
 * table cluster -> group, and closed again. A run with any other algorithm
 * never maps it. Until the table is published every thread is in cluster 0
 * (hwloc's own mutexes, locked while it loads, take this path).
 *
 * Groups. If a coarser level than the clusters' splits them into more than
 * one and fewer than ls_topo.nclusters groups, it is the middle level of the
 * three-level locks (hmcs); otherwise ngroups is 0.
 *
 * The lookup (ls_cluster) is a few instructions and never a system call:
 * the CPU is the kernel's rseq cpu_id that glibc 2.35+ registers, one load
 * at __rseq_offset from the thread pointer; without rseq, sched_getcpu()
 * (vDSO). A thread may migrate at any time, so a lock reads the cluster
 * once per acquisition and keeps it wherever its release needs it; and a
 * lock sized for fewer clusters (one made before the table was published)
 * folds the id (ls_cluster_fold). Clusters beyond LS_TOPO_MAX_CLUSTERS
 * are folded the same way, modulo.
 */
#ifndef LS_TOPO_H
#define LS_TOPO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"

#define LS_TOPO_MAX_CLUSTERS 64u /* per-lock arrays: 64 lines at most */
#define LS_TOPO_MAX_CPUS 4096u	 /* CPUs beyond share the table modulo */

/* What the lookup reads, in one cache line. The lookup loads a 32-bit
 * index at a fixed offset from the thread pointer and, if it is below n,
 * maps it through table:
 *   CPU mode      the index is rseq's cpu_id (__rseq_offset + 4), table is
 *                 cpu -> cluster; an unregistered rseq area reads -2;
 *   thread:N      the index is the thread's own ls_topo_thread_index
 *                 (UINT32_MAX until it first asks), table is the identity;
 *   before the table is published, and without rseq, n is 0 or the index
 *   UINT32_MAX, and ls_cluster_slow() answers. */
struct ls_topo {
	long off;		    /* of the index, from the thread pointer */
	_Atomic uint32_t n;	    /* entries in table; 0: not published */
	bool threads;		    /* thread:N */
	const uint8_t *table;	    /* index -> cluster */
	_Atomic uint32_t nclusters; /* >= 1 */
	uint32_t ngroups;	    /* 0: no middle level */
	const uint8_t *group_of;    /* cluster -> group, if ngroups */
} __attribute__((aligned(LS_CACHELINE)));
extern struct ls_topo ls_topo;
extern __thread uint32_t ls_topo_thread_index __attribute__((tls_model("initial-exec")));

unsigned ls_cluster_slow(void);

/* The cluster the calling thread is on now, if the fast path knows it. */
static inline bool ls_cluster_fast(unsigned *c)
{
	/* The kernel keeps rseq's cpu_id current for this thread (or the
	 * thread wrote its own index); a plain load, no ordering needed. */
#if defined(__x86_64__) && defined(__SEG_FS) && !defined(__SANITIZE_ADDRESS__)
	uint32_t i = *(volatile const __seg_fs uint32_t *)(uintptr_t)ls_topo.off; /* one %fs load */
#else /* ASan would check the shadow of the offset, not of the address */
	uint32_t i = *(volatile const uint32_t *)((const char *)__builtin_thread_pointer() + ls_topo.off);
#endif
	/* acquire: pairs with the release that publishes table */
	if (LS_UNLIKELY(i >= atomic_load_explicit(&ls_topo.n, memory_order_acquire)))
		return false;
	*c = ls_topo.table[i];
	return true;
}

/* The cluster the calling thread is on now, < ls_topo_clusters(). */
static inline unsigned ls_cluster(void)
{
	unsigned c;
	if (LS_LIKELY(ls_cluster_fast(&c)))
		return c;
	return ls_cluster_slow();
}

/* Folds a cluster id into a lock made for n clusters (n >= 1). */
static inline unsigned ls_cluster_fold(unsigned c, unsigned n)
{
	return LS_LIKELY(c < n) ? c : c % n;
}

/* The number of clusters now (1 until the topology is published, except
 * under thread:N), and the group of cluster c (0 when ngroups is 0). A lock
 * reads both once, at init, and sizes itself from them. */
static inline unsigned ls_topo_clusters(void)
{
	/* acquire: pairs with the release that publishes the tables */
	return atomic_load_explicit(&ls_topo.nclusters, memory_order_acquire);
}
static inline unsigned ls_topo_groups(void)
{
	return ls_topo_clusters() > 1 ? ls_topo.ngroups : 0;
}
static inline unsigned ls_topo_group(unsigned c)
{
	return ls_topo.ngroups ? ls_topo.group_of[c] : 0;
}

/* For `lockswap --topology` and the tests (not for the shim, which goes
 * through the registered options): configures from the given values of
 * LOCKSWAP_CLUSTER and LOCKSWAP_TOPOLOGY (NULL: unset) and loads the
 * topology. Returns 0, or -1 with one line in err. */
int ls_topo_setup(const char *cluster, const char *topology, char *err, size_t errlen);
/* Prints the levels found and the cpu -> cluster table (after
 * ls_topo_setup); `table_only` prints only the comma-separated list of
 * cluster ids of CPUs 0, 1, ... (lockbench --clusters cpus:LIST). */
void ls_topo_print(int fd, bool table_only);

#endif
