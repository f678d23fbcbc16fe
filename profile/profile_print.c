/*
 * profile_print.c - buffered output to a file descriptor, by write(2) only,
 * and the number formats the renderings print (see profile_print.h).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "profile_print.h"

void ls_out_init(struct ls_out *o, int fd)
{
	o->fd = fd;
	o->failed = false;
	o->err = 0;
	o->n = 0;
}

void ls_out_flush(struct ls_out *o)
{
	size_t off = 0;
	while (off < o->n && !o->failed) {
		ssize_t w = write(o->fd, o->buf + off, o->n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->failed = true;
			o->err = w < 0 ? errno : EIO;
			break;
		}
		off += (size_t)w;
	}
	o->n = 0;
}

void ls_out_mem(struct ls_out *o, const char *s, size_t n)
{
	while (n) {
		if (o->n == sizeof o->buf)
			ls_out_flush(o);
		size_t k = sizeof o->buf - o->n;
		if (k > n)
			k = n;
		memcpy(o->buf + o->n, s, k);
		o->n += k;
		s += k;
		n -= k;
	}
}

void ls_out_str(struct ls_out *o, const char *s)
{
	ls_out_mem(o, s, strlen(s));
}

char *ls_fmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	int i = 0;
	do
		tmp[i++] = (char)('0' + v % 10);
	while ((v /= 10));
	for (int j = 0; j < i; j++)
		buf[j] = tmp[i - 1 - j];
	buf[i] = '\0';
	return buf;
}

char *ls_fmt_fixed(char *buf, uint64_t v, uint64_t div, int decimals)
{
	uint64_t scale = 1;
	for (int i = 0; i < decimals; i++)
		scale *= 10;
	/* v * scale / div, rounded, without overflow for v < 2^64 / 10^3 */
	unsigned __int128 q = ((unsigned __int128)v * scale + div / 2) / div;
	uint64_t whole = (uint64_t)(q / scale), frac = (uint64_t)(q % scale);
	char *p = ls_fmt_u64(buf, whole);
	if (decimals) {
		p += strlen(p);
		*p++ = '.';
		for (int i = decimals - 1; i >= 0; i--, frac /= 10)
			p[i] = (char)('0' + frac % 10);
		p[decimals] = '\0';
	}
	return buf;
}

void ls_out_u64(struct ls_out *o, uint64_t v)
{
	char b[24];
	ls_out_str(o, ls_fmt_u64(b, v));
}

void ls_out_hex(struct ls_out *o, uint64_t v)
{
	char b[24];
	int i = 0;
	do
		b[sizeof b - 1 - i++] = "0123456789abcdef"[v & 15];
	while ((v >>= 4));
	ls_out_str(o, "0x");
	ls_out_mem(o, b + sizeof b - i, (size_t)i);
}

void ls_out_fixed(struct ls_out *o, uint64_t v, uint64_t div, int decimals)
{
	char b[48];
	ls_out_str(o, ls_fmt_fixed(b, v, div, decimals));
}

void ls_out_pad(struct ls_out *o, const char *s, int width)
{
	int len = (int)strlen(s), w = width < 0 ? -width : width;
	if (width < 0)
		ls_out_str(o, s);
	for (int i = len; i < w; i++)
		ls_out_mem(o, " ", 1);
	if (width > 0)
		ls_out_str(o, s);
}

void ls_out_upad(struct ls_out *o, uint64_t v, int width)
{
	char b[24];
	ls_out_pad(o, ls_fmt_u64(b, v), width);
}
