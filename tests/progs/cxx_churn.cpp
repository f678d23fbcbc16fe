// cxx_churn KIND [OBJECTS [WARMUP [THREADS]]] - objects that each hold a C++
// standard lock, made, shared, contended and deleted by several threads in a
// loop, as a server makes one per request or per cache entry. libstdc++ gives
// these locks trivial destructors under glibc (std::mutex and its kin never
// call pthread_mutex_destroy, std::shared_mutex never pthread_rwlock_destroy),
// so the lock's memory is freed without destroy and soon reused for another
// one at the same address (issue 30).
//
// KIND: mutex, timed-mutex, recursive-mutex, shared-mutex,
// shared-timed-mutex, condvar (a std::mutex and a std::condition_variable).
// Each thread makes OBJECTS / THREADS objects (default 2,000,000 in all, 2
// threads). An object is made with two references: its maker puts it in a
// shared slot, taking out the object some thread put there before, and
// uses both (lock, count, unlock, in the kind's ways: try, timed, shared,
// recursive, wait on the condvar); whoever of the two users drops the last
// reference deletes the object, often right after the other one's unlock
// returned. Every object must be used exactly twice, under mutual exclusion.
//
// Output: "cxx_churn: kind=K objects=N rss_growth_kb=G", G the growth of
// the resident set from the end of the first WARMUP objects (default
// 100,000; the threads meet there and main reads /proc/self/statm) to the
// end; exit 0. A check that fails: one line on stderr, exit 1. Bad usage:
// the cases on stderr, exit 2. Must pass natively, against glibc.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#define CHECK(c)                                                                                             \
	do {                                                                                                 \
		if (!(c)) {                                                                                  \
			std::fprintf(stderr, "cxx_churn: %s:%d: check failed: %s\n", __FILE__, __LINE__,     \
				     #c);                                                                    \
			std::exit(1);                                                                        \
		}                                                                                            \
	} while (0)

using namespace std::chrono;

#define SLOTS 8

// One use: enter the lock exclusively, count, leave.
static inline void count(long &n)
{
	long v = n;
	std::atomic_signal_fence(std::memory_order_seq_cst);
	n = v + 1;
}

struct base {
	long n = 0;
	std::atomic<int> refs{2};
};

struct o_mutex : base {
	std::mutex m;
	void use(unsigned i)
	{
		if (i % 4 == 0 && m.try_lock()) {
			count(n);
			m.unlock();
			return;
		}
		std::lock_guard<std::mutex> g(m);
		count(n);
	}
};

struct o_timed : base {
	std::timed_mutex m;
	void use(unsigned i)
	{
		// A short deadline: under contention some attempts time out
		// (a timed-out waiter leaves the lock's queue), then wait.
		if (!(i % 2 ? m.try_lock_for(microseconds(50)) : m.try_lock_until(steady_clock::now())))
			m.lock();
		count(n);
		m.unlock();
	}
};

struct o_recursive : base {
	std::recursive_mutex m;
	void use(unsigned)
	{
		std::lock_guard<std::recursive_mutex> a(m);
		std::lock_guard<std::recursive_mutex> b(m);
		count(n);
	}
};

// Readers count in an atomic beside the writer's count: a writer checks
// that no reader is inside, a reader that no writer is.
struct o_shared : base {
	std::shared_mutex m;
	std::atomic<int> inside{0};
	void use(unsigned i)
	{
		if (i % 3 == 0) {
			m.lock_shared();
			CHECK(inside.fetch_add(2) % 2 == 0);
			inside.fetch_sub(2);
			m.unlock_shared();
		}
		std::lock_guard<std::shared_mutex> g(m);
		CHECK(inside.exchange(1) == 0);
		count(n);
		inside.store(0);
	}
};

struct o_shared_timed : base {
	std::shared_timed_mutex m;
	std::atomic<int> inside{0};
	void use(unsigned i)
	{
		if (i % 3 == 0) {
			if (!m.try_lock_shared_for(microseconds(50)))
				m.lock_shared();
			CHECK(inside.fetch_add(2) % 2 == 0);
			inside.fetch_sub(2);
			m.unlock_shared();
		}
		if (!m.try_lock_for(microseconds(50)))
			m.lock();
		CHECK(inside.exchange(1) == 0);
		count(n);
		inside.store(0);
		m.unlock();
	}
};

// Each use notifies. One in 64 waits with a deadline already past (the
// mutex is released and taken back inside the wait), one in 4096 briefly
// for the other user (timed waits are rare: even an expired one costs a
// timer's slack, 200 us on a loaded machine).
struct o_condvar : base {
	std::mutex m;
	std::condition_variable cv;
	void use(unsigned i)
	{
		std::unique_lock<std::mutex> g(m);
		count(n);
		cv.notify_all();
		if (i % 4096 == 0)
			cv.wait_for(g, microseconds(20), [&] { return n >= 2; });
		else if (i % 64 == 0)
			cv.wait_for(g, microseconds(0));
	}
};

static long objects = 2000000, warmup = 100000;
static int nthreads = 2;
static std::atomic<long> made{0}, deleted{0};
static std::atomic<int> at_warmup{0}, go_on{0};

template <class O> struct run {
	std::atomic<O *> slot[SLOTS] = {};

	void drop(O *o)
	{
		if (o->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
			CHECK(o->n == 2); // read after both users' unlocks
			delete o;
			deleted.fetch_add(1, std::memory_order_relaxed);
		}
	}

	void body(int t)
	{
		long mine = objects / nthreads + (t < objects % nthreads), warm = warmup / nthreads;
		unsigned seed = (unsigned)t * 2654435761u + 1;
		for (long k = 0; k < mine; k++) {
			if (k == warm) { // meet the others, let main read the RSS
				at_warmup.fetch_add(1);
				while (!go_on.load())
					std::this_thread::yield();
			}
			seed = seed * 1103515245u + 12345u;
			unsigned i = seed >> 8;
			O *o = new O;
			made.fetch_add(1, std::memory_order_relaxed);
			O *p = slot[i % SLOTS].exchange(o, std::memory_order_acq_rel);
			o->use(i);
			if (p) {
				p->use(i + 1);
				drop(p);
			}
			drop(o);
		}
		if (mine <= warm)
			at_warmup.fetch_add(1);
	}

	void finish()
	{
		for (auto &s : slot)
			if (O *o = s.exchange(nullptr)) {
				o->use(1);
				drop(o);
			}
	}
};

static long rss_kb()
{
	FILE *f = std::fopen("/proc/self/statm", "r");
	CHECK(f);
	long size = 0, resident = 0;
	CHECK(std::fscanf(f, "%ld %ld", &size, &resident) == 2);
	std::fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

template <class O> static void churn(const char *kind)
{
	static run<O> r;
	std::vector<std::thread> ts;
	for (int t = 0; t < nthreads; t++)
		ts.emplace_back([t] { r.body(t); });
	while (at_warmup.load() < nthreads)
		std::this_thread::yield();
	long before = rss_kb();
	go_on.store(1);
	for (auto &t : ts)
		t.join();
	r.finish();
	long after = rss_kb();
	CHECK(made.load() == objects);
	CHECK(deleted.load() == objects);
	std::printf("cxx_churn: kind=%s objects=%ld rss_growth_kb=%ld\n", kind, objects, after - before);
}

static const char *const kinds[] = {"mutex",	    "timed-mutex",	  "recursive-mutex",
				    "shared-mutex", "shared-timed-mutex", "condvar"};

int main(int argc, char **argv)
{
	int k = -1;
	for (int i = 0; argc > 1 && i < 6; i++)
		if (!std::strcmp(argv[1], kinds[i]))
			k = i;
	if (argc > 2)
		objects = std::atol(argv[2]);
	if (argc > 3)
		warmup = std::atol(argv[3]);
	if (argc > 4)
		nthreads = std::atoi(argv[4]);
	if (k < 0 || objects < 1 || warmup < 0 || warmup >= objects || nthreads < 1 || argc > 5) {
		std::fprintf(stderr, "usage: %s KIND [OBJECTS [WARMUP [THREADS]]]\ncases:", argv[0]);
		for (const char *c : kinds)
			std::fprintf(stderr, " %s", c);
		std::fprintf(stderr, "\n");
		return 2;
	}
	switch (k) {
	case 0:
		churn<o_mutex>(kinds[k]);
		break;
	case 1:
		churn<o_timed>(kinds[k]);
		break;
	case 2:
		churn<o_recursive>(kinds[k]);
		break;
	case 3:
		churn<o_shared>(kinds[k]);
		break;
	case 4:
		churn<o_shared_timed>(kinds[k]);
		break;
	default:
		churn<o_condvar>(kinds[k]);
		break;
	}
	return 0;
}
