// soak - a cache that keeps making and deleting locks, for hours if asked:
// the soak test of locks that are never destroyed (issue 30; run by
// scripts/sweeps/soak under every algorithm). A plain C++ program: it knows
// nothing of lockswap.
//
//   soak [-t THREADS] [-s SHARDS] [-k KEYS] [-n OPS] [-d SECONDS] [-r ROUNDS]
//
// The cache has SHARDS shards (default 16), each a std::shared_mutex over a
// map from key to entry, and each entry a std::mutex over a counter. In
// rounds, THREADS threads (default 4) each make OPS operations (default
// 20000) drawn from their own seeded generator over KEYS keys (default
// 4096): increment a key's counter (the shard read-locked to find the entry,
// write-locked to make it if it is missing, then the entry's mutex), evict
// a key (its entry leaves the map, its count goes to a retired total, and
// it is deleted when the last thread using it lets go, often right after
// another thread's unlock), or rebuild a shard (a new shard with a new
// std::shared_mutex takes the old one's entries; the old one is deleted
// when its last user lets go). libstdc++ never destroys these locks
// (trivial destructors under glibc): every entry and shard frees its lock's
// memory without pthread_*_destroy, a few thousand per second.
//
// After each round the threads stop, and the live counts plus the retired
// total must equal the increments made, which depend on the seeds alone:
// "round R: increments=I total=I" (the same lines under glibc and under
// every lock). It runs ROUNDS rounds, or (-d) until SECONDS have passed at
// the end of a round. A failed check: one line on stderr, exit 1.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#define CHECK(c)                                                                                             \
	do {                                                                                                 \
		if (!(c)) {                                                                                  \
			std::fprintf(stderr, "soak: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c);     \
			std::exit(1);                                                                        \
		}                                                                                            \
	} while (0)

struct entry {
	std::mutex m;
	long count = 0;
	bool dead = false; // evicted: its count is in the retired total
};

struct shard {
	std::shared_mutex m;
	std::unordered_map<unsigned, std::shared_ptr<entry>> map;
	bool dead = false; // rebuilt: its entries are in its successor
};

static int nthreads = 4, nshards = 16;
static unsigned nkeys = 4096;
static long ops = 20000, rounds = 0, seconds = 0;
static std::vector<std::shared_ptr<shard>> shards;
static std::atomic<long> retired{0}, increments{0};

static std::shared_ptr<shard> current(unsigned s)
{
	return std::atomic_load(&shards[s]);
}

static void increment(unsigned key)
{
	unsigned s = key % (unsigned)nshards;
	for (;;) {
		std::shared_ptr<shard> sh = current(s);
		std::shared_ptr<entry> e;
		{
			std::shared_lock<std::shared_mutex> r(sh->m);
			if (sh->dead)
				continue; // rebuilt meanwhile: the new one
			auto it = sh->map.find(key);
			if (it != sh->map.end())
				e = it->second;
		}
		if (!e) {
			std::unique_lock<std::shared_mutex> w(sh->m);
			if (sh->dead)
				continue;
			auto &slot = sh->map[key];
			if (!slot)
				slot = std::make_shared<entry>();
			e = slot;
		}
		std::lock_guard<std::mutex> g(e->m);
		if (e->dead)
			continue; // evicted meanwhile: count it in a new entry
		e->count++;
		return;
	}
}

static void evict(unsigned key)
{
	unsigned s = key % (unsigned)nshards;
	std::shared_ptr<entry> e;
	for (;;) {
		std::shared_ptr<shard> sh = current(s);
		std::unique_lock<std::shared_mutex> w(sh->m);
		if (sh->dead)
			continue;
		auto it = sh->map.find(key);
		if (it == sh->map.end())
			return;
		e = std::move(it->second);
		sh->map.erase(it);
		break;
	}
	std::lock_guard<std::mutex> g(e->m);
	retired += e->count;
	e->dead = true;
}

static void rebuild(unsigned s)
{
	auto fresh = std::make_shared<shard>();
	for (;;) {
		std::shared_ptr<shard> old = current(s);
		std::unique_lock<std::shared_mutex> w(old->m);
		if (old->dead)
			continue;
		fresh->map = std::move(old->map);
		old->map.clear();
		old->dead = true;
		std::atomic_store(&shards[s], fresh);
		return;
	}
}

static void work(int t, long round)
{
	unsigned long x =
	    (unsigned long)(t + 1) * 0x9e3779b97f4a7c15ul ^ (unsigned long)round * 0xbf58476d1ce4e5b9ul;
	long mine = 0;
	for (long i = 0; i < ops; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; // xorshift64
		unsigned key = (unsigned)(x >> 20) % nkeys, what = (unsigned)(x >> 8) % 100;
		if (what < 75) {
			increment(key);
			mine++;
		} else if (what < 99) {
			evict(key);
		} else {
			rebuild(key % (unsigned)nshards);
		}
	}
	increments += mine;
}

static long total()
{
	long sum = retired;
	for (int s = 0; s < nshards; s++) {
		std::shared_ptr<shard> sh = current((unsigned)s);
		std::shared_lock<std::shared_mutex> r(sh->m);
		for (auto &kv : sh->map) {
			std::lock_guard<std::mutex> g(kv.second->m);
			sum += kv.second->count;
		}
	}
	return sum;
}

int main(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "t:s:k:n:d:r:")) != -1) {
		long v = std::atol(optarg);
		switch (c) {
		case 't':
			nthreads = (int)v;
			break;
		case 's':
			nshards = (int)v;
			break;
		case 'k':
			nkeys = (unsigned)v;
			break;
		case 'n':
			ops = v;
			break;
		case 'd':
			seconds = v;
			break;
		case 'r':
			rounds = v;
			break;
		default:
			std::fprintf(stderr,
				     "usage: soak [-t THREADS] [-s SHARDS] [-k KEYS] [-n OPS] [-d SECONDS] "
				     "[-r ROUNDS]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nshards < 1 || nkeys < 1 || ops < 1 || seconds < 0 || rounds < 0 ||
	    optind < argc || (!seconds && !rounds)) {
		std::fprintf(stderr, "soak: give -d SECONDS or -r ROUNDS (and positive counts)\n");
		return 2;
	}
	for (int s = 0; s < nshards; s++)
		shards.push_back(std::make_shared<shard>());
	auto start = std::chrono::steady_clock::now();
	for (long r = 1;; r++) {
		std::vector<std::thread> ts;
		for (int t = 0; t < nthreads; t++)
			ts.emplace_back(work, t, r);
		for (auto &t : ts)
			t.join();
		long sum = total();
		std::printf("round %ld: increments=%ld total=%ld\n", r, increments.load(), sum);
		std::fflush(stdout);
		CHECK(sum == increments.load());
		if (rounds && r >= rounds)
			break;
		if (seconds && std::chrono::steady_clock::now() - start >= std::chrono::seconds(seconds))
			break;
	}
	return 0;
}
