#!/usr/bin/env bats
# Mutexes never passed to pthread_mutex_init (issue 2, item 3): the static
# initialisers, zero-filled memory, and PTHREAD_COND_INITIALIZER, under
# every algorithm.
load helpers
TEST_TIMEOUT=20
P="$PROGS/static_init"

@test "glibc itself passes every static_init case (the specification)" {
  for c in $("$P" 2>&1 | sed -n 's/^cases://p'); do
    run timeout 20 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
}

@test "PTHREAD_MUTEX_INITIALIZER: first used by another thread's lock; behaves as normal; excludes" {
  each_algo "" -- "$P" normal || return 1
}

@test "PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP is recursive" {
  each_algo "" -- "$P" recursive || return 1
}

@test "PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP is errorcheck, even when its first call is an unlock" {
  each_algo "" -- "$P" errorcheck || return 1
}

@test "PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP behaves as normal" {
  each_algo "" -- "$P" adaptive || return 1
}

@test "a zero mutex in .bss, never initialised" {
  each_algo "" -- "$P" bss || return 1
}

@test "a memset-zero and a calloc'ed mutex, never initialised" {
  each_algo "" -- "$P" memset || return 1
}

@test "static mutexes first used by timedlock and clocklock" {
  each_algo "" -- "$P" first-use-timed || return 1
}

@test "destroy of a never-used static mutex; a static initialiser assigned again" {
  each_algo "" -- "$P" destroy-unused || return 1
}

@test "PTHREAD_COND_INITIALIZER and a zero condvar with static mutexes" {
  each_algo "" -- "$P" cond || return 1
}
