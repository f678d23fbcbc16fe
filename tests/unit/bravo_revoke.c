/*
 * bravo_revoke.c - BRAVO's promises beyond exclusion (locks/rwlock/bravo.c):
 * a slow reader sets the bias, biased readers stay off the inner lock, a
 * writer waits for the visible readers it revokes, a revocation that gives
 * up (trywrlock, timedwrlock) leaves the next writer to revoke them, and the
 * bias comes back only after the inhibition period, N times the revocation.
 *
 *   bravo_revoke [-i INNER(mcs-rw)] [-H HOLD_MS(30)] [-T SECONDS(20)]
 *
 * INNER is any lock of the family (`mutex` over LOCKSWAP_ALGO's lock).
 *
 * The wrapper is composed with "spy", a lock of this file that counts the
 * read acquisitions reaching it and passes everything to INNER: a read that
 * the spy does not see took BRAVO's fast path. Steps (policy park):
 *   1. a first read is slow (no bias yet) and sets the bias; a second is fast;
 *   2. thread R takes a fast read and holds it; trywrlock fails (EBUSY), a
 *      timedwrlock with 20 ms of patience times out (ETIMEDOUT);
 *   3. a writer thread calls wrlock; once the bias is off (bravo.c's bias
 *      word, the first 8 bytes of the composed state) and the writer sleeps
 *      in futex(2) (proctask.h), i.e. waits for R's slot inside its
 *      revocation, R holds on for HOLD_MS and the writer must not have
 *      entered; R releases; the writer enters. (The bias alone does not say
 *      the revocation has begun: the timed writer of step 2 gave up under
 *      reader preference and left it pending, off, so on a loaded machine
 *      the writer could start its revocation after step 3's clock was read,
 *      and a correct lock's shorter inhibition failed step 4.)
 *   4. the revocation took at least HOLD_MS (it started before the bias
 *      went off and ended after R released), so no read that starts before
 *      R's release plus LOCKSWAP_BRAVO_INHIBIT x that time (less 1 ms for
 *      TSC skew between cores) is fast. Those times are read from the
 *      lock's own clock (ls_tp_now, once calibrated): the TSC's scale is
 *      measured over 20 ms and may be 1% off CLOCK_MONOTONIC's, which
 *      over a 270 ms inhibition is more than any margin; reads every 2 ms, and one must be fast within
 * SECONDS (the bias is set again). Nothing depends on timing to pass: a slow machine only makes step 4's
 * window smaller. Exit 0, 1 with a message, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "pool.h"
#include "rwlock/rwlock.h"
#include "tpclock.h"
#include "proctask.h"
#include "wait.h"

#define FAIL_PREFIX "bravo_revoke: FAIL "
#include "fail.h"

/* ---- spy: counts what reaches the inner lock ---- */

static const struct ls_rwalgo *base;
static _Atomic unsigned slow_reads;

static int spy_rdlock(void *s, unsigned how, void **token)
{
	atomic_fetch_add(&slow_reads, 1);
	return base->rdlock(s, how, token);
}

static int spy_tryrdlock(void *s, unsigned how, void **token)
{
	atomic_fetch_add(&slow_reads, 1);
	return base->tryrdlock(s, how, token);
}

static void spy_rdunlock(void *s, void *token)
{
	base->rdunlock(s, token);
}

static void spy_wrlock(void *s, unsigned how)
{
	base->wrlock(s, how);
}

static int spy_trywrlock(void *s, unsigned how)
{
	return base->trywrlock(s, how);
}

static void spy_wrunlock(void *s)
{
	base->wrunlock(s);
}

static struct ls_rwalgo spy = {
    .name = "spy",
    .desc = "test: counts the reads that reach the inner lock",
    .rank = 999,
    .rdlock = spy_rdlock,
    .tryrdlock = spy_tryrdlock,
    .rdunlock = spy_rdunlock,
    .wrlock = spy_wrlock,
    .trywrlock = spy_trywrlock,
    .wrunlock = spy_wrunlock,
};
LS_REGISTER_RWALGO(spy);

/* ---- the test ---- */

static const struct ls_rwalgo *algo;
static void *state;
static _Atomic int r_holds, r_release, w_entered, released;
static _Atomic pid_t w_tid;

static void nap_ms(int ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
}

/* One read by this thread; true if it was fast (the spy did not see it). */
static bool read_once(void)
{
	void *token = NULL;
	unsigned before = atomic_load(&slow_reads);
	if (algo->rdlock(state, 0, &token))
		fail("rdlock failed");
	bool fast = atomic_load(&slow_reads) == before;
	algo->rdunlock(state, token);
	return fast;
}

static void *reader(void *arg)
{
	(void)arg;
	void *token = NULL;
	unsigned before = atomic_load(&slow_reads);
	if (algo->rdlock(state, 0, &token))
		fail("R: rdlock failed");
	if (atomic_load(&slow_reads) != before)
		fail("R's read took the slow path while the lock was biased and R's slot free");
	atomic_store(&r_holds, 1);
	while (!atomic_load(&r_release))
		nap_ms(1);
	atomic_store(&released, 1);
	algo->rdunlock(state, token);
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	atomic_store(&w_tid, (pid_t)syscall(SYS_gettid));
	algo->wrlock(state, 0);
	if (!atomic_load(&released))
		fail("the writer entered while a visible reader held the lock");
	atomic_store(&w_entered, 1);
	algo->wrunlock(state);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *inner_name = "mcs-rw";
	int hold_ms = 30, limit_s = 20, c;
	while ((c = getopt(argc, argv, "i:H:T:")) != -1) {
		if (c == 'i')
			inner_name = optarg;
		else if (c == 'H')
			hold_ms = atoi(optarg);
		else if (c == 'T')
			limit_s = atoi(optarg);
		else {
			fprintf(stderr, "usage: bravo_revoke [-i INNER] [-H HOLD_MS] [-T SECONDS]\n");
			return 2;
		}
	}
	char err[1400];
	/* the mutex-serialised mode serves as LOCKSWAP_ALGO's lock (the shim's default without it) */
	const char *m = getenv("LOCKSWAP_ALGO");
	const struct ls_algo *mutex = ls_algo_find(m ? m : LS_DEFAULT_ALGO);
	if (!(base = ls_rwalgo_lookup(inner_name, err, sizeof err)) ||
	    ls_rwalgo_start(base, mutex, err, sizeof err)) {
		fprintf(stderr, "bravo_revoke: -i: %s\n", err);
		return 2;
	}
	if (base->caps & LS_RWCAP_PASSTHROUGH) {
		fprintf(stderr, "bravo_revoke: -i: '%s' is glibc's own rwlock, not a lock BRAVO can wrap\n",
			inner_name);
		return 2;
	}
	spy.state_size = base->state_size;
	if (!(algo = ls_rwalgo_lookup("spy+bravo", err, sizeof err)) ||
	    ls_rwalgo_start(algo, NULL, err, sizeof err)) {
		fprintf(stderr, "bravo_revoke: %s\n", err);
		return 2;
	}
	uint64_t inhibit = 9;
	for (const struct ls_param *p = algo->params; p && p->env; p++) {
		const char *v = getenv(p->env);
		if (v && ls_param_parse(p, v, p->value, err, sizeof err)) {
			fprintf(stderr, "bravo_revoke: %s\n", err);
			return 2;
		}
		if (!strcmp(p->env, "LOCKSWAP_BRAVO_INHIBIT"))
			inhibit = *p->value;
	}
	ls_wait_cfg.policy = LS_WAIT_PARK;
	if (!(state = ls_ext_alloc(algo->state_size)))
		fail("cannot allocate the lock");

	/* 1. the bias: set by a slow read */
	if (read_once())
		fail("the first read of a new lock was fast (no bias yet)");
	if (!read_once())
		fail("a read after a slow read was not fast: the slow read did not set the bias");

	/* the lock's clock settles (the TSC's scale is published 20 ms after
	 * its first use) before step 3 reads it */
	for (int ms = 0; ls_tp_now() && !strcmp(ls_tp_clock_source(), "calibrating"); ms++) {
		if (ms > limit_s * 1000)
			fail("the lock's clock was still calibrating after %d s", limit_s);
		nap_ms(1);
	}

	/* 2. a visible reader; a try and a timed writer give up */
	pthread_t r, w;
	pthread_create(&r, NULL, reader, NULL);
	while (!atomic_load(&r_holds))
		nap_ms(1);
	if (algo->trywrlock(state, 0) != EBUSY)
		fail("trywrlock succeeded while a visible reader held the lock");
	if (algo->timedwrlock(state, 0, ls_now_ns() + 20000000) != ETIMEDOUT)
		fail("timedwrlock did not time out while a visible reader held the lock");

	/* 3. a writer revokes and waits for R */
	pthread_create(&w, NULL, writer, NULL);
	uint64_t t_probe;
	for (int ms = 0; (__atomic_load_n((uint64_t *)state, __ATOMIC_ACQUIRE) & 1) || !atomic_load(&w_tid) ||
			 !proctask_in_futex(atomic_load(&w_tid));
	     ms++) {
		if (ms > limit_s * 1000)
			fail("the writer did not revoke the bias and wait for the reader in %d s", limit_s);
		nap_ms(1);
	}
	t_probe = ls_tp_now();
	nap_ms(hold_ms);
	if (atomic_load(&w_entered))
		fail("the writer entered while a visible reader held the lock");
	uint64_t t_release = ls_tp_now();
	atomic_store(&r_release, 1);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	if (!atomic_load(&w_entered))
		fail("the writer did not enter");

	/* 4. inhibited, then biased again */
	uint64_t revoke_ns = t_release - t_probe, not_before = t_release + inhibit * revoke_ns - 1000000;
	unsigned slow = 0;
	for (;;) {
		uint64_t t0 = ls_tp_now();
		if (read_once()) {
			if (t0 < not_before)
				fail("a fast read %.1f ms after the revocation, inhibited for at least %.1f "
				     "ms "
				     "(%llu x %.1f ms)",
				     (t0 - t_release) / 1e6, (not_before - t_release) / 1e6,
				     (unsigned long long)inhibit, revoke_ns / 1e6);
			printf(
			    "bravo_revoke: OK inner=%s revocation>=%.1f ms, %u slow reads, first fast read "
			    "after %.1f ms (inhibited >= %.1f ms)\n",
			    inner_name, revoke_ns / 1e6, slow, (t0 - t_release) / 1e6,
			    (not_before - t_release) / 1e6);
			return 0;
		}
		slow++;
		if (t0 > not_before + (uint64_t)limit_s * 1000000000u)
			fail("no fast read %d s after the inhibition ended: the bias was not set again",
			     limit_s);
		nap_ms(2);
	}
}
