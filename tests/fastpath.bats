#!/usr/bin/env bats
# The mutex path, seen by callgrind (instruction counts: deterministic, no
# timing): a program that never uses a condition variable runs no condvar
# code and takes no internal lock of the shim's on lock/unlock, under every
# algorithm; and no shim initialisation or configuration code, and no profiler
# code (LOCKSWAP_PROFILE is off), runs per call.

load helpers

setup() {
  command -v valgrind >/dev/null || skip "valgrind is not installed"
}

# Functions called at least N times in a callgrind output file. Callgrind
# compresses names: "(id) name" the first time, "(id)" after; "calls=COUNT"
# lines follow the "cfn=" line of the callee.
called_at_least() {
  awk -v n="$1" '
    function name(s,  id) {
      match(s, /^\([0-9]+\)/); id = substr(s, RSTART, RLENGTH)
      if (length(s) > RLENGTH + 1) names[id] = substr(s, RLENGTH + 2)
      return names[id]
    }
    /^fn=/ { name(substr($0, 4)); next }
    /^cfn=/ { callee = name(substr($0, 5)); next }
    /^calls=/ { split(substr($0, 7), a, " "); calls[callee] += a[1]; next }
    END { for (f in calls) if (calls[f] >= n) print f }' "$2"
}

# functions called N times or more in a run of `pairs N [ARG]` under ALGO
hot_functions() {
  local algo=$1 n=$2 out
  out=$(mktemp)
  TEST_TIMEOUT=120 under "$algo" -- valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$PROGS/pairs" "$n" ${3:-} >/dev/null 2>&1 || { rm -f "$out"; return 1; }
  called_at_least "$n" "$out"
  rm -f "$out"
}

# (the loop untraced: bats' DEBUG trap on each of its commands; a failure
# names the algorithm and what it called)
@test "lock/unlock run no condvar code and no shim initialisation, under every algorithm" {
  untraced hot_each
}
hot_each() {
  local a fns bad=()
  for a in $(algos lock); do
    fns=$(hot_functions "$a" 20000) || { bad+=("$a:callgrind-failed"); continue; }
    if [ -z "$fns" ]; then bad+=("$a:no-calls-seen"); continue; fi
    if grep -Eq 'cond|ilock|iunlock|wait_common|signal_one|ls_init|configure|getenv|dlsym|malloc|w_lock|w_unlock|prof' <<<"$fns"; then
      bad+=("$a:$(grep -E 'cond|ilock|iunlock|wait_common|signal_one|ls_init|configure|getenv|dlsym|malloc|w_lock|w_unlock|prof' <<<"$fns" | tr '\n' ',')")
    fi
  done
  [ ${#bad[@]} -eq 0 ] || { printf '%s\n' "${bad[@]}"; false; }
}

@test "the check above sees the calls it looks for (a run that does use a condvar)" {
  # The same analysis on a program that signals a condvar in its loop must
  # report the condvar function: otherwise the test above could not fail.
  run hot_functions tas 20000 signal
  assert_success
  assert_output --partial "pthread_cond_signal"
  assert_output --partial "tas_lock"
}
