/*
 * profile_modules.h - where in the program (profile_modules.c): the stacks
 * the recording layer takes (stack/stack.h) and the table of loaded
 * objects, ls_prof.modules, that names their frames (module, offset).
 * Above profile_base.h.
 */
#ifndef LS_PROFILE_MODULES_H
#define LS_PROFILE_MODULES_H

#include <stdbool.h>
#include <stdint.h>

#include "profile_base.h"
#include "profile_state.h"
#include "stack.h"

/* At install: maps the module table and the buffer of a refresh. false if
 * out of memory. */
bool ls_prof_modules_init(void);
/* The loaded object holding an address (and its index in ls_prof.modules). */
const struct prof_module *ls_prof_module_of(uintptr_t addr, unsigned *index);
/* Refreshes the module table from dl_iterate_phdr (not from a signal
 * handler). */
void ls_prof_modules_refresh(void);
/* Before a stack is kept: every frame should have a module. */
void ls_prof_cover_frames(const uintptr_t *f, unsigned n);
/* In a fork child: the refresh's lock is free (the child's only thread was
 * not refreshing). */
void ls_prof_modules_fork_child(void);

/* The caller's stack: frames above the profiler and the shim (stack.h). */
static inline unsigned ls_prof_take_stack(uintptr_t *out, unsigned max)
{
	unsigned n = ls_stack_take(out, max, false);
	if (!n && !ls_stack_walking()) /* inside the unwinder: its own mutex, not reported */
		atomic_fetch_add_explicit(&ls_prof.stackless, 1, memory_order_relaxed);
	return n;
}

/* A call site's hash: its record, its mode and its frames. */
static inline uint32_t ls_prof_hash_stack(const void *g, bool read, const uintptr_t *f, unsigned n)
{
	uint64_t h = ((uint64_t)(uintptr_t)g + read) * 0x9E3779B97F4A7C15ull;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ f[i]) * 0x100000001B3ull;
	return (uint32_t)(h ^ (h >> 32));
}

#endif
