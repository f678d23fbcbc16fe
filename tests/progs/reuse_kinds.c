/*
 * reuse_kinds - memory that held one kind of lock, never destroyed, is
 * initialised as another kind. POSIX calls a lock freed without destroy
 * simply gone, and programs reuse such memory (an allocator hands it out
 * again). A library that keeps lock state out of line must not take the
 * old lock's block for the new one: its size and layout are another
 * lock's (a review found pthread_mutex_init adopting a reader-writer
 * lock's per-cluster block, and the reverse).
 *
 * The program looks only at bytes: the pointer-sized word that a mutex
 * may keep at offset 24 (glibc's __list) and a reader-writer lock at
 * offset 0 or 8 (glibc's __readers..., __writers_futex...). Placed so
 * that two such words are the same bytes, the word after init must not be
 * the one the old lock left there (glibc's own init zeroes both).
 */
#include <stdint.h>
#include <string.h>

#include "check.h"

static _Alignas(64) unsigned char mem[256];

static uint64_t word_at(size_t off)
{
	uint64_t w;
	memcpy(&w, mem + off, sizeof w);
	return w;
}

/* The offsets at which a reader-writer lock may keep a pointer. */
static const size_t rw_words[] = {0, 8};

/* A reader-writer lock at mem+64, used (and so given whatever it keeps out
 * of line), then abandoned; a mutex whose word at +24 is the rwlock's. */
static void rwlock_then_mutex(void)
{
	for (size_t i = 0; i < sizeof rw_words / sizeof rw_words[0]; i++) {
		size_t at = 64 + rw_words[i];
		memset(mem, 0, sizeof mem);
		pthread_rwlock_t *rw = (pthread_rwlock_t *)(mem + 64);
		CHECK_RC(pthread_rwlock_init(rw, NULL), 0);
		CHECK_RC(pthread_rwlock_wrlock(rw), 0);
		CHECK_RC(pthread_rwlock_unlock(rw), 0);
		CHECK_RC(pthread_rwlock_rdlock(rw), 0);
		CHECK_RC(pthread_rwlock_unlock(rw), 0);
		uint64_t old = word_at(at);
		pthread_mutex_t *m = (pthread_mutex_t *)(mem + at - 24);
		CHECK_RC(pthread_mutex_init(m, NULL), 0);
		if (old && word_at(at) == old)
			FAIL("pthread_mutex_init kept the word %#llx the rwlock left at +%zu",
			     (unsigned long long)old, rw_words[i]);
		CHECK_RC(pthread_mutex_lock(m), 0);
		CHECK_RC(pthread_mutex_unlock(m), 0);
		CHECK_RC(pthread_mutex_destroy(m), 0);
	}
}

/* The reverse: a mutex at mem+64, used, abandoned; a reader-writer lock
 * whose word is the mutex's +24. */
static void mutex_then_rwlock(void)
{
	for (size_t i = 0; i < sizeof rw_words / sizeof rw_words[0]; i++) {
		memset(mem, 0, sizeof mem);
		pthread_mutex_t *m = (pthread_mutex_t *)(mem + 64);
		CHECK_RC(pthread_mutex_init(m, NULL), 0);
		CHECK_RC(pthread_mutex_lock(m), 0);
		CHECK_RC(pthread_mutex_unlock(m), 0);
		uint64_t old = word_at(64 + 24);
		pthread_rwlock_t *rw = (pthread_rwlock_t *)(mem + 64 + 24 - rw_words[i]);
		CHECK_RC(pthread_rwlock_init(rw, NULL), 0);
		if (old && word_at(64 + 24) == old)
			FAIL("pthread_rwlock_init kept the word %#llx the mutex left (rwlock word +%zu)",
			     (unsigned long long)old, rw_words[i]);
		CHECK_RC(pthread_rwlock_wrlock(rw), 0);
		CHECK_RC(pthread_rwlock_unlock(rw), 0);
		CHECK_RC(pthread_rwlock_destroy(rw), 0);
	}
}

static const struct test_case cases[] = {
    {"rwlock-then-mutex", rwlock_then_mutex},
    {"mutex-then-rwlock", mutex_then_rwlock},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
