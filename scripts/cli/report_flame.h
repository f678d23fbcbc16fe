/*
 * report_flame.h - `lockswap report --folded` and `--svg`: a profile as
 * flame graphs (report_flame.c).
 *
 * What a profile can draw: the stacks of contended acquisitions (and timed
 * attempts that timed out), with their number and wait time, per mutex; and
 * per mutex only, its hold time and acquisitions. The profiler takes a stack
 * only when an acquisition waits, so hold time has no call stack: it is drawn
 * under the stack that created each mutex, and named so.
 */
#ifndef LS_REPORT_FLAME_H
#define LS_REPORT_FLAME_H

#include <stdio.h>

#include "profile_table.h"

enum flame_weight {
	FLAME_WAIT,	 /* ns waited, by the stacks of the waiting acquisitions */
	FLAME_CONTENDED, /* acquisitions and timed attempts that waited, by their stacks */
	FLAME_HOLD,	 /* ns held, by the stacks that created the mutexes */
};

/* Folded stacks, the input of flamegraph.pl and inferno: one line per
 * distinct stack, "outermost;...;innermost;mutex #N where VALUE", the
 * mutex as the top frame. Frames are function names (module+0xoffset where
 * none is known); a ';' in a name becomes ':'. Returns 0, or -1 on a write
 * error. */
int flame_folded(FILE *out, const struct ls_prof *p, enum flame_weight w);

/* One self-contained SVG (no external file, script inline: click a frame to
 * zoom, the bottom frame to zoom out): the wait time of the whole program
 * by call stack, then of each of the first `top` mutexes (as sorted) that
 * waited, then the hold time by creation stack. Returns 0, or -1 on a write
 * error. */
int flame_svg(FILE *out, const struct ls_prof *p, unsigned top);

#endif
