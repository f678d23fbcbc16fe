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

@test "destroy is EBUSY while one waiter waits (3 types x 2 condvar clocks x 4 wait functions), 0 once it has left; the mutex stays usable" {
  each_algo "" -- "$P" while-waiting || return 1
}

@test "destroy is EBUSY until the last of three waiters on two condvars has left" {
  each_algo "" -- "$P" several || return 1
}

@test "a waiter that timed out or was cancelled no longer counts" {
  each_algo "" -- "$P" timed-out-or-cancelled || return 1
}
