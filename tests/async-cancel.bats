#!/usr/bin/env bats
# Threads whose cancel type is asynchronous and the lock calls (issue 9,
# item 3), under every algorithm: a thread blocked in lock, timedlock or
# clocklock is cancelled while it waits (the holder joins it before
# unlocking), a thread cancelled in a self-deadlock on a NORMAL mutex runs
# its cleanup handler, which unlocks; the mutex works afterwards; such
# threads' lock calls exclude, their timed locks time out and their condvar
# waits keep the mutex rules. How: interpose/shim_cancel.c (waits in slices
# between which a pending cancel acts; not FIFO meanwhile).
load helpers
TEST_TIMEOUT=30
P="$PROGS/async_cancel"

@test "glibc itself passes every async_cancel case (the specification)" {
  native_passes "$P"
}

# Every case in one process per algorithm (run_case runs the cases named in
# order, each with its own threads and mutexes; a failure names its case).
# Under yield, where most algorithms wait through wait.c alone, the blocked
# case (the only one whose threads wait for a lock held for long) for
# those whose waiting path is their own (helpers.bash, TEST_POLICY_OWN).
@test "every algorithm: blocked behind another thread's lock (lock for every type; timedlock, clocklock): cancelled in the wait, the mutex works after, park and yield; self-deadlock on a NORMAL mutex (lock, timedlock, clocklock): cancelled, the cleanup handler unlocks, others use the mutex; asynchronously cancelable threads: locks exclude, a timed lock times out, a condvar wait returns holding the mutex; cancelled in a condvar wait: it holds the mutex in its cleanup handler" {
  each_algo "" -- "$P" blocked self-deadlock not-cancelled in-cond-wait || return 1
  TEST_POLICY_OWN=1 each_algo "" yield -- "$P" blocked || return 1
}
