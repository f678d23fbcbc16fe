/*
 * aslimit - mutexes under an address-space limit (RLIMIT_AS, `ulimit -v`),
 * as glibc gives them: every lock, trylock, timedlock and unlock succeeds,
 * whatever the limit, and nothing is printed; pthread_mutex_init of a
 * private mutex succeeds (a library may say ENOMEM instead, as POSIX allows;
 * the program counts it and uses the mutex anyway, as programs that ignore
 * the result do).
 *
 *   aslimit lowered    threads started, then RLIMIT_AS lowered to the size
 *                      of the address space plus 8 MiB, then the workload
 *   aslimit none       the same with no room left at all (the limit is the
 *                      current size: every new mapping fails)
 *   aslimit exec       the workload, under a limit set before exec (the
 *                      caller runs `ulimit -v` first)
 *   aslimit size       print the size of the address space at start, in KiB
 *   aslimit hold-many  no room left; a thread holds 600 mutexes, another
 *                      then takes 600 more while the first releases and
 *                      destroys its 600 and exits
 *
 * Workload: 4 threads (small stacks), each taking 6 of 12 statically
 * initialised mutexes at once, in index order, by lock, trylock or
 * timedlock, 300 rounds; a counter per mutex checks mutual exclusion. Then 3
 * mutexes are initialised (NORMAL, RECURSIVE, ERRORCHECK) and used; N
 * counts those inits that said ENOMEM, except under `none`, where it is 1
 * if init_until_enomem saw ENOMEM, else 0.
 * Output, on stdout only: "aslimit: ok init_enomem=N". After the limit is
 * lowered nothing here allocates (no stdio on stdout, no malloc).
 */
#include "check.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/resource.h>

#define THREADS 4
#define NLOCKS 12
#define HELD 6
#define ROUNDS 300
#define STACK (256 << 10)

static pthread_mutex_t locks[NLOCKS] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
};
static long counter[NLOCKS];
static atomic_long acquired[NLOCKS];
static atomic_int go;

/* The address space in bytes (first field of /proc/self/statm, in pages),
 * read with plain syscalls. */
static size_t as_size(void)
{
	char buf[128];
	int fd = open("/proc/self/statm", O_RDONLY);
	if (fd < 0)
		FAIL("cannot open /proc/self/statm");
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		FAIL("cannot read /proc/self/statm");
	buf[n] = 0;
	return (size_t)strtoul(buf, NULL, 10) * (size_t)sysconf(_SC_PAGESIZE);
}

static void limit_to(size_t bytes)
{
	struct rlimit r = {bytes, bytes};
	if (setrlimit(RLIMIT_AS, &r) != 0)
		FAIL("setrlimit(RLIMIT_AS, %zu) failed", bytes);
}

static void acquire(pthread_mutex_t *m, uint64_t how)
{
	if (how == 0) {
		CHECK_RC(pthread_mutex_lock(m), 0);
	} else if (how == 1) {
		int rc;
		while ((rc = pthread_mutex_trylock(m)) == EBUSY)
			sched_yield();
		CHECK_RC(rc, 0);
	} else {
		struct timespec d = deadline_in(CLOCK_REALTIME, FAR_NS);
		CHECK_RC(pthread_mutex_timedlock(m, &d), 0);
	}
}

static void *worker(void *arg)
{
	uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull | 1;
	await_at_least(&go, 1);
	for (int r = 0; r < ROUNDS; r++) {
		int held[HELD], n = 0;
		for (int i = 0; i < NLOCKS && n < HELD; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if ((int)(x % (uint64_t)(NLOCKS - i)) < HELD - n)
				held[n++] = i; /* HELD of NLOCKS, in index order */
		}
		for (int k = 0; k < HELD; k++) {
			acquire(&locks[held[k]], (x >> (8 + 2 * k)) % 3);
			counter[held[k]]++;
			atomic_fetch_add(&acquired[held[k]], 1);
		}
		for (int k = HELD - 1; k >= 0; k--)
			CHECK_RC(pthread_mutex_unlock(&locks[held[k]]), 0);
	}
	return NULL;
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		exit(1);
}

/* With no room left: initialise mutexes until pthread_mutex_init says
 * ENOMEM (a library whose mutex state is out of line runs out once what it
 * has already mapped is used up: a few hundred KiB at most) or EXTRA of them
 * succeed; then use the one that got ENOMEM (it must work), and destroy the
 * others. Returns 1 if ENOMEM was seen. Deterministic, unlike a single
 * init, which may find a block that a race of the workload left free. */
#define EXTRA (1 << 16)
static pthread_mutex_t extra[EXTRA];

static int init_until_enomem(void)
{
	int n = 0, rc = 0;
	while (n < EXTRA && (rc = pthread_mutex_init(&extra[n], NULL)) == 0)
		n++;
	int enomem = n < EXTRA;
	if (enomem) {
		CHECK_RC(rc, ENOMEM);
		CHECK_RC(pthread_mutex_lock(&extra[n]), 0);
		CHECK_RC(pthread_mutex_trylock(&extra[n]), EBUSY);
		CHECK_RC(pthread_mutex_unlock(&extra[n]), 0);
		CHECK_RC(pthread_mutex_destroy(&extra[n]), 0);
	}
	while (n > 0)
		CHECK_RC(pthread_mutex_destroy(&extra[--n]), 0);
	return enomem;
}

/* The workload; `lower` runs once the threads exist; with `exhaust`, the
 * init_enomem count is init_until_enomem's. */
static void workload(void (*lower)(void), bool exhaust)
{
	pthread_attr_t a;
	pthread_t t[THREADS];
	CHECK_RC(pthread_attr_init(&a), 0);
	CHECK_RC(pthread_attr_setstacksize(&a, STACK), 0);
	for (uintptr_t i = 0; i < THREADS; i++)
		CHECK_RC(pthread_create(&t[i], &a, worker, (void *)(i + 1)), 0);
	if (lower)
		lower();
	atomic_store(&go, 1);
	for (int i = 0; i < THREADS; i++)
		CHECK_RC(pthread_join(t[i], NULL), 0);
	for (int i = 0; i < NLOCKS; i++)
		CHECK_EQ(counter[i], atomic_load(&acquired[i]));

	static const int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK};
	int enomem = exhaust ? init_until_enomem() : 0;
	for (int i = 0; i < 3; i++) {
		pthread_mutexattr_t ma;
		pthread_mutex_t m;
		CHECK_RC(pthread_mutexattr_init(&ma), 0);
		CHECK_RC(pthread_mutexattr_settype(&ma, types[i]), 0);
		int rc = pthread_mutex_init(&m, &ma);
		if (rc == ENOMEM && !exhaust)
			enomem++;
		else if (rc != ENOMEM)
			CHECK_RC(rc, 0);
		/* (no thread can be created here to probe it) */
		CHECK_RC(pthread_mutex_lock(&m), 0);
		CHECK_RC(pthread_mutex_trylock(&m), types[i] == PTHREAD_MUTEX_RECURSIVE ? 0 : EBUSY);
		if (types[i] == PTHREAD_MUTEX_RECURSIVE)
			CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_destroy(&m), 0);
	}
	char line[64];
	snprintf(line, sizeof line, "aslimit: ok init_enomem=%d\n", enomem);
	say(line);
}

static void lower_plus_8m(void)
{
	limit_to(as_size() + (8u << 20));
}

static void lower_to_none(void)
{
	limit_to(as_size());
}

static void lowered(void)
{
	workload(lower_plus_8m, false);
}

static void none(void)
{
	workload(lower_to_none, true);
}

static void exec_limit(void)
{
	workload(NULL, false);
}

static void size(void)
{
	char line[64];
	snprintf(line, sizeof line, "%zu\n", as_size() >> 10);
	say(line);
}

/* More held at once than memory can be found for (no room left, and a
 * library's reserve, if it keeps one, smaller than 1200 of whatever a lock
 * needs): the second thread's locks may have to wait for the first's
 * memory, which comes back once the first has released and destroyed its
 * mutexes and exited. The
 * first releases once the second has taken 250, which needs no more than
 * the first left over. */
#define MANY 600
static pthread_mutex_t many[2][MANY];
static atomic_int first_holds, second_took;

static void *hold_first(void *arg)
{
	(void)arg;
	await_at_least(&go, 1);
	for (int i = 0; i < MANY; i++)
		CHECK_RC(pthread_mutex_lock(&many[0][i]), 0);
	atomic_store(&first_holds, 1);
	await_at_least(&second_took, 250);
	for (int i = MANY - 1; i >= 0; i--)
		CHECK_RC(pthread_mutex_unlock(&many[0][i]), 0);
	for (int i = 0; i < MANY; i++)
		CHECK_RC(pthread_mutex_destroy(&many[0][i]), 0);
	return NULL;
}

static void *hold_second(void *arg)
{
	(void)arg;
	await_at_least(&first_holds, 1);
	for (int i = 0; i < MANY; i++) {
		CHECK_RC(pthread_mutex_lock(&many[1][i]), 0);
		atomic_fetch_add(&second_took, 1);
	}
	for (int i = MANY - 1; i >= 0; i--)
		CHECK_RC(pthread_mutex_unlock(&many[1][i]), 0);
	return NULL;
}

static void hold_many(void)
{
	pthread_attr_t a;
	pthread_t t1, t2;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < MANY; i++)
			many[k][i] = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	CHECK_RC(pthread_attr_init(&a), 0);
	CHECK_RC(pthread_attr_setstacksize(&a, STACK), 0);
	CHECK_RC(pthread_create(&t1, &a, hold_first, NULL), 0);
	CHECK_RC(pthread_create(&t2, &a, hold_second, NULL), 0);
	lower_to_none();
	atomic_store(&go, 1);
	CHECK_RC(pthread_join(t1, NULL), 0);
	CHECK_RC(pthread_join(t2, NULL), 0);
	say("aslimit: ok\n");
}

static const struct test_case cases[] = {
    {"lowered", lowered}, {"none", none},	    {"exec", exec_limit},
    {"size", size},	  {"hold-many", hold_many}, {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
