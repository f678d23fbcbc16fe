/*
 * profile_base.h - what every file of the recording layer uses
 * (profile_base.c): the clock and the plain counters, memory from mmap
 * (never from the program's allocator), the profiler's own locks, and the
 * per-thread guard against re-entry. The bottom of the recording layer
 * (profile_record.h draws the layers).
 */
#ifndef LS_PROFILE_BASE_H
#define LS_PROFILE_BASE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "profile_state.h"
#include "tpclock.h"
#include "wait.h"

/* Plain counters that the report may read while their thread runs. */
#define BUMP(x, v) __atomic_store_n(&(x), __atomic_load_n(&(x), __ATOMIC_RELAXED) + (v), __ATOMIC_RELAXED)
#define RAISE(x, v)                                                                                          \
	do {                                                                                                 \
		if ((v) > __atomic_load_n(&(x), __ATOMIC_RELAXED))                                           \
			__atomic_store_n(&(x), (v), __ATOMIC_RELAXED);                                       \
	} while (0)
#define TAKE(x) __atomic_exchange_n(&(x), 0, __ATOMIC_RELAXED)

static inline uint64_t ls_prof_now(void)
{
	return ls_tp_now();
}

static inline uint64_t ls_prof_since(uint64_t t0, uint64_t t1)
{
	return t1 > t0 ? t1 - t0 : 0;
}

/* ---- memory ---- */

/* Memory from mmap, never from the program's allocator. */
void *ls_prof_map(size_t size);
void ls_prof_unmap(void *p, size_t size);

/* A bump allocator over mmap'ed chunks; freed all at once. */
struct chunk {
	struct chunk *next;
	size_t size;
};
struct arena {
	struct chunk *chunks;
	char *cur;
	size_t left, next_size;
};
/* n bytes (zero) from a, NULL if out of memory. */
void *ls_prof_arena_alloc(struct arena *a, size_t n);
void ls_prof_arena_free(struct arena *a);
/* From the global arena (records, call sites, names), under the global
 * lock; never freed. */
void *ls_prof_galloc(size_t n);

/* ---- locks ---- */

/* A futex lock of the profiler's own (never a pthread mutex, which would
 * come back here): 0 free, 1 held, 2 held with sleepers. */
struct plock {
	_Atomic uint32_t w;
};

static inline bool ls_prof_plock_try(struct plock *l)
{
	uint32_t z = 0;
	return atomic_compare_exchange_strong_explicit(&l->w, &z, 1, memory_order_acquire,
						       memory_order_relaxed);
}

static inline void ls_prof_plock_lock(struct plock *l)
{
	if (ls_prof_plock_try(l))
		return;
	/* acquire: pairs with the release exchange in ls_prof_plock_unlock */
	while (atomic_exchange_explicit(&l->w, 2, memory_order_acquire) != 0)
		ls_futex_wait(&l->w, 2, 0);
}

static inline void ls_prof_plock_unlock(struct plock *l)
{
	if (atomic_exchange_explicit(&l->w, 0, memory_order_release) == 2)
		ls_futex_wake(&l->w, 1);
}

extern struct plock ls_prof_glock __attribute__((visibility("hidden")));

/* The global lock: records, call sites, modules, the thread registry. Held
 * briefly, never across a call into libunwind or the program. */
static inline void ls_prof_lock(void)
{
	ls_prof_plock_lock(&ls_prof_glock);
}
static inline void ls_prof_unlock(void)
{
	ls_prof_plock_unlock(&ls_prof_glock);
}
static inline bool ls_prof_trylock(void)
{
	return ls_prof_plock_try(&ls_prof_glock);
}

/* ---- per-thread guard ---- */

struct pthr;
struct ls_prof_tls {
	struct pthr *t; /* this thread's table (the per-thread tables') */
	int guard;
	int tid;
};
extern __thread struct ls_prof_tls ls_prof_tls
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

static inline bool ls_prof_guard_enter(void)
{
	if (ls_prof_tls.guard)
		return false;
	ls_prof_tls.guard = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return true;
}

static inline void ls_prof_guard_leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	ls_prof_tls.guard = 0;
}

static inline int ls_prof_tid(void)
{
	if (!ls_prof_tls.tid)
		ls_prof_tls.tid = (int)syscall(SYS_gettid);
	return ls_prof_tls.tid;
}

#endif
