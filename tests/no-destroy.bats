#!/usr/bin/env bats
# Locks that are never destroyed (issue 30): libstdc++'s std::mutex and its
# kin have trivial destructors under glibc, so a C++ program frees them
# without pthread_mutex_destroy (std::shared_mutex without
# pthread_rwlock_destroy), and C programs free() mutexes the same way.
# tests/progs/cxx_churn.cpp makes objects holding such a lock, shares them
# between 2 threads that contend on them, and deletes them; the resident
# set's growth from the end of a warm-up to the end must stay within 1 MB of
# glibc's own. A lock whose out-of-line state or per-cluster lines outlive
# it grows by that state for every object (hundreds of bytes to kilobytes:
# tens of megabytes here).
load helpers
P="$PROGS/cxx_churn"
: "${CHURN_OBJECTS:=100000}" "${CHURN_WARMUP:=25000}"
SLACK_KB=1024

# growth KIND [OBJECTS WARMUP] [ENV...]: runs the program (under the
# environment given, e.g. LD_PRELOAD=...), prints its RSS growth in kB.
growth() {
  local kind=$1 n=$2 w=$3 out
  shift 3
  out=$(timeout -k 5 "$(hang_timeout)" env "$@" "$P" "$kind" "$n" "$w" 2>&1) || { echo "$out" >&2; return 1; }
  [[ "$out" =~ rss_growth_kb=([0-9-]+) ]] || { echo "$out" >&2; return 1; }
  echo "${BASH_REMATCH[1]}"
}

# within VAR "NAMES" KIND [N W] [WAIT]: every name's growth is within
# SLACK_KB of glibc's (measured first, natively, with the same counts).
within() {
  local var=$1 names=$2 kind=$3 n=${4:-$CHURN_OBJECTS} w=${5:-$CHURN_WARMUP} wait=${6:-} base g a failed=()
  base=$(growth "$kind" "$n" "$w") || { echo "glibc: $kind failed"; return 1; }
  for a in $names; do
    local env=(LD_PRELOAD="$LIB" "$var=$a")
    [ -n "$wait" ] && env+=(LOCKSWAP_WAIT="$wait")
    g=$(growth "$kind" "$n" "$w" "${env[@]}") || { failed+=("$a(failed)"); continue; }
    [ "$g" -le $((base + SLACK_KB)) ] || failed+=("$a(+${g}kB)")
  done
  [ ${#failed[@]} -eq 0 ] || { echo "$kind, $n objects, glibc +${base}kB; over +$((base + SLACK_KB))kB: ${failed[*]}"; return 1; }
}

# NAME+gcr: the wrapper allocates nothing (locks/wrap/gcr.c), so a
# composition leaves behind what NAME does, through the shim's one path for
# a wrapped state: the compositions whose state the shim keeps out of line
# (the block holds the wrapper's word too), and the first and the last of
# the others
gcr_algos() {
  local a inline=()
  for a in $(algos lock); do
    if env LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$a+gcr" LOCKSWAP_VERBOSE=1 "$PROGS/hello" 2>&1 | grep -q ' state=out-of-line'; then
      echo "$a+gcr"
    else
      inline+=("$a+gcr")
    fi
  done
  printf '%s\n' "${inline[0]}" "${inline[@]: -1}"
}

mutex_algos() {
  algos lock
  gcr_algos
}

rw_algos() {
  rwalgos lock
}

@test "glibc itself passes every cxx_churn kind (the specification)" {
  local k
  for k in $("$P" 2>&1 | sed -n 's/^cases://p'); do
    run timeout 120 "$P" "$k" "$CHURN_OBJECTS" "$CHURN_WARMUP"
    [ "$status" -eq 0 ] || { echo "native $k: $output"; return 1; }
  done
}

@test "std::mutex made, contended and deleted without destroy: every algorithm, and NAME+gcr where its state differs, RSS within 1 MB of glibc's" {
  within LOCKSWAP_ALGO "$(mutex_algos)" mutex
}

@test "std::timed_mutex (timed-out waiters), std::recursive_mutex, std::condition_variable: every algorithm, RSS within 1 MB of glibc's" {
  local k names
  names=$(algos lock)
  for k in timed-mutex recursive-mutex condvar; do
    within LOCKSWAP_ALGO "$names" "$k" || return 1
  done
}

# Under yield an algorithm's code differs from park's only where it reads the
# policy itself (helpers.bash: own_wait_algos, with two of wait.c's shared path)
@test "std::mutex under the yield policy: the algorithms with a yield path of their own, RSS within 1 MB of glibc's" {
  within LOCKSWAP_ALGO "$(own_wait_algos)" mutex "$CHURN_OBJECTS" "$CHURN_WARMUP" yield
}

@test "2,000,000 std::mutex objects: the algorithms whose state or lines live out of line, RSS within 1 MB of glibc's" {
  within LOCKSWAP_ALGO "$(algos hier) alock clh-tp mutexee" mutex 2000000 100000
}

@test "std::shared_mutex and std::shared_timed_mutex (reads and writes): every rwlock algorithm and NAME+bravo, RSS within 1 MB of glibc's" {
  local k
  for k in shared-mutex shared-timed-mutex; do
    within LOCKSWAP_RWALGO "$(rw_algos)" "$k" || return 1
  done
}

@test "under an algorithm map, the shim's out-of-line states of mutexes and rwlocks made by a rule: RSS within 1 MB of glibc's" {
  within LOCKSWAP_ALGO_MAP "*=alock *=clh-tp+gcr" mutex
  within LOCKSWAP_ALGO_MAP "*=mcs-rw+bravo *=c-rw-wp+bravo" shared-mutex
}

@test "cxx_churn: bad usage lists the cases and exits 2" {
  run "$P" nosuch
  [ "$status" -eq 2 ]
  [[ "$output" == *"cases: mutex timed-mutex recursive-mutex shared-mutex shared-timed-mutex condvar"* ]]
}

# A read hold belongs to one rwlock's life (issue 30, item 3): the shim's
# per-thread read table tells a new life at the same address from the one
# it recorded (shim_rwlock.h, "A life"), and keeps a thread's holds until
# the last TSD destructor (rwlock_held.h). Before, under every rwlock
# algorithm, the second rdlock was taken for a recursive hold (a writer got
# the lock beside the reader) and the 9th-12th holds were lost.
@test "glibc itself passes every rwlock_life case: a read hold belongs to one rwlock's life (the specification)" {
  native_passes "$PROGS/rwlock_life"
}

@test "a read hold belongs to one rwlock's life (destroy or init again, reused, zeroed, copied; a late key's destructor unlocks 12): every rwlock algorithm and NAME+bravo, default and yield policies" {
  each_rwalgo "" -- "$PROGS/rwlock_life" all
  RW_ALGOS="mutex mcs-rw c-rw-wp+bravo" each_rwalgo "" yield -- "$PROGS/rwlock_life" all
}

@test "a read hold belongs to one rwlock's life under an algorithm map with rwlock rules" {
  local m
  for m in '*=mcs-rw' '*=c-rw-wp+bravo' '*=central'; do
    run timeout -k 5 "$(hang_timeout)" env LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP="$m" "$PROGS/rwlock_life" all
    [ "$status" -eq 0 ] || { echo "map $m: $output"; return 1; }
  done
}
