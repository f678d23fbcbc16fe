/*
 * profile_records.h - the records (profile_records.c): one per mutex,
 * condvar, rwlock or spinlock from its creation (init, or first use for
 * static initialisers) to its destroy or re-initialisation (struct grec,
 * profile_state.h), found by address; never freed. Above the modules and
 * the stacks (a record keeps its creation stack).
 */
#ifndef LS_PROFILE_RECORDS_H
#define LS_PROFILE_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "profile_base.h"
#include "profile_modules.h"
#include "profile_state.h"

struct ls_observe;

/* At install: keeps the shim's algo_of/rule_of (observe.h) and maps the
 * call sites' table. false if out of memory. */
bool ls_prof_records_init(const struct ls_observe *ob);
/* The live record at addr, created (with the caller's stack) if there is
 * none. Called without the global lock. NULL if out of memory. */
struct grec *ls_prof_grec_find(uintptr_t addr, int kind, bool glibc);
/* A lock's init (a new record, with the caller's stack; the live one at
 * addr ends as reused) and its destroy (the live record ends). */
void ls_prof_created(uintptr_t addr, int kind, bool glibc);
void ls_prof_ended(uintptr_t addr);
/* Under the global lock: the call site of g with this stack (hash:
 * ls_prof_hash_stack's), added if new; NULL if out of memory. */
struct gsite *ls_prof_gsite(struct grec *g, uint32_t hash, bool read, const uintptr_t *f, uint32_t n);

#endif
