/*
 * profile_out.c - the profiler's report, the layer above the recording
 * (profile_record.h): it reads the records, never the reverse. The
 * recording layer calls ls_prof_write (registered by profile.c) once per
 * process, at exit, from _exit/_Exit or from a fatal signal, holding its
 * global lock with every thread's counts merged into the records.
 *
 * Everything here is async-signal-safe, because _exit may be called in a
 * fork child or a signal handler and a fatal signal may arrive anywhere:
 * memory from mmap, files through open/read/write, symbols read from the
 * ELF files themselves (profile_frames.c, stack/elfsym.h: their .symtab,
 * else .dynsym; no dladdr, which takes the loader's lock), no stdio.
 *
 * Steps: turn the records into rows and their raw stacks into (module,
 * offset, symbol) frames, each distinct stack once (the JSON refers to
 * stacks by index: 100,000 mutexes created by one loop share one stack),
 * sort by wait time, and render: the table on stderr (profile_table.c,
 * unless LOCKSWAP_PROFILE_TOP=0), and LOCKSWAP_PROFILE_OUT as JSON or CSV
 * (profile_json.c, profile_csv.c).
 * A fork child and a program started by a profiled one write FILE.PID.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "elfsym.h"
#include "profile_csv.h"
#include "profile_json.h"
#include "profile_out.h"
#include "profile_record.h"
#include "profile_table.h"
#include "tpclock.h"

/* ---- building the rows ---- */

struct build {
	struct ls_elfsyms *syms; /* PROF_MAX_MODULES */
	struct ls_prof p;
	struct ls_prof_stack *stacks;
	const uintptr_t **raw; /* each stack's raw frames, for interning */
	uint32_t *index;       /* open addressing over stacks, UINT32_MAX empty */
	size_t index_cap;
	struct ls_prof_frame *frames;
	size_t nframes, frames_cap;
	unsigned nstacks, stacks_cap;
	struct ls_prof_site *sites;
	size_t nsites;
	/* what was mapped, for the unmap */
	size_t rows_sz, sites_sz, stacks_sz, raw_sz, index_sz, frames_sz;
};

static void frame_of(struct build *b, uintptr_t a, struct ls_prof_frame *out)
{
	unsigned i;
	const struct prof_module *m = ls_prof_module_of(a, &i);
	ls_prof_frame_of(out, a, m ? m->path : NULL, m ? m->base : 0, m ? &b->syms[i] : NULL);
}

static uint32_t hash_raw(const uintptr_t *f, unsigned n)
{
	uint64_t h = n;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ f[i]) * 0x100000001B3ull;
	return (uint32_t)(h ^ (h >> 29));
}

/* The index of a stack in the table, added if new. */
static unsigned intern(struct build *b, const uintptr_t *f, unsigned n)
{
	size_t i = hash_raw(f, n) & (b->index_cap - 1);
	for (;; i = (i + 1) & (b->index_cap - 1)) {
		uint32_t k = b->index[i];
		if (k == UINT32_MAX)
			break;
		if (b->stacks[k].n == n && !memcmp(b->raw[k], f, n * sizeof *f))
			return k;
	}
	unsigned k = b->nstacks++;
	b->index[i] = k;
	b->raw[k] = f;
	struct ls_prof_frame *fr = &b->frames[b->nframes];
	b->nframes += n;
	for (unsigned j = 0; j < n; j++)
		frame_of(b, f[j], &fr[j]);
	b->stacks[k].n = n;
	b->stacks[k].f = fr;
	return k;
}

/* "normal", "recursive+robust", "errorcheck+pi+pshared"...: the type, and
 * the glibc attributes that sent the mutex to glibc. */
static const char *type_name(const struct grec *g)
{
	static const char *const base[] = {"normal", "recursive", "errorcheck", "adaptive"};
	static const char *const flag[] = {"+robust", "+pi", "+pp", "+pshared"};
	static char names[4][16][48];
	if (g->kind == PK_COND)
		return g->glibc && !ls_prof.passthrough ? "cond+pshared" : "cond";
	if (g->kind == PK_SPIN)
		return "spin";
	if (g->kind == PK_RWLOCK) {
		static const char *const rw[] = {"rwlock", "rwlock+writer", "rwlock+pshared",
						 "rwlock+writer+pshared"};
		return rw[((g->mkind & 0xff) == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) +
			  2 * ((g->mkind & RW_PSHARED) != 0)];
	}
	if (g->mkind < 0)
		return "destroyed";
	int t = g->mkind & 3, f = (g->mkind >> 4) & 15;
	char *n = names[t][f];
	if (!n[0]) {
		size_t k = strlen(base[t]);
		memcpy(n, base[t], k + 1);
		for (int i = 0; i < 4; i++)
			if (f & (1 << i)) {
				memcpy(n + k, flag[i], strlen(flag[i]) + 1);
				k += strlen(flag[i]);
			}
	}
	return n;
}

static bool active(const struct grec *g)
{
	for (int i = 0; i < LS_PROF_NCOUNT; i++)
		if (g->n[i])
			return true;
	return g->hold_sum || g->wait_sum;
}

static bool listed(const struct grec *g)
{
	return !g->internal && (g->pid == ls_prof.pid || active(g));
}

static bool any(const uint64_t *h)
{
	for (int i = 0; i < LS_PROF_BUCKETS; i++)
		if (h[i])
			return true;
	return false;
}

/* Under the global lock, counts merged. false: out of memory. */
static bool build(struct build *b)
{
	unsigned nk[4] = {0}; /* rows of each kind, PK_MUTEX... */
	size_t ns = 0, nf = 0;
	for (struct grec *g = ls_prof.all; g; g = g->next_all) {
		if (!listed(g))
			continue;
		nk[g->kind]++;
		nf += g->norigin;
		for (struct gsite *s = g->sites; s; s = s->next_rec)
			if (s->count || s->timeouts) {
				ns++;
				nf += s->nframes;
			}
	}
	unsigned nm = nk[PK_MUTEX], nc = nk[PK_COND], nr = nk[PK_RWLOCK], nsp = nk[PK_SPIN];
	size_t nrows = (size_t)nm + nc + nr + nsp, maxstacks = nrows + ns;
	b->syms = ls_prof_map(PROF_MAX_MODULES * sizeof *b->syms);
	b->rows_sz = (nrows + 1) * sizeof(struct ls_prof_row);
	b->sites_sz = (ns + 1) * sizeof(struct ls_prof_site);
	b->stacks_sz = (maxstacks + 1) * sizeof(struct ls_prof_stack);
	b->raw_sz = (maxstacks + 1) * sizeof(uintptr_t *);
	for (b->index_cap = 64; b->index_cap < 2 * maxstacks; b->index_cap *= 2)
		;
	b->index_sz = b->index_cap * sizeof(uint32_t);
	b->frames_sz = (nf + 1) * sizeof(struct ls_prof_frame);
	struct ls_prof_row *rows = ls_prof_map(b->rows_sz);
	b->sites = ls_prof_map(b->sites_sz);
	b->stacks = ls_prof_map(b->stacks_sz);
	b->raw = ls_prof_map(b->raw_sz);
	b->index = ls_prof_map(b->index_sz);
	b->frames = ls_prof_map(b->frames_sz);
	if (!b->syms || !rows || !b->sites || !b->stacks || !b->raw || !b->index || !b->frames)
		return false;
	memset(b->index, 0xff, b->index_sz);
	b->p.mutex = rows;
	b->p.cond = rows + nm;
	b->p.rwlock = rows + nm + nc;
	b->p.spin = rows + nm + nc + nr;
	struct ls_prof_row *next[4] = {b->p.mutex, b->p.cond, b->p.rwlock, b->p.spin};
	for (struct grec *g = ls_prof.all; g; g = g->next_all) {
		if (!listed(g))
			continue;
		struct ls_prof_row *r = next[g->kind]++;
		r->id = g->id;
		r->cond = g->kind == PK_COND;
		r->rwlock = g->kind == PK_RWLOCK;
		r->spin = g->kind == PK_SPIN;
		r->glibc = g->glibc;
		r->type = type_name(g);
		r->origin = g->origin == ORIGIN_INIT ? "init" : "first-use";
		r->ended = g->ended == END_DESTROYED ? "destroyed" : g->ended == END_REUSED ? "reused" : "";
		r->address = g->addr;
		r->algo = g->algo;
		r->rule = g->rule;
		r->stack = g->norigin ? intern(b, g->origin_frames, g->norigin) : LS_PROF_NO_STACK;
		memcpy(r->n, g->n, sizeof r->n);
		r->max_waiters = atomic_load_explicit(&g->max_waiters, memory_order_relaxed);
		r->wait_ns = g->wait_sum;
		r->wait_max = g->wait_max;
		r->hold_ns = g->hold_sum;
		r->hold_max = g->hold_max;
		r->rd_wait_ns = g->rd_wait_sum;
		r->rd_hold_ns = g->rd_hold_sum;
		r->wait_h = any(g->wait_h) ? g->wait_h : NULL;
		r->hold_h = any(g->hold_h) ? g->hold_h : NULL;
		r->sites = &b->sites[b->nsites];
		for (struct gsite *s = g->sites; s; s = s->next_rec) {
			if (!s->count && !s->timeouts)
				continue;
			struct ls_prof_site *x = &b->sites[b->nsites++];
			x->count = s->count;
			x->timeouts = s->timeouts;
			x->wait_ns = s->wait_ns;
			x->stack = intern(b, s->frames, s->nframes);
			x->read = s->read;
			r->nsites++;
		}
	}
	struct ls_prof_head *h = &b->p.h;
	h->pid = ls_prof.pid;
	h->program = ls_prof.exe;
	h->algo = ls_prof.algo;
	h->wait = ls_prof.passthrough ? "glibc" : ls_prof.wait;
	h->rwalgo = ls_prof.rwalgo;
	h->spinalgo = ls_prof.spinalgo;
	h->duration_ns = ls_tp_now() - ls_prof.start_ns;
	h->threads = ls_prof.threads;
	h->cpus = ls_prof.cpus;
	h->unrecorded = atomic_load_explicit(&ls_prof.unrecorded, memory_order_relaxed);
	h->stackless = atomic_load_explicit(&ls_prof.stackless, memory_order_relaxed);
	h->sample = ls_prof.sample;
	h->frames = ls_prof.frames;
	h->nmutex = nm;
	h->ncond = nc;
	h->nrwlock = nr;
	h->nspin = nsp;
	b->p.stacks = b->stacks;
	b->p.nstacks = b->nstacks;
	ls_prof_sort(b->p.mutex, nm, LS_SORT_WAIT);
	ls_prof_sort(b->p.cond, nc, LS_SORT_WAIT);
	ls_prof_sort(b->p.rwlock, nr, LS_SORT_WAIT);
	ls_prof_sort(b->p.spin, nsp, LS_SORT_WAIT);
	return true;
}

static void unbuild(struct build *b)
{
	for (unsigned i = 0; b->syms && i < PROF_MAX_MODULES; i++)
		if (b->syms[i].tried)
			ls_elfsyms_free(&b->syms[i]);
	ls_prof_unmap(b->syms, PROF_MAX_MODULES * sizeof *b->syms);
	ls_prof_unmap(b->p.mutex, b->rows_sz);
	ls_prof_unmap(b->sites, b->sites_sz);
	ls_prof_unmap(b->stacks, b->stacks_sz);
	ls_prof_unmap(b->raw, b->raw_sz);
	ls_prof_unmap(b->index, b->index_sz);
	ls_prof_unmap(b->frames, b->frames_sz);
}

/* ---- writing ---- */

static void say(const char *a, const char *b, const char *c)
{
	struct ls_out o;
	ls_out_init(&o, ls_prof.err_fd);
	ls_out_str(&o, a);
	ls_out_str(&o, b ? b : "");
	ls_out_str(&o, c ? c : "");
	ls_out_str(&o, "\n");
	ls_out_flush(&o);
}

static void write_file(const struct ls_prof *p)
{
	char path[4096 + 16];
	size_t n = strlen(ls_prof.out);
	memcpy(path, ls_prof.out, n + 1);
	if (ls_prof.forked || ls_prof.descendant) {
		path[n] = '.';
		ls_fmt_u64(path + n + 1, (uint64_t)ls_prof.pid);
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		say("lockswap profile: cannot write ", path, ": open failed");
		return;
	}
	struct ls_out *o = ls_prof_map(sizeof *o);
	if (o) {
		ls_out_init(o, fd);
		if (ls_prof.csv)
			ls_prof_csv(o, p);
		else
			ls_prof_json(o, p);
		if (o->failed)
			say("lockswap profile: cannot write ", path, ": write failed");
		else
			say("lockswap profile: saved to ", path, NULL);
		ls_prof_unmap(o, sizeof *o);
	}
	close(fd);
}

void ls_prof_write(void)
{
	struct build b;
	memset(&b, 0, sizeof b);
	if (!build(&b)) {
		say("lockswap profile: not written: out of memory", NULL, NULL);
	} else if (!b.p.h.nmutex && !b.p.h.ncond && !b.p.h.nrwlock && !b.p.h.nspin) {
		/* nothing to report; a child, or a program run by the profiled
		 * one (a shell, timeout), says nothing at all */
		if (!ls_prof.forked && !ls_prof.descendant)
			say("lockswap profile: no mutex, condition variable, rwlock or spinlock was used by ",
			    ls_prof.exe, ls_prof.out ? " (nothing saved)" : "");
	} else {
		if (ls_prof.top) {
			struct ls_out *o = ls_prof_map(sizeof *o);
			if (o) {
				ls_out_init(o, ls_prof.err_fd);
				ls_prof_table(o, &b.p, ls_prof.top, 3, false);
				ls_prof_unmap(o, sizeof *o);
			}
		}
		if (ls_prof.out)
			write_file(&b.p);
	}
	unbuild(&b);
}
