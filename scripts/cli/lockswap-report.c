/*
 * lockswap-report - `lockswap report`: re-render a profile saved as JSON by
 * LOCKSWAP_PROFILE_OUT (or `lockswap profile -o`), with every frame
 * resolved to function and file:line by addr2line (binutils), every call
 * site, the creation stack and the wait and hold histograms of each mutex.
 *
 *   lockswap report FILE [--sort wait|hold|contended|acquisitions] [--top N] [--csv]
 *
 * The rendering is the library's own (profile/profile_table.c); this file
 * reads the JSON back into its rows. Bad options or a file that is not a
 * lockswap profile: one line and exit status 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "profile_table.h"

static const char usage[] =
    "usage: lockswap report FILE [--sort wait|hold|contended|acquisitions] [--top N] [--csv]\n"
    "\n"
    "Re-renders a profile saved by `lockswap profile -o FILE` (LOCKSWAP_PROFILE_OUT, JSON):\n"
    "the top N mutexes (and condvars) with where each was created, the wait and hold\n"
    "histograms, and every call site of its contended acquisitions, each frame resolved\n"
    "to function and file:line with addr2line (binutils).\n"
    "\n"
    "  --sort KEY   wait (total wait time, the default), hold (total hold time),\n"
    "               contended (contended acquisitions), acquisitions\n"
    "  --top N      how many mutexes and condvars (default 10; 0: all)\n"
    "  --csv        all of it as CSV on stdout instead (one row per mutex, condvar and\n"
    "               call site, as LOCKSWAP_PROFILE_OUT=FILE.csv writes it)\n"
    "  -h, --help   this text\n";

static const char *file_name;

static __attribute__((noreturn)) void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "lockswap report: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("%s", "out of memory");
	return p;
}

/* ---- JSON ---- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
struct jv {
	enum jtype t;
	char *s;      /* J_STR: the string (NUL-terminated); J_OBJ: unused */
	size_t n;     /* J_STR: length; J_ARR, J_OBJ: members */
	uint64_t u;   /* J_NUM (non-negative integer part), J_BOOL */
	struct jv *a; /* J_ARR, J_OBJ: members */
	char **keys;  /* J_OBJ */
};

struct parser {
	const char *start, *p, *end;
};

static __attribute__((noreturn)) void syntax(struct parser *ps, const char *what)
{
	char msg[256];
	snprintf(msg, sizeof msg, "%%s: not a lockswap profile (JSON: %s at byte %ld)", what,
		 (long)(ps->p - ps->start));
	die(msg, file_name);
}

static void ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
		ps->p++;
}

static void put_utf8(char *out, size_t *k, unsigned c)
{
	if (c < 0x80) {
		out[(*k)++] = (char)c;
	} else if (c < 0x800) {
		out[(*k)++] = (char)(0xc0 | c >> 6);
		out[(*k)++] = (char)(0x80 | (c & 0x3f));
	} else {
		out[(*k)++] = (char)(0xe0 | c >> 12);
		out[(*k)++] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[(*k)++] = (char)(0x80 | (c & 0x3f));
	}
}

static char *jstring(struct parser *ps, size_t *len)
{
	ps->p++; /* " */
	const char *q = ps->p;
	while (q < ps->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= ps->end)
		syntax(ps, "unterminated string");
	char *out = xcalloc((size_t)(q - ps->p) + 1, 1);
	size_t k = 0;
	while (ps->p < q) {
		char c = *ps->p++;
		if (c != '\\') {
			out[k++] = c;
			continue;
		}
		c = *ps->p++;
		switch (c) {
		case 'n':
			out[k++] = '\n';
			break;
		case 't':
			out[k++] = '\t';
			break;
		case 'r':
			out[k++] = '\r';
			break;
		case 'b':
			out[k++] = '\b';
			break;
		case 'f':
			out[k++] = '\f';
			break;
		case 'u': {
			unsigned v = 0;
			for (int i = 0; i < 4; i++) {
				char h = ps->p < q ? *ps->p++ : 0;
				v = v * 16 + (unsigned)(h >= '0' && h <= '9'   ? h - '0'
							: h >= 'a' && h <= 'f' ? h - 'a' + 10
							: h >= 'A' && h <= 'F' ? h - 'A' + 10
									       : 0);
			}
			put_utf8(out, &k, v);
			break;
		}
		default:
			out[k++] = c;
		}
	}
	ps->p = q + 1;
	out[k] = '\0';
	*len = k;
	return out;
}

static void jvalue(struct parser *ps, struct jv *v);

static void jmembers(struct parser *ps, struct jv *v, bool obj)
{
	size_t cap = 8;
	v->a = xcalloc(cap, sizeof *v->a);
	if (obj)
		v->keys = xcalloc(cap, sizeof *v->keys);
	ps->p++;
	ws(ps);
	if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
		ps->p++;
		return;
	}
	for (;;) {
		if (v->n == cap) {
			cap *= 2;
			v->a = realloc(v->a, cap * sizeof *v->a);
			if (obj)
				v->keys = realloc(v->keys, cap * sizeof *v->keys);
			if (!v->a || (obj && !v->keys))
				die("%s", "out of memory");
		}
		memset(&v->a[v->n], 0, sizeof v->a[0]);
		ws(ps);
		if (obj) {
			size_t kl;
			if (ps->p >= ps->end || *ps->p != '"')
				syntax(ps, "object key expected");
			v->keys[v->n] = jstring(ps, &kl);
			ws(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				syntax(ps, "':' expected");
			ps->p++;
		}
		jvalue(ps, &v->a[v->n++]);
		ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
			ps->p++;
			return;
		}
		syntax(ps, obj ? "',' or '}' expected" : "',' or ']' expected");
	}
}

static void jvalue(struct parser *ps, struct jv *v)
{
	ws(ps);
	if (ps->p >= ps->end)
		syntax(ps, "value expected");
	char c = *ps->p;
	if (c == '{') {
		v->t = J_OBJ;
		jmembers(ps, v, true);
	} else if (c == '[') {
		v->t = J_ARR;
		jmembers(ps, v, false);
	} else if (c == '"') {
		v->t = J_STR;
		v->s = jstring(ps, &v->n);
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		char *end;
		v->t = J_NUM;
		errno = 0;
		v->u = c == '-' ? 0 : strtoull(ps->p, &end, 10);
		if (c == '-' || (end < ps->end && (*end == '.' || *end == 'e' || *end == 'E')))
			(void)strtod(ps->p, &end);
		ps->p = end;
	} else if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
		v->t = J_BOOL;
		v->u = c == 't';
		ps->p += c == 't' ? 4 : 5;
	} else if (!strncmp(ps->p, "null", 4)) {
		v->t = J_NULL;
		ps->p += 4;
	} else {
		syntax(ps, "unexpected character");
	}
}

static const struct jv *get(const struct jv *o, const char *key)
{
	if (!o || o->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->a[i];
	return NULL;
}

static uint64_t num(const struct jv *o, const char *key)
{
	const struct jv *v = get(o, key);
	return v && (v->t == J_NUM || v->t == J_BOOL) ? v->u : 0;
}

static const char *str(const struct jv *o, const char *key)
{
	const struct jv *v = get(o, key);
	return v && v->t == J_STR ? v->s : NULL;
}

/* ---- rows from JSON ---- */

static uint64_t *hist(const struct jv *o, const char *key)
{
	const struct jv *v = get(o, key);
	if (!v || v->t != J_ARR || !v->n)
		return NULL;
	uint64_t *h = xcalloc(LS_PROF_BUCKETS, sizeof *h);
	for (size_t i = 0; i < v->n && i < LS_PROF_BUCKETS; i++)
		h[i] = v->a[i].u;
	return h;
}

static unsigned stack_index(const struct jv *o, unsigned nstacks)
{
	const struct jv *v = get(o, "stack");
	return v && v->t == J_NUM && v->u < nstacks ? (unsigned)v->u : LS_PROF_NO_STACK;
}

static void rows(const struct jv *arr, bool cond, struct ls_prof_row **out, unsigned *n, unsigned nstacks)
{
	static const char *const mcount[LS_PROF_NCOUNT] = {
	    "lock", "trylock", "timedlock", "contended", "trylock_failed", "timeouts", "handoffs"};
	static const char *const ccount[4] = {"waits", "timeouts", "signals", "broadcasts"};
	*n = arr && arr->t == J_ARR ? (unsigned)arr->n : 0;
	*out = xcalloc(*n, sizeof **out);
	for (unsigned i = 0; i < *n; i++) {
		const struct jv *o = &arr->a[i];
		struct ls_prof_row *r = &(*out)[i];
		r->id = (unsigned)num(o, "id");
		r->cond = cond;
		r->glibc = num(o, "glibc") != 0;
		r->type = str(o, "type") ? str(o, "type") : "?";
		r->origin = str(o, "origin") ? str(o, "origin") : "?";
		r->ended = str(o, "ended") ? str(o, "ended") : "";
		r->address = num(o, "address");
		r->stack = stack_index(o, nstacks);
		for (int c = 0; c < (cond ? 4 : LS_PROF_NCOUNT); c++)
			r->n[c] = num(o, cond ? ccount[c] : mcount[c]);
		r->max_waiters = num(o, "max_waiters");
		r->wait_ns = num(o, "wait_ns");
		r->wait_max = num(o, "wait_max_ns");
		r->hold_ns = num(o, "hold_ns");
		r->hold_max = num(o, "hold_max_ns");
		r->wait_h = hist(o, "wait_hist");
		r->hold_h = hist(o, "hold_hist");
		const struct jv *s = get(o, "sites");
		r->nsites = s && s->t == J_ARR ? (unsigned)s->n : 0;
		r->sites = xcalloc(r->nsites, sizeof *r->sites);
		for (unsigned k = 0; k < r->nsites; k++) {
			r->sites[k].stack = stack_index(&s->a[k], nstacks);
			r->sites[k].count = num(&s->a[k], "contended");
			r->sites[k].timeouts = num(&s->a[k], "timeouts");
			r->sites[k].wait_ns = num(&s->a[k], "wait_ns");
		}
	}
}

/* ---- file:line through addr2line ---- */

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

/* Resolves frames[0..n) of one module: addr2line -f -C -e MODULE ADDR...,
 * two lines per address (function, file:line). */
static void resolve_module(const char *module, struct ls_prof_frame **frames, size_t n)
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
			char **args = xcalloc(to - from + 8, sizeof *args);
			int k = 0;
			args[k++] = "addr2line";
			args[k++] = "-f";
			args[k++] = "-C";
			args[k++] = "-e";
			args[k++] = (char *)module;
			for (size_t i = from; i < to; i++) {
				args[k] = xcalloc(24, 1);
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
		char fn[4096], loc[4096];
		for (size_t i = from; f && i < to; i++) {
			if (!fgets(fn, sizeof fn, f) || !fgets(loc, sizeof loc, f))
				break;
			trim_line(fn);
			trim_line(loc);
			struct ls_prof_frame *fr = frames[i];
			if (strcmp(fn, "??") != 0) {
				/* an inlined function, or a name the ELF symbols lacked:
				 * the offset of the symbol does not apply to it */
				if (!fr->sym || strcmp(fr->sym, fn) != 0)
					fr->symoff = LS_PROF_NO_OFFSET;
				fr->sym = strdup(fn);
				fr->symlen = strlen(fn);
			}
			if (strncmp(loc, "??", 2) != 0) {
				const char *base = strrchr(loc, '/');
				fr->line = strdup(base ? base + 1 : loc);
			}
		}
		if (f)
			fclose(f);
		int st;
		waitpid(pid, &st, 0);
	}
}

static int by_module(const void *a, const void *b)
{
	const struct ls_prof_frame *x = *(struct ls_prof_frame *const *)a,
				   *y = *(struct ls_prof_frame *const *)b;
	return strcmp(x->module, y->module);
}

static void resolve(struct ls_prof_stack *stacks, unsigned nstacks)
{
	size_t n = 0;
	for (unsigned i = 0; i < nstacks; i++)
		n += stacks[i].n;
	struct ls_prof_frame **all = xcalloc(n, sizeof *all);
	size_t k = 0;
	for (unsigned i = 0; i < nstacks; i++)
		for (unsigned f = 0; f < stacks[i].n; f++)
			if (stacks[i].f[f].module && *stacks[i].f[f].module)
				all[k++] = (struct ls_prof_frame *)&stacks[i].f[f];
	qsort(all, k, sizeof *all, by_module);
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && !strcmp(all[j]->module, all[i]->module))
			j++;
		if (access(all[i]->module, R_OK) == 0)
			resolve_module(all[i]->module, all + i, j - i);
		i = j;
	}
	free(all);
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"sort", required_argument, NULL, 'S'},
	    {"top", required_argument, NULL, 'T'},
	    {"csv", no_argument, NULL, 'C'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int key = LS_SORT_WAIT, c;
	unsigned long top = 10;
	bool csv = false;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			if (!strcmp(optarg, "wait"))
				key = LS_SORT_WAIT;
			else if (!strcmp(optarg, "hold"))
				key = LS_SORT_HOLD;
			else if (!strcmp(optarg, "contended"))
				key = LS_SORT_CONTENDED;
			else if (!strcmp(optarg, "acquisitions"))
				key = LS_SORT_ACQUIRED;
			else
				die("--sort: unknown key '%s' (valid: wait, hold, contended, acquisitions)",
				    optarg);
			break;
		case 'T':
			if (!cli_unsigned(optarg, 0, 100000000))
				die("--top: invalid value '%s' (valid: 0..100000000, 0 for all)", optarg);
			top = strtoul(optarg, NULL, 10);
			break;
		case 'C':
			csv = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			die("bad option or missing argument: %s (see lockswap report --help)",
			    argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		die("%s", optind >= argc ? "no profile file given (see lockswap report --help)"
					 : "one profile file only (see lockswap report --help)");
	file_name = argv[optind];

	FILE *f = fopen(file_name, "r");
	if (!f)
		die("cannot read %s", file_name);
	size_t cap = 1 << 20, len = 0;
	char *text = xcalloc(cap, 1);
	size_t got;
	while ((got = fread(text + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap) {
			cap *= 2;
			if (!(text = realloc(text, cap)))
				die("%s", "out of memory");
		}
	}
	fclose(f);
	struct parser ps = {text, text, text + len};
	struct jv root = {0};
	ws(&ps);
	if (ps.p >= ps.end || *ps.p != '{')
		die("%s: not a lockswap profile (a JSON object expected; CSV profiles cannot be re-read)",
		    file_name);
	jvalue(&ps, &root);
	if (!get(&root, "lockswap_profile"))
		die("%s: not a lockswap profile (no \"lockswap_profile\" field)", file_name);

	struct ls_prof p = {0};
	const struct jv *st = get(&root, "stacks");
	unsigned nstacks = st && st->t == J_ARR ? (unsigned)st->n : 0;
	struct ls_prof_stack *stacks = xcalloc(nstacks, sizeof *stacks);
	for (unsigned i = 0; i < nstacks; i++) {
		const struct jv *s = &st->a[i];
		unsigned n = s->t == J_ARR ? (unsigned)s->n : 0;
		struct ls_prof_frame *fr = xcalloc(n, sizeof *fr);
		for (unsigned k = 0; k < n; k++) {
			const struct jv *o = &s->a[k];
			fr[k].module = str(o, "module");
			if (fr[k].module && !*fr[k].module)
				fr[k].module = NULL;
			fr[k].offset = num(o, "offset");
			fr[k].sym = str(o, "symbol");
			fr[k].symlen = fr[k].sym ? strlen(fr[k].sym) : 0;
			fr[k].symoff = get(o, "symbol_offset") ? num(o, "symbol_offset") : LS_PROF_NO_OFFSET;
		}
		stacks[i].n = n;
		stacks[i].f = fr;
	}
	if (have_addr2line())
		resolve(stacks, nstacks);
	else
		fprintf(
		    stderr,
		    "lockswap report: addr2line not found (install binutils): frames without file:line\n");
	p.stacks = stacks;
	p.nstacks = nstacks;
	p.h.pid = (int)num(&root, "pid");
	p.h.program = str(&root, "program");
	p.h.algo = str(&root, "algorithm");
	p.h.wait = str(&root, "wait");
	p.h.duration_ns = num(&root, "duration_ns");
	p.h.threads = num(&root, "threads");
	p.h.unrecorded = num(&root, "unrecorded");
	p.h.stackless = num(&root, "stackless");
	p.h.sample = (unsigned)num(&root, "sample");
	p.h.frames = (unsigned)num(&root, "frames");
	rows(get(&root, "mutexes"), false, &p.mutex, &p.h.nmutex, nstacks);
	rows(get(&root, "condvars"), true, &p.cond, &p.h.ncond, nstacks);
	ls_prof_sort(p.mutex, p.h.nmutex, key);
	ls_prof_sort(p.cond, p.h.ncond, key);

	struct ls_out *o = xcalloc(1, sizeof *o);
	ls_out_init(o, 1);
	if (csv)
		ls_prof_csv(o, &p);
	else
		ls_prof_table(o, &p, top ? (unsigned)top : UINT32_MAX, UINT32_MAX, true);
	return o->failed ? 1 : 0;
}
