#!/usr/bin/env bats
# The algorithm interface (issue 2, item 6), with tests/unit/registry.c linking
# the algorithms directly: the registry lists every table once, sorted; each
# table keeps lock.h's contract (ops match capabilities, all-zero state is
# unlocked, a copied unlocked state is a free lock of its own, no node stays
# in use after release and destroy, tunables are valid); ls_param_parse
# accepts decimal and 0x hex in range and rejects the rest with one line
# naming the variable and the range.
load helpers
: "${REGISTRY:=$UNIT/registry}" # REGISTRY=PATH tests another build
R=$REGISTRY

check() {
  run timeout 60 "$R" "$1"
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "registry: every algorithm once, sorted by rank then name; ops match capabilities; states fit" {
  check tables
}

@test "every lock: the all-zero state is unlocked; trylock, expired timedlock and fallback fail on a held lock; no node in use once released, destroyed and its thread gone" {
  check zero-state
}

@test "every lock with an inline state: a byte copy of an unlocked state is a free lock of its own" {
  check copied-state
}

@test "every tunable is LOCKSWAP_*, described, with its default in range" {
  check params
}

@test "ls_param_parse: decimal and 0x hex in range; empty, signs, spaces, suffixes, overflow rejected in one line" {
  check param-parse
}

@test "ls_caps_string and ls_algo_names (no overrun on a short buffer)" {
  check caps-string
  check names
}
