/*
 * elfsym.c - function symbols read from ELF files (see elfsym.h). Moved
 * here from the profiler's report so that the matcher of per-mutex rules
 * reads symbols the same way.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsym.h"

static size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

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

void ls_elfsyms_load(struct ls_elfsyms *m, const char *path)
{
	m->tried = true;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return;
	}
	size_t size = (size_t)st.st_size;
	const char *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return;
	m->map = (void *)f;
	m->mapsz = size;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
		return;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
	const Elf64_Shdr *tab = NULL;
	for (int want = SHT_SYMTAB; want && !tab; want = want == SHT_SYMTAB ? SHT_DYNSYM : 0)
		for (unsigned i = 0; i < eh->e_shnum; i++)
			if (sh[i].sh_type == (unsigned)want && sh[i].sh_link < eh->e_shnum) {
				tab = &sh[i];
				break;
			}
	if (!tab || tab->sh_entsize != sizeof(Elf64_Sym) || tab->sh_offset > size ||
	    tab->sh_size > size - tab->sh_offset)
		return;
	const Elf64_Shdr *strs = &sh[tab->sh_link];
	if (strs->sh_offset > size || strs->sh_size > size - strs->sh_offset)
		return;
	const Elf64_Sym *syms = (const Elf64_Sym *)(f + tab->sh_offset);
	size_t nsyms = tab->sh_size / sizeof(Elf64_Sym);
	void *s = mmap(NULL, page_round(nsyms * sizeof *m->s + 1), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return;
	m->s = s;
	m->cap = nsyms;
	for (size_t i = 0; i < nsyms; i++) {
		const Elf64_Sym *y = &syms[i];
		int type = ELF64_ST_TYPE(y->st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || y->st_shndx == SHN_UNDEF || !y->st_value ||
		    y->st_name >= strs->sh_size)
			continue;
		const char *name = f + strs->sh_offset + y->st_name;
		if (!memchr(name, '\0', strs->sh_size - y->st_name))
			continue;
		m->s[m->n].lo = y->st_value;
		m->s[m->n].hi = y->st_value + (y->st_size ? y->st_size : 1);
		m->s[m->n].name = name;
		m->n++;
	}
	sort_syms(m->s, m->n);
}

void ls_elfsyms_free(struct ls_elfsyms *m)
{
	if (m->map)
		munmap(m->map, m->mapsz);
	if (m->s)
		munmap(m->s, page_round(m->cap * sizeof *m->s + 1));
	memset(m, 0, sizeof *m);
}

const struct ls_elfsym *ls_elfsyms_find(const struct ls_elfsyms *m, uint64_t vaddr)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) { /* first symbol with lo > vaddr */
		size_t mid = (lo + hi) / 2;
		if (m->s[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* symbols may nest (aliases, local labels): look back a little */
	for (size_t i = lo, k = 0; i-- > 0 && k < 8; k++)
		if (vaddr < m->s[i].hi)
			return &m->s[i];
	return NULL;
}
