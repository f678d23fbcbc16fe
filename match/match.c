/*
 * match.c - the per-mutex rules and their matching (see match.h).
 *
 * Cost. Each mutex is matched once, by the shim, when it is initialised or
 * first used: one stack walk (stack.h), then each frame's return address
 * is looked up in a cache of what rules it satisfies (a mask of rule
 * indices). A miss resolves the address once: its module (dladdr1), its
 * function (the module's ELF symbol table, stack/elfsym.h, read once per
 * module) if a rule names a function, its source line (lines.h) if a rule
 * names one. A program that creates 100,000 mutexes from one place walks
 * 100,000 stacks and resolves each of their few return addresses once.
 *
 * The cache is flushed when a module is unloaded (glibc's dlpi_subs count
 * changes): an address may then hold other code.
 *
 * Concurrency. Walks run in parallel; lookups are serialised by a lock of
 * the matcher's own (a lockswap TTAS word, never a pthread mutex: those
 * come back here). A thread takes it only inside the stack gate (stack.h),
 * so no thread holds it when fork drains the gate, and a child never
 * inherits it held.
 *
 * Cancellation is disabled while matching: the walk and the lookups read
 * files, cancellation points that must not act inside a mutex call.
 *
 * Re-entry. The lookups call the allocator, dladdr and libdw, and libunwind
 * takes mutexes of its own: a mutex created or first used by them, on the
 * thread that is matching, comes back through the shim to ls_match_caller,
 * which then answers the '*' rule at once (a thread-local flag), without
 * a walk and without the lock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsym.h"
#include "lines.h"
#include "match.h"
#include "spin/ttas_word.h"
#include "stack.h"

static struct ls_rule rules[LS_MATCH_MAX];
static unsigned nrules;
static bool need_stack, need_syms, need_lines;
static uint64_t any_mask; /* the '*' rules */
static _Atomic bool started;
static char exe[PATH_MAX];

static _Atomic uint64_t n_walks, n_unwalked, n_resolved;
static __thread bool matching __attribute__((tls_model("initial-exec")));

/* ---- memory: mmap, never the program's allocator ---- */

static size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

static void *map(size_t n)
{
	void *p = mmap(NULL, page_round(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Names kept for the life of the process (module paths): a bump arena. */
static char *arena;
static size_t arena_left;

static const char *keep(const char *s)
{
	size_t n = strlen(s) + 1;
	if (n > arena_left) {
		size_t size = n > 65536 ? n : 65536;
		char *p = map(size);
		if (!p)
			return NULL;
		arena = p;
		arena_left = page_round(size);
	}
	char *r = arena;
	memcpy(r, s, n);
	arena += n;
	arena_left -= n;
	return r;
}

/* ---- parsing ---- */

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && !strcmp(s + a - b, tail);
}

/* "name" is path's last component or its end at a '/' boundary. */
static bool path_ends_with(const char *path, const char *name)
{
	if (name[0] == '.' && name[1] == '/')
		name += 2;
	size_t a = strlen(path), b = strlen(name);
	return a >= b && !strcmp(path + a - b, name) && (a == b || path[a - b - 1] == '/');
}

/* A MODULE rule's pattern: a path's end (with a '/'), else the file name,
 * or the file name before a version suffix (libfoo.so for libfoo.so.1). */
static bool module_is(const char *path, const char *pattern)
{
	if (strchr(pattern, '/'))
		return path_ends_with(path, pattern);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t k = strlen(pattern);
	return !strncmp(base, pattern, k) && (base[k] == '\0' || base[k] == '.');
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

static bool has_space(const char *s)
{
	return strpbrk(s, " \t") != NULL;
}

/* One rule, in place (tok is kept: it lives in the parsed copy). `where`
 * prefixes messages: "LOCKSWAP_ALGO_MAP" or "LOCKSWAP_CONFIG FILE:LINE". */
static int parse_rule(char *tok, const char *where, char *err, size_t len)
{
	static const char syntax[] = "expected PATTERN=ALGORITHM, the pattern a FUNCTION, FILE:LINE, a "
				     "MODULE (with .so or a '/'), MODULE+0xOFFSET or *";
	if (nrules == LS_MATCH_MAX) {
		snprintf(err, len, "%s: more than %d rules", where, LS_MATCH_MAX);
		return -1;
	}
	struct ls_rule *r = &rules[nrules];
	r->text = keep(tok);
	r->where = keep(where);
	char *eq = strchr(tok, '=');
	if (!r->text || !r->where || !eq) {
		snprintf(err, len, "%s: rule '%.100s': %s", where, tok, syntax);
		return -1;
	}
	*eq = '\0';
	char *pat = trim(tok), *target = trim(eq + 1);
	if (!*pat || !*target || has_space(pat) || has_space(target) || strchr(target, '=')) {
		snprintf(err, len, "%s: rule '%.100s': %s", where, r->text, syntax);
		return -1;
	}
	if (strchr(target, '/')) {
		snprintf(err, len,
			 "%s: rule '%.100s': a waiting policy per lock is not supported (the policy is read "
			 "inside every algorithm's waiting loops, for the whole process): set LOCKSWAP_WAIT",
			 where, r->text);
		return -1;
	}
	r->target = target;
	r->pattern = pat;
	char *colon = strrchr(pat, ':'), *plus = strstr(pat, "+0x");
	if (!strcmp(pat, "*")) {
		/* one per family of locks: the shim, which knows the
		 * families, refuses a second (bind_rules.c) */
		r->kind = LS_RULE_ANY;
	} else if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		unsigned long line = strtoul(colon + 1, NULL, 10);
		if (colon == pat || line == 0 || line > 100000000ul) {
			snprintf(err, len, "%s: rule '%.100s': expected FILE:LINE with a line from 1", where,
				 r->text);
			return -1;
		}
		*colon = '\0';
		r->kind = LS_RULE_LINE;
		r->line = (unsigned)line;
	} else if (plus && plus[3] && strspn(plus + 3, "0123456789abcdefABCDEF") == strlen(plus + 3)) {
		if (plus == pat || strlen(plus + 3) > 12) {
			snprintf(err, len, "%s: rule '%.100s': expected MODULE+0xOFFSET", where, r->text);
			return -1;
		}
		r->offset = strtoull(plus + 3, NULL, 16);
		*plus = '\0';
		r->kind = LS_RULE_OFFSET;
	} else if (strchr(pat, '/') || ends_with(pat, ".so") || strstr(pat, ".so.")) {
		r->kind = LS_RULE_MODULE;
	} else {
		r->kind = LS_RULE_FUNC;
	}
	need_stack |= r->kind != LS_RULE_ANY;
	if (r->kind == LS_RULE_ANY)
		any_mask |= 1ull << nrules;
	need_syms |= r->kind == LS_RULE_FUNC;
	need_lines |= r->kind == LS_RULE_LINE;
	nrules++;
	return 0;
}

/* Splits text (a copy of its own, kept) at commas and newlines; in a file
 * '#' starts a comment. */
static int parse_text(const char *text, size_t n, const char *origin, bool file, char *err, size_t len)
{
	char *copy = map(n + 1);
	if (!copy) {
		snprintf(err, len, "%s: no memory for the rules", origin);
		return -1;
	}
	memcpy(copy, text, n);
	copy[n] = '\0';
	unsigned lineno = 1;
	char where[PATH_MAX + 64];
	for (char *p = copy; *p;) {
		char *end = p + strcspn(p, file ? ",\n#" : ",\n");
		char stop = *end;
		*end = '\0';
		char *tok = trim(p);
		if (file)
			snprintf(where, sizeof where, "%s:%u", origin, lineno);
		else
			snprintf(where, sizeof where, "%s", origin);
		if (*tok && parse_rule(tok, where, err, len))
			return -1;
		if (stop == '#') { /* to the end of the line */
			end += strcspn(end + 1, "\n") + 1;
			stop = *end;
		}
		if (stop == '\n')
			lineno++;
		p = stop ? end + 1 : end;
	}
	if (!nrules) {
		snprintf(err, len, "%s: no rules (expected PATTERN=ALGORITHM, ...)", origin);
		return -1;
	}
	return 0;
}

int ls_match_parse(const char *text, char *err, size_t len)
{
	return parse_text(text, strlen(text), "LOCKSWAP_ALGO_MAP", false, err, len);
}

int ls_match_parse_file(const char *path, char *err, size_t len)
{
	char origin[PATH_MAX + 32];
	snprintf(origin, sizeof origin, "LOCKSWAP_CONFIG %.*s", PATH_MAX, path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, len, "LOCKSWAP_CONFIG: cannot read '%.200s': %s", path,
			 fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_size > (1 << 20)) {
		close(fd);
		snprintf(err, len, "LOCKSWAP_CONFIG: '%.200s' is larger than 1 MiB", path);
		return -1;
	}
	char *buf = map((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (!buf) {
		snprintf(err, len, "LOCKSWAP_CONFIG: no memory to read '%.200s'", path);
		return -1;
	}
	int r = parse_text(buf, got, origin, true, err, len);
	munmap(buf, page_round((size_t)st.st_size + 1));
	return r;
}

unsigned ls_match_count(void)
{
	return nrules;
}

const struct ls_rule *ls_match_rule(unsigned i)
{
	return i < nrules ? &rules[i] : NULL;
}

/* ---- the lock, the cache, the modules ---- */

static struct ls_ttas match_lock;

static void lock(void)
{
	if (!ls_ttas_try(&match_lock))
		ls_ttas_wait(&match_lock, 0, NULL, 0);
}

static void unlock(void)
{
	ls_ttas_release(&match_lock);
}

#define CACHE_CAP 8192u /* return addresses; flushed when half full */
struct centry {
	uintptr_t addr; /* 0: empty */
	uint64_t mask;
};
static struct centry *cache;
static unsigned cache_used;
static unsigned long long seen_subs;

#define MODULES_MAX 512
struct module {
	uintptr_t base; /* l_addr */
	const char *path;
	struct ls_elfsyms syms;
};
static struct module *modules; /* MODULES_MAX */
static unsigned nmodules;

static void cache_flush(void)
{
	memset(cache, 0, CACHE_CAP * sizeof *cache);
	cache_used = 0;
}

static int subs_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_subs;
	return 1;
}

/* A module unloaded since the last look: what the cache says of its
 * addresses may be false now. */
static void check_unloads(void)
{
	unsigned long long subs = 0;
	dl_iterate_phdr(subs_of, &subs);
	if (subs == seen_subs)
		return;
	seen_subs = subs;
	cache_flush();
	if (need_lines)
		ls_lines_forget();
}

static struct module *module_of(uintptr_t base, const char *path)
{
	for (unsigned i = 0; i < nmodules; i++)
		if (modules[i].base == base && !strcmp(modules[i].path, path))
			return &modules[i];
	if (nmodules == MODULES_MAX)
		return NULL;
	struct module *m = &modules[nmodules];
	m->base = base;
	m->path = keep(path);
	if (!m->path)
		return NULL;
	nmodules++;
	return m;
}

static const char *symbol_at(struct module *m, uintptr_t pc, const char *dyn)
{
	if (!m)
		return dyn;
	if (!m->syms.tried)
		ls_elfsyms_load(&m->syms, m->path);
	const struct ls_elfsym *s = ls_elfsyms_find(&m->syms, pc - m->base);
	return s ? s->name : dyn;
}

/* What rules the code at return address ra satisfies. */
static uint64_t resolve(uintptr_t ra)
{
	uintptr_t pc = ra - 1; /* the call */
	Dl_info info;
	struct link_map *lm = NULL;
	uint64_t mask = 0;
	atomic_fetch_add_explicit(&n_resolved, 1, memory_order_relaxed);
	if (!dladdr1((void *)pc, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return 0;
	const char *path = lm->l_name && *lm->l_name ? lm->l_name : exe;
	const char *sym = NULL, *file = NULL;
	int line = 0;
	if (need_syms)
		sym = symbol_at(module_of(lm->l_addr, path), pc, info.dli_sname);
	if (need_lines && !ls_lines_at(pc, &file, &line))
		file = NULL;
	for (unsigned i = 0; i < nrules; i++) {
		const struct ls_rule *r = &rules[i];
		bool hit = false;
		switch (r->kind) {
		case LS_RULE_FUNC:
			hit = sym && !strcmp(sym, r->pattern);
			break;
		case LS_RULE_LINE:
			hit = file && (unsigned)line == r->line && path_ends_with(file, r->pattern);
			break;
		case LS_RULE_MODULE:
			hit = module_is(path, r->pattern);
			break;
		case LS_RULE_OFFSET:
			hit = ra - lm->l_addr == r->offset && module_is(path, r->pattern);
			break;
		case LS_RULE_ANY:
			break;
		}
		if (hit)
			mask |= 1ull << i;
	}
	return mask;
}

static uint64_t frame_mask(uintptr_t ra)
{
	unsigned i = (unsigned)((ra * 0x9E3779B97F4A7C15ull) >> 51) & (CACHE_CAP - 1);
	for (;; i = (i + 1) & (CACHE_CAP - 1)) {
		if (cache[i].addr == ra)
			return cache[i].mask;
		if (!cache[i].addr)
			break;
	}
	uint64_t mask = resolve(ra);
	if (cache_used + 1 > CACHE_CAP / 2) {
		cache_flush();
		return mask; /* cached from the next one on */
	}
	cache[i].addr = ra;
	cache[i].mask = mask;
	cache_used++;
	return mask;
}

/* ---- start and matching ---- */

int ls_match_start(char *err, size_t len)
{
	char why[600];
	if (!need_stack) {
		atomic_store_explicit(&started, true, memory_order_release);
		return 0;
	}
	if (ls_stack_start(why, sizeof why)) {
		snprintf(err, len, "LOCKSWAP_ALGO_MAP: rules by function, line or module: %s", why);
		return -1;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	cache = map(CACHE_CAP * sizeof *cache);
	modules = map(MODULES_MAX * sizeof *modules);
	if (!cache || !modules) {
		snprintf(err, len, "LOCKSWAP_ALGO_MAP: no memory for the matcher's tables");
		return -1;
	}
	if (need_lines && ls_lines_start(why, sizeof why)) {
		snprintf(err, len, "LOCKSWAP_ALGO_MAP: %s", why);
		return -1;
	}
	dl_iterate_phdr(subs_of, &seen_subs);
	atomic_store_explicit(&started, true, memory_order_release);
	return 0;
}

int ls_match_caller(uint64_t among, int any)
{
	if (!need_stack || !(among & ~any_mask))
		return any;
	if (!atomic_load_explicit(&started, memory_order_acquire) || matching || ls_stack_walking()) {
		atomic_fetch_add_explicit(&n_unwalked, 1, memory_order_relaxed);
		return any;
	}
	matching = true;
	/* A pending cancel must not act here, inside a mutex call: the
	 * unwinder and the lookups read files (cancellation points). */
	int cancel;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	uintptr_t f[LS_MATCH_FRAMES];
	unsigned n = ls_stack_take(f, LS_MATCH_FRAMES, true);
	atomic_fetch_add_explicit(&n_walks, 1, memory_order_relaxed);
	uint64_t mask = 0;
	if (n) {
		while (!ls_stack_gate_enter())
			sched_yield(); /* a fork is in progress (see the file comment) */
		lock();
		check_unloads();
		for (unsigned i = 0; i < n; i++)
			mask |= frame_mask(f[i]);
		unlock();
		ls_stack_gate_leave();
	}
	pthread_setcancelstate(cancel, &cancel);
	matching = false;
	mask &= among;
	return mask ? __builtin_ctzll(mask) : any;
}

void ls_match_stats(struct ls_match_stats *out)
{
	out->walks = atomic_load_explicit(&n_walks, memory_order_relaxed);
	out->unwalked = atomic_load_explicit(&n_unwalked, memory_order_relaxed);
	out->resolved = atomic_load_explicit(&n_resolved, memory_order_relaxed);
}

/* ---- why a rule chose nothing ---- */

struct look {
	const struct ls_rule *r;
	bool found;
};

static int look_in(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct look *l = arg;
	const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : exe;
	if (!*path)
		return 0;
	if (l->r->kind == LS_RULE_MODULE || l->r->kind == LS_RULE_OFFSET) {
		l->found = module_is(path, l->r->pattern);
		return l->found;
	}
	struct module *m = module_of(info->dlpi_addr, path);
	if (!m)
		return 0;
	if (!m->syms.tried)
		ls_elfsyms_load(&m->syms, m->path);
	for (size_t i = 0; i < m->syms.n && !l->found; i++)
		l->found = !strcmp(m->syms.s[i].name, l->r->pattern);
	return l->found;
}

void ls_match_why_not(unsigned i, char *buf, size_t len)
{
	const struct ls_rule *r = ls_match_rule(i);
	buf[0] = '\0';
	if (!r || r->kind == LS_RULE_ANY || !atomic_load_explicit(&started, memory_order_acquire))
		return;
	struct look l = {r, false};
	while (!ls_stack_gate_enter())
		sched_yield();
	lock();
	if (r->kind == LS_RULE_LINE) {
		bool any;
		l.found = ls_lines_exist(r->pattern, r->line, &any);
		if (!l.found)
			snprintf(
			    buf, len,
			    any ? "no code at %s:%u in the loaded modules"
				: "no line information for %s in the loaded modules (built without -g, and "
				  "no debug file found?)",
			    r->pattern, r->line);
	} else {
		dl_iterate_phdr(look_in, &l);
		if (!l.found && r->kind == LS_RULE_FUNC)
			snprintf(buf, len, "no function named %s in the program or its loaded libraries",
				 r->pattern);
		else if (!l.found)
			snprintf(buf, len, "no module %s is loaded", r->pattern);
		else if (r->kind == LS_RULE_OFFSET)
			snprintf(buf, len, "no lock was created by a call that returns to %s+0x%llx",
				 r->pattern, (unsigned long long)r->offset);
	}
	unlock();
	ls_stack_gate_leave();
}
