/*
 * tpclock.c - the time source of the time-published locks (and of every
 * user of a cheap cross-core timestamp: mutexee, the profiler).
 *
 * He, Scherer, Scott, TR 867 (../shared/papers/000_9c294dcad948dd76.txt):
 * section 1 assumes "a low-overhead hardware timer with bounded skew across
 * processors"; appendix A.2 footnote 1 says UPDATE_DELAY must exceed a
 * memory round trip plus the maximal pairwise clock skew.
 *
 * Clock. The TSC is used only if it is invariant: cpuid leaf 0x80000007
 * EDX bit 8 AND the kernel lists constant_tsc and nonstop_tsc in
 * /proc/cpuinfo (a hypervisor may hide either). Otherwise, or with
 * LOCKSWAP_TP_CLOCK=1, every timestamp is clock_gettime(CLOCK_MONOTONIC).
 * The TSC is scaled to nanoseconds against CLOCK_MONOTONIC without a busy
 * wait: the first call records a (tsc, ns) pair and returns clock_gettime
 * time; the first call at least CAL_NS later records a second pair,
 * computes ns-per-tick (32.32 fixed point) and publishes the scale; from
 * then on ls_tp_now() is rdtsc, a subtraction and a multiply. Each pair is
 * the best (narrowest rdtsc window) of 5 reads, so the rate error is about
 * 2 x 20 ns / 20 ms = 2e-6, and ls_tp_now() stays within tens of us of
 * ls_now_ns() over hours; deadlines are always confirmed with ls_now_ns().
 *
 * Measurements on this machine (2-vCPU KVM guest, "Intel Xeon Processor",
 * kernel 6.18, clocksource tsc, shared with other jobs; tests/unit/tp_clock.c
 * --measure, medians of 5 x 10^6 calls; results/tp/clock.txt):
 *   cpuid 0x80000007 EDX = 0x100 (invariant TSC); /proc/cpuinfo has
 *   constant_tsc and nonstop_tsc; TSC 2300 MHz.
 *   cost per call: rdtsc 10-14 ns, rdtscp 18-25 ns, clock_gettime
 *   (MONOTONIC, vDSO) 23-35 ns, ls_tp_now 13-17 ns.
 *   cross-core: with an lfence before the reader's clock read, a value
 *   published on the other core is never ahead of the reader's clock (the
 *   smallest age seen is +35..+60 ns): no measurable skew. Without it the
 *   reader's rdtsc may run before its load of the published value has
 *   completed and the value looks up to 0.6-5 us "from the future" (a
 *   cache-line round trip between the vCPUs is 0.5-2.3 us here). That only
 *   makes an age look smaller (a peer looks fresher), so plain rdtsc is
 *   kept (half the cost of rdtscp) and ls_tp_older treats a time ahead of
 *   `now` as fresh.
 *   a running waiter's loop publishes every <1 us; with 3 such threads on
 *   2 cores, gaps of 1-50 us (interrupts, VM exits) occur ~90 times per
 *   second per thread, gaps of 50-200 us once or twice in 2 s, and every
 *   preemption lasts >= 1.5 ms (p10; median 8 ms: the scheduler's slice).
 *
 * The thresholds that these numbers choose (UPDATE_DELAY, MAXIMUM_CS_TIME,
 * patience, MAX_THREAD_NUM, the spin factor) serve the TP locks alone: they
 * are in locks/tp/tp.c.
 */
#include <cpuid.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "tpclock.h"
#include "wait.h"

uint64_t ls_tp_clock_mode = 0;

const struct ls_tp_scale *_Atomic ls_tp_scale;

#define CAL_NS 20000000u /* 20 ms between the two calibration pairs */

enum { IDLE, BUSY, CALIBRATING, DONE };
static _Atomic int phase = IDLE;
static uint64_t cal_tsc, cal_ns; /* first pair; written before phase = CALIBRATING */
static struct ls_tp_scale scale;
static int source; /* 0 clock_gettime, 1 tsc; final once phase == DONE */

/* One (tsc, ns) pair: the midpoint of the narrowest of 5 rdtsc windows
 * around clock_gettime. */
static void pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	*tsc = *ns = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t a = __builtin_ia32_rdtsc();
		uint64_t n = ls_now_ns();
		uint64_t b = __builtin_ia32_rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = n;
		}
	}
}

/* Is word `w` in the first "flags" line of /proc/cpuinfo? Raw syscalls:
 * this runs inside a lock's first acquisition. */
static bool cpuinfo_flag(const char *buf, const char *w)
{
	const char *f = strstr(buf, "\nflags");
	if (!f)
		return false;
	const char *end = strchr(f + 1, '\n');
	size_t wl = strlen(w);
	for (const char *p = f; (p = strstr(p, w)) && (!end || p < end); p += wl)
		if (p[-1] == ' ' && (p[wl] == ' ' || p[wl] == '\n' || p[wl] == '\0'))
			return true;
	return false;
}

bool ls_tp_tsc_invariant(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return false;
	__cpuid(0x80000007u, a, b, c, d);
	if (!(d & (1u << 8)))
		return false;
	static char buf[8192];
	/* syscall(), not open/read/close: glibc's wrappers are cancellation
	 * points, and this runs inside pthread_mutex_lock, which is not one. */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t len = 0;
	long n;
	while (len < sizeof buf - 1 && (n = syscall(SYS_read, fd, buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)n;
	syscall(SYS_close, fd);
	buf[len] = '\0';
	return cpuinfo_flag(buf, "constant_tsc") && cpuinfo_flag(buf, "nonstop_tsc");
#else
	return false;
#endif
}

static void start(void)
{
	int expected = IDLE;
	if (!atomic_compare_exchange_strong_explicit(&phase, &expected, BUSY, memory_order_acquire,
						     memory_order_relaxed))
		return;
	if (ls_tp_clock_mode != 0 || !ls_tp_tsc_invariant()) {
		source = 0;
		atomic_store_explicit(&phase, DONE, memory_order_release);
		return;
	}
	pair(&cal_tsc, &cal_ns);
	/* release: cal_tsc/cal_ns are read after an acquire load of phase */
	atomic_store_explicit(&phase, CALIBRATING, memory_order_release);
}

static void finish(void)
{
	int expected = CALIBRATING;
	if (!atomic_compare_exchange_strong_explicit(&phase, &expected, BUSY, memory_order_acquire,
						     memory_order_relaxed))
		return;
	uint64_t t = 0, n = 0;
	pair(&t, &n);
	if (t > cal_tsc && n > cal_ns) {
		scale.tsc0 = t;
		scale.ns0 = n;
		scale.mult = (uint64_t)(((unsigned __int128)(n - cal_ns) << 32) / (t - cal_tsc));
		source = 1;
		/* release: pairs with the acquire load in ls_tp_now */
		atomic_store_explicit(&ls_tp_scale, &scale, memory_order_release);
	}
	atomic_store_explicit(&phase, DONE, memory_order_release);
}

uint64_t ls_tp_now_slow(void)
{
	uint64_t ns = ls_now_ns();
	switch (atomic_load_explicit(&phase, memory_order_acquire)) {
	case IDLE:
		start();
		break;
	case CALIBRATING:
		if (ns - cal_ns >= CAL_NS)
			finish();
		break;
	default:
		break;
	}
	return ns;
}

const char *ls_tp_clock_source(void)
{
	switch (atomic_load_explicit(&phase, memory_order_acquire)) {
	case DONE:
		return source ? "tsc" : "clock_gettime";
	case IDLE:
		return "unused";
	default:
		return "calibrating";
	}
}

uint64_t ls_tp_tsc_khz(void)
{
	const struct ls_tp_scale *s = atomic_load_explicit(&ls_tp_scale, memory_order_acquire);
	/* ticks per ms = 1e6 ns / (mult / 2^32) */
	return s ? (uint64_t)(((unsigned __int128)1000000u << 32) / s->mult) : 0;
}
