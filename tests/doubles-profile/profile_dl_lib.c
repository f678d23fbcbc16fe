/* The library tests/progs/profile_dl.c loads and unloads: its constructor,
 * destructor and one function each take the program's mutex 10 times. */
#include <pthread.h>

extern pthread_mutex_t profile_dl_mutex;

static void burst(void)
{
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&profile_dl_mutex);
		pthread_mutex_unlock(&profile_dl_mutex);
	}
}

__attribute__((constructor)) static void profile_dl_ctor(void)
{
	burst();
}

__attribute__((destructor)) static void profile_dl_dtor(void)
{
	burst();
}

void profile_dl_work(void)
{
	burst();
}
