/*
 * pft_trywrlock.c - pf-t's trywrlock against a reader that comes and goes
 * between its looks at the reader counts (issue 32, item 1), driven step by
 * step through pf-t's table.
 *
 *   pft_trywrlock-inject [-w spin|yield|park|all] [-T SECONDS(10)]
 *
 * The interleaving, in pf_t.c's terms (rin and rout count readers in and
 * out; a writer's bits in rin's low byte are PRES and its phase bit, the low
 * bit of its ticket):
 *   1. W0 takes the write lock (ticket 0);
 *   2. O asks to read: it counts itself in rin, sees W0's bits and stops at
 *      its LS_INJECT() before it waits for them to change;
 *   3. W0 unlocks. O's turn has come (rin's bits are clear), but it has not
 *      looked yet: it is inside;
 *   4. T calls trywrlock and stops at the LS_INJECT() between its loads of
 *      the two counts;
 *   5. B takes a read lock and unlocks it: rin and rout one more each;
 *   6. T goes on and must return EBUSY: O is inside;
 *   7. W1 asks to write; once its bits are in rin (white box: PRES) it
 *      waits for O;
 *   8. O goes on: it must find W0's bits gone and return from rdlock; when
 *      O unlocks, W1 gets the lock.
 * The fault this catches: a trywrlock that read rin before rout saw the
 * counts equal after B's visit although O was inside, took ticket 1, found
 * rin moved and handed the ticket back unused. W1 then had ticket 2, whose
 * phase bit is W0's: O waited to see W0's bits change and W1 waited for O,
 * for ever (step 8 fails after SECONDS).
 *
 * Run for the preferences under which pf-t is phase-fair (the writer kind,
 * and its own policy; under reader preference a writer announces itself
 * only when it holds the lock, with nobody inside, so step 7 does not
 * arise) and each waiting policy. The stops are this file's ls_inject(), which
 * replaces the inject build's (locks/common/inject.c): a thread whose gate
 * is armed stops at its next LS_INJECT() until the test opens it. Only the
 * inject build can run it; nothing depends on timing to pass (each wait is
 * for an event; SECONDS only turns a deadlock into a failure). Exit 0 pass,
 * 1 fail (one line), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAIL_PREFIX "pft_trywrlock: FAIL "
#include "fail.h"
#define OPT_PROG "pft_trywrlock"
#include "opts.h"

#define PRES 0x2u /* pf_t.c: a writer is present, in rin's low byte */

static const struct ls_rwalgo *pft;
static void *state;
static unsigned how;
static int limit_s = 10;

static void nap(void)
{
	struct timespec t = {0, 200000};
	nanosleep(&t, NULL);
}

/* A thread's gate: NULL, or armed: the thread stops at its next
 * LS_INJECT() (the gate reads 1) until the test opens it (2). */
static __thread _Atomic int *gate;
#ifdef LS_FAULT_INJECT
void ls_inject(void)
{
	_Atomic int *g = gate;
	if (!g)
		return;
	gate = NULL;
	atomic_store(g, 1);
	while (atomic_load(g) != 2)
		nap();
}
#endif

struct role {
	pthread_t t;
	char what; /* 'r' rdlock, 'w' wrlock, 't' trywrlock */
	bool stop; /* arm the gate first */
	_Atomic int gate, got, release, done;
	int rc;
};

static void *role_main(void *arg)
{
	struct role *r = arg;
	void *token = NULL;
	if (r->stop)
		gate = &r->gate;
	if (r->what == 't') {
		r->rc = pft->trywrlock(state, how);
		if (r->rc == 0)
			pft->wrunlock(state);
		atomic_store(&r->done, 1);
		return NULL;
	}
	if (r->what == 'w')
		pft->wrlock(state, how);
	else if ((r->rc = pft->rdlock(state, how, &token)))
		fail("rdlock returned %d", r->rc);
	atomic_store(&r->got, 1);
	while (!atomic_load(&r->release))
		nap();
	if (r->what == 'w')
		pft->wrunlock(state);
	else
		pft->rdunlock(state, token);
	atomic_store(&r->done, 1);
	return NULL;
}

static void start(struct role *r, char what, bool stop)
{
	memset(r, 0, sizeof *r);
	r->what = what;
	r->stop = stop;
	if (pthread_create(&r->t, NULL, role_main, r))
		opt_error("pthread_create failed");
}

/* Waits for *flag to reach v, or fails saying `what` after the limit. */
static void await(_Atomic int *flag, int v, const char *what)
{
	for (long n = 0; atomic_load(flag) != v; n++) {
		if (n > (long)limit_s * 5000)
			fail("how=%u policy=%s: %s after %d s", how, opt_policy_name(ls_wait_cfg.policy),
			     what, limit_s);
		nap();
	}
}

static void scenario(void)
{
	memset(state, 0, LS_RW_INLINE_STATE);
	struct role o, t, w1;
	pft->wrlock(state, how); /* 1: W0 */
	start(&o, 'r', true);	 /* 2 */
	await(&o.gate, 1, "the reader never reached its wait");
	pft->wrunlock(state); /* 3 */
	start(&t, 't', true); /* 4 */
	await(&t.gate, 1, "trywrlock never reached its second look");
	void *token = NULL; /* 5: B */
	if (pft->tryrdlock(state, how, &token))
		fail("how=%u: a reader could not join a reader", how);
	pft->rdunlock(state, token);
	atomic_store(&t.gate, 2); /* 6 */
	await(&t.done, 1, "trywrlock never returned");
	pthread_join(t.t, NULL);
	if (t.rc != EBUSY)
		fail("how=%u: trywrlock returned %d with a reader inside", how, t.rc);
	start(&w1, 'w', false); /* 7 */
	for (long n = 0; !(atomic_load_explicit((_Atomic uint32_t *)state, memory_order_relaxed) & PRES);
	     n++) {
		if (n > (long)limit_s * 5000)
			fail("how=%u: the second writer never announced itself", how);
		nap();
	}
	atomic_store(&o.gate, 2); /* 8 */
	await(&o.got, 1,
	      "the reader whose turn had come still waits (the trywrlock gave a ticket back: the "
	      "next writer has the phase bit the reader waits to see change)");
	if (atomic_load(&w1.got))
		fail("how=%u: the writer got the lock beside a reader", how);
	atomic_store(&o.release, 1);
	await(&w1.got, 1, "the writer never got the lock after the reader left");
	atomic_store(&w1.release, 1);
	pthread_join(o.t, NULL);
	pthread_join(w1.t, NULL);
	if (pft->trywrlock(state, how))
		fail("how=%u: the lock is not free at the end", how);
	pft->wrunlock(state);
}

int main(int argc, char **argv)
{
	const char *wait = "all";
	int c;
	while ((c = getopt(argc, argv, "w:T:")) != -1) {
		if (c == 'w')
			wait = optarg;
		else if (c == 'T')
			limit_s = (int)opt_number("T", optarg, 1, 3600);
		else
			opt_error("usage: pft_trywrlock-inject [-w spin|yield|park|all] [-T SECONDS]");
	}
#ifndef LS_FAULT_INJECT
	opt_error("the steps stop at LS_INJECT(): run build/unit/pft_trywrlock-inject");
#endif
	enum ls_policy first, last;
	opt_policy_range(wait, &first, &last);
	if (!(pft = ls_rwalgo_find("pf-t")))
		opt_error("no pf-t in the registry");
	if (!(state = aligned_alloc(LS_CACHELINE, LS_CACHELINE)))
		opt_error("no memory");
	static const unsigned hows[] = {LS_RW_PREFER_WRITER, LS_RW_OWN_POLICY};
	for (enum ls_policy p = first; p <= last; p++)
		for (size_t i = 0; i < sizeof hows / sizeof hows[0]; i++) {
			ls_wait_cfg.policy = p;
			how = hows[i];
			scenario();
		}
	printf("pft_trywrlock: OK\n");
	return 0;
}
