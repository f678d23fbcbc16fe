#!/usr/bin/env bats
# Every reader-writer lock through the generic validator, tests/unit/
# rwstress.c (issue 19, item 5): no writer beside a reader or another
# writer, no lost wake-up (every thread finishes), timeouts leave nothing
# behind (every lock is free at the end; a claim left behind hangs the
# readers, and the timeout turns that into a failure with the report of
# where each thread was), no node leaked; every preference a lock may ask
# for (-k reader: nothing asked, the default kind's reader preference;
# writer: LS_RW_PREFER_WRITER; own: LS_RW_OWN_POLICY, the algorithm's own
# policy, issue 32), every waiting policy, more threads
# than cores, plain and -inject builds. Each case runs for EVERY algorithm
# of `lockswap --names rwlock --cap lock` (NAME+WRAPPER compositions too).
#
# Yield runs are sized by @N@ (helpers.bash, iters_for); spin and park runs
# by what they check (issue 35, item 3): enough critical sections that
# readers and writers overlap on every lock, many times over (500-800
# iterations a thread), not thousands.
#
#   RW_ALGOS="a b"      run only these algorithms
#   STRESS_TIMEOUT=S    seconds per run (default 120: a hang detector)
load helpers
load validate
: "${STRESS_TIMEOUT:=120}"
S="$UNIT/rwstress"

# rw_all "SEEDS" ARGS...: the validator over every rwlock algorithm, one
# process for the algorithms whose run is sized alike (validate.bash; each
# run in a child of its own).
rw_all() {
  local seeds=$1
  shift
  validate_lists "$(rwalgos lock)" "$seeds" "$@"
}

@test "rwstress catches a writer beside readers, a timed-out writer's leftover claim, a leaked node" {
  # (the overlap, seen either way: a writer beside readers, or a reader
  # that took the double before the writer but was preempted before it
  # counted itself inside, beside the writer; which comes first is the
  # schedule's)
  run timeout 30 "$S" -a selftest-rw-nowait -t 4 -n 2000 -r 50
  [ "$status" -eq 1 ]
  [[ "$output" == *"a writer entered beside"*"reader(s)"* || "$output" == *"a reader entered beside a writer"* ]] ||
    { echo "$output"; return 1; }
  # its readers yield in a loop once stuck: a second of it is enough (the
  # first timed-out writer leaves its claim within milliseconds)
  run timeout -s TERM 1 "$S" -a selftest-rw-stuck -t 4 -n 100000 -m timed -r 50 -p 1000
  [ "$status" -eq 124 ]
  [[ "$output" == *"stopped by a timeout"*"acquiring (read) lock 0"* ]]
  run timeout 30 "$S" -a selftest-rw-leak -t 2 -n 100 -r 100
  [ "$status" -eq 1 ]
  [[ "$output" == *"200 queue node(s) still in use"* ]]
}

@test "rwstress: bad usage is one line and exit 2; a correct run one OK line; -a and -s take lists (each run a child of its own: two compositions of one wrapper too), a failed run named with its seed" {
  # (the double that leaks a node fails every run, whatever the
  # scheduling: a writer beside readers, above, needs them to overlap)
  run timeout 60 "$S" -a selftest-rw-leak,central -s 3,4 -t 4 -n 500 -r 50 -q
  [ "$status" -eq 1 ]
  [[ "$output" == *"FAIL algo=selftest-rw-leak seed=3"* && "$output" == *"FAIL algo=selftest-rw-leak seed=4"* ]] || { echo "$output"; return 1; }
  [[ "$output" != *"algo=central"* ]] || { echo "$output"; return 1; }
  run timeout 60 "$S" -a pf-t+bravo,central+bravo -s 3,4 -t 3 -n 200
  [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 4 ] || { echo "$output"; return 1; }
  [[ "${lines[3]}" == "rwstress: OK algo=central+bravo "*" seed=4 "* ]] || { echo "$output"; return 1; }
  run "$S" -a nosuch
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"unknown algorithm 'nosuch' (valid: "*"pf-t"* ]]
  run "$S" -a pthread
  [ "$status" -eq 2 ]
  [[ "$output" == *"not a lock"* ]]
  run "$S" -a central -k both
  [ "$status" -eq 2 ]
  [[ "$output" == *"(valid: reader, writer, own)"* ]]
  run timeout 30 "$S" -a central -t 3 -n 500 -m mix -l 2
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == "rwstress: OK algo=central kind=reader wait=park threads=3 locks=2"*"max_readers="* ]]
}

@test "every rwlock, spin, 2 threads: lock() and mix, every preference" {
  rw_all 1 "$S" -w spin -t 2 -n 800 -m lock
  rw_all 2 "$S" -w spin -t 2 -n 500 -m mix -l 3 -k writer
  rw_all 11 "$S" -w spin -t 2 -n 500 -m mix -l 3 -k own
}

@test "every rwlock, yield and park, 6 threads: mix (reads, writes, try, timed, two locks, self-checks), every preference" {
  rw_all 3 "$S" -w yield -t 6 -n @800@ -m mix -l 3
  rw_all 4 "$S" -w park -t 6 -n 500 -m mix -l 3 -k writer
  rw_all 12 "$S" -w park -t 6 -n 400 -m mix -l 3 -k own
}

@test "every rwlock, park with no spinning or yielding (every waiter sleeps), 6 threads, half writes" {
  LOCKSWAP_YIELD=0 rw_all 5 "$S" -w park -S 0 -t 6 -n 500 -r 50 -m lock
}

@test "every rwlock, park, 6 threads, timed only with a 10 us patience (many timeouts, nothing left behind)" {
  rw_all 6 "$S" -w park -t 6 -n 400 -m timed -p 10000 -r 60
}

@test "every rwlock, -inject: spin 2 threads, yield and park 6 threads, mix, every preference" {
  rw_all 7 "$S-inject" -w spin -t 2 -n 300 -m mix -l 3
  rw_all 8 "$S-inject" -w yield -t 6 -n @300@ -m mix -l 3 -k writer
  rw_all 9 "$S-inject" -w park -t 6 -n 400 -m mix -l 3
  LOCKSWAP_YIELD=0 rw_all 10 "$S-inject" -w park -S 0 -t 6 -n 300 -m mix -l 3 -k writer
  rw_all 13 "$S-inject" -w yield -t 6 -n @300@ -m mix -l 3 -k own
}

@test "the mutex-serialised mode, alone and under BRAVO, over a queue lock, a try lock, a non-blocking try lock (nodes in per-thread rings), an out-of-line lock and a wrapped lock (LOCKSWAP_ALGO): mutex+bravo has the capabilities the mutex lock gives (its queue nodes counted)" {
  local m
  for m in mcs clh-try clh-nb alock ticket+gcr; do
    LOCKSWAP_ALGO=$m RW_ALGOS="mutex mutex+bravo" rw_all 11 "$S" -w park -t 6 -n 500 -m mix -l 3 || return 1
  done
}
