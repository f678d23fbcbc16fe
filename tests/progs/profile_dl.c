/*
 * profile_dl - dlopen while contended (tests/profile.bats): three threads
 * hammer a mutex of the program while the main thread loads and unloads a
 * library (tests/doubles-profile/profile_dl_lib.c) whose constructor,
 * destructor and a function take the same mutex, 10 times each. The
 * constructor and destructor run under the loader's lock, so a profiler that
 * called into the loader's lock while holding or waiting for the mutex
 * would deadlock here. Prints the expected count (see profile.c).
 * 10 loads of 30 acquisitions: under a FIFO lock with more threads than
 * cores each of the main thread's acquisitions waits for the hammering
 * threads' hand-offs to descheduled threads, about 7 ms each with three busy
 * loops beside it on two CPUs (20 loads of 150 took 22 s there, and ran past
 * the test's limit at load 27).
 *   profile_dl run LIBRARY
 */
#include "check.h"

#include <dlfcn.h>

/* exported (-rdynamic): the library takes it too */
pthread_mutex_t profile_dl_mutex = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;
static long hammered;

static void *hammer_fn(void *p)
{
	(void)p;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		CHECK_RC(pthread_mutex_lock(&profile_dl_mutex), 0);
		hammered++;
		CHECK_RC(pthread_mutex_unlock(&profile_dl_mutex), 0);
	}
	return NULL;
}

static const char *lib;
static void run(void)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		t[i] = spawn(hammer_fn, NULL);
	for (int i = 0; i < 10; i++) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			FAIL("dlopen %s: %s", lib, dlerror());
		void (*work)(void) = (void (*)(void))dlsym(h, "profile_dl_work");
		CHECK(work != NULL);
		work();
		CHECK_RC(dlclose(h), 0);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++)
		join(t[i]);
	/* 10 loads x (constructor + function + destructor) x 10 */
	printf("- %#lx 1 lock = %ld\n", (unsigned long)&profile_dl_mutex, hammered + 10 * 30);
}

static const struct test_case cases[] = {{"run", run}, {0, 0}};

int main(int argc, char **argv)
{
	if (argc > 2)
		lib = argv[2];
	return run_case(cases, argc > 2 ? 2 : argc, argv);
}
