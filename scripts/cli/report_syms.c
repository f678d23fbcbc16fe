/*
 * report_syms.c - names and lines of a saved profile's frames (see
 * report_syms.h).
 *
 * Per module, once: where its debug information is (stack/elfsym.h:
 * its own, a -dbgsym package's file, a .gnu_debuglink file, debuginfod's
 * cache), else, when DEBUGINFOD_URLS is set, a request to debuginfod;
 * then its frames' names from the symbol resolver, and their lines from
 * one addr2line run on the file with the DWARF (per 256 frames).
 *
 * debuginfod never waits silently. Before each request, one line on stderr
 * names the module and the servers. A request is limited by
 * --debuginfod-timeout (elfutils' DEBUGINFOD_TIMEOUT, which the client
 * reads: the connection and each stall of the transfer; retries off unless
 * DEBUGINFOD_RETRY_LIMIT says otherwise), and, through the client's
 * progress callback, to that limit plus a second in all; every request of
 * one report shares --debuginfod-budget, after which no module is asked.
 * A request that fails says why, per server: not found, refused,
 * unroutable, no answer to the connection, or a connection accepted and
 * never answered (a connect of our own after the failure tells these
 * apart: the client reports a refusal and an unreachable network alike).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/debuginfod.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elfsym.h"
#include "report_syms.h"

#define PROG "lockswap report"

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(2);
	}
	return d;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- lines through addr2line ---- */

static bool have_addr2line(void)
{
	const char *path = getenv("PATH");
	char buf[4096];
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		snprintf(buf, sizeof buf, "%.*s/addr2line", (int)n, p);
		if (access(buf, X_OK) == 0)
			return true;
		p += n + (c != NULL);
	}
	return false;
}

static char *trim_line(char *s)
{
	char *nl = strchr(s, '\n');
	if (nl)
		*nl = '\0';
	char *d = strstr(s, " (discriminator");
	if (d)
		*d = '\0';
	return s;
}

/* The lines of frames[0..n): addr2line -e FILE ADDR..., one line per
 * address (file:line, or ??:0). FILE holds the module's DWARF: the module
 * itself (addr2line then finds a debug file by itself too) or its debug
 * file; addresses are the same in both. */
static void lines_of(const char *file, struct ls_prof_frame **frames, size_t n)
{
	for (size_t from = 0; from < n; from += 256) {
		size_t to = n - from > 256 ? from + 256 : n;
		int pipefd[2];
		if (pipe(pipefd) != 0)
			return;
		pid_t pid = fork();
		if (pid < 0) {
			close(pipefd[0]);
			close(pipefd[1]);
			return;
		}
		if (pid == 0) {
			char **args = calloc(to - from + 8, sizeof *args);
			if (!args)
				_exit(127);
			int k = 0;
			args[k++] = "addr2line";
			args[k++] = "-e";
			args[k++] = (char *)file;
			for (size_t i = from; i < to; i++) {
				if (!(args[k] = malloc(24)))
					_exit(127);
				/* the call instruction is the byte before the return address */
				snprintf(args[k++], 24, "0x%llx",
					 (unsigned long long)(frames[i]->offset ? frames[i]->offset - 1 : 0));
			}
			dup2(pipefd[1], 1);
			close(pipefd[0]);
			close(pipefd[1]);
			int devnull = open("/dev/null", O_WRONLY);
			if (devnull >= 0)
				dup2(devnull, 2);
			execvp("addr2line", args);
			_exit(127);
		}
		close(pipefd[1]);
		FILE *f = fdopen(pipefd[0], "r");
		char loc[4096];
		for (size_t i = from; f && i < to; i++) {
			if (!fgets(loc, sizeof loc, f))
				break;
			trim_line(loc);
			/* "??:0", "file.c:?", "??:?": nothing known */
			const char *colon = strrchr(loc, ':');
			if (strncmp(loc, "??", 2) != 0 && colon && colon[1] >= '1' && colon[1] <= '9') {
				const char *base = strrchr(loc, '/');
				frames[i]->line = xstrdup(base ? base + 1 : loc);
			}
		}
		if (f)
			fclose(f);
		else
			close(pipefd[0]);
		int st;
		waitpid(pid, &st, 0);
	}
}

/* ---- names: the symbol resolver ---- */

/* The name lockswap prints for symbol sym (elfsym.h: ls_sym_plain). */
static char *display(const char *sym)
{
	char plain[1024];
	return xstrdup(ls_sym_plain(sym, plain, sizeof plain) ? plain : sym);
}

/* Names frames[0..n) of module from its symbols (debug: its debug file,
 * or NULL). A frame outside every function's extent gets no name. */
static void names_of(const char *module, const char *debug, struct ls_prof_frame **frames, size_t n)
{
	struct ls_elfsyms t = {0};
	ls_elfsyms_load_with(&t, module, debug);
	for (size_t i = 0; i < n; i++) {
		struct ls_prof_frame *fr = frames[i];
		const struct ls_elfsym *s = fr->offset ? ls_elfsyms_find(&t, fr->offset - 1) : NULL;
		fr->sym = s ? display(s->name) : NULL;
		fr->symlen = fr->sym ? strlen(fr->sym) : 0;
		fr->symoff = s ? fr->offset - s->lo : LS_PROF_NO_OFFSET;
	}
	/* the names were copied: the files may go */
	ls_elfsyms_free(&t);
}

/* ---- debuginfod, bounded ---- */

static struct {
	debuginfod_client *client;
	double per, budget; /* the limits */
	double spent;	    /* in requests so far */
	double deadline;    /* the request's */
	bool cancelled;	    /* by us, at the deadline */
	bool tried_begin;
} dbg;

static int progress(debuginfod_client *c, long a, long b)
{
	(void)c, (void)a, (void)b;
	if (now() < dbg.deadline)
		return 0;
	dbg.cancelled = true;
	return 1;
}

/* The folder debuginfod's client keeps its files in (elfsym.c looks there
 * too). */
static bool cache_dir(char *out, size_t len)
{
	const char *cache = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");
	if (cache && *cache)
		return snprintf(out, len, "%s", cache) < (int)len;
	if (xdg && *xdg)
		return snprintf(out, len, "%s/debuginfod_client", xdg) < (int)len;
	if (home && *home)
		return snprintf(out, len, "%s/.cache/debuginfod_client", home) < (int)len;
	return false;
}

/* A request we cancelled leaves the client's mark of a failed one (an
 * empty file), which would answer "not found" for the next ten minutes:
 * it was no answer. */
static void forget_failure(const char *hexid)
{
	char dir[PATH_MAX], path[PATH_MAX + 200];
	struct stat st;
	if (!cache_dir(dir, sizeof dir))
		return;
	snprintf(path, sizeof path, "%s/%s/debuginfo", dir, hexid);
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(path);
}

enum probe { P_ACCEPTED, P_REFUSED, P_UNROUTABLE, P_SILENT, P_NORESOLVE, P_OTHER };

/* Connects to url's host and port, waiting at most `limit` seconds: what
 * the network says of the server. *err: errno or getaddrinfo's code. */
static enum probe probe(const char *url, double limit, int *err)
{
	char host[256], port[16];
	const char *p = strstr(url, "://");
	bool https = !strncmp(url, "https:", 6);
	p = p ? p + 3 : url;
	const char *at = strpbrk(p, "@/");
	if (at && *at == '@')
		p = at + 1;
	size_t hl;
	const char *rest;
	if (*p == '[') { /* [IPv6]:port */
		const char *close_ = strchr(p, ']');
		if (!close_)
			return *err = EINVAL, P_OTHER;
		hl = (size_t)(close_ - p - 1);
		p++;
		rest = close_ + 1;
	} else {
		hl = strcspn(p, ":/");
		rest = p + hl;
	}
	if (hl == 0 || hl >= sizeof host)
		return *err = EINVAL, P_OTHER;
	memcpy(host, p, hl);
	host[hl] = '\0';
	if (*rest == ':')
		snprintf(port, sizeof port, "%.*s", (int)strcspn(rest + 1, "/"), rest + 1);
	else
		snprintf(port, sizeof port, "%s", https ? "443" : "80");
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICSERV},
			*ai = NULL;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g != 0)
		return *err = g, P_NORESOLVE;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	enum probe r = P_OTHER;
	*err = 0;
	if (fd < 0) {
		*err = errno;
	} else if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
		r = P_ACCEPTED;
	} else if (errno != EINPROGRESS) {
		*err = errno;
	} else {
		struct pollfd pf = {.fd = fd, .events = POLLOUT};
		int ms = limit > 0 ? (int)(limit * 1000) : 0;
		socklen_t sl = sizeof *err;
		if (poll(&pf, 1, ms) <= 0)
			r = P_SILENT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &sl) == 0 && *err == 0)
			r = P_ACCEPTED;
	}
	if (r == P_OTHER)
		r = *err == ECONNREFUSED			  ? P_REFUSED
		    : *err == ENETUNREACH || *err == EHOSTUNREACH ? P_UNROUTABLE
								  : P_OTHER;
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return r;
}

/* Why a request failed (rc: the client's), per server of urls, into buf. */
static void why_failed(int rc, const char *urls, double waited, double limit, char *buf, size_t len)
{
	size_t at = 0;
	if (rc == -ENOENT && !dbg.cancelled) {
		snprintf(buf, len, "not found: no server in DEBUGINFOD_URLS has it");
		return;
	}
	buf[0] = '\0';
	char *copy = xstrdup(urls), *save = NULL;
	for (char *u = strtok_r(copy, " \t\n", &save); u && at < len; u = strtok_r(NULL, " \t\n", &save)) {
		int err = 0;
		enum probe p = probe(u, 2, &err);
		bool timed = dbg.cancelled || rc == -ETIME || rc == -ETIMEDOUT;
		int n;
		switch (p) {
		case P_REFUSED:
			n = snprintf(buf + at, len - at,
				     "%srefused: %s refused the connection (nothing listens there)",
				     at ? "; " : "", u);
			break;
		case P_UNROUTABLE:
			n = snprintf(buf + at, len - at, "%sunroutable: %s cannot be reached from here (%s)",
				     at ? "; " : "", u, strerror(err));
			break;
		case P_NORESOLVE:
			n = snprintf(buf + at, len - at, "%sunroutable: the name of %s does not resolve (%s)",
				     at ? "; " : "", u, gai_strerror(err));
			break;
		case P_SILENT:
			n = snprintf(
			    buf + at, len - at,
			    "%stimed out: no answer to the connection from %s in %.1f s (an unroutable "
			    "address, or a firewall that drops it)",
			    at ? "; " : "", u, timed ? waited : limit);
			break;
		case P_ACCEPTED:
			if (timed)
				n = snprintf(
				    buf + at, len - at,
				    "%stimed out: %s accepted the connection but sent no answer in %.1f s",
				    at ? "; " : "", u, waited);
			else
				n = snprintf(buf + at, len - at, "%s%s: %s", at ? "; " : "", u,
					     rc == -ENOENT ? "not found" : strerror(-rc));
			break;
		default:
			n = snprintf(buf + at, len - at, "%s%s: %s", at ? "; " : "", u,
				     strerror(err ? err : -rc));
		}
		at += n > 0 ? (size_t)n : 0;
	}
	free(copy);
}

/* The debug file of module from debuginfod (malloc'd path), or NULL after
 * one line on stderr saying why not. */
static char *fetch(const char *module, const struct ls_elfid *e, const char *hexid, const char *urls)
{
	double left = dbg.budget - dbg.spent;
	if (left <= 0) {
		fprintf(stderr,
			PROG
			": %s: no debug information here, and debuginfod was not asked (build-id %s): the "
			"budget of --debuginfod-budget for all requests is spent: its frames stay without "
			"file:line\n",
			module, hexid);
		return NULL;
	}
	if (!dbg.tried_begin) {
		dbg.tried_begin = true;
		if (!(dbg.client = debuginfod_begin()))
			fprintf(stderr, PROG ": cannot start the debuginfod client: %s\n", strerror(errno));
		else
			debuginfod_set_progressfn(dbg.client, progress);
	}
	if (!dbg.client)
		return NULL;
	double limit = dbg.per < left ? dbg.per : left;
	/* the client's own limit, whole seconds, at least 1 */
	char secs[32];
	snprintf(secs, sizeof secs, "%ld", (long)(limit < 1 ? 1 : ceil(limit)));
	setenv("DEBUGINFOD_TIMEOUT", secs, 1);
	fprintf(stderr,
		PROG ": %s: asking debuginfod (%s) for its debug file, build-id %s, for at most %g s\n",
		module, urls, hexid, round(limit * 10) / 10);
	fflush(stderr);
	double start = now();
	/* the client's limit first, ours a second later; the budget's end exactly */
	dbg.deadline = start + (limit < dbg.per ? limit : limit + 1);
	dbg.cancelled = false;
	char *path = NULL;
	int fd = debuginfod_find_debuginfo(dbg.client, e->id, (int)e->idlen, &path);
	dbg.spent += now() - start;
	if (fd >= 0) {
		close(fd);
		return path;
	}
	free(path);
	if (dbg.cancelled)
		forget_failure(hexid);
	char why[2048];
	why_failed(fd, urls, now() - start, limit, why, sizeof why);
	fprintf(stderr,
		PROG ": %s: no debug information here, and debuginfod did not get it (build-id %s: %s): its "
		     "frames stay without file:line\n",
		module, hexid, why);
	return NULL;
}

/* The file with module's DWARF (malloc'd): the module itself (its own, or
 * a local debug file addr2line finds from it), or its debug file; *debug:
 * that debug file, for the symbols too (malloc'd, or NULL). NULL: the
 * module is not here. A module left without debug information gets one
 * line on stderr. */
static char *debug_source(const char *module, char **debug)
{
	struct ls_elfid e;
	char hexid[2 * sizeof e.id + 1], found[PATH_MAX];
	*debug = NULL;
	if (access(module, R_OK) != 0) {
		fprintf(stderr, PROG ": %s: not found here: its frames stay as saved, without file:line\n",
			module);
		return NULL;
	}
	if (!ls_elfid_read(module, &e) || e.dwarf)
		return xstrdup(module);
	if (ls_debugfile_find(module, &e, found, sizeof found)) {
		*debug = xstrdup(found);
		return xstrdup(found);
	}
	ls_elfid_hex(&e, hexid);
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!e.idlen) {
		fprintf(stderr,
			PROG ": %s: no debug information, and no build-id to look it up by: its frames stay "
			     "without file:line\n",
			module);
	} else if (!urls || !*urls) {
		fprintf(stderr,
			PROG
			": %s: no debug information (build-id %s): its frames stay without file:line; set "
			"DEBUGINFOD_URLS to fetch it, or install its debug symbols\n",
			module, hexid);
	} else {
		char *path = fetch(module, &e, hexid, urls);
		if (path) {
			*debug = path;
			return xstrdup(path);
		}
	}
	return xstrdup(module);
}

static int by_module(const void *a, const void *b)
{
	const struct ls_prof_frame *x = *(struct ls_prof_frame *const *)a,
				   *y = *(struct ls_prof_frame *const *)b;
	return strcmp(x->module, y->module);
}

void syms_resolve(struct ls_prof_stack *stacks, unsigned nstacks, const struct syms_opts *o)
{
	size_t n = 0;
	for (unsigned i = 0; i < nstacks; i++)
		n += stacks[i].n;
	struct ls_prof_frame **all = calloc(n + 1, sizeof *all);
	if (!all) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(2);
	}
	size_t k = 0;
	for (unsigned i = 0; i < nstacks; i++)
		for (unsigned f = 0; f < stacks[i].n; f++) {
			struct ls_prof_frame *fr = (struct ls_prof_frame *)&stacks[i].f[f];
			/* a saved name, printed as the resolver prints it */
			if (fr->sym) {
				fr->sym = display(fr->sym);
				fr->symlen = strlen(fr->sym);
			}
			if (fr->module && *fr->module)
				all[k++] = fr;
		}
	qsort(all, k, sizeof *all, by_module);
	dbg.per = o->timeout;
	dbg.budget = o->budget;
	/* one request each, not the client's default of three */
	setenv("DEBUGINFOD_RETRY_LIMIT",
	       getenv("DEBUGINFOD_RETRY_LIMIT") ? getenv("DEBUGINFOD_RETRY_LIMIT") : "0", 1);
	bool lines = have_addr2line();
	if (!lines)
		fprintf(stderr, PROG ": addr2line not found (install binutils): frames without file:line\n");
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && !strcmp(all[j]->module, all[i]->module))
			j++;
		char *debug = NULL;
		char *src = debug_source(all[i]->module, &debug);
		if (src) {
			names_of(all[i]->module, debug, all + i, j - i);
			if (lines)
				lines_of(src, all + i, j - i);
		}
		free(src);
		free(debug);
		i = j;
	}
	if (dbg.client)
		debuginfod_end(dbg.client);
	dbg.client = NULL;
	free(all);
}
