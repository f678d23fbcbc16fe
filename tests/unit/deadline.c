/*
 * deadline.c - ls_deadline_ns (locks/common/wait.h): every timespec a
 * program can pass becomes the deadline it means (issue 32, item 2).
 *
 *   deadline
 *
 * Checks, on both clocks: times past what 64 bits of nanoseconds hold
 * (tv_sec 18446744074 and beyond, 1LL << 62, LONG_MAX) never come
 * (LS_DEADLINE_NEVER), where a product in 64 bits wrapped round to a time
 * long past; the last representable nanosecond and its neighbours are
 * exact; a second from now is a second from now; past, zero and negative
 * times are ETIMEDOUT; tv_nsec outside [0, 1e9) is EINVAL, whatever tv_sec.
 * The bounds of the checks on "now" come from clock readings taken around
 * the call, never from a guess of how long it takes. Exit 0 pass, 1 fail
 * (one line per failed check), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wait.h"

#define FAIL_PREFIX "deadline: FAIL "
#include "fail.h"

#define NS 1000000000ull
#define S64 18446744073ll /* UINT64_MAX / 1e9: the last whole second */
#define NS64 709551615l	  /* UINT64_MAX % 1e9 */

static int failures;

static const char *clock_name(clockid_t c)
{
	return c == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "CLOCK_REALTIME";
}

/* ls_deadline_ns must return rc, and with rc 0 a deadline in [lo, hi]. */
static void expect(clockid_t c, long long sec, long nsec, int rc, uint64_t lo, uint64_t hi)
{
	struct timespec t = {(time_t)sec, nsec};
	uint64_t out = 0;
	int r = ls_deadline_ns(c, &t, &out);
	if (r != rc) {
		printf(FAIL_PREFIX "%s {%lld, %ld}: returned %d, expected %d\n", clock_name(c), sec, nsec, r,
		       rc);
		failures++;
	} else if (rc == 0 && (out < lo || out > hi)) {
		printf(FAIL_PREFIX "%s {%lld, %ld}: deadline %llu, expected %llu..%llu\n", clock_name(c), sec,
		       nsec, (unsigned long long)out, (unsigned long long)lo, (unsigned long long)hi);
		failures++;
	}
}

static void never(clockid_t c, long long sec, long nsec)
{
	expect(c, sec, nsec, 0, LS_DEADLINE_NEVER, LS_DEADLINE_NEVER);
}

static uint64_t rt_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * NS + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "deadline: no arguments\n");
		return 2;
	}
	static const clockid_t clocks[] = {CLOCK_MONOTONIC, CLOCK_REALTIME};
	for (int i = 0; i < 2; i++) {
		clockid_t c = clocks[i];
		/* far: never */
		never(c, S64 + 1, 0);
		never(c, S64 + 1, 999999999);
		never(c, S64 + 1000, 5);
		never(c, 1ll << 62, 0);
		never(c, LONG_MAX, 0);
		never(c, LONG_MAX, 999999999);
		/* past, zero, negative */
		expect(c, 0, 0, ETIMEDOUT, 0, 0);
		expect(c, 1, 0, ETIMEDOUT, 0, 0);
		expect(c, -1, 0, ETIMEDOUT, 0, 0);
		expect(c, -1, 999999999, ETIMEDOUT, 0, 0);
		expect(c, LONG_MIN, 0, ETIMEDOUT, 0, 0);
		/* tv_nsec first, whatever tv_sec */
		static const long bad[] = {-1, 1000000000, LONG_MAX, LONG_MIN};
		for (int b = 0; b < 4; b++) {
			expect(c, 5, bad[b], EINVAL, 0, 0);
			expect(c, LONG_MAX, bad[b], EINVAL, 0, 0);
			expect(c, -1, bad[b], EINVAL, 0, 0);
		}
	}
	/* CLOCK_MONOTONIC is exact up to the last nanosecond 64 bits hold */
	expect(CLOCK_MONOTONIC, S64, NS64, 0, UINT64_MAX, UINT64_MAX);
	expect(CLOCK_MONOTONIC, S64, NS64 - 1, 0, UINT64_MAX - 1, UINT64_MAX - 1);
	never(CLOCK_MONOTONIC, S64, NS64 + 1);
	expect(CLOCK_MONOTONIC, S64, 0, 0, (uint64_t)S64 * NS, (uint64_t)S64 * NS);
	/* a second from now, on each clock. r0 was read between m0 and m1,
	 * and the two clocks tick together (both are slewed alike; 1 ms
	 * covers a slew's 500 ppm): converted, r0 + 1 s is m0 + 1 s to
	 * m1 + 1 s */
	uint64_t m0 = ls_now_ns(), r0 = rt_now(), m1 = ls_now_ns();
	expect(CLOCK_MONOTONIC, (long long)((m0 + NS) / NS), (long)((m0 + NS) % NS), 0, m0 + NS, m0 + NS);
	expect(CLOCK_REALTIME, (long long)((r0 + NS) / NS), (long)((r0 + NS) % NS), 0, m0 + NS - 1000000,
	       m1 + NS + 1000000);
	/* a realtime time that 64 bits hold, 500 years away, is not "never":
	 * its distance from now is added to the monotonic clock */
	expect(CLOCK_REALTIME, S64, 0, 0, m1 + 500ull * 365 * 86400 * NS, UINT64_MAX - 1);
	if (failures)
		return 1;
	printf("deadline: OK\n");
	return 0;
}
