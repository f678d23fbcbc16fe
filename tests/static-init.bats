#!/usr/bin/env bats
# Mutexes never passed to pthread_mutex_init (issue 2, item 3): the static
# initialisers, zero-filled memory, and PTHREAD_COND_INITIALIZER, under
# every algorithm. tests/progs/static_init.c is the specification; each of
# its cases uses mutexes of its own, so they run in sequence in one process
# per algorithm (a failure names the file and line of its check, and so its
# case).
load helpers
TEST_TIMEOUT=20
P="$PROGS/static_init"

@test "glibc itself passes every static_init case (the specification)" {
  for c in $("$P" 2>&1 | sed -n 's/^cases://p'); do
    run timeout 20 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
}

@test "PTHREAD_MUTEX_INITIALIZER: first used by another thread's lock, behaves as normal, excludes; PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP is recursive; PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP is errorcheck, even when its first call is an unlock; PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP behaves as normal; a zero mutex in .bss, a memset-zero and a calloc'ed mutex, never initialised; static mutexes first used by timedlock and clocklock; destroy of a never-used static mutex, a static initialiser assigned again; PTHREAD_COND_INITIALIZER and a zero condvar with static mutexes" {
  each_algo "" -- "$P" normal recursive errorcheck adaptive bss memset first-use-timed destroy-unused cond
}
