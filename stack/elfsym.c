/*
 * elfsym.c - the symbol resolver (see elfsym.h): ELF files mapped and read
 * with every offset checked against the file's size, their debug files
 * found by build-id and debug link, function extents, and the plain names
 * of C++ symbols.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsym.h"

static size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* ---- files ---- */

/* The file at path, mapped read-only; NULL if it cannot be, or is too
 * small to be an ELF file. */
static const char *map_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return NULL;
	}
	*size = (size_t)st.st_size;
	const char *f = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return f == MAP_FAILED ? NULL : f;
}

/* The section headers of the 64-bit ELF file f (size bytes), or NULL. */
static const Elf64_Shdr *sections(const char *f, size_t size, unsigned *n)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	*n = 0;
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
		return (const Elf64_Shdr *)f; /* no usable section headers (sstrip): none */
	*n = eh->e_shnum;
	return (const Elf64_Shdr *)(f + eh->e_shoff);
}

static bool in_file(const Elf64_Shdr *s, size_t size)
{
	return s->sh_type != SHT_NOBITS && s->sh_offset <= size && s->sh_size <= size - s->sh_offset;
}

/* The GNU build-id among the notes in [p, p + n), aligned to `align`. */
static void build_id_in(const char *p, size_t n, size_t align, struct ls_elfid *e)
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

static bool elfid_of(const char *f, size_t size, struct ls_elfid *e)
{
	memset(e, 0, sizeof *e);
	unsigned nsh;
	const Elf64_Shdr *sh = sections(f, size, &nsh);
	if (!sh)
		return false;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
	const Elf64_Shdr *names = nsh && eh->e_shstrndx < nsh ? &sh[eh->e_shstrndx] : NULL;
	for (unsigned i = 0; names && in_file(names, size) && i < nsh; i++) {
		const Elf64_Shdr *s = &sh[i];
		if (s->sh_type == SHT_SYMTAB)
			e->symtab = true;
		if (s->sh_name >= names->sh_size || !in_file(s, size))
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
	/* no section headers left (sstrip): the notes' segments */
	if (!e->idlen && eh->e_phentsize == sizeof(Elf64_Phdr) && eh->e_phoff <= size &&
	    (size - eh->e_phoff) / sizeof(Elf64_Phdr) >= eh->e_phnum) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(f + eh->e_phoff);
		for (unsigned i = 0; i < eh->e_phnum; i++)
			if (ph[i].p_type == PT_NOTE && ph[i].p_offset <= size &&
			    ph[i].p_filesz <= size - ph[i].p_offset)
				build_id_in(f + ph[i].p_offset, ph[i].p_filesz, ph[i].p_align, e);
	}
	return true;
}

bool ls_elfid_read(const char *path, struct ls_elfid *e)
{
	size_t size;
	const char *f = map_file(path, &size);
	memset(e, 0, sizeof *e);
	if (!f)
		return false;
	bool ok = elfid_of(f, size, e);
	munmap((void *)f, size);
	return ok;
}

char *ls_elfid_hex(const struct ls_elfid *e, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < e->idlen; i++) {
		buf[2 * i] = digits[e->id[i] >> 4];
		buf[2 * i + 1] = digits[e->id[i] & 15];
	}
	buf[2 * e->idlen] = '\0';
	return buf;
}

/* ---- where a debug file is ---- */

/* Appends s (n bytes) to the path being built in out; false if it does not
 * fit. No snprintf: this runs from signal handlers too. */
static bool put(char *out, size_t len, size_t *at, const char *s, size_t n)
{
	if (n >= len - *at)
		return false;
	memcpy(out + *at, s, n);
	*at += n;
	out[*at] = '\0';
	return true;
}

static bool puts_(char *out, size_t len, size_t *at, const char *s)
{
	return put(out, len, at, s, strlen(s));
}

/* Whether the file at path is a debug file of the module with build-id e
 * (a module without a build-id takes any file of that name). */
static bool usable(const char *path, const char *module, const struct ls_elfid *e)
{
	if (!strcmp(path, module))
		return false; /* the module itself: it has no debug information */
	if (access(path, R_OK) != 0)
		return false;
	if (!e->idlen)
		return true;
	struct ls_elfid d;
	return ls_elfid_read(path, &d) && d.idlen == e->idlen && !memcmp(d.id, e->id, e->idlen);
}

bool ls_debugfile_find(const char *module, const struct ls_elfid *e, char *out, size_t len)
{
	char hex[2 * sizeof e->id + 1];
	size_t at;
	if (!len)
		return false;
	ls_elfid_hex(e, hex);
	if (e->idlen >= 2) {
		at = 0;
		if (puts_(out, len, &at, "/usr/lib/debug/.build-id/") && put(out, len, &at, hex, 2) &&
		    puts_(out, len, &at, "/") && puts_(out, len, &at, hex + 2) &&
		    puts_(out, len, &at, ".debug") && usable(out, module, e))
			return true;
	}
	if (e->link[0]) {
		const char *slash = strrchr(module, '/');
		size_t dir = slash ? (size_t)(slash - module) : 1;
		const char *dname = slash ? module : ".";
		static const char *const pre[] = {"", "", "/usr/lib/debug"};
		static const char *const mid[] = {"/", "/.debug/", "/"};
		for (size_t i = 0; i < 3; i++) {
			at = 0;
			if (puts_(out, len, &at, pre[i]) && put(out, len, &at, dname, dir) &&
			    puts_(out, len, &at, mid[i]) && puts_(out, len, &at, e->link) &&
			    usable(out, module, e))
				return true;
		}
	}
	if (e->idlen) {
		/* elfutils' client (debuginfod-client.c) keeps what it fetched
		 * in the first of these */
		const char *cache = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME"),
			   *home = getenv("HOME");
		at = 0;
		bool ok =
		    cache && *cache ? puts_(out, len, &at, cache)
		    : xdg && *xdg   ? puts_(out, len, &at, xdg) && puts_(out, len, &at, "/debuginfod_client")
		    : home && *home
			? puts_(out, len, &at, home) && puts_(out, len, &at, "/.cache/debuginfod_client")
			: false;
		if (ok && puts_(out, len, &at, "/") && puts_(out, len, &at, hex) &&
		    puts_(out, len, &at, "/debuginfo") && usable(out, module, e))
			return true;
	}
	out[0] = '\0';
	return false;
}

/* ---- symbol tables ---- */

static bool sym_before(const struct ls_elfsym *a, const struct ls_elfsym *b)
{
	return a->lo < b->lo;
}

static void sift(struct ls_elfsym *a, size_t r, size_t end)
{
	for (;;) {
		size_t c = 2 * r + 1;
		if (c >= end)
			return;
		if (c + 1 < end && sym_before(&a[c], &a[c + 1]))
			c++;
		if (!sym_before(&a[r], &a[c]))
			return;
		struct ls_elfsym t = a[r];
		a[r] = a[c];
		a[c] = t;
		r = c;
	}
}

/* heapsort: no allocation, no recursion (this may run in a signal handler) */
static void sort_syms(struct ls_elfsym *a, size_t n)
{
	for (size_t k = n / 2; k-- > 0;)
		sift(a, k, n);
	for (size_t e = n; e-- > 1;) {
		struct ls_elfsym t = a[0];
		a[0] = a[e];
		a[e] = t;
		sift(a, 0, e);
	}
}

/* The section of type `want` in f, or NULL. */
static const Elf64_Shdr *table_of(const char *f, size_t size, unsigned want)
{
	unsigned nsh;
	const Elf64_Shdr *sh = sections(f, size, &nsh);
	for (unsigned i = 0; sh && i < nsh; i++)
		if (sh[i].sh_type == want && sh[i].sh_link < nsh)
			return &sh[i];
	return NULL;
}

/* Reads the function symbols of table tab (in f) into t. */
static void read_table(struct ls_elfsyms *t, const char *f, size_t size, const Elf64_Shdr *tab)
{
	const Elf64_Shdr *sh = sections(f, size, &(unsigned){0});
	if (tab->sh_entsize != sizeof(Elf64_Sym) || !in_file(tab, size))
		return;
	const Elf64_Shdr *strs = &sh[tab->sh_link];
	if (!in_file(strs, size))
		return;
	const Elf64_Sym *syms = (const Elf64_Sym *)(f + tab->sh_offset);
	size_t nsyms = tab->sh_size / sizeof(Elf64_Sym);
	void *s = mmap(NULL, page_round(nsyms * sizeof *t->s + 1), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return;
	t->s = s;
	t->cap = nsyms;
	for (size_t i = 0; i < nsyms; i++) {
		const Elf64_Sym *y = &syms[i];
		int type = ELF64_ST_TYPE(y->st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || y->st_shndx == SHN_UNDEF || !y->st_value ||
		    y->st_name >= strs->sh_size)
			continue;
		const char *name = f + strs->sh_offset + y->st_name;
		if (!memchr(name, '\0', strs->sh_size - y->st_name))
			continue;
		t->s[t->n].lo = y->st_value;
		/* no size: its first byte only, which no return address is */
		t->s[t->n].hi = y->st_value + (y->st_size ? y->st_size : 1);
		t->s[t->n].name = name;
		/* which alias is printed: global over local, then no version
		 * over the default version (@@) over an old one (@) */
		const char *at = strchr(name, '@');
		t->s[t->n].rank = (ELF64_ST_BIND(y->st_info) != STB_LOCAL ? 4u : 0u) + (!at	       ? 2u
											: at[1] == '@' ? 1u
												       : 0u);
		t->n++;
	}
	sort_syms(t->s, t->n);
}

void ls_elfsyms_load_with(struct ls_elfsyms *t, const char *path, const char *debug)
{
	t->tried = true;
	size_t size;
	const char *f = map_file(path, &size);
	if (!f)
		return;
	t->map = (void *)f;
	t->mapsz = size;
	const Elf64_Shdr *own = table_of(f, size, SHT_SYMTAB);
	if (own) {
		t->from = LS_SYMS_OWN;
		read_table(t, f, size, own);
		return;
	}
	/* stripped: its debug file's .symtab, if it has one for this build */
	struct ls_elfid e;
	char found[4096];
	if (elfid_of(f, size, &e)) {
		if (!debug && ls_debugfile_find(path, &e, found, sizeof found))
			debug = found;
		struct ls_elfid d;
		size_t dsize;
		const char *df = debug ? map_file(debug, &dsize) : NULL;
		const Elf64_Shdr *dtab = NULL;
		if (df && elfid_of(df, dsize, &d) && d.idlen == e.idlen && !memcmp(d.id, e.id, e.idlen))
			dtab = table_of(df, dsize, SHT_SYMTAB);
		if (dtab) {
			t->dmap = (void *)df;
			t->dmapsz = dsize;
			t->from = LS_SYMS_DEBUG;
			read_table(t, df, dsize, dtab);
			return;
		}
		if (df)
			munmap((void *)df, dsize);
	}
	const Elf64_Shdr *dyn = table_of(f, size, SHT_DYNSYM);
	if (dyn) {
		t->from = LS_SYMS_DYNAMIC;
		read_table(t, f, size, dyn);
	}
}

void ls_elfsyms_load(struct ls_elfsyms *t, const char *path)
{
	ls_elfsyms_load_with(t, path, NULL);
}

void ls_elfsyms_free(struct ls_elfsyms *t)
{
	if (t->map)
		munmap(t->map, t->mapsz);
	if (t->dmap)
		munmap(t->dmap, t->dmapsz);
	if (t->s)
		munmap(t->s, page_round(t->cap * sizeof *t->s + 1));
	memset(t, 0, sizeof *t);
}

/* The index just past the last symbol starting at or before vaddr. */
static size_t upper(const struct ls_elfsyms *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) { /* first symbol with lo > vaddr */
		size_t mid = (lo + hi) / 2;
		if (t->s[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Symbols may share an extent (aliases) or nest (a function inside
 * another's range): this many back from upper() are looked at. */
#define LOOK_BACK 16

const struct ls_elfsym *ls_elfsyms_find(const struct ls_elfsyms *t, uint64_t vaddr)
{
	const struct ls_elfsym *best = NULL;
	for (size_t i = upper(t, vaddr), k = 0; i-- > 0 && k < LOOK_BACK; k++) {
		const struct ls_elfsym *s = &t->s[i];
		if (best && s->lo != best->lo)
			break; /* the innermost function's aliases only */
		if (vaddr >= s->hi)
			continue;
		if (!best || s->rank > best->rank ||
		    (s->rank == best->rank &&
		     (strlen(s->name) < strlen(best->name) ||
		      (strlen(s->name) == strlen(best->name) && strcmp(s->name, best->name) < 0))))
			best = s;
	}
	return best;
}

bool ls_elfsyms_names(const struct ls_elfsyms *t, uint64_t vaddr, const char *pattern)
{
	for (size_t i = upper(t, vaddr), k = 0; i-- > 0 && k < LOOK_BACK; k++)
		if (vaddr < t->s[i].hi && ls_sym_is(t->s[i].name, pattern))
			return true;
	return false;
}

/* ---- plain names of C++ symbols (the Itanium C++ ABI's mangling) ---- */

/* A <source-name>, <length><identifier>, at *p: appended to buf. */
static bool source_name(const char **p, char *buf, size_t len, size_t *at)
{
	const char *s = *p;
	size_t n = 0;
	if (*s < '1' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9' && n < 4096)
		n = n * 10 + (size_t)(*s++ - '0');
	if (strnlen(s, n) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || s[i] == '$' || (s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	if (!put(buf, len, at, s, n))
		return false;
	*p = s + n;
	return true;
}

/* The plain name of mangled C++ symbol sym (see ls_sym_plain), which has
 * no version. */
static bool cxx_plain(const char *sym, char *buf, size_t len)
{
	size_t at = 0;
	const char *p = sym;
	if (!len || strncmp(p, "_Z", 2))
		return false;
	p += 2;
	buf[0] = '\0';
	if (*p == 'L') /* internal linkage: a static function */
		p++;
	if (*p == 'N') { /* a nested name: N [CV] [ref] prefix... E */
		const char *last = NULL;
		size_t lastlen = 0;
		p++;
		while (*p == 'r' || *p == 'V' || *p == 'K')
			p++;
		if (*p == 'R' || *p == 'O')
			p++;
		if (p[0] == 'S' && p[1] == 't') {
			p += 2;
			if (!puts_(buf, len, &at, "std::"))
				return false;
		}
		for (bool first = true; *p != 'E'; first = false) {
			if (!first && !puts_(buf, len, &at, "::"))
				return false;
			if ((p[0] == 'C' && p[1] >= '1' && p[1] <= '3') ||
			    (p[0] == 'D' && p[1] >= '0' && p[1] <= '2')) {
				/* a constructor or destructor: the class's name */
				if (!last || (p[0] == 'D' && !puts_(buf, len, &at, "~")) ||
				    !put(buf, len, &at, last, lastlen))
					return false;
				p += 2;
				if (*p != 'E')
					return false;
				break;
			}
			size_t from = at;
			if (!source_name(&p, buf, len, &at))
				return false; /* templates, operators, substitutions... */
			last = buf + from;
			lastlen = at - from;
		}
		if (!at || at >= len)
			return false;
	} else if (p[0] == 'S' && p[1] == 't') {
		p += 2;
		if (!puts_(buf, len, &at, "std::") || !source_name(&p, buf, len, &at))
			return false;
		if (*p == 'I')
			return false; /* a template */
	} else {
		if (!source_name(&p, buf, len, &at) || *p == 'I')
			return false;
	}
	/* the parameters are left out; a clone's suffix is kept */
	const char *dot = strchr(p, '.');
	return !dot || puts_(buf, len, &at, dot);
}

bool ls_sym_plain(const char *sym, char *buf, size_t len)
{
	char base[1024];
	const char *at = strchr(sym, '@');
	if (!at)
		return cxx_plain(sym, buf, len);
	size_t n = (size_t)(at - sym);
	if (n == 0 || n >= sizeof base || n >= len)
		return false;
	memcpy(base, sym, n);
	base[n] = '\0';
	if (!cxx_plain(base, buf, len))
		memcpy(buf, base, n + 1);
	return true;
}

bool ls_sym_is(const char *sym, const char *pattern)
{
	char plain[1024];
	if (!strcmp(sym, pattern))
		return true;
	return (!strncmp(sym, "_Z", 2) || strchr(sym, '@')) && ls_sym_plain(sym, plain, sizeof plain) &&
	       !strcmp(plain, pattern);
}
