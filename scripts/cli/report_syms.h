/*
 * report_syms.h - `lockswap report`: the names and source lines of a saved
 * profile's frames, after the process is gone (report_syms.c).
 *
 * Names come from lockswap's one symbol resolver (stack/elfsym.h), the one
 * the matcher of LOCKSWAP_ALGO_MAP uses: a frame is named only when its
 * address lies inside a function's extent, else it stays MODULE+0xOFFSET,
 * and every name printed is one a FUNCTION rule matches. Lines come from
 * addr2line (binutils), run on the module's debug information. A module
 * without local debug information is looked up by build-id through
 * debuginfod (elfutils' client) when DEBUGINFOD_URLS is set, with a line on
 * stderr before each request, a limit per request and a budget for all.
 */
#ifndef LS_REPORT_SYMS_H
#define LS_REPORT_SYMS_H

#include "profile_table.h"

struct syms_opts {
	double timeout; /* seconds per debuginfod request */
	double budget;	/* seconds of debuginfod in all */
};
#define SYMS_TIMEOUT 10 /* the defaults: well under a minute in all */
#define SYMS_BUDGET 30

/* Names and lines for every frame of stacks[0..nstacks), one module at a
 * time (one debug file lookup and one addr2line per module). A frame whose
 * module is not here keeps the name the profile saved. One line on stderr
 * per module left without file:line, saying why. */
void syms_resolve(struct ls_prof_stack *stacks, unsigned nstacks, const struct syms_opts *o);

#endif
