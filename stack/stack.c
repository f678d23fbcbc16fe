/*
 * stack.c - stacks by libunwind, behind a gate that fork closes (see
 * stack.h). Moved here from the profiler's recording layer so that the
 * matcher of per-mutex rules takes stacks the same way.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "stack.h"

#define SKIP_MAX 24    /* frames of liblockswap.so above the caller */
#define FRAMES_MAX 128 /* at most this many frames per stack */

static int (*unw_backtrace_fn)(void **, int);
static uintptr_t self_lo, self_hi; /* liblockswap.so's span */
static uintptr_t unw_lo, unw_hi;   /* libunwind's */
static __thread bool walking __attribute__((tls_model("initial-exec")));

/* ---- the gate ---- */

static _Atomic int gate_inside;
static _Atomic bool gate_closed;

bool ls_stack_gate_enter(void)
{
	/* seq_cst pairs with ls_stack_fork_prepare: either it sees us
	 * inside, or we see the gate closed */
	atomic_fetch_add_explicit(&gate_inside, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&gate_closed, memory_order_seq_cst)) {
		atomic_fetch_sub_explicit(&gate_inside, 1, memory_order_release);
		return false;
	}
	return true;
}

void ls_stack_gate_leave(void)
{
	atomic_fetch_sub_explicit(&gate_inside, 1, memory_order_release);
}

void ls_stack_fork_prepare(void)
{
	atomic_store_explicit(&gate_closed, true, memory_order_seq_cst);
	while (atomic_load_explicit(&gate_inside, memory_order_seq_cst))
		sched_yield();
}

void ls_stack_fork_parent(void)
{
	atomic_store_explicit(&gate_closed, false, memory_order_seq_cst);
}

void ls_stack_fork_child(void)
{
	atomic_store_explicit(&gate_inside, 0, memory_order_relaxed);
	atomic_store_explicit(&gate_closed, false, memory_order_relaxed);
}

/* ---- stacks ---- */

bool ls_stack_walking(void)
{
	return walking;
}

bool ls_stack_in_unwinder(uintptr_t a)
{
	return a >= unw_lo && a < unw_hi;
}

unsigned ls_stack_take(uintptr_t *out, unsigned max, bool wait)
{
	void *buf[FRAMES_MAX + SKIP_MAX];
	if (!unw_backtrace_fn || walking)
		return 0;
	if (max > FRAMES_MAX)
		max = FRAMES_MAX;
	while (!ls_stack_gate_enter()) {
		if (!wait)
			return 0;
		sched_yield(); /* a fork is in progress: it does not wait for us */
	}
	walking = true;
	atomic_signal_fence(memory_order_seq_cst);
	int n = unw_backtrace_fn(buf, (int)(max + SKIP_MAX));
	atomic_signal_fence(memory_order_seq_cst);
	walking = false;
	ls_stack_gate_leave();
	int i = 0;
	while (i < n && (uintptr_t)buf[i] >= self_lo && (uintptr_t)buf[i] < self_hi)
		i++;
	unsigned k = 0;
	for (; i < n && k < max; i++)
		out[k++] = (uintptr_t)buf[i];
	return k;
}

/* ---- start ---- */

/* The span of the object holding *(uintptr_t *)arg, into arg[1], arg[2]. */
static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t *a = arg, me = a[0], lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + p->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + p->p_memsz > hi)
			hi = a + p->p_memsz;
	}
	if (me < lo || me >= hi)
		return 0;
	a[1] = lo;
	a[2] = hi;
	return 1;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char start_err[512];
static int start_result;

static void start_once(void)
{
	uintptr_t span[3] = {(uintptr_t)&ls_stack_start, 0, 0};
	dl_iterate_phdr(find_object, span);
	self_lo = span[1];
	self_hi = span[2];
	int (*fn)(void **, int) = NULL;
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (h)
		*(void **)&fn = dlsym(h, "unw_backtrace");
	if (!fn) {
		snprintf(start_err, sizeof start_err,
			 "cannot load libunwind.so.8 for stacks (%s); install the libunwind8 package",
			 dlerror());
		start_result = -1;
		return;
	}
	span[0] = (uintptr_t)fn;
	span[1] = span[2] = 0;
	dl_iterate_phdr(find_object, span);
	unw_lo = span[1];
	unw_hi = span[2];
	pthread_atfork(ls_stack_fork_prepare, ls_stack_fork_parent, ls_stack_fork_child);
	unw_backtrace_fn = fn;
	uintptr_t f[4];
	ls_stack_take(f, 4, true);
}

int ls_stack_start(char *err, size_t len)
{
	pthread_once(&once, start_once);
	if (start_result)
		snprintf(err, len, "%s", start_err);
	return start_result;
}
