/*
 * profile_json.c - a profile as JSON: the saved profile (LOCKSWAP_PROFILE_OUT),
 * which `lockswap report` reads back. Async-signal-safe: output through
 * write(2) only, no allocation, no locale (see profile_json.h).
 */
#include <string.h>

#include "profile_json.h"

static void json_str(struct ls_out *o, const char *s, size_t n)
{
	ls_out_str(o, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			ls_out_mem(o, e, 2);
		} else if (c < 0x20) {
			char e[6] = {
			    '\\', 'u', '0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15]};
			ls_out_mem(o, e, 6);
		} else {
			ls_out_mem(o, (const char *)&c, 1);
		}
	}
	ls_out_str(o, "\"");
}

static void json_kv_u64(struct ls_out *o, const char *k, uint64_t v)
{
	ls_out_str(o, ",\"");
	ls_out_str(o, k);
	ls_out_str(o, "\":");
	ls_out_u64(o, v);
}

static void json_kv_str(struct ls_out *o, const char *k, const char *v)
{
	ls_out_str(o, ",\"");
	ls_out_str(o, k);
	ls_out_str(o, "\":");
	json_str(o, v ? v : "", v ? strlen(v) : 0);
}

static void json_hist(struct ls_out *o, const char *k, const uint64_t *h)
{
	int last = -1;
	for (int b = 0; h && b < LS_PROF_BUCKETS; b++)
		if (h[b])
			last = b;
	ls_out_str(o, ",\"");
	ls_out_str(o, k);
	ls_out_str(o, "\":[");
	for (int b = 0; b <= last; b++) {
		if (b)
			ls_out_str(o, ",");
		ls_out_u64(o, h[b]);
	}
	ls_out_str(o, "]");
}

const char *const ls_prof_mutex_counts[LS_PROF_NMUTEX] = {
    "lock", "trylock", "timedlock", "contended", "trylock_failed", "timeouts", "handoffs"};
const char *const ls_prof_cond_counts[4] = {"waits", "timeouts", "signals", "broadcasts"};
const char *const ls_prof_rw_counts[LS_PROF_NCOUNT] = {
    "wrlock", "trywrlock", "timedwrlock", "write_contended", "trywrlock_failed", "write_timeouts", "handoffs",
    "rdlock", "tryrdlock", "timedrdlock", "read_contended",  "tryrdlock_failed", "read_timeouts"};

/* One row of "mutexes", "condvars", "rwlocks" or "spinlocks". */
static void json_row(struct ls_out *o, const struct ls_prof_row *r, bool first)
{
	ls_out_str(o, first ? "\n{\"id\":" : ",\n{\"id\":");
	ls_out_u64(o, r->id);
	json_kv_u64(o, "address", r->address);
	json_kv_str(o, "type", r->type);
	ls_out_str(o, r->glibc ? ",\"glibc\":true" : ",\"glibc\":false");
	json_kv_str(o, "origin", r->origin);
	json_kv_str(o, "ended", r->ended);
	if (r->algo) { /* under an algorithm map only: older readers ignore them */
		json_kv_str(o, "algorithm", r->algo);
		json_kv_str(o, "rule", r->rule);
	}
	if (r->stack != LS_PROF_NO_STACK)
		json_kv_u64(o, "stack", r->stack);
	if (r->cond) {
		for (int c = 0; c < 4; c++)
			json_kv_u64(o, ls_prof_cond_counts[c], r->n[c]);
	} else {
		int nc = r->rwlock ? LS_PROF_NCOUNT : LS_PROF_NMUTEX;
		for (int c = 0; c < nc; c++)
			json_kv_u64(o, r->rwlock ? ls_prof_rw_counts[c] : ls_prof_mutex_counts[c], r->n[c]);
		json_kv_u64(o, "max_waiters", r->max_waiters);
	}
	json_kv_u64(o, "wait_ns", r->wait_ns);
	if (r->rwlock)
		json_kv_u64(o, "read_wait_ns", r->rd_wait_ns);
	json_kv_u64(o, "wait_max_ns", r->wait_max);
	json_hist(o, "wait_hist", r->wait_h);
	if (r->cond) {
		ls_out_str(o, "}");
		return;
	}
	json_kv_u64(o, "hold_ns", r->hold_ns);
	if (r->rwlock)
		json_kv_u64(o, "read_hold_ns", r->rd_hold_ns);
	json_kv_u64(o, "hold_max_ns", r->hold_max);
	json_hist(o, "hold_hist", r->hold_h);
	ls_out_str(o, ",\"sites\":[");
	for (unsigned s = 0; s < r->nsites; s++) {
		ls_out_str(o, s ? ",{\"stack\":" : "{\"stack\":");
		ls_out_u64(o, r->sites[s].stack);
		if (r->rwlock)
			ls_out_str(o, r->sites[s].read ? ",\"mode\":\"read\"" : ",\"mode\":\"write\"");
		json_kv_u64(o, "contended", r->sites[s].count);
		json_kv_u64(o, "timeouts", r->sites[s].timeouts);
		json_kv_u64(o, "wait_ns", r->sites[s].wait_ns);
		ls_out_str(o, "}");
	}
	ls_out_str(o, "]}");
}

void ls_prof_json(struct ls_out *o, const struct ls_prof *p)
{
	const struct ls_prof_head *h = &p->h;
	ls_out_str(o, "{\"lockswap_profile\":1");
	json_kv_u64(o, "pid", (uint64_t)h->pid);
	json_kv_str(o, "program", h->program);
	json_kv_str(o, "algorithm", h->algo);
	json_kv_str(o, "wait", h->wait);
	if (h->rwalgo)
		json_kv_str(o, "rwlock_algorithm", h->rwalgo);
	if (h->spinalgo)
		json_kv_str(o, "spin_algorithm", h->spinalgo);
	json_kv_u64(o, "duration_ns", h->duration_ns);
	json_kv_u64(o, "threads", h->threads);
	if (h->cpus)
		json_kv_u64(o, "cpus", h->cpus);
	json_kv_u64(o, "sample", h->sample);
	json_kv_u64(o, "frames", h->frames);
	json_kv_u64(o, "unrecorded", h->unrecorded);
	json_kv_u64(o, "stackless", h->stackless);
	ls_out_str(o, ",\n\"stacks\":[");
	for (unsigned i = 0; i < p->nstacks; i++) {
		const struct ls_prof_stack *s = &p->stacks[i];
		ls_out_str(o, i ? ",\n[" : "\n[");
		for (unsigned f = 0; f < s->n; f++) {
			const struct ls_prof_frame *fr = &s->f[f];
			ls_out_str(o, f ? ",{\"module\":" : "{\"module\":");
			json_str(o, fr->module ? fr->module : "", fr->module ? strlen(fr->module) : 0);
			ls_out_str(o, ",\"offset\":");
			ls_out_u64(o, fr->offset);
			if (fr->sym) {
				ls_out_str(o, ",\"symbol\":");
				json_str(o, fr->sym, fr->symlen);
				if (fr->symoff != LS_PROF_NO_OFFSET)
					json_kv_u64(o, "symbol_offset", fr->symoff);
			}
			if (fr->line)
				json_kv_str(o, "line", fr->line);
			ls_out_str(o, "}");
		}
		ls_out_str(o, "]");
	}
	static const char *const keys[] = {"],\n\"mutexes\":[", "],\n\"condvars\":[", "],\n\"rwlocks\":[",
					   "],\n\"spinlocks\":["};
	const struct ls_prof_row *const rows[] = {p->mutex, p->cond, p->rwlock, p->spin};
	const unsigned n[] = {h->nmutex, h->ncond, h->nrwlock, h->nspin};
	for (int k = 0; k < 4; k++) {
		ls_out_str(o, keys[k]);
		for (unsigned i = 0; i < n[k]; i++)
			json_row(o, &rows[k][i], i == 0);
	}
	ls_out_str(o, "]}\n");
	ls_out_flush(o);
}
