#!/usr/bin/env bats
# Mutexes and condvars in a child after fork(), under every algorithm
# (issue 2, item 4), exactly as glibc 2.36 gives them.
load helpers
TEST_TIMEOUT=20
P="$PROGS/fork"

@test "glibc itself passes every fork case (the specification)" {
  for c in $("$P" 2>&1 | sed -n 's/^cases://p'); do
    run timeout 20 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
}

@test "in the child, what the forking thread held is held and can be released; the rest is free; new threads use both" {
  each_algo "" -- "$P" held || return 1
  each_algo "" yield -- "$P" held || return 1
}

@test "in the child, recursive and errorcheck mutexes held at fork belong to the parent's thread: unlock EPERM" {
  each_algo "" -- "$P" owner || return 1
}

@test "pthread_atfork: lock in prepare, unlock in parent and in child" {
  each_algo "" -- "$P" atfork || return 1
}

@test "fork while other threads lock, unlock and create threads: children and grandchildren use mutexes and condvars" {
  each_algo "" -- "$P" busy || return 1
}
