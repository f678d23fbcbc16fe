#!/usr/bin/env bats
# `make` (the all target) builds every program README.md tells users to run
# (issue 9, item 5): each build/NAME that README names must be a
# prerequisite of `all` in make's own database (make -p: no build here).
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
