/*
 * lockswap-report - `lockswap report`: re-render a profile saved as JSON by
 * LOCKSWAP_PROFILE_OUT (or `lockswap profile -o`), with every frame
 * resolved to function and file:line by addr2line (binutils), every call
 * site, the creation stack and the wait and hold histograms of each mutex;
 * or as flame graphs (report_flame.c: --folded, --svg).
 *
 *   lockswap report FILE [--sort KEY] [--top N] [--csv | --folded [--weight W] | --svg OUT]
 *
 * Debug information, per module (each module once, never per frame): its
 * own DWARF, a file under /usr/lib/debug (by build-id or .gnu_debuglink),
 * which addr2line finds by itself; else, when DEBUGINFOD_URLS is set, the
 * debug file that elfutils' libdebuginfod fetches by the module's build-id
 * (one library call, kept in debuginfod's own cache, DEBUGINFOD_CACHE_PATH
 * or ~/.cache/debuginfod_client, so the next report asks no server). A
 * module left without file:line gets one line on stderr saying why.
 *
 * The rendering is the library's own (profile/profile_table.c,
 * profile_csv.c); this file reads the JSON back into its rows. Bad options or a file that is not a
 * lockswap profile: one line and exit status 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <elfutils/debuginfod.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "profile_csv.h"
#include "profile_json.h"
#include "profile_table.h"
#include "report_flame.h"
#include "report_map.h"

static const char usage[] =
    "usage: lockswap report FILE [--sort KEY] [--top N] [--csv | --folded [--weight W] | --svg OUT |\n"
    "                             --map [--algo ALGO] [--rwalgo RWALGO]]\n"
    "\n"
    "Re-renders a profile saved by `lockswap profile -o FILE` (LOCKSWAP_PROFILE_OUT, JSON):\n"
    "the top N mutexes (and condvars, rwlocks, spinlocks) with where each was created,\n"
    "the wait and hold histograms, and every call site of its contended acquisitions\n"
    "(an rwlock's read and write ones apart), each frame resolved to function and\n"
    "file:line with addr2line (binutils). A module without local debug information is\n"
    "looked up by its build-id through debuginfod when DEBUGINFOD_URLS is set (elfutils'\n"
    "client, cached in DEBUGINFOD_CACHE_PATH or ~/.cache/debuginfod_client).\n"
    "\n"
    "  --sort KEY   wait (total wait time, the default), hold (total hold time),\n"
    "               contended (contended acquisitions), acquisitions\n"
    "  --top N      how many of each: mutexes, condvars, rwlocks, spinlocks (default 10;\n"
    "               0: all); with --svg, how many locks get a flame graph of their own\n"
    "  --csv        all of it as CSV on stdout instead (one row per mutex, condvar, rwlock,\n"
    "               spinlock and call site, as LOCKSWAP_PROFILE_OUT=FILE.csv writes it)\n"
    "  --folded     folded stacks on stdout instead, for flamegraph.pl or inferno: one line\n"
    "               per stack, \"outer;...;inner;mutex #N where VALUE\" (rwlock #N where\n"
    "               (read) or (write), spinlock #N where)\n"
    "  --weight W   what --folded counts: wait (ns waited, the default), contended\n"
    "               (acquisitions and timed attempts that waited), hold (ns held, by the\n"
    "               stack that created each lock: holds have no stack of their own)\n"
    "  --svg OUT    flame graphs as one SVG file OUT (opens in a browser): wait time by call\n"
    "               stack for the whole program and for each top lock, hold time by lock\n"
    "  --map        a ready LOCKSWAP_ALGO_MAP line instead: a rule for each of the top N\n"
    "               contended mutexes and rwlocks (by --sort), naming a function or\n"
    "               FILE:LINE of its creation stack that no other lock of its family has,\n"
    "               then * for the others with the profile's algorithms; one comment line\n"
    "               per lock says why\n"
    "  --algo ALGO  with --map: the algorithm of every rule (default: chosen per mutex from\n"
    "               its counts: mutexee when threads outnumber CPUs, mcs for queues of 3\n"
    "               or more, else ttas; lockswap compare --per-lock measures)\n"
    "  --rwalgo RWALGO  with --map: the algorithm of every rwlock rule (default: pf-t+bravo\n"
    "               for an rwlock read 4 times as often as written, else pf-t)\n"
    "  -h, --help   this text\n"
    "\n"
    "Exit status: 0, 1 if the output could not be written, 2 for bad options or a file\n"
    "that is not a lockswap profile.\n";

static const char *file_name;
static const char *svg_name; /* --svg's file, removed if the report dies */

static __attribute__((noreturn)) void die(const char *fmt, const char *arg)
{
	if (svg_name)
		unlink(svg_name);
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

enum { ROWS_MUTEX, ROWS_COND, ROWS_RWLOCK, ROWS_SPIN };

/* One of the arrays of rows ("mutexes", "condvars", "rwlocks", "spinlocks":
 * a profile saved before rwlocks and spinlocks were recorded has none of
 * the last two, and renders as it did). */
static void rows(const struct jv *arr, int kind, struct ls_prof_row **out, unsigned *n, unsigned nstacks)
{
	const char *const *names = kind == ROWS_COND	 ? ls_prof_cond_counts
				   : kind == ROWS_RWLOCK ? ls_prof_rw_counts
							 : ls_prof_mutex_counts;
	int ncount = kind == ROWS_COND ? 4 : kind == ROWS_RWLOCK ? LS_PROF_NCOUNT : LS_PROF_NMUTEX;
	*n = arr && arr->t == J_ARR ? (unsigned)arr->n : 0;
	*out = xcalloc(*n, sizeof **out);
	for (unsigned i = 0; i < *n; i++) {
		const struct jv *o = &arr->a[i];
		struct ls_prof_row *r = &(*out)[i];
		r->id = (unsigned)num(o, "id");
		r->cond = kind == ROWS_COND;
		r->rwlock = kind == ROWS_RWLOCK;
		r->spin = kind == ROWS_SPIN;
		r->glibc = num(o, "glibc") != 0;
		r->type = str(o, "type") ? str(o, "type") : "?";
		r->origin = str(o, "origin") ? str(o, "origin") : "?";
		r->ended = str(o, "ended") ? str(o, "ended") : "";
		r->algo = str(o, "algorithm"); /* a profile under an algorithm map */
		r->rule = str(o, "rule");
		r->address = num(o, "address");
		r->stack = stack_index(o, nstacks);
		for (int c = 0; c < ncount; c++)
			r->n[c] = num(o, names[c]);
		r->max_waiters = num(o, "max_waiters");
		r->wait_ns = num(o, "wait_ns");
		r->wait_max = num(o, "wait_max_ns");
		r->hold_ns = num(o, "hold_ns");
		r->hold_max = num(o, "hold_max_ns");
		r->rd_wait_ns = num(o, "read_wait_ns");
		r->rd_hold_ns = num(o, "read_hold_ns");
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
			const char *mode = str(&s->a[k], "mode");
			r->sites[k].read = mode && !strcmp(mode, "read");
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

/* ---- where a module's debug information is ---- */

struct elf_info {
	bool dwarf;	      /* has its own .debug_info */
	unsigned char id[64]; /* NT_GNU_BUILD_ID */
	size_t idlen;
	char link[256]; /* .gnu_debuglink's file name, or "" */
};

/* The GNU build-id among the notes in [p, p + n), aligned to `align`. */
static void build_id_in(const char *p, size_t n, size_t align, struct elf_info *e)
{
	align = align == 8 ? 8 : 4;
	while (n >= sizeof(Elf64_Nhdr) && !e->idlen) {
		const Elf64_Nhdr *h = (const Elf64_Nhdr *)p;
		size_t name = (h->n_namesz + align - 1) & ~(align - 1);
		size_t desc = (h->n_descsz + align - 1) & ~(align - 1);
		if (name > n - sizeof *h || desc > n - sizeof *h - name)
			return;
		const char *nm = p + sizeof *h;
		if (h->n_type == NT_GNU_BUILD_ID && h->n_namesz == 4 && !memcmp(nm, "GNU", 4) &&
		    h->n_descsz > 0 && h->n_descsz <= sizeof e->id) {
			memcpy(e->id, nm + name, h->n_descsz);
			e->idlen = h->n_descsz;
		}
		p += sizeof *h + name + desc;
		n -= sizeof *h + name + desc;
	}
}

/* Reads what decides where module's debug information is: its own DWARF,
 * its build-id, its debug link. Every offset is checked against the file's
 * size. False if it is no readable 64-bit ELF file. */
static bool elf_inspect(const char *path, struct elf_info *e)
{
	memset(e, 0, sizeof *e);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return false;
	}
	size_t size = (size_t)st.st_size;
	const char *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return false;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
	bool ok = !memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_ident[EI_CLASS] == ELFCLASS64;
	if (ok && eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shoff <= size &&
	    (size - eh->e_shoff) / sizeof(Elf64_Shdr) >= eh->e_shnum && eh->e_shstrndx < eh->e_shnum) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
		const Elf64_Shdr *names = &sh[eh->e_shstrndx];
		for (unsigned i = 0;
		     names->sh_offset <= size && names->sh_size <= size - names->sh_offset && i < eh->e_shnum;
		     i++) {
			const Elf64_Shdr *s = &sh[i];
			bool in_file = s->sh_type != SHT_NOBITS && s->sh_offset <= size &&
				       s->sh_size <= size - s->sh_offset;
			if (s->sh_name >= names->sh_size || !in_file)
				continue;
			const char *name = f + names->sh_offset + s->sh_name;
			if (!memchr(name, '\0', names->sh_size - s->sh_name))
				continue;
			if (!strcmp(name, ".debug_info") && s->sh_size > 0)
				e->dwarf = true;
			else if (!strcmp(name, ".gnu_debuglink") && s->sh_size > 0 &&
				 memchr(f + s->sh_offset, '\0', s->sh_size) &&
				 strlen(f + s->sh_offset) < sizeof e->link)
				strcpy(e->link, f + s->sh_offset);
			else if (s->sh_type == SHT_NOTE)
				build_id_in(f + s->sh_offset, s->sh_size, s->sh_addralign, e);
		}
	}
	/* no section headers left (sstrip): the notes' segments */
	if (ok && !e->idlen && eh->e_phentsize == sizeof(Elf64_Phdr) && eh->e_phoff <= size &&
	    (size - eh->e_phoff) / sizeof(Elf64_Phdr) >= eh->e_phnum) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(f + eh->e_phoff);
		for (unsigned i = 0; i < eh->e_phnum; i++)
			if (ph[i].p_type == PT_NOTE && ph[i].p_offset <= size &&
			    ph[i].p_filesz <= size - ph[i].p_offset)
				build_id_in(f + ph[i].p_offset, ph[i].p_filesz, ph[i].p_align, e);
	}
	munmap((void *)f, size);
	return ok;
}

static char *hex(const unsigned char *id, size_t n, char *buf)
{
	for (size_t i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	buf[2 * n] = '\0';
	return buf;
}

/* Whether addr2line finds debug information for module by itself: its own
 * DWARF, /usr/lib/debug/.build-id/xx/yyyy.debug, or the debug link's file
 * beside it, in .debug/ beside it, or under /usr/lib/debug (binutils'
 * search order). */
static bool local_debug(const char *module, const struct elf_info *e)
{
	char path[PATH_MAX + 300], id[2 * sizeof e->id + 1];
	if (e->dwarf)
		return true;
	if (e->idlen >= 2) {
		hex(e->id, e->idlen, id);
		snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
		if (access(path, R_OK) == 0)
			return true;
	}
	if (*e->link) {
		const char *slash = strrchr(module, '/');
		int dir = slash ? (int)(slash - module) : 0;
		static const char *const forms[] = {"%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s"};
		for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
			snprintf(path, sizeof path, forms[i], dir, module, e->link);
			if (strcmp(path, module) != 0 && access(path, R_OK) == 0)
				return true;
		}
	}
	return false;
}

static debuginfod_client *dbgclient;

/* The file addr2line reads for module's frames: the module itself (its own
 * DWARF, or a local debug file addr2line finds from it), or the debug file
 * debuginfod fetched (malloc'd). NULL: the module is not here. A module left
 * without debug information gets one line on stderr. */
static char *debug_source(const char *module)
{
	struct elf_info e;
	char id[2 * sizeof e.id + 1];
	if (access(module, R_OK) != 0) {
		fprintf(stderr,
			"lockswap report: %s: not found here: its frames stay as saved, without file:line\n",
			module);
		return NULL;
	}
	if (!elf_inspect(module, &e) || local_debug(module, &e))
		return strdup(module);
	hex(e.id, e.idlen, id);
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!e.idlen) {
		fprintf(stderr,
			"lockswap report: %s: no debug information, and no build-id to look it up by: "
			"its frames stay without file:line\n",
			module);
	} else if (!urls || !*urls) {
		fprintf(stderr,
			"lockswap report: %s: no debug information (build-id %s): its frames stay without "
			"file:line; set DEBUGINFOD_URLS to fetch it, or install its debug symbols\n",
			module, id);
	} else {
		if (!dbgclient && !(dbgclient = debuginfod_begin())) {
			fprintf(stderr, "lockswap report: cannot start the debuginfod client: %s\n",
				strerror(errno));
			return strdup(module);
		}
		/* one call per module: the cache, then each server */
		char *path = NULL;
		int fd = debuginfod_find_debuginfo(dbgclient, e.id, (int)e.idlen, &path);
		if (fd >= 0) {
			close(fd);
			return path;
		}
		fprintf(
		    stderr,
		    "lockswap report: %s: no debug information here, and debuginfod did not get it (build-id "
		    "%s: %s): its frames stay without file:line\n",
		    module, id, fd == -ENOENT ? "no server in DEBUGINFOD_URLS has it" : strerror(-fd));
	}
	return strdup(module);
}

static int by_module(const void *a, const void *b)
{
	const struct ls_prof_frame *x = *(struct ls_prof_frame *const *)a,
				   *y = *(struct ls_prof_frame *const *)b;
	return strcmp(x->module, y->module);
}

/* Resolves every frame, one module at a time: one debug file lookup and
 * one addr2line per module (per 256 of its frames). */
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
		char *src = debug_source(all[i]->module);
		if (src)
			resolve_module(src, all + i, j - i);
		free(src);
		i = j;
	}
	if (dbgclient)
		debuginfod_end(dbgclient);
	dbgclient = NULL;
	free(all);
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"sort", required_argument, NULL, 'S'},
	    {"top", required_argument, NULL, 'T'},
	    {"csv", no_argument, NULL, 'C'},
	    {"folded", no_argument, NULL, 'F'},
	    {"weight", required_argument, NULL, 'W'},
	    {"svg", required_argument, NULL, 'G'},
	    {"map", no_argument, NULL, 'M'},
	    {"algo", required_argument, NULL, 'A'},
	    {"rwalgo", required_argument, NULL, 'R'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int key = LS_SORT_WAIT, c;
	unsigned long top = 10;
	bool csv = false, fold = false, weight_set = false, map = false;
	const char *map_algo = NULL, *map_rwalgo = NULL;
	enum flame_weight weight = FLAME_WAIT;
	const char *svg = NULL;
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
		case 'F':
			fold = true;
			break;
		case 'W':
			weight_set = true;
			if (!strcmp(optarg, "wait"))
				weight = FLAME_WAIT;
			else if (!strcmp(optarg, "contended"))
				weight = FLAME_CONTENDED;
			else if (!strcmp(optarg, "hold"))
				weight = FLAME_HOLD;
			else
				die("--weight: unknown weight '%s' (valid: wait, contended, hold)", optarg);
			break;
		case 'G':
			if (!*optarg)
				die("%s", "--svg: an output file is needed (see lockswap report --help)");
			svg = optarg;
			break;
		case 'M':
			map = true;
			break;
		case 'A':
			if (!*optarg || strpbrk(optarg, ",=/ "))
				die("--algo: '%s' is not an algorithm name (see lockswap --list)", optarg);
			map_algo = optarg;
			break;
		case 'R':
			if (!*optarg || strpbrk(optarg, ",=/ "))
				die("--rwalgo: '%s' is not an rwlock algorithm name (see lockswap --names "
				    "rwlock)",
				    optarg);
			map_rwalgo = optarg;
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
	if (csv + fold + (svg != NULL) + map > 1)
		die("%s",
		    "--csv, --folded, --svg and --map: one of them at a time (see lockswap report --help)");
	if ((map_algo || map_rwalgo) && !map)
		die("%s", "--algo and --rwalgo are only meaningful with --map");
	if (weight_set && !fold)
		die("%s", "--weight is only meaningful with --folded");
	file_name = argv[optind];
	/* before the profile is read and resolved, which may take a while */
	FILE *svg_out = NULL;
	if (svg) {
		if (!(svg_out = fopen(svg, "w")))
			die("--svg: cannot write %s", svg);
		svg_name = svg;
	}

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
	/* the names the matcher of an algorithm map sees (addr2line's replace
	 * them with demangled and inlined ones) */
	const char ***syms = xcalloc(nstacks + 1, sizeof *syms);
	for (unsigned i = 0; i < nstacks; i++) {
		syms[i] = xcalloc(stacks[i].n + 1, sizeof **syms);
		for (unsigned k = 0; k < stacks[i].n; k++)
			syms[i][k] = stacks[i].f[k].sym;
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
	p.h.rwalgo = str(&root, "rwlock_algorithm");
	p.h.spinalgo = str(&root, "spin_algorithm");
	p.h.duration_ns = num(&root, "duration_ns");
	p.h.threads = num(&root, "threads");
	p.h.cpus = (unsigned)num(&root, "cpus");
	p.h.unrecorded = num(&root, "unrecorded");
	p.h.stackless = num(&root, "stackless");
	p.h.sample = (unsigned)num(&root, "sample");
	p.h.frames = (unsigned)num(&root, "frames");
	rows(get(&root, "mutexes"), ROWS_MUTEX, &p.mutex, &p.h.nmutex, nstacks);
	rows(get(&root, "condvars"), ROWS_COND, &p.cond, &p.h.ncond, nstacks);
	rows(get(&root, "rwlocks"), ROWS_RWLOCK, &p.rwlock, &p.h.nrwlock, nstacks);
	rows(get(&root, "spinlocks"), ROWS_SPIN, &p.spin, &p.h.nspin, nstacks);
	ls_prof_sort(p.mutex, p.h.nmutex, key);
	ls_prof_sort(p.cond, p.h.ncond, key);
	ls_prof_sort(p.rwlock, p.h.nrwlock, key);
	ls_prof_sort(p.spin, p.h.nspin, key);

	if (map) {
		if (report_map(stdout, &p, (const char *const *const *)syms, top ? (unsigned)top : UINT32_MAX,
			       map_algo, map_rwalgo, p.h.cpus) != 0 ||
		    fflush(stdout) != 0) {
			fprintf(stderr, "lockswap report: cannot write the map: %s\n", strerror(errno));
			return 1;
		}
		return 0;
	}
	if (fold) {
		if (flame_folded(stdout, &p, weight) != 0) {
			fprintf(stderr, "lockswap report: cannot write the folded stacks: %s\n",
				strerror(errno));
			return 1;
		}
		return 0;
	}
	if (svg_out) {
		int rc = flame_svg(svg_out, &p, top ? (unsigned)top : UINT32_MAX);
		if (fclose(svg_out) != 0 || rc != 0) {
			fprintf(stderr, "lockswap report: cannot write %s: %s\n", svg, strerror(errno));
			return 1;
		}
		return 0;
	}
	struct ls_out *o = xcalloc(1, sizeof *o);
	ls_out_init(o, 1);
	if (csv)
		ls_prof_csv(o, &p);
	else
		ls_prof_table(o, &p, top ? (unsigned)top : UINT32_MAX, UINT32_MAX, true);
	return o->failed ? 1 : 0;
}
