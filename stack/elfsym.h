/*
 * elfsym.h - the one symbol resolver of lockswap: which function holds a
 * code address of a module, read from the ELF files themselves. Shared by
 * the profiler's report at exit (profile/profile_frames.c), the per-lock
 * rules' matcher (match/), and `lockswap report` (its table, --folded,
 * --svg and --map), so that every name any of them prints is a name a
 * FUNCTION rule of LOCKSWAP_ALGO_MAP matches.
 *
 * A frame is named only when its address lies inside a function symbol's
 * extent, [st_value, st_value + st_size): a stripped module that exports a
 * few functions has unexported code between them, and the nearest exported
 * symbol below an address in that code is not its function (the caller
 * prints MODULE+0xOFFSET instead). A symbol without a size covers its first
 * byte only, so it names no return address.
 *
 * Where the symbols come from, per module, the first that has them:
 *   1. the module's own .symtab (a program or library not stripped);
 *   2. the .symtab of its separate debug file, whose build-id must be the
 *      module's (ls_debugfile_find: Debian's -dbgsym packages, a
 *      .gnu_debuglink file, debuginfod's cache), or one the caller names
 *      (lockswap report: a file debuginfod has just fetched);
 *   3. its .dynsym (the exported functions only).
 *
 * Names are the ELF symbols' own. A C++ symbol of a plain function or
 * method is printed, and may be written in a rule, as its qualified name
 * (ls_sym_plain: ns::Cache::get for _ZN2ns5Cache3getEv); any other name is
 * printed and matched as the ELF symbol spells it.
 *
 * Async-signal-safe (the profiler's report may run from a fatal signal or
 * _exit): memory from mmap, files through open/fstat/mmap, no stdio, no
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
	unsigned rank;	  /* among aliases, the one printed has the highest (elfsym.c) */
};

/* Where a table's symbols came from (the list above). */
enum ls_syms_from { LS_SYMS_NONE, LS_SYMS_OWN, LS_SYMS_DEBUG, LS_SYMS_DYNAMIC };

/* One module's functions, sorted by address. All zero is an empty table
 * not yet loaded. */
struct ls_elfsyms {
	bool tried; /* ls_elfsyms_load has run (whether or not it found any) */
	enum ls_syms_from from;
	void *map; /* the module, mapped read-only */
	size_t mapsz;
	void *dmap; /* its debug file, if the symbols are its */
	size_t dmapsz;
	struct ls_elfsym *s;
	size_t n, cap;
};

/* What an ELF file says about its debug information. */
struct ls_elfid {
	unsigned char id[64]; /* NT_GNU_BUILD_ID */
	size_t idlen;	      /* 0: none */
	char link[256];	      /* .gnu_debuglink's file name, or "" */
	bool symtab;	      /* has a .symtab */
	bool dwarf;	      /* has its own .debug_info */
};

/* Reads path's build-id, debug link and what sections it has. false if
 * it is no readable 64-bit ELF file (e is then all zero). */
bool ls_elfid_read(const char *path, struct ls_elfid *e);

/* The build-id as lower-case hex into buf (2 * idlen + 1 bytes). */
char *ls_elfid_hex(const struct ls_elfid *e, char *buf);

/* The separate debug file of module (e: its ls_elfid_read), found without
 * any network, in this order: /usr/lib/debug/.build-id/xx/yyyy.debug (a
 * -dbgsym package); the .gnu_debuglink name beside the module, in its
 * .debug folder, or under /usr/lib/debug and the module's folder; the
 * file debuginfod fetched before, in its cache (DEBUGINFOD_CACHE_PATH,
 * else $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client:
 * BUILDID/debuginfo). A candidate with a build-id other than the module's
 * is passed over. Its path into out; false if there is none. */
bool ls_debugfile_find(const char *module, const struct ls_elfid *e, char *out, size_t len);

/* Reads module path's function symbols into t (which must be all zero),
 * from the first source of the list above; debug: a debug file to take
 * for step 2 instead of searching (NULL: search). Every offset is checked
 * against the file's size. A file that cannot be read, or has no symbol
 * table, leaves t empty (but tried). */
void ls_elfsyms_load(struct ls_elfsyms *t, const char *path);
void ls_elfsyms_load_with(struct ls_elfsyms *t, const char *path, const char *debug);
/* Unmaps what load mapped; t is all zero again. */
void ls_elfsyms_free(struct ls_elfsyms *t);
/* The function whose extent holds vaddr (relative to the load base), or
 * NULL. For a return address, ask for the byte before it (the call).
 * Of aliases (symbols of one extent), the one a user knows: a global name
 * before a local one, an unversioned before a versioned one
 * (pthread_mutex_lock@@GLIBC_2.2.5 before __pthread_mutex_lock@GLIBC_2.2.5). */
const struct ls_elfsym *ls_elfsyms_find(const struct ls_elfsyms *t, uint64_t vaddr);
/* Whether a function whose extent holds vaddr is named pattern (ls_sym_is),
 * by any of its aliases. */
bool ls_elfsyms_names(const struct ls_elfsyms *t, uint64_t vaddr, const char *pattern);

/* The name of symbol sym as lockswap prints it and a FUNCTION rule may
 * write it, when it is not sym itself: without a symbol version
 * (pthread_mutex_lock for pthread_mutex_lock@@GLIBC_2.2.5); a C++ function's
 * or method's qualified name without its parameters, for the mangled names
 * that have a plain one (_Z4workv and _ZL4workv: work; _ZN2ns5Cache3getEv
 * and _ZNK...: ns::Cache::get; constructors and destructors:
 * ns::Cache::Cache, ns::Cache::~Cache; _ZSt9terminatev: std::terminate),
 * followed by a compiler's clone suffix (.cold, .isra.0). Into buf, true;
 * false for every other name (C names, C++ templates, operators, names
 * with substitutions), which are printed as they are. */
bool ls_sym_plain(const char *sym, char *buf, size_t len);

/* Whether a FUNCTION rule's pattern names symbol sym: the symbol itself,
 * or its ls_sym_plain name. */
bool ls_sym_is(const char *sym, const char *pattern);

#endif
