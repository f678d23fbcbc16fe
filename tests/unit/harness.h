/*
 * harness.h - what the generic validators (stress.c for mutexes, rwstress.c
 * for reader-writer locks) share besides their options (opts.h): per-thread
 * random streams, and the async-signal-safe output of their hang reports.
 */
#ifndef LS_UNIT_HARNESS_H
#define LS_UNIT_HARNESS_H

#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* splitmix64 of (seed, i): distinct, non-zero xorshift64 states. */
static inline uint64_t seed_stream(uint64_t seed, unsigned i)
{
	uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (z ^ (z >> 31)) | 1;
}

/* Output for a signal handler (write(2) only). */
static inline void put(const char *s)
{
	if (write(2, s, strlen(s)) < 0) {
	}
}

static inline void put_u(unsigned long v)
{
	char b[24];
	int i = sizeof b;
	b[--i] = '\0';
	do
		b[--i] = (char)('0' + v % 10);
	while (v /= 10);
	put(b + i);
}

#endif
