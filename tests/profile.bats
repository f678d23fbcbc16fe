#!/usr/bin/env bats
# The contention profiler (issue 11): LOCKSWAP_PROFILE=1, `lockswap profile`,
# `lockswap report`. The counts are checked field by field against programs
# that know them (tests/progs/profile.c prints what its profile must say),
# for every algorithm and for glibc's own mutex (pthread); contention is
# forced (the holder waits until the waiter sleeps), never hoped for, so the
# waiting policy is park.
bats_require_minimum_version 1.5.0
load helpers
TEST_TIMEOUT=60
P="$PROGS/profile"

setup() {
  T=$(mktemp -d)
}

teardown() {
  rm -rf "$T"
}

# profiled ALGO OUT CMD...: CMD under ALGO with the profiler on, the table
# off, the profile saved to OUT (CSV if OUT ends in .csv).
profiled() {
  local algo=$1 out=$2
  shift 2
  timeout -k 5 "$TEST_TIMEOUT" env LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$algo" LOCKSWAP_WAIT=park \
    LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_TOP=0 LOCKSWAP_PROFILE_OUT="$out" "$@"
}

# awk: splits a CSV line into f[1..n] (quoted fields may hold commas)
CSVSPLIT='
function csvsplit(s, f,   n) {
  n = 0
  for (;;) {
    if (substr(s, 1, 1) == "\"") {
      if (!match(s, /^"([^"]|"")*"/)) { f[++n] = s; return n }
      f[++n] = substr(s, 2, RLENGTH - 2); gsub(/""/, "\"", f[n]); s = substr(s, RLENGTH + 1)
    } else if (match(s, /,/)) {
      f[++n] = substr(s, 1, RSTART - 1); s = substr(s, RSTART)
    } else { f[++n] = s; return n }
    if (substr(s, 1, 1) != ",") return n
    s = substr(s, 2)
  }
}'

# check_profile EXPECT CSV: every line "FILE ADDRESS INDEX FIELD OP VALUE" of
# EXPECT holds in the profile CSV (FILE "-") or CSV.FILE (a child's).
# Pseudo-fields: site_contended (sum over the record's call sites),
# site_stack (their stacks).
check_profile() {
  local expect=$1 csv=$2 f file out rc=0
  [ -s "$expect" ] || { echo "the program printed no expectations"; return 1; }
  for f in $(awk '{ print $1 }' "$expect" | sort -u); do
    file=$csv
    [ "$f" = - ] || file="$csv.$f"
    [ -s "$file" ] || { echo "no profile $file"; rc=1; continue; }
    out=$(awk -v want="$f" "$CSVSPLIT"'
      FNR == NR { if ($1 == want) { e[++ne] = $0; addr[$2] = 1 } next }
      FNR == 1 { nh = csvsplit($0, h); for (i = 1; i <= nh; i++) col[h[i]] = i; next }
      {
        csvsplit($0, v)
        if (v[1] == "site") {
          sc[v[2]] += v[col["contended"]]; ss[v[2]] = ss[v[2]] " " v[col["stack"]]; next
        }
        if (!(v[3] in addr)) next
        k = v[3]; n = ++cnt[k]; ids[k, n] = v[2] + 0; kind[k] = v[1]
        for (c in col) val[k, v[2] + 0, c] = v[col[c]]
      }
      END {
        bad = 0
        for (i = 1; i <= ne; i++) {
          split(e[i], x, " ")
          k = x[2]; idx = x[3]; fld = x[4]; op = x[5]
          want_v = substr(e[i], index(e[i], " " op " ") + length(op) + 2)
          if (!(k in cnt)) { print "no record at " k " (" fld ")"; bad = 1; continue }
          # the INDEX-th record at this address, by id
          for (a = 1; a <= cnt[k]; a++) o[a] = ids[k, a]
          for (a = 1; a <= cnt[k]; a++) for (b = a + 1; b <= cnt[k]; b++) if (o[b] < o[a]) { t = o[a]; o[a] = o[b]; o[b] = t }
          if (idx > cnt[k]) { print k ": no record number " idx; bad = 1; continue }
          id = o[idx]
          if (fld == "site_contended") got = sc[id] + 0
          else if (fld == "site_stack") got = ss[id]
          else got = val[k, id, fld]
          ok = op == "=" ? got == want_v : op == ">=" ? got + 0 >= want_v + 0 : index(got, want_v) > 0
          if (!ok) { printf "%s record %d (%s #%d) %s: got \"%s\", want %s %s\n", k, idx, kind[k], id, fld, got, op, want_v; bad = 1 }
        }
        exit bad
      }' "$expect" "$file") || { echo "$file:"; echo "$out"; rc=1; }
  done
  return $rc
}

# each_profiled CASE [VAR=VALUE...]: CASE of the profile program under every
# algorithm and pthread, its profile checked; fails naming every algorithm
# that failed.
each_profiled() {
  local c=$1 a failed=()
  shift
  for a in $(algos); do
    if ! profiled "$a" "$T/$a.csv" env "$@" "$P" "$c" >"$T/$a.expect" 2>"$T/$a.err"; then
      failed+=("$a"); echo "=== $a: the program failed:"; tail -5 "$T/$a.err"; continue
    fi
    check_profile "$T/$a.expect" "$T/$a.csv" >"$T/$a.check" 2>&1 || {
      failed+=("$a"); echo "=== $a:"; head -20 "$T/$a.check"; }
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed under: ${failed[*]}"; return 1; }
}

@test "the profile programs pass natively (glibc), and print their expectations" {
  for c in counts sampled fork malloc; do
    run timeout 30 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
    [ -n "$output" ] || { echo "native $c printed nothing"; return 1; }
  done
}

@test "counts exact, field by field, for every algorithm and pthread: lock, trylock, timedlock, contended, trylock failures, timeouts, hand-offs, longest queue, condvar waits, timeouts, signals, broadcasts; recursive relocks; glibc's process-shared, robust and PI mutexes; destroy and re-init make new records; threads that exit early" {
  each_profiled counts
}

@test "LOCKSWAP_PROFILE_SAMPLE=3 takes the call sites of 1 contended acquisition in 3; counts stay exact (every algorithm)" {
  each_profiled sampled
  each_profiled sampled LOCKSWAP_PROFILE_SAMPLE=3
}

@test "fork while contended: each child writes FILE.PID with its own counts (exit, _exit, _Exit); the parent's profile has only the parent's" {
  each_profiled fork
}

@test "contention inside malloc-heavy code, call sites taken: no deadlock, no recursion, exact count (every algorithm)" {
  each_profiled malloc
}
