#!/usr/bin/env bats
# After the store that releases a lock, unlock touches neither the lock's
# memory nor its out-of-line block, whether destroy is called or not (issue 26;
# locks/lock.h, "After the release"; issue 25 item 2 for reader-writer locks
# and spinlocks, locks/rwlock/rwlock.h). tests/unit/after_release.c stops the
# unlocker at a test point right after its release store, lets the other
# threads of the scenario take and release the lock, then trylock (which
# must succeed: the lock is free), unlock, destroy, and unmaps the lock's
# page or gives its block back to the pool (filled with a pattern, or
# reused by a fresh lock), and only then lets the unlocker go: a fault, a
# changed byte or a hang fails. Every ordering is made by test points and
# events; a hang is caught by the program's watchdog and by `timeout`.
load helpers
A="$UNIT/after_release"

# The lists, worked out once for the file (setup_file) and read by each
# test as shell assignments (a process here costs more than many a run):
#   MUTEX_N      every lock of the mutex family (not pthread)
#   OWN_LIST     park for every lock; spin and yield for the locks whose own
#                code reads the policy, and WAIT_C_REPS for wait.c's path,
#                the same for every other lock (helpers.bash
#                policy_own_pick), comma-separated; OWN_N of them
#   RW_PLAIN     the plain rwlocks, comma-separated; RW_PLAIN_N
#   RW_OWN       the rwlocks (and compositions) whose waiting path is their
#                own, and two whose waiting is wait.c's (own_wait_rwalgos)
#   RW_WRAPPED   the NAME+WRAPPER compositions
#   SPIN_N       every spinlock
setup_file() {
  untraced lists >"$BATS_FILE_TMPDIR/lists"
}
lists() {
  local own
  # shellcheck disable=SC2046
  own=$(policy_own_pick $(algos lock))
  echo "MUTEX_N=$(algos lock | wc -l)"
  echo "OWN_LIST=$(paste -sd, - <<<"$own")"
  echo "OWN_N=$(wc -l <<<"$own")"
  own=$(rwalgos lock | grep -v +)
  echo "RW_PLAIN=$(paste -sd, - <<<"$own")"
  echo "RW_PLAIN_N=$(wc -l <<<"$own")"
  echo "RW_OWN=' $(own_wait_rwalgos lock | tr '\n' ' ') '"
  echo "RW_WRAPPED='$(rwalgos lock wrapper | tr '\n' ' ')'"
  echo "SPIN_N=$(spinalgos lock | wc -l)"
}
setup() {
  # shellcheck disable=SC1091
  source "$BATS_FILE_TMPDIR/lists"
}

# all_ok N: the run succeeded and printed N lines "after_release: OK
# algo=A wait=W runs=N" (one per algo and policy) and nothing else
all_ok() {
  local n=$1 l ok=0
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  for l in "${lines[@]}"; do
    [[ "$l" == "after_release: OK "* ]] || { echo "$output"; return 1; }
    ok=$((ok + 1))
  done
  [ "$ok" -eq "$n" ] || { echo "$output"; return 1; }
}

@test "every lock under park, every policy for the locks with a waiting path of their own and wait.c's: an unlocker stopped right after its release writes and reads nothing of the lock once it is destroyed and unmapped or reused" {
  run timeout -k 5 300 "$A" -a all -w park -W 120
  all_ok "$MUTEX_N" || return 1
  local w
  for w in spin yield; do
    run timeout -k 5 300 "$A" -a "$OWN_LIST" -w $w -W 120
    all_ok "$OWN_N" || return 1
  done
}

# Every rwlock and NAME+bravo composition under park, whose release may wake
# a sleeper after the store; under spin and yield too those whose waiting
# path is their own and two whose waiting is wait.c's (helpers.bash:
# own_wait_rwalgos; no rwlock reads the policy itself). The plain rwlocks
# in one process; a composition in a process of its own (one composition
# per wrapper in a process).
rw_after_release() {
  local a w
  run timeout -k 5 300 "$A" -f rwlock -a "$RW_PLAIN" -w park -W 120 "$@"
  all_ok "$RW_PLAIN_N" || return 1
  for a in $RW_OWN; do
    [[ "$a" == *+* ]] && continue
    for w in spin yield; do
      run timeout -k 5 300 "$A" -f rwlock -a "$a" -w $w -W 120 "$@"
      all_ok 1 || return 1
    done
  done
  for a in $RW_WRAPPED; do
    w=park
    [[ "$RW_OWN" == *" $a "* ]] && w=all
    run timeout -k 5 120 "$A" -f rwlock -a "$a" -w "$w" -W 60 "$@"
    all_ok "$([ "$w" = all ] && echo 3 || echo 1)" || return 1
  done
}

@test "every rwlock and NAME+bravo composition under park, every policy for those with their own waiting path and wait.c's: a read or a write unlocker stopped right after its release touches nothing of the lock once it is destroyed and unmapped or its block or lines reused (c-rw-wp's cohort writer released its local lock after the global one; a biased reader's slot, the inner lock's releases)" {
  rw_after_release
}

@test "every spinlock, every policy: the same (tas, ttas, backoff, ticket16 in a pthread_spinlock_t's 4 bytes)" {
  run timeout -k 5 120 "$A" -a spin -W 60
  all_ok $((SPIN_N * 3))
}

# Without destroy (issue 30: C++'s std::mutex never calls it): the page is
# unmapped and the pool reclaims the lock's block or lines (ls_ext_scan)
# while the unlocker is stopped. mutexee's unlock used to watch the word
# after its release (its destroy waited for it): it faulted here.
@test "every lock under park, every policy for those with their own waiting path and wait.c's, no destroy: an unlocker stopped right after its release touches nothing of the lock once its page is unmapped and its block or lines reclaimed by the pool and reused" {
  run timeout -k 5 300 "$A" -a all -w park -W 120 -N
  all_ok "$MUTEX_N" || return 1
  local w
  for w in spin yield; do
    run timeout -k 5 300 "$A" -a "$OWN_LIST" -w $w -W 120 -N
    all_ok "$OWN_N" || return 1
  done
}

@test "every rwlock and NAME+bravo composition (as above), every spinlock, every policy, no destroy: the same" {
  rw_after_release -N || return 1
  run timeout -k 5 120 "$A" -a spin -W 60 -N
  all_ok $((SPIN_N * 3))
}

@test "trylock of a free lock while its last unlocker has not returned: never EBUSY (hmcs, hclh: no fast-path flag; shfl: no-steal bit)" {
  # the scenarios above, for the locks that had the window; under park,
  # shfl's head has slept and disabled stealing when the unlocker stops
  run timeout -k 5 120 "$A" -a hmcs,hclh,shfl -w park -W 60
  all_ok 3
}

@test "c-tkt-tkt under park: a release wakes only the next waiter, and its new holder wakes the one after it early" {
  run timeout -k 2 60 "$UNIT/handoff" -a c-tkt-tkt -T 30 only-next
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  run timeout -k 2 60 "$UNIT/handoff" -a c-tkt-tkt -T 30 prewake
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "cna: a release looks at no more than LOCKSWAP_CNA_SCAN waiters, with its pass bound reached and one cluster" {
  run timeout -k 2 60 "$UNIT/cna_scan" -n 10 -s 4
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [[ "$output" == "cna_scan: OK max="[1-4] ]]
}

@test "cna: LOCKSWAP_CNA_SCAN through the shim (a bad value is one line and exit 2)" {
  run under cna -- env LOCKSWAP_CNA_SCAN=8 "$PROGS/hello"
  [ "$status" -eq 0 ]
  run under cna -- env LOCKSWAP_CNA_SCAN=0 "$PROGS/hello"
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *LOCKSWAP_CNA_SCAN* ]]
}

@test "after_release: bad usage is one line and exit 2" {
  run "$A" -a nosuch
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"unknown algorithm 'nosuch' (valid: "* ]]
  run "$A" -w nap
  [ "$status" -eq 2 ]
  [[ "$output" == *"(valid: spin, yield, park, all)"* ]]
  run "$A" -f rw
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown family 'rw' (valid: mutex, rwlock)"* ]]
  run "$A" -f rwlock -a nosuch
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"(valid: pthread, mutex, "* ]]
  run "$A" -f rwlock -a mutex -m c-tkt-tkt
  [ "$status" -eq 2 ]
  [[ "$output" == *"keeps per-cluster lines"* ]]
}
