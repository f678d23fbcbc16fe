#!/usr/bin/env bats
# A C++ program using the standard mutexes and condition variable works
# under every algorithm (issue 2, item 2): std::mutex, std::recursive_mutex,
# std::timed_mutex (steady_clock and system_clock deadlines),
# std::condition_variable (notify, wait_for / wait_until on both clocks),
# and pthread_cancel of a thread blocked in condition_variable::wait.
load helpers
TEST_TIMEOUT=20
P="$PROGS/cxx_sync"

@test "glibc and libstdc++ themselves pass every cxx_sync case (the specification)" {
  # shellcheck disable=SC2046
  run timeout 60 "$P" $("$P" 2>&1 | sed -n 's/^cases://p')
  assert_success
}

# Every algorithm under park; under yield, where the waiting is wait.c's
# for most, those with a waiting path of their own (helpers.bash,
# TEST_POLICY_OWN). The cases run in sequence in one process per algorithm
# (a failure names the file and line of its check, and so its case).
@test "std::mutex excludes (4 threads x 2000 lock_guard increments), try_lock; std::recursive_mutex: the owner relocks, the last unlock releases; std::timed_mutex: try_lock_for and try_lock_until (steady_clock, system_clock) time out not before the deadline, succeed when released; std::condition_variable: notify_one ping-pong and notify_all, wait_for and wait_until (steady_clock, system_clock) time out holding the lock or return when notified; pthread_cancel of a thread in condition_variable::wait unwinds with the mutex held, then unique_lock releases it (park; the blocking cases under yield where its path is not wait.c's shared one)" {
  local blocking="mutex timed-mutex condvar-notify condvar-timeouts cancel-wait"
  # shellcheck disable=SC2086
  each_algo "" -- "$P" $blocking recursive-mutex || return 1
  # shellcheck disable=SC2086
  TEST_POLICY_OWN=1 each_algo "" yield -- "$P" $blocking
}

@test "cxx_sync runs every case it is given, in order; bad usage lists the cases and exits 2" {
  run "$P" recursive-mutex nosuch
  [ "$status" -eq 2 ] && [[ "$output" == *"cases: cancel-wait condvar-notify condvar-timeouts mutex recursive-mutex timed-mutex"* ]] || { echo "$status: $output"; return 1; }
  # under a lock that loses condvar wake-ups the mutex cases pass and the
  # notify case does not: a list fails by its last case too
  local broken=(env BROKEN_DOUBLE=condlost LD_PRELOAD="$B/doubles-core/broken.so")
  run timeout 20 "${broken[@]}" "$P" recursive-mutex mutex
  [ "$status" -eq 0 ] || { echo "$status: $output"; return 1; }
  run timeout 10 "${broken[@]}" "$P" recursive-mutex mutex condvar-notify
  [ "$status" -ne 0 ] || { echo "$status: $output"; return 1; }
}
