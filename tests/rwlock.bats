#!/usr/bin/env bats
# pthread_rwlock_* through lockswap, with glibc 2.36's semantics, under every
# reader-writer algorithm (`lockswap --names rwlock`, compositions included)
# and every waiting policy (issue 19, items 1 and 5; issue 25 for the
# misuses). tests/progs/rwlock_semantics.c is the specification: each of its
# cases passes natively. It runs every word it is given in one process, in
# order: `all` is every glibc case but three (eagain: slow, run once below;
# pshared, a fork, run with the sleeping waiters; glibc-layout, glibc's own
# fields), and each algorithm's park run adds the lockswap-only cases.
# Every algorithm runs under park, with and without spinning first (its own
# acquisition and wake-up code); spin and yield, where the rwlock algorithms
# share locks/common/wait.c's path and the shim never reads the policy, run
# for two of them (helpers.bash: each_own_wait_rw; tests/rwlock-stress.bats
# runs every algorithm under spin, where races show).
load helpers
TEST_TIMEOUT=60
P="$PROGS/rwlock_semantics"

@test "glibc itself passes every rwlock_semantics case (the specification)" {
  # all and the three it leaves out, in one process as the algorithms run them
  run timeout "$(hang_timeout)" "$P" all pshared eagain glibc-layout
  [ "$status" -eq 0 ] || { echo "native: $output"; return 1; }
}

@test "the lockswap-only cases fail under glibc: they check what lockswap does better after a misuse" {
  # all at once, each in a process of its own: glibc deadlocks in three of
  # them (a hang is a failure too, ended after 3 s), and they wait out
  # their 3 s together, not one after another
  local c pids=() names=() i st
  for c in $("$P" 2>&1 | sed -n 's/^lockswap-cases://p'); do
    timeout 3 "$P" "$c" >/dev/null 2>&1 &
    pids+=($!) names+=("$c")
  done
  [ ${#pids[@]} -ge 8 ] || { echo "only ${#pids[@]} lockswap-only cases"; return 1; }
  for i in "${!pids[@]}"; do
    st=0
    wait "${pids[i]}" || st=$?
    [ "$st" -ne 0 ] || { echo "${names[i]} passes natively: it checks nothing glibc lacks"; return 1; }
  done
}

@test "spin (wait.c's shared path): initialisers, copies, EDEADLK, EINVAL, ETIMEDOUT, EBUSY, recursion, kinds, timeouts, misuse, destroy, many holds, exclusion" {
  each_own_wait_rw lock spin -- "$P" @ARG@
}

@test "yield (wait.c's shared path): the same" {
  each_own_wait_rw lock yield -- "$P" @ARG@
}

# One process per algorithm runs @ARG@ (all: the kind's preference and the
# timed writer included, for each algorithm whose readers share the lock)
# and then the lockswap-only cases, in order (a failure names its line).
@test "every rwlock algorithm, park: the same; the kind decides the preference (issue 32): a default-kind lock admits a reader beside readers while writers wait, also when a reader waits for another thread's reader (tst-rwlock16's pattern), and a timed writer of a PREFER_WRITER_NONRECURSIVE_NP lock keeps new readers out, gets the lock, and when it gives up lets the readers behind it in (tst-rwlock15's pattern), under every algorithm whose readers share the lock and every wrapper; misuse and asynchronous cancellation: after an unlock of an unheld rwlock, a double unlock, an unlock by a non-holder, unlocks too many after a hand-over to a blocked reader or writer, or a waiter cancelled asynchronously, the lock works fully (glibc's writers would wait for ever)" {
  # shellcheck disable=SC2046
  each_rwalgo lock park -- "$P" @ARG@ $("$P" 2>&1 | sed -n 's/^lockswap-cases://p')
}

# (pshared: no spinning, so a waiter sleeps at once, on a futex only
# glibc's process-shared rwlock shares across processes)
@test "every rwlock algorithm, park with no spinning or yielding (every waiter sleeps): the same; process-shared rwlocks stay glibc's: a writer in a child process is woken by the parent's unlock" {
  LOCKSWAP_SPIN=0 LOCKSWAP_YIELD=0 each_rwalgo lock park -- "$P" @ARG@ pshared
}

@test "LOCKSWAP_RWPOLICY=algorithm: every case but the default kind's reader preference (the timed writer's included) passes under every algorithm and wrapper, and the writer-preferring algorithms then keep a reader out behind a waiting writer (their own policy)" {
  LOCKSWAP_RWPOLICY=algorithm each_rwalgo lock park -- "$P" @ARG@ || return 1
  local a
  for a in central-wp pf-t mcs-rw c-rw-wp; do
    [ -n "${RW_ALGOS:-}" ] && [[ " $RW_ALGOS " != *" $a "* ]] && continue
    run env LOCKSWAP_RWPOLICY=algorithm LD_PRELOAD="$LIB" LOCKSWAP_RWALGO="$a" timeout -k 5 "$(hang_timeout)" "$P" reader-preference
    [ "$status" -eq 1 ] || { echo "$a: own policy still reader preference ($status): $output"; return 1; }
  done
}

@test "LOCKSWAP_RWPOLICY: kind and algorithm accepted, anything else refused with one line naming the valid values; listed among the valid variables" {
  run env LD_PRELOAD="$LIB" LOCKSWAP_RWALGO=pf-t LOCKSWAP_RWPOLICY=kind "$P" share
  assert_success
  run env LD_PRELOAD="$LIB" LOCKSWAP_RWALGO=pf-t LOCKSWAP_RWPOLICY=algorithms "$P" share
  assert_failure
  assert_output "lockswap: LOCKSWAP_RWPOLICY: unknown policy 'algorithms' (valid: kind, algorithm)"
  run env LD_PRELOAD="$LIB" LOCKSWAP_RWALGO=pf-t LOCKSWAP_RWPOLICYY=1 "$P" share
  assert_failure
  # the mistyped name's message names the valid one (issue 34: the nearest)
  [[ "$output" =~ LOCKSWAP_RWPOLICY([^A-Z_]|$) ]] || { echo "$output"; return 1; }
}

@test "asynchronous cancellation with glibc's own mutexes (LOCKSWAP_ALGO=pthread): a cancelled rwlock waiter still leaves the lock working (the rwlock family is lockswap's even when the mutexes are not)" {
  local a excl failed=()
  excl=" $(rwalgos exclusive | tr '\n' ' ') "
  for a in $(rwalgos lock); do
    [[ "$excl" == *" $a "* ]] && continue # the mutex-serialised mode needs a lockswap mutex lock
    LOCKSWAP_ALGO=pthread under_rw "$a" -- "$P" lockswap-async-cancel >/dev/null 2>&1 || failed+=("$a")
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed under: ${failed[*]}"; return 1; }
}

@test "EAGAIN at glibc's reader limit, 2^28 - 1 holds of one thread (the shim counts recursive reads for every algorithm)" {
  run under_rw central -- "$P" eagain
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "the default keeps glibc's own rwlock: no LOCKSWAP_RWALGO, or pthread" {
  run env LD_PRELOAD="$LIB" timeout 20 "$P" glibc-layout
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  run under_rw pthread -- "$P" glibc-layout
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  run under_rw central -- "$P" glibc-layout
  [ "$status" -ne 0 ]
}

@test "the mutex-serialised mode through the shim over inline, out-of-line, queue, try, hierarchical and wrapped mutex locks (the wrapper word before the state)" {
  local m
  for m in alock mcs clh-try hmcs cal mcs+gcr; do
    run env LD_PRELOAD="$LIB" LOCKSWAP_RWALGO=mutex LOCKSWAP_ALGO="$m" timeout "$(hang_timeout)" "$P" exclusive-ok
    [ "$status" -eq 0 ] || { echo "$m: $output"; return 1; }
  done
}
