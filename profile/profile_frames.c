/*
 * profile_frames.c - frames: a return address as the profile names it (see
 * profile_frames.h). The library resolves its frames here at exit, from
 * the ELF files themselves (stack/elfsym.h: no dladdr, which takes the
 * loader's lock); `lockswap report` adds file:line by addr2line.
 */
#include <string.h>

#include "profile_frames.h"

/* ---- a return address as a frame (the library) ---- */

void ls_prof_frame_of(struct ls_prof_frame *out, uintptr_t a, const char *module, uintptr_t base,
		      struct ls_elfsyms *syms)
{
	memset(out, 0, sizeof *out);
	if (!module) {
		out->offset = a;
		return;
	}
	out->module = module;
	out->offset = a - base;
	if (!syms->tried)
		ls_elfsyms_load(syms, module);
	/* a return address: the call is the byte before it */
	const struct ls_elfsym *s = ls_elfsyms_find(syms, out->offset - 1);
	if (s) {
		out->sym = s->name;
		out->symlen = strlen(s->name);
		out->symoff = out->offset - s->lo;
	}
}

/* ---- the naming frame, and how a frame reads ---- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

bool ls_prof_runtime_module(const char *path)
{
	static const char *const rt[] = {"liblockswap", "libc.so",  "libc-",	  "libstdc++",
					 "libgcc_s",	"ld-linux", "libpthread", "libunwind"};
	const char *b = base_name(path);
	for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++)
		if (!strncmp(b, rt[i], strlen(rt[i])))
			return true;
	return false;
}

unsigned ls_prof_naming_frame(const struct ls_prof_stack *s)
{
	for (unsigned i = 0; i < s->n; i++)
		if (!s->f[i].module || !ls_prof_runtime_module(s->f[i].module))
			return i;
	return 0;
}

void ls_prof_frame_out(struct ls_out *o, const struct ls_prof_frame *f)
{
	if (f->sym) {
		ls_out_mem(o, f->sym, f->symlen);
		if (f->symoff != LS_PROF_NO_OFFSET) {
			ls_out_str(o, "+");
			ls_out_hex(o, f->symoff);
		}
		ls_out_str(o, " (");
		ls_out_str(o, f->line ? f->line : f->module ? base_name(f->module) : "?");
		ls_out_str(o, ")");
	} else {
		ls_out_str(o, f->module ? base_name(f->module) : "?");
		ls_out_str(o, "+");
		ls_out_hex(o, f->offset);
		if (f->line) {
			ls_out_str(o, " (");
			ls_out_str(o, f->line);
			ls_out_str(o, ")");
		}
	}
}
