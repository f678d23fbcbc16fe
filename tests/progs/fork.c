/*
 * fork - mutexes and condvars in a child after fork(), as glibc 2.36 gives
 * them. The child is a copy of the forking thread: a mutex that thread held
 * is held in the child, one it did not hold is free, and the child may
 * create threads that use them. The usual pthread_atfork pattern (lock in
 * prepare, unlock in parent and child) works. Each child reports through its
 * exit status, which the parent checks.
 */
#include "check.h"

#include <sys/wait.h>

/* Runs fn in a child; the child exits 0 on success (CHECK failures exit 1). */
static void in_child(void (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		FAIL("child failed (status 0x%x)", st);
}

/* Held by the forking thread: held in the child, and the child's single
 * thread can release it (NORMAL) and use it with new threads. */
static pthread_mutex_t held_n, free_n, free_r, free_e;
static pthread_mutex_t held_r, held_e;
static void child_held(void)
{
	CHECK_RC(pthread_mutex_trylock(&held_n), EBUSY);
	CHECK_RC(probe(&held_n), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&held_n), 0);
	CHECK_RC(probe(&held_n), 0);
	contend(&held_n, 3, 500);
	/* Free in the parent at fork time: free in the child. */
	CHECK_RC(probe(&free_n), 0);
	contend(&free_n, 3, 500);
	contend(&free_r, 3, 500);
	contend(&free_e, 3, 500);
	/* Recursive and errorcheck mutexes the forking thread held are held in
	 * the child. */
	CHECK_RC(probe(&held_r), EBUSY);
	CHECK_RC(probe(&held_e), EBUSY);
	CHECK_RC(pthread_mutex_trylock(&held_e), EBUSY);
}

/* glibc records the owner of a recursive or errorcheck mutex as a thread
 * id, and the child's thread has a new one: the child does not own what
 * the forking thread held, so its unlock is refused and its trylock of the
 * recursive mutex does not add a level. */
static void child_owner(void)
{
	CHECK_RC(pthread_mutex_unlock(&held_e), EPERM);
	CHECK_RC(pthread_mutex_unlock(&held_r), EPERM);
	CHECK_RC(pthread_mutex_trylock(&held_r), EBUSY);
	CHECK_RC(probe(&held_r), EBUSY);
	CHECK_RC(probe(&held_e), EBUSY);
}
static void owner(void)
{
	init_type(&held_r, PTHREAD_MUTEX_RECURSIVE);
	init_type(&held_e, PTHREAD_MUTEX_ERRORCHECK);
	CHECK_RC(pthread_mutex_lock(&held_r), 0);
	CHECK_RC(pthread_mutex_lock(&held_e), 0);
	in_child(child_owner);
	CHECK_RC(pthread_mutex_unlock(&held_r), 0);
	CHECK_RC(pthread_mutex_unlock(&held_e), 0);
}
static void held(void)
{
	init_type(&held_n, PTHREAD_MUTEX_NORMAL);
	init_type(&free_n, PTHREAD_MUTEX_NORMAL);
	init_type(&free_r, PTHREAD_MUTEX_RECURSIVE);
	init_type(&free_e, PTHREAD_MUTEX_ERRORCHECK);
	init_type(&held_r, PTHREAD_MUTEX_RECURSIVE);
	init_type(&held_e, PTHREAD_MUTEX_ERRORCHECK);
	contend(&held_n, 3, 500); /* used by several threads before */
	contend(&free_n, 3, 500);
	CHECK_RC(pthread_mutex_lock(&held_n), 0);
	CHECK_RC(pthread_mutex_lock(&held_r), 0);
	CHECK_RC(pthread_mutex_lock(&held_e), 0);
	in_child(child_held);
	/* The parent is unaffected. */
	CHECK_RC(probe(&held_n), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&held_n), 0);
	CHECK_RC(pthread_mutex_unlock(&held_r), 0);
	CHECK_RC(pthread_mutex_unlock(&held_e), 0);
	contend(&held_n, 3, 500);
}

/* pthread_atfork: lock in prepare, unlock in parent and child. */
static pthread_mutex_t af_n = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t af_r = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static void af_prepare(void)
{
	CHECK_RC(pthread_mutex_lock(&af_n), 0);
	CHECK_RC(pthread_mutex_lock(&af_r), 0);
}
static void af_parent(void)
{
	CHECK_RC(pthread_mutex_unlock(&af_r), 0);
	CHECK_RC(pthread_mutex_unlock(&af_n), 0);
}
static int af_child_r_rc = -1;
static void af_child(void)
{
	CHECK_RC(pthread_mutex_unlock(&af_n), 0);
	af_child_r_rc = pthread_mutex_unlock(&af_r);
}
static void child_atfork(void)
{
	/* The recursive mutex belongs to the parent's thread id (see
	 * child_owner): glibc refuses the child's unlock. */
	CHECK_RC(af_child_r_rc, EPERM);
	CHECK_RC(probe(&af_r), EBUSY);
	CHECK_RC(probe(&af_n), 0);
	contend(&af_n, 3, 500);
}
/* FORK_ROUNDS: fewer rounds of the same path (the suite's), at least 2:
 * the handlers leave the mutexes usable for the next fork */
static int fork_rounds(int dflt)
{
	return getenv("FORK_ROUNDS") ? atoi(getenv("FORK_ROUNDS")) : dflt;
}
static void atfork(void)
{
	CHECK_RC(pthread_atfork(af_prepare, af_parent, af_child), 0);
	int n = fork_rounds(5) < 2 ? 2 : fork_rounds(5);
	for (int i = 0; i < n; i++)
		in_child(child_atfork);
	CHECK_RC(probe(&af_n), 0);
	CHECK_RC(probe(&af_r), 0);
}

/* Fork while other threads are busy locking and unlocking their own and
 * shared mutexes, and creating and exiting threads: the child, a copy of
 * the forking thread only, can use fresh mutexes, its own, and condvars. */
static atomic_int stop;
static pthread_mutex_t busy_shared = PTHREAD_MUTEX_INITIALIZER;
static void *short_fn(void *p)
{
	pthread_mutex_t *m = p;
	CHECK_RC(pthread_mutex_lock(m), 0);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	return NULL;
}
static void *busy_fn(void *p)
{
	(void)p;
	pthread_mutex_t own;
	init_type(&own, PTHREAD_MUTEX_ERRORCHECK);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		CHECK_RC(pthread_mutex_lock(&own), 0);
		CHECK_RC(pthread_mutex_lock(&busy_shared), 0);
		CHECK_RC(pthread_mutex_unlock(&busy_shared), 0);
		CHECK_RC(pthread_mutex_unlock(&own), 0);
		join(spawn(short_fn, &own));
	}
	return NULL;
}
static pthread_mutex_t mine = PTHREAD_MUTEX_INITIALIZER;
static void child_held_nothing(void);
static void child_busy(void)
{
	pthread_mutex_t fresh;
	init_type(&fresh, PTHREAD_MUTEX_NORMAL);
	contend(&fresh, 3, 500);
	contend(&mine, 3, 500);
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec dl = deadline_in(CLOCK_REALTIME, 1 * MS);
	CHECK_RC(pthread_mutex_lock(&fresh), 0);
	CHECK_RC(pthread_cond_timedwait(&c, &fresh, &dl), ETIMEDOUT);
	CHECK_RC(pthread_mutex_unlock(&fresh), 0);
	/* A grandchild, too. */
	in_child(child_held_nothing);
}
static void busy(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		t[i] = spawn(busy_fn, NULL);
	int rounds = fork_rounds(20);
	for (int i = 0; i < rounds; i++) {
		CHECK_RC(pthread_mutex_lock(&mine), 0);
		CHECK_RC(pthread_mutex_unlock(&mine), 0);
		in_child(child_busy);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		join(t[i]);
}
static void child_held_nothing(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	contend(&m, 3, 500);
}

static const struct test_case cases[] = {
    {"held", held}, {"owner", owner}, {"atfork", atfork}, {"busy", busy}, {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
