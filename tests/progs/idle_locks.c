/*
 * idle_locks CASE [N...] - mutexes that stay alive but idle, and the pool
 * that takes their out-of-line state back while their words still hold it
 * (issue 30; locks/common/pool.h, "Idle locks").
 *
 *   forgotten [ROUNDS [PER_ROUND]]  (default 100 x 1,000) each round makes
 *       PER_ROUND mutexes in memory it keeps for ever, locks and unlocks
 *       each once, and never touches them again. To the pool such a mutex
 *       looks exactly like one whose memory the program freed and nobody
 *       wrote since (a free heap keeps such words). Prints
 *       "idle_locks: forgotten=N rss_growth_kb=G", G the growth of the
 *       resident set from the end of the first quarter of the rounds to the
 *       end: the program's own arrays (the same under glibc), plus whatever
 *       state a lock keeps while it is idle.
 *   busy [THREADS [OPS [LOCKS]]]  (default 4 x 20,000 x 4,096) mutual
 *       exclusion on LOCKS live mutexes, most of them rarely used (an op
 *       picks one of the first 16 three times in four, else any), while
 *       each worker makes 64 new mutexes every 8 ops (used once, never
 *       again; half of the time while it holds a lock) and the main thread
 *       makes more meanwhile (at most 16 per op in all), so that the pool
 *       looks often and finds idle ones: every op takes its lock by lock,
 *       trylock or timedlock (a far deadline), sometimes a second lock
 *       too, and releases them in the order taken (not the reverse); each
 *       lock guards a counter incremented by a read, a yield and a write.
 *       The counters must add up. Prints "idle_locks: busy ok".
 *   forgotten-rw [ROUNDS [PER_ROUND]], busy-rw [THREADS [OPS [LOCKS]]]
 *       the same with rwlocks: each forgotten rwlock is read-locked and
 *       write-locked once; a busy op takes a write lock (bumps the counter,
 *       a flag raised meanwhile) or, one op in two, a read lock (by
 *       rdlock, tryrdlock or timedrdlock; the flag must be down).
 *
 * A failed check: one line on stderr, exit 1; bad usage: exit 2. Must pass
 * natively, against glibc.
 */
#include <stdbool.h>

#include "check.h"

static long rss_kb(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%ld %ld", &pages, &rss) != 2) {
		fprintf(stderr, "idle_locks: cannot read /proc/self/statm\n");
		exit(1);
	}
	fclose(f);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static long arg(int argc, char **argv, int i, long dflt)
{
	if (argc <= i)
		return dflt;
	char *end;
	long v = strtol(argv[i], &end, 10);
	if (*end || v <= 0) {
		fprintf(stderr, "idle_locks: not a positive number: %s\n", argv[i]);
		exit(2);
	}
	return v;
}

static int forgotten(int argc, char **argv, bool rw)
{
	long rounds = arg(argc, argv, 2, 100), per = arg(argc, argv, 3, 1000), base = 0;
	for (long r = 0; r < rounds; r++) {
		if (r == rounds / 4)
			base = rss_kb();
		/* kept for ever */
		void *mem = calloc((size_t)per, rw ? sizeof(pthread_rwlock_t) : sizeof(pthread_mutex_t));
		if (!mem) {
			fprintf(stderr, "idle_locks: out of memory\n");
			return 1;
		}
		for (long i = 0; i < per; i++) {
			if (rw) {
				pthread_rwlock_t *l = (pthread_rwlock_t *)mem + i;
				CHECK_RC(pthread_rwlock_rdlock(l), 0);
				CHECK_RC(pthread_rwlock_unlock(l), 0);
				CHECK_RC(pthread_rwlock_wrlock(l), 0);
				CHECK_RC(pthread_rwlock_unlock(l), 0);
			} else {
				pthread_mutex_t *m = (pthread_mutex_t *)mem + i;
				CHECK_RC(pthread_mutex_lock(m), 0);
				CHECK_RC(pthread_mutex_unlock(m), 0);
			}
		}
	}
	printf("idle_locks: forgotten%s=%ld rss_growth_kb=%ld\n", rw ? "-rw" : "", rounds * per,
	       rss_kb() - base);
	return 0;
}

struct slot {
	pthread_mutex_t m;
	pthread_rwlock_t rw;
	long count;
	atomic_int writing;
};
static bool use_rw;
static struct slot *slots;
static long nlocks, ops;

/* A deadline an hour away: the timed calls' path, never their timeout. */
static struct timespec far_deadline(void)
{
	struct timespec far;
	clock_gettime(CLOCK_REALTIME, &far);
	far.tv_sec += 3600;
	return far;
}

static void take(struct slot *s, unsigned how)
{
	struct timespec far = far_deadline();
	if (use_rw) {
		CHECK_RC(how == 2 ? pthread_rwlock_timedwrlock(&s->rw, &far) : pthread_rwlock_wrlock(&s->rw),
			 0);
		CHECK(atomic_exchange(&s->writing, 1) == 0);
		return;
	}
	if (how == 0) {
		CHECK_RC(pthread_mutex_lock(&s->m), 0);
	} else if (how == 1) {
		while (pthread_mutex_trylock(&s->m) != 0)
			sched_yield();
	} else {
		CHECK_RC(pthread_mutex_timedlock(&s->m, &far), 0);
	}
}

static void bump(struct slot *s)
{
	long c = s->count;
	sched_yield();
	s->count = c + 1;
}

static void give(struct slot *s)
{
	if (use_rw) {
		atomic_store(&s->writing, 0);
		CHECK_RC(pthread_rwlock_unlock(&s->rw), 0);
	} else {
		CHECK_RC(pthread_mutex_unlock(&s->m), 0);
	}
}

/* A read of s (rwlocks only): no writer inside meanwhile. */
static void peek(struct slot *s, unsigned how)
{
	if (how == 0) {
		CHECK_RC(pthread_rwlock_rdlock(&s->rw), 0);
	} else if (how == 1) {
		while (pthread_rwlock_tryrdlock(&s->rw) != 0)
			sched_yield();
	} else {
		struct timespec far = far_deadline();
		CHECK_RC(pthread_rwlock_timedrdlock(&s->rw, &far), 0);
	}
	CHECK(atomic_load(&s->writing) == 0);
	sched_yield();
	CHECK(atomic_load(&s->writing) == 0);
	CHECK_RC(pthread_rwlock_unlock(&s->rw), 0);
}

/* n new locks (of the kind under test), each used once and kept, never
 * used again: the pool's blocks run out, so it looks (in this thread)
 * and finds idle blocks, the workers' rarely used locks' among them. */
static void churn(int n)
{
	struct slot *m = calloc((size_t)n, sizeof(*m));
	if (!m) {
		fprintf(stderr, "idle_locks: out of memory\n");
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		if (use_rw) {
			CHECK_RC(pthread_rwlock_wrlock(&m[i].rw), 0);
			CHECK_RC(pthread_rwlock_unlock(&m[i].rw), 0);
		} else {
			CHECK_RC(pthread_mutex_lock(&m[i].m), 0);
			CHECK_RC(pthread_mutex_unlock(&m[i].m), 0);
		}
	}
}

static void *worker(void *p)
{
	unsigned seed = (unsigned)(uintptr_t)p * 2654435761u + 1;
	for (long i = 0; i < ops; i++) {
		if (i % 16 == 0)
			churn(64); /* holding nothing */
		unsigned r = rand_r(&seed);
		long a = (r & 3) ? r % 16 : (long)((unsigned)rand_r(&seed) % nlocks);
		long b = (r >> 8) % 8 == 0 ? (long)((unsigned)rand_r(&seed) % nlocks) : -1;
		if (b == a)
			b = -1;
		if (b >= 0 && b < a) { /* one order for every thread: no deadlock */
			long t = a;
			a = b;
			b = t;
		}
		if (use_rw && (r >> 20) % 2) {
			peek(&slots[a], (r >> 4) % 3);
			continue;
		}
		take(&slots[a], (r >> 4) % 3);
		if (b >= 0)
			take(&slots[b], (r >> 12) % 3);
		bump(&slots[a]);
		if (i % 16 == 8)
			churn(64); /* holding a's block: the look must see it */
		if (b >= 0)
			bump(&slots[b]);
		give(&slots[a]); /* not the reverse order */
		if (b >= 0)
			give(&slots[b]);
	}
	return NULL;
}

static int busy(int argc, char **argv)
{
	long threads = arg(argc, argv, 2, 4);
	ops = arg(argc, argv, 3, 20000);
	nlocks = arg(argc, argv, 4, 4096);
	if (nlocks < 16) {
		fprintf(stderr, "idle_locks: busy needs at least 16 locks\n");
		return 2;
	}
	slots = calloc((size_t)nlocks, sizeof(*slots));
	pthread_t *t = calloc((size_t)threads, sizeof(*t));
	if (!slots || !t) {
		fprintf(stderr, "idle_locks: out of memory\n");
		return 1;
	}
	for (long i = 0; i < nlocks; i++) {
		CHECK_RC(pthread_mutex_init(&slots[i].m, NULL), 0);
		CHECK_RC(pthread_rwlock_init(&slots[i].rw, NULL), 0);
	}
	for (long i = 0; i < threads; i++)
		CHECK_RC(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)), 0);
	/* and the main thread's churn, as long as the workers run but no more
	 * than 16 locks per op in all (so that a run's work is bounded when
	 * the workers crawl beside other work) */
	long made = 0, joined = 0;
	while (joined < threads) {
		if (made < 16 * threads * ops) {
			churn(256);
			made += 256;
		} else {
			CHECK_RC(pthread_join(t[joined], NULL), 0);
			joined++;
		}
		while (joined < threads && pthread_tryjoin_np(t[joined], NULL) == 0)
			joined++;
	}
	long sum = 0, expect = 0;
	/* the expected count: rerun the workers' choices */
	for (long w = 1; w <= threads; w++) {
		unsigned seed = (unsigned)w * 2654435761u + 1;
		for (long i = 0; i < ops; i++) {
			unsigned r = rand_r(&seed);
			long a = (r & 3) ? r % 16 : (long)((unsigned)rand_r(&seed) % nlocks);
			long b = (r >> 8) % 8 == 0 ? (long)((unsigned)rand_r(&seed) % nlocks) : -1;
			if (use_rw && (r >> 20) % 2)
				continue;
			expect += 1 + (b >= 0 && b != a);
		}
	}
	for (long i = 0; i < nlocks; i++)
		sum += slots[i].count;
	CHECK(sum == expect);
	for (long i = 0; i < nlocks; i++) {
		CHECK_RC(pthread_mutex_destroy(&slots[i].m), 0);
		CHECK_RC(pthread_rwlock_destroy(&slots[i].rw), 0);
	}
	printf("idle_locks: busy%s ok\n", use_rw ? "-rw" : "");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "forgotten"))
		return forgotten(argc, argv, false);
	if (argc >= 2 && !strcmp(argv[1], "forgotten-rw"))
		return forgotten(argc, argv, true);
	if (argc >= 2 && (!strcmp(argv[1], "busy") || !strcmp(argv[1], "busy-rw"))) {
		use_rw = argv[1][4] == '-';
		return busy(argc, argv);
	}
	fprintf(
	    stderr,
	    "usage: idle_locks forgotten[-rw] [ROUNDS [PER_ROUND]] | busy[-rw] [THREADS [OPS [LOCKS]]]\n");
	return 2;
}
