#!/usr/bin/env bats
# pthread_spin_* through lockswap (issue 19, items 1 and 5): the spinlock
# family is the mutex algorithms whose state fits a pthread_spinlock_t's 4
# bytes and the spin-only ones (locks/spin/spinlock.h). tests/progs/
# spin_semantics.c is the specification (it passes natively); every
# algorithm of `lockswap --names spin`, under every policy, passes it.
load helpers
TEST_TIMEOUT=30
P="$PROGS/spin_semantics"

@test "glibc itself passes every spin_semantics case (the specification)" {
  native_passes "$P"
}

@test "every spinlock algorithm, spin, yield and park: init, trylock EBUSY, misuse (unlock of a free or foreign lock, destroy of a held one), exclusion" {
  each_spinalgo lock spin -- "$P" all
  each_spinalgo lock yield -- "$P" all
  each_spinalgo lock park -- "$P" all
  LOCKSWAP_SPIN=0 LOCKSWAP_YIELD=0 each_spinalgo lock park -- "$P" all
}

@test "the family: the mutex algorithms that fit 4 bytes, the 16+16-bit ticket lock, glibc's own as the default" {
  run "$LOCKSWAP" --names spin
  assert_success
  assert_equal "$(tr '\n' ' ' <<<"$output")" "pthread tas ttas backoff ticket16 "
  run "$LOCKSWAP" --names spin --cap fifo
  assert_output ticket16
  run "$LOCKSWAP" --list
  assert_output --regexp 'spin:ticket16 +fifo +.*TOCS 1991'
  assert_output --regexp 'Mutex algorithms that do not fit: .*mcs'
}

@test "LOCKSWAP_SPINALGO naming a lock that does not fit: one line naming its size and the ones that fit, exit 2 before main" {
  run env LD_PRELOAD="$LIB" LOCKSWAP_SPINALGO=mcs /bin/true
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  assert_output --regexp '^lockswap: LOCKSWAP_SPINALGO: mcs needs [0-9]+ bytes of state, a pthread_spinlock_t has 4 \(valid: pthread, tas, ttas, backoff, ticket16\)$'
  run env LD_PRELOAD="$LIB" LOCKSWAP_SPINALGO=hbo /bin/true
  [ "$status" -eq 2 ]
  assert_output --partial "hbo is hierarchical"
  run env LD_PRELOAD="$LIB" LOCKSWAP_SPINALGO=tas+gcr /bin/true
  [ "$status" -eq 2 ]
  assert_output --partial "a wrapped lock keeps a word before its state"
  run env LD_PRELOAD="$LIB" LOCKSWAP_SPINALGO=nosuch /bin/true
  [ "$status" -eq 2 ]
  assert_output "lockswap: LOCKSWAP_SPINALGO: unknown algorithm 'nosuch' (valid: pthread, tas, ttas, backoff, ticket16)"
}

@test "ticket16 through the mutexes' generic validator (FIFO, unlock by another thread, fault injection)" {
  local w t
  for w in spin yield park; do
    t=6; [ "$w" = spin ] && t=2
    run timeout 60 "$UNIT/stress" -a ticket16 -w "$w" -t "$t" -n "$(iters_for "$w" ticket16 2000)" -m mix -l 3 -q
    [ "$status" -eq 0 ] || { echo "$w: $output"; return 1; }
    run timeout 60 "$UNIT/stress-inject" -a ticket16 -w "$w" -t "$t" -n "$(iters_for "$w" ticket16 400)" -m mix -l 3 -q
    [ "$status" -eq 0 ] || { echo "$w -inject: $output"; return 1; }
  done
}
