/*
 * libsymbols.so - the library of tests/doubles-report/symbols.c: exported
 * functions (default visibility) around hidden ones, in this order
 * (-fno-toplevel-reorder): symlib_first, then the hidden creator and
 * waiter, then the exported entry points and symlib_last. Stripped, it
 * keeps only the exported ones.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default"), noinline, noclone))
#define HIDDEN __attribute__((visibility("hidden"), noinline, noclone))
#define KEEP() __asm__ volatile("" ::: "memory")

static volatile unsigned long sink;

EXPORT void symlib_first(void)
{
	sink++;
	KEEP();
}

HIDDEN void lib_hidden_make(pthread_mutex_t *m)
{
	if (pthread_mutex_init(m, NULL) != 0)
		abort();
	KEEP();
}

HIDDEN void lib_take(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m) != 0)
		abort();
	sink++;
	if (pthread_mutex_unlock(m) != 0)
		abort();
	KEEP();
}

EXPORT void symlib_make_hidden_path(pthread_mutex_t *m)
{
	lib_hidden_make(m);
	KEEP();
}

EXPORT void symlib_make(pthread_mutex_t *m)
{
	if (pthread_mutex_init(m, NULL) != 0)
		abort();
	KEEP();
}

EXPORT void symlib_take(pthread_mutex_t *m)
{
	lib_take(m);
	KEEP();
}

EXPORT void symlib_last(void)
{
	sink++;
	KEEP();
}
