/*
 * profile.c - the contention profiler as the shim sees it: its options
 * (LOCKSWAP_PROFILE and the LOCKSWAP_PROFILE_* that shape it), and its
 * installation, registered with the shim (LS_REGISTER_OBSERVER,
 * interpose/observe.h), which puts the recording layer in place and hands
 * it the report writer. See profile_record.c for what is
 * recorded and how, profile_out.c for the report.
 *
 * Off (LOCKSWAP_PROFILE unset or 0), the installation returns at once and
 * the shim keeps its own operations; a LOCKSWAP_PROFILE_* set without it is
 * a configuration error, not silently ignored.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "observe.h"
#include "profile_out.h"
#include "profile_record.h"
#include "wait.h"

static bool want, set_sample, set_frames, set_top;
static char out_path[4096];
static uint64_t p_sample = 1, p_frames = 8, p_top = 10, p_parent;
static const struct ls_param sample_param = {"LOCKSWAP_PROFILE_SAMPLE", "", &p_sample, 1, 1000000000};
static const struct ls_param frames_param = {"LOCKSWAP_PROFILE_FRAMES", "", &p_frames, 1, PROF_MAX_FRAMES};
static const struct ls_param top_param = {"LOCKSWAP_PROFILE_TOP", "", &p_top, 0, 1000000};
static const struct ls_param parent_param = {"LOCKSWAP_PROFILE_PARENT", "", &p_parent, 1, 0x7fffffff};

static int parse_on(const char *v, char *err, size_t len)
{
	if (!strcmp(v, "0") || !strcmp(v, "1")) {
		want = v[0] == '1';
		return 0;
	}
	snprintf(err, len, "LOCKSWAP_PROFILE: '%.64s' is not valid (valid: 0, 1)", v);
	return -1;
}

static int parse_num(const struct ls_param *p, uint64_t *dst, bool *set, const char *v, char *err, size_t len)
{
	uint64_t x;
	if (ls_param_parse(p, v, &x, err, len))
		return -1;
	*dst = x;
	if (set)
		*set = true;
	return 0;
}

static int parse_sample(const char *v, char *err, size_t len)
{
	return parse_num(&sample_param, &p_sample, &set_sample, v, err, len);
}
static int parse_frames(const char *v, char *err, size_t len)
{
	return parse_num(&frames_param, &p_frames, &set_frames, v, err, len);
}
static int parse_top(const char *v, char *err, size_t len)
{
	return parse_num(&top_param, &p_top, &set_top, v, err, len);
}
static int parse_parent(const char *v, char *err, size_t len)
{
	return parse_num(&parent_param, &p_parent, NULL, v, err, len);
}

static int parse_out(const char *v, char *err, size_t len)
{
	if (!*v || strlen(v) >= sizeof out_path - 16) {
		snprintf(err, len,
			 "LOCKSWAP_PROFILE_OUT: '%.64s' is not valid (valid: a file name; .csv for CSV, else "
			 "JSON)",
			 v);
		return -1;
	}
	snprintf(out_path, sizeof out_path, "%s", v);
	return 0;
}

static int start(const struct ls_algo *algo, int verbose, char *err, size_t len);

static struct ls_option opt_on = {"LOCKSWAP_PROFILE",
				  "1: profile contention and report it at exit (default 0)", parse_on, start};
static struct ls_option opt_sample = {"LOCKSWAP_PROFILE_SAMPLE",
				      "call site of 1 in N contended acquisitions (default 1: all)",
				      parse_sample, NULL};
static struct ls_option opt_frames = {"LOCKSWAP_PROFILE_FRAMES", "frames per call site, 1..64 (default 8)",
				      parse_frames, NULL};
static struct ls_option opt_top = {
    "LOCKSWAP_PROFILE_TOP", "mutexes in the table on stderr (default 10; 0: no table)", parse_top, NULL};
static struct ls_option opt_out = {"LOCKSWAP_PROFILE_OUT",
				   "also write the profile to FILE (JSON; CSV if .csv)", parse_out, NULL};
static struct ls_option opt_parent = {"LOCKSWAP_PROFILE_PARENT",
				      "set by the profiler for the programs a profiled one runs",
				      parse_parent, NULL};
LS_REGISTER_OPTION(opt_on);
LS_REGISTER_OPTION(opt_sample);
LS_REGISTER_OPTION(opt_frames);
LS_REGISTER_OPTION(opt_top);
LS_REGISTER_OPTION(opt_out);
LS_REGISTER_OPTION(opt_parent);

/* The shim calls it before main (observe.h: LS_REGISTER_OBSERVER). */
static int install(struct ls_observe *ob, char *err, size_t len)
{
	if (!want) {
		const char *v = out_path[0]  ? "LOCKSWAP_PROFILE_OUT"
				: set_sample ? "LOCKSWAP_PROFILE_SAMPLE"
				: set_frames ? "LOCKSWAP_PROFILE_FRAMES"
				: set_top    ? "LOCKSWAP_PROFILE_TOP"
					     : NULL;
		if (v) {
			snprintf(err, len,
				 "%s is set but LOCKSWAP_PROFILE is not 1 (valid: set LOCKSWAP_PROFILE=1)",
				 v);
			return -1;
		}
		return 0;
	}
	ls_prof.sample = (unsigned)p_sample;
	ls_prof.frames = (unsigned)p_frames;
	ls_prof.top = (unsigned)p_top;
	/* the same pid: this process exec'ed itself (env, lockswap): still the top */
	ls_prof.descendant = p_parent != 0 && p_parent != (uint64_t)getpid();
	if (out_path[0]) {
		size_t n = strlen(out_path);
		ls_prof.out = out_path;
		ls_prof.csv = n > 4 && !strcmp(out_path + n - 4, ".csv");
		/* fail before main, not at exit (without creating the file) */
		char dir[sizeof out_path];
		const char *slash = strrchr(out_path, '/');
		snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - out_path) + 1 : 1,
			 slash ? out_path : ".");
		if (access(out_path, F_OK) == 0 ? access(out_path, W_OK) != 0
						: access(dir, W_OK | X_OK) != 0) {
			snprintf(err, len, "LOCKSWAP_PROFILE_OUT: cannot write '%.200s': %s", out_path,
				 strerror(errno));
			return -1;
		}
	}
	if (ls_prof_record_install(ob, err, len))
		return -1;
	ls_prof_at_exit(ls_prof_write);
	return 0;
}
LS_REGISTER_OBSERVER(install);

/* After the shim's initialisation (an option's start hook: may dlopen,
 * allocate, lock). */
static int start(const struct ls_algo *algo, int verbose, char *err, size_t len)
{
	(void)algo;
	if (!ls_prof_on)
		return 0;
	static const char *const policy[] = {"spin", "yield", "park"};
	ls_prof.wait = policy[ls_wait_cfg.policy];
	if (ls_prof_record_start(err, len))
		return -1;
	/* Programs may close stderr before they exit (xz, coreutils do): the
	 * report keeps a copy of it, out of the way of the program's fds. */
	int fd = fcntl(2, F_DUPFD_CLOEXEC, 200);
	if (fd >= 0)
		ls_prof.err_fd = fd;
	/* Programs this one runs write FILE.PID, not FILE. */
	if (ls_prof.out && !ls_prof.descendant) {
		char pid[16];
		snprintf(pid, sizeof pid, "%d", ls_prof.pid);
		setenv("LOCKSWAP_PROFILE_PARENT", pid, 1);
	}
	if (verbose)
		fprintf(stderr, "lockswap: profiling: sample 1/%u, %u frames, top %u%s%s\n", ls_prof.sample,
			ls_prof.frames, ls_prof.top, ls_prof.out ? ", output " : "",
			ls_prof.out ? ls_prof.out : "");
	return 0;
}
