#!/usr/bin/env bats
# Deadlines as far as a program may write them (issue 32, item 2): a timed
# call whose timespec lies centuries away, or past what 64 bits of
# nanoseconds hold (tv_sec 18446744074 up to LONG_MAX, 1LL << 62), waits
# for the lock as glibc does, instead of timing out at once; and the clock
# variants' checks with a NULL timespec are glibc's.
# tests/progs/far_deadlines.c is the specification (it passes natively);
# tests/unit/deadline.c checks the conversion every timed call goes
# through, ls_deadline_ns (locks/common/wait.h).
load helpers
TEST_TIMEOUT=60
P="$PROGS/far_deadlines"

@test "glibc itself passes every far_deadlines case (the specification)" {
  native_passes "$P"
}

@test "ls_deadline_ns: far times never come, the last representable nanosecond is exact, past ones are ETIMEDOUT, a bad tv_nsec EINVAL, on both clocks" {
  run timeout -k 5 "$(hang_timeout)" "$UNIT/deadline"
  assert_success
  assert_output "deadline: OK"
}

@test "far deadlines and NULL timespecs under every mutex algorithm: timedlock and clocklock wait for the lock, a condvar's timed wait for its signal" {
  each_algo lock -- "$P" mutex mutex-null cond
}

@test "far deadlines and NULL timespecs under every rwlock algorithm and wrapper, both policies: every timed and clock read and write waits for the lock; a NULL timespec with a bad clock is no error" {
  each_rwalgo lock -- "$P" rwlock rwlock-null || return 1
  LOCKSWAP_RWPOLICY=algorithm each_rwalgo lock -- "$P" rwlock rwlock-null
}
