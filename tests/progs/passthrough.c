/*
 * passthrough - process-shared, robust, priority-inherit and priority-protect
 * mutexes and process-shared condition variables behave exactly as glibc
 * 2.36's: robust owner death gives EOWNERDEAD (then ENOTRECOVERABLE if not
 * made consistent), a process-shared mutex and condvar in shared memory work
 * across fork, and the mutex words hold what glibc puts there (the owner's
 * thread id in __owner, and in __lock for robust and PI mutexes) - which is
 * only the case if glibc itself handled the calls.
 */
#include "check.h"

#include <sys/mman.h>
#include <sys/wait.h>

#define FUTEX_TID_MASK_ 0x3fffffff

static void init_attr(pthread_mutex_t *m, int type, int pshared, int robust, int protocol)
{
	pthread_mutexattr_t a;
	CHECK_RC(pthread_mutexattr_init(&a), 0);
	CHECK_RC(pthread_mutexattr_settype(&a, type), 0);
	CHECK_RC(pthread_mutexattr_setpshared(&a, pshared), 0);
	CHECK_RC(pthread_mutexattr_setrobust(&a, robust), 0);
	CHECK_RC(pthread_mutexattr_setprotocol(&a, protocol), 0);
	if (protocol == PTHREAD_PRIO_PROTECT)
		CHECK_RC(pthread_mutexattr_setprioceiling(&a, sched_get_priority_min(SCHED_FIFO)), 0);
	CHECK_RC(pthread_mutex_init(m, &a), 0);
	CHECK_RC(pthread_mutexattr_destroy(&a), 0);
}

static void *shared_mem(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	return p;
}

static void wait_child(pid_t pid)
{
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		FAIL("child failed (status 0x%x)", st);
}

/* --- robust: the owner dies holding it --- */
static void *die_holding(void *m)
{
	CHECK_RC(pthread_mutex_lock(m), 0);
	return NULL; /* exits without unlocking */
}
static void robust(void)
{
	static const int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK};
	for (int t = 0; t < 3; t++) {
		pthread_mutex_t m;
		init_attr(&m, types[t], PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_ROBUST, PTHREAD_PRIO_NONE);
		/* glibc's robust lock word is the owner's thread id. */
		CHECK_RC(pthread_mutex_lock(&m), 0);
		CHECK_EQ(m.__data.__lock, gettid());
		CHECK_EQ(m.__data.__owner, gettid());
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_EQ(m.__data.__lock, 0);

		/* Made consistent: usable again. */
		join(spawn(die_holding, &m));
		CHECK_RC(pthread_mutex_lock(&m), EOWNERDEAD);
		CHECK_RC(pthread_mutex_consistent(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_lock(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);

		/* trylock and timedlock see the death too. */
		join(spawn(die_holding, &m));
		CHECK_RC(pthread_mutex_trylock(&m), EOWNERDEAD);
		CHECK_RC(pthread_mutex_consistent(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		join(spawn(die_holding, &m));
		struct timespec dl = deadline_in(CLOCK_REALTIME, FAR_NS);
		CHECK_RC(pthread_mutex_timedlock(&m, &dl), EOWNERDEAD);
		CHECK_RC(pthread_mutex_consistent(&m), 0);
		CHECK_RC(pthread_mutex_unlock(&m), 0);

		/* Not made consistent: unusable for ever. */
		join(spawn(die_holding, &m));
		CHECK_RC(pthread_mutex_lock(&m), EOWNERDEAD);
		CHECK_RC(pthread_mutex_unlock(&m), 0);
		CHECK_RC(pthread_mutex_lock(&m), ENOTRECOVERABLE);
		CHECK_RC(pthread_mutex_trylock(&m), ENOTRECOVERABLE);
		CHECK_RC(pthread_mutex_destroy(&m), 0);
	}
}

/* A process-shared robust mutex whose owner process dies. */
static void robust_process(void)
{
	pthread_mutex_t *m = shared_mem(sizeof *m);
	init_attr(m, PTHREAD_MUTEX_NORMAL, PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_ROBUST, PTHREAD_PRIO_NONE);
	for (int i = 0; i < 3; i++) {
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			if (pthread_mutex_lock(m) != 0)
				_exit(3);
			_exit(0); /* dies holding it */
		}
		wait_child(pid);
		CHECK_RC(pthread_mutex_lock(m), EOWNERDEAD);
		CHECK_RC(pthread_mutex_consistent(m), 0);
		CHECK_RC(pthread_mutex_unlock(m), 0);
	}
}

/* --- process-shared: parent and child exclude each other --- */
struct shared {
	pthread_mutex_t m;
	pthread_cond_t c;
	long counter;
	int announced, flag;
};
static void add(struct shared *s, int n)
{
	for (int i = 0; i < n; i++) {
		CHECK_RC(pthread_mutex_lock(&s->m), 0);
		long v = s->counter;
		if (i % 64 == 0)
			sched_yield(); /* let the other process find it held */
		s->counter = v + 1;
		CHECK_RC(pthread_mutex_unlock(&s->m), 0);
	}
}
static void pshared(void)
{
	static const int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
				    PTHREAD_MUTEX_ADAPTIVE_NP};
	for (int t = 0; t < 4; t++) {
		struct shared *s = shared_mem(sizeof *s);
		init_attr(&s->m, types[t], PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_STALLED, PTHREAD_PRIO_NONE);
		/* glibc's words: lock 1 when held without waiters, owner = tid. */
		CHECK_RC(pthread_mutex_lock(&s->m), 0);
		CHECK_EQ(s->m.__data.__lock, 1);
		CHECK_EQ(s->m.__data.__owner, gettid());
		CHECK_RC(pthread_mutex_unlock(&s->m), 0);
		CHECK_EQ(s->m.__data.__lock, 0);
		CHECK_EQ(s->m.__data.__owner, 0);

		fflush(NULL);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			add(s, 3000);
			_exit(0);
		}
		add(s, 3000);
		wait_child(pid);
		CHECK_EQ(s->counter, 6000);
		/* Held by the child, seen busy in the parent. */
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			CHECK_RC(pthread_mutex_lock(&s->m), 0);
			s->flag = 1;
			_exit(0); /* not robust: stays locked */
		}
		wait_child(pid);
		CHECK_RC(pthread_mutex_trylock(&s->m), EBUSY);
		struct timespec dl = deadline_in(CLOCK_REALTIME, 2 * MS);
		CHECK_RC(pthread_mutex_timedlock(&s->m, &dl), ETIMEDOUT);
		munmap(s, sizeof *s);
	}
}

/* --- priority inheritance: the lock word is the owner's tid --- */
static pthread_mutex_t pi_m;
static long pi_counter;
static void *pi_fn(void *p)
{
	(void)p;
	for (int i = 0; i < 2000; i++) {
		CHECK_RC(pthread_mutex_lock(&pi_m), 0);
		CHECK_EQ(pi_m.__data.__lock & FUTEX_TID_MASK_, gettid());
		long v = pi_counter;
		__asm__ __volatile__("" ::: "memory");
		pi_counter = v + 1;
		CHECK_RC(pthread_mutex_unlock(&pi_m), 0);
	}
	return NULL;
}
static void pi(void)
{
	init_attr(&pi_m, PTHREAD_MUTEX_NORMAL, PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PRIO_INHERIT);
	CHECK_RC(pthread_mutex_lock(&pi_m), 0);
	CHECK_EQ(pi_m.__data.__lock & FUTEX_TID_MASK_, gettid());
	CHECK_RC(probe(&pi_m), EBUSY);
	CHECK_RC(pthread_mutex_unlock(&pi_m), 0);
	CHECK_EQ(pi_m.__data.__lock, 0);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		t[i] = spawn(pi_fn, NULL);
	for (int i = 0; i < 4; i++)
		join(t[i]);
	CHECK_EQ(pi_counter, 8000);

	pthread_mutex_t e;
	init_attr(&e, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PRIO_INHERIT);
	CHECK_RC(pthread_mutex_lock(&e), 0);
	CHECK_RC(pthread_mutex_lock(&e), EDEADLK);
	CHECK_RC(in_thread(unlock_fn, &e), EPERM);
	CHECK_RC(pthread_mutex_unlock(&e), 0);
	CHECK_RC(pthread_mutex_unlock(&e), EPERM);

	/* PI and robust, across a thread's death. */
	pthread_mutex_t r;
	init_attr(&r, PTHREAD_MUTEX_NORMAL, PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PRIO_INHERIT);
	join(spawn(die_holding, &r));
	CHECK_RC(pthread_mutex_lock(&r), EOWNERDEAD);
	CHECK_RC(pthread_mutex_consistent(&r), 0);
	CHECK_RC(pthread_mutex_unlock(&r), 0);
}

/* --- priority protect: the ceiling lives in the lock word; locking raises
 * the caller's priority to it, which glibc refuses (EINVAL) for a
 * SCHED_OTHER thread, and does for a SCHED_FIFO one. --- */
static void *pp_fifo(void *p)
{
	pthread_mutex_t *m = p;
	int ceiling = sched_get_priority_min(SCHED_FIFO), got = -1, old = -1;
	for (int i = 0; i < 100; i++) {
		CHECK_RC(pthread_mutex_lock(m), 0);
		if (i == 0) {
			CHECK_RC(pthread_mutex_trylock(m), EBUSY);
			CHECK_RC(probe(m), EBUSY);
		}
		CHECK_RC(pthread_mutex_unlock(m), 0);
	}
	CHECK_RC(pthread_mutex_trylock(m), 0);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	CHECK_RC(pthread_mutex_getprioceiling(m, &got), 0);
	CHECK_EQ(got, ceiling);
	CHECK_RC(pthread_mutex_setprioceiling(m, ceiling + 1, &old), 0);
	CHECK_EQ(old, ceiling);
	CHECK_RC(pthread_mutex_getprioceiling(m, &got), 0);
	CHECK_EQ(got, ceiling + 1);
	CHECK_RC(pthread_mutex_lock(m), 0);
	CHECK_RC(pthread_mutex_unlock(m), 0);
	return NULL;
}
static void pp(void)
{
	int ceiling = sched_get_priority_min(SCHED_FIFO), got = -1;
	pthread_mutex_t m;
	init_attr(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PRIO_PROTECT);
	CHECK_RC(pthread_mutex_getprioceiling(&m, &got), 0);
	CHECK_EQ(got, ceiling);
	CHECK_RC(pthread_mutex_lock(&m), EINVAL); /* main is SCHED_OTHER */
	CHECK_RC(probe(&m), EINVAL);

	pthread_attr_t a;
	struct sched_param sp = {.sched_priority = ceiling};
	CHECK_RC(pthread_attr_init(&a), 0);
	CHECK_RC(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED), 0);
	CHECK_RC(pthread_attr_setschedpolicy(&a, SCHED_FIFO), 0);
	CHECK_RC(pthread_attr_setschedparam(&a, &sp), 0);
	pthread_t t;
	int rc = pthread_create(&t, &a, pp_fifo, &m);
	if (rc == EPERM) {
		printf("pp: SCHED_FIFO not permitted here; SCHED_FIFO part not run\n");
	} else {
		CHECK_RC(rc, 0);
		join(t);
	}
	CHECK_RC(pthread_mutex_destroy(&m), 0);
	/* A mutex that is not priority-protect has no ceiling. */
	pthread_mutex_t n;
	CHECK_RC(pthread_mutex_init(&n, NULL), 0);
	CHECK_RC(pthread_mutex_getprioceiling(&n, &got), EINVAL);
}

/* --- process-shared condvar and mutex across fork --- */
static void init_shared_cond(pthread_cond_t *c, clockid_t clock)
{
	pthread_condattr_t a;
	CHECK_RC(pthread_condattr_init(&a), 0);
	CHECK_RC(pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	CHECK_RC(pthread_condattr_setclock(&a, clock), 0);
	CHECK_RC(pthread_cond_init(c, &a), 0);
	CHECK_RC(pthread_condattr_destroy(&a), 0);
}
/* The waiter waits once; the other side signals once it sees it waiting. */
static void wait_once(struct shared *s)
{
	CHECK_RC(pthread_mutex_lock(&s->m), 0);
	s->announced++;
	CHECK_RC(pthread_cond_wait(&s->c, &s->m), 0);
	CHECK_RC(pthread_mutex_lock(&s->m), EDEADLK); /* held again */
	CHECK_RC(pthread_mutex_unlock(&s->m), 0);
}
static void signal_when_waiting(struct shared *s, int n, int broadcast)
{
	for (;;) {
		CHECK_RC(pthread_mutex_lock(&s->m), 0);
		if (s->announced == n) {
			if (broadcast)
				CHECK_RC(pthread_cond_broadcast(&s->c), 0);
			else
				CHECK_RC(pthread_cond_signal(&s->c), 0);
			CHECK_RC(pthread_mutex_unlock(&s->m), 0);
			return;
		}
		CHECK_RC(pthread_mutex_unlock(&s->m), 0);
		sched_yield();
	}
}
static void pshared_cond(void)
{
	struct shared *s = shared_mem(sizeof *s);
	init_attr(&s->m, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PRIO_NONE);
	init_shared_cond(&s->c, CLOCK_MONOTONIC);
	for (int r = 0; r < 10; r++) {
		/* Parent waits, child signals. */
		s->announced = 0;
		fflush(NULL);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			signal_when_waiting(s, 1, r % 2);
			_exit(0);
		}
		wait_once(s);
		wait_child(pid);
		/* Two children wait, the parent broadcasts. */
		s->announced = 0;
		pid_t kids[2];
		for (int k = 0; k < 2; k++) {
			kids[k] = fork();
			CHECK(kids[k] >= 0);
			if (kids[k] == 0) {
				wait_once(s);
				_exit(0);
			}
		}
		signal_when_waiting(s, 2, 1);
		for (int k = 0; k < 2; k++)
			wait_child(kids[k]);
	}
	/* Timed waits on the shared condvar's clock. */
	CHECK_RC(pthread_mutex_lock(&s->m), 0);
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, 3 * MS);
	CHECK_RC(pthread_cond_timedwait(&s->c, &s->m, &dl), ETIMEDOUT);
	CHECK_REACHED(CLOCK_MONOTONIC, dl);
	CHECK_RC(pthread_mutex_lock(&s->m), EDEADLK);
	dl = deadline_in(CLOCK_REALTIME, 3 * MS);
	CHECK_RC(pthread_cond_clockwait(&s->c, &s->m, CLOCK_REALTIME, &dl), ETIMEDOUT);
	CHECK_REACHED(CLOCK_REALTIME, dl);
	CHECK_RC(pthread_mutex_unlock(&s->m), 0);
}

/* --- a process-private condvar with passthrough mutexes --- */
struct cv_arg {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	int *flag;
};
static void *cv_signaller(void *p)
{
	struct cv_arg *a = p;
	CHECK_RC(pthread_mutex_lock(a->m), 0);
	*a->flag = 1;
	CHECK_RC(pthread_cond_signal(a->c), 0);
	CHECK_RC(pthread_mutex_unlock(a->m), 0);
	return NULL;
}
static void private_cond(void)
{
	pthread_mutex_t ms[3];
	init_attr(&ms[0], PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PRIO_NONE);
	init_attr(&ms[1], PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PRIO_INHERIT);
	init_attr(&ms[2], PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PRIO_NONE);
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	for (int i = 0; i < 3; i++) {
		for (int r = 0; r < 20; r++) {
			int flag = 0;
			struct cv_arg a = {&ms[i], &c, &flag};
			CHECK_RC(pthread_mutex_lock(&ms[i]), 0);
			pthread_t t = spawn(cv_signaller, &a);
			while (!flag)
				CHECK_RC(pthread_cond_wait(&c, &ms[i]), 0);
			CHECK_RC(pthread_mutex_lock(&ms[i]), EDEADLK);
			struct timespec dl = deadline_in(CLOCK_REALTIME, 1 * MS);
			CHECK_RC(pthread_cond_timedwait(&c, &ms[i], &dl), ETIMEDOUT);
			CHECK_RC(pthread_mutex_lock(&ms[i]), EDEADLK);
			CHECK_RC(pthread_mutex_unlock(&ms[i]), 0);
			join(t);
		}
	}
}

static const struct test_case cases[] = {
    {"robust", robust}, {"robust-process", robust_process}, {"pshared", pshared},	    {"pi", pi},
    {"pp", pp},		{"pshared-cond", pshared_cond},	    {"private-cond", private_cond}, {0, 0},
};

int main(int argc, char **argv)
{
	return run_case(cases, argc, argv);
}
