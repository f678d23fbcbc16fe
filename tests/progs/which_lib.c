/*
 * which_lib - prints, for every pthread_mutex_* and pthread_cond_* entry
 * point as this program links it (with the symbol versions a program built on
 * glibc 2.36 references), the file of the shared object that defines it:
 *   pthread_mutex_lock /path/to/liblockswap.so
 * Natively every line names libc.so.6.
 */
#include "check.h"

#include <dlfcn.h>

#define ENTRY(f)                                                                                             \
	{                                                                                                    \
#f, (void *)f                                                                                \
	}

int main(void)
{
	static const struct {
		const char *name;
		void *fn;
	} entries[] = {
	    ENTRY(pthread_mutex_init),	  ENTRY(pthread_mutex_destroy),	  ENTRY(pthread_mutex_lock),
	    ENTRY(pthread_mutex_trylock), ENTRY(pthread_mutex_timedlock), ENTRY(pthread_mutex_clocklock),
	    ENTRY(pthread_mutex_unlock),  ENTRY(pthread_cond_init),	  ENTRY(pthread_cond_destroy),
	    ENTRY(pthread_cond_wait),	  ENTRY(pthread_cond_timedwait),  ENTRY(pthread_cond_clockwait),
	    ENTRY(pthread_cond_signal),	  ENTRY(pthread_cond_broadcast),
	};
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		Dl_info info;
		if (!dladdr(entries[i].fn, &info) || !info.dli_fname)
			FAIL("dladdr(%s) failed", entries[i].name);
		printf("%s %s\n", entries[i].name, info.dli_fname);
	}
	return 0;
}
