#!/usr/bin/env bats
# Where users get lockswap (issue 23, items 3 and 4): the man pages
# lockswap(1) and lockswap(7), kept in step with the commands' --help and
# with `lockswap --list`; the bash completion; `make install` (PREFIX,
# DESTDIR); and `make deb`, the Debian package, installed into a fresh root
# with dpkg and run from there.
bats_require_minimum_version 1.5.0
load helpers
TEST_TIMEOUT=120
MAN1="$B/man/lockswap.1"
MAN7="$B/man/lockswap.7"

setup() {
  T=$(mktemp -d)
}

teardown() {
  rm -rf "$T"
}

# text PAGE: the page as plain text, one paragraph per line as far as
# possible (no hyphenation, very long lines)
text() {
  groff -man -Tascii -rHY=0 -rLL=1000n -P-cbou "$1"
}

@test "lockswap(7) has every algorithm, its capabilities and tunables as lockswap --list prints them, and every LOCKSWAP_ variable the library accepts; groff has nothing to warn about" {
  local page missing=() name caps v
  page=$(text "$MAN7")
  while read -r name caps _; do
    grep -qE "^ +${name//+/\\+}( |$)" <<<"$page" || missing+=("algorithm $name")
    [ "$caps" = - ] && caps=none
    grep -qF "Capabilities: ${caps//,/, }." <<<"$page" || missing+=("capabilities $caps of $name")
  done < <("$LOCKSWAP" --list | grep -E '^[a-z0-9]' | grep -v '^waiting policies')
  while read -r v; do
    grep -qF "${v%%=*} (default ${v#*=})" <<<"$page" || missing+=("tunable $v")
  done < <("$LOCKSWAP" --list | grep -oE '^ +LOCKSWAP_[A-Z0-9_]+=[0-9]+' | sed 's/^ *//' | sort -u)
  # the library's own list of variables (its message for an unknown one;
  # the last name may be cut short by the message's length)
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_NO_SUCH_VARIABLE=1 "$PROGS/hello"
  [ "$status" -eq 2 ]
  for v in $(grep -oE 'LOCKSWAP_[A-Z0-9_]+' <<<"${stderr#*valid:}" | sed '$d'); do
    grep -qw "$v" <<<"$page" || missing+=("variable $v")
  done
  [ ${#missing[@]} -eq 0 ] || { printf 'not in lockswap(7): %s\n' "${missing[@]}"; return 1; }
  for name in spin yield park "KNOWN LIMITS" "WHAT GOES TO GLIBC"; do
    grep -q "$name" <<<"$page" || { echo "no $name"; return 1; }
  done
  run groff -man -Tutf8 -ww -z "$MAN7"
  assert_success
  assert_output ""
}

@test "lockswap(7)'s algorithms come from lockswap --list when it is built: an algorithm and a tunable added to the list are in the page, with no edit of the page" {
  # the rule of mk/man.mk, with a list that has one more algorithm
  { "$LOCKSWAP" --list | sed '/^$/,$d'
    echo 'rw-mcs+gcr fifo,rw      a reader-writer lock - wrapped (for this test)'
    echo '                                      LOCKSWAP_GCR_TEST=7: .starts with a dot \ and a backslash'
  } | awk -f "$ROOT/man/algorithms.awk" >"$T/algos"
  awk -v f="$T/algos" '$0 == "@ALGORITHMS@" { while ((getline l <f) > 0) print l; next } { print }' \
    "$ROOT/man/lockswap.7.in" >"$T/lockswap.7"
  run text "$T/lockswap.7"
  assert_success
  assert_line --regexp '^ +rw-mcs\+gcr$'
  assert_line --partial "a reader-writer lock - wrapped (for this test)."
  assert_line --partial "Capabilities: fifo, rw."
  assert_line --partial "LOCKSWAP_GCR_TEST (default 7)"
  assert_line --partial ".starts with a dot \\ and a backslash."
  # and the built page is that rule's output for the real list
  grep -q '^@ALGORITHMS@' "$MAN7" && return 1
  "$LOCKSWAP" --list | awk -f "$ROOT/man/algorithms.awk" >"$T/real"
  awk -v f="$T/real" '$0 == "@ALGORITHMS@" { while ((getline l <f) > 0) print l; next } { print }' \
    "$ROOT/man/lockswap.7.in" | cmp - "$MAN7"
}

@test "lockswap(1) documents every option of lockswap, compare, profile and report (as their --help prints them); groff has nothing to warn about" {
  local page sub opt missing=()
  page=$(text "$MAN1")
  for sub in "" compare profile report; do
    # shellcheck disable=SC2086
    for opt in $("$LOCKSWAP" $sub --help | grep -oE -- '(^|[[:space:],[])--?[a-zA-Z][-a-zA-Z]*' | sed -E 's/^[[:space:],[]//' | sort -u); do
      grep -qE -- "(^|[^-a-zA-Z])$opt([^-a-zA-Z]|$)" <<<"$page" || missing+=("lockswap $sub $opt")
    done
    [ -z "$sub" ] || grep -q "^LOCKSWAP ${sub^^}" <<<"$page" || missing+=("section LOCKSWAP ${sub^^}")
  done
  [ ${#missing[@]} -eq 0 ] || { printf 'not in lockswap(1): %s\n' "${missing[@]}"; return 1; }
  run groff -man -Tutf8 -ww -z "$MAN1"
  assert_success
  assert_output ""
}

# complete WORD...: what bash completes for the last word (may be ""),
# with bash-completion loaded as an interactive shell has it
complete_words() {
  bash -c '
    source /usr/share/bash-completion/bash_completion
    source "$0"
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _lockswap 2>/dev/null
    printf "%s\n" "${COMPREPLY[@]}" | sort -u | tr "\n" " "' "$ROOT/scripts/completion/lockswap" "$@"
}

@test "bash completion: subcommands, algorithm names from lockswap --names, every option from each --help, keyword values, lists, files, and the program after --" {
  [ -r /usr/share/bash-completion/bash_completion ] || { echo "bash-completion is not installed (scripts/deps.sh test)"; return 1; }
  local names
  names=$("$LOCKSWAP" --names | grep '^mcs' | sort | tr '\n' ' ')
  run complete_words "$LOCKSWAP" -a mcs
  [ "$output" = "$names" ] || { echo "got '$output', want '$names'"; return 1; }
  run complete_words "$LOCKSWAP" --algo c-t
  assert_output "c-tkt-tkt "
  run complete_words "$LOCKSWAP" rep
  assert_output "report "
  run complete_words "$LOCKSWAP" com
  [[ " $output" == *" compare "* ]] || { echo "$output"; return 1; }
  run complete_words "$LOCKSWAP" --li
  assert_output "--list "
  run complete_words "$LOCKSWAP" -w ""
  assert_output "park spin yield "
  run complete_words "$LOCKSWAP" --names --cap f
  assert_output "fifo "
  run complete_words "$LOCKSWAP" report --fo
  assert_output "--folded "
  run complete_words "$LOCKSWAP" report --weight ""
  assert_output "contended hold wait "
  run complete_words "$LOCKSWAP" report --sort a
  assert_output "acquisitions "
  run complete_words "$LOCKSWAP" report "$ROOT/tests/data/report-syn"
  assert_output "$ROOT/tests/data/report-synthetic.json "
  run complete_words "$LOCKSWAP" profile --sam
  assert_output "--sample "
  run complete_words "$LOCKSWAP" compare --higher
  assert_output "--higher-is-better "
  run complete_words "$LOCKSWAP" compare --algos tas,clh-t
  assert_output "tas,clh-tp tas,clh-try "
  run complete_words "$LOCKSWAP" compare --algos mcs/y
  assert_output "mcs/yield "
  run complete_words "$LOCKSWAP" compare --wait spin,pa
  assert_output "spin,park "
  run complete_words "$LOCKSWAP" compare --rwalgos central,pf-t+
  assert_output "central,pf-t+bravo "
  # the program: after --, or the first operand, completed as a command
  run complete_words "$LOCKSWAP" -a mcs -- "$ROOT/scripts/run-te"
  assert_output "$ROOT/scripts/run-tests "
  run complete_words "$LOCKSWAP" -a mcs "$ROOT/scripts/run-te"
  assert_output "$ROOT/scripts/run-tests "
  # every option of every command is offered
  local sub opt got
  for sub in "" compare profile report; do
    # shellcheck disable=SC2086
    got=" $(complete_words "$LOCKSWAP" $sub -)"
    # shellcheck disable=SC2086
    for opt in $("$LOCKSWAP" $sub --help | grep -oE -- '(^|[[:space:],[])--?[a-zA-Z][-a-zA-Z]*' | sed -E 's/^[[:space:],[]//' | sort -u); do
      [[ "$got" == *" $opt "* ]] || { echo "lockswap $sub: $opt not offered: $got"; return 1; }
    done
  done
}

@test "make install PREFIX=... DESTDIR=...: the library, the commands, lockswap(1), lockswap(7) and the completion, where man and bash-completion look for them" {
  run make -C "$ROOT" --no-print-directory install PREFIX=/usr DESTDIR="$T/stage"
  assert_success
  (cd "$T/stage" && find . -type f | sort) >"$T/files"
  local f
  for f in ./usr/bin/lockswap ./usr/bin/lockswap-profile ./usr/bin/lockswap-report ./usr/bin/lockswap-compare \
    ./usr/lib/liblockswap.so ./usr/lib/lockswap_compare.zip ./usr/share/man/man1/lockswap.1 ./usr/share/man/man7/lockswap.7 \
    ./usr/share/bash-completion/completions/lockswap; do
    grep -qxF "$f" "$T/files" || { echo "not installed: $f"; cat "$T/files"; return 1; }
  done
  cmp "$T/stage/usr/share/man/man7/lockswap.7" "$MAN7"
  # man finds the pages in the staged tree, bash-completion the completion
  run env MANPATH="$T/stage/usr/share/man" MANWIDTH=100 man 7 lockswap
  assert_success
  assert_output --partial "lock algorithms for the pthread mutexes"
  run bash -c 'source /usr/share/bash-completion/bash_completion
    BASH_COMPLETION_USER_DIR=/nonexistent; XDG_DATA_DIRS="$1/usr/share"
    __load_completion lockswap && complete -p lockswap' _ "$T/stage"
  assert_success
  assert_output "complete -F _lockswap lockswap"
}

@test "make deb: a Debian package built with debhelper holds what make install installs; installed into a fresh root with dpkg, its lockswap lists, runs a program with its own library, profiles and reports" {
  command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
    { echo "dpkg-dev and debhelper are needed (scripts/deps.sh test)"; return 1; }
  run timeout -k 5 "$(hang_timeout)" make -C "$ROOT" --no-print-directory deb
  assert_success
  local deb
  deb=$(ls "$B"/deb/lockswap_*_amd64.deb)
  [ -f "$deb" ]
  # debhelper's files cleaned from the tree, nothing written beside it
  run ls -A "$ROOT/debian"
  assert_output "$(printf '%s\n' changelog control copyright lockswap.install rules source)"
  [ -z "$(find "$ROOT/.." -maxdepth 1 -newer "$deb" -name 'lockswap*')" ]
  # the package's files: make install's, man pages compressed, plus the docs
  make -C "$ROOT" --no-print-directory install PREFIX=/usr DESTDIR="$T/stage" >/dev/null
  (cd "$T/stage" && find . -type f | sed -E 's,^(\./usr/share/man/.*),\1.gz,'
    echo ./usr/share/doc/lockswap/changelog.gz; echo ./usr/share/doc/lockswap/copyright) | sort >"$T/want"
  dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sort >"$T/got"
  diff -u "$T/want" "$T/got"
  # its dependencies, those dlopen'd too, are packages this machine has
  local dep
  run dpkg-deb -f "$deb" Depends
  for dep in libc6 libhwloc15 libunwind8 libdebuginfod1 libdw1; do
    [[ "$output" == *"$dep"* ]] || { echo "Depends: $output: no $dep"; return 1; }
    dpkg-query -W -f='${Status}' "$dep" | grep -q 'install ok installed'
  done
  # a fresh root with its own dpkg database
  local root=$T/root
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
  touch "$root/var/lib/dpkg/status"
  run dpkg --root="$root" --force-depends -i "$deb"
  assert_success
  [ "$(dpkg-query --root="$root" -W -f='${Status}' lockswap)" = "install ok installed" ]
  run "$root/usr/bin/lockswap" --list
  assert_success
  [ "$output" = "$("$LOCKSWAP" --list)" ]
  run timeout 20 "$root/usr/bin/lockswap" -a mcs -- "$PROGS/which_lib"
  assert_success
  local l
  for l in "${lines[@]}"; do
    [[ "$l" == *" $root/usr/lib/liblockswap.so" ]] || { echo "not the installed library: $l"; return 1; }
  done
  run timeout 20 env LD_PRELOAD="$root/usr/lib/liblockswap.so" LOCKSWAP_ALGO=clh "$PROGS/which_lib"
  assert_success
  assert_line --partial " $root/usr/lib/liblockswap.so"
  # the subcommands from the installed paths
  run timeout 60 "$root/usr/bin/lockswap" profile --top 0 -o "$T/p.json" -- "$PROGS/flame" known
  assert_success
  run timeout 60 "$root/usr/bin/lockswap" report --folded --weight contended "$T/p.json"
  assert_success
  assert_line --regexp '^.*;worker;handle_request;cache_lookup;mutex #[0-9]+ cache_init \(flame.c:[0-9]+\) 3$'
  # compare's engine from lib/lockswap_compare.zip
  run timeout 60 "$root/usr/bin/lockswap" compare --algos mcs --reps 1 --no-plot -q --out "$T/c" -- "$PROGS/hello"
  assert_success
  assert_line "lockswap compare: 2 runs, 0 not ok; results in $T/c (results.csv, summary.txt)"
  grep -qx "lockswap: $root/usr/bin/lockswap" "$T/c/meta.txt"
  run env MANWIDTH=100 man -l "$root/usr/share/man/man7/lockswap.7.gz"
  assert_success
  assert_output --partial "c-tkt-tkt"
  # and it goes away whole
  run dpkg --root="$root" --purge lockswap
  assert_success
  [ -z "$(find "$root/usr" -type f)" ]
}
