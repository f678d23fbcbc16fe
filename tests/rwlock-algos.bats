#!/usr/bin/env bats
# What the reader-writer algorithms of locks/rwlock/ promise beyond the
# family's contract (issue 19, item 3), each checked from queued waiters
# (tests/unit/rw_order.c) or step by step (tests/unit/bravo_revoke.c),
# deterministically, and each check shown to catch a lock without the
# property:
#   mcs-rw   FIFO: writers in arrival order, the readers between two
#            writers together;
#   c-rw-wp  writer preference, the readers' patience barrier, the cohort's
#            locality on a fake topology (thread:2) and its pass bound; with
#            no address space left, no lines and no wait for memory
#            (tests/unit/rw_nomem.c, for every rwlock with capability hier);
#   central (and every other rwlock) under park: a release wakes only
#            the waiters it lets in (pf-t: the last reader's release only;
#            tests/unit/rw_wake.c: a writer out every reader and the next
#            writer, the last reader out the writer; a sleeper woken for
#            nothing sleeps again and its count of sleeps grows; a timed
#            writer that gives up beside a sleeping writer leaves it its
#            wake-up);
#   pf-t     trywrlock sees no reader inside only when none is (its
#            reader counts driven through the bad interleaving step by
#            step: tests/unit/pft_trywrlock.c);
#   bravo    a slow reader sets the bias, a writer revokes it and waits for
#            the visible readers, a revocation that gives up leaves them to
#            the next writer, and the bias comes back after the inhibition.
# The family's own tests (exclusion, POSIX rules, stress) run these
# algorithms as every other.
load helpers
TEST_TIMEOUT=60
ORDER="$UNIT/rw_order"
WAKE="$UNIT/rw_wake"
REVOKE="$UNIT/bravo_revoke"
# c-rw-wp's readers wait this long (10 s) before they hold writers back:
# in the order tests below, never
PATIENT=LOCKSWAP_CRWWP_PATIENCE=10000000

order() { "$RUN_LIMIT" -k 5 "$(hang_timeout)" "$@"; }

# The loops over every rwlock below run untraced (helpers.bash: bats'
# DEBUG trap on each of their commands cost more than the runs), without
# bats' run; each failure names its algorithm and case, with the output.
# each_wake_fail LABEL CMD...: CMD under a hang timeout; its output in OUT;
# on a failure, LABEL and the output appended to FAILED.
each_wake_fail() {
  local label=$1
  shift
  OUT=$("$RUN_LIMIT" -k 5 "$TMO" "$@" 2>&1) && return 0
  FAILED+=("$label: exit $?: $OUT")
  return 1
}

@test "every rwlock with capability fifo (mcs-rw) serves writers in arrival order and the readers between them together" {
  local a
  for a in $(rwalgos fifo); do
    run order "$ORDER" -a "$a" -o r0w0r0r0w0r0w0w0r0r0 -F
    assert_success
    assert_line "order: w0 r0 w0 r0 r0 w0 r0 w0 w0 r0 r0"
  done
}

@test "pf-t: a trywrlock that a reader passes through between its looks at the counts takes no ticket while an older reader is inside (the reader and the next writer waited for each other for ever)" {
  run timeout -k 5 "$(hang_timeout)" "$UNIT/pft_trywrlock-inject" -w all
  assert_success
  assert_output "pft_trywrlock: OK"
}

@test "every rwlock under park, under its own policy and reader preference: a writer's release wakes the readers and the next writer only, the last reader's release the writer it lets in only (central woke every sleeper; pf-t's writers waiting for a ticket still all wake)" {
  wake_each() {
    local a c k
    for a in $(rwalgos lock); do
      for k in own reader; do
        for c in writer-out reader-out; do
          # pf-t: every writer waiting for its ticket sleeps on wout (pf_t.c)
          [[ "$a" == pf-t* && "$c" == writer-out ]] && continue
          # c-rw-wp under reader preference: the writers wait for the
          # readers outside the writers' lock, each on an indicator, and the
          # last reader out wakes them all (c_rw_wp.c, README)
          [[ "$a" == c-rw-wp* && "$k" == reader && "$c" == reader-out ]] && continue
          # NAME+bravo under reader preference: a writer that finds a biased
          # reader revokes without the inner write lock and polls the slots
          # (bravo.c: no reader may be kept out meanwhile), so the writers
          # that came after it poll too and take the inner lock in any order
          # once the reader is out; none of them sleeps to be woken
          [[ "$a" == *+bravo && "$k" == reader && "$c" == reader-out ]] && continue
          each_wake_fail "$a -k $k $c" "$PATIENT" "$WAKE" -a "$a" -k "$k" -T "$T50" "$c"
        done
      done
    done
  }
  local TMO T50 FAILED=()
  TMO=$(hang_timeout) T50=$(hang_timeout 50)
  untraced wake_each || true # (FAILED says what failed)
  [ ${#FAILED[@]} -eq 0 ] || { printf '%s\n' "${FAILED[@]}"; return 1; }
}

@test "every rwlock through its table (rw_prefer, park): the preference each acquisition asks for (reader, writer, own), and a native timed writer that keeps readers out as an untimed one, gets the lock, or gives up at its deadline letting in the reader it kept out and leaving nothing behind (issue 32; the mutex-serialised mode: the writer cases)" {
  # one process per algorithm, its every case in turn (all: the writer
  # cases alone for an exclusive one), each on a fresh lock, an OK line each
  prefer_each() {
    local a excl n
    excl=" $(rwalgos exclusive | tr '\n' ' ') "
    for a in $(rwalgos); do
      [ "$a" = pthread ] && continue
      n=6
      [[ "$excl" == *" $a "* ]] && n=2
      each_wake_fail "$a" "$UNIT/rw_prefer" -a "$a" -T "$T50" all || continue
      [ "$(grep -c "^rw_prefer: OK algo=$a case=" <<<"$OUT")" -eq "$n" ] || FAILED+=("$a: not $n OK lines: $OUT")
    done
  }
  local TMO T50 FAILED=()
  TMO=$(hang_timeout) T50=$(hang_timeout 50)
  untraced prefer_each || true # (FAILED says what failed)
  [ ${#FAILED[@]} -eq 0 ] || { printf '%s\n' "${FAILED[@]}"; return 1; }
}

@test "every rwlock under park, every preference: a timed writer that gives up beside a sleeping writer takes nothing of its wake-up (c-rw-wp under reader preference cleared the bit that writer slept on, and it slept for ever)" {
  timed_each() {
    local a k
    for a in $(rwalgos lock); do
      for k in own reader writer; do
        each_wake_fail "$a -k $k" "$PATIENT" "$WAKE" -a "$a" -k "$k" -T "$T50" timed-out || continue
        [ "$OUT" = "rw_wake: timed-out algo=$a" ] || FAILED+=("$a -k $k: $OUT")
      done
    done
  }
  local TMO T50 FAILED=()
  TMO=$(hang_timeout) T50=$(hang_timeout 50)
  untraced timed_each || true # (FAILED says what failed)
  [ ${#FAILED[@]} -eq 0 ] || { printf '%s\n' "${FAILED[@]}"; return 1; }
}

@test "rw_wake and bravo_revoke: bad usage (an unknown case, glibc's own rwlock as the lock) is one line and exit 2" {
  run "$WAKE" -a central nosuch
  [ "$status" -eq 2 ]
  assert_output "rw_wake: unknown case 'nosuch' (valid: writer-out, reader-out, timed-out)"
  run "$WAKE" -a pthread writer-out
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  run "$REVOKE" -i pthread
  [ "$status" -eq 2 ]
  assert_output "bravo_revoke: -i: 'pthread' is glibc's own rwlock, not a lock BRAVO can wrap"
}

@test "the FIFO check catches a lock that lets a writer pass a reader (c-rw-wp)" {
  run order "$PATIENT" "$ORDER" -a c-rw-wp -o r0w0 -F
  [ "$status" -eq 1 ]
  assert_output --partial "not FIFO"
}

@test "c-rw-wp: writers queued behind the holder go before readers that came first" {
  local a
  for a in c-rw-wp c-rw-wp+bravo; do
    run order "$PATIENT" "$ORDER" -a "$a" -c 2 -o r0w1r0w0r1 -W
    assert_success
  done
  run order "$ORDER" -a mcs-rw -o r0w0 -W
  [ "$status" -eq 1 ]
  assert_output --partial "not writer preference"
}

@test "c-rw-wp: a reader out of patience holds back the writers that come after it" {
  local a
  for a in c-rw-wp c-rw-wp+bravo; do
    run order LOCKSWAP_CRWWP_PATIENCE=1 "$ORDER" -a "$a" -c 2 -o r0w1r1w0 -R
    assert_success
  done
  run order "$PATIENT" "$ORDER" -a c-rw-wp -c 2 -o r0w1r1w0 -R
  [ "$status" -eq 1 ]
  assert_output --partial "which arrived after it"
}

@test "every rwlock with capability hier (c-rw-wp): the write lock stays in a cluster while writers of it wait (thread:2)" {
  local a
  for a in $(rwalgos hier); do
    run order "$PATIENT" "$ORDER" -a "$a" -c 2 -o w1w0w1w0w1w0 -s 1
    assert_success
    assert_line "order: w0 w0 w0 w0 w1 w1 w1"
  done
  run order "$ORDER" -a mcs-rw -c 2 -o w1w0w1w0w1w0 -s 1
  [ "$status" -eq 1 ]
  assert_output --partial "hand-offs of the write lock to another cluster"
}

@test "every rwlock with capability hier: LOCKSWAP_COHORT_PASSES bounds the hand-offs inside a cluster while another waits" {
  local a
  for a in $(rwalgos hier); do
    run order "$PATIENT" "$ORDER" -a "$a" -c 2 -o w1w0w0w0w0 -b 1
    assert_success
  done
  run order "$PATIENT" "$ORDER" -a c-rw-wp -c 2 -o w1w0w0w0w0 -b 1 -P 64
  [ "$status" -eq 1 ]
  assert_output --partial "in a row inside one cluster"
}

@test "bravo over every lock: biased readers skip the inner lock; a writer revokes and waits for them; the bias returns after the inhibition" {
  revoke_each() {
    local inner
    for inner in $(rwalgos lock | grep -v +); do
      each_wake_fail "$inner" "$REVOKE" -i "$inner" || continue
      [[ "$OUT" == *"bravo_revoke: OK inner=$inner"* ]] || FAILED+=("$inner: $OUT")
    done
  }
  local TMO FAILED=()
  TMO=$(hang_timeout)
  untraced revoke_each || true # (FAILED says what failed)
  [ ${#FAILED[@]} -eq 0 ] || { printf '%s\n' "${FAILED[@]}"; return 1; }
}

@test "every rwlock with capability hier, with no address space left: no lines, the global ticket lock and one inline indicator, nothing waits for memory; lines again after destroy" {
  local a
  for a in $(rwalgos hier); do
    run timeout -k 5 "$(hang_timeout)" "$UNIT/rw_nomem" -a "$a"
    assert_success
    assert_output --partial "every lock flat"
  done
}
