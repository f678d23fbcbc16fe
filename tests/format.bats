#!/usr/bin/env bats
# The tree follows .clang-format (issue 24, item 5): `make format` changes
# nothing, so a reformat never hides a real change in a diff.
load helpers

@test "every C and C++ file is as clang-format leaves it (make format-check)" {
  command -v clang-format >/dev/null || { echo "clang-format is missing (scripts/deps.sh test installs it)"; return 1; }
  [ -d "$ROOT/.git" ] || [ -f "$ROOT/.git" ] || skip "not a git checkout"
  run make -C "$ROOT" --no-print-directory format-check
  [ "$status" -eq 0 ] || { echo "$output" | head -40; echo "run make format"; return 1; }
}
