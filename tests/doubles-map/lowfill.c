/* Preloaded after liblockswap.so (so that its constructor runs first):
 * occupies the first 4 GiB of address space above 64 KiB (PROT_NONE, no
 * memory), so that an algorithm map's table cannot be mapped below 4 GiB
 * and its dispatch goes by offset (tests/algo-map.bats). */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>

/* [a, a + len) wherever it is free: whole, or in halves down to 64 KiB
 * (few mappings: the kernel's and valgrind's limits on their number). */
static void take(uintptr_t a, uintptr_t len)
{
	void *p = mmap((void *)a, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == (void *)a)
		return;
	if (p != MAP_FAILED)
		munmap(p, len); /* an old kernel took the address as a hint */
	if (len <= 0x10000)
		return;
	take(a, len / 2);
	take(a + len / 2, len / 2);
}

__attribute__((constructor)) static void fill(void)
{
	for (uintptr_t a = 0; a < (1ull << 32); a += 1ull << 28)
		take(a ? a : 0x10000, a ? 1ull << 28 : (1ull << 28) - 0x10000);
}
