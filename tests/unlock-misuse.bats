#!/usr/bin/env bats
# Misuse that glibc tolerates (issue 25; locks/lock.h, "Misuse that glibc
# tolerates"): an unlock of an unlocked NORMAL mutex and an unlock too many
# return 0 and leave the mutex fully usable; ERRORCHECK and RECURSIVE keep
# EPERM; a condition wait on a mutex the caller does not hold returns what
# glibc returns. tests/progs/misuse.c is the specification (it passes
# natively), run under every algorithm through the shim;
# tests/unit/unlock_misuse.c runs each misuse on every algorithm under park,
# and under spin and yield where its path is its own (own_wait_algos),
# and then checks exclusion, FIFO order and queue nodes; for
# the spinlock family too (rwlocks: the shim answers every misuse itself,
# tests/rwlock.bats).
load helpers
P="$PROGS/misuse"
U="$UNIT/unlock_misuse"

@test "glibc itself passes every misuse case (the specification)" {
  # shellcheck disable=SC2046
  run timeout 60 "$P" $("$P" 2>&1 | sed -n 's/^cases://p')
  assert_success
}

# park for every lock; spin and yield where its path is not wait.c's shared
# one (helpers.bash: own_wait_algos)
@test "every lock under park, and spin and yield where the lock's path is its own: an unlock of a never-locked, just-initialised or unlocked lock, or too many after a hand-over, leaves it usable (exclusion, FIFO order, no node in use)" {
  run timeout -k 5 300 "$U" -a all -w park -W 120
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [ "$(grep -c '^unlock_misuse: OK ' <<<"$output")" -eq "$(algos | grep -cvx pthread)" ] || { echo "$output"; return 1; }
  local own w
  own=$(own_wait_algos | paste -sd, -)
  for w in spin yield; do
    run timeout -k 5 300 "$U" -a "$own" -w "$w" -W 120
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    [ "$(grep -c '^unlock_misuse: OK ' <<<"$output")" -eq "$(own_wait_algos | wc -l)" ] || { echo "$output"; return 1; }
  done
}

@test "every spinlock, every policy: the same misuses at the algorithm level (tas, ttas, backoff, ticket16), then exclusion and ticket16's FIFO order" {
  run timeout -k 5 120 "$U" -a spin -W 60
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [ "$(grep -c '^unlock_misuse: OK ' <<<"$output")" -eq $(($(spinalgos lock | wc -l) * 3)) ] || { echo "$output"; return 1; }
}

# The cases in one process per algorithm (run_case runs the cases named
# in order; a failure names its file:line): each case makes its own mutexes
# and condvars.
@test "every algorithm: NORMAL (static, zeroed, default, normal, adaptive): unlock of an unlocked mutex returns 0 and it works on; a second and third unlock return 0 and it works on; unlocks too many after a hand-over to a blocked thread return 0; ERRORCHECK and RECURSIVE keep EPERM for an unlock of an unlocked mutex and an unlock too many; condvar wait on a NORMAL mutex not held waits and returns ETIMEDOUT or 0 holding it; on an ERRORCHECK or RECURSIVE mutex not held, EPERM at once" {
  each_algo "" -- "$P" normal-unlocked normal-twice normal-after-handover owners-eperm cond-normal-timeout cond-normal-signal cond-owners-eperm
}

@test "unlock_misuse: bad usage is one line and exit 2" {
  run "$U" -c nosuch
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"unknown case 'nosuch' (valid: fresh, init, twice, thrice, handover)"* ]]
}
