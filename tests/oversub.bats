#!/usr/bin/env bats
# More threads than cores under the default policy (issue 12): who a lock
# wakes under park (tests/unit/handoff.c). The time-published locks' parked
# waiters are in tests/tp.bats; the locks built for oversubscription run
# through every end-to-end suite by their capabilities, and their own
# behaviours are checked here.
load helpers
H="$UNIT/handoff"

# handoff_all TEST ALGO... : tests/unit/handoff.c for each algorithm.
handoff_all() {
  local t=$1 a rc out failed=()
  shift
  for a in "$@"; do
    rc=0
    out=$(timeout -k 2 60 "$H" -a "$a" -T 30 "$t" 2>&1) || rc=$?
    [ "$rc" -eq 0 ] || { failed+=("$a"); printf '=== %s %s exit %d\n%s\n' "$a" "$t" "$rc" "$out"; }
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

@test "handoff checks fail for a lock whose release wakes every sleeper, and for one that wakes the next only at release" {
  run timeout 30 "$H" -a selftest-herd -T 5 only-next
  [ "$status" -eq 1 ]
  [[ "$output" == *"two places behind the new holder was woken"* ]]
  run timeout 30 "$H" -a selftest-late -T 2 prewake
  [ "$status" -eq 1 ]
  [[ "$output" == *"watchdog fired in phase: the next waiter being woken"* ]]
}

@test "park: a FIFO lock wakes only the next waiter (not the one two places behind), every FIFO lock" {
  # shellcheck disable=SC2046
  handoff_all only-next $(algos fifo)
}

@test "park: the holder wakes its sleeping successor as it acquires (ticket, alock, clh, mcs)" {
  # The abortable FIFO locks (clh-try, mcs-try, clh-nb, mcs-nb) do not.
  handoff_all prewake ticket alock clh mcs
}
