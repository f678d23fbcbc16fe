#!/usr/bin/env bats
# Process-shared, robust, priority-inherit and priority-protect mutexes and
# process-shared condition variables go to glibc untouched, under every
# algorithm (issue 2, item 3): they behave, and their words read, exactly as
# glibc's own.
load helpers
TEST_TIMEOUT=20
P="$PROGS/passthrough"

@test "glibc itself passes every passthrough case (the specification)" {
  for c in $("$P" 2>&1 | sed -n 's/^cases://p'); do
    run timeout 20 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
}

@test "robust: the owner thread dies holding it -> EOWNERDEAD from lock, trylock, timedlock; consistent or ENOTRECOVERABLE; the lock word is the owner's tid" {
  each_algo "" -- "$P" robust || return 1
}

@test "robust and process-shared: the owner process dies holding it -> EOWNERDEAD in the parent" {
  each_algo "" -- "$P" robust-process || return 1
}

@test "process-shared in shared memory: parent and child exclude each other (every type); glibc's lock and owner words" {
  each_algo "" -- "$P" pshared || return 1
}

@test "priority inherit: the lock word is the owner's tid; exclusion; errorcheck; robust" {
  each_algo "" -- "$P" pi || return 1
}

@test "priority protect: EINVAL for a SCHED_OTHER caller, locks for a SCHED_FIFO one; the ceiling is kept and can be changed" {
  each_algo "" -- "$P" pp || return 1
}

@test "process-shared condvar across fork: signal and broadcast between processes, timed waits on its clock" {
  each_algo "" -- "$P" pshared-cond || return 1
}

@test "a process-private condvar with robust, priority-inherit and process-shared mutexes (park; yield where its path is not wait.c's shared one)" {
  each_algo "" -- "$P" private-cond || return 1
  each_own_wait "" yield -- "$P" private-cond || return 1
}
