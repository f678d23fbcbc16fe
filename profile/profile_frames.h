/*
 * profile_frames.h - frames: a return address as the profile names it.
 * Every piece of symbol resolution in profile/ is in profile_frames.c: a
 * return address as (module, offset) and the function that holds it (from
 * the module's own ELF symbols, stack/elfsym.h), the frame of a stack that
 * names a lock (the first outside the C and C++ runtimes and lockswap),
 * and how a frame is printed. Shared by the library (at exit, from _exit or
 * a fatal signal: async-signal-safe) and by `lockswap report`.
 */
#ifndef LS_PROFILE_FRAMES_H
#define LS_PROFILE_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elfsym.h"
#include "profile_print.h"

/* A frame: a return address as (module, offset), and what is known of it. */
struct ls_prof_frame {
	const char *module; /* path, or NULL if no loaded object held it */
	uint64_t offset;    /* from the module's load base (or the address) */
	const char *sym;    /* function name, or NULL */
	size_t symlen;	    /* sym's length (it may point into an ELF string table) */
	uint64_t symoff;    /* offset of the return address in sym, or LS_PROF_NO_OFFSET */
	const char *line;   /* "file:line" (lockswap report), or NULL */
};
struct ls_prof_stack {
	unsigned n;
	const struct ls_prof_frame *f;
};
#define LS_PROF_NO_OFFSET UINT64_MAX

/* The frame of return address a (the library's report): in the loaded
 * object `module` (its path) loaded at `base`, named by the function of
 * `syms` (that module's symbols, read on first use) that holds the call;
 * module NULL: no loaded object held it, the offset is the address. */
void ls_prof_frame_of(struct ls_prof_frame *out, uintptr_t a, const char *module, uintptr_t base,
		      struct ls_elfsyms *syms);

/* The first frame of a stack outside the C and C++ runtimes and lockswap:
 * the one that names a mutex. Index, or 0. */
unsigned ls_prof_naming_frame(const struct ls_prof_stack *s);
/* A module of the C or C++ runtime, libunwind, or lockswap itself. */
bool ls_prof_runtime_module(const char *path);
/* "sym+0x1a (file:line)", "sym+0x1a (module)", "module+0x1a0" */
void ls_prof_frame_out(struct ls_out *o, const struct ls_prof_frame *f);

#endif
