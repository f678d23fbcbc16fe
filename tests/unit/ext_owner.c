/*
 * ext_owner.c - a freed out-of-line block is never taken for a lock's own
 * (locks/common/pool.h, "Attaching a block to a lock").
 *
 *   ext_owner
 *
 * A copy by value of an unlocked mutex (or of a hierarchical lock) keeps in
 * its word the original's block, which a destroy may then have freed; the
 * copy's next lock reads the block's owner and must find it is not its own.
 * A freed block's first word is the pool's free-list link. This test frees
 * blocks in pairs and reads that word: it must never be a possible word
 * address (one that is 8-aligned). Where it is one (before the fix: the
 * link was a bare line index, and an index is 8-aligned one time in eight),
 * the test maps a page there, as a program whose mutexes live below 4 GiB
 * (a non-PIE executable's data and heap) may have one, puts a copy's word
 * at that address pointing at the freed block, and shows ls_ext_load
 * adopting the freed block as the copy's own, state shared with whichever
 * lock gets the block next.
 * Exit 0 pass, 1 fail (one line says why).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define FAIL_PREFIX "ext_owner: FAIL "
#include "fail.h"
#include "pool.h"

#define N 4096 /* one-line blocks: indices past the first page of addresses */

static void *blocks[N];

int main(void)
{
	for (int i = 0; i < N; i++)
		if (!(blocks[i] = ls_ext_alloc(64)))
			fail("no memory for %d blocks", N);
	int pairs = 0;
	for (int i = N - 2; i >= N / 2; i -= 2) {
		ls_ext_free(blocks[i], 64);
		ls_ext_free(blocks[i + 1], 64);
		uint64_t link;
		memcpy(&link, blocks[i + 1], sizeof link);
		pairs++;
		if (link % 8 != 0 || link < 4096)
			continue;
		/* a word there could be a lock's: place one, pointing at the
		 * freed block, as a copy's word does */
		char *page = (char *)(uintptr_t)(link & ~(uint64_t)4095);
		void *m = mmap(page, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (m != page) {
			if (m != MAP_FAILED)
				munmap(m, 4096);
			fail("a freed block's first word is %#llx, the address a lock's word may have",
			     (unsigned long long)link);
		}
		ls_ext_word_t *w = (ls_ext_word_t *)(uintptr_t)link;
		atomic_store(w, (struct ls_ext_head *)blocks[i + 1]);
		if (ls_ext_load(w))
			fail("the word at %#llx adopts a freed block as its own (its free-list link is the "
			     "word's address)",
			     (unsigned long long)link);
		fail("a freed block's first word is %#llx, the address a lock's word may have",
		     (unsigned long long)link);
	}
	printf("ext_owner: OK %d freed blocks, none names a word as its owner\n", 2 * pairs);
	return 0;
}
