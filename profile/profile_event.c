/*
 * profile_event.c - what an event records, its out-of-line part (see
 * profile_event.h): a failed try, and a contended attempt's wait, its
 * queue length and its call site.
 */
#include <errno.h>

#include "profile_event.h"
#include "profile_modules.h"

void ls_prof_tryfailed(struct pthr *t, uintptr_t key, int kind, bool glibc, int counter)
{
	struct tent *e = ls_prof_entry(t, key, kind, glibc);
	if (e)
		BUMP(e->n[counter], 1);
}

__attribute__((noinline)) void ls_prof_wait_begin(struct pthr *t, uintptr_t key, int kind, bool glibc,
						  struct waiting *w)
{
	w->t0 = ls_prof_now();
	w->e = ls_prof_entry(t, key, kind, glibc);
	w->nframes = 0;
	if (!w->e)
		return;
	if (--t->sample_left == 0) {
		t->sample_left = ls_prof.sample;
		w->nframes = ls_prof_take_stack(w->frames, ls_prof.frames);
		if (!w->nframes)
			w->nframes = UINT32_MAX; /* sampled, but no stack */
	}
	struct grec *g = w->e->g;
	uint32_t q = atomic_fetch_add_explicit(&g->waiters, 1, memory_order_relaxed) + 1;
	uint32_t m = atomic_load_explicit(&g->max_waiters, memory_order_relaxed);
	while (q > m && !atomic_compare_exchange_weak_explicit(&g->max_waiters, &m, q, memory_order_relaxed,
							       memory_order_relaxed))
		;
}

__attribute__((noinline)) void ls_prof_wait_end(struct pthr *t, struct waiting *w, int how, int r)
{
	uint64_t t1 = ls_prof_now();
	struct tent *e = w->e;
	if (!e)
		return;
	atomic_fetch_sub_explicit(&e->g->waiters, 1, memory_order_relaxed);
	if (r != 0 && r != ETIMEDOUT)
		return;
	uint64_t d = ls_prof_since(w->t0, t1);
	bool read = ls_prof_is_read(how);
	if (r == 0) {
		if (read)
			ls_prof_read_begin(e, t1);
		else
			ls_prof_hold_begin(t, e, t1);
		BUMP(e->n[how], 1);
		BUMP(e->n[read ? LS_PROF_RDCONTENDED : LS_PROF_CONTENDED], 1);
	} else {
		BUMP(e->n[read ? LS_PROF_RDTIMEOUT : LS_PROF_TIMEOUT], 1);
	}
	BUMP(e->wait_sum, d);
	if (read)
		BUMP(e->rd_wait_sum, d);
	RAISE(e->wait_max, d);
	ls_prof_hist_add(e, e->wait_h, d, true);
	if (w->nframes)
		ls_prof_site_add(t, e->g, read, w->frames, w->nframes == UINT32_MAX ? 0 : w->nframes, d,
				 r != 0);
}
