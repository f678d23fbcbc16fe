/*
 * profile_csv.c - a profile as CSV (LOCKSWAP_PROFILE_OUT=FILE.csv, `lockswap
 * report --csv`): one row per lock and per call site. Async-signal-safe:
 * output through write(2) only, no allocation, no locale (see
 * profile_csv.h).
 */
#include <string.h>

#include "profile_csv.h"

static const char csv_header[] =
    "record,id,address,type,glibc,origin,ended,where,lock,trylock,timedlock,contended,trylock_failed,"
    "timeouts,handoffs,max_waiters,wait_ns,wait_max_ns,hold_ns,hold_max_ns,waits,signals,broadcasts,"
    "stack,wait_hist,hold_hist,read_lock,read_trylock,read_timedlock,read_contended,read_trylock_failed,"
    "read_timeouts,read_wait_ns,read_hold_ns,mode,algorithm,rule\n";

/* a field that may hold commas or quotes */
static void csv_quoted_stack(struct ls_out *o, const struct ls_prof *p, unsigned stack, bool whole)
{
	ls_out_str(o, "\"");
	if (stack < p->nstacks) {
		const struct ls_prof_stack *s = &p->stacks[stack];
		unsigned from = whole ? 0 : ls_prof_naming_frame(s),
			 to = whole ? s->n : (s->n ? from + 1 : 0);
		for (unsigned f = from; f < to; f++) {
			if (f > from)
				ls_out_str(o, " <- ");
			/* a quote in a path or symbol would end the field: make it ' */
			if (sizeof o->buf - o->n < 4096)
				ls_out_flush(o);
			size_t before = o->n;
			ls_prof_frame_out(o, &s->f[f]);
			for (size_t i = before; i < o->n && o->n >= before; i++)
				if (o->buf[i] == '"')
					o->buf[i] = '\'';
		}
	}
	ls_out_str(o, "\"");
}

static void csv_hist(struct ls_out *o, const uint64_t *h)
{
	int last = -1;
	for (int b = 0; h && b < LS_PROF_BUCKETS; b++)
		if (h[b])
			last = b;
	for (int b = 0; b <= last; b++) {
		if (b)
			ls_out_str(o, " ");
		ls_out_u64(o, h[b]);
	}
}

static void csv_u(struct ls_out *o, uint64_t v)
{
	ls_out_u64(o, v);
	ls_out_str(o, ",");
}

/* An rwlock's reads (its writes are in the mutex columns): the last
 * columns but mode, empty for the other records. */
static void csv_reads(struct ls_out *o, const struct ls_prof_row *r)
{
	if (!r || !r->rwlock) {
		ls_out_str(o, ",,,,,,,,");
		return;
	}
	for (int c = LS_PROF_RDLOCK; c <= LS_PROF_RDTIMEOUT; c++) {
		ls_out_str(o, ",");
		ls_out_u64(o, r->n[c]);
	}
	ls_out_str(o, ",");
	ls_out_u64(o, r->rd_wait_ns);
	ls_out_str(o, ",");
	ls_out_u64(o, r->rd_hold_ns);
}

void ls_prof_csv(struct ls_out *o, const struct ls_prof *p)
{
	static const char *const record[] = {"mutex,", "cond,", "rwlock,", "spin,"};
	const struct ls_prof_row *const all[] = {p->mutex, p->cond, p->rwlock, p->spin};
	const unsigned count[] = {p->h.nmutex, p->h.ncond, p->h.nrwlock, p->h.nspin};
	ls_out_str(o, csv_header);
	for (int pass = 0; pass < 4; pass++) {
		const struct ls_prof_row *rows = all[pass];
		unsigned n = count[pass];
		for (unsigned i = 0; i < n; i++) {
			const struct ls_prof_row *r = &rows[i];
			ls_out_str(o, record[pass]);
			csv_u(o, r->id);
			ls_out_hex(o, r->address);
			ls_out_str(o, ",");
			ls_out_str(o, r->type);
			ls_out_str(o, r->glibc ? ",1," : ",0,");
			ls_out_str(o, r->origin);
			ls_out_str(o, ",");
			ls_out_str(o, r->ended);
			ls_out_str(o, ",");
			csv_quoted_stack(o, p, r->stack, false);
			ls_out_str(o, ",");
			if (r->cond) {
				ls_out_str(o, ",,,,,");
				csv_u(o, r->n[LS_PROF_CTIMEOUT]);
				ls_out_str(o, ",,");
				csv_u(o, r->wait_ns);
				csv_u(o, r->wait_max);
				ls_out_str(o, ",,");
				csv_u(o, r->n[LS_PROF_WAITS]);
				csv_u(o, r->n[LS_PROF_SIGNAL]);
				csv_u(o, r->n[LS_PROF_BROADCAST]);
			} else {
				for (int c = 0; c < LS_PROF_NMUTEX; c++)
					csv_u(o, r->n[c]);
				csv_u(o, r->max_waiters);
				csv_u(o, r->wait_ns);
				csv_u(o, r->wait_max);
				csv_u(o, r->hold_ns);
				csv_u(o, r->hold_max);
				ls_out_str(o, ",,,");
			}
			csv_quoted_stack(o, p, r->stack, true);
			ls_out_str(o, ",");
			csv_hist(o, r->wait_h);
			ls_out_str(o, ",");
			if (!r->cond)
				csv_hist(o, r->hold_h);
			csv_reads(o, r);
			/* mode (sites only); under an algorithm map, the
			 * lock's algorithm and rule (a rule has no comma) */
			ls_out_str(o, ",,");
			if (r->algo) {
				ls_out_str(o, r->algo);
				ls_out_str(o, ",\"");
				ls_out_str(o, r->rule ? r->rule : "?");
				ls_out_str(o, "\"");
			} else {
				ls_out_str(o, ",");
			}
			ls_out_str(o, "\n");
			for (unsigned s = 0; s < r->nsites; s++) {
				const struct ls_prof_site *st = &r->sites[s];
				ls_out_str(o, "site,");
				csv_u(o, r->id);
				ls_out_str(o, ",,,,,");
				csv_quoted_stack(o, p, st->stack, false);
				ls_out_str(o, ",,,,");
				csv_u(o, st->count);
				ls_out_str(o, ",");
				csv_u(o, st->timeouts);
				ls_out_str(o, ",,");
				csv_u(o, st->wait_ns);
				ls_out_str(o, ",,,,,,");
				csv_quoted_stack(o, p, st->stack, true);
				ls_out_str(o, ",,");
				csv_reads(o, NULL);
				ls_out_str(o, r->rwlock ? (st->read ? ",read,,\n" : ",write,,\n") : ",,,\n");
			}
		}
	}
	ls_out_flush(o);
}
