#!/usr/bin/env bats
# `make` (the all target) builds every program README.md tells users to run
# (issue 9, item 5): each build/NAME that README names must be a
# prerequisite of `all` in make's own database (make -p: no build here).
bats_require_minimum_version 1.5.0
load helpers

@test "every build/ program named in README.md is built by make all" {
  local names all missing=() n
  # build/NAME, not a folder (build/, build/deb/..., build/pkg: make deb's)
  names=$(grep -oP 'build/[A-Za-z0-9_.+-]+(?![/A-Za-z0-9_.+-])' "$ROOT/README.md" | sort -u)
  [ -n "$names" ] || { echo "README.md names no build/ program"; return 1; }
  all=$(make -C "$ROOT" --no-print-directory -pq all 2>/dev/null | sed -n 's/^all: *//p' | tr ' ' '\n')
  [ -n "$all" ] || { echo "no all target in make's database"; return 1; }
  for n in $names; do
    grep -qxF "$n" <<<"$all" || missing+=("$n")
  done
  [ ${#missing[@]} -eq 0 ] || { echo "README names, make all does not build: ${missing[*]}"; return 1; }
}

# scripts/deps.sh, the first step of both README commands: with a dpkg that
# holds some packages installed, one only configured (removed) and one not
# at all, it installs exactly the missing ones; with all present it runs no
# apt-get and prints nothing (dpkg-query and apt-get are doubles on PATH)
@test "scripts/deps.sh installs exactly the packages dpkg does not hold as installed, and nothing when all are" {
  local d=$BATS_TEST_TMPDIR/bin
  mkdir -p "$d"
  # the double answers as dpkg-query -W -f='${Package}\t${Status}\n' does:
  # installed ones, one removed with its configuration kept, and silence
  # (an error on stderr) for one it has never seen
  cat >"$d/dpkg-query" <<'SH'
#!/bin/bash
for p in "$@"; do
  case "$p" in -*) continue ;; gcc) printf 'gcc\tdeinstall ok config-files\n' ;; make) echo "dpkg-query: no packages found matching $p" >&2 ;;
    *) printf '%s\tinstall ok installed\n' "$p" ;; esac
done
SH
  printf '#!/bin/bash\necho "apt-get $*" >>"%s/apt.log"\n' "$BATS_TEST_TMPDIR" >"$d/apt-get"
  chmod +x "$d/dpkg-query" "$d/apt-get"
  [ "$(id -u)" -eq 0 ] || skip "not root: deps.sh would call sudo"
  run --separate-stderr env PATH="$d:$PATH" "$ROOT/scripts/deps.sh" model
  assert_success
  [ "$stderr" = "deps.sh: installing missing Debian packages: gcc make" ] || { echo "stderr: $stderr"; return 1; }
  grep -qx 'apt-get install -y -qq --no-install-recommends gcc make' "$BATS_TEST_TMPDIR/apt.log" ||
    { cat "$BATS_TEST_TMPDIR/apt.log"; return 1; }
  # all present: silent, no apt-get
  rm -f "$BATS_TEST_TMPDIR/apt.log"
  printf '#!/bin/bash\nfor p; do [[ $p == -* ]] || printf "%%s\\tinstall ok installed\\n" "$p"; done\n' >"$d/dpkg-query"
  run env PATH="$d:$PATH" "$ROOT/scripts/deps.sh" model
  assert_success
  assert_output ""
  [ ! -e "$BATS_TEST_TMPDIR/apt.log" ]
}
