#!/usr/bin/env bats
# pthread_mutex_destroy of a mutex that condition-variable waiters have
# released (issue 9, item 1): glibc counts those waiters as users of the
# mutex (__nusers) and returns EBUSY; so does lockswap, for every algorithm,
# every mutex type, condvars of both clocks and every wait function, and
# the mutex stays usable. Waiters that were signalled, timed out or were
# cancelled no longer count.
load helpers
TEST_TIMEOUT=30
P="$PROGS/cond_users"

@test "glibc itself passes every cond_users case (the specification)" {
  native_passes "$P"
}

# Every case in one process per algorithm (run_case runs the cases named in
# order, each with its own mutexes, condvars and threads; a failure names
# its case).
@test "every algorithm: destroy is EBUSY while one waiter waits (3 types x 2 condvar clocks x 4 wait functions), 0 once it has left, the mutex stays usable; EBUSY until the last of three waiters on two condvars has left; a waiter that timed out or was cancelled no longer counts" {
  each_algo "" -- "$P" while-waiting several timed-out-or-cancelled || return 1
}
