/*
 * profile_base.c - the bottom of the recording layer (see profile_base.h):
 * the profiler's state, its memory, its global lock and the per-thread
 * guard.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "profile_base.h"

bool ls_prof_on;
struct prof_state ls_prof = {.sample = 1, .frames = 8, .top = 10, .err_fd = 2};
struct plock ls_prof_glock;
__thread struct ls_prof_tls ls_prof_tls __attribute__((tls_model("initial-exec")));

/* ---- memory ---- */

static size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

void *ls_prof_map(size_t size)
{
	void *p = mmap(NULL, page_round(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void ls_prof_unmap(void *p, size_t size)
{
	if (p)
		munmap(p, page_round(size));
}

void *ls_prof_arena_alloc(struct arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n > a->left) {
		size_t size = a->next_size ? a->next_size : 16384;
		while (size < n + sizeof(struct chunk) + 16)
			size *= 2;
		struct chunk *c = ls_prof_map(size);
		if (!c)
			return NULL;
		c->next = a->chunks;
		c->size = size;
		a->chunks = c;
		a->cur = (char *)c + 16;
		a->left = page_round(size) - 16;
		if (size < (1u << 20))
			a->next_size = size * 2;
	}
	void *p = a->cur;
	a->cur += n;
	a->left -= n;
	return p; /* zero: fresh mmap memory, never reused */
}

void ls_prof_arena_free(struct arena *a)
{
	for (struct chunk *c = a->chunks, *next; c; c = next) {
		next = c->next;
		ls_prof_unmap(c, c->size);
	}
	memset(a, 0, sizeof *a);
}

static struct arena garena; /* records, call sites, names: under the global lock */

void *ls_prof_galloc(size_t n)
{
	return ls_prof_arena_alloc(&garena, n);
}
