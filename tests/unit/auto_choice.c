/*
 * auto_choice.c - the choice among `auto`'s regimes (locks/adaptive/choice.h,
 * issue 33), driven with made-up rates: no clock, no threads, no lock. The
 * mutex is simulated: time advances in steps of an eighth of a window (the
 * choice is stepped at each, as a holder would), and the count by the
 * rate the scenario gives the regime in force. Each case checks decisions:
 *
 *   start    a fresh record keeps the regime it finds (SLEEP) as home and
 *            tries the others within a few windows
 *   switch   a regime 30% faster than home wins two trials in a row and
 *            becomes home; no switch on one lucky trial (a trial 30% faster
 *            once, then slower)
 *   stay     home stays when the others are 2% faster (within the margin)
 *   backoff  a regime that loses is tried less and less often: once every
 *            2^level_max home windows at most; the share of windows spent
 *            outside the best regime stays under 3% in the first 500
 *            windows and under 1% over the 4000 after (the bound on the cost
 *            of exploring); a trial at a third of home's rate ends after a
 *            quarter window (its warm-up and a quarter: at most 5 eighths)
 *   warm     the window after a change of regime is not measured: a regime
 *            15% faster whose first quarter window after each change runs at
 *            a tenth (a transient, home's too) still wins
 *   drop     a home regime whose rate halves for two windows (the program
 *            changed) has its trials come again at once, and the better
 *            regime is home soon; one window at a third (noise: a preempted
 *            holder, another program) changes nothing
 *   stale    a window much longer than `window` (no contention meanwhile)
 *            teaches nothing and drops a pending trial
 *   adopt    a regime changed behind the record's back becomes home
 *   track    the best regime changes mid-run, twice: home follows it
 *   hurry    a hurried regime (auto: SLEEP, when spinners spin in vain) has
 *            its trial after the current home window, whatever its level
 *   idle     a mutex contended too rarely to measure (stepped once every
 *            20 windows) stays in SLEEP, glibc's regime, however fast the
 *            others would be: no trial, no switch
 *   back     SPIN is home, then spinning loses: when its rate collapses
 *            (to 40% of SLEEP's) SLEEP is home again within 12 windows
 *            without help; when it slips by 15% only, SLEEP's trials are
 *            1024 windows apart, and the hurry (auto's spinners spinning in
 *            vain) brings SLEEP home within 8 windows, where without it
 *            SPIN stays
 *
 *   auto_choice CASE|all
 * Output: "auto_choice: OK CASE ..." per case, exit 0; "auto_choice: FAIL
 * CASE: ..." and exit 1.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FAIL_PREFIX "auto_choice: FAIL "
#include "adaptive/choice.h"
#include "fail.h"

#define W 1000000u /* the window: 1 ms */
#define LEVEL_MAX 10u

static const struct ls_choice_cfg cfg = {W, 0xffffffu, LEVEL_MAX};

/* The simulated mutex. */
struct sim {
	struct ls_choice c;
	uint64_t now;
	double count;			    /* acquisitions (the mutex's count is this mod 2^24) */
	unsigned reg;			    /* the regime in force */
	unsigned long windows[LS_CHOICE_N]; /* eighths of windows spent in each regime */
	unsigned long ev[8];
	const char *name;
};

static void sim_init(struct sim *s, const char *name)
{
	memset(s, 0, sizeof *s);
	s->now = 1000000000u;
	s->name = name;
}

/* Runs `eighths` eighth-windows with the given rates (acquisitions per ms
 * of each regime); `slow_start` makes the first quarter window after each
 * change of regime run at a tenth of the rate (a transient). */
static void sim_run(struct sim *s, const double rate[LS_CHOICE_N], unsigned long eighths, bool slow_start)
{
	uint64_t since_change = 0;
	for (unsigned long i = 0; i < eighths; i++) {
		double r = rate[s->reg] / 8.0;
		if (slow_start && since_change < W / 4)
			r /= 10.0;
		s->now += W / 8;
		since_change += W / 8;
		s->count += r;
		s->windows[s->reg]++;
		enum ls_choice_event ev;
		unsigned next = ls_choice_step(&s->c, &cfg, s->now,
					       (uint32_t)((uint64_t)s->count & 0xffffffu), s->reg, &ev);
		s->ev[ev]++;
		if (next >= LS_CHOICE_N)
			fail("%s: step returned regime %u", s->name, next);
		if (next != s->reg)
			since_change = 0;
		s->reg = next;
	}
}

static void sim_clear(struct sim *s)
{
	memset(s->windows, 0, sizeof s->windows);
	memset(s->ev, 0, sizeof s->ev);
}

static double share_outside(const struct sim *s, unsigned best)
{
	unsigned long all = 0;
	for (unsigned r = 0; r < LS_CHOICE_N; r++)
		all += s->windows[r];
	return all ? 1.0 - (double)s->windows[best] / (double)all : 0;
}

static void case_start(void)
{
	struct sim s;
	sim_init(&s, "start");
	const double flat[LS_CHOICE_N] = {1000, 1000, 1000};
	sim_run(&s, flat, 1, false);
	if (s.c.home != 0 || s.reg != 0)
		fail("start: a fresh record took home %u, regime %u; expected the regime it found (0)",
		     s.c.home, s.reg);
	/* within 12 windows every other regime has had a trial */
	bool tried[LS_CHOICE_N] = {true, false, false};
	for (int i = 0; i < 12 * 8; i++) {
		sim_run(&s, flat, 1, false);
		tried[s.reg] = true;
	}
	if (!tried[1] || !tried[2])
		fail("start: after 12 windows regimes tried: spin %d, batch %d", tried[1], tried[2]);
	if (s.c.home != 0)
		fail("start: equal rates moved home to %u", s.c.home);
	printf("auto_choice: OK start: home stays SLEEP, SPIN and BATCH tried within 12 windows\n");
}

static void case_switch(void)
{
	struct sim s;
	sim_init(&s, "switch");
	const double rates[LS_CHOICE_N] = {1000, 1300, 800};
	sim_run(&s, rates, 8 * 40, false);
	if (s.c.home != 1)
		fail("switch: after 40 windows home is %u; expected SPIN (1), 30%% faster", s.c.home);
	/* one lucky trial is not enough: SPIN is faster only during its
	 * first trial window, slower afterwards */
	struct sim t;
	sim_init(&t, "switch");
	const double flat[LS_CHOICE_N] = {1000, 1000, 1000};
	sim_run(&t, flat, 8, false); /* the first home window */
	/* run until the first SPIN trial has been measured at 1300 */
	unsigned long guard = 0;
	while (t.reg != 1 && guard++ < 8 * 20)
		sim_run(&t, flat, 1, false);
	if (t.reg != 1)
		fail("switch: no trial of SPIN in 20 windows");
	const double lucky[LS_CHOICE_N] = {1000, 1300, 1000};
	while (t.reg == 1)
		sim_run(&t, lucky, 1, false);
	const double worse[LS_CHOICE_N] = {1000, 900, 1000};
	for (int i = 0; i < 8 * 30; i++) {
		sim_run(&t, worse, 1, false);
		if (t.c.home != 0 || t.ev[LS_CHOICE_WON])
			fail("switch: one lucky trial moved home to %u", t.c.home ? t.c.home : 1);
	}
	printf(
	    "auto_choice: OK switch: a regime 30%% faster is home after 2 won trials; one lucky trial is not "
	    "enough\n");
}

static void case_stay(void)
{
	struct sim s;
	sim_init(&s, "stay");
	const double rates[LS_CHOICE_N] = {1000, 1020, 1015};
	sim_run(&s, rates, 8 * 2000, false);
	if (s.c.home != 0 || s.ev[LS_CHOICE_WON])
		fail("stay: home moved (home %u, %lu switches) for regimes 2%% faster, within the margin",
		     s.c.home, s.ev[LS_CHOICE_WON]);
	printf("auto_choice: OK stay: regimes 2%% faster (within the 3%% margin) never became home in 2000 "
	       "windows\n");
}

static void case_backoff(void)
{
	struct sim s;
	sim_init(&s, "backoff");
	const double rates[LS_CHOICE_N] = {1000, 300, 700};
	sim_run(&s, rates, 8 * 200, false);
	/* by now both have lost several trials: the next 4000 windows hold at
	 * most 2 trials (warm-up, trial, warm-up back) per 2^level_max ... */
	sim_clear(&s);
	sim_run(&s, rates, 8 * 4000, false);
	double out = share_outside(&s, 0);
	unsigned long trials = s.ev[LS_CHOICE_TRIAL];
	if (s.c.home != 0)
		fail("backoff: home moved to %u", s.c.home);
	if (s.c.level[1] != LEVEL_MAX || s.c.level[2] != LEVEL_MAX)
		fail("backoff: levels %u and %u after 4200 windows, expected %u", s.c.level[1], s.c.level[2],
		     LEVEL_MAX);
	/* two regimes, a trial each every 2^10 home windows */
	if (trials > 2 * (4000 / (1u << LEVEL_MAX) + 1))
		fail("backoff: %lu trials in 4000 windows", trials);
	if (out > 0.01)
		fail("backoff: %.1f%% of the time outside the best regime", out * 100);
	printf("auto_choice: OK backoff: %lu trials in 4000 windows, %.2f%% of the time outside the best "
	       "regime\n",
	       trials, out * 100);
	/* the cost of the first 500 windows, from a fresh record */
	struct sim f;
	sim_init(&f, "backoff");
	sim_run(&f, rates, 8 * 500, false);
	double first = share_outside(&f, 0);
	if (first > 0.03)
		fail("backoff: %.1f%% of the first 500 windows outside the best regime", first * 100);
	/* SPIN's eighths of a window per trial of SPIN */
	unsigned long spin_trials = 0;
	struct sim g;
	sim_init(&g, "backoff");
	for (int i = 0; i < 8 * 500; i++) {
		unsigned before = g.reg;
		sim_run(&g, rates, 1, false);
		if (before != 1 && g.reg == 1)
			spin_trials++;
	}
	double per = spin_trials ? (double)g.windows[1] / (double)spin_trials : 0;
	if (!spin_trials || per > 5.0)
		fail(
		    "backoff: a trial at 30%% of home's rate lasted %.1f eighths of a window on average (%lu "
		    "trials); expected at most 5",
		    per, spin_trials);
	printf("auto_choice: OK backoff: %.2f%% of the first 500 windows outside the best regime; a hopeless "
	       "trial lasts %.1f eighths of a window\n",
	       first * 100, per);
}

static void case_warm(void)
{
	struct sim s;
	sim_init(&s, "warm");
	const double rates[LS_CHOICE_N] = {1000, 1150, 800};
	sim_run(&s, rates, 8 * 40, true);
	if (s.c.home != 1)
		fail("warm: with a slow first quarter after each change, home is %u; expected SPIN (1)",
		     s.c.home);
	if (!s.ev[LS_CHOICE_WARM])
		fail("warm: no warm-up window");
	printf("auto_choice: OK warm: %lu warm-up windows, not measured: SPIN home despite slow starts\n",
	       s.ev[LS_CHOICE_WARM]);
}

static void case_drop(void)
{
	struct sim s;
	sim_init(&s, "drop");
	const double before[LS_CHOICE_N] = {1000, 500, 400};
	sim_run(&s, before, 8 * 600, false);
	if (s.c.home != 0 || s.c.level[1] < 6)
		fail("drop: setup: home %u, level of SPIN %u", s.c.home, s.c.level[1]);
	const double after[LS_CHOICE_N] = {300, 500, 400};
	/* one home window of noise first: from the start of a measured home
	 * window that judges nothing */
	for (;;) {
		uint64_t t = s.c.t0;
		sim_run(&s, before, 1, false);
		if (s.c.t0 != t && s.reg == 0 && !s.c.pending && !s.c.warm)
			break;
	}
	uint64_t t0 = s.c.t0;
	unsigned long homes = s.ev[LS_CHOICE_HOME];
	while (s.c.t0 == t0)
		sim_run(&s, after, 1, false);
	if (s.ev[LS_CHOICE_HOME] == homes && !s.ev[LS_CHOICE_DROP])
		fail("drop: the window of noise was not measured as a home window");
	sim_run(&s, before, 8 * 4, false);
	if (s.ev[LS_CHOICE_DROP] || s.c.level[1] < 6)
		fail("drop: one home window at 30%% brought the trials back (level of SPIN %u)",
		     s.c.level[1]);
	sim_run(&s, after, 8 * 20, false);
	if (!s.ev[LS_CHOICE_DROP])
		fail("drop: the home rate fell from 1000 to 300 and no drop was seen");
	if (s.c.home != 1)
		fail("drop: 20 windows after home's rate fell, home is %u; expected SPIN (1)", s.c.home);
	printf(
	    "auto_choice: OK drop: home's rate fell to 30%%, the better regime was home within 20 windows\n");
}

static void case_stale(void)
{
	struct sim s;
	sim_init(&s, "stale");
	const double rates[LS_CHOICE_N] = {1000, 300, 700};
	sim_run(&s, rates, 8 * 3, false);
	unsigned long guard = 0;
	while (s.reg == 0 && guard++ < 8 * 20)
		sim_run(&s, rates, 1, false);
	while (s.reg != 0 && guard++ < 8 * 20)
		sim_run(&s, rates, 1, false);
	if (!s.c.pending)
		fail("stale: no pending trial to drop");
	/* 20 windows without a step, then a huge count: no judgement */
	s.now += 20ull * W;
	s.count += 1e9;
	enum ls_choice_event ev;
	unsigned next =
	    ls_choice_step(&s.c, &cfg, s.now, (uint32_t)((uint64_t)s.count & 0xffffffu), s.reg, &ev);
	if (ev != LS_CHOICE_START || next != 0 || s.c.pending)
		fail("stale: a window of 20 ms gave event %d, regime %u, pending %u; expected a restart at "
		     "home",
		     ev, next, s.c.pending);
	printf("auto_choice: OK stale: a 20-window gap restarted the window and dropped the pending trial\n");
}

static void case_adopt(void)
{
	struct sim s;
	sim_init(&s, "adopt");
	const double rates[LS_CHOICE_N] = {1000, 1000, 1000};
	sim_run(&s, rates, 8 * 3, false);
	s.reg = 2; /* another record's choice, or a lost one */
	sim_run(&s, rates, 1, false);
	if (s.c.home != 2 || s.ev[LS_CHOICE_START] < 2)
		fail("adopt: home %u after the regime changed to 2 behind the record", s.c.home);
	printf("auto_choice: OK adopt: a regime set behind the record's back became home\n");
}

static void case_track(void)
{
	struct sim s;
	sim_init(&s, "track");
	const double a[LS_CHOICE_N] = {1000, 400, 2000};
	const double b[LS_CHOICE_N] = {1000, 2000, 400};
	sim_run(&s, a, 8 * 300, false);
	if (s.c.home != 2)
		fail("track: phase 1: home %u, expected BATCH (2)", s.c.home);
	sim_run(&s, b, 8 * 300, false);
	if (s.c.home != 1)
		fail("track: phase 2: home %u, expected SPIN (1)", s.c.home);
	sim_run(&s, a, 8 * 300, false);
	if (s.c.home != 2)
		fail("track: phase 3: home %u, expected BATCH (2)", s.c.home);
	printf("auto_choice: OK track: home followed the best regime through two changes\n");
}

static void case_hurry(void)
{
	struct sim s;
	sim_init(&s, "hurry");
	const double rates[LS_CHOICE_N] = {500, 1000, 400};
	sim_run(&s, rates, 8 * 1500, false);
	if (s.c.home != 1 || s.c.level[0] < LEVEL_MAX)
		fail("hurry: setup: home %u, level of SLEEP %u", s.c.home, s.c.level[0]);
	while (s.reg != s.c.home)
		sim_run(&s, rates, 1, false);
	ls_choice_hurry(&s.c, 0);
	unsigned long w = 0;
	while (s.reg != 0 && w < 8 * 4) {
		sim_run(&s, rates, 1, false);
		w++;
	}
	if (s.reg != 0)
		fail("hurry: no trial of SLEEP within 4 windows of the hurry (level %u)", s.c.level[0]);
	printf("auto_choice: OK hurry: SLEEP's trial came %.2f windows after the hurry, at level %u\n",
	       w / 8.0, s.c.level[0]);
}

static void case_idle(void)
{
	struct sim s;
	sim_init(&s, "idle");
	const double rates[LS_CHOICE_N] = {100, 1000, 1000};
	for (int i = 0; i < 200; i++) {
		/* the mutex is contended (the choice stepped) once in 20 windows;
		 * its acquisitions meanwhile go uncounted by any window */
		s.now += 20ull * W;
		s.count += 20.0 * rates[s.reg];
		sim_run(&s, rates, 1, false);
		if (s.reg != 0 || s.c.home != 0)
			fail("idle: step %d of a mutex stepped every 20 windows ran regime %u (home %u); "
			     "expected SLEEP",
			     i, s.reg, s.c.home);
	}
	if (s.ev[LS_CHOICE_TRIAL] || s.ev[LS_CHOICE_WON] || s.ev[LS_CHOICE_HOME])
		fail("idle: %lu trials, %lu switches, %lu home windows measured from steps 20 windows apart",
		     s.ev[LS_CHOICE_TRIAL], s.ev[LS_CHOICE_WON], s.ev[LS_CHOICE_HOME]);
	printf("auto_choice: OK idle: stepped every 20 windows, the mutex stayed in SLEEP: %lu restarts, no "
	       "trial\n",
	       s.ev[LS_CHOICE_START]);
}

/* Runs `s` with `rates` until SPIN is home and has outlived its first
 * trials of the others (their levels at LEVEL_MAX); fails otherwise. */
static void spin_settled(struct sim *s, const double rates[LS_CHOICE_N])
{
	sim_run(s, rates, 8 * 3000, false);
	if (s->c.home != 1 || s->c.level[0] != LEVEL_MAX)
		fail("back: setup: home %u, level of SLEEP %u; expected SPIN, %u", s->c.home, s->c.level[0],
		     LEVEL_MAX);
	while (s->reg != 1 || s->c.pending)
		sim_run(s, rates, 1, false);
}

/* Windows (in eighths) until SLEEP is home, at most `limit`; `hurry` calls
 * ls_choice_hurry(SLEEP) at each step, as auto.c does while SPIN's
 * arrivals spin their whole budget in vain. */
static unsigned long until_sleep(struct sim *s, const double rates[LS_CHOICE_N], unsigned long limit,
				 bool hurry)
{
	unsigned long e = 0;
	while (s->c.home != 0 && e < limit) {
		if (hurry && s->reg == 1)
			ls_choice_hurry(&s->c, 0);
		sim_run(s, rates, 1, false);
		e++;
	}
	return e;
}

static void case_back(void)
{
	const double spin_wins[LS_CHOICE_N] = {1000, 1300, 800};
	const double collapse[LS_CHOICE_N] = {1000, 400, 800};
	const double slip[LS_CHOICE_N] = {1000, 850, 800};
	struct sim s;
	sim_init(&s, "back");
	spin_settled(&s, spin_wins);
	unsigned long e = until_sleep(&s, collapse, 8 * 12, false);
	if (s.c.home != 0)
		fail("back: SPIN's rate fell to 40%% of SLEEP's and after 12 windows home is %u", s.c.home);
	struct sim t;
	sim_init(&t, "back");
	spin_settled(&t, spin_wins);
	struct sim u = t; /* the same mutex, without the hurry */
	unsigned long h = until_sleep(&t, slip, 8 * 8, true);
	if (t.c.home != 0)
		fail("back: SPIN 15%% slower than SLEEP, hurried: after 8 windows home is %u", t.c.home);
	until_sleep(&u, slip, 8 * 8, false);
	if (u.c.home != 1)
		fail("back: SPIN 15%% slower, not hurried: home %u within 8 windows; the case shows nothing",
		     u.c.home);
	printf(
	    "auto_choice: OK back: SLEEP home again %.2f windows after SPIN collapsed, %.2f after it slipped "
	    "15%% with the hurry (not within 8 without)\n",
	    e / 8.0, h / 8.0);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*run)(void);
	} cases[] = {{"start", case_start},	{"switch", case_switch}, {"stay", case_stay},
		     {"backoff", case_backoff}, {"warm", case_warm},	 {"drop", case_drop},
		     {"stale", case_stale},	{"adopt", case_adopt},	 {"track", case_track},
		     {"hurry", case_hurry},	{"idle", case_idle},	 {"back", case_back}};
	const size_t n = sizeof cases / sizeof cases[0];
	if (argc != 2) {
		fprintf(stderr, "usage: auto_choice CASE|all\n");
		return 2;
	}
	bool any = false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[1], "all") || !strcmp(argv[1], cases[i].name)) {
			cases[i].run();
			any = true;
		}
	if (!any) {
		fprintf(stderr, "auto_choice: unknown case '%s' (valid: all", argv[1]);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, ", %s", cases[i].name);
		fprintf(stderr, ")\n");
		return 2;
	}
	return 0;
}
