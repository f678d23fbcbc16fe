/*
 * report_map.h - `lockswap report --map`: from a profile to the rules of an
 * algorithm map (LOCKSWAP_ALGO_MAP) for its most contended mutexes and
 * rwlocks (report_map.c).
 */
#ifndef LS_REPORT_MAP_H
#define LS_REPORT_MAP_H

#include <stdio.h>

#include "profile_table.h"

/* The LOCKSWAP_ALGO_MAP line, after one comment line per mutex: a rule for
 * each of the first `top` mutexes (as sorted) that waited, each naming a
 * function or a FILE:LINE of its creation stack that no other mutex of the
 * profile has (else the mutex is left out, and the comment says why), then
 * '*' for the rest with the profile's algorithm. syms[s][f]: the name of
 * frame f of stack s from the symbol resolver (stack/elfsym.h: the names
 * rules match), NULL if none; the frames' `line` is FILE:LINE or NULL. algo: the
 * hot mutexes' algorithm, or NULL to choose one per mutex (report_map.c).
 * cpus: the CPUs the profiled program could use (0: unknown). Returns 0, or
 * -1 if writing failed. The same for the rwlocks, if the profile has any
 * (rwalgo: theirs, or NULL), after the mutexes' comments; the line's '*'
 * rules give the rest the profile's algorithms. */
int report_map(FILE *out, const struct ls_prof *p, const char *const *const *syms, unsigned top,
	       const char *algo, const char *rwalgo, unsigned cpus);

#endif
