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
 *       the main thread keeps making new mutexes, so that the pool looks
 *       often and finds idle ones: every op takes its lock by lock,
 *       trylock or timedlock (a far deadline), sometimes a second lock
 *       too, and releases them in the order taken (not the reverse); each
 *       lock guards a counter incremented by a read, a yield and a write.
 *       The counters must add up. Prints "idle_locks: busy ok".
 *
 * A failed check: one line on stderr, exit 1; bad usage: exit 2. Must pass
 * natively, against glibc.
 */
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

static int forgotten(int argc, char **argv)
{
	long rounds = arg(argc, argv, 2, 100), per = arg(argc, argv, 3, 1000), base = 0;
	for (long r = 0; r < rounds; r++) {
		if (r == rounds / 4)
			base = rss_kb();
		pthread_mutex_t *m = calloc((size_t)per, sizeof(*m)); /* kept for ever */
		if (!m) {
			fprintf(stderr, "idle_locks: out of memory\n");
			return 1;
		}
		for (long i = 0; i < per; i++) {
			CHECK_RC(pthread_mutex_lock(&m[i]), 0);
			CHECK_RC(pthread_mutex_unlock(&m[i]), 0);
		}
	}
	printf("idle_locks: forgotten=%ld rss_growth_kb=%ld\n", rounds * per, rss_kb() - base);
	return 0;
}

struct slot {
	pthread_mutex_t m;
	long count;
};
static struct slot *slots;
static long nlocks, ops;

static void take(struct slot *s, unsigned how)
{
	if (how == 0) {
		CHECK_RC(pthread_mutex_lock(&s->m), 0);
	} else if (how == 1) {
		while (pthread_mutex_trylock(&s->m) != 0)
			sched_yield();
	} else {
		struct timespec far;
		clock_gettime(CLOCK_REALTIME, &far);
		far.tv_sec += 3600;
		CHECK_RC(pthread_mutex_timedlock(&s->m, &far), 0);
	}
}

static void bump(struct slot *s)
{
	long c = s->count;
	sched_yield();
	s->count = c + 1;
}

static void *worker(void *p)
{
	unsigned seed = (unsigned)(uintptr_t)p * 2654435761u + 1;
	for (long i = 0; i < ops; i++) {
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
		take(&slots[a], (r >> 4) % 3);
		if (b >= 0)
			take(&slots[b], (r >> 12) % 3);
		bump(&slots[a]);
		if (b >= 0)
			bump(&slots[b]);
		CHECK_RC(pthread_mutex_unlock(&slots[a].m), 0); /* not the reverse order */
		if (b >= 0)
			CHECK_RC(pthread_mutex_unlock(&slots[b].m), 0);
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
	for (long i = 0; i < nlocks; i++)
		CHECK_RC(pthread_mutex_init(&slots[i].m, NULL), 0);
	for (long i = 0; i < threads; i++)
		CHECK_RC(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)), 0);
	/* the churn: new mutexes, used once and forgotten, until the workers
	 * are done (joined one by one, trying between rounds) */
	long made = 0, joined = 0;
	while (joined < threads) {
		pthread_mutex_t *m = calloc(256, sizeof(*m));
		if (!m) {
			fprintf(stderr, "idle_locks: out of memory\n");
			return 1;
		}
		for (int i = 0; i < 256; i++) {
			CHECK_RC(pthread_mutex_lock(&m[i]), 0);
			CHECK_RC(pthread_mutex_unlock(&m[i]), 0);
		}
		made += 256;
		while (joined < threads && pthread_tryjoin_np(t[joined], NULL) == 0)
			joined++;
		if (made > 4000000) /* a hang detector's job, not ours: just stop making */
			while (joined < threads)
				CHECK_RC(pthread_join(t[joined++], NULL), 0);
	}
	long sum = 0, expect = 0;
	/* the expected count: rerun the workers' choices */
	for (long w = 1; w <= threads; w++) {
		unsigned seed = (unsigned)w * 2654435761u + 1;
		for (long i = 0; i < ops; i++) {
			unsigned r = rand_r(&seed);
			long a = (r & 3) ? r % 16 : (long)((unsigned)rand_r(&seed) % nlocks);
			long b = (r >> 8) % 8 == 0 ? (long)((unsigned)rand_r(&seed) % nlocks) : -1;
			expect += 1 + (b >= 0 && b != a);
		}
	}
	for (long i = 0; i < nlocks; i++)
		sum += slots[i].count;
	CHECK(sum == expect);
	for (long i = 0; i < nlocks; i++)
		CHECK_RC(pthread_mutex_destroy(&slots[i].m), 0);
	printf("idle_locks: busy ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "forgotten"))
		return forgotten(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "busy"))
		return busy(argc, argv);
	fprintf(stderr, "usage: idle_locks forgotten [ROUNDS [PER_ROUND]] | busy [THREADS [OPS [LOCKS]]]\n");
	return 2;
}
