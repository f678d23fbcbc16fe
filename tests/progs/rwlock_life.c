/*
 * rwlock_life - a read hold belongs to one rwlock's life (issue 30, item 3).
 *
 *   rwlock_life CASE
 *
 * A thread that holds a read lock, then sees the lock's life end without
 * releasing it (destroy, pthread_rwlock_init again, the memory freed and
 * reused, zeroed or overwritten by a copy of an unlocked rwlock), then
 * read-locks the new lock at the same address, holds a read lock of the new
 * lock like any reader: a writer is kept out until it unlocks, once. glibc
 * resets its counts at init, so the old hold is simply forgotten. The cases
 * (each checks that another thread's trywrlock is EBUSY while the new hold
 * lasts and 0 after the one unlock):
 *   destroy-init   rdlock, destroy (0, as glibc's), init, rdlock
 *   init-again     rdlock, init, rdlock
 *   reused         rdlock, the memory "freed" and initialised as another
 *                  rwlock, rdlock
 *   zeroed         rdlock, the memory zeroed (PTHREAD_RWLOCK_INITIALIZER),
 *                  rdlock
 *   copied         rdlock, an unlocked rwlock copied over it, rdlock
 *   tsd-order      a thread takes 12 read locks, then creates a key whose
 *                  destructor, run at the thread's exit after those of the
 *                  keys made before it, unlocks them all: every one is free
 *                  afterwards (a writer gets it)
 *   all            every case above
 * Exit 0 pass, 1 fail (file:line), 2 usage. Must pass natively.
 */
#include "check.h"

#define NLOCKS 12

static pthread_rwlock_t *target;

static void *try_write(void *arg)
{
	int *rc = arg;
	*rc = pthread_rwlock_trywrlock(target);
	if (*rc == 0)
		CHECK_RC(pthread_rwlock_unlock(target), 0);
	return NULL;
}

/* trywrlock by another thread (which releases what it gets). */
static int other_trywrlock(pthread_rwlock_t *l)
{
	pthread_t t;
	int rc = -1;
	target = l;
	CHECK_RC(pthread_create(&t, NULL, try_write, &rc), 0);
	CHECK_RC(pthread_join(t, NULL), 0);
	return rc;
}

/* The new life's read hold excludes a writer until its one unlock. */
static void new_hold(pthread_rwlock_t *l)
{
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	CHECK_RC(other_trywrlock(l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	CHECK_RC(other_trywrlock(l), 0);
}

/* Memory that held an rwlock: aligned as malloc's would be. */
static union {
	pthread_rwlock_t l;
	char bytes[128];
} mem;

static void destroy_init(void)
{
	pthread_rwlock_t *l = &mem.l;
	CHECK_RC(pthread_rwlock_init(l, NULL), 0);
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	CHECK_RC(pthread_rwlock_destroy(l), 0);
	CHECK_RC(pthread_rwlock_init(l, NULL), 0);
	new_hold(l);
}

static void init_again(void)
{
	pthread_rwlock_t *l = &mem.l;
	CHECK_RC(pthread_rwlock_init(l, NULL), 0);
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	CHECK_RC(pthread_rwlock_init(l, NULL), 0);
	new_hold(l);
}

static void reused(void)
{
	pthread_rwlock_t *l = &mem.l;
	CHECK_RC(pthread_rwlock_init(l, NULL), 0);
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	memset(&mem, 0x5a, sizeof mem); /* freed, and the memory used for something else */
	CHECK_RC(pthread_rwlock_init(l, NULL), 0);
	new_hold(l);
}

static void zeroed(void)
{
	pthread_rwlock_t *l = &mem.l;
	CHECK_RC(pthread_rwlock_init(l, NULL), 0);
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	memset(&mem, 0, sizeof mem);
	new_hold(l);
}

static void copied(void)
{
	static pthread_rwlock_t other = PTHREAD_RWLOCK_INITIALIZER;
	pthread_rwlock_t *l = &mem.l;
	CHECK_RC(pthread_rwlock_init(l, NULL), 0);
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	CHECK_RC(pthread_rwlock_rdlock(&other), 0); /* used, then unlocked: a real copy */
	CHECK_RC(pthread_rwlock_unlock(&other), 0);
	memcpy(l, &other, sizeof *l);
	new_hold(l);
}

static pthread_rwlock_t locks[NLOCKS];
static pthread_key_t late_key;

static void unlock_all(void *arg)
{
	(void)arg;
	for (int i = 0; i < NLOCKS; i++)
		CHECK_RC(pthread_rwlock_unlock(&locks[i]), 0);
}

static void *holder(void *arg)
{
	(void)arg;
	for (int i = 0; i < NLOCKS; i++)
		CHECK_RC(pthread_rwlock_rdlock(&locks[i]), 0);
	/* made after the read locks were taken: after any key a library
	 * made for them, so its destructor runs last */
	CHECK_RC(pthread_key_create(&late_key, unlock_all), 0);
	CHECK_RC(pthread_setspecific(late_key, &late_key), 0);
	return NULL;
}

static void tsd_order(void)
{
	for (int i = 0; i < NLOCKS; i++)
		CHECK_RC(pthread_rwlock_init(&locks[i], NULL), 0);
	pthread_t t;
	CHECK_RC(pthread_create(&t, NULL, holder, NULL), 0);
	CHECK_RC(pthread_join(t, NULL), 0);
	for (int i = 0; i < NLOCKS; i++) {
		int rc = pthread_rwlock_trywrlock(&locks[i]);
		if (rc != 0)
			FAIL("lock %d of %d: trywrlock %s after the thread's key destructor unlocked it",
			     i + 1, NLOCKS, err_name(rc));
		CHECK_RC(pthread_rwlock_unlock(&locks[i]), 0);
	}
	CHECK_RC(pthread_key_delete(late_key), 0);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*run)(void);
	} cases[] = {{"destroy-init", destroy_init},
		     {"init-again", init_again},
		     {"reused", reused},
		     {"zeroed", zeroed},
		     {"copied", copied},
		     {"tsd-order", tsd_order}};
	int n = (int)(sizeof cases / sizeof cases[0]), ran = 0;
	for (int i = 0; argc == 2 && i < n; i++)
		if (!strcmp(argv[1], "all") || !strcmp(argv[1], cases[i].name)) {
			cases[i].run();
			ran++;
		}
	if (!ran) {
		fprintf(stderr, "usage: %s CASE\ncases:", argv[0]);
		for (int i = 0; i < n; i++)
			fprintf(stderr, " %s", cases[i].name);
		fprintf(stderr, " all\n");
		return 2;
	}
	return 0;
}
