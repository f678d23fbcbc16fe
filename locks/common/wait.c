/*
 * wait.c - the out-of-line half of the waiting policy (see wait.h).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wait.h"

struct ls_wait_cfg ls_wait_cfg = {LS_WAIT_PARK, LS_WAIT_SPIN_DEFAULT, LS_WAIT_YIELD_DEFAULT};

uint64_t ls_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* tv_sec * 1e9 + tv_nsec for tv_sec >= 0 and a valid tv_nsec, saturating
 * at LS_DEADLINE_NEVER. */
static uint64_t timespec_ns(const struct timespec *t)
{
	uint64_t ns;
	if (__builtin_mul_overflow((uint64_t)t->tv_sec, 1000000000u, &ns) ||
	    __builtin_add_overflow(ns, (uint64_t)t->tv_nsec, &ns))
		return LS_DEADLINE_NEVER;
	return ns;
}

int ls_deadline_ns(clockid_t clock, const struct timespec *abs, uint64_t *out)
{
	if (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L)
		return EINVAL;
	if (abs->tv_sec < 0)
		return ETIMEDOUT;
	uint64_t want = timespec_ns(abs);
	if (clock == CLOCK_MONOTONIC) {
		if (want <= ls_now_ns())
			return ETIMEDOUT;
		*out = want;
		return 0;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t rt = timespec_ns(&now); /* tv_sec >= 0: after 1970 */
	if (want <= rt)
		return ETIMEDOUT;
	/* a time past 64 bits stays "never" (not its distance from a
	 * saturated value), as a distance that overflows the clock */
	if (want == LS_DEADLINE_NEVER || __builtin_add_overflow(ls_now_ns(), want - rt, out))
		*out = LS_DEADLINE_NEVER;
	return 0;
}

bool ls_spin_slow(struct ls_spin *s, unsigned spin)
{
	switch (ls_wait_cfg.policy) {
	case LS_WAIT_SPIN:
		ls_cpu_relax();
		return false;
	case LS_WAIT_YIELD:
		sched_yield();
		return false;
	case LS_WAIT_PARK:
		if (s->n - spin < ls_wait_cfg.yield) {
			s->n++;
			sched_yield();
			return false;
		}
		break;
	}
	return true;
}

int ls_futex_wait(_Atomic uint32_t *addr, uint32_t val, uint64_t deadline_ns)
{
	return ls_futex_wait_bits(addr, val, deadline_ns, FUTEX_BITSET_MATCH_ANY);
}

void ls_futex_wake(_Atomic uint32_t *addr, int n)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n, NULL, NULL, 0);
}

int ls_futex_wait_bits(_Atomic uint32_t *addr, uint32_t val, uint64_t deadline_ns, uint32_t bits)
{
	struct timespec ts, *tp = NULL;
	if (deadline_ns) {
		ts.tv_sec = (time_t)(deadline_ns / 1000000000u);
		ts.tv_nsec = (long)(deadline_ns % 1000000000u);
		tp = &ts;
	}
	LS_TEST_POINT(LS_POINT_PARKING);
	/* Absolute CLOCK_MONOTONIC deadline: FUTEX_WAIT_BITSET without
	 * FUTEX_CLOCK_REALTIME. */
	long r =
	    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, val, tp, NULL, bits);
	if (r == 0)
		return 0;
	/* EAGAIN: the word had already changed */
	return errno == ETIMEDOUT ? ETIMEDOUT : errno == EINTR ? EINTR : 0;
}

void ls_futex_wake_bits(_Atomic uint32_t *addr, int n, uint32_t bits)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, n, NULL, NULL, bits);
}

void ls_word_prewake_slow(_Atomic uint32_t *w, uint32_t v)
{
	/* The CAS orders us against the sleeper's own CAS that set the bit:
	 * its futex wait then either finds the value changed or is woken
	 * below. Failure: the word changed (released, or another waker). */
	/* relaxed: the CAS alone orders us against the sleeper's CAS (one word) */
	if (atomic_compare_exchange_strong_explicit(w, &v, v & ~LS_PARKED, memory_order_relaxed,
						    memory_order_relaxed))
		ls_futex_wake(w, 0x7fffffff);
}

/* Sets LS_PARKED in *w if it still holds v (without the bit) and sleeps.
 * Returns ETIMEDOUT if the deadline passed, 0 otherwise. */
static int park(_Atomic uint32_t *w, uint32_t v, uint64_t deadline_ns)
{
	if (!(v & LS_PARKED)) {
		/* The CAS orders us against the releaser's exchange: either it
		 * sees LS_PARKED and wakes, or we see its new value and fail. */
		if (!atomic_compare_exchange_strong_explicit(w, &v, v | LS_PARKED, memory_order_acquire,
							     memory_order_acquire))
			return 0;
		v |= LS_PARKED;
	}
	return ls_futex_wait(w, v, deadline_ns) == ETIMEDOUT ? ETIMEDOUT : 0;
}

uint32_t ls_wait_while_eq(_Atomic uint32_t *w, uint32_t val)
{
	struct ls_spin s = LS_SPIN_INIT;
	for (;;) {
		/* acquire: pairs with the exchange in ls_word_publish */
		uint32_t v = atomic_load_explicit(w, memory_order_acquire);
		if ((v & ~LS_PARKED) != val)
			return v & ~LS_PARKED;
		if (ls_spin_step(&s)) {
			park(w, v, 0);
			s = (struct ls_spin)LS_SPIN_INIT;
		}
	}
}

int ls_wait_while_eq_until(_Atomic uint32_t *w, uint32_t val, uint64_t deadline_ns, uint32_t *out)
{
	struct ls_spin s = LS_SPIN_INIT;
	for (unsigned i = 0;; i++) {
		uint32_t v = atomic_load_explicit(w, memory_order_acquire);
		if ((v & ~LS_PARKED) != val) {
			if (out)
				*out = v & ~LS_PARKED;
			return 0;
		}
		/* Reading the clock costs ~20 ns: every 16th spin, then always. */
		if ((i & 15) == 0 || s.n >= ls_wait_cfg.spin) {
			if (ls_now_ns() >= deadline_ns)
				return ETIMEDOUT;
		}
		if (ls_spin_step(&s)) {
			if (park(w, v, deadline_ns) == ETIMEDOUT)
				return ETIMEDOUT;
			s = (struct ls_spin)LS_SPIN_INIT;
		}
	}
}

int ls_poll_until(int (*try)(void *arg), void *arg, uint64_t deadline_ns)
{
	struct ls_spin s = LS_SPIN_INIT;
	uint64_t nap = 1000;
	for (;;) {
		int r = try(arg);
		if (r != EBUSY)
			return r;
		uint64_t now = ls_now_ns();
		if (now >= deadline_ns)
			return ETIMEDOUT;
		if (ls_spin_step(&s)) {
			/* "park": nobody will wake a poller, so sleep in
			 * doubling naps, never past the deadline. */
			uint64_t d = deadline_ns - now < nap ? deadline_ns - now : nap;
			/* A futex wait on a private word nobody wakes: a raw
			 * syscall, so unlike nanosleep not a cancellation point
			 * (pthread_mutex_timedlock is not one). */
			_Atomic uint32_t nobody = 0;
			ls_futex_wait(&nobody, 0, now + d);
			if (nap < 1000000)
				nap *= 2;
		}
	}
}

struct try_arg {
	const struct ls_algo *a;
	void *state;
};

static int try_algo(void *arg)
{
	struct try_arg *t = arg;
	return t->a->trylock(t->state);
}

int ls_timedlock_fallback(const struct ls_algo *a, void *state, uint64_t deadline_ns)
{
	struct try_arg t = {a, state};
	return ls_poll_until(try_algo, &t, deadline_ns);
}

/* xorshift32, one per thread: only decorrelates the waiters. */
static __thread uint32_t rng;

static uint32_t random32(void)
{
	uint32_t x = rng;
	if (LS_UNLIKELY(x == 0))
		x = (uint32_t)(uintptr_t)&rng | 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rng = x;
}

bool ls_backoff(struct ls_spin *s, uint64_t *limit, uint64_t max, uint64_t deadline)
{
	uint64_t until = ls_now_ns() + random32() % *limit;
	if (deadline && until > deadline)
		until = deadline;
	if (*limit < max)
		*limit = *limit * 2 < max ? *limit * 2 : max;
	do {
		if (ls_spin_step(s))
			return true;
	} while (ls_now_ns() < until);
	return false;
}
