#!/usr/bin/env bats
# Every error code of pthread_mutex_*, exactly as glibc 2.36 gives them,
# under every algorithm. Issue 2, item 3.
load helpers
TEST_TIMEOUT=20
P="$PROGS/mutex_errors"

# park (the default) for every algorithm; yield where its path is not wait.c's
# shared one (helpers.bash, each_own_wait): the shim never reads the policy
both_policies() {
  each_algo "" -- "$@" && each_own_wait "" yield -- "$@" || return 1
}

@test "glibc itself passes every mutex_errors case (the specification)" {
  for c in $("$P" 2>&1 | sed -n 's/^cases://p'); do
    run timeout 20 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
}

@test "recursive: EAGAIN from lock, trylock, timedlock and clocklock when the count would overflow" {
  each_algo "" -- "$P" recursive-eagain || return 1
}

@test "errorcheck: EDEADLK on relock by lock, timedlock and clocklock; trylock EBUSY" {
  each_algo "" -- "$P" errorcheck-edeadlk || return 1
}

@test "errorcheck: EPERM on unlock of an unlocked mutex and on unlock by a non-owner" {
  each_algo "" -- "$P" errorcheck-eperm || return 1
}

@test "recursive: EPERM on unlock of an unlocked mutex and on unlock by a non-owner" {
  each_algo "" -- "$P" recursive-eperm || return 1
}

@test "trylock: EBUSY for every type while another thread holds it" {
  each_algo "" -- "$P" trylock-ebusy || return 1
}

@test "timedlock: ETIMEDOUT not before the absolute CLOCK_REALTIME deadline; past deadlines; a free mutex still locks" {
  both_policies "$P" timedlock-etimedout || return 1
}

@test "clocklock CLOCK_REALTIME: ETIMEDOUT not before the deadline" {
  both_policies "$P" clocklock-realtime-etimedout || return 1
}

@test "clocklock CLOCK_MONOTONIC: ETIMEDOUT not before the deadline" {
  both_policies "$P" clocklock-monotonic-etimedout || return 1
}

@test "timedlock and clocklock succeed when the mutex is released before the deadline" {
  both_policies "$P" timed-success || return 1
}

@test "clocklock: EINVAL for any clock but CLOCK_REALTIME and CLOCK_MONOTONIC, even when the mutex is free" {
  each_algo "" -- "$P" clocklock-einval-clock || return 1
}

@test "timedlock and clocklock: EINVAL for tv_nsec outside [0, 1e9) only when busy; a free mutex locks" {
  each_algo "" -- "$P" einval-nsec || return 1
}

@test "destroy: EBUSY while locked (by the caller or another thread), and the mutex stays usable" {
  each_algo "" -- "$P" destroy-ebusy || return 1
}
