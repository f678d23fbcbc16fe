/*
 * trylock_handover.c - a waiter whose deadline passes while its predecessor
 * is releasing waits for the hand-over (issue 9, item 4: the livelock of
 * Scott & Scherer's try-locks, cured in locks/abortable/mcs_try.c and
 * clh_try.c; see their headers).
 *
 *   trylock_handover -a ALGO -m enqueuing|leaving|linkout [-w spin|yield|park]
 *                    [-p PATIENCE_NS(200000)] [-r ROUNDS(4)] [-W SECONDS(30)]
 *
 * Links build/liblocks-inject.a (mk/trylock.mk), where LS_TEST_POINT(id)
 * calls ls_test_point() below: the thread that reaches a point waits there
 * for an event of the scenario, so every ordering the test needs is made by
 * events, none by a sleep or a clock. Threads: the holder H (main), which
 * takes the lock and then releases it; the successor S, which makes one
 * timed attempt; in "leaving" also the leaver E, an earlier timed attempt.
 *
 *   enqueuing (mcs-try: a releaser that finds no successor linked while the
 *      tail has moved)  S swaps itself into the tail and stops (ENQUEUED)
 *      before linking to H; H releases: its CAS of the tail fails, it marks
 *      its node and stops (RELEASING); S goes on, links, waits, runs out of
 *      patience while H is held there, and must stay (STAYING).
 *   leaving (mcs-try, clh-try: a releaser whose hand-over is held up by a
 *      successor that is leaving)  E times out behind H and stops once it
 *      has told H it leaves (LEAVING: mcs-try's step 4 stored transient(nil)
 *      in H's next, clh-try holds H's status TRANSIENT); H releases, cannot
 *      hand over, marks its node and stops (RELEASING); E completes its
 *      departure (ETIMEDOUT: it began before H released); then S enqueues
 *      behind H, runs out of patience while H is held, and must stay.
 *   linkout (clh-try: a successor that links itself out between the
 *      releaser's look at the tail and its hand-over)  S swaps itself into
 *      the tail and stops (VISIBLE); H's unlock finds the tail past its node
 *      and stops before it hands over (HANDING); S goes on, runs out of
 *      patience, and, last in line, swings the tail back to H's node and
 *      returns ETIMEDOUT (H had not begun to hand over: S must not stay);
 *      then H goes on. The lock must then be free: trylock 0 (without the
 *      fix H made its node AVAILABLE with the tail still on it, a free lock
 *      whose trylock returned EBUSY until a blocking attempt came by).
 *
 * In enqueuing and leaving, H is let go once S has reached STAYING, or has
 * returned: without the fix
 * S leaves and its timedlock returns ETIMEDOUT, which fails the test. With
 * it, S must return 0 (the hand-over), after its deadline, alone in the
 * critical section (an occupant word), with trylock then EBUSY; after S
 * releases, the lock must be free (trylock 0) and serve two threads making
 * lock and timed attempts (a plain counter checks exclusion); no queue node
 * may stay in use. Rounds alternate a deadline already passed and one
 * PATIENCE_NS ahead. A deadlock is caught by the watchdog (-W, SIGALRM),
 * which prints where each thread was waiting.
 *
 * Output: "trylock_handover: OK ..." and exit 0; "trylock_handover: FAIL ..."
 * and exit 1; bad usage one line and exit 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "pool.h"
#include "wait.h"

#include "fail.h" /* fail_prefix is set once the arguments are known */
#define OPT_PROG "trylock_handover"
#include "opts.h"

enum role { NOBODY, HOLDER, LEAVER, SUCCESSOR, NROLES };
static const char *const role_names[NROLES] = {"other", "holder", "leaver", "successor"};
static const char *const point_names[] = {"ENQUEUED", "LEAVING", "RELEASING", "STAYING"};
#define NPOINTS 4

enum scenario { ENQUEUING, LEAVING, LINKOUT };
static const char *const scenario_names[] = {"enqueuing", "leaving", "linkout"};

/* Events, each set once per round. */
enum {
	EV_ENQUEUED = 1,     /* S is in the tail (enqueuing) */
	EV_LEAVING = 2,	     /* E has told H it leaves (leaving) */
	EV_MARKED = 4,	     /* H has marked its node releasing */
	EV_STAYING = 8,	     /* S, out of patience, stays for H's hand-over */
	EV_LEAVER_DONE = 16, /* E's timedlock returned */
	EV_SUCC_DONE = 32,   /* S's timedlock returned (and S released if it held) */
	EV_HANDING = 64,     /* H found S behind it and stops before handing over (linkout) */
};

static const struct ls_algo *algo;
static enum scenario scenario;
static uint64_t patience = 200000;
static void *L;
static _Atomic int occupant; /* role inside the critical section, or NOBODY */

static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER; /* glibc's: not preloaded */
static pthread_cond_t ev_cv = PTHREAD_COND_INITIALIZER;
static unsigned events;
static _Atomic unsigned hits[NROLES][LS_NPOINTS]; /* every point, counted */
static const char *volatile where[NROLES];
static __thread enum role role;

static void on_alarm(int sig)
{
	(void)sig;
	char msg[1024];
	int n =
	    snprintf(msg, sizeof msg,
		     "trylock_handover: FAIL algo=%s scenario=%s: watchdog expired; holder: %s; leaver: "
		     "%s; successor: %s\n",
		     algo->name, scenario_names[scenario], where[HOLDER], where[LEAVER], where[SUCCESSOR]);
	if (write(1, msg, (size_t)n) < 0) {
	}
	_exit(1);
}

static void post(unsigned ev)
{
	pthread_mutex_lock(&ev_mu);
	events |= ev;
	pthread_cond_broadcast(&ev_cv);
	pthread_mutex_unlock(&ev_mu);
}

/* Waits until one of the events in mask has happened. */
static void await(unsigned mask, const char *what)
{
	where[role] = what;
	pthread_mutex_lock(&ev_mu);
	while (!(events & mask))
		pthread_cond_wait(&ev_cv, &ev_mu);
	pthread_mutex_unlock(&ev_mu);
	where[role] = "running";
}

void ls_test_point(enum ls_test_point id)
{
	atomic_fetch_add(&hits[role][id], 1);
	switch (role) {
	case SUCCESSOR:
		if (id == LS_POINT_VISIBLE && scenario == LINKOUT) {
			post(EV_ENQUEUED);
			await(EV_HANDING, "stopped at VISIBLE until the holder stops before handing over");
		} else if (id == LS_POINT_ENQUEUED && scenario == ENQUEUING) {
			post(EV_ENQUEUED);
			await(EV_MARKED, "stopped at ENQUEUED until the holder marks its node releasing");
		} else if (id == LS_POINT_STAYING) {
			post(EV_STAYING);
		}
		break;
	case LEAVER:
		if (id == LS_POINT_LEAVING) {
			post(EV_LEAVING);
			await(EV_MARKED, "stopped at LEAVING until the holder marks its node releasing");
		}
		break;
	case HOLDER:
		if (id == LS_POINT_HANDING && scenario == LINKOUT) {
			post(EV_HANDING);
			await(EV_SUCC_DONE, "stopped at HANDING until the successor returns");
		} else if (id == LS_POINT_RELEASING && scenario != LINKOUT) {
			post(EV_MARKED);
			await(EV_STAYING | EV_SUCC_DONE,
			      "stopped at RELEASING until the successor stays for the hand-over or returns");
		}
		break;
	default:
		break;
	}
}

static unsigned hit(enum role r, enum ls_test_point p)
{
	return atomic_load(&hits[r][p]);
}

/* "ENQUEUED LEAVING" (the points r reached this round), or "none". */
static const char *hit_list(enum role r, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (int p = 0; p < NPOINTS; p++)
		if (hit(r, (enum ls_test_point)p))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", point_names[p]);
	return n ? buf : "none";
}

static void enter(enum role r)
{
	int o = atomic_exchange(&occupant, r);
	if (o != NOBODY)
		fail("mutual exclusion: the %s got the lock while the %s held it", role_names[r],
		     role_names[o]);
}

static void leave(enum role r)
{
	int o = atomic_exchange(&occupant, NOBODY);
	if (o != (int)r)
		fail("mutual exclusion: the %s left the critical section as the %s", role_names[r],
		     role_names[o]);
}

struct attempt {
	enum role role;
	uint64_t deadline; /* 0: now, already passed when the lock looks */
	int rc;
	uint64_t returned_at, deadline_used;
};

static void *timed_attempt(void *arg)
{
	struct attempt *a = arg;
	role = a->role;
	if (role == SUCCESSOR && scenario == LEAVING)
		await(EV_LEAVER_DONE, "waiting for the leaver to return before enqueuing");
	a->deadline_used = a->deadline ? ls_now_ns() + a->deadline : ls_now_ns();
	where[role] = "in timedlock";
	a->rc = algo->timedlock(L, a->deadline_used);
	a->returned_at = ls_now_ns();
	if (a->rc == 0) {
		enter(role);
		if (algo->trylock(L) != EBUSY)
			fail("the %s holds the lock, yet trylock did not return EBUSY", role_names[role]);
		leave(role);
		where[role] = "in unlock";
		algo->unlock(L);
	}
	where[role] = "returned";
	post(role == SUCCESSOR ? EV_SUCC_DONE : EV_LEAVER_DONE);
	return NULL;
}

/* Later use: two threads, lock() and timed attempts, a plain counter. */
static long counter;
static void *user(void *arg)
{
	long *got = arg;
	for (int i = 0; i < 200; i++) {
		int rc = 0;
		if (i & 1)
			algo->lock(L);
		else
			rc = algo->timedlock(L, ls_now_ns() + patience);
		if (rc == ETIMEDOUT)
			continue;
		if (rc != 0)
			fail("later use: timedlock returned %d", rc);
		long c = counter;
		for (volatile int k = 0; k < 50; k++) {
		}
		counter = c + 1;
		(*got)++;
		algo->unlock(L);
	}
	return NULL;
}

static void linkout_checks(int round, const struct attempt *s);
static void later_use(int round);

static void one_round(int round)
{
	memset(hits, 0, sizeof hits);
	events = 0;
	L = opt_state(algo);
	if (!L)
		fail("cannot allocate the lock state");
	if (algo->init)
		algo->init(L);
	uint64_t deadline = round & 1 ? patience : 0;
	struct attempt e = {.role = LEAVER, .deadline = deadline},
		       s = {.role = SUCCESSOR, .deadline = deadline};
	pthread_t te, ts;
	char b1[64], b2[64];

	role = HOLDER;
	algo->lock(L);
	enter(HOLDER);
	if (scenario == LEAVING && pthread_create(&te, NULL, timed_attempt, &e))
		fail("pthread_create");
	if (pthread_create(&ts, NULL, timed_attempt, &s))
		fail("pthread_create");
	if (scenario != LEAVING)
		await(EV_ENQUEUED, "waiting for the successor to be in the tail");
	else
		await(EV_LEAVING, "waiting for the leaver to reach LEAVING");
	leave(HOLDER);
	where[HOLDER] = "in unlock";
	algo->unlock(L);
	where[HOLDER] = "joining";
	if (scenario == LEAVING)
		pthread_join(te, NULL);
	pthread_join(ts, NULL);
	role = NOBODY;

	if (scenario == LINKOUT) {
		linkout_checks(round, &s);
		return;
	}
	if (!hit(HOLDER, LS_POINT_RELEASING))
		fail("round %d: the holder's release never reached RELEASING (it handed over at once): the "
		     "scenario did not put it in the window",
		     round);
	if (scenario == LEAVING && e.rc != ETIMEDOUT)
		fail("round %d: the leaver, out of patience before the release began, returned %d, not "
		     "ETIMEDOUT",
		     round, e.rc);
	if (s.rc == ETIMEDOUT)
		fail("round %d: the successor returned ETIMEDOUT: it ran out of patience while its "
		     "predecessor was releasing and left instead of waiting for the hand-over (test "
		     "points it reached: %s)",
		     round, hit_list(SUCCESSOR, b1, sizeof b1));
	if (s.rc != 0)
		fail("round %d: the successor's timedlock returned %d", round, s.rc);
	if (!hit(SUCCESSOR, LS_POINT_STAYING))
		fail("round %d: the successor got the lock without reaching STAYING (points: %s; holder: "
		     "%s): the window was not exercised",
		     round, hit_list(SUCCESSOR, b1, sizeof b1), hit_list(HOLDER, b2, sizeof b2));
	if (s.returned_at < s.deadline_used)
		fail("round %d: the successor stayed, yet returned before its deadline", round);

	/* The lock is free and usable. */
	if (algo->trylock(L) != 0)
		fail("round %d: after the hand-over and the successor's release, trylock failed", round);
	algo->unlock(L);
	later_use(round);
}

/* linkout: S left as last while H was between its look at the tail and its
 * hand-over; H released after S returned. */
static void linkout_checks(int round, const struct attempt *s)
{
	char b1[64];
	if (!hit(HOLDER, LS_POINT_HANDING))
		fail("round %d: the holder's release never reached HANDING (it found no successor behind "
		     "it): the scenario did not put it in the window",
		     round);
	if (s->rc != ETIMEDOUT)
		fail("round %d: the successor, out of patience before the holder began to hand over, "
		     "returned %d, not ETIMEDOUT (test points it reached: %s)",
		     round, s->rc, hit_list(SUCCESSOR, b1, sizeof b1));
	/* The lock is free: the first trylock takes it (no blocking attempt
	 * has come by to pass over a node left in the tail). */
	if (algo->trylock(L) != 0)
		fail("round %d: the successor linked itself out before the holder's hand-over, and after "
		     "the release trylock returned EBUSY: the lock is free, its tail is not",
		     round);
	algo->unlock(L);
	later_use(round);
}

/* The lock serves two threads making lock and timed attempts (a plain
 * counter checks exclusion), is free after, and is destroyed. */
static void later_use(int round)
{
	pthread_t u[2];
	long got[2] = {0, 0};
	counter = 0;
	for (int i = 0; i < 2; i++)
		if (pthread_create(&u[i], NULL, user, &got[i]))
			fail("pthread_create");
	where[NOBODY] = "joining the later users";
	for (int i = 0; i < 2; i++)
		pthread_join(u[i], NULL);
	if (counter != got[0] + got[1])
		fail("round %d: later use: counter %ld after %ld acquisitions (mutual exclusion broken)",
		     round, counter, got[0] + got[1]);
	if (algo->trylock(L) != 0)
		fail("round %d: after later use, trylock failed", round);
	algo->unlock(L);
	if (algo->destroy)
		algo->destroy(L);
	opt_state_free(algo, L);
}

int main(int argc, char **argv)
{
	const char *name = NULL, *mode = NULL;
	int c, rounds = 4, watchdog = 30;
	ls_wait_cfg.policy = LS_WAIT_PARK;
	while ((c = getopt(argc, argv, "a:m:w:p:r:W:")) != -1) {
		if (opt_algo_wait(c, optarg, &name))
			continue;
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 'p':
			patience = (uint64_t)opt_number("p", optarg, 1, 10000000000L);
			break;
		case 'r':
			rounds = (int)opt_number("r", optarg, 1, 1000);
			break;
		case 'W':
			watchdog = (int)opt_number("W", optarg, 1, 3600);
			break;
		default:
			fputs("usage: trylock_handover -a ALGO -m enqueuing|leaving|linkout "
			      "[-w spin|yield|park] [-p NS] [-r ROUNDS] [-W SECONDS]\n",
			      stderr);
			return 2;
		}
	}
	algo = opt_algo(name);
	if (!algo->timedlock)
		opt_error("-a: %s has no native timeout (valid: the try-locks, mcs-try and clh-try)", name);
	scenario = (enum scenario)opt_choose("m", "scenario", mode ? mode : "", scenario_names, 3);
	static char prefix[256];
	snprintf(prefix, sizeof prefix, "trylock_handover: FAIL algo=%s scenario=%s: ", algo->name, mode);
	fail_prefix = prefix;
	ls_node_counting = true;
	for (int r = 0; r < NROLES; r++)
		where[r] = "not started";
	signal(SIGALRM, on_alarm);
	alarm((unsigned)watchdog);

	for (int r = 0; r < rounds; r++)
		one_round(r);

	struct ls_node_stats ns;
	ls_node_stats(&ns);
	if (ns.in_use != 0)
		fail("%ld queue node(s) still in use after every round", ns.in_use);
	printf("trylock_handover: OK algo=%s scenario=%s wait=%s rounds=%d\n", algo->name, mode,
	       opt_policy_name(ls_wait_cfg.policy), rounds);
	return 0;
}
