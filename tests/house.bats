#!/usr/bin/env bats
# The house reads from the top down (issue 35): scripts/house reads the
# includes and the calls of interpose/ and profile/ (nm on build/) and the
# layer table of ARCHITECTURE.md, and fails on an upward or sideways arrow,
# a circle, a file over 800 lines or a file the table does not name.
load helpers

# under Debian's python3, as scripts/deps.sh installs it (and as compare's
# engine runs): a python3 found on PATH may be a version manager's shim,
# which cost 0.8 s of CPU per start here, where Debian's costs 0.05 s
house() {
  /usr/bin/python3 "$ROOT/scripts/house" "$@"
}

@test "interpose/ and profile/ read from the top down: every arrow goes down the layer table, no circle, no file over 800 lines; profile/ knows interpose/ only through observe.h" {
  # one reading of the house for both folders (--in is repeatable: what
  # involves either is reported)
  run house --in interpose --in profile
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

# A tree of six files whose table says top, mid, low, each using those
# below; each case breaks one rule and must be named. It is written and
# built once for the file (setup_file); make_tree gives a test its own copy,
# times kept, and build_tree compiles only what the test changed.
setup_file() {
  T=$BATS_FILE_TMPDIR/base
  write_tree
  build_tree
}

make_tree() {
  T=$BATS_TEST_TMPDIR/tree
  rm -rf "$T"
  cp -a "$BATS_FILE_TMPDIR/base" "$T"
}

write_tree() {
  mkdir -p "$T/interpose" "$T/profile" "$T/build/interpose"
  cat >"$T/ARCHITECTURE.md" <<'TABLE'
<!-- house:begin -->
| room | files, top first | what | uses |
| --- | --- | --- | --- |
| top | `interpose/top.c` | | mid, low |
| mid | `interpose/mid_a.c`, `interpose/mid_b.[ch]` | | low |
| side | `interpose/side.c` | | low |
| low | `interpose/low.[ch]` | | |
TABLE
  echo '<!-- house:end -->' >>"$T/ARCHITECTURE.md"
  cat >"$T/interpose/low.h" <<'C'
int low(void);
C
  cat >"$T/interpose/low.c" <<'C'
#include "low.h"
int low(void) { return 1; }
C
  cat >"$T/interpose/mid_b.h" <<'C'
int mid_b(void);
C
  cat >"$T/interpose/mid_b.c" <<'C'
#include "low.h"
#include "mid_b.h"
int mid_b(void) { return low(); }
C
  cat >"$T/interpose/mid_a.c" <<'C'
#include "mid_b.h"
int mid_a(void) { return mid_b(); }
C
  cat >"$T/interpose/side.c" <<'C'
#include "low.h"
int side(void) { return low(); }
C
  cat >"$T/interpose/top.c" <<'C'
int mid_a(void);
int top(void) { return mid_a(); }
C
}

# build_tree: compiles each .c of the tree whose object is missing, or older
# than it or than a header of the tree (what make would do)
build_tree() {
  local f o h stale
  for f in "$T"/interpose/*.c; do
    o=$T/build/interpose/$(basename "${f%.c}").o
    stale=0
    [ "$o" -nt "$f" ] || stale=1
    for h in "$T"/interpose/*.h; do [ "$o" -nt "$h" ] || stale=1; done
    [ "$stale" = 0 ] || cc -c -I"$T/interpose" -o "$o" "$f" || return 1
  done
}

@test "the checker passes a tree in order, and names what it checked" {
  make_tree
  build_tree
  run house --root "$T"
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  assert_output --partial "5 units, 4 arrows; 0 out of order"
  run house --root "$T" --arrows
  assert_output --partial "interpose/top -> interpose/mid_a (uses mid_a)"
  assert_output --partial "interpose/mid_b -> interpose/low (includes interpose/low.h; uses low)"
}

@test "the checker fails on an upward call, naming the arrow and the symbol, and on an object below the house that calls into it" {
  make_tree
  echo 'int top(void); int low2(void) { return top(); }' >>"$T/interpose/low.c"
  build_tree
  mkdir -p "$T/build/locks/queue"
  echo 'int low(void); int lock_up(void) { return low(); }' >"$T/lock_up.c"
  cc -c -o "$T/build/locks/queue/lock_up.o" "$T/lock_up.c"
  run house --root "$T"
  [ "$status" -eq 1 ]
  assert_output --partial "upward: interpose/low -> interpose/top (uses top): room top is above room low"
  assert_output --partial "upward: locks/queue/lock_up.o -> interpose/low (uses low): locks/ is below the house"
}

@test "the checker fails on an upward include within a room, and on a circle" {
  make_tree
  echo '#include "mid_a.h"' >>"$T/interpose/mid_b.c"
  echo 'int mid_a(void);' >"$T/interpose/mid_a.h"
  sed -i 's|`interpose/mid_a.c`|`interpose/mid_a.[ch]`|' "$T/ARCHITECTURE.md"
  echo 'int mid_b2(void) { return mid_a(); }' >>"$T/interpose/mid_b.c"
  build_tree
  run house --root "$T"
  [ "$status" -eq 1 ]
  assert_output --partial "upward: interpose/mid_b -> interpose/mid_a (includes interpose/mid_a.h; uses mid_a): interpose/mid_a is above it in room mid"
  assert_output --partial "circle of 2 units: interpose/mid_a, interpose/mid_b"
}

@test "the checker fails on a sideways call, and on a header's inline code calling up" {
  make_tree
  echo 'int side(void); int mid_c(void) { return side(); }' >>"$T/interpose/mid_a.c"
  echo 'int top(void); static inline int low_up(void) { return top(); }' >>"$T/interpose/low.h"
  build_tree
  run house --root "$T"
  [ "$status" -eq 1 ]
  assert_output --partial "sideways: interpose/mid_a -> interpose/side (uses side): room mid does not use room side"
  assert_output --partial "upward: interpose/low -> interpose/top (its inline code names top)"
}

@test "the checker fails on a file over 800 lines and on a file the table does not name" {
  make_tree
  for i in $(seq 801); do echo "/* $i */"; done >>"$T/interpose/side.c"
  echo 'int stray(void) { return 0; }' >"$T/interpose/stray.c"
  build_tree
  run house --root "$T"
  [ "$status" -eq 1 ]
  assert_output --partial "too long: interpose/side.c has 803 lines (at most 800)"
  assert_output --partial "table: interpose/stray.c is in no room"
}

@test "the checker refuses stale objects and a table that lets a room use one above it" {
  make_tree
  build_tree
  touch -d '2001-01-01' "$T/build/interpose/low.o"
  run house --root "$T"
  [ "$status" -eq 2 ]
  assert_output --partial "build/interpose/low.o is older than interpose/low.c: run make first"
  build_tree
  sed -i 's/| low | `interpose\/low.\[ch\]` | | |/| low | `interpose\/low.[ch]` | | top |/' "$T/ARCHITECTURE.md"
  run house --root "$T"
  [ "$status" -eq 1 ]
  assert_output --partial "table: room low uses top, which is listed above it"
}

# issue 35: DEVELOPERS.md says how to work, in short sections, and links to
# ARCHITECTURE.md's map instead of repeating it
@test "DEVELOPERS.md stays under 6 KB and links to ARCHITECTURE.md, the one map of the house" {
  local n
  n=$(wc -c <"$ROOT/DEVELOPERS.md")
  # under 6,000 bytes: under 6 KB whether a KB is 1,000 bytes or 1,024
  [ "$n" -lt 6000 ] || { echo "DEVELOPERS.md is $n bytes (under 6,000: the map is ARCHITECTURE.md's)"; return 1; }
  grep -q '](ARCHITECTURE.md)' "$ROOT/DEVELOPERS.md"
}
