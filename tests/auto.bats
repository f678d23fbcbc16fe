#!/usr/bin/env bats
# The `auto` lock (issue 13, item 2; locks/adaptive/auto.c): what the
# generic suites do not check. Its bound on unfairness, forced without timing
# conditions (tests/unit/auto.c: a thread that re-takes the lock at once,
# over and over, against one queued waiter); the time bound; the waiter
# list across fork(); and the validator with hand-offs on every release
# (LOCKSWAP_AUTO_PASSES=0) and fault injection. Issue 21: the spin budget
# each mutex learns (tests/unit/auto_budget.c counts a waiter's steps through
# test points: it shrinks behind holders that keep the lock and on a lock
# that is re-taken at once, and grows back), the validator with every
# contended arrival a probe, and a timed waiter re-evaluated at its deadline.
# The end-to-end suites run `auto` like every lock with its capabilities.
load helpers
: "${STRESS_TIMEOUT:=60}"
A="$UNIT/auto"

@test "auto: a queued waiter is overtaken at most LOCKSWAP_AUTO_PASSES times, under every policy" {
  local w k
  for w in park yield spin; do
    for k in 0 3; do
      run timeout -k 2 60 "$A" passes -w "$w" -k "$k"
      [ "$status" -eq 0 ] || { echo "passes -w $w -k $k: $output"; return 1; }
    done
  done
  run timeout -k 2 60 "$UNIT/auto-inject" passes -w park -k 2
  [ "$status" -eq 0 ] || { echo "inject: $output"; return 1; }
}

@test "auto: a queued waiter that has waited LOCKSWAP_AUTO_FAIR_NS gets the lock against a thread that re-takes it at once" {
  local w
  for w in park yield; do
    run timeout -k 2 60 "$A" fair -w "$w"
    [ "$status" -eq 0 ] || { echo "fair -w $w: $output"; return 1; }
  done
}

@test "auto: in a child of fork(), waiters of threads that are gone are never handed the lock" {
  run timeout -k 2 60 "$A" fork -w park -T 30
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "auto: validator with a hand-off on every release, and with the time bound at 0, fault injection" {
  local e m w rc out failed=()
  for e in LOCKSWAP_AUTO_PASSES=0 LOCKSWAP_AUTO_FAIR_NS=0; do
    for m in lock mix; do
      for w in park yield; do
        rc=0
        out=$(timeout -k 2 "$STRESS_TIMEOUT" env "$e" LOCKSWAP_INJECT=10 "$UNIT/stress-inject" -a auto \
          -t 4 -n 600 -l 2 -m "$m" -w "$w" -p 5000 -q 2>&1) || rc=$?
        [ $rc -eq 0 ] || { failed+=("$e/$m/$w"); echo "$e -m $m -w $w: exit $rc: $(tail -n 12 <<<"$out")"; }
      done
    done
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

@test "auto: its tunables through the shim (a bad value is one line and exit 2)" {
  run env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=auto LOCKSWAP_AUTO_PASSES=16777215 "$PROGS/hello"
  [ "$status" -eq 2 ]
  [[ "$output" == *LOCKSWAP_AUTO_PASSES* ]]
  [ "${#lines[@]}" -eq 1 ]
  run under auto -- env LOCKSWAP_AUTO_PASSES=0 LOCKSWAP_AUTO_FAIR_NS=0 "$PROGS/exclusion" mixed 6 500
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

# build/unit/auto_budget CASE under every policy; then with the learning
# off the same rounds must fail (the check can fail).
budget_case() {
  local w
  for w in park yield spin; do
    run timeout -k 2 60 "$UNIT/auto_budget" "$1" -w "$w"
    [ "$status" -eq 0 ] || { echo "$1 -w $w: $output"; return 1; }
  done
  run env LOCKSWAP_AUTO_ADAPT=0 timeout -k 2 60 "$UNIT/auto_budget" "$1" -w park
  [ "$status" -eq 1 ] || { echo "ADAPT=0: $output"; return 1; }
  [[ "$output" == *"the budget did not shrink"* ]]
}

@test "auto: the spin budget shrinks behind holders that keep the lock past it, and grows back (every policy)" {
  budget_case block
}

@test "auto: the spin budget shrinks on a lock taken again at once after each release, and grows back" {
  budget_case hot
}

@test "auto: validator with every contended arrival a probe (watching 0 and 100 ns)" {
  local h m w rc out failed=()
  for h in 0 100; do
    for m in lock mix; do
      for w in park yield spin; do
        rc=0
        out=$(timeout -k 2 "$STRESS_TIMEOUT" env LOCKSWAP_AUTO_PROBE=1 LOCKSWAP_AUTO_HOT_NS=$h "$UNIT/stress" \
          -a auto -t 8 -n 3000 -l 1 -m "$m" -w "$w" -q 2>&1) || rc=$?
        [ $rc -eq 0 ] || { failed+=("$h/$m/$w"); echo "HOT_NS=$h -m $m -w $w: exit $rc: $(tail -n 12 <<<"$out")"; }
      done
    done
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

@test "auto: a timed waiter behind a woken head that cannot run takes the free lock at its deadline" {
  run timeout -k 2 60 "$A" deadline -w park
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}
