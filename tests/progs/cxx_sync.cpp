// cxx_sync CASE... - the C++ standard library's mutexes and condition variable
// on top of pthreads: std::mutex, std::recursive_mutex, std::timed_mutex
// (try_lock_for / try_lock_until on steady_clock and system_clock, which
// libstdc++ maps to pthread_mutex_clocklock and pthread_mutex_timedlock),
// std::condition_variable (wait / notify, wait_for and wait_until on
// steady_clock and system_clock: pthread_cond_clockwait and
// pthread_cond_timedwait), and pthread_cancel of a thread blocked in
// condition_variable::wait (the forced unwind runs destructors with the mutex
// held). Must pass natively, against glibc and libstdc++.
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#define CHECK(c)                                                                                             \
	do {                                                                                                 \
		if (!(c)) {                                                                                  \
			std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);           \
			std::exit(1);                                                                        \
		}                                                                                            \
	} while (0)

using namespace std::chrono;
using namespace std::chrono_literals;

// Is m held by someone? Asked from another thread, which gives it back.
template <class M> static bool busy(M &m)
{
	bool got = false;
	std::thread([&] {
		got = m.try_lock();
		if (got)
			m.unlock();
	}).join();
	return !got;
}

// Runs f in a thread that holds m from before f starts until f returns.
template <class M> static void while_held(M &m, const std::function<void()> &f)
{
	std::atomic<int> state{0};
	std::thread h([&] {
		m.lock();
		state = 1;
		while (state != 2)
			std::this_thread::yield();
		m.unlock();
	});
	while (state != 1)
		std::this_thread::yield();
	f();
	state = 2;
	h.join();
}

static void mutex_exclusion()
{
	std::mutex m;
	long counter = 0;
	std::vector<std::thread> t;
	for (int i = 0; i < 4; i++)
		t.emplace_back([&] {
			for (int k = 0; k < 2000; k++) {
				std::lock_guard<std::mutex> g(m);
				long v = counter;
				std::atomic_signal_fence(std::memory_order_seq_cst);
				counter = v + 1;
			}
		});
	for (auto &x : t)
		x.join();
	CHECK(counter == 8000);
	CHECK(m.try_lock());
	CHECK(busy(m));
	CHECK(!m.try_lock());
	m.unlock();
	CHECK(!busy(m));
}

static void recursive_mutex()
{
	std::recursive_mutex m;
	m.lock();
	m.lock();
	CHECK(m.try_lock());
	m.unlock();
	m.unlock();
	CHECK(busy(m));
	m.unlock();
	CHECK(!busy(m));
}

static void timed_mutex()
{
	std::timed_mutex m;
	CHECK(m.try_lock_for(10ms)); // free
	CHECK(busy(m));
	m.unlock();
	while_held(m, [&] {
		auto t0 = steady_clock::now();
		CHECK(!m.try_lock_for(5ms));
		CHECK(steady_clock::now() - t0 >= 5ms);
		auto sdl = steady_clock::now() + 5ms;
		CHECK(!m.try_lock_until(sdl));
		CHECK(steady_clock::now() >= sdl);
		auto ydl = system_clock::now() + 5ms;
		CHECK(!m.try_lock_until(ydl));
		CHECK(system_clock::now() >= ydl);
		CHECK(!m.try_lock_until(steady_clock::now() - 1s)); // already past
		CHECK(!m.try_lock());
	});
	CHECK(!busy(m));
	// Released while a try_lock_for with a long timeout waits: it succeeds.
	for (int k = 0; k < 2; k++) {
		std::atomic<int> started{0};
		m.lock();
		std::thread t([&] {
			started = 1;
			bool ok = k ? m.try_lock_until(system_clock::now() + 1h) : m.try_lock_for(1h);
			CHECK(ok);
			m.unlock();
		});
		while (!started)
			std::this_thread::yield();
		for (int y = 0; y < 20; y++)
			std::this_thread::yield();
		m.unlock();
		t.join();
	}

	std::recursive_timed_mutex r;
	CHECK(r.try_lock_for(1ms));
	CHECK(r.try_lock_for(1ms)); // the owner adds a level
	CHECK(r.try_lock_until(steady_clock::now() - 1s));
	r.unlock();
	r.unlock();
	CHECK(busy(r));
	r.unlock();
	CHECK(!busy(r));
}

static void condvar_notify()
{
	std::mutex m;
	std::condition_variable cv;
	int turn = 0;
	std::thread t([&] {
		std::unique_lock<std::mutex> lk(m);
		for (int i = 0; i < 200; i++) {
			cv.wait(lk, [&] { return turn == 1; });
			CHECK(lk.owns_lock());
			turn = 0;
			cv.notify_one();
		}
	});
	{
		std::unique_lock<std::mutex> lk(m);
		for (int i = 0; i < 200; i++) {
			turn = 1;
			cv.notify_one();
			cv.wait(lk, [&] { return turn == 0; });
		}
	}
	t.join();

	// notify_all wakes every waiter.
	int waiting = 0, go = 0, woken = 0;
	std::vector<std::thread> w;
	for (int i = 0; i < 6; i++)
		w.emplace_back([&] {
			std::unique_lock<std::mutex> lk(m);
			waiting++;
			cv.wait(lk, [&] { return go; });
			woken++;
		});
	for (;;) {
		std::unique_lock<std::mutex> lk(m);
		if (waiting == 6) {
			go = 1;
			cv.notify_all();
			break;
		}
		lk.unlock();
		std::this_thread::yield();
	}
	for (auto &x : w)
		x.join();
	CHECK(woken == 6);
}

static void condvar_timeouts()
{
	std::mutex m;
	std::condition_variable cv;
	std::unique_lock<std::mutex> lk(m);
	auto t0 = steady_clock::now();
	CHECK(cv.wait_for(lk, 5ms) == std::cv_status::timeout);
	CHECK(steady_clock::now() - t0 >= 5ms);
	CHECK(lk.owns_lock() && busy(m));
	auto sdl = steady_clock::now() + 5ms;
	CHECK(cv.wait_until(lk, sdl) == std::cv_status::timeout);
	CHECK(steady_clock::now() >= sdl);
	CHECK(busy(m));
	auto ydl = system_clock::now() + 5ms;
	CHECK(cv.wait_until(lk, ydl) == std::cv_status::timeout);
	CHECK(system_clock::now() >= ydl);
	CHECK(busy(m));
	CHECK(!cv.wait_for(lk, 3ms, [] { return false; }));
	CHECK(busy(m));
	CHECK(!cv.wait_until(lk, system_clock::now() + 3ms, [] { return false; }));
	CHECK(busy(m));
	lk.unlock();
	CHECK(!busy(m));

	// Notified before the deadline: no_timeout.
	for (int k = 0; k < 2; k++) {
		int waiting = 0, flag = 0;
		std::thread t([&] {
			std::unique_lock<std::mutex> l(m);
			waiting = 1;
			bool ok = k ? cv.wait_until(l, system_clock::now() + 1h, [&] { return flag; })
				    : cv.wait_for(l, 1h, [&] { return flag; });
			CHECK(ok);
		});
		for (;;) {
			std::unique_lock<std::mutex> l(m);
			if (waiting) {
				flag = 1;
				cv.notify_one();
				break;
			}
			l.unlock();
			std::this_thread::yield();
		}
		t.join();
	}
}

// pthread_cancel of a thread blocked in condition_variable::wait: the forced
// unwind runs with the mutex re-acquired, and unique_lock's destructor
// releases it.
static void cancel_wait()
{
	std::mutex m;
	std::condition_variable cv;
	std::atomic<int> saw_busy{-1};
	int waiting = 0;
	pthread_t th;
	std::thread t([&] {
		th = pthread_self();
		std::unique_lock<std::mutex> lk(m);
		waiting = 1;
		try {
			cv.wait(lk); // woken only by the cancellation
		} catch (abi::__forced_unwind &) {
			saw_busy = lk.owns_lock() && busy(m);
			throw;
		}
		std::fprintf(stderr, "wait returned without being cancelled\n");
		std::exit(1);
	});
	for (;;) {
		std::unique_lock<std::mutex> lk(m);
		if (waiting) {
			pthread_cancel(th);
			break;
		}
		lk.unlock();
		std::this_thread::yield();
	}
	t.join();
	CHECK(saw_busy == 1);
	CHECK(!busy(m));
}

int main(int argc, char **argv)
{
	std::map<std::string, void (*)()> cases = {
	    {"mutex", mutex_exclusion},
	    {"recursive-mutex", recursive_mutex},
	    {"timed-mutex", timed_mutex},
	    {"condvar-notify", condvar_notify},
	    {"condvar-timeouts", condvar_timeouts},
	    {"cancel-wait", cancel_wait},
	};
	bool known = argc >= 2;
	for (int i = 1; i < argc; i++)
		known = known && cases.count(argv[i]);
	if (!known) {
		std::fprintf(stderr, "usage: %s CASE\ncases:", argv[0]);
		for (auto &c : cases)
			std::fprintf(stderr, " %s", c.first.c_str());
		std::fprintf(stderr, "\n");
		return 2;
	}
	// each case named, in order, in this one process (as check.h's run_case)
	for (int i = 1; i < argc; i++)
		cases[argv[i]]();
	return 0;
}
