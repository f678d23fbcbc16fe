/*
 * lines.c - source lines through elfutils' libdwfl (see lines.h).
 *
 * Debug information: the module's own DWARF, else a separate debug file
 * found where the symbol resolver finds it (stack/elfsym.h,
 * ls_debugfile_find): by build-id under /usr/lib/debug/.build-id (Debian's
 * -dbgsym packages), by its .gnu_debuglink name (beside the module, in its
 * .debug folder, or under /usr/lib/debug and the module's folder), or in
 * debuginfod's cache (a file fetched before). Never a debuginfod server:
 * this runs while a mutex is being created, and must not wait for a network
 * (the standard callback would ask DEBUGINFOD_URLS' servers).
 *
 * libdw is dlopen'ed: a process without FILE:LINE rules never maps it, and
 * liblockswap.so has no dependency on it (it is libdw1, which the Debian
 * package depends on).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsym.h"
#include "lines.h"

static struct {
	Dwfl *(*begin)(const Dwfl_Callbacks *);
	void (*report_begin)(Dwfl *);
	int (*proc_report)(Dwfl *, pid_t);
	int (*report_end)(Dwfl *, int (*)(Dwfl_Module *, void *, const char *, Dwarf_Addr, void *), void *);
	Dwfl_Module *(*addrmodule)(Dwfl *, Dwarf_Addr);
	Dwfl_Line *(*getsrc)(Dwfl_Module *, Dwarf_Addr);
	const char *(*lineinfo)(Dwfl_Line *, Dwarf_Addr *, int *, int *, Dwarf_Word *, Dwarf_Word *);
	ptrdiff_t (*getmodules)(Dwfl *, int (*)(Dwfl_Module *, void **, const char *, Dwarf_Addr, void *),
				void *, ptrdiff_t);
	int (*getsrc_file)(Dwfl_Module *, const char *, int, int, Dwfl_Line ***, size_t *);
	int (*find_elf)(Dwfl_Module *, void **, const char *, Dwarf_Addr, char **, Elf **);
	int (*build_id_find_debuginfo)(Dwfl_Module *, void **, const char *, Dwarf_Addr, const char *,
				       const char *, GElf_Word, char **);
} fn;

static Dwfl *dwfl;

/* The debug file the symbol resolver takes (stack/elfsym.h: by build-id
 * under /usr/lib/debug, a .gnu_debuglink file where GDB and Debian put
 * them, debuginfod's cache), so that a FILE:LINE rule sees the lines of
 * the file whose names a report printed. */
static int find_debuginfo(Dwfl_Module *mod, void **ud, const char *modname, Dwarf_Addr base, const char *file,
			  const char *link, GElf_Word crc, char **out)
{
	int fd = fn.build_id_find_debuginfo(mod, ud, modname, base, file, link, crc, out);
	struct ls_elfid e;
	char path[PATH_MAX];
	if (fd >= 0 || !file || !ls_elfid_read(file, &e) || !ls_debugfile_find(file, &e, path, sizeof path))
		return fd;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !(*out = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_debuginfo = find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

static void report(void)
{
	fn.report_begin(dwfl);
	fn.proc_report(dwfl, getpid());
	fn.report_end(dwfl, NULL, NULL);
}

#define SYM(name, field)                                                                                     \
	do {                                                                                                 \
		*(void **)&fn.field = dlsym(h, name);                                                        \
		if (!fn.field) {                                                                             \
			snprintf(err, len, "cannot use libdw.so.1: %s missing", name);                       \
			return -1;                                                                           \
		}                                                                                            \
	} while (0)

int ls_lines_start(char *err, size_t len)
{
	void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, len,
			 "FILE:LINE rules need libdw.so.1 (%s); install the libdw1 package, or name "
			 "functions instead",
			 dlerror());
		return -1;
	}
	SYM("dwfl_begin", begin);
	SYM("dwfl_report_begin", report_begin);
	SYM("dwfl_linux_proc_report", proc_report);
	SYM("dwfl_report_end", report_end);
	SYM("dwfl_addrmodule", addrmodule);
	SYM("dwfl_module_getsrc", getsrc);
	SYM("dwfl_lineinfo", lineinfo);
	SYM("dwfl_getmodules", getmodules);
	SYM("dwfl_module_getsrc_file", getsrc_file);
	SYM("dwfl_linux_proc_find_elf", find_elf);
	SYM("dwfl_build_id_find_debuginfo", build_id_find_debuginfo);
	static Dwfl_Callbacks cb;
	cb = callbacks;
	cb.find_elf = fn.find_elf;
	dwfl = fn.begin(&cb);
	if (!dwfl) {
		snprintf(err, len, "libdw could not start a session for FILE:LINE rules");
		return -1;
	}
	report();
	return 0;
}

bool ls_lines_at(uintptr_t addr, const char **file, int *line)
{
	Dwfl_Module *m = fn.addrmodule(dwfl, addr);
	if (!m) { /* loaded since the last report (dlopen) */
		report();
		m = fn.addrmodule(dwfl, addr);
	}
	Dwfl_Line *l = m ? fn.getsrc(m, addr) : NULL;
	const char *f = l ? fn.lineinfo(l, NULL, line, NULL, NULL, NULL) : NULL;
	if (!f)
		return false;
	*file = f;
	return true;
}

struct exist {
	const char *file;
	unsigned line;
	bool found, any;
};

static int exist_in(Dwfl_Module *m, void **ud, const char *name, Dwarf_Addr base, void *arg)
{
	(void)ud, (void)name, (void)base;
	struct exist *x = arg;
	Dwfl_Line **lines = NULL;
	size_t n = 0;
	if (fn.getsrc_file(m, x->file, (int)x->line, 0, &lines, &n) == 0 && n) {
		x->found = true;
		free(lines);
		return DWARF_CB_ABORT;
	}
	/* the file at any line: its module has line information for it */
	if (fn.getsrc_file(m, x->file, 0, 0, &lines, &n) == 0 && n) {
		x->any = true;
		free(lines);
	}
	return DWARF_CB_OK;
}

bool ls_lines_exist(const char *file, unsigned line, bool *any_info)
{
	struct exist x = {file, line, false, false};
	report();
	fn.getmodules(dwfl, exist_in, &x, 0);
	*any_info = x.any || x.found;
	return x.found;
}

void ls_lines_forget(void)
{
	if (dwfl)
		report();
}
