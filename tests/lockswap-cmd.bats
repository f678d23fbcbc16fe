#!/usr/bin/env bats
# The lockswap command (issue 2, item 10): --help, --list, --names [--cap],
# -a/-w/-s/-v running a program with the library preloaded, exit status 2
# for a bad option, and `make install PREFIX=...` installing a command that
# runs programs with the installed library.
bats_require_minimum_version 1.5.0
load helpers
TEST_TIMEOUT=20
HELLO="$PROGS/hello"
ISSUE_ALGOS="pthread tas ttas backoff ticket alock clh mcs"

@test "--help and -h: usage on stdout naming every option, exit 0" {
  for h in --help -h; do
    run --separate-stderr "$LOCKSWAP" "$h"
    assert_success
    for o in -a -w -s -v --list --names --cap; do
      [[ "$output" == *"$o"* ]] || { echo "$h does not mention $o"; return 1; }
    done
  done
}

@test "--names: one unique name per line, including every algorithm of issue 2" {
  run "$LOCKSWAP" --names
  assert_success
  [ "${#lines[@]}" -ge 8 ]
  [ -z "$(printf '%s\n' "${lines[@]}" | sort | uniq -d)" ] || { echo "duplicates"; return 1; }
  for l in "${lines[@]}"; do [[ "$l" =~ ^[a-z0-9-]+$ ]] || { echo "bad name '$l'"; return 1; }; done
  for a in $ISSUE_ALGOS; do assert_line "$a"; done
}

@test "--list: a row per algorithm with its capabilities and a description" {
  run "$LOCKSWAP" --list
  assert_success
  for a in $("$LOCKSWAP" --names); do
    local row
    row=$(grep -E "^$a +" <<<"$output") || { echo "no row for $a"; return 1; }
    [ "$(wc -w <<<"$row")" -ge 3 ] || { echo "row too short: $row"; return 1; }
  done
  grep -Eq '^pthread +passthrough' <<<"$output"
  for a in ticket alock clh mcs; do grep -Eq "^$a +[a-z,]*fifo" <<<"$output" || { echo "$a not fifo"; return 1; }; done
  for a in clh mcs; do grep -Eq "^$a +[a-z,]*qnode" <<<"$output" || { echo "$a not qnode"; return 1; }; done
}

@test "--names --cap CAP lists exactly the algorithms whose --list row shows CAP" {
  local list
  list=$("$LOCKSWAP" --list)
  for cap in fifo timeout qnode hier passthrough; do
    local want got
    want=$(awk -v c="$cap" 'NF >= 3 && $1 ~ /^[a-z0-9-]+$/ && ("," $2 ",") ~ ("," c ",") { print $1 }' <<<"$list" | sort)
    got=$("$LOCKSWAP" --names --cap "$cap" | sort)
    [ "$want" = "$got" ] || { echo "cap $cap: --list says [$want], --names says [$got]"; return 1; }
  done
}

@test "--cap lock is every algorithm but the pthread passthrough; two --cap options intersect" {
  run "$LOCKSWAP" --names --cap lock
  assert_success
  refute_line pthread
  [ "${#lines[@]}" -eq $(( $("$LOCKSWAP" --names | wc -l) - $("$LOCKSWAP" --names --cap passthrough | wc -l) )) ]
  run "$LOCKSWAP" --names --cap fifo --cap qnode
  assert_success
  for a in "${lines[@]}"; do
    "$LOCKSWAP" --names --cap fifo | grep -qx "$a" && "$LOCKSWAP" --names --cap qnode | grep -qx "$a" ||
      { echo "$a is not in both"; return 1; }
  done
  assert_line mcs
  assert_line clh
  refute_line ticket
  refute_line tas
}

@test "-a ALGO -- PROG: every algorithm, the library really preloaded, arguments passed verbatim, PROG's exit status" {
  for a in $("$LOCKSWAP" --names); do
    run timeout 10 "$LOCKSWAP" -a "$a" -- "$PROGS/which_lib"
    assert_success
    for l in "${lines[@]}"; do
      [[ "$l" == *"/liblockswap.so" ]] || { echo "$a: $l"; return 1; }
    done
    run --separate-stderr timeout 10 "$LOCKSWAP" -a "$a" -- "$HELLO" --exit 3 "two words" "" '$HOME' '*'
    [ "$status" -eq 3 ] || { echo "$a: status $status"; return 1; }
    [ "$output" = $'main ran\narg: two words\narg: \narg: $HOME\narg: *' ] || { echo "$a: $output"; return 1; }
    [ -z "$stderr" ] || { echo "$a printed on stderr: $stderr"; return 1; }
  done
}

@test "without -a: the default algorithm; without --: PROG still runs" {
  run --separate-stderr timeout 10 "$LOCKSWAP" -v -- "$HELLO"
  assert_success
  [[ "$stderr" == *"algorithm=auto "* ]]
  run timeout 10 "$LOCKSWAP" -a mcs "$HELLO" x
  assert_success
  assert_output $'main ran\narg: x'
}

@test "-w, -s and -v: the policy and spin budget reach the library, -v reports them" {
  for w in spin yield park; do
    run --separate-stderr timeout 10 "$LOCKSWAP" -a ticket -w "$w" -s 100 -v -- "$HELLO"
    assert_success
    assert_output "main ran"
    [[ "$stderr" == *ticket* && "$stderr" == *"$w"* && "$stderr" == *100* ]] || { echo "$stderr"; return 1; }
  done
  run --separate-stderr timeout 10 "$LOCKSWAP" --algo mcs --wait yield --spin 0 -- "$HELLO"
  assert_success
  [ -z "$stderr" ]
}

# A bad invocation: status 2, PROG never ran, a message on stderr.
bad() {
  run --separate-stderr timeout 10 "$LOCKSWAP" "$@"
  [ "$status" -eq 2 ] || { echo "lockswap $*: status $status"; return 1; }
  [[ "$output" != *"main ran"* ]] || { echo "lockswap $*: PROG ran"; return 1; }
  [ -n "$stderr" ] || { echo "lockswap $*: no message"; return 1; }
}

@test "bad options exit 2 with a message and run nothing" {
  bad -x -- "$HELLO"
  bad --bogus -- "$HELLO"
  bad -a foo -- "$HELLO"
  [[ "$stderr" == *foo* && "$stderr" == *mcs* ]] || { echo "$stderr"; return 1; }
  bad -w bogus -- "$HELLO"
  [[ "$stderr" == *bogus* ]]
  bad -s abc -- "$HELLO"
  bad -s -1 -- "$HELLO"
  bad -a
  bad -a mcs
  bad -a mcs --
  bad
  bad --names --cap bogus
}

@test "a program that cannot be run: exit 127" {
  run -127 timeout 10 "$LOCKSWAP" -a mcs -- /nonexistent/prog
  [ "$status" -eq 127 ]
}

@test "make install PREFIX=...: the installed command runs programs with the installed library" {
  local prefix="$BATS_TEST_TMPDIR/prefix"
  run make -C "$ROOT" --no-print-directory install PREFIX="$prefix"
  assert_success
  [ -x "$prefix/bin/lockswap" ]
  [ -f "$prefix/lib/liblockswap.so" ]
  run timeout 10 "$prefix/bin/lockswap" -a mcs -- "$PROGS/which_lib"
  assert_success
  for l in "${lines[@]}"; do
    [[ "$l" == *" $prefix/lib/liblockswap.so" ]] || { echo "not the installed library: $l"; return 1; }
  done
  run timeout 10 "$prefix/bin/lockswap" --list
  assert_success
  run timeout 10 "$prefix/bin/lockswap" -a foo -- "$HELLO"
  [ "$status" -eq 2 ]
}

@test "lockswap SUBCOMMAND runs lockswap-SUBCOMMAND beside it, with LOCKSWAP_COMMAND; a missing one is exit 2" {
  local dir="$BATS_TEST_TMPDIR/bin"
  mkdir -p "$dir"
  cp "$LOCKSWAP" "$dir/lockswap"
  run timeout 10 "$dir/lockswap" report x
  [ "$status" -eq 2 ]
  assert_output "lockswap: subcommand 'report' is not installed (no $dir/lockswap-report)"
  printf '#!/bin/sh\necho "args=$*"\necho "cmd=$LOCKSWAP_COMMAND"\nexit 7\n' >"$dir/lockswap-report"
  chmod +x "$dir/lockswap-report"
  run -7 timeout 10 "$dir/lockswap" report --top 3 "a b"
  assert_line "args=--top 3 a b"
  assert_line "cmd=$dir/lockswap"
  # not a subcommand: a program of that name is still run
  LOCKSWAP_LIB="$LIB" run timeout 10 "$dir/lockswap" -a mcs -- "$HELLO"
  assert_success
}
