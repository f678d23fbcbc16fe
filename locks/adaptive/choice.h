/*
 * choice.h - the online choice among a mutex's regimes by its measured rate
 * (locks/adaptive/auto.c; issue 33). Pure: no clock, no atomics, no lock;
 * the caller gives it the time and the mutex's acquisition count, and a
 * unit test (tests/unit/auto_choice.c) drives it with made-up rates.
 *
 * Why measured. Which regime serves a mutex best (sleep at once, spin then
 * park, let the holder keep it) depends on the program, the thread count,
 * the machine and its load, in ways no cheap signal predicts: two programs
 * that look alike to the lock (make demo's and lockbench's nearest cell,
 * issue 33) want opposite regimes. Reactive locks (Lim & Agarwal, ASPLOS
 * 1994) switch protocols on what they observe; here what is observed is the
 * one figure a regime is for, the mutex's own acquisitions per second, and
 * each regime is tried for a short window now and then: an epsilon-greedy
 * bandit whose exploration backs off (Sutton & Barto, "Reinforcement
 * Learning", 2nd ed., 2.2-2.3: epsilon-greedy action values; here epsilon
 * halves each time a regime loses its trial).
 *
 * Windows. Time runs in windows of at least `window` ns, each in one regime;
 * the caller steps the choice now and then (auto.c: every 16th contended
 * event of a thread, holding the mutex), and a step that finds the window
 * over measures its rate, count difference over elapsed time, and says which
 * regime the next window runs. A window longer than STALE windows (the
 * mutex was not contended meanwhile) or run in another regime than the one
 * the choice set (the record was lost and found again) teaches nothing: it
 * restarts.
 * A window that follows a change of regime is a warm-up of a quarter window
 * (queued sleepers, spinners, a napping head still act on the old regime),
 * not measured.
 * The schedule. The `home` regime runs all windows but trials. Each other
 * regime R has a trial every 2^level[R] home windows (level from LEVEL_MIN
 * to `level_max`): one window in R, then one in home. The trial wins if its
 * rate beats the mean of the home windows just before and just after it by
 * MARGIN (the mean cancels a drift of the program's own rate); after
 * CONFIRM wins in a row (a second trial at once after the first: one lucky
 * window is not enough), R becomes home and every level starts again at
 * LEVEL_MIN (so a new home is soon checked against the old one: the fast
 * way back). Two home windows in a row at half the running average of
 * home's windows (the program changed, or home stopped paying; one alone
 * is as often a preempted holder or another program) bring every trial
 * back at once. A lost trial doubles
 * R's interval (a loss by a quarter or more quadruples it). A trial that
 * runs at less than half the home rate after a quarter window ends there.
 * So a stable choice costs a quarter window of warm-up and at most a trial
 * window in 2^level_max per other regime, and a wrong one is left within a
 * few windows.
 *
 * State transitions of a record (all under the caller's exclusion):
 *	fresh (t0 0) --step--> home = the regime in force, window starts
 *	window in home, over --> next window: the trial due, else home
 *	window in trial R, over --> pending = R: next window home
 *	home window after a trial, over --> judge R: home = R (won) or
 *	    level[R]++ (lost); next window as above
 * The record is a hint: losing it loses only what was learned.
 */
#ifndef LS_CHOICE_H
#define LS_CHOICE_H

#include <stdbool.h>
#include <stdint.h>

#define LS_CHOICE_N 3	      /* regimes */
#define LS_CHOICE_STALE 16    /* windows: a longer one teaches nothing */
#define LS_CHOICE_LEVEL_MIN 1 /* a new home: trials every 2 windows */
#define LS_CHOICE_MARGIN 32   /* a trial wins by more than 1/32 (3%) */
#define LS_CHOICE_CONFIRM 2   /* trials won in a row that change home */
#define LS_CHOICE_WARMUP 4    /* a warm-up lasts a quarter window */

struct ls_choice {
	uint64_t t0;		    /* the window's start (ns); 0: a fresh record */
	uint64_t before;	    /* rate of the home window before the pending trial */
	uint64_t tried;		    /* the pending trial's rate */
	uint64_t avg;		    /* running average of the home windows' rates (1/4) */
	uint32_t c0;		    /* the mutex's count at the window's start */
	uint16_t due[LS_CHOICE_N];  /* home windows until R's next trial (at most 2^15) */
	uint8_t level[LS_CHOICE_N]; /* R's trials come every 2^level home windows */
	uint8_t reg;		    /* the window's regime */
	uint8_t home;		    /* the chosen regime */
	uint8_t pending;	    /* 1 + a trial's regime, judged at the end of this window; 0 */
	uint8_t warm;		    /* this window follows a change of regime: not measured */
	uint8_t wins[LS_CHOICE_N];  /* R's trials won in a row */
	uint8_t low;		    /* home windows in a row below half the average */
};

struct ls_choice_cfg {
	uint64_t window;     /* ns */
	uint32_t count_mask; /* the count wraps at count_mask + 1 */
	unsigned level_max;  /* trials at least every 2^level_max windows */
};

/* What one step did (for the caller's report and the tests). */
enum ls_choice_event {
	LS_CHOICE_NONE,	 /* the window goes on */
	LS_CHOICE_START, /* a fresh or stale window started again, nothing learned */
	LS_CHOICE_WARM,	 /* the window after a change of regime ended: measuring starts */
	LS_CHOICE_HOME,	 /* a home window ended */
	LS_CHOICE_TRIAL, /* a trial window ended */
	LS_CHOICE_WON,	 /* a trial was judged: its regime is home now */
	LS_CHOICE_LOST,	 /* a trial was judged: home stays, the regime's interval doubles */
	LS_CHOICE_DROP,	 /* a home window fell well below the average: trials come soon again */
};

/* Starts a window in `reg`; one that changes the regime is a warm-up. */
static inline void ls_choice_start(struct ls_choice *c, uint64_t now, uint32_t count, unsigned reg)
{
	c->warm = c->t0 && reg != c->reg;
	c->t0 = now ? now : 1;
	c->c0 = count;
	c->reg = (uint8_t)reg;
}

/* Every other regime's next trial after `first` home windows, staggered so
 * that no two fall due together. */
static inline void ls_choice_explore(struct ls_choice *c, unsigned first)
{
	for (unsigned r = 0, k = 0; r < LS_CHOICE_N; r++) {
		c->level[r] = LS_CHOICE_LEVEL_MIN;
		c->wins[r] = 0;
		c->due[r] = r == c->home ? 0 : (uint16_t)(first + k++);
	}
}

/* The regime of the window after a home window: a trial that is due (one;
 * the others wait a window more), else home. */
static inline unsigned ls_choice_next(struct ls_choice *c)
{
	unsigned next = c->home;
	for (unsigned r = 0; r < LS_CHOICE_N; r++) {
		if (r == c->home || !c->due[r])
			continue;
		if (--c->due[r] == 0) {
			if (next == c->home)
				next = r;
			else
				c->due[r] = 1;
		}
	}
	return next;
}

/* Makes R's trial come after the current home window: the caller has a
 * sign that R would do better (auto.c: spinners spend their whole budget
 * and queue anyway, so sleeping is tried at once). */
static inline void ls_choice_hurry(struct ls_choice *c, unsigned r)
{
	if (r != c->home && c->t0)
		c->due[r] = 1;
}

/*
 * One step at time `now`, with the mutex's count and the regime in force
 * (`reg`). Returns the regime to run from now on (`reg` while the window
 * goes on); *ev says what happened.
 */
static inline unsigned ls_choice_step(struct ls_choice *c, const struct ls_choice_cfg *cfg, uint64_t now,
				      uint32_t count, unsigned reg, enum ls_choice_event *ev)
{
	*ev = LS_CHOICE_NONE;
	if (!c->t0 || reg != c->reg) {
		/* fresh, or the regime changed behind the record's back */
		c->home = (uint8_t)reg;
		c->pending = 0;
		c->avg = 0;
		ls_choice_explore(c, 1);
		c->t0 = 0;
		ls_choice_start(c, now, count, reg);
		*ev = LS_CHOICE_START;
		return reg;
	}
	uint64_t el = now - c->t0;
	if (now < c->t0)
		return reg;
	if (el < (c->warm ? cfg->window / LS_CHOICE_WARMUP : cfg->window)) {
		/* A trial that runs at less than half home's rate after a
		 * quarter window is over: it will lose by far, so it ends now
		 * (a hopeless trial costs a quarter window, not a whole one). */
		if (c->warm || reg == c->home || el < cfg->window / 4 || !c->before)
			return reg;
		uint64_t sofar = (uint64_t)((count - c->c0) & cfg->count_mask) * 1000000000u / el;
		if (sofar >= c->before / 2)
			return reg;
	}
	if (el > LS_CHOICE_STALE * cfg->window) {
		/* not contended for a while: what the window saw is not a rate
		 * of this regime under contention; a pending trial is dropped */
		c->pending = 0;
		ls_choice_start(c, now, count, c->home);
		*ev = LS_CHOICE_START;
		return c->home;
	}
	if (c->warm && el >= cfg->window / LS_CHOICE_WARMUP) {
		ls_choice_start(c, now, count, reg);
		*ev = LS_CHOICE_WARM;
		return reg;
	}
	uint64_t n = (uint64_t)((count - c->c0) & cfg->count_mask);
	uint64_t rate = n * 1000000000u / el;
	unsigned next;
	if (reg != c->home) {
		/* a trial window ended: back home for one window, then judge */
		c->tried = rate;
		c->pending = (uint8_t)(reg + 1);
		next = c->home;
		*ev = LS_CHOICE_TRIAL;
	} else if (c->pending) {
		unsigned r = c->pending - 1u;
		uint64_t base = (c->before + rate) / 2;
		c->pending = 0;
		if (c->tried > base + base / LS_CHOICE_MARGIN && ++c->wins[r] >= LS_CHOICE_CONFIRM) {
			c->home = (uint8_t)r;
			ls_choice_explore(c, 1);
			c->before = c->avg = c->tried;
			*ev = LS_CHOICE_WON;
			next = r;
			/* the old home's first trial comes after one measured
			 * window of the new home, which is then its "before" */
		} else if (c->tried > base + base / LS_CHOICE_MARGIN) {
			/* won, once: try it again at once to confirm */
			c->due[r] = 1;
			c->before = rate;
			c->avg = c->avg ? c->avg - c->avg / 4 + rate / 4 : rate;
			*ev = LS_CHOICE_HOME;
			next = ls_choice_next(c);
		} else {
			/* lost: tried less often, much less often if it lost by
			 * a quarter or more */
			unsigned up = c->tried < base - base / 4 ? 2 : 1;
			c->wins[r] = 0;
			c->level[r] =
			    (uint8_t)(c->level[r] + up < cfg->level_max ? c->level[r] + up : cfg->level_max);
			c->due[r] = (uint16_t)(1u << c->level[r]);
			c->before = rate;
			c->avg = c->avg ? c->avg - c->avg / 4 + rate / 4 : rate;
			*ev = LS_CHOICE_LOST;
			next = ls_choice_next(c);
		}
	} else {
		c->before = rate;
		if (c->avg && rate < c->avg / 2 && ++c->low >= 2) {
			/* the home regime lost half its rate, two windows in a
			 * row (one is noise: a preempted holder, another
			 * program): the program changed, or the regime stopped
			 * paying; look again soon */
			ls_choice_explore(c, 1);
			c->avg = rate;
			c->low = 0;
			*ev = LS_CHOICE_DROP;
		} else {
			if (!c->avg || rate >= c->avg / 2) {
				c->avg = c->avg ? c->avg - c->avg / 4 + rate / 4 : rate;
				c->low = 0;
			}
			*ev = LS_CHOICE_HOME;
		}
		next = ls_choice_next(c);
	}
	ls_choice_start(c, now, count, next);
	return next;
}

#endif
