/*
 * hello [--exit N] [ARG...] - prints "main ran", then each ARG as "arg: ARG",
 * locks and unlocks a mutex, and exits with status N (default 0). Used to
 * tell whether main ran, and what arguments and status a launcher passes.
 */
#include "check.h"

int main(int argc, char **argv)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	int status = 0, i = 1;
	if (argc > 2 && strcmp(argv[1], "--exit") == 0) {
		status = atoi(argv[2]);
		i = 3;
	}
	CHECK_RC(pthread_mutex_lock(&m), 0);
	printf("main ran\n");
	for (; i < argc; i++)
		printf("arg: %s\n", argv[i]);
	CHECK_RC(pthread_mutex_unlock(&m), 0);
	return status;
}
