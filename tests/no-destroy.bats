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
# 30,000 objects after a warm-up of 10,000: a lock that leaks its smallest
# block (one 64-byte line) per object grows 1.9 MB, past the 1 MB slack; a
# pool that never reclaims (tried: the look made a no-op) grows 5.8 MB under
# hmcs, c-tkt-tkt and clh-tp and 65 MB under alock
: "${CHURN_OBJECTS:=40000}" "${CHURN_WARMUP:=10000}"
SLACK_KB=1024

# growth KIND OBJECTS WARMUP [ENV...]: runs the program (under the
# environment given, e.g. LD_PRELOAD=...); GROWTH = its RSS growth in kB.
growth() {
  local kind=$1 n=$2 w=$3 out
  shift 3
  out=$("$RUN_LIMIT" -k 5 $((TEST_TIMEOUT * ${LOCKSWAP_TEST_TIMEOUT_SCALE:-5})) "$@" "$P" "$kind" "$n" "$w" 2>&1) ||
    { echo "$out" >&2; return 1; }
  [[ "$out" =~ rss_growth_kb=([0-9-]+) ]] || { echo "$out" >&2; return 1; }
  GROWTH=${BASH_REMATCH[1]}
}

# glibc_growth KIND N W: GROWTH = glibc's growth for those counts, measured
# natively once per file (kept in BATS_FILE_TMPDIR)
glibc_growth() {
  local f="$BATS_FILE_TMPDIR/glibc-$1-$2-$3"
  if [ -s "$f" ]; then
    GROWTH=$(<"$f")
  else
    growth "$1" "$2" "$3" && echo "$GROWTH" >"$f"
  fi
}

# within VAR "NAMES" KIND [N W] [WAIT]: every name's growth is within
# SLACK_KB of glibc's (measured natively, with the same counts). Untraced
# (helpers.bash): bats' trap on every command of the loop cost more than
# the runs.
within() {
  untraced within_untraced "$@"
}
within_untraced() {
  local var=$1 names=$2 kind=$3 n=${4:-$CHURN_OBJECTS} w=${5:-$CHURN_WARMUP} wait=${6:-} base a failed=()
  glibc_growth "$kind" "$n" "$w" || { echo "glibc: $kind failed"; return 1; }
  base=$GROWTH
  for a in $names; do
    local env=(LD_PRELOAD="$LIB" "$var=$a")
    [ -n "$wait" ] && env+=(LOCKSWAP_WAIT="$wait")
    growth "$kind" "$n" "$w" "${env[@]}" || { failed+=("$a(failed)"); continue; }
    [ "$GROWTH" -le $((base + SLACK_KB)) ] || failed+=("$a(+${GROWTH}kB)")
  done
  [ ${#failed[@]} -eq 0 ] || { echo "$kind, $n objects, glibc +${base}kB; over +$((base + SLACK_KB))kB: ${failed[*]}"; return 1; }
}

# The algorithm lists, worked out once for the file (setup_file):
#   out-of-line  the algorithms whose state the shim keeps in a block of
#                the pool (alock, ptl, cal, cal-fp, clh-tp): reclaimed by
#                the pool through the algorithm's own destroy (shim.c)
#   lines        the hierarchical locks with per-cluster lines (hier.h:
#                ls_hier_enter_attach), reclaimed by the pool
#   gcr          NAME+gcr: the wrapper allocates nothing (locks/wrap/gcr.c),
#                so a composition leaves behind what NAME does, through the
#                shim's one path for a wrapped state: the compositions
#                whose state the shim keeps out of line (the block holds
#                the wrapper's word too), and the first and the last of the
#                others
setup_file() {
  untraced probe_lists
}
probe_lists() {
  local a out=() gout=() ginline=()
  for a in $(algos lock); do
    if LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$a" LOCKSWAP_VERBOSE=1 /bin/true 2>&1 | grep -q ' state=out-of-line'; then
      out+=("$a")
      gout+=("$a+gcr") # (the wrapper's word is in the block too)
    elif LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$a+gcr" LOCKSWAP_VERBOSE=1 /bin/true 2>&1 | grep -q ' state=out-of-line'; then
      gout+=("$a+gcr")
    else
      ginline+=("$a+gcr")
    fi
  done
  printf '%s\n' "${out[@]}" >"$BATS_FILE_TMPDIR/out-of-line"
  algos_with_code 'ls_hier_enter_attach\(&' | grep -xF "$(algos lock)" >"$BATS_FILE_TMPDIR/lines"
  printf '%s\n' "${gout[@]}" "${ginline[0]}" "${ginline[@]: -1}" >"$BATS_FILE_TMPDIR/gcr"
}
listed() { cat "$BATS_FILE_TMPDIR/$1"; }

# the algorithms whose memory per lock is the pool's (out of line, lines),
# and the first and the last of the others, whose state is in the lock
per_lock_and_two() {
  local a own others=()
  own=" $(listed out-of-line | tr '\n' ' ') $(listed lines | tr '\n' ' ') "
  for a in $(algos lock); do [[ "$own" == *" $a "* ]] || others+=("$a"); done
  echo "$own" "${others[0]}" "${others[@]: -1}" "$@" | tr ' ' '\n' | awk 'NF && !seen[$0]++'
}

# clh-tp (out of line), hmcs (per-cluster lines), and the first and the last
# of the algorithms whose state is in the lock
state_kinds() {
  local a own others=()
  own=" $(listed out-of-line | tr '\n' ' ') $(listed lines | tr '\n' ' ') "
  for a in $(algos lock); do [[ "$own" == *" $a "* ]] || others+=("$a"); done
  echo clh-tp hmcs "${others[0]}" "${others[@]: -1}"
}

@test "glibc itself passes every cxx_churn kind (the specification)" {
  local k
  for k in $("$P" 2>&1 | sed -n 's/^cases://p'); do
    glibc_growth "$k" "$CHURN_OBJECTS" "$CHURN_WARMUP" || { echo "native $k failed"; return 1; }
  done
}

@test "std::mutex made, contended and deleted without destroy: every algorithm, and NAME+gcr where its state differs, RSS within 1 MB of glibc's" {
  within LOCKSWAP_ALGO "$(algos lock) $(listed gcr)" mutex
}

# What an algorithm allocates per lock follows its lock, trylock and unlock,
# which the std::mutex test runs for every algorithm. Beyond those:
#   timed-mutex      the algorithms with an abortable timed acquisition of
#                    their own (cap timeout: a timed-out waiter leaves its
#                    node behind); the others wait through the shim's one
#                    fallback (trylock, then lock: interpose/mutex.c)
#   recursive-mutex  the shim's owner and count, in the mutex for every
#   condvar          algorithm; the condvar is the shim's (mutex_cond.c),
#                    calling the algorithm's lock and unlock: no memory of
#                    their own, whatever the algorithm
# so timed-mutex runs the algorithms with memory of the pool's per lock
# (out of line, per-cluster lines), every one with a timed path of its
# own, and the first and the last of the others; recursive-mutex and
# condvar one algorithm of each kind of state: the shim's out-of-line
# block (clh-tp), hier.c's per-cluster lines (hmcs), and the first and the
# last of those with their state in the lock.
@test "std::timed_mutex (timed-out waiters: every algorithm with a timed path of its own, and those with memory per lock), std::recursive_mutex and std::condition_variable (one algorithm of each kind of state): RSS within 1 MB of glibc's" {
  # shellcheck disable=SC2046
  within LOCKSWAP_ALGO "$(per_lock_and_two $(algos timeout))" timed-mutex || return 1
  local kinds
  kinds=$(state_kinds)
  within LOCKSWAP_ALGO "$kinds" recursive-mutex || return 1
  within LOCKSWAP_ALGO "$kinds" condvar
}

# Under yield an algorithm's code differs from park's only where it reads the
# policy itself (helpers.bash: own_wait_algos, with two of wait.c's shared path)
@test "std::mutex under the yield policy: the algorithms with a yield path of their own, RSS within 1 MB of glibc's" {
  within LOCKSWAP_ALGO "$(own_wait_algos)" mutex "$CHURN_OBJECTS" "$CHURN_WARMUP" yield
}

# Issue 30's figure, for the pool's long run. Its looks (pool.c) are one
# path for every block; what a look frees differs by the kind of block:
# per-cluster lines (hier.c's for every hierarchical lock; hmcs's, with its
# group lines, the most) and the shim's block of an out-of-line state,
# freed through the algorithm's destroy (clh-tp's gives back the queue node
# its state holds, where alock's, ptl's and the cal locks' free nothing
# more). The 40,000-object runs above check every algorithm's own blocks.
@test "2,000,000 std::mutex objects: one algorithm of each kind of block the pool reclaims (hmcs's per-cluster lines; the shim's block of clh-tp, which holds a queue node), RSS within 1 MB of glibc's" {
  within LOCKSWAP_ALGO "hmcs clh-tp" mutex 2000000 100000
}

@test "std::shared_mutex and std::shared_timed_mutex (reads and writes): every rwlock algorithm and NAME+bravo, RSS within 1 MB of glibc's" {
  local k
  for k in shared-mutex shared-timed-mutex; do
    within LOCKSWAP_RWALGO "$(rwalgos lock)" "$k" || return 1
  done
}

@test "under an algorithm map, the shim's out-of-line states of mutexes and rwlocks made by a rule: RSS within 1 MB of glibc's" {
  within LOCKSWAP_ALGO_MAP "*=alock *=clh-tp+gcr" mutex
  within LOCKSWAP_ALGO_MAP "*=mcs-rw+bravo *=c-rw-wp+bravo" shared-mutex
}

# Locks alive but idle (pool.h, "Idle locks"): tests/progs/idle_locks
# keeps every lock it makes and never uses it again, as a freed lock whose
# memory nobody writes looks to the pool: its block goes while its word
# still holds it. Before, the blocks followed every lock ever used (alock
# +162 MB, cal +86 MB, the hierarchical locks +14 MB for 100,000 mutexes;
# c-rw-wp +9 MB, the mutex mode over alock +167 MB for 100,000 rwlocks).
I="$PROGS/idle_locks"

# idle_within VAR "NAMES" CASE [ENV...]: each name's RSS growth for CASE
# (forgotten, forgotten-rw) within SLACK_KB of glibc's
idle_within() {
  untraced idle_within_untraced "$@"
}
idle_within_untraced() {
  local var=$1 names=$2 kind=$3 base out a failed=()
  shift 3
  out=$(timeout -k 5 "$(hang_timeout)" "$I" "$kind" 2>&1) || { echo "glibc: $out"; return 1; }
  [[ "$out" =~ rss_growth_kb=([0-9-]+) ]] || { echo "glibc: $out"; return 1; }
  base=${BASH_REMATCH[1]}
  for a in $names; do
    out=$("$RUN_LIMIT" -k 5 "$(hang_timeout)" LD_PRELOAD="$LIB" "$var=$a" "$@" "$I" "$kind" 2>&1) ||
      { failed+=("$a(failed: $out)"); continue; }
    [[ "$out" =~ rss_growth_kb=([0-9-]+) ]] || { failed+=("$a($out)"); continue; }
    [ "${BASH_REMATCH[1]}" -le $((base + SLACK_KB)) ] || failed+=("$a(+${BASH_REMATCH[1]}kB)")
  done
  [ ${#failed[@]} -eq 0 ] || { echo "$kind: glibc +${base}kB; over +$((base + SLACK_KB))kB: ${failed[*]}"; return 1; }
}

@test "glibc itself passes every idle_locks case (the specification)" {
  local c
  for c in forgotten forgotten-rw busy busy-rw; do
    run timeout "$(hang_timeout)" "$I" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
  run "$I" nosuch
  [ "$status" -eq 2 ]
}

# (the algorithms with memory per lock, the pool's blocks and lines, and two
# whose state is all in the lock, which leave the pool nothing to free)
@test "mutexes alive but idle, never used again: the algorithms with memory per lock (and two without) and NAME+gcr where its state differs, RSS within 1 MB of glibc's (the pool frees an idle lock's block while its word still holds it), and under an algorithm map" {
  idle_within LOCKSWAP_ALGO "$(per_lock_and_two) $(listed gcr)" forgotten || return 1
  idle_within LOCKSWAP_ALGO_MAP "*=alock *=hmcs *=clh-tp+gcr" forgotten
}

@test "rwlocks alive but idle, never used again: every rwlock algorithm and NAME+bravo, the mutex mode over the mutex algorithms with blocks, and under an algorithm map: RSS within 1 MB of glibc's" {
  idle_within LOCKSWAP_RWALGO "$(rwalgos lock)" forgotten-rw || return 1
  # shellcheck disable=SC2046
  idle_within LOCKSWAP_ALGO "$(listed out-of-line) $(listed lines)" forgotten-rw LOCKSWAP_RWALGO=mutex || return 1
  idle_within LOCKSWAP_ALGO_MAP "*=c-rw-wp *=mcs-rw+bravo" forgotten-rw
}

# The pool frees idle blocks under the workers' feet: the workers and the
# main thread keep making mutexes (rwlocks), used once, so the pool looks
# every few hundred, while the workers take 4,096 live ones, most rarely
# (lock, trylock, timedlock, two at a time released out of order; for
# rwlocks reads too): a block freed while a thread was entering, holding,
# waiting on or releasing it breaks exclusion (the counters), faults or
# hangs. With the look's check of the holds removed (tried), the mutex runs
# of alock, hmcs, clh-tp, hclh and c-bo-mcs and the rwlock runs of c-rw-wp
# and mcs-rw+bravo fail that way. The work is bounded (1,000 ops a worker,
# at most 16 new locks per op), not the time: beside busy loops a run takes
# longer, not more. Every use of a block enters it in the shim (the
# algorithms whose state is out of line) or the algorithm's own code (the
# hierarchical locks' lines, hier.h): those run, and two whose state is all
# in the lock (no block to free: the same path as without the pool's looks).
per_lock_names() { per_lock_and_two; }
@test "mutual exclusion while the pool frees idle mutexes' blocks: every algorithm with memory per lock (and two without) and NAME+gcr where its state differs, and under an algorithm map" {
  each_family per_lock_names LOCKSWAP_ALGO "" -- "$I" busy 4 1000 || return 1
  local a m out
  for a in $(listed gcr); do
    out=$("$RUN_LIMIT" -k 5 "$(hang_timeout)" LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$a" "$I" busy 4 1000 2>&1) ||
      { echo "$a: $out"; return 1; }
  done
  for m in '*=alock' '*=hmcs' '*=clh-tp+gcr'; do
    out=$("$RUN_LIMIT" -k 5 "$(hang_timeout)" LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP="$m" "$I" busy 4 1000 2>&1) ||
      { echo "map $m: $out"; return 1; }
  done
}

@test "readers and writers exclude each other while the pool frees idle rwlocks' blocks: every rwlock algorithm and NAME+bravo, the mutex mode over alock and hmcs, and under an algorithm map" {
  each_rwalgo "" -- "$I" busy-rw 4 1000 || return 1
  local a m out
  for a in alock hmcs; do
    out=$("$RUN_LIMIT" -k 5 "$(hang_timeout)" LD_PRELOAD="$LIB" LOCKSWAP_RWALGO=mutex LOCKSWAP_ALGO=$a "$I" busy-rw 4 1000 2>&1) ||
      { echo "mutex mode over $a: $out"; return 1; }
  done
  for m in '*=c-rw-wp' '*=mcs-rw+bravo'; do
    out=$("$RUN_LIMIT" -k 5 "$(hang_timeout)" LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP="$m" "$I" busy-rw 4 1000 2>&1) ||
      { echo "map $m: $out"; return 1; }
  done
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

@test "a read hold belongs to one rwlock's life (destroy or init again, reused, zeroed, copied; a late key's destructor unlocks 12): every rwlock algorithm and NAME+bravo, default and yield policies, and under an algorithm map with rwlock rules" {
  each_rwalgo "" -- "$PROGS/rwlock_life" all || return 1
  RW_ALGOS="mutex mcs-rw c-rw-wp+bravo" each_rwalgo "" yield -- "$PROGS/rwlock_life" all || return 1
  local m out
  for m in '*=mcs-rw' '*=c-rw-wp+bravo' '*=central'; do
    out=$("$RUN_LIMIT" -k 5 "$(hang_timeout)" LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP="$m" "$PROGS/rwlock_life" all 2>&1) ||
      { echo "map $m: $out"; return 1; }
  done
}
