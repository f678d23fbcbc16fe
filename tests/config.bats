#!/usr/bin/env bats
# Configuration through the environment (issue 2, item 9): an unknown name or
# malformed value prints ONE line on stderr naming the variable, the value
# and the valid choices, and the program exits with status 2 before main
# runs; LOCKSWAP_VERBOSE=1 reports the configuration; otherwise the library
# prints nothing at all.
bats_require_minimum_version 1.5.0
load helpers
TEST_TIMEOUT=10
HELLO="$PROGS/hello"

# run_lib VAR=VALUE... -- CMD...: CMD with only the library preloaded and
# the given variables (no LOCKSWAP_ALGO unless given), stderr kept apart.
run_lib() {
  local env=(LD_PRELOAD="$LIB")
  while [ "$1" != "--" ]; do env+=("$1"); shift; done
  shift
  run --separate-stderr "$RUN_LIMIT" -k 5 "$(hang_timeout)" "${env[@]}" "$@"
}

# lib_quick VAR=VALUE... -- CMD...: as run_lib (status, output, stderr,
# stderr_lines), without bats' run, whose bookkeeping costs more than the
# run itself: for the loops over every algorithm, policy or variable, which
# run through untraced (helpers.bash) and name what failed themselves.
lib_quick() {
  local env=(LD_PRELOAD="$LIB")
  while [ "$1" != "--" ]; do env+=("$1"); shift; done
  shift
  status=0
  # (hang_timeout's arithmetic, without a subshell per run)
  output=$("$RUN_LIMIT" -k 5 $((TEST_TIMEOUT * ${LOCKSWAP_TEST_TIMEOUT_SCALE:-5})) "${env[@]}" "$@" \
    2>"$BATS_TEST_TMPDIR/stderr") || status=$?
  stderr=$(<"$BATS_TEST_TMPDIR/stderr")
  stderr_lines=()
  [ -z "$stderr" ] || mapfile -t stderr_lines <<<"$stderr"
}

# A rejected configuration: status 2, main never ran, exactly one stderr
# line starting "lockswap: " and containing every following word.
rejected() {
  [ "$status" -eq 2 ] || { echo "status $status, expected 2; stderr: $stderr"; return 1; }
  [ -z "$output" ] || { echo "main ran: $output"; return 1; }
  [ "${#stderr_lines[@]}" -eq 1 ] || { echo "expected one stderr line, got: $stderr"; return 1; }
  [[ "$stderr" == "lockswap: "* ]] || { echo "not prefixed 'lockswap: ': $stderr"; return 1; }
  local w
  for w in "$@"; do
    [[ "$stderr" == *"$w"* ]] || { echo "'$w' missing from: $stderr"; return 1; }
  done
}

@test "unknown LOCKSWAP_ALGO: one line naming the variable, the value and every algorithm; exit 2 before main, even in a program that never uses a mutex; several bad variables still give one line and exit 2" {
  # shellcheck disable=SC2046
  run_lib LOCKSWAP_ALGO=foo -- "$HELLO"
  rejected LOCKSWAP_ALGO "'foo'" $(algos) || return 1
  run_lib LOCKSWAP_ALGO=MCS -- "$HELLO"
  rejected LOCKSWAP_ALGO "'MCS'" || return 1
  run_lib LOCKSWAP_ALGO= -- "$HELLO"
  rejected LOCKSWAP_ALGO "''" || return 1
  run_lib "LOCKSWAP_ALGO=mcs " -- "$HELLO"
  rejected LOCKSWAP_ALGO || return 1
  # even in a program that never uses a mutex
  run_lib LOCKSWAP_ALGO=foo -- /bin/true
  rejected LOCKSWAP_ALGO || return 1
  # several bad variables: still one line
  run_lib LOCKSWAP_ALGO=foo LOCKSWAP_WAIT=bar LOCKSWAP_SPIN=x LOCKSWAP_FOO=1 -- "$HELLO"
  rejected || return 1
}

# (the loops below run through untraced, with lib_quick: a failure names
# its variable and value)
@test "unknown LOCKSWAP_WAIT: one line naming the variable, the value and spin, yield, park; exit 2" {
  wait_each() {
    for v in bogus Park "" spin,park; do
      lib_quick LOCKSWAP_ALGO=mcs LOCKSWAP_WAIT="$v" -- "$HELLO"
      rejected LOCKSWAP_WAIT "'$v'" spin yield park || { echo "(for '$v')"; return 1; }
    done
  }
  untraced wait_each
}

@test "malformed LOCKSWAP_SPIN (not an unsigned integer, negative, overflowing, empty): exit 2" {
  spin_each() {
    for v in abc -1 10x 1.5 99999999999999999999999 ""; do
      lib_quick LOCKSWAP_SPIN="$v" -- "$HELLO"
      rejected LOCKSWAP_SPIN "'$v'" || { echo "(for '$v')"; return 1; }
    done
  }
  untraced spin_each
}

@test "LOCKSWAP_VERBOSE and LOCKSWAP_STATS accept only 0 and 1" {
  flag_each() {
    for var in LOCKSWAP_VERBOSE LOCKSWAP_STATS; do
      for v in 2 yes true ""; do
        lib_quick "$var=$v" -- "$HELLO"
        rejected "$var" "'$v'" || { echo "(for $var='$v')"; return 1; }
      done
    done
  }
  untraced flag_each
}

@test "an unknown LOCKSWAP_ variable: one line naming it and the nearest valid names (not all of them), and where all are listed; exit 2" {
  near_each() {
    local v
    # near: the nearest, at most 3 (letter case aside)
    for v in LOCKSWAP_ALG:LOCKSWAP_ALGO LOCKSWAP_algo:LOCKSWAP_ALGO LOCKSWAP_SPINALG:LOCKSWAP_SPINALGO \
      LOCKSWAP_PROFILE_TP:LOCKSWAP_PROFILE_TOP LOCKSWAP_ALGOMAP:LOCKSWAP_ALGO_MAP; do
      lib_quick "${v%%:*}=1" -- "$HELLO"
      rejected || return 1
      [ "$stderr" = "lockswap: unknown variable ${v%%:*} (did you mean ${v#*:}? every variable is in lockswap(7), the tunables in lockswap --list --long)" ] ||
        { echo "$stderr"; return 1; }
    done
    # nothing near: no guess
    for v in LOCKSWAP_FOO LOCKSWAP_ LOCKSWAP_FROBNICATE; do
      lib_quick "$v=1" -- "$HELLO"
      rejected || return 1
      [ "$stderr" = "lockswap: unknown variable $v (no valid name is near it: every variable is in lockswap(7), the tunables in lockswap --list --long)" ] ||
        { echo "$stderr"; return 1; }
    done
  }
  untraced near_each || return 1
  # ties: each of the nearest, never more than 3, and the line stays short
  run_lib LOCKSWAP_X=1 -- "$HELLO"
  rejected || return 1
  [ "$(grep -o 'LOCKSWAP_[A-Z0-9_]*' <<<"$stderr" | wc -l)" -le 4 ] && [ "${#stderr}" -lt 300 ] || { echo "$stderr"; return 1; }
}

@test "every LOCKSWAP_ variable that lockswap or a subcommand documents reaches the library as a known one (compare's LOCKSWAP_RESULTS too): a preloaded program runs" {
  local vars v
  vars=$(for c in "" compare profile report; do "$LOCKSWAP" $c --help; done 2>&1 | grep -o 'LOCKSWAP_[A-Z0-9_]*[A-Z0-9]' | sort -u)
  [[ "$vars" == *LOCKSWAP_RESULTS* ]] || { echo "compare --help no longer names LOCKSWAP_RESULTS"; return 1; }
  known_each() {
    for v in $vars; do
      lib_quick "$v=1" -- "$HELLO"
      [[ "$stderr" != *"unknown variable"* ]] || { echo "$v: $stderr"; return 1; }
    done
  }
  untraced known_each
  # as a user who exports it has it: every program runs
  run_lib LOCKSWAP_RESULTS="$BATS_TEST_TMPDIR/results" -- "$HELLO"
  assert_success
  assert_output "main ran"
  [ -z "$stderr" ]
}

@test "a malformed algorithm tunable (every LOCKSWAP_ tunable --list shows): exit 2 naming it" {
  local vars
  vars=$("$LOCKSWAP" --list | grep -o 'LOCKSWAP_[A-Z0-9_]*=' | tr -d = | sort -u)
  [ -n "$vars" ] || skip "no algorithm has tunables"
  malformed_each() {
    for v in $vars; do
      lib_quick LOCKSWAP_ALGO=pthread "$v=abc" -- "$HELLO"
      rejected "$v" "'abc'" || { echo "(for $v)"; return 1; }
    done
  }
  untraced malformed_each
}

# Nothing the library prints depends on the pair of algorithm and policy
# (the configuration layer reports; an algorithm's own lines, the
# hierarchical locks' topology, are LOCKSWAP_VERBOSE's): every algorithm,
# each under one policy in turn (spin, yield, park, spin, ...), so that
# every algorithm and every policy runs.
@test "valid configurations print nothing at all: every algorithm, every policy, LOCKSWAP_SPIN, LOCKSWAP_VERBOSE=0, LOCKSWAP_STATS=0" {
  quiet_each() {
    local a w i=0 pols=(spin yield park)
    for a in $(algos); do
      for w in ${pols[i++ % 3]}; do
        lib_quick LOCKSWAP_ALGO="$a" LOCKSWAP_WAIT="$w" -- "$HELLO"
        [ "$status" -eq 0 ] && [ "$output" = "main ran" ] && [ -z "$stderr" ] ||
          { echo "$a/$w: status $status, stdout '$output', stderr '$stderr'"; return 1; }
      done
    done
  }
  untraced quiet_each || return 1
  for env in LOCKSWAP_SPIN=0 LOCKSWAP_SPIN=1000 LOCKSWAP_SPIN=0x10 LOCKSWAP_VERBOSE=0 LOCKSWAP_STATS=0; do
    run_lib "$env" -- "$HELLO"
    [ "$status" -eq 0 ] && [ "$output" = "main ran" ] && [ -z "$stderr" ] ||
      { echo "$env: status $status, stdout '$output', stderr '$stderr'"; return 1; }
  done
}

# The report is the configuration layer's, one line format whatever the
# pair: every algorithm, each under one policy in turn (spin, yield, park,
# spin, ...), so that every algorithm and every policy is reported.
@test "LOCKSWAP_VERBOSE=1 reports the algorithm and the waiting policy on stderr, lines prefixed 'lockswap: ' (every algorithm, every policy); defaults: algorithm auto, policy park; LOCKSWAP_ALGO=ttas keeps the former default" {
  verbose_each() {
    local a w l i=0 pols=(spin yield park)
    for a in $(algos); do
      for w in ${pols[i++ % 3]}; do
        lib_quick LOCKSWAP_VERBOSE=1 LOCKSWAP_ALGO="$a" LOCKSWAP_WAIT="$w" -- "$HELLO"
        [ "$status" -eq 0 ] && [ "$output" = "main ran" ] || { echo "$a/$w: $status $output"; return 1; }
        [[ "$stderr" == *"$a"* && "$stderr" == *"$w"* ]] || { echo "$a/$w not reported: $stderr"; return 1; }
        for l in "${stderr_lines[@]}"; do
          [[ "$l" == "lockswap: "* ]] || { echo "$a/$w: unprefixed line: $l"; return 1; }
        done
      done
    done
  }
  untraced verbose_each || return 1
  # the defaults, as reported
  run_lib LOCKSWAP_VERBOSE=1 -- "$HELLO"
  assert_success
  [[ "$stderr" == *"algorithm=auto "* && "$stderr" == *park* ]] || { echo "$stderr"; return 1; }
  run_lib LOCKSWAP_VERBOSE=1 LOCKSWAP_ALGO=ttas -- "$HELLO"
  assert_success
  [[ "$stderr" == *"algorithm=ttas "* ]] || { echo "$stderr"; return 1; }
}

