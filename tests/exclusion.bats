#!/usr/bin/env bats
# Mutual exclusion under heavy contention, more threads than cores (8 on this
# 2-core machine), every algorithm and every waiting policy: each thread
# checks it is alone inside and the final counter must be exact (issue 2,
# items 8 and 12). One process per algorithm and policy runs every mode in
# turn, each on a fresh mutex (exclusion MODE:THREADS:ITERS...; a failure
# names its mode). Under park, every algorithm: lock/unlock 8 threads x
# 2000 critical sections (the nolock double, no exclusion at all, fails
# 3 runs in 5 at 8 x 2000, 1 in 5 at 8 x 500, and every time in
# preempted at 8 x 250); the other modes and the shim's paths 8 x 500,
# 4,000 hand-overs among more threads than cores, enough for their
# critical sections to overlap (a rare race in an algorithm's own code is
# the stress validator's to find: tests/stress.bats, several seeds). Runs
# whose holders yield inside (preempted, mixed) make 250 or 500 iterations
# a thread: each of those yields hands the CPU away, and a FIFO lock's
# queue then waits for the holder's return. Under yield
# and spin most algorithms wait through locks/common/wait.c alone, the same
# code under every policy, so those runs are for the algorithms whose own
# code reads the policy and two that wait through wait.c (helpers.bash:
# each_own_wait); under pure spinning a FIFO lock handing over to a
# preempted waiter loses a whole time slice per hand-over, so spin runs
# use 3 threads x 300, still more threads than cores. A path the
# algorithms share is run small (TEST_SHARED_PATH: helpers.bash): a mutex
# kind's bookkeeping and the clock of clocklock are the shim's, and
# LOCKSWAP_SPIN=0 changes only wait.c's budget; trylock never waits, so it
# runs under one policy.
load helpers
TEST_TIMEOUT=30
P="$PROGS/exclusion"

@test "glibc itself passes every exclusion mode (the specification)" {
  run timeout 60 "$P" all:8:500
  [ "$status" -eq 0 ] || { echo "native: $output"; return 1; }
}

@test "the check fails on a lock that does not exclude" {
  run timeout 10 env BROKEN_DOUBLE=nolock LD_PRELOAD="$B/doubles-core/broken.so" "$P" preempted
  assert_failure
  assert_output --partial "critical section"
}

@test "park (the default), every algorithm: lock/unlock; holders preempted inside the critical section (they yield every 8th time); trylock loops; timedlock (deadline never reached); timedlock with deadlines of 0-64 us that do expire (waits abandoned, exclusion kept, 4 x 300); lock, trylock, timedlock and clocklock mixed on one mutex" {
  each_algo "" park -- "$P" normal:8:2000 preempted:8:250 trylock:8:500 timedlock:8:500 \
    timedlock-short:4:300 mixed:8:500
}

# (one process per algorithm, every waiter asleep at once: a kind's
# bookkeeping is the shim's whatever the spinning before a sleep, which is
# wait.c's; lock/unlock with spinning first is the test above's)
@test "park, every algorithm, the shim's paths, with LOCKSWAP_SPIN=0 (every waiter asleep at once): every mutex kind excludes (static initialiser, adaptive, errorcheck, recursive nested twice); clocklock with deadlines that do expire; lock/unlock" {
  TEST_SHARED_PATH=1 each_algo "" park -- env LOCKSWAP_SPIN=0 "$P" static:8:500 adaptive:8:500 \
    errorcheck:8:500 recursive:8:500 clocklock-short:4:300 normal:8:500
}

@test "yield, the algorithms whose own code reads the policy and two of wait.c's: lock/unlock; holders preempted inside; timedlock; deadlines that expire; mixed; LOCKSWAP_SPIN=0" {
  each_own_wait "" yield -- "$P" normal:8:2000 preempted:8:250 timedlock:8:500 timedlock-short:4:300 \
    mixed:8:500 || return 1
  each_own_wait "" yield -- env LOCKSWAP_SPIN=0 "$P" normal:8:500
}

@test "spin, the algorithms whose own code reads the policy and two of wait.c's: lock/unlock (pure spinning, 3 threads on 2 cores)" {
  each_own_wait "" spin -- "$P" normal:3:300
}
