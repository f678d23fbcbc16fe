#!/usr/bin/env bats
# Mutex types behave exactly as glibc 2.36's, under every algorithm (the shim
# gives every algorithm these semantics): NORMAL/DEFAULT, ADAPTIVE_NP,
# RECURSIVE (owner and depth), ERRORCHECK. Blocking paths run under the
# default policy (park) for every algorithm, and under yield for those whose
# yield path is not wait.c's shared one (each_own_wait): the shim never
# reads the policy. Issue 2, items 2 and 3. tests/progs/mutex_types.c is the
# specification; its cases run in sequence in one process per algorithm (a
# failure names the file and line of its check, and so its case).
load helpers
TEST_TIMEOUT=20
P="$PROGS/mutex_types"

@test "glibc itself passes every mutex_types case (the specification)" {
  # shellcheck disable=SC2046
  run timeout 60 "$P" $("$P" 2>&1 | sed -n 's/^cases://p')
  assert_success
}

@test "the type checks fail on a lock that does nothing" {
  for c in normal recursive errorcheck; do
    run timeout 10 env BROKEN_DOUBLE=nolock LD_PRELOAD="$B/doubles-core/broken.so" "$P" "$c"
    [ "$status" -ne 0 ] || { echo "$c passed under the nolock double"; return 1; }
  done
}

# The dynamic linker binds the entry points, before any algorithm is
# chosen: one run under the default algorithm and one under pthread (every
# mutex glibc's, behind the shim) say it for all
@test "every pthread_mutex_* and pthread_cond_* entry point, at its default version, resolves to liblockswap" {
  run "$PROGS/which_lib"
  assert_success
  assert_equal "${#lines[@]}" 14
  for l in "${lines[@]}"; do [[ "$l" == *"/libc.so.6" ]] || { echo "native: $l"; return 1; }; done
  for a in auto pthread; do
    run under "$a" -- "$PROGS/which_lib"
    assert_success
    assert_equal "${#lines[@]}" 14
    for l in "${lines[@]}"; do
      [[ "$l" == *"/liblockswap.so" ]] || { echo "$a: $l"; return 1; }
    done
  done
}

@test "normal: locked means busy for everyone, own trylock included, a blocked waiter gets it on unlock; the default type (attribute and NULL attributes) and adaptive_np behave as normal; recursive: lock, trylock, timedlock and clocklock by the owner each add a level, only the last unlock releases, 100000 levels deep and back; errorcheck: the owner's relock fails without adding a level, ownership follows the lock; a mutex destroyed and initialised again takes the new type (park; the blocking cases under yield where its path is not wait.c's shared one)" {
  each_algo "" -- "$P" normal default adaptive recursive recursive-deep errorcheck reinit || return 1
  each_own_wait "" yield -- "$P" normal default adaptive recursive errorcheck
}
