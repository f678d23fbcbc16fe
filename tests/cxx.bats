#!/usr/bin/env bats
# A C++ program using the standard mutexes and condition variable works
# under every algorithm (issue 2, item 2): std::mutex, std::recursive_mutex,
# std::timed_mutex (steady_clock and system_clock deadlines),
# std::condition_variable (notify, wait_for / wait_until on both clocks),
# and pthread_cancel of a thread blocked in condition_variable::wait.
load helpers
TEST_TIMEOUT=20
P="$PROGS/cxx_sync"

# Every algorithm under park; under yield, where the waiting is wait.c's
# for most, those with a waiting path of their own (helpers.bash,
# TEST_POLICY_OWN).
both_policies() {
  each_algo "" -- "$@" && TEST_POLICY_OWN=1 each_algo "" yield -- "$@" || return 1
}

@test "glibc and libstdc++ themselves pass every cxx_sync case (the specification)" {
  for c in $("$P" 2>&1 | sed -n 's/^cases://p'); do
    run timeout 20 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
}

@test "std::mutex excludes (4 threads x 2000 lock_guard increments); try_lock" {
  both_policies "$P" mutex || return 1
}

@test "std::recursive_mutex: the owner relocks, the last unlock releases" {
  each_algo "" -- "$P" recursive-mutex || return 1
}

@test "std::timed_mutex: try_lock_for and try_lock_until (steady_clock, system_clock) time out not before the deadline, succeed when released" {
  both_policies "$P" timed-mutex || return 1
}

@test "std::condition_variable: notify_one ping-pong and notify_all" {
  both_policies "$P" condvar-notify || return 1
}

@test "std::condition_variable: wait_for and wait_until (steady_clock, system_clock) time out holding the lock, or return when notified" {
  both_policies "$P" condvar-timeouts || return 1
}

@test "pthread_cancel of a thread in condition_variable::wait unwinds with the mutex held, then unique_lock releases it" {
  both_policies "$P" cancel-wait || return 1
}
