#!/usr/bin/env bats
# The lockswap command (issue 2, item 10): --help, --list, --names [--cap],
# -a/-w/-s/-v running a program with the library preloaded, exit status 2
# for a bad option, and `make install PREFIX=...` installing a command that
# runs programs with the installed library. Issue 34: --list in 100 columns
# (--long: the full table), --version from debian/changelog, a word that is
# neither a subcommand nor a program, the warning for a program the loader
# will not preload into, make uninstall.
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

# list_rows: ROW[NAME], the line of `lockswap --list` (in $output) whose
# first word is NAME (the shell's own matching: no process per algorithm)
list_rows() {
  local l
  declare -gA ROW=()
  for l in "${lines[@]}"; do [[ "$l" =~ ^([a-z0-9+-]+)\ + ]] && ROW[${BASH_REMATCH[1]}]=$l; done
  return 0
}

@test "--list: a row per algorithm with its capabilities and a description" {
  local names a w
  names=$("$LOCKSWAP" --names)
  run "$LOCKSWAP" --list
  assert_success
  list_rows
  for a in $names; do
    [ -n "${ROW[$a]:-}" ] || { echo "no row for $a"; return 1; }
    read -ra w <<<"${ROW[$a]}"
    [ "${#w[@]}" -ge 3 ] || { echo "row too short: ${ROW[$a]}"; return 1; }
  done
  [[ "${ROW[pthread]}" =~ ^pthread\ +passthrough ]]
  for a in ticket alock clh mcs; do [[ "${ROW[$a]}" =~ ^$a\ +[a-z,]*fifo ]] || { echo "$a not fifo"; return 1; }; done
  for a in clh mcs; do [[ "${ROW[$a]}" =~ ^$a\ +[a-z,]*qnode ]] || { echo "$a not qnode"; return 1; }; done
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
  local fifo qnode a
  fifo=$'\n'$("$LOCKSWAP" --names --cap fifo)$'\n'
  qnode=$'\n'$("$LOCKSWAP" --names --cap qnode)$'\n'
  run "$LOCKSWAP" --names --cap fifo --cap qnode
  assert_success
  for a in "${lines[@]}"; do
    [[ "$fifo" == *$'\n'"$a"$'\n'* && "$qnode" == *$'\n'"$a"$'\n'* ]] || { echo "$a is not in both"; return 1; }
  done
  assert_line mcs
  assert_line clh
  refute_line ticket
  refute_line tas
}

@test "-a ALGO -- PROG: every algorithm, the library really preloaded, arguments passed verbatim, PROG's exit status" {
  # every run in one loop under one timeout (a hang fails the test): a
  # process per run, each run's output, errors and status in files
  local d=$BATS_TEST_TMPDIR/runs a l out err rc
  mkdir "$d"
  # shellcheck disable=SC2016
  timeout 120 bash -c 'cmd=$1 d=$2 lib=$3 hello=$4; shift 4
    for a in $("$cmd" --names); do
      "$cmd" -a "$a" -- "$lib" >"$d/$a.lib" 2>&1; echo $? >"$d/$a.librc"
      "$cmd" -a "$a" -- "$hello" "$@" >"$d/$a.out" 2>"$d/$a.err"; echo $? >"$d/$a.rc"
    done' _ "$LOCKSWAP" "$d" "$PROGS/which_lib" "$HELLO" --exit 3 "two words" "" '$HOME' '*'
  for a in $("$LOCKSWAP" --names); do
    read -r rc <"$d/$a.librc" || { echo "$a: not run"; return 1; }
    [ "$rc" -eq 0 ] || { echo "$a: which_lib: status $rc"; cat "$d/$a.lib"; return 1; }
    mapfile -t out <"$d/$a.lib"
    [ "${#out[@]}" -gt 0 ] || { echo "$a: which_lib printed nothing"; return 1; }
    for l in "${out[@]}"; do
      [[ "$l" == *"/liblockswap.so" ]] || { echo "$a: $l"; return 1; }
    done
    read -r rc <"$d/$a.rc"
    [ "$rc" -eq 3 ] || { echo "$a: status $rc"; return 1; }
    IFS= read -r -d '' out <"$d/$a.out" || true
    [ "$out" = $'main ran\narg: two words\narg: \narg: $HOME\narg: *\n' ] || { echo "$a: $out"; return 1; }
    IFS= read -r -d '' err <"$d/$a.err" || true
    [ -z "$err" ] || { echo "$a printed on stderr: $err"; return 1; }
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

@test "a word that is neither a subcommand nor a program: one line naming the subcommands, and the nearest when it is near; exit 127" {
  run -127 --separate-stderr env PATH=/usr/bin:/bin timeout 10 "$LOCKSWAP" reprot x.json
  [ "$stderr" = "lockswap: cannot run reprot: no such program, nor subcommand (did you mean lockswap report? subcommands: compare, profile, report)" ] ||
    { echo "$stderr"; return 1; }
  run -127 --separate-stderr env PATH=/usr/bin:/bin timeout 10 "$LOCKSWAP" compar
  [[ "$stderr" == *"(did you mean lockswap compare? subcommands: compare, profile, report)" ]] || { echo "$stderr"; return 1; }
  run -127 --separate-stderr env PATH=/usr/bin:/bin timeout 10 "$LOCKSWAP" frobnicate
  [ "$stderr" = "lockswap: cannot run frobnicate: no such program, nor subcommand (subcommands: compare, profile, report)" ] ||
    { echo "$stderr"; return 1; }
  # a path is a program only
  run -127 --separate-stderr timeout 10 "$LOCKSWAP" ./reprot
  [ "$stderr" = "lockswap: cannot run ./reprot: No such file or directory" ] || { echo "$stderr"; return 1; }
}

@test "a program the loader will not preload into (statically linked; setuid, setgid to another user): one warning line, and it runs with its exit status" {
  run --separate-stderr timeout 10 "$LOCKSWAP" -a mcs -- "$B/static/hello" --exit 3 a
  [ "$status" -eq 3 ]
  assert_output "$(printf 'main ran\narg: a')"
  [ "$stderr" = "lockswap: warning: $B/static/hello: it is statically linked: no loader runs, so nothing is preloaded; its locks stay glibc's" ] ||
    { echo "$stderr"; return 1; }
  # found on PATH as execvp finds it
  PATH="$B/static:$PATH" run --separate-stderr timeout 10 "$LOCKSWAP" hello
  assert_success
  [ "$stderr" = "lockswap: warning: $B/static/hello: it is statically linked: no loader runs, so nothing is preloaded; its locks stay glibc's" ] ||
    { echo "$stderr"; return 1; }
  # a dynamically linked program: not a word
  run --separate-stderr timeout 10 "$LOCKSWAP" -a mcs -- "$HELLO"
  assert_success
  [ -z "$stderr" ] || { echo "$stderr"; return 1; }
  [ "$(id -u)" -eq 0 ] || { echo "setuid and setgid need root to make (chown): not checked"; return 0; }
  cp "$HELLO" "$BATS_TEST_TMPDIR/suid"
  chown nobody "$BATS_TEST_TMPDIR/suid"
  chmod 4755 "$BATS_TEST_TMPDIR/suid"
  run --separate-stderr timeout 10 "$LOCKSWAP" -a mcs -- "$BATS_TEST_TMPDIR/suid"
  assert_success
  [ "$stderr" = "lockswap: warning: $BATS_TEST_TMPDIR/suid: it is setuid: the loader ignores LD_PRELOAD's paths for it; its locks stay glibc's" ] ||
    { echo "$stderr"; return 1; }
  cp "$HELLO" "$BATS_TEST_TMPDIR/sgid"
  chgrp nogroup "$BATS_TEST_TMPDIR/sgid"
  chmod 2755 "$BATS_TEST_TMPDIR/sgid"
  run --separate-stderr timeout 10 "$LOCKSWAP" -a mcs -- "$BATS_TEST_TMPDIR/sgid"
  assert_success
  [[ "$stderr" == *": it is setgid: the loader ignores LD_PRELOAD's paths for it; its locks stay glibc's" ]] || { echo "$stderr"; return 1; }
  # setuid to oneself: the loader's secure mode is off, no warning
  chown root "$BATS_TEST_TMPDIR/suid"
  chmod 4755 "$BATS_TEST_TMPDIR/suid"
  run --separate-stderr timeout 10 "$LOCKSWAP" -a mcs -- "$BATS_TEST_TMPDIR/suid"
  assert_success
  [ -z "$stderr" ] || { echo "$stderr"; return 1; }
}

@test "--version: the version of debian/changelog's first entry, the package's" {
  run "$LOCKSWAP" --version
  assert_success
  assert_output "lockswap $(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)"
}

@test "--list fits 100 columns and names no file of the source tree; --list --long has every tunable with what it does, one line each" {
  local names list l
  names=$("$LOCKSWAP" --names)
  run "$LOCKSWAP" --list
  assert_success
  list=$output
  for l in "${lines[@]}"; do
    [ "${#l}" -le 100 ] || { echo "wider than 100 columns:"; echo "$l"; return 1; }
  done
  ! grep -nE '[a-z_]+\.[ch]\b|locks/|interpose/|profile/|stack/|match/|scripts/' <<<"$output" || return 1
  # every algorithm's row, every tunable's name and default
  local a v
  list_rows
  for a in $names; do [ -n "${ROW[$a]:-}" ] || { echo "no row for $a"; return 1; }; done
  run "$LOCKSWAP" --list --long
  assert_success
  ! grep -nE '[a-z_]+\.[ch]\b|locks/|interpose/|profile/|stack/|match/|scripts/' <<<"$output" || return 1
  local tunables
  tunables=$(grep -oE '^ +LOCKSWAP_[A-Z0-9_]+=[0-9]+: .+' <<<"$output" | sed -E 's/^ +//; s/: .*//' | sort -u)
  [ -n "$tunables" ]
  for v in $tunables; do
    [[ "$list" == *"$v"* ]] || { echo "--list lacks $v"; return 1; }
  done
  # and the same algorithms, with the same capabilities, in both
  diff <(grep -E '^[a-z+]' <<<"$list" | awk '{ print $1, $2 }') <(grep -E '^[a-z+]' <<<"$output" | awk '{ print $1, $2 }')
  run "$LOCKSWAP" --long
  [ "$status" -eq 2 ]
}

@test "make install PREFIX=...: the installed command runs programs with the installed library" {
  local prefix="$BATS_TEST_TMPDIR/prefix"
  run make -C "$ROOT" --no-print-directory install PREFIX="$prefix"
  assert_success
  local triplet
  triplet=$(cc -print-multiarch)
  [ -x "$prefix/bin/lockswap" ]
  [ -f "$prefix/lib/$triplet/lockswap/liblockswap.so" ]
  run timeout 10 "$prefix/bin/lockswap" -a mcs -- "$PROGS/which_lib"
  assert_success
  for l in "${lines[@]}"; do
    [[ "$l" == *" $prefix/lib/$triplet/lockswap/liblockswap.so" ]] || { echo "not the installed library: $l"; return 1; }
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
  assert_output "lockswap: subcommand 'report' is not installed (no $dir/lockswap-report, nor $dir/../libexec/lockswap/lockswap-report)"
  printf '#!/bin/sh\necho "args=$*"\necho "cmd=$LOCKSWAP_COMMAND"\nexit 7\n' >"$dir/lockswap-report"
  chmod +x "$dir/lockswap-report"
  run -7 timeout 10 "$dir/lockswap" report --top 3 "a b"
  assert_line "args=--top 3 a b"
  assert_line "cmd=$dir/lockswap"
  # not a subcommand: a program of that name is still run
  LOCKSWAP_LIB="$LIB" run timeout 10 "$dir/lockswap" -a mcs -- "$HELLO"
  assert_success
}
