#!/usr/bin/env bats
# Process-shared, robust, priority-inherit and priority-protect mutexes and
# process-shared condition variables go to glibc untouched, under every
# algorithm (issue 2, item 3): they behave, and their words read, exactly as
# glibc's own.
load helpers
TEST_TIMEOUT=20
P="$PROGS/passthrough"

@test "glibc itself passes every passthrough case (the specification)" {
  # shellcheck disable=SC2046
  run timeout 60 "$P" $("$P" 2>&1 | sed -n 's/^cases://p')
  [ "$status" -eq 0 ] || { echo "native: $output"; return 1; }
}

# The path under test is the shim's alone, the same line for line under
# every algorithm: a mutex of a kind glibc keeps is initialised by glibc
# before any algorithm is consulted (interpose/mutex.c, init_mutex), its
# kind word is never the fast path's (ls_g.fast_kind is 0 for every
# algorithm, config.c), so every call goes through ls_mutex_is_glibc to
# glibc; a process-private condvar waits on it as on any mutex. So it runs
# under glibc's own mutex through the shim (pthread, where lockswap is
# interposition only), an algorithm with its state inside the mutex (ttas)
# and one with it out of line (alock), the classes whose words differ.
REPS="pthread ttas alock"

# The cases in one process per algorithm (run_case runs the cases named in
# order; a failure names its file:line): each case sets up and joins (or
# reaps) all it starts.
@test "robust: the owner thread dies holding it -> EOWNERDEAD from lock, trylock, timedlock; consistent or ENOTRECOVERABLE; the lock word is the owner's tid; robust and process-shared: the owner process dies holding it -> EOWNERDEAD in the parent; priority inherit: the lock word is the owner's tid, exclusion, errorcheck, robust; priority protect: EINVAL for a SCHED_OTHER caller, locks for a SCHED_FIFO one, the ceiling kept and changeable; process-shared in shared memory: parent and child exclude each other (every type), glibc's lock and owner words; process-shared condvar across fork: signal and broadcast between processes, timed waits on its clock; a process-private condvar with robust, priority-inherit and process-shared mutexes (glibc's mutex through the shim, inline and out-of-line state, under park; the last under yield too)" {
  local a out failed=()
  for a in $REPS; do
    out=$(under "$a" park -- "$P" robust robust-process pi pp pshared pshared-cond private-cond 2>&1) ||
      failed+=("$a (park): $out")
    out=$(under "$a" yield -- "$P" private-cond 2>&1) || failed+=("$a (yield): $out")
  done
  [ ${#failed[@]} -eq 0 ] || { printf '%s\n' "${failed[@]}"; return 1; }
}
