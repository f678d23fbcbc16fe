/*
 * profile_modules.c - the loaded objects that name the frames of the stacks
 * the profiler keeps (see profile_modules.h): a table of their address
 * ranges, refreshed from dl_iterate_phdr (behind stack/'s fork gate) when
 * a kept stack has a frame no module covers.
 */
#define _GNU_SOURCE
#include <link.h>
#include <string.h>

#include "profile_modules.h"

struct scan {
	struct prof_module m[PROF_MAX_MODULES];
	char names[PROF_MAX_MODULES][1024];
	unsigned n;
};
static struct plock modlock;
static struct scan *scan_buf; /* under modlock */

bool ls_prof_modules_init(void)
{
	ls_prof.modules = ls_prof_map(PROF_MAX_MODULES * sizeof *ls_prof.modules);
	scan_buf = ls_prof_map(sizeof *scan_buf);
	return ls_prof.modules && scan_buf;
}

void ls_prof_modules_fork_child(void)
{
	atomic_store_explicit(&modlock.w, 0, memory_order_relaxed);
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	(void)size;
	if (s->n == PROF_MAX_MODULES)
		return 1;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + p->p_vaddr < lo)
			lo = info->dlpi_addr + p->p_vaddr;
		if (info->dlpi_addr + p->p_vaddr + p->p_memsz > hi)
			hi = info->dlpi_addr + p->p_vaddr + p->p_memsz;
	}
	if (lo >= hi)
		return 0;
	const char *name =
	    info->dlpi_name && *info->dlpi_name ? info->dlpi_name : (s->n == 0 ? ls_prof.exe : "");
	if (!*name)
		return 0;
	struct prof_module *m = &s->m[s->n];
	m->lo = lo;
	m->hi = hi;
	m->base = info->dlpi_addr;
	size_t len = strlen(name);
	if (len >= sizeof s->names[0])
		return 0; /* no room for its name: its frames stay addresses */
	memcpy(s->names[s->n], name, len + 1);
	s->n++;
	return 0;
}

const struct prof_module *ls_prof_module_of(uintptr_t addr, unsigned *index)
{
	unsigned n = atomic_load_explicit(&ls_prof.nmodules, memory_order_acquire);
	/* newest first: a module loaded over a closed one's range wins */
	for (unsigned i = n; i-- > 0;)
		if (addr >= ls_prof.modules[i].lo && addr < ls_prof.modules[i].hi) {
			if (index)
				*index = i;
			return &ls_prof.modules[i];
		}
	return NULL;
}

static bool have_module(const struct prof_module *m, const char *name)
{
	unsigned n = atomic_load_explicit(&ls_prof.nmodules, memory_order_acquire);
	for (unsigned i = 0; i < n; i++)
		if (ls_prof.modules[i].lo == m->lo && ls_prof.modules[i].hi == m->hi &&
		    !strcmp(ls_prof.modules[i].path, name))
			return true;
	return false;
}

void ls_prof_modules_refresh(void)
{
	if (!scan_buf || !ls_prof_plock_try(&modlock))
		return; /* someone else is refreshing: their table will do */
	if (ls_stack_gate_enter()) {
		scan_buf->n = 0;
		dl_iterate_phdr(scan_one, scan_buf);
		ls_stack_gate_leave();
		ls_prof_lock();
		for (unsigned i = 0; i < scan_buf->n; i++) {
			unsigned n = atomic_load_explicit(&ls_prof.nmodules, memory_order_relaxed);
			if (n == PROF_MAX_MODULES || have_module(&scan_buf->m[i], scan_buf->names[i]))
				continue;
			size_t len = strlen(scan_buf->names[i]) + 1;
			char *path = ls_prof_galloc(len);
			if (!path)
				break;
			memcpy(path, scan_buf->names[i], len);
			ls_prof.modules[n] = scan_buf->m[i];
			ls_prof.modules[n].path = path;
			/* release: pairs with the acquire load in ls_prof_module_of */
			atomic_store_explicit(&ls_prof.nmodules, n + 1, memory_order_release);
		}
		ls_prof_unlock();
	}
	ls_prof_plock_unlock(&modlock);
}

void ls_prof_cover_frames(const uintptr_t *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!ls_prof_module_of(f[i], NULL)) {
			ls_prof_modules_refresh();
			return;
		}
}
