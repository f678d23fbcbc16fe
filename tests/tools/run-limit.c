/*
 * run-limit.c - `timeout -k KILL SECS env VAR=VALUE... COMMAND ARG...` in one
 * small static program, for the test helpers that start thousands of runs
 * (tests/helpers.bash: under, each_*). Each of coreutils' timeout and env
 * is a dynamically linked start of its own, about 12 ms of CPU per run
 * together on the 2-CPU VM (page-table updates are hypercalls there); this
 * is one start without a loader.
 *
 *   run-limit [-k KILL] SECS [VAR=VALUE]... COMMAND [ARG]...
 *
 * What the tests rely on from timeout(1), kept: COMMAND runs in a process
 * group of its own with this program (a stopped run's children go with it);
 * after SECS seconds the group gets SIGTERM, and SIGKILL KILL seconds later
 * if it is still there; exit 124 when SECS passed (137 when the SIGKILL
 * was needed: this program is killed with the group), else COMMAND's status
 * (128+N for a COMMAND ended by signal N); 125 for bad usage, 126 when
 * COMMAND cannot be run, 127 when it is not found. SIGTERM, SIGINT and
 * SIGHUP sent to this program go on to the group, as timeout's do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t timed_out, kill_armed;
static unsigned kill_after;
static pid_t child;

/* The group, this program in it: it ignores the signal first (as timeout
 * does), or its own delivery would send it again, for ever; SIGKILL ends
 * it with the group, as timeout ends. */
static void send_group(int sig)
{
	if (child > 0)
		kill(child, sig);
	if (sig != SIGKILL) {
		struct sigaction ign = {.sa_handler = SIG_IGN};
		sigemptyset(&ign.sa_mask);
		sigaction(sig, &ign, NULL);
	}
	kill(0, sig);
}

static void on_signal(int sig)
{
	if (sig == SIGALRM) {
		if (kill_armed) {
			send_group(SIGKILL);
			return;
		}
		timed_out = 1;
		sig = SIGTERM;
	}
	if (kill_after && !kill_armed) {
		kill_armed = 1;
		alarm(kill_after);
	}
	send_group(sig);
}

static unsigned seconds(const char *s)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > 86400) {
		fprintf(stderr, "run-limit: '%s' is not a number of seconds (1 to 86400)\n", s);
		exit(125);
	}
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	int i = 1;
	if (i + 1 < argc && !strcmp(argv[i], "-k")) {
		kill_after = seconds(argv[i + 1]);
		i += 2;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: run-limit [-k KILL] SECS [VAR=VALUE]... COMMAND [ARG]...\n");
		return 125;
	}
	unsigned secs = seconds(argv[i++]);
	for (; i < argc && strchr(argv[i], '=') && argv[i][0] != '='; i++)
		if (putenv(argv[i])) {
			fprintf(stderr, "run-limit: cannot set %s\n", argv[i]);
			return 125;
		}
	if (i >= argc) {
		fprintf(stderr, "run-limit: no command to run\n");
		return 125;
	}
	setpgid(0, 0);
	/* the handlers before the child exists: a signal between the fork and
	 * them would end this program and leave the child running */
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	int caught[] = {SIGALRM, SIGTERM, SIGINT, SIGHUP};
	for (size_t k = 0; k < sizeof caught / sizeof caught[0]; k++)
		sigaction(caught[k], &sa, NULL);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	child = fork();
	if (child < 0) {
		perror("run-limit: fork");
		return 125;
	}
	if (child == 0) {
		struct sigaction dfl = {.sa_handler = SIG_DFL};
		sigemptyset(&dfl.sa_mask);
		for (size_t k = 0; k < sizeof caught / sizeof caught[0]; k++)
			sigaction(caught[k], &dfl, NULL);
		signal(SIGTTIN, SIG_DFL);
		signal(SIGTTOU, SIG_DFL);
		execvp(argv[i], &argv[i]);
		int e = errno;
		fprintf(stderr, "run-limit: %s: %s\n", argv[i], strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	alarm(secs);
	int st;
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR) {
			perror("run-limit: waitpid");
			return 125;
		}
	if (timed_out)
		return 124;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
