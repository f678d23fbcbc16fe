// cxx_names CASE - mutexes made by C++ functions whose symbols are mangled,
// for the names lockswap prints and a FUNCTION rule matches
// (tests/report.bats): store::Cache's constructor makes one, its method
// open() another, the free function make_log() a third (_ZN5store5CacheC2Ev,
// _ZN5store5Cache4openEv, _Z8make_logv: printed store::Cache::Cache,
// store::Cache::open, make_log). Plain C++: must pass natively.
//
//   cxx_names make   makes the three, locks and unlocks each, destroys them
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(c)                                                                                             \
	do {                                                                                                 \
		if (!(c)) {                                                                                  \
			std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);           \
			std::exit(1);                                                                        \
		}                                                                                            \
	} while (0)

#define FRAME __attribute__((noinline, noclone))

namespace store
{
struct Cache {
	pthread_mutex_t entries, files;
	FRAME Cache()
	{
		CHECK(pthread_mutex_init(&entries, nullptr) == 0);
		__asm__ volatile("" ::: "memory");
	}
	FRAME void open()
	{
		CHECK(pthread_mutex_init(&files, nullptr) == 0);
		__asm__ volatile("" ::: "memory");
	}
	~Cache()
	{
		CHECK(pthread_mutex_destroy(&entries) == 0);
		CHECK(pthread_mutex_destroy(&files) == 0);
	}
};
} // namespace store

static pthread_mutex_t log_lock;

FRAME void make_log()
{
	CHECK(pthread_mutex_init(&log_lock, nullptr) == 0);
	__asm__ volatile("" ::: "memory");
}

static void use(pthread_mutex_t *m)
{
	CHECK(pthread_mutex_lock(m) == 0);
	CHECK(pthread_mutex_unlock(m) == 0);
}

int main(int argc, char **argv)
{
	if (argc != 2 || std::strcmp(argv[1], "make") != 0) {
		std::fprintf(stderr, "usage: %s make\n", argv[0]);
		return 2;
	}
	store::Cache *c = new store::Cache();
	c->open();
	make_log();
	use(&c->entries);
	use(&c->files);
	use(&log_lock);
	delete c;
	CHECK(pthread_mutex_destroy(&log_lock) == 0);
	return 0;
}
