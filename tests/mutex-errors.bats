#!/usr/bin/env bats
# Every error code of pthread_mutex_*, exactly as glibc 2.36 gives them,
# under every algorithm. Issue 2, item 3. tests/progs/mutex_errors.c is the
# specification; its cases run in sequence in one process per algorithm
# (a failure names the file and line of its check, and so its case).
load helpers
TEST_TIMEOUT=20
P="$PROGS/mutex_errors"

# the cases that wait for a busy mutex with a deadline; the rest never wait
TIMED="timedlock-etimedout clocklock-realtime-etimedout clocklock-monotonic-etimedout timed-success"
UNTIMED="recursive-eagain errorcheck-edeadlk errorcheck-eperm recursive-eperm trylock-ebusy clocklock-einval-clock einval-nsec destroy-ebusy"

@test "glibc itself passes every mutex_errors case (the specification)" {
  # (and the two lists above are the program's cases, every one)
  local cases
  cases=$("$P" 2>&1 | sed -n 's/^cases: //p' | tr ' ' '\n' | sort | tr '\n' ' ')
  [ "$cases" = "$(echo $TIMED $UNTIMED | tr ' ' '\n' | sort | tr '\n' ' ')" ] || { echo "cases: $cases"; return 1; }
  # every case in turn in one process, as the algorithms run them (a
  # failure names its case)
  # shellcheck disable=SC2086
  run timeout 20 "$P" $cases
  [ "$status" -eq 0 ] || { echo "native: $output"; return 1; }
}

# park (the default) for every algorithm; the cases that wait also under
# yield where its path is not wait.c's shared one (helpers.bash,
# each_own_wait): the shim never reads the policy
@test "recursive: EAGAIN from lock, trylock, timedlock and clocklock when the count would overflow; errorcheck: EDEADLK on relock by lock, timedlock and clocklock, trylock EBUSY; errorcheck and recursive: EPERM on unlock of an unlocked mutex and on unlock by a non-owner; trylock: EBUSY for every type while another thread holds it; timedlock: ETIMEDOUT not before the absolute CLOCK_REALTIME deadline, past deadlines, a free mutex still locks; clocklock CLOCK_REALTIME and CLOCK_MONOTONIC: ETIMEDOUT not before the deadline; timedlock and clocklock succeed when the mutex is released before the deadline; clocklock: EINVAL for any clock but CLOCK_REALTIME and CLOCK_MONOTONIC, even when the mutex is free; timedlock and clocklock: EINVAL for tv_nsec outside [0, 1e9) only when busy, a free mutex locks; destroy: EBUSY while locked (by the caller or another thread), and the mutex stays usable (park; the timed cases under yield where its path is not wait.c's shared one)" {
  # shellcheck disable=SC2086
  each_algo "" -- "$P" $UNTIMED $TIMED || return 1
  # shellcheck disable=SC2086
  each_own_wait "" yield -- "$P" $TIMED
}
