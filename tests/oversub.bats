#!/usr/bin/env bats
# More threads than cores under the default policy (issue 12): who a lock
# wakes under park, and the behaviours of the locks built for it, with
# tests/unit/handoff.c (see its header: every check waits for events, never
# for time). The time-published locks' parked waiters are in tests/tp.bats;
# the new locks (malthusian, mutexee, ptl, shfl, hemlock) also run through
# every end-to-end suite by their capabilities.
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

@test "handoff checks fail for locks without the behaviour: a herd, a late wake-up, no wake-ahead, a releaser that always wakes" {
  # the two whose watchdog must fire, at once: their 2 s run out together
  local late shfl
  timeout 30 "$H" -a selftest-late -T 2 prewake >"$BATS_TEST_TMPDIR/late" 2>&1 &
  late=$!
  timeout 30 env LOCKSWAP_SHFL_AWAKE=0 "$H" -a shfl -T 2 awake >"$BATS_TEST_TMPDIR/shfl" 2>&1 &
  shfl=$!
  run timeout 30 "$H" -a selftest-herd -T 5 only-next
  [ "$status" -eq 1 ] && [[ "$output" == *"two places behind the new holder: woken"* ]] ||
    { echo "selftest-herd only-next: exit $status"; echo "$output"; return 1; }
  local st=0
  wait "$late" || st=$?
  [ "$st" -eq 1 ] || { echo "selftest-late prewake: exit $st"; cat "$BATS_TEST_TMPDIR/late"; return 1; }
  grep -q "watchdog fired in phase: the next waiter being woken" "$BATS_TEST_TMPDIR/late" ||
    { cat "$BATS_TEST_TMPDIR/late"; return 1; }
  st=0
  wait "$shfl" || st=$?
  [ "$st" -eq 1 ] || { echo "shfl awake, LOCKSWAP_SHFL_AWAKE=0: exit $st"; cat "$BATS_TEST_TMPDIR/shfl"; return 1; }
  grep -q "watchdog fired in phase: the waiters behind the holder being kept awake" "$BATS_TEST_TMPDIR/shfl" ||
    { cat "$BATS_TEST_TMPDIR/shfl"; return 1; }
  # ttas wakes the sleeper at every release: the check sees it woken, or
  # (under load) the woken sleeper spins (the policy is spin by then) and
  # takes the lock before the spinner, which never gets it
  run timeout 30 "$H" -a ttas -T 5 spinner
  [ "$status" -eq 1 ]
  [[ "$output" == *"the sleeper, when a spinner took the lock: woken"* ||
     "$output" == *"watchdog fired in phase: waiting for a waiter to get the lock"* ]]
}

@test "park: a FIFO lock wakes only the next waiter (not the one two places behind), every FIFO lock" {
  # shellcheck disable=SC2046
  handoff_all only-next $(algos fifo)
}

@test "park: the holder wakes its sleeping successor as it acquires (ticket, alock, ptl, clh, mcs, hemlock)" {
  # The abortable FIFO locks (clh-try, mcs-try, clh-nb, mcs-nb) do not.
  handoff_all prewake ticket alock ptl clh mcs hemlock
}

@test "shfl: the head keeps LOCKSWAP_SHFL_AWAKE waiters behind it awake, and not the next one" {
  run timeout 60 env LOCKSWAP_SHFL_AWAKE=2 "$H" -a shfl -T 30 -n 5 awake
  echo "$output"
  [ "$status" -eq 0 ]
  run timeout 60 env LOCKSWAP_SHFL_AWAKE=1 "$H" -a shfl -T 30 -n 4 awake
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "malthusian: a surplus waiter is culled to the passive set and re-admitted when the chain runs empty, or first by the fairness trial" {
  # W1, W2, W3 queue in that order. H's release finds W1 surplus (W2 waits
  # behind it): W1 is culled, W2 gets the lock. With fairness off (1 in 1e9)
  # the chain goes on to W3, and W1 is re-admitted when it runs empty; with
  # every trial won, W1 (the eldest passive waiter) goes before W3. A plain
  # FIFO lock gives 1,2,3.
  run timeout 60 env LOCKSWAP_MALTHUSIAN_FAIRNESS=1000000000 "$H" -a malthusian order
  [ "$status" -eq 0 ] && [[ "$output" == *"order=2,3,1" ]] || { echo "$output"; false; }
  run timeout 60 env LOCKSWAP_MALTHUSIAN_FAIRNESS=1 "$H" -a malthusian order
  [ "$status" -eq 0 ] && [[ "$output" == *"order=2,1,3" ]] || { echo "$output"; false; }
  run timeout 60 "$H" -a mcs order
  [ "$status" -eq 0 ] && [[ "$output" == *"order=1,2,3" ]] || { echo "$output"; false; }
}

@test "mutexee: an unlock that finds a spinner taking the lock wakes no sleeper; the sleeper gets the lock later" {
  run timeout 60 "$H" -a mutexee -T 30 spinner
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "new locks: tunables through the shim, and a bad value is one line and exit 2" {
  run timeout 30 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=mutexee LOCKSWAP_VERBOSE=1 LOCKSWAP_MUTEXEE_SPIN_NS=5000 true
  [ "$status" -eq 0 ]
  [[ "$output" == *"LOCKSWAP_MUTEXEE_SPIN_NS=5000"* ]]
  local v
  for v in LOCKSWAP_PTL_SLOTS=0 LOCKSWAP_PTL_SLOTS=17 LOCKSWAP_SHFL_AWAKE=x LOCKSWAP_SHFL_CLUSTERS=0 \
    LOCKSWAP_MALTHUSIAN_FAIRNESS=0 LOCKSWAP_MUTEXEE_WAKE_NS=-1; do
    run timeout 30 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=ptl "$v" true
    [ "$status" -eq 2 ] || { echo "$v: $status $output"; return 1; }
    [ "${#lines[@]}" -eq 1 ]
    [[ "$output" == "lockswap: ${v%%=*}: "* ]]
  done
}

@test "new locks under more threads than cores: ptl with 1 slot, shfl with 2 clusters (queue moves), malthusian always fair, -inject, park" {
  local s
  for s in 1 2; do
    run timeout 60 env LOCKSWAP_PTL_SLOTS=1 "$UNIT/stress-inject" -a ptl -w park -t 8 -n 400 -m mix -l 2 -s "$s" -q
    [ "$status" -eq 0 ] || { echo "ptl: $output"; return 1; }
    run timeout 60 env LOCKSWAP_SHFL_CLUSTERS=2 LOCKSWAP_SHFL_AWAKE=8 "$UNIT/stress-inject" -a shfl -w park -t 8 -n 400 -m mix -l 2 -s "$s" -q
    [ "$status" -eq 0 ] || { echo "shfl: $output"; return 1; }
    run timeout 60 env LOCKSWAP_MALTHUSIAN_FAIRNESS=1 "$UNIT/stress-inject" -a malthusian -w park -t 8 -n 400 -m mix -l 2 -s "$s" -q
    [ "$status" -eq 0 ] || { echo "malthusian: $output"; return 1; }
  done
}
