#!/usr/bin/env bats
# The `auto` lock (issue 13, item 2; issue 33; locks/adaptive/auto.c): what
# the generic suites do not check. Its bound on unfairness, forced without
# timing conditions (tests/unit/auto.c: a thread that re-takes the lock at
# once, over and over, against one queued waiter), in every regime; the time
# bound; the waiter list across fork(); the validator with hand-offs on every
# release (LOCKSWAP_AUTO_PASSES=0) and fault injection. Issue 33: the choice
# among regimes (tests/unit/auto_choice.c drives choice.h with made-up
# rates and checks its decisions; tests/unit/auto_table.c runs the lock's
# own choice under a fake clock that makes each regime's rate), what each regime makes a waiter do and the
# flush of the list on a change to SPIN (tests/unit/auto_regime.c counts a
# waiter's steps through test points), the validator while the regime
# changes every few windows, and a timed waiter re-evaluated at its deadline.
# The end-to-end suites run `auto` like every lock with its capabilities.
load helpers
: "${STRESS_TIMEOUT:=60}"
A="$UNIT/auto"

# (the loops over regimes, policies and modes below run untraced, without
# bats' run: its bookkeeping and the DEBUG trap on each command cost more
# than the runs; each failure names its run, with the end of its output)
@test "auto: a queued waiter is overtaken at most LOCKSWAP_AUTO_PASSES times, under every policy and in every regime" {
  passes_each() {
    local w k r out
    for r in 0 1 2 3; do
      for w in park yield spin; do
        for k in 0 3; do
          out=$(timeout -k 2 60 "$A" passes -w "$w" -k "$k" -r "$r" 2>&1) ||
            { echo "passes -w $w -k $k -r $r: $out"; return 1; }
        done
      done
    done
  }
  untraced passes_each || return 1
  run timeout -k 2 60 "$UNIT/auto-inject" passes -w park -k 2
  [ "$status" -eq 0 ] || { echo "inject: $output"; return 1; }
}

@test "auto: a queued waiter that has waited LOCKSWAP_AUTO_FAIR_NS gets the lock against a thread that re-takes it at once, in every regime" {
  fair_each() {
    local w r out
    for r in 0 1 2 3; do
      for w in park yield; do
        out=$(timeout -k 2 60 "$A" fair -w "$w" -r "$r" 2>&1) || { echo "fair -w $w -r $r: $out"; return 1; }
      done
    done
  }
  untraced fair_each
}

@test "auto: in a child of fork(), waiters of threads that are gone are never handed the lock" {
  run timeout -k 2 60 "$A" fork -w park -T 30
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "auto: validator with a hand-off on every release, and with the time bound at 0, fault injection" {
  local e m w rc out failed=()
  inject_each() {
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
  }
  untraced inject_each || true
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

@test "auto: the choice among regimes (choice.h) keeps SLEEP when rarely contended, tries, switches to SPIN or BATCH when they win, backs off, falls back to SLEEP when spinning loses" {
  run timeout -k 2 60 "$UNIT/auto_choice" all
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [ "$(grep -c '^auto_choice: OK ' <<<"$output")" -eq 13 ] || { echo "$output"; return 1; }
}

@test "auto: the lock runs its choice (table, steps, stat) under a fake clock: stays in SLEEP, moves to SPIN, back to SLEEP when spinning loses, to BATCH" {
  run timeout -k 2 300 "$UNIT/auto_table" -W 240
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [ "$(grep -c '^auto_table: OK ' <<<"$output")" -eq 4 ] || { echo "$output"; return 1; }
}

@test "auto: SLEEP queues and sleeps at once, SPIN spins LOCKSWAP_SPIN steps and yields LOCKSWAP_YIELD times first (every policy); BATCH's woken head naps, no release wakes it, and it takes a lock left free after its nap; a change to SPIN flushes the list: a waiter asleep in it arrives again and spins" {
  local c w
  for c in sleep spin; do
    for w in park yield spin; do
      run timeout -k 2 60 "$UNIT/auto_regime" "$c" -w "$w"
      [ "$status" -eq 0 ] || { echo "$c -w $w: $output"; return 1; }
    done
  done
  for c in batch flush; do
    run timeout -k 2 60 "$UNIT/auto_regime" "$c" -w park
    [ "$status" -eq 0 ] || { echo "$c -w park: $output"; return 1; }
  done
}

# 100 us windows: a run of 6 x 200 contended acquisitions spans many of
# them (each hand-over to a waiter that must be scheduled again takes tens
# of microseconds at least: 1,200 of them, tens of milliseconds, hundreds
# of windows), so the regime changes many times in each run; the 18 runs
# of the loop make it change in every mode, policy and build.
@test "auto: validator while the choice changes regime every few windows (and flushes), every policy, fault injection" {
  local m w b rc out failed=()
  change_each() {
    for b in stress stress-inject; do
      for m in lock mix timed; do
        for w in park yield spin; do
          rc=0
          out=$(timeout -k 2 "$STRESS_TIMEOUT" env LOCKSWAP_AUTO_WINDOW_NS=100000 LOCKSWAP_AUTO_EXPLORE=1 \
            LOCKSWAP_INJECT=5 "$UNIT/$b" -a auto -t 6 -n 200 -l 2 -m "$m" -w "$w" -p 20000 -q 2>&1) || rc=$?
          [ $rc -eq 0 ] || { failed+=("$b/$m/$w"); echo "$b -m $m -w $w: exit $rc: $(tail -n 12 <<<"$out")"; }
        done
      done
    done
  }
  untraced change_each || true
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

# 6 x 500 in each regime: 3,000 critical sections among more threads
# than CPUs, overlapping many times over (the regime's own path; its
# changes are the test above's)
@test "auto: validator in each fixed regime (sleep, spin, batch with 20 us naps), every policy" {
  local r m w rc out failed=()
  fixed_each() {
    for r in 1 2 3; do
      for m in lock mix; do
        for w in park yield spin; do
          rc=0
          out=$(timeout -k 2 "$STRESS_TIMEOUT" env LOCKSWAP_AUTO_REGIME=$r LOCKSWAP_AUTO_NAP_NS=20000 \
            "$UNIT/stress" -a auto -t 6 -n 500 -l 2 -m "$m" -w "$w" -q 2>&1) || rc=$?
          [ $rc -eq 0 ] || { failed+=("$r/$m/$w"); echo "regime $r -m $m -w $w: exit $rc: $(tail -n 12 <<<"$out")"; }
        done
      done
    done
  }
  untraced fixed_each || true
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

@test "auto: a timed waiter behind a woken head that cannot run takes the free lock at its deadline" {
  run timeout -k 2 60 "$A" deadline -w park
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}
