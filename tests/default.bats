#!/usr/bin/env bats
# The default lock (issue 33, item 1): `auto`, everywhere a user can see it.
# The library's own report (LOCKSWAP_VERBOSE) is the truth; `lockswap`
# (--help, --list, -v without -a), lockswap(1) and lockswap(7), README's
# table of variables and `make demo`'s table must say the same, and
# LOCKSWAP_ALGO=ttas must give back the former default.
bats_require_minimum_version 1.5.0
load helpers
TEST_TIMEOUT=120

# text PAGE: the man page as plain text, one paragraph per line
text() {
  groff -man -Tascii -rHY=0 -rLL=1000n -P-cbou "$1"
}

# The algorithm the library runs without LOCKSWAP_ALGO, from its report.
lib_default() {
  env -u LOCKSWAP_ALGO LD_PRELOAD="$LIB" LOCKSWAP_VERBOSE=1 "$PROGS/hello" 2>&1 >/dev/null |
    sed -n 's/^lockswap: algorithm=\([^ ]*\) .*/\1/p'
}

@test "the library's default is auto; LOCKSWAP_ALGO=ttas gives the former default" {
  [ "$(lib_default)" = auto ] || { echo "library default: $(lib_default)"; return 1; }
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_VERBOSE=1 LOCKSWAP_ALGO=ttas "$PROGS/hello"
  assert_success
  [[ "$stderr" == "lockswap: algorithm=ttas "* ]] || { echo "$stderr"; return 1; }
  run under ttas -- "$PROGS/exclusion" mixed 4 2000
  assert_success
}

@test "lockswap: --help, --list (exactly one row marked, the library's) and -v without -a name the default" {
  local d
  d=$(lib_default)
  run "$LOCKSWAP" --help
  assert_success
  assert_output --partial "(LOCKSWAP_ALGO; default $d)"
  run "$LOCKSWAP" --list
  assert_success
  # a row and its wrapped lines (indented) as one line
  local rows
  rows=$(awk '/^ / { sub(/^ +/, " "); r = r $0; next } { if (NR > 1) print r; r = $0 } END { print r }' <<<"$output")
  [ "$(grep -c '\[the default: LOCKSWAP_ALGO unset\]' <<<"$rows")" -eq 1 ] || { echo "$output"; return 1; }
  grep -Eq "^$d +.*\[the default: LOCKSWAP_ALGO unset\]" <<<"$rows" || { echo "$output"; return 1; }
  run --separate-stderr timeout 10 "$LOCKSWAP" -v -- "$PROGS/hello"
  assert_success
  [[ "$stderr" == *"algorithm=$d "* ]] || { echo "$stderr"; return 1; }
}

@test "lockswap(1) and lockswap(7) name the default, and lockswap(7)'s algorithm list marks it" {
  local d page
  d=$(lib_default)
  page=$(text "$B/man/lockswap.1")
  grep -q "(LOCKSWAP_ALGO; default $d)" <<<"$page" || { grep -n "LOCKSWAP_ALGO" <<<"$page"; return 1; }
  page=$(text "$B/man/lockswap.7")
  grep -Eq "see ALGORITHMS; default $d[ ,)]" <<<"$page" || { grep -n "default" <<<"$page" | head; return 1; }
  # the entry of the default in ALGORITHMS (made from --list at build time):
  # the tag and its paragraph, on one line or two
  grep -A1 -E "^ +$d( |\$)" <<<"$page" | tr '\n' ' ' | grep -q "the default: LOCKSWAP_ALGO unset" ||
    { grep -n -A2 -E "^ +$d( |\$)" <<<"$page"; return 1; }
}

@test "README's table of variables gives the library's default" {
  local d row
  d=$(lib_default)
  row=$(grep '^| `LOCKSWAP_ALGO` |' "$ROOT/README.md")
  [[ "$(awk -F' [|] ' '{ print $3 }' <<<"$row")" == '`'"$d"'`'* ]] || { echo "$row"; return 1; }
}

@test "make demo's table: the default lock, run without -a, is the first row after glibc" {
  local d
  d=$(lib_default)
  run timeout 300 "$ROOT/scripts/demo" --threads 2 --seconds 0.02 --ncs 100 --no-gcr
  assert_success
  local rows
  rows=$(grep -E '^[a-z]' <<<"$output" | grep -v '^lockswap demo\|^waiting policy\|^algorithm\|^glibc =\|^through')
  [ "$(sed -n 1p <<<"$rows" | awk '{print $1}')" = glibc ] || { echo "$output"; return 1; }
  [[ "$(sed -n 2p <<<"$rows")" == "$d (default) "*" ok" ]] || { echo "$output"; return 1; }
  # the default is not listed a second time
  [ "$(grep -c "^$d " <<<"$rows")" -eq 1 ] || { echo "$output"; return 1; }
}
