/*
 * flame - a small server-shaped program whose contention has known stacks,
 * for the flame graphs and the symbols of `lockswap report`
 * (tests/report.bats) and the picture in README.
 *
 * Three mutexes, each created by a function of its own (cache_init,
 * log_open, stats_init), taken on four paths:
 *
 *	worker -> handle_request -> cache_lookup -> cache
 *	worker -> handle_request -> cache_insert -> cache
 *	worker -> handle_request -> log_line     -> log
 *	flusher -> stats_flush                   -> stats
 *
 *   flame known   each path waits a known number of times (3, 1, 2, 1):
 *                 the main thread holds the mutex until the thread on that
 *                 path sleeps in its lock call, then lets it through; it
 *                 prints the folded stacks the profile must give, weighted
 *                 by waits, as "path;[creator] COUNT" lines
 *   flame run     four workers (which also flush the stats, one request in
 *                 ten) and a flusher for 0.3 s of real contention, for the
 *                 README's picture
 */
#include "check.h"

static pthread_mutex_t cache, logm, stats;
static volatile unsigned long sink;

/* Calls that must stay calls (no inlining, no tail calls), so that each
 * function is a frame of its own in the stacks. */
#define FRAME __attribute__((noinline, noclone))
#define KEEP() __asm__ volatile("" ::: "memory")

static FRAME void work(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i;
}

static FRAME void cache_init(void)
{
	CHECK_RC(pthread_mutex_init(&cache, NULL), 0);
	KEEP();
}

static FRAME void log_open(void)
{
	CHECK_RC(pthread_mutex_init(&logm, NULL), 0);
	KEEP();
}

static FRAME void stats_init(void)
{
	CHECK_RC(pthread_mutex_init(&stats, NULL), 0);
	KEEP();
}

static FRAME void cache_lookup(void)
{
	CHECK_RC(pthread_mutex_lock(&cache), 0);
	work(1500);
	CHECK_RC(pthread_mutex_unlock(&cache), 0);
	KEEP();
}

static FRAME void cache_insert(void)
{
	CHECK_RC(pthread_mutex_lock(&cache), 0);
	work(6000);
	CHECK_RC(pthread_mutex_unlock(&cache), 0);
	KEEP();
}

static FRAME void log_line(void)
{
	CHECK_RC(pthread_mutex_lock(&logm), 0);
	work(4000);
	CHECK_RC(pthread_mutex_unlock(&logm), 0);
	KEEP();
}

static FRAME void stats_flush(void)
{
	CHECK_RC(pthread_mutex_lock(&stats), 0);
	work(500);
	CHECK_RC(pthread_mutex_unlock(&stats), 0);
	KEEP();
}

enum route { LOOKUP, INSERT, LOG };

static FRAME void handle_request(enum route r)
{
	if (r == LOOKUP)
		cache_lookup();
	else if (r == INSERT)
		cache_insert();
	else
		log_line();
	KEEP();
}

/* ---- known: each path waits a known number of times ---- */

struct one {
	enum route r;
	atomic_int tid;
};

static FRAME void *worker(void *p)
{
	struct one *o = p;
	atomic_store(&o->tid, (int)gettid());
	handle_request(o->r);
	KEEP();
	return NULL;
}

static FRAME void *flusher(void *p)
{
	struct one *o = p;
	atomic_store(&o->tid, (int)gettid());
	stats_flush();
	KEEP();
	return NULL;
}

/* Holds m while a thread runs fn(route) into it, until it sleeps there. */
static void wait_once(pthread_mutex_t *m, void *(*fn)(void *), enum route r)
{
	struct one o = {.r = r};
	CHECK_RC(pthread_mutex_lock(m), 0);
	pthread_t t = spawn(fn, &o);
	while (!atomic_load(&o.tid))
		sched_yield();
	if (!await_sleeping(atomic_load(&o.tid), 60000))
		FAIL("the waiter never slept in its lock call");
	CHECK_RC(pthread_mutex_unlock(m), 0);
	join(t);
}

static void known(void)
{
	cache_init();
	log_open();
	stats_init();
	for (int i = 0; i < 3; i++)
		wait_once(&cache, worker, LOOKUP);
	wait_once(&cache, worker, INSERT);
	for (int i = 0; i < 2; i++)
		wait_once(&logm, worker, LOG);
	wait_once(&stats, flusher, 0);
	printf("worker;handle_request;cache_lookup;[cache_init] 3\n"
	       "worker;handle_request;cache_insert;[cache_init] 1\n"
	       "worker;handle_request;log_line;[log_open] 2\n"
	       "flusher;stats_flush;[stats_init] 1\n");
}

/* ---- run: real contention ---- */

static atomic_int stop;

static FRAME void *serve(void *p)
{
	unsigned seed = (unsigned)(uintptr_t)p;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		seed = seed * 1103515245u + 12345u;
		unsigned x = (seed >> 16) % 10;
		if (x < 9)
			handle_request(x < 5 ? LOOKUP : x < 7 ? INSERT : LOG);
		else
			stats_flush();
		work(500);
	}
	KEEP();
	return NULL;
}

static FRAME void *flush_loop(void *p)
{
	(void)p;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		stats_flush();
		work(3000);
	}
	KEEP();
	return NULL;
}

static void run(void)
{
	cache_init();
	log_open();
	stats_init();
	pthread_t t[5];
	for (uintptr_t i = 0; i < 4; i++)
		t[i] = spawn(serve, (void *)(i + 1));
	t[4] = spawn(flush_loop, NULL);
	struct timespec nap = {0, 300 * MS};
	nanosleep(&nap, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < 5; i++)
		join(t[i]);
	CHECK_RC(pthread_mutex_destroy(&cache), 0);
	CHECK_RC(pthread_mutex_destroy(&logm), 0);
	CHECK_RC(pthread_mutex_destroy(&stats), 0);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {{"known", known}, {"run", run}, {NULL, NULL}};
	return run_case(cases, argc, argv);
}
