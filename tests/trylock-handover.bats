#!/usr/bin/env bats
# The try-locks' releaser hand-over (issue 9, item 4). In Scott & Scherer's
# listings a releaser that cannot hand over at once waits for its successor,
# and a successor out of patience leaves: under load nobody acquires for
# seconds. The cure (locks/abortable/mcs_try.c, clh_try.c): the releaser
# marks its node, and a waiter whose deadline passes while its predecessor
# is releasing waits for the hand-over and returns 0. build/unit/
# trylock_handover holds the releaser inside that window, at a test point,
# until the successor has run out of patience (no sleep, no clock: events at
# test points; a deadlock is caught by its watchdog and by `timeout`), then
# checks that the successor got the lock, alone, and that the lock is
# usable afterwards. Scenarios: "enqueuing" (mcs-try's tail CAS fails
# because the successor has not linked yet; clh-try hands over at once
# there) and "leaving" (an earlier waiter that is leaving holds the
# hand-over up: both locks). "linkout" (clh-try) stops the releaser between
# its look at the tail and its hand-over while the successor leaves as
# last: the lock must end free with an empty tail, which trylock takes.
load helpers
H=$UNIT/trylock_handover

# handover ALGO SCENARIO : every waiting policy, 4 rounds each
handover() {
  local a=$1 m=$2 w
  for w in spin yield park; do
    run timeout -k 2 60 "$H" -a "$a" -m "$m" -w "$w" -r 4 -W 40
    [ "$status" -eq 0 ] || { echo "$a $m wait=$w: exit $status: $output"; return 1; }
    [ "$output" = "trylock_handover: OK algo=$a scenario=$m wait=$w rounds=4" ] || { echo "$output"; return 1; }
  done
}

@test "mcs-try: a successor out of patience while the releaser waits for it to link gets the hand-over, every policy" {
  handover mcs-try enqueuing
}

@test "mcs-try, clh-try: a successor out of patience while a leaving waiter holds the release up gets the hand-over, every policy" {
  handover mcs-try leaving
  handover clh-try leaving
}

@test "clh-try: a successor that links itself out between the releaser's look at the tail and its hand-over leaves the lock free (trylock takes it at once), every policy" {
  handover clh-try linkout
}

@test "test points compile to nothing outside the instrumented build; there, the stress programs stop nowhere and the test-point programs inject nothing" {
  # the library and the plain archive neither call nor define ls_test_point
  run nm "$LIB" "$B/liblocks.a"
  [ "$status" -eq 0 ]
  [[ "$output" != *ls_test_point* && "$output" != *ls_inject* ]] || { grep 'ls_test_point\|ls_inject' <<<"$output"; return 1; }
  run nm "$B/liblocks-inject.a"
  [ "$status" -eq 0 ]
  [[ "$output" == *"U ls_test_point"* && "$output" == *"U ls_inject"* ]] || { echo "$output"; return 1; }
  # a test-point program's ls_inject is the empty one (TPOINT_LINK), a
  # stress program's the injecting one
  local h s
  h=$(nm "$H" | awk '$3 == "ls_inject" || $3 == "ls_inject_none" { print $1 }' | sort -u | wc -l)
  s=$(nm "$UNIT/stress-inject" | awk '$3 == "ls_inject" || $3 == "ls_inject_none" { print $1 }' | sort -u | wc -l)
  [ "$h" -eq 1 ] && [ "$s" -eq 2 ] || { echo "addresses of ls_inject and ls_inject_none: $H $h, stress-inject $s"; return 1; }
}

@test "trylock_handover: bad usage is one line and exit 2" {
  run "$H" -a mcs -m leaving
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"mcs has no native timeout"* ]]
  run "$H" -a clh-try -m nap
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"(valid: enqueuing, leaving, linkout)"* ]]
  run "$H" -a clh-try -m leaving -w nap
  [ "$status" -eq 2 ]
  [[ "$output" == *"(valid: spin, yield, park)"* ]]
}
