/*
 * elfsym.h - the function symbols of an ELF file, read from the file itself
 * (its .symtab if it has one, else .dynsym): the names of a program's
 * static functions too, which dladdr does not know. Shared by the profiler's
 * report (profile/profile_frames.c) and the per-mutex rules' matcher (match/).
 *
 * Async-signal-safe (the profiler's report may run from a fatal signal or
 * _exit): memory from mmap, the file through open/fstat/mmap, no stdio, no
 * allocator, no locks. The caller serialises calls on one table.
 */
#ifndef LS_ELFSYM_H
#define LS_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ls_elfsym {
	uint64_t lo, hi;  /* [lo, hi): addresses relative to the load base (st_value) */
	const char *name; /* into the mapped file's string table */
};

/* One file's functions, sorted by address. All zero is an empty table not
 * yet loaded. */
struct ls_elfsyms {
	bool tried; /* ls_elfsyms_load has run (whether or not it found any) */
	void *map;  /* the file, mapped read-only */
	size_t mapsz;
	struct ls_elfsym *s;
	size_t n, cap;
};

/* Reads path's function symbols into t (which must be all zero), checking
 * every offset against the file's size. A file that cannot be read, or has
 * no symbol table, leaves t empty (but tried). */
void ls_elfsyms_load(struct ls_elfsyms *t, const char *path);
/* Unmaps what load mapped; t is all zero again. */
void ls_elfsyms_free(struct ls_elfsyms *t);
/* The function holding vaddr (relative to the load base), or NULL. For a
 * return address, ask for the byte before it (the call). */
const struct ls_elfsym *ls_elfsyms_find(const struct ls_elfsyms *t, uint64_t vaddr);

#endif
