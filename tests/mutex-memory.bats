#!/usr/bin/env bats
# Where a pthread_mutex_t lives and what programs do with its memory
# (issue 2, item 4): copies, reuse without destroy, 100,000 mutexes, a
# thread holding hundreds, hundreds of threads, use before the library's
# constructor. Every algorithm: tests/progs/mutex_memory.c is the
# specification, its cases in one process per algorithm.
load helpers
TEST_TIMEOUT=30
P="$PROGS/mutex_memory"

# the cases, in sequence in one process (a failure names the file and line
# of its check, and so its case)
CASES="copy reuse many many-held nested threads"

@test "glibc itself passes every mutex_memory case and early (the specification)" {
  local cases
  cases=$("$P" 2>&1 | sed -n 's/^cases: //p')
  [ "$cases" = "$CASES" ] || { echo "cases: $cases"; return 1; }
  # shellcheck disable=SC2086
  run timeout 60 "$P" $CASES
  assert_success
  run timeout 30 "$PROGS/early"
  assert_success
}

# Every algorithm runs every case with a fifth of the repetitions
# (TEST_ITERS_PERCENT=20, mutex_memory.c: reuse 200 rounds, 20,000 mutexes,
# 81 threads): each round, mutex and thread takes the same steps as the
# others, so the size is how often, not what. clh-tp runs them in full: its
# state is out of line and a waiter's node is published per lock, so it
# grows both of the pool's kinds of memory, blocks and queue nodes, to
# 100,000 at once (the pool's chunks grow to their largest with it).
@test "every algorithm, with a fifth of the repetitions (clh-tp, whose every mutex has a block and a node, in full): a mutex copied by value while unlocked: copy and original are independent mutexes of the same type; freed (or overwritten) and the memory reused for another mutex without destroy, 1000 times; 100,000 mutexes, swept by 4 threads in different orders; 100,000 mutexes all held by one thread at once; 4 threads each holding 500 mutexes at once, queued behind each other (park; yield where its path is not wait.c's shared one); 405 threads created and exited (some detached), each locking a shared and an own mutex" {
  # shellcheck disable=SC2086
  TEST_ITERS_PERCENT=20 each_algo "" -- "$P" $CASES || return 1
  local out
  # shellcheck disable=SC2086
  out=$(under clh-tp -- "$P" $CASES 2>&1) || { echo "clh-tp, in full: $out"; return 1; }
  each_own_wait "" yield -- "$P" nested
}

@test "a copy by value keeps no freed block of its original: a freed out-of-line block's first word is never a lock word's address (pool.h)" {
  run timeout 30 "$UNIT/ext_owner"
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "the pool reclaims the out-of-line block of a lock that is gone without destroy, and of an idle one, and never one a lock can still reach (restored copies, a racing destroy, nested blocks, churn; a use during the claim, a holder, a thread that exited holding it, holds that overflowed); a thread refused a record of its holds for want of memory does not ask again at every lock; a working set of locks used in turn keeps its blocks, locks used once still lose theirs; an attach that meets a look's claim keeps the lock's own block, and a lock's new block is never the one its word still names (one block per lock)" {
  run timeout 120 "$UNIT/ext_reclaim" all
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [ "$(grep -c '^ext_reclaim: OK ' <<<"$output")" -eq 14 ] || { echo "$output"; return 1; }
}

@test "mutexes used, and left locked, in .preinit_array and in a dependency's constructor, before the library's constructor" {
  each_algo "" -- "$PROGS/early" || return 1
}

# Memory that held one kind of lock, never destroyed, initialised as the
# other kind (a review found init adopting the other kind's out-of-line
# block: a write past its end, and a free into the wrong size class).
# A mutex over reader-writer locks with out-of-line or per-cluster state,
# and an rwlock over an out-of-line mutex. The mutex algorithms whose
# memory is the pool's (their state out of line: the shim's init looks at
# the old block; per-cluster lines: hier.c's attach does), and the first
# and last of the others, whose init the shim makes alike (the mutex
# zeroed, then the algorithm's init); the rwlocks the same way (the shim's
# rwlock init for the inline ones).
# with_memory: MUTEXES and RWLOCKS = those of each family (algos lock,
# rwalgos lock) whose state the shim keeps out of line or that keep
# per-cluster lines, and the first and the last of the others; one
# LOCKSWAP_VERBOSE run for a mutex algorithm and an rwlock one at once
with_memory() {
  local m=() r=() i out lines re nl=$'\n' mx=() mo=() rx=() ro=()
  lines=" $(algos_with_code 'ls_hier_enter_attach\(&' | tr '\n' ' ') "
  read -ra m <<<"$(algos lock | tr '\n' ' ')"
  read -ra r <<<"$(rwalgos lock | tr '\n' ' ')"
  for ((i = 0; i < ${#m[@]} || i < ${#r[@]}; i++)); do
    out=$(env LD_PRELOAD="$LIB" LOCKSWAP_ALGO="${m[i]:-auto}" LOCKSWAP_RWALGO="${r[i]:-pthread}" LOCKSWAP_VERBOSE=1 /bin/true 2>&1)
    if [ -n "${m[i]:-}" ]; then
      re="lockswap: algorithm=${m[i]} [^$nl]*state=out-of-line"
      if [[ "$lines" == *" ${m[i]} "* || "$out" =~ $re ]]; then
        mx+=("${m[i]}")
      else
        mo+=("${m[i]}")
      fi
    fi
    if [ -n "${r[i]:-}" ]; then
      re="lockswap: rwlock algorithm=${r[i]//+/[+]} [^$nl]*state=out-of-line"
      if [[ "$lines" == *" ${r[i]%%+*} "* || "$out" =~ $re ]]; then
        rx+=("${r[i]}")
      else
        ro+=("${r[i]}")
      fi
    fi
  done
  MUTEXES="${mx[*]} ${mo[0]} ${mo[*]: -1}"
  RWLOCKS="${rx[*]} ${ro[0]} ${ro[*]: -1}"
}
@test "a mutex initialised over an abandoned rwlock, and the reverse, takes none of its out-of-line state" {
  native_passes "$PROGS/reuse_kinds" || return 1
  local rw mx out MUTEXES RWLOCKS
  with_memory
  # both cases in one process (each starts from zeroed memory)
  for rw in c-rw-wp mcs-rw+bravo c-rw-wp+bravo; do
    for mx in $MUTEXES; do
      out=$(LOCKSWAP_RWALGO=$rw under "$mx" -- "$PROGS/reuse_kinds" rwlock-then-mutex mutex-then-rwlock 2>&1) ||
        { echo "mutex $mx over rwlock $rw: $out"; return 1; }
    done
  done
  for mx in alock clh-tp; do
    for rw in $RWLOCKS; do
      out=$(LOCKSWAP_ALGO=$mx under_rw "$rw" -- "$PROGS/reuse_kinds" rwlock-then-mutex mutex-then-rwlock 2>&1) ||
        { echo "rwlock $rw over mutex $mx: $out"; return 1; }
    done
  done
}
