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
  profiled_as LOCKSWAP_ALGO "$@"
}

# profiled_as VAR ALGO OUT CMD...: the same with VAR=ALGO (LOCKSWAP_RWALGO...)
profiled_as() {
  local var=$1 algo=$2 out=$3
  shift 3
  "$RUN_LIMIT" -k 5 "$(hang_timeout)" LD_PRELOAD="$LIB" "$var=$algo" LOCKSWAP_WAIT=park \
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
# site_stack (their stacks). One awk reads every profile of the run, in
# turn (a process per file and per list cost more than the runs it checks,
# over the hundreds of runs of this file); a failure names the profile.
check_profile() {
  local expect=$1 csv=$2 f file rc=0 args=()
  local -A files=()
  [ -s "$expect" ] || { echo "the program printed no expectations"; return 1; }
  while read -r f _; do files[$f]=1; done <"$expect"
  for f in "${!files[@]}"; do
    file=$csv
    [ "$f" = - ] || file="$csv.$f"
    [ -s "$file" ] || { echo "no profile $file"; rc=1; continue; }
    args+=("want=$f" "$file")
  done
  [ ${#args[@]} -gt 0 ] || return 1
  awk -v csv="$csv" "$CSVSPLIT"'
    FNR == NR { e[++ne] = $0; next }
    FNR == 1 {
      # a profile: its header, and the addresses its expectations name
      seen[want] = 1; keep = 0; rec = ""
      split("", col); split("", addr)
      for (i = 1; i <= ne; i++) { split(e[i], x, " "); if (x[1] == want) addr[x[2]] = 1 }
      nh = csvsplit($0, h); for (i = 1; i <= nh; i++) col[h[i]] = i
      next
    }
    {
      # the first three fields (kind, id, address) are never quoted: a
      # record at another address, and its call sites, are skipped
      # before the costly split (100,000 records in the test of many)
      split($0, q, ",")
      if (q[1] == "site") { if (!keep) next }
      else if (!(keep = (q[3] in addr))) next
      csvsplit($0, v)
      # a call site belongs to the record before it (ids are per kind)
      if (v[1] == "site") {
        sk = want SUBSEP rec SUBSEP v[2]; sc[sk] += v[col["contended"]]; ss[sk] = ss[sk] " " v[col["stack"]]; next
      }
      rec = v[1]
      if (!(v[3] in addr)) next
      k = want SUBSEP v[3]; n = ++cnt[k]; ids[k, n] = v[2] + 0; kind[k] = v[1]
      for (c in col) val[k, v[2] + 0, c] = v[col[c]]
    }
    END {
      bad = 0
      for (i = 1; i <= ne; i++) {
        split(e[i], x, " ")
        w = x[1]
        if (!(w in seen)) continue # no profile: said above
        f = w == "-" ? csv : csv "." w
        k = w SUBSEP x[2]; idx = x[3]; fld = x[4]; op = x[5]
        want_v = substr(e[i], index(e[i], " " op " ") + length(op) + 2)
        if (!(k in cnt)) { print f ": no record at " x[2] " (" fld ")"; bad = 1; continue }
        # the INDEX-th record at this address, by id
        for (a = 1; a <= cnt[k]; a++) o[a] = ids[k, a]
        for (a = 1; a <= cnt[k]; a++) for (b = a + 1; b <= cnt[k]; b++) if (o[b] < o[a]) { t = o[a]; o[a] = o[b]; o[b] = t }
        if (idx > cnt[k]) { print f ": " x[2] ": no record number " idx; bad = 1; continue }
        id = o[idx]
        if (fld == "site_contended") got = sc[w, kind[k], id] + 0
        else if (fld == "site_stack") got = ss[w, kind[k], id]
        else got = val[k, id, fld]
        ok = op == "=" ? got == want_v : op == ">=" ? got + 0 >= want_v + 0 : index(got, want_v) > 0
        if (!ok) { printf "%s: %s record %d (%s #%d) %s: got \"%s\", want %s %s\n", f, x[2], idx, kind[k], id, fld, got, op, want_v; bad = 1 }
      }
      exit bad
    }' "$expect" "${args[@]}" || rc=1
  return $rc
}

# each_profiled "CASE..." [VAR=VALUE...]: the CASEs of the profile program
# (in one process: each case has locks of its own) under every
# algorithm and pthread, its profile checked; fails naming every algorithm
# that failed.
each_profiled() {
  each_profiled_family algos LOCKSWAP_ALGO "$@"
}

# each_profiled_family LISTFN VAR "CASE..." [VAR=VALUE...]: the same under every
# algorithm of a family (algos, rwalgos, spinalgos: glibc's own included).
# (untraced: bats' DEBUG trap on every command of the loop and of
# check_profile costs more than the runs; a failure names the algorithm and
# prints what failed)
each_profiled_family() {
  untraced each_profiled_family_untraced "$@"
}
each_profiled_family_untraced() {
  local listfn=$1 var=$2 c=$3 a failed=()
  shift 3
  for a in $($listfn); do
    # shellcheck disable=SC2086
    if ! profiled_as "$var" "$a" "$T/$a.csv" env "$@" "$P" $c >"$T/$a.expect" 2>"$T/$a.err"; then
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

@test "counts exact, field by field, for every algorithm and pthread: lock, trylock, timedlock, contended, trylock failures, timeouts, hand-offs, longest queue, condvar waits, timeouts, signals, broadcasts; recursive relocks; glibc's process-shared, robust and PI mutexes; destroy and re-init make new records; threads that exit early; fork while contended: each child writes FILE.PID with its own counts (exit, _exit, _Exit), the parent's profile has only the parent's; contention inside malloc-heavy code, call sites taken: no deadlock, no recursion, exact count" {
  each_profiled "counts fork malloc"
}

@test "rwlocks, exact, under every rwlock algorithm and glibc's: reads and writes of every kind apart (lock, try, timed, clock), contended, try failures, timeouts; recursive reads count, the writer's EDEADLK and EBUSY and a bad timespec do not; hand-offs between writers, longest queue, read and write wait and hold, call sites; process-shared and writer-preferring kinds; destroy and re-init make new records" {
  each_profiled_family rwalgos LOCKSWAP_RWALGO rwlock
}

@test "spinlocks, exact, under every spinlock algorithm and glibc's: lock, trylock, try failures, contended, hand-offs, call sites; init and destroy" {
  each_profiled_family spinalgos LOCKSWAP_SPINALGO spin
}

@test "rwlocks and spinlocks in the table, in lockswap report (reads and writes apart, each call site's mode) and in the flame graphs; lockswap profile -r and --spinalgo" {
  run --separate-stderr "$LOCKSWAP" profile -r central --spinalgo ticket16 -w park --top 5 -o "$T/rw.json" -- "$P" rwlock spin
  assert_success
  [[ "$stderr" == *"rwlocks central, spinlocks ticket16"* ]] || { echo "$stderr"; return 1; }
  [[ "$stderr" == *"5 rwlocks (2 contended), 1 spinlock (1 contended)"* ]] || { echo "$stderr"; return 1; }
  [[ "$stderr" == *"top 5 of 5 rwlocks"* && "$stderr" == *"rd cont  wr cont"* ]] || { echo "$stderr"; return 1; }
  # RW's row: 16 reads, 13 writes, 1 contended of each
  grep -qE '^ +[0-9]+ +16 +13 +1 +1 +2 +2 +1 +1 ' <<<"$stderr" || { echo "$stderr"; return 1; }
  [[ "$stderr" == *"11 rdlock, 3 tryrdlock, 2 timedrdlock; 9 wrlock, 2 trywrlock, 2 timedwrlock; first-use at"* ]] ||
    { echo "$stderr"; return 1; }
  run "$LOCKSWAP" report --top 1 "$T/rw.json"
  assert_success
  assert_output --regexp 'site [0-9] \(read\): 1 contended'
  assert_output --regexp 'site [0-9] \(write\): 1 contended'
  assert_output --regexp 'site [0-9] \(read\): 0 contended, 1 timeouts'
  assert_output --regexp 'site [0-9] \(write\): 0 contended, 1 timeouts'
  assert_output --regexp "rw_attempt_fn\+0x[0-9a-f]+ \(profile.c:[0-9]+\)"
  assert_output --partial "top 1 of 1 spinlock"
  run "$LOCKSWAP" report --folded "$T/rw.json"
  assert_success
  assert_output --regexp 'rw_attempt_fn;rwlock #[0-9]+ rw_n \(profile.c:[0-9]+\) \(read\) [0-9]+'
  assert_output --regexp 'rw_attempt_fn;rwlock #[0-9]+ rw_n \(profile.c:[0-9]+\) \(write\) [0-9]+'
  assert_output --regexp 'spin_attempt_fn;spinlock #1 spin_case \(profile.c:[0-9]+\) [0-9]+'
  run "$LOCKSWAP" report --csv "$T/rw.json"
  assert_success
  [ "$(grep -c '^rwlock,' <<<"$output")" -eq 5 ] && [ "$(grep -c '^spin,' <<<"$output")" -eq 1 ] || { echo "$output"; return 1; }
}

# Sampling is the profiler's own, above the shim's operations: the same for
# every lockswap algorithm (whose counts the test of counts checks, each)
sample_algos() {
  printf '%s\n' pthread $(algos lock | sed -n '1p;$p')
}

@test "LOCKSWAP_PROFILE_SAMPLE=3 takes the call sites of 1 contended acquisition in 3; counts stay exact (glibc's mutex and the first and last algorithm)" {
  each_profiled_family sample_algos LOCKSWAP_ALGO sampled
  each_profiled_family sample_algos LOCKSWAP_ALGO sampled LOCKSWAP_PROFILE_SAMPLE=3
}

# The records at scale are the profiler's own (profile_records.c: the map
# grows from 1024; each thread's table merges at 4096 entries), the same
# above every algorithm; alock keeps its state out of line, so the shim's
# per-mutex map grows beside the profiler's (every algorithm's state for
# 100,000 mutexes, unprofiled, is tests/mutex-memory.bats'; every
# algorithm's records, tests of counts above).
@test "100,000 mutexes, each initialised, locked, trylocked by a second thread and destroyed: 100,000 exact records (alock, out-of-line)" {
  local a n
  for a in alock; do
    profiled "$a" "$T/$a.csv" "$P" many >"$T/$a.out" || { echo "$a: the program failed"; return 1; }
    grep -v '^rows' "$T/$a.out" >"$T/$a.expect"
    check_profile "$T/$a.expect" "$T/$a.csv" || { echo "under $a"; return 1; }
    # (the fields before lock and trylock hold no comma: "where" is
    # many+OFFSET (profile); a record that did would not be counted)
    n=$(grep -cE '^mutex,[0-9]+,[^,]*,[^,]*,[^,]*,[^,]*,destroyed,"?[^,"]*"?,1,1,' "$T/$a.csv")
    [ "$n" -eq 100000 ] || { echo "$a: $n records with lock=1 trylock=1 destroyed, expected 100000"; return 1; }
  done
}

@test "dlopen and dlclose while contended, the library's constructor and destructor taking the mutex: no deadlock, exact count (every algorithm)" {
  untraced each_dlopen
}

each_dlopen() {
  local a failed=()
  for a in $(algos); do
    if ! profiled "$a" "$T/$a.csv" "$PROGS/profile_dl" run "$B/doubles-profile/libprofile_dl.so" \
      >"$T/$a.expect" 2>"$T/$a.err" || ! check_profile "$T/$a.expect" "$T/$a.csv" >"$T/$a.check" 2>&1; then
      failed+=("$a"); echo "=== $a:"; tail -n 5 "$T/$a.err" "$T/$a.check"
    fi
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed under: ${failed[*]}"; return 1; }
}

@test "the profile is written when a thread calls exit, on _exit, abort and SIGTERM, and the program's exit status is unchanged" {
  local a c st want
  for a in pthread mcs; do
    for c in exit_thread:0 _exit:0 abort:134 sigterm:143; do
      want=${c#*:}
      c=${c%:*}
      st=0
      "$RUN_LIMIT" -k 5 "$(hang_timeout)" LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$a" LOCKSWAP_PROFILE=1 \
        LOCKSWAP_PROFILE_OUT="$T/$c.csv" "$P" "$c" >"$T/$c.expect" 2>"$T/$c.err" || st=$?
      [ "$st" -eq "$want" ] || { echo "$a $c: status $st, expected $want"; cat "$T/$c.err"; return 1; }
      grep -q "acquired  contended" "$T/$c.err" || { echo "$a $c: no table on stderr"; cat "$T/$c.err"; return 1; }
      check_profile "$T/$c.expect" "$T/$c.csv" || { echo "under $a, case $c"; return 1; }
    done
  done
}

@test "the table on stderr: top LOCKSWAP_PROFILE_TOP mutexes by wait time with their call sites; a program without mutexes gets one line" {
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=mcs LOCKSWAP_WAIT=park LOCKSWAP_PROFILE=1 \
    LOCKSWAP_PROFILE_TOP=2 "$P" counts
  assert_success
  [[ "$stderr" == *"algorithm mcs, wait park"* ]] || { echo "$stderr"; return 1; }
  [[ "$stderr" == *"top 2 of "*" mutexes"* ]] || { echo "$stderr"; return 1; }
  [[ "$stderr" == *"site 1: "*"attempt_fn+0x"* ]] || { echo "$stderr"; return 1; }
  # two mutex rows: the id, then the acquisitions
  [ "$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ ' <<<"$stderr")" -eq 2 ] || { echo "$stderr"; return 1; }
  # the first is the one with the most waiting: A, with its 2 ms timeout
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=mcs LOCKSWAP_PROFILE=1 true
  [ "${#stderr_lines[@]}" -eq 1 ] && [[ "$stderr" == "lockswap profile: no mutex, condition variable, rwlock or spinlock was used by "* ]] ||
    { echo "$stderr"; return 1; }
}

@test "lockswap profile: glibc's mutex by default, -a for another algorithm, -o saves JSON that lockswap report re-renders with file:line" {
  run --separate-stderr "$LOCKSWAP" profile -o "$T/p.json" --top 3 -- "$P" counts
  assert_success
  [[ "$stderr" == *"algorithm pthread, wait glibc"* ]] || { echo "$stderr"; return 1; }
  [[ "$stderr" == *"saved to $T/p.json"* ]] || { echo "$stderr"; return 1; }
  run --separate-stderr "$LOCKSWAP" profile -a mcs -w park --frames 3 --sample 1 -o "$T/m.json" -- "$P" counts
  assert_success
  [[ "$stderr" == *"algorithm mcs, wait park"* ]] || { echo "$stderr"; return 1; }
  run "$LOCKSWAP" report "$T/m.json"
  assert_success
  assert_output --partial "(profile.c:"   # frames resolved to file:line
  assert_output --partial "created at:"
  assert_output --partial "hold histogram"
  assert_output --partial "site 1: "
  # --frames 3: no call site deeper than 3 frames
  awk '/site [0-9]+:/ { n = 0; s = 1; next } s && /^             / { if (++n > 3) bad = 1; next } { s = 0 } END { exit bad }' <<<"$output"
  # --sort acquisitions --top 1: the mutex with the most acquisitions (A: 17)
  run "$LOCKSWAP" report --sort acquisitions --top 1 "$T/m.json"
  assert_success
  assert_output --regexp $'\n +[0-9]+ +17 '
  [ "$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ ' <<<"$output")" -eq 1 ]
  # --csv: the same records as the library's own CSV
  run "$LOCKSWAP" report --csv "$T/m.json"
  assert_success
  [ "$(grep -c '^mutex,' <<<"$output")" -eq "$(grep -o '"id"' "$T/m.json" | wc -l | awk '{print $1 - 1}')" ]
}

@test "bad profiler settings: one line naming the problem and the valid choices, exit 2 before main" {
  local v
  for v in LOCKSWAP_PROFILE=2 LOCKSWAP_PROFILE=yes "LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_FRAMES=0" \
    "LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_FRAMES=65" "LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_SAMPLE=0" \
    "LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_TOP=-1" "LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_OUT=$T/no/such/dir/p.json" \
    LOCKSWAP_PROFILE_OUT=$T/p.json LOCKSWAP_PROFILE_FRAMES=4; do
    # shellcheck disable=SC2086
    run --separate-stderr env LD_PRELOAD="$LIB" $v "$PROGS/hello"
    [ "$status" -eq 2 ] && [ -z "$output" ] && [ "${#stderr_lines[@]}" -eq 1 ] &&
      [[ "$stderr" == "lockswap: LOCKSWAP_PROFILE"* ]] || { echo "$v: status $status: $stderr"; return 1; }
  done
  for v in "--frames 0" "--sample x" "--top -1" "-o ''" "-a nosuch" "--bogus"; do
    eval "run --separate-stderr \"\$LOCKSWAP\" profile $v -- \"\$PROGS/hello\""
    [ "$status" -eq 2 ] && [ "${#stderr_lines[@]}" -eq 1 ] || { echo "$v: status $status: $stderr"; return 1; }
  done
  echo '{"not": "a profile"}' >"$T/bad.json"
  for v in "$T/missing.json" "$T/bad.json" "--sort x $T/bad.json" "--top x $T/bad.json"; do
    # shellcheck disable=SC2086
    run --separate-stderr "$LOCKSWAP" report $v
    [ "$status" -eq 2 ] && [ "${#stderr_lines[@]}" -eq 1 ] || { echo "$v: status $status: $stderr"; return 1; }
  done
}

@test "profiling on, lock and unlock go through the recording wrappers (so that tests/fastpath.bats, which finds none with profiling off, can fail)" {
  command -v valgrind >/dev/null || skip "valgrind is not installed"
  local out
  out=$(mktemp)
  TEST_TIMEOUT=120 under tas -- env LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_TOP=0 valgrind --tool=callgrind \
    --callgrind-out-file="$out" "$PROGS/pairs" 20000 >/dev/null 2>&1
  run bash -c "grep -oE '^c?fn=\([0-9]+\) (w_lock|w_unlock)$' '$out' | sed 's/.* //' | sort -u | wc -l"
  rm -f "$out"
  [ "$output" -eq 2 ] || { echo "wrappers seen: $output"; return 1; }
}
