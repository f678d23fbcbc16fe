#!/usr/bin/env bats
# A NORMAL mutex unlocked by a thread other than the one that locked it:
# glibc tolerates it and programs use mutexes as binary semaphores this way
# (issue 2, item 4). Every algorithm, under park and yield (see
# both_policies); the hand-over loops are sized (helpers.bash, check.h:
# sized()): 500 turns of the semaphores and 100 laps of the chain (400
# hand-overs), a tenth under yield where the yield path is wait.c's.
load helpers
TEST_TIMEOUT=20
P="$PROGS/cross_unlock"

# Every algorithm under park; under yield, where the waiting is wait.c's
# for most, those with a waiting path of their own (helpers.bash,
# TEST_POLICY_OWN).
both_policies() {
  each_algo "" -- "$@" && TEST_POLICY_OWN=1 each_algo "" yield -- "$@" || return 1
}

@test "glibc itself passes every cross_unlock case (the specification)" {
  # every case in turn in one process, as the algorithms run them
  # shellcheck disable=SC2046
  run timeout 20 "$P" $("$P" 2>&1 | sed -n 's/^cases://p')
  [ "$status" -eq 0 ] || { echo "native: $output"; return 1; }
}

# Every case in one process per algorithm and policy (run_case runs them
# in turn; a failure names its case and line): each has mutexes and
# threads of its own.
@test "normal, default and adaptive mutexes unlocked by another thread, the locker alive or exited; two mutexes as semaphores: strictly alternating turns, every unlock by a non-owner; a baton passed round four threads through mutexes locked by one and unlocked by the next" {
  both_policies "$P" simple semaphore chain
}
