/*
 * early - mutexes used before the preloaded library's constructor has run,
 * and left locked across it:
 *   - in a .preinit_array function of the program, which glibc runs before
 *     the constructor of any shared object;
 *   - in the constructor of libearly.so (tests/doubles-core/early_lib.c), a
 *     dependency of this program, initialised before an LD_PRELOAD library.
 * main then checks that every one of them has kept its state and type.
 * Built by mk/tests-core.mk (it links libearly.so).
 */
#include "check.h"

extern pthread_mutex_t early_lib_normal, early_lib_recursive, early_lib_errorcheck;
extern int early_lib_status;

static pthread_mutex_t pre_normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pre_recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t pre_errorcheck;
static pthread_mutex_t pre_zero;
static int pre_status = -1;

static void preinit(int argc, char **argv, char **envp)
{
	(void)argc, (void)argv, (void)envp;
	pthread_mutexattr_t a;
	struct timespec past = {0, 0};
	int bad = 0;
	bad |= pthread_mutex_lock(&pre_zero) != 0;
	bad |= pthread_mutex_unlock(&pre_zero) != 0;
	bad |= pthread_mutex_timedlock(&pre_zero, &past) != 0;
	bad |= pthread_mutex_unlock(&pre_zero) != 0;
	bad |= pthread_mutex_lock(&pre_normal) != 0;
	bad |= pthread_mutex_lock(&pre_recursive) != 0;
	bad |= pthread_mutex_trylock(&pre_recursive) != 0;
	bad |= pthread_mutexattr_init(&a) != 0;
	bad |= pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK) != 0;
	bad |= pthread_mutex_init(&pre_errorcheck, &a) != 0;
	bad |= pthread_mutex_lock(&pre_errorcheck) != 0;
	pre_status = bad;
}
__attribute__((section(".preinit_array"), used)) static void (*const preinit_fn)(int, char **,
										 char **) = preinit;

/* Held at depth d by main's thread (the one that ran preinit and the
 * constructors): busy for others, released by exactly d unlocks. */
static void held(pthread_mutex_t *m, int depth)
{
	CHECK_RC(probe(m), EBUSY);
	for (int i = 1; i < depth; i++) {
		CHECK_RC(pthread_mutex_unlock(m), 0);
		CHECK_RC(probe(m), EBUSY);
	}
	CHECK_RC(pthread_mutex_unlock(m), 0);
	CHECK_RC(probe(m), 0);
}

int main(void)
{
	CHECK_EQ(pre_status, 0);
	CHECK_EQ(early_lib_status, 0);

	CHECK_RC(pthread_mutex_trylock(&pre_normal), EBUSY);
	held(&pre_normal, 1);
	held(&pre_recursive, 2);
	CHECK_RC(pthread_mutex_lock(&pre_errorcheck), EDEADLK);
	CHECK_RC(in_thread(unlock_fn, &pre_errorcheck), EPERM);
	held(&pre_errorcheck, 1);

	CHECK_RC(pthread_mutex_trylock(&early_lib_normal), EBUSY);
	held(&early_lib_normal, 1);
	held(&early_lib_recursive, 2);
	CHECK_RC(pthread_mutex_lock(&early_lib_errorcheck), EDEADLK);
	held(&early_lib_errorcheck, 1);

	pthread_mutex_t *all[] = {&pre_normal,	     &pre_recursive,	   &pre_errorcheck,	 &pre_zero,
				  &early_lib_normal, &early_lib_recursive, &early_lib_errorcheck};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		contend(all[i], 3, 1000);
	puts("early: ok");
	return 0;
}
