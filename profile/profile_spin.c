/*
 * profile_spin.c - the profiler's wrappers of spinlocks (see
 * profile_spin.h), every pthread_spin_* call (observe.h: spin), glibc's or
 * the shim's: a try first (0: uncontended, EBUSY: contention), then the
 * call itself.
 */
#include "observe.h"
#include "profile_event.h"
#include "profile_records.h"
#include "profile_spin.h"

static struct ls_spin_ops spinin; /* the shim's, wrapped */

static int p_spinlock(pthread_spinlock_t *s)
{
	struct pthr *t = ls_prof_enter();
	if (!t)
		return spinin.lock(s);
	bool glibc = ls_prof.spin_passthrough;
	int r = spinin.trylock(s);
	if (r == 0) {
		ls_prof_uncontended(t, (uintptr_t)s, PK_SPIN, glibc, LS_PROF_LOCK);
	} else {
		struct waiting w;
		ls_prof_wait_begin(t, (uintptr_t)s, PK_SPIN, glibc, &w);
		r = spinin.lock(s);
		ls_prof_wait_end(t, &w, LS_PROF_LOCK, r);
	}
	ls_prof_guard_leave();
	return r;
}

static int p_spintrylock(pthread_spinlock_t *s)
{
	struct pthr *t = ls_prof_enter();
	if (!t)
		return spinin.trylock(s);
	int r = spinin.trylock(s);
	if (r == 0)
		ls_prof_uncontended(t, (uintptr_t)s, PK_SPIN, ls_prof.spin_passthrough, LS_PROF_TRY);
	else
		ls_prof_tryfailed(t, (uintptr_t)s, PK_SPIN, ls_prof.spin_passthrough, LS_PROF_TRYFAIL);
	ls_prof_guard_leave();
	return r;
}

static int p_spinunlock(pthread_spinlock_t *s)
{
	struct pthr *t = ls_prof_enter();
	if (t) {
		ls_prof_released(t, (uintptr_t)s, PK_SPIN, ls_prof.spin_passthrough);
		ls_prof_guard_leave();
	}
	return spinin.unlock(s);
}

static int p_spininit(pthread_spinlock_t *s, int pshared)
{
	int r = spinin.init(s, pshared);
	if (r == 0)
		ls_prof_created((uintptr_t)s, PK_SPIN, ls_prof.spin_passthrough);
	return r;
}

static int p_spindestroy(pthread_spinlock_t *s)
{
	int r = spinin.destroy(s);
	if (r == 0)
		ls_prof_ended((uintptr_t)s);
	return r;
}

/* ---- installation ---- */

void ls_prof_spin_install(struct ls_observe *ob)
{
	spinin = ob->spin;
	ob->spin = (struct ls_spin_ops){p_spininit, p_spindestroy, p_spinlock, p_spintrylock, p_spinunlock};
}
