#!/usr/bin/env bats
# Mutexes under an address-space limit (issue 9, item 2): with RLIMIT_AS
# lowered after start, or `ulimit -v` set before exec, every algorithm's
# lock, trylock, timedlock and unlock work and nothing is printed: the node
# pool takes address space in proportion to its use, and with none left
# uses its reserve, then waits for memory (locks/common/pool.h). pthread_mutex_init
# says ENOMEM only for an algorithm whose state is out of line, when its
# state cannot be had without the reserve (interpose/mutex.c).
load helpers
TEST_TIMEOUT=30
P="$PROGS/aslimit"

# Per algorithm, once for the file (setup_file): its address-space size at
# start (aslimit size) and whether its state lives outside the mutex (the
# same run's LOCKSWAP_VERBOSE report), kept as shell assignments that each
# test reads (setup): SIZE[ALGO] in KiB, EXT[ALGO]=1 if out of line. No
# process per lookup: a process costs more here than many a run.
setup_file() {
  untraced probe_algos >"$BATS_FILE_TMPDIR/algos"
}
probe_algos() {
  local a size verbose re nl=$'\n'
  for a in $(algos lock); do
    size=$(LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$a" LOCKSWAP_VERBOSE=1 "$P" size 2>"$BATS_FILE_TMPDIR/verbose")
    read -rd '' verbose <"$BATS_FILE_TMPDIR/verbose" || true
    echo "SIZE[$a]=$size"
    re="lockswap: algorithm=$a [^$nl]* state=out-of-line"
    [[ "$verbose" =~ $re ]] && echo "EXT[$a]=1"
  done
  return 0
}
setup() {
  declare -gA SIZE=() EXT=()
  # shellcheck disable=SC1091
  source "$BATS_FILE_TMPDIR/algos"
}

# expect_each "ALGOS" WANT CASE: the case prints exactly WANT (WANT_EXT for
# out-of-line algorithms, if set) and nothing else, under each algorithm;
# CASE exec: under `ulimit -v` of the algorithm's size at start plus 2 MiB
expect_each() {
  untraced expect_each_untraced "$@"
}
expect_each_untraced() {
  local algos=$1 want=$2 c=$3 a w out failed=() size
  for a in $algos; do
    size=${SIZE[$a]}
    w=$want
    [ -n "${WANT_EXT:-}" ] && [ -n "${EXT[$a]:-}" ] && w=$WANT_EXT
    if [ "$c" = exec ]; then
      out=$(ulimit -v $((size + 2048)) && under "$a" -- "$P" exec 2>&1) || true
    else
      out=$(under "$a" -- "$P" "$c" 2>&1) || true
    fi
    [ "$out" = "$w" ] || { failed+=("$a"); printf '=== %s: %s\n' "$a" "$out"; }
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed under: ${failed[*]}"; return 1; }
}

@test "glibc itself passes every aslimit case (the specification)" {
  local c s
  for c in lowered none hold-many; do
    run timeout 30 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
  s=$("$P" size)
  run bash -c "ulimit -v $((s + 2048)) && timeout 30 '$P' exec"
  [ "$status" -eq 0 ] || { echo "native exec: $output"; return 1; }
}

@test "RLIMIT_AS lowered after start to the size plus 8 MiB: 4 threads holding 6 locks each, every lock works, nothing printed" {
  expect_each "$(algos lock)" "aslimit: ok init_enomem=0" lowered
}

@test "no address space left at all: the same from the reserve; init says ENOMEM only for out-of-line state, and that mutex still works" {
  WANT_EXT="aslimit: ok init_enomem=1" expect_each "$(algos lock)" "aslimit: ok init_enomem=0" none
}

@test "ulimit -v set before exec (the size at start plus 2 MiB): every lock works, nothing printed" {
  expect_each "$(algos lock)" "aslimit: ok init_enomem=0" exec
}

@test "more queue nodes held at once than the reserve holds: a lock waits for memory and goes on once another thread gives its nodes back" {
  local a inline=()
  for a in $(algos qnode); do [ -n "${EXT[$a]:-}" ] || inline+=("$a"); done
  [ ${#inline[@]} -gt 0 ] || { echo "no queue lock with inline state"; return 1; }
  expect_each "${inline[*]}" "aslimit: ok" hold-many
}
