#!/usr/bin/env bats
# Choosing the reader-writer and spinlock algorithms (issue 19, item 2):
# LOCKSWAP_RWALGO and LOCKSWAP_SPINALGO (bad values: one line, exit 2 before
# main, as LOCKSWAP_ALGO), the lockswap command's -r, --spinalgo,
# --names rwlock|spin and --list, and LOCKSWAP_VERBOSE's report.
load helpers

rejected() { # rejected PATTERN...: exit 2, one line, each pattern in it
  [ "$status" -eq 2 ] || { echo "status $status: $output"; return 1; }
  [ "${#lines[@]}" -eq 1 ] || { echo "not one line: $output"; return 1; }
  local p
  for p in "$@"; do [[ "$output" == *"$p"* ]] || { echo "no '$p' in: $output"; return 1; }; done
}

@test "LOCKSWAP_RWALGO unknown: one line naming the valid choices, exit 2, even in a program that takes no lock" {
  run env LD_PRELOAD="$LIB" LOCKSWAP_RWALGO=nosuch /bin/true
  rejected "LOCKSWAP_RWALGO: unknown algorithm 'nosuch' (valid: " "pthread" "mutex" "central" "pf-t"
}

@test "LOCKSWAP_RWALGO=mutex under LOCKSWAP_ALGO=pthread: glibc's mutex cannot serve, one line, exit 2" {
  run env LD_PRELOAD="$LIB" LOCKSWAP_RWALGO=mutex LOCKSWAP_ALGO=pthread /bin/true
  rejected "LOCKSWAP_RWALGO=mutex" "choose a lock algorithm"
}

@test "LOCKSWAP_RWALGO NAME+WRAPPER with no such wrapper, or a wrapper over the passthrough: one line, exit 2" {
  run env LD_PRELOAD="$LIB" LOCKSWAP_RWALGO=central+nosuch /bin/true
  rejected "LOCKSWAP_RWALGO: 'central+nosuch': 'nosuch' is not a wrapper (valid: "
}

@test "LOCKSWAP_RWALGO and LOCKSWAP_SPINALGO are known variables; valid choices print nothing" {
  local a
  for a in $(rwalgos); do
    run env LD_PRELOAD="$LIB" LOCKSWAP_RWALGO="$a" /bin/true
    [ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$a: $status $output"; return 1; }
  done
  for a in $(spinalgos); do
    run env LD_PRELOAD="$LIB" LOCKSWAP_SPINALGO="$a" /bin/true
    [ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$a: $status $output"; return 1; }
  done
}

@test "LOCKSWAP_VERBOSE=1 reports the rwlock and spinlock algorithms" {
  run env LD_PRELOAD="$LIB" LOCKSWAP_VERBOSE=1 LOCKSWAP_RWALGO=pf-t LOCKSWAP_SPINALGO=ticket16 /bin/true
  assert_success
  assert_output --regexp 'lockswap: rwlock algorithm=pf-t wait=park caps=- state=inline'
  assert_output --partial 'lockswap: rwlock policy=kind (the kind'"'"'s: reader preference, writer preference for the _NP kind)'
  assert_output --partial 'lockswap: rwlock timed reads by fallback'
  assert_output --partial 'lockswap: spinlock algorithm=ticket16 caps=fifo'
  run env LD_PRELOAD="$LIB" LOCKSWAP_VERBOSE=1 LOCKSWAP_RWALGO=pf-t LOCKSWAP_RWPOLICY=algorithm /bin/true
  assert_output --partial 'lockswap: rwlock policy=algorithm (phase-fair: read and write phases alternate, writers FIFO)'
  run env LD_PRELOAD="$LIB" LOCKSWAP_VERBOSE=1 LOCKSWAP_RWALGO=mutex LOCKSWAP_ALGO=mcs /bin/true
  assert_output --regexp 'rwlock algorithm=mutex wait=park caps=fifo,qnode,exclusive'
}

@test "lockswap --names rwlock / spin: one name per line; --cap filters with the family's capabilities" {
  run "$LOCKSWAP" --names rwlock
  assert_success
  local n
  for n in pthread mutex central central-wp pf-t; do assert_line "$n"; done
  [ -z "$(printf '%s\n' "${lines[@]}" | sort | uniq -d)" ]
  run "$LOCKSWAP" --names rwlock --cap kind
  assert_line central
  refute_line central-wp
  run "$LOCKSWAP" --names rwlock --cap exclusive
  assert_line mutex
  refute_line central
  # a wrapper's compositions, each with the capabilities it keeps of its inner
  # algorithm, all listed although a process composes a wrapper only once
  run "$LOCKSWAP" --names rwlock --cap wrapper
  assert_line central+bravo
  assert_line c-rw-wp+bravo
  refute_line pthread+bravo
  run "$LOCKSWAP" --names rwlock --cap lock
  refute_line pthread
  run "$LOCKSWAP" --names rwlock --cap bogus
  [ "$status" -eq 2 ]
  assert_output --partial "(valid: fifo, timeout, qnode, hier, passthrough, kind, exclusive, wrapper, lock)"
  run "$LOCKSWAP" --names mutex
  assert_output "$("$LOCKSWAP" --names)"
}

@test "lockswap --list shows the reader-writer and spinlock families with capabilities and papers" {
  run "$LOCKSWAP" --list
  assert_success
  assert_output --regexp 'rwlock:pthread +passthrough +glibc'
  assert_output --regexp 'rwlock:mutex +exclusive +.*LiTL'
  assert_output --regexp 'rwlock:central +timeout,kind +.*AMP 8\.3'
  assert_output --regexp 'rwlock:central-wp +timeout +.*AMP 8\.3\.2'
  assert_output --regexp 'rwlock:pf-t +- +.*Brandenburg & Anderson'
  assert_output --regexp 'spin:tas +'
}

@test "lockswap -r and --spinalgo set the variables; bad names: one line, exit 2" {
  run "$LOCKSWAP" -r central --spinalgo ttas -v -- /bin/true
  assert_success
  assert_output --partial "rwlock algorithm=central"
  assert_output --partial "spinlock algorithm=ttas"
  run "$LOCKSWAP" -r nosuch -- /bin/true
  rejected "lockswap: -r: unknown algorithm 'nosuch' (valid: "
  run "$LOCKSWAP" --spinalgo mcs -- /bin/true
  rejected "lockswap: --spinalgo: mcs needs"
}
