#!/usr/bin/env bats
# Mutex types behave exactly as glibc 2.36's, under every algorithm (the shim
# gives every algorithm these semantics): NORMAL/DEFAULT, ADAPTIVE_NP,
# RECURSIVE (owner and depth), ERRORCHECK. Blocking paths run under the
# default policy (park) for every algorithm, and under yield for those whose
# yield path is not wait.c's shared one (each_own_wait). Issue 2, items 2
# and 3.
load helpers
TEST_TIMEOUT=20
P="$PROGS/mutex_types"

# park (the default) for every algorithm; yield where its path is not wait.c's
# shared one (helpers.bash, each_own_wait): the shim never reads the policy
both_policies() {
  each_algo "" -- "$@" && each_own_wait "" yield -- "$@" || return 1
}

@test "glibc itself passes every mutex_types case (the specification)" {
  for c in $("$P" 2>&1 | sed -n 's/^cases://p'); do
    run timeout 20 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
}

@test "the type checks fail on a lock that does nothing" {
  for c in normal recursive errorcheck; do
    run timeout 10 env BROKEN_DOUBLE=nolock LD_PRELOAD="$B/doubles-core/broken.so" "$P" "$c"
    [ "$status" -ne 0 ] || { echo "$c passed under the nolock double"; return 1; }
  done
}

@test "every pthread_mutex_* and pthread_cond_* entry point, at its default version, resolves to liblockswap" {
  run "$PROGS/which_lib"
  assert_success
  assert_equal "${#lines[@]}" 14
  for l in "${lines[@]}"; do [[ "$l" == *"/libc.so.6" ]] || { echo "native: $l"; return 1; }; done
  for a in $(algos); do
    run under "$a" -- "$PROGS/which_lib"
    assert_success
    assert_equal "${#lines[@]}" 14
    for l in "${lines[@]}"; do
      [[ "$l" == *"/liblockswap.so" ]] || { echo "$a: $l"; return 1; }
    done
  done
}

@test "normal: locked means busy for everyone, own trylock included; a blocked waiter gets it on unlock" {
  both_policies "$P" normal || return 1
}

@test "default type (attribute and NULL attributes) behaves as normal" {
  both_policies "$P" default || return 1
}

@test "adaptive_np behaves as normal" {
  both_policies "$P" adaptive || return 1
}

@test "recursive: lock, trylock, timedlock and clocklock by the owner each add a level; only the last unlock releases" {
  both_policies "$P" recursive || return 1
}

@test "recursive: 100000 levels deep and back" {
  each_algo "" -- "$P" recursive-deep || return 1
}

@test "errorcheck: the owner's relock fails without adding a level; ownership follows the lock" {
  both_policies "$P" errorcheck || return 1
}

@test "a mutex destroyed and initialised again takes the new type" {
  each_algo "" -- "$P" reinit || return 1
}
