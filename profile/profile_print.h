/*
 * profile_print.h - buffered output to a file descriptor, by write(2) only,
 * and number formats: the bottom of the renderings (profile_table.h), shared
 * by the library (at exit, from _exit or a fatal signal: so no stdio, no
 * malloc, no locale) and by `lockswap report`.
 */
#ifndef LS_PROFILE_PRINT_H
#define LS_PROFILE_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Buffered output to a file descriptor, by write(2) only. */
struct ls_out {
	int fd;
	bool failed; /* a write failed (errno kept in err) */
	int err;
	size_t n;
	char buf[8192];
};
void ls_out_init(struct ls_out *o, int fd);
void ls_out_flush(struct ls_out *o);
void ls_out_mem(struct ls_out *o, const char *s, size_t n);
void ls_out_str(struct ls_out *o, const char *s);
void ls_out_u64(struct ls_out *o, uint64_t v);
void ls_out_hex(struct ls_out *o, uint64_t v);
/* v/div with `decimals` decimals, rounded */
void ls_out_fixed(struct ls_out *o, uint64_t v, uint64_t div, int decimals);
/* s right-aligned (width > 0) or left-aligned (width < 0) in |width| columns */
void ls_out_pad(struct ls_out *o, const char *s, int width);
void ls_out_upad(struct ls_out *o, uint64_t v, int width);
char *ls_fmt_u64(char *buf, uint64_t v);
char *ls_fmt_fixed(char *buf, uint64_t v, uint64_t div, int decimals);

#endif
