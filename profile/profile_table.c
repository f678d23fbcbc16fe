/*
 * profile_table.c - the table of a profile (stderr, `lockswap report`).
 * Async-signal-safe: output through write(2) only, no allocation, no
 * locale (see profile_table.h).
 */
#include "profile_table.h"

/* v/div with `decimals` decimals, padded (ls_out_pad) */
static void fixed_pad(struct ls_out *o, uint64_t v, uint64_t div, int decimals, int width)
{
	char b[48];
	ls_out_pad(o, ls_fmt_fixed(b, v, div, decimals), width);
}

/* Where a lock was created: the frame of its stack that names it, or "?". */
static void where_out(struct ls_out *o, const struct ls_prof *p, unsigned stack)
{
	if (stack >= p->nstacks || !p->stacks[stack].n) {
		ls_out_str(o, "?");
		return;
	}
	const struct ls_prof_stack *s = &p->stacks[stack];
	ls_prof_frame_out(o, &s->f[ls_prof_naming_frame(s)]);
}

/* A bucket's lower bound, 2^b ns, in a readable unit. */
static void bound_out(struct ls_out *o, int b)
{
	uint64_t lo = b ? 1ull << b : 0;
	if (lo < 1000) {
		ls_out_u64(o, lo);
		ls_out_str(o, "ns");
	} else if (lo < 1000000) {
		ls_out_fixed(o, lo, 1000, 1);
		ls_out_str(o, "us");
	} else if (lo < 1000000000) {
		ls_out_fixed(o, lo, 1000000, 1);
		ls_out_str(o, "ms");
	} else {
		ls_out_fixed(o, lo, 1000000000, 1);
		ls_out_str(o, "s");
	}
}

static void hist_out(struct ls_out *o, const char *what, const uint64_t *h)
{
	bool any = false;
	if (!h)
		return;
	for (int b = 0; b < LS_PROF_BUCKETS; b++)
		any |= h[b] != 0;
	if (!any)
		return;
	ls_out_str(o, "         ");
	ls_out_str(o, what);
	ls_out_str(o, " histogram (from: count):");
	for (int b = 0; b < LS_PROF_BUCKETS; b++) {
		if (!h[b])
			continue;
		ls_out_str(o, " ");
		bound_out(o, b);
		ls_out_str(o, ":");
		ls_out_u64(o, h[b]);
	}
	ls_out_str(o, "\n");
}

/* "4 mutexes (2 contended)" */
static void count_out(struct ls_out *o, const struct ls_prof_row *rows, unsigned n, const char *one,
		      const char *many)
{
	uint64_t contended = 0;
	for (unsigned i = 0; i < n; i++)
		contended += ls_prof_waits(&rows[i]) != 0;
	ls_out_u64(o, n);
	ls_out_str(o, n == 1 ? one : many);
	ls_out_u64(o, contended);
	ls_out_str(o, " contended)");
}

static void head_out(struct ls_out *o, const struct ls_prof *p)
{
	const struct ls_prof_head *h = &p->h;
	ls_out_str(o, "lockswap profile: ");
	ls_out_str(o, h->program && *h->program ? h->program : "?");
	ls_out_str(o, " (pid ");
	ls_out_u64(o, (uint64_t)h->pid);
	bool map = false;
	for (unsigned i = 0; i < h->nmutex && !map; i++)
		map = p->mutex[i].algo != NULL;
	ls_out_str(o, map ? "), algorithm per mutex (rules; no rule: " : "), algorithm ");
	ls_out_str(o, h->algo ? h->algo : "?");
	ls_out_str(o, map ? ")" : "");
	ls_out_str(o, ", wait ");
	ls_out_str(o, h->wait ? h->wait : "?");
	if (h->nrwlock && h->rwalgo) {
		bool rwmap = false;
		for (unsigned i = 0; i < h->nrwlock && !rwmap; i++)
			rwmap = p->rwlock[i].algo != NULL;
		ls_out_str(o, rwmap ? ", algorithm per rwlock (rules; no rule: " : ", rwlocks ");
		ls_out_str(o, h->rwalgo);
		ls_out_str(o, rwmap ? ")" : "");
	}
	if (h->nspin && h->spinalgo) {
		ls_out_str(o, ", spinlocks ");
		ls_out_str(o, h->spinalgo);
	}
	ls_out_str(o, ", ");
	ls_out_fixed(o, h->duration_ns, 1000000000, 3);
	ls_out_str(o, " s, ");
	ls_out_u64(o, h->threads);
	ls_out_str(o, h->threads == 1 ? " thread\n" : " threads\n");
	ls_out_str(o, "lockswap profile: ");
	count_out(o, p->mutex, h->nmutex, " mutex (", " mutexes (");
	ls_out_str(o, ", ");
	ls_out_u64(o, h->ncond);
	ls_out_str(o, h->ncond == 1 ? " condvar" : " condvars");
	if (h->nrwlock) {
		ls_out_str(o, ", ");
		count_out(o, p->rwlock, h->nrwlock, " rwlock (", " rwlocks (");
	}
	if (h->nspin) {
		ls_out_str(o, ", ");
		count_out(o, p->spin, h->nspin, " spinlock (", " spinlocks (");
	}
	ls_out_str(o, "; call sites: ");
	if (h->sample > 1) {
		ls_out_str(o, "1 in ");
		ls_out_u64(o, h->sample);
		ls_out_str(o, " contended acquisitions, ");
	} else {
		ls_out_str(o, "every contended acquisition, ");
	}
	ls_out_u64(o, h->frames);
	ls_out_str(o, " frames\n");
	if (h->unrecorded || h->stackless) {
		ls_out_str(o, "lockswap profile: ");
		ls_out_u64(o, h->unrecorded);
		ls_out_str(o, " events not recorded (out of memory), ");
		ls_out_u64(o, h->stackless);
		ls_out_str(o, " stacks not taken (fork in progress)\n");
	}
}

static const char mutex_cols[] = "     #   acquired  contended  tryfail  timeouts  handoffs  maxq     wait ms"
				 "  wait max us     hold ms  hold avg us  hold max us  type        where\n";
static const char cond_cols[] =
    "     #      waits  timeouts    signals  broadcasts     wait ms  wait max us  where\n";
static const char rw_cols[] =
    "     #      reads     writes  rd cont  wr cont  tryfail  timeouts  handoffs  maxq"
    "  rd wait ms  wr wait ms  wait max us  rd hold ms  wr hold ms  hold max us  type   "
    "     where\n";

static void type_where_out(struct ls_out *o, const struct ls_prof *p, const struct ls_prof_row *r)
{
	ls_out_str(o, "  ");
	ls_out_pad(o, r->type, -11);
	ls_out_str(o, " ");
	where_out(o, p, r->stack);
	ls_out_str(o, "\n         ");
}

/* "init, glibc's mutex, destroyed at 0x..." */
static void origin_out(struct ls_out *o, const struct ls_prof_row *r, const char *what)
{
	ls_out_str(o, r->origin);
	if (r->glibc) {
		ls_out_str(o, ", glibc's ");
		ls_out_str(o, what);
	}
	if (r->algo) {
		ls_out_str(o, ", ");
		ls_out_str(o, r->algo);
		ls_out_str(o, " by rule ");
		ls_out_str(o, r->rule ? r->rule : "?");
	}
	if (*r->ended) {
		ls_out_str(o, ", ");
		ls_out_str(o, r->ended);
	}
	ls_out_str(o, " at ");
	ls_out_hex(o, r->address);
	ls_out_str(o, "\n");
}

/* Under a lock's row: its creation stack and histograms (detail), and its
 * call sites. */
static void row_tail(struct ls_out *o, const struct ls_prof *p, const struct ls_prof_row *r, unsigned sites,
		     bool detail)
{
	if (detail && r->stack < p->nstacks) {
		const struct ls_prof_stack *s = &p->stacks[r->stack];
		ls_out_str(o, "         created at:\n");
		for (unsigned f = 0; f < s->n; f++) {
			ls_out_str(o, "             ");
			ls_prof_frame_out(o, &s->f[f]);
			ls_out_str(o, "\n");
		}
	}
	if (detail) {
		hist_out(o, "wait", r->wait_h);
		hist_out(o, "hold", r->hold_h);
	}
	uint64_t all = ls_prof_waits(r);
	for (unsigned i = 0; i < r->nsites && (detail || i < sites); i++) {
		const struct ls_prof_site *s = &r->sites[i];
		ls_out_str(o, "         site ");
		ls_out_u64(o, i + 1);
		if (r->rwlock)
			ls_out_str(o, s->read ? " (read)" : " (write)");
		ls_out_str(o, ": ");
		ls_out_u64(o, s->count);
		ls_out_str(o, " contended");
		if (s->timeouts) {
			ls_out_str(o, ", ");
			ls_out_u64(o, s->timeouts);
			ls_out_str(o, " timeouts");
		}
		if (all) {
			ls_out_str(o, " (");
			ls_out_u64(o, (100 * (s->count + s->timeouts) + all / 2) / all);
			ls_out_str(o, "%)");
		}
		ls_out_str(o, ", wait ");
		ls_out_fixed(o, s->wait_ns, 1000000, 3);
		ls_out_str(o, " ms\n");
		const struct ls_prof_stack *st = s->stack < p->nstacks ? &p->stacks[s->stack] : NULL;
		if (!st || !st->n)
			ls_out_str(o, "             (no stack: taken while a fork was in progress)\n");
		for (unsigned f = 0; st && f < st->n; f++) {
			ls_out_str(o, "             ");
			ls_prof_frame_out(o, &st->f[f]);
			ls_out_str(o, "\n");
		}
	}
	if (!detail && r->nsites > sites) {
		ls_out_str(o, "         (");
		ls_out_u64(o, r->nsites - sites);
		ls_out_str(o, " more call sites: lockswap report)\n");
	}
}

/* A mutex's row, or a spinlock's (the same columns; it has no timed lock). */
static void mutex_out(struct ls_out *o, const struct ls_prof *p, const struct ls_prof_row *r, unsigned sites,
		      bool detail)
{
	uint64_t acq = ls_prof_acquired(r);
	ls_out_upad(o, r->id, 6);
	ls_out_upad(o, acq, 11);
	ls_out_upad(o, r->n[LS_PROF_CONTENDED], 11);
	ls_out_upad(o, r->n[LS_PROF_TRYFAIL], 9);
	ls_out_upad(o, r->n[LS_PROF_TIMEOUT], 10);
	ls_out_upad(o, r->n[LS_PROF_HANDOFF], 10);
	ls_out_upad(o, r->max_waiters, 6);
	fixed_pad(o, r->wait_ns, 1000000, 3, 12);
	fixed_pad(o, r->wait_max, 1000, 2, 13);
	fixed_pad(o, r->hold_ns, 1000000, 3, 12);
	fixed_pad(o, acq ? r->hold_ns / acq : 0, 1000, 2, 13);
	fixed_pad(o, r->hold_max, 1000, 2, 13);
	type_where_out(o, p, r);
	ls_out_u64(o, r->n[LS_PROF_LOCK]);
	ls_out_str(o, " lock, ");
	ls_out_u64(o, r->n[LS_PROF_TRY]);
	if (r->spin) {
		ls_out_str(o, " trylock; ");
		origin_out(o, r, "spinlock");
	} else {
		ls_out_str(o, " trylock, ");
		ls_out_u64(o, r->n[LS_PROF_TIMED]);
		ls_out_str(o, " timedlock; ");
		origin_out(o, r, "mutex");
	}
	row_tail(o, p, r, sites, detail);
}

/* An rwlock's row: reads and writes apart, then the same tail. */
static void rw_out(struct ls_out *o, const struct ls_prof *p, const struct ls_prof_row *r, unsigned sites,
		   bool detail)
{
	const uint64_t *n = r->n;
	ls_out_upad(o, r->id, 6);
	ls_out_upad(o, n[LS_PROF_RDLOCK] + n[LS_PROF_RDTRY] + n[LS_PROF_RDTIMED], 11);
	ls_out_upad(o, n[LS_PROF_LOCK] + n[LS_PROF_TRY] + n[LS_PROF_TIMED], 11);
	ls_out_upad(o, n[LS_PROF_RDCONTENDED], 9);
	ls_out_upad(o, n[LS_PROF_CONTENDED], 9);
	ls_out_upad(o, n[LS_PROF_RDTRYFAIL] + n[LS_PROF_TRYFAIL], 9);
	ls_out_upad(o, n[LS_PROF_RDTIMEOUT] + n[LS_PROF_TIMEOUT], 10);
	ls_out_upad(o, n[LS_PROF_HANDOFF], 10);
	ls_out_upad(o, r->max_waiters, 6);
	fixed_pad(o, r->rd_wait_ns, 1000000, 3, 12);
	fixed_pad(o, r->wait_ns - r->rd_wait_ns, 1000000, 3, 12);
	fixed_pad(o, r->wait_max, 1000, 2, 13);
	fixed_pad(o, r->rd_hold_ns, 1000000, 3, 12);
	fixed_pad(o, r->hold_ns - r->rd_hold_ns, 1000000, 3, 12);
	fixed_pad(o, r->hold_max, 1000, 2, 13);
	type_where_out(o, p, r);
	static const char *const what[] = {" rdlock, ", " tryrdlock, ", " timedrdlock; ",
					   " wrlock, ", " trywrlock, ", " timedwrlock; "};
	static const int which[] = {LS_PROF_RDLOCK, LS_PROF_RDTRY, LS_PROF_RDTIMED,
				    LS_PROF_LOCK,   LS_PROF_TRY,   LS_PROF_TIMED};
	for (int i = 0; i < 6; i++) {
		ls_out_u64(o, n[which[i]]);
		ls_out_str(o, what[i]);
	}
	origin_out(o, r, "rwlock");
	row_tail(o, p, r, sites, detail);
}

/* "lockswap profile: top N of M things (note):" and the column names;
 * returns N. */
static unsigned top_out(struct ls_out *o, unsigned top, unsigned all, const char *one, const char *many,
			const char *note, const char *cols)
{
	unsigned n = all < top ? all : top;
	if (!n)
		return 0;
	ls_out_str(o, "lockswap profile: top ");
	ls_out_u64(o, n);
	ls_out_str(o, " of ");
	ls_out_u64(o, all);
	ls_out_str(o, all == 1 ? one : many);
	ls_out_str(o, note);
	ls_out_str(o, cols);
	return n;
}

void ls_prof_table(struct ls_out *o, const struct ls_prof *p, unsigned top, unsigned sites, bool detail)
{
	head_out(o, p);
	unsigned nm =
	    top_out(o, top, p->h.nmutex, " mutex", " mutexes", " (times: ms, max and avg us):\n", mutex_cols);
	for (unsigned i = 0; i < nm; i++)
		mutex_out(o, p, &p->mutex[i], sites, detail);
	unsigned nc = top_out(o, top, p->h.ncond, " condvar", " condvars", ":\n", cond_cols);
	if (nc) {
		for (unsigned i = 0; i < nc; i++) {
			const struct ls_prof_row *r = &p->cond[i];
			ls_out_upad(o, r->id, 6);
			ls_out_upad(o, r->n[LS_PROF_WAITS], 11);
			ls_out_upad(o, r->n[LS_PROF_CTIMEOUT], 10);
			ls_out_upad(o, r->n[LS_PROF_SIGNAL], 11);
			ls_out_upad(o, r->n[LS_PROF_BROADCAST], 12);
			fixed_pad(o, r->wait_ns, 1000000, 3, 12);
			fixed_pad(o, r->wait_max, 1000, 2, 13);
			ls_out_str(o, "  ");
			where_out(o, p, r->stack);
			ls_out_str(o, "\n");
		}
	}
	unsigned nr =
	    top_out(o, top, p->h.nrwlock, " rwlock", " rwlocks", " (times: ms, max us):\n", rw_cols);
	for (unsigned i = 0; i < nr; i++)
		rw_out(o, p, &p->rwlock[i], sites, detail);
	unsigned ns = top_out(o, top, p->h.nspin, " spinlock", " spinlocks",
			      " (times: ms, max and avg us):\n", mutex_cols);
	for (unsigned i = 0; i < ns; i++)
		mutex_out(o, p, &p->spin[i], sites, detail);
	ls_out_flush(o);
}
