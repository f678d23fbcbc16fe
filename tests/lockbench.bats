#!/usr/bin/env bats
# lockbench, the lock microbenchmark: options, CSV, the mutual-exclusion
# check, the synthetic scheduler, try/timed modes. Runs natively (glibc);
# the last tests run it under lockswap when the shim is built (its timed
# mode and synthetic scheduler under every algorithm).
# No assertion depends on speed: runs are short and checks are on counts.

load helpers

LB="$B/lockbench"
NOLOCK="$B/doubles/nolock.so"

setup() {
  [ -x "$LB" ] || skip "build/lockbench not built (make tests-build)"
  HEADER=$("$LB" --csv-header)
}

# (hang_timeout's arithmetic, without a subshell per run)
lb() { timeout -k 5 $((TEST_TIMEOUT * ${LOCKSWAP_TEST_TIMEOUT_SCALE:-5})) "$LB" "$@"; }

# csv CSVLINE: C[NAME] = the value of column NAME (header from --csv-header,
# read once per test: a column looked up field by field, a lockbench start
# each, cost more than the runs)
declare -gA C
csv() {
  local h v i
  IFS=, read -r -a h <<<"$HEADER"
  IFS=, read -r -a v <<<"$1"
  C=()
  for i in "${!h[@]}"; do C[${h[i]}]=${v[i]-}; done
}

# col NAME CSVLINE: value of column NAME
col() {
  csv "$2"
  [ -n "${C[$1]+set}" ] || { echo "no column $1" >&2; return 1; }
  echo "${C[$1]}"
}

# --- options ---------------------------------------------------------------

@test "--help documents every long option in the option table" {
  run lb --help
  assert_success
  local opts
  opts=$(grep -oE '^[[:space:]]*\{"[a-z-]+", (required|no)_argument' "$ROOT/scripts/bench/lockbench.c" \
    | grep -oE '"[a-z-]+"' | tr -d '"')
  [ "$(wc -w <<<"$opts")" -ge 20 ]
  # every option in one pass over the text: those it never names
  local missing
  missing=$(awk -v opts="$(tr '\n' ' ' <<<"$opts")" 'FNR == NR { help = help $0 "\n"; next }
    END { n = split(opts, o, " "); for (i = 1; i <= n; i++) if (help !~ "--" o[i] "([^A-Za-z0-9_]|$)") print "--" o[i] }' - <<<"$output")
  [ -z "$missing" ] || { echo "--help does not document: $missing"; return 1; }
}

@test "bad option values, and an option without its value: one clear line naming option and value, exit 2" {
  local cases=(
    "--threads 0|--threads: invalid value '0'"
    "--threads abc|--threads: invalid value 'abc'"
    "-t -3|--threads: invalid value '-3'"
    "--threads 1025|--threads: invalid value '1025'"
    "--duration 0|--duration: invalid value '0'"
    "--duration 1x|--duration: invalid value '1x'"
    "--mode spin|--mode: invalid value 'spin'"
    "--type fast|--type: invalid value 'fast'"
    "--load-kind vm|--load-kind: invalid value 'vm'"
    "--preempt 1.5|--preempt: invalid value '1.5'"
    "--skew 0.5|--skew needs --locks 2"
    "--preempt 0.5 --quantum 100 --period 100|--quantum 100 must be less than --period 100"
    "-d 1 -n 10|--duration and --iterations exclude each other"
    "--frobnicate|unknown option '--frobnicate'"
    "-z|unknown option '-z'"
    "extra|unexpected argument 'extra'"
    "--label a,b|--label: invalid value 'a,b'"
    "--lock file|--lock: invalid value 'file'"
    "--read 1.5|--read: invalid value '1.5'"
    "--lock mutex --read 0.5|--read is for --lock rwlock, not mutex"
    "--lock spin -m timedlock|--lock spin has no timedlock mode"
    "--rwkind x|--rwkind: invalid value 'x'"
    "--rwkind writer|--rwkind is for --lock rwlock, not mutex"
    "--lock rwlock --type normal|--type is for --lock mutex, not rwlock"
    "--threads|option '--threads' needs a value"
  )
  # (untraced, without bats' run: each case names itself when it fails)
  bad_each() {
    local c args want out st
    for c in "${cases[@]}"; do
      args=${c%%|*}; want=${c#*|}
      # shellcheck disable=SC2086
      out=$(lb $args 2>&1) && st=0 || st=$?
      [ "$st" -eq 2 ] || { echo "'$args': status $st, want 2"; return 1; }
      [ "$(wc -l <<<"$out")" -eq 1 ] || { echo "'$args': more than one line: $out"; return 1; }
      [[ "$out" == lockbench:* ]] || { echo "'$args': $out"; return 1; }
      [[ "$out" == *"$want"* ]] || { echo "'$args': '$out' lacks '$want'"; return 1; }
    done
  }
  untraced bad_each
}

# --- CSV ------------------------------------------------------------------

@test "CSV: one line, as many columns as the header, counts add up; --label names the algorithm; a foreign preload is named after its file" {
  run lb -t 3 -n 2000 --csv
  assert_success
  [ "${#lines[@]}" -eq 1 ]
  local line c
  line=${lines[0]}
  [ "$(tr ',' '\n' <<<"$HEADER" | wc -l)" -eq "$(tr ',' '\n' <<<"$line" | wc -l)" ]
  csv "$line"
  [ "${C[algo]}" = glibc ]
  [ "${C[wait]}" = - ]
  [ "${C[mode]}" = lock ]
  [ "${C[threads]}" -eq 3 ]
  [ "${C[acquisitions]}" -eq 6000 ]
  [ "${C[attempts]}" -eq 6000 ]
  [ "${C[failed]}" -eq 0 ]
  [ "${C[per_thread]}" = "2000;2000;2000" ]
  [ "${C[min_thread]}" -eq 2000 ]
  [ "${C[max_thread]}" -eq 2000 ]
  [ "${C[jain]}" = 1.0000 ]
  [ "${C[success]}" = 1.000000 ]
  [ "${C[cpus]}" -eq "$(getconf _NPROCESSORS_ONLN)" ]
  [ "${C[kernel]}" = "$(uname -r)" ]
  # every numeric column parses as a number
  for c in seconds acq_per_s ns_per_acq handoff lat_p50_ns lat_p99_ns lat_max_ns; do
    [[ "${C[$c]}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$c: ${C[$c]}"; return 1; }
  done
  run lb -t 1 -n 10 --csv --label mylock
  assert_success
  [ "$(col algo "$output")" = mylock ]
  [ -f "$NOLOCK" ] || skip "build/doubles/nolock.so not built"
  run env LD_PRELOAD="$NOLOCK" "$LB" -t 1 -n 10 --csv
  assert_success
  [ "$(col algo "$output")" = preload:nolock.so ]
}

@test "latency is sampled one acquisition in K; handoffs are counted" {
  run lb -t 2 -n 1000 --sample 10 --csv
  assert_success
  [ "$(col lat_samples "$output")" -eq 200 ]
  run lb -t 1 -n 1000 --sample 0 --csv
  assert_success
  [ "$(col lat_samples "$output")" -eq 0 ]
  # one thread: only its first acquisition follows another holder (none)
  [ "$(col handoff "$output")" = 0.0010 ]
}

@test "summary: every section is reported" {
  run lb -t 2 -n 500 -m timedlock -e 1 --preempt 0.5 --quantum 100 --period 1000
  assert_success
  for s in "glibc (wait -), timedlock" machine load throughput success "per thread" "Jain fairness" \
    handoff latency preemption "handler_ms" "mutual excl.  ok"; do
    assert_output --partial "$s"
  done
}

# --- mutual exclusion -------------------------------------------------------

@test "the mutual-exclusion check passes with glibc in every mode and mutex type" {
  # (glibc's mutex excludes: these runs check that lockbench's check does
  # not cry wolf, in each mode and type; 4 x 5000 hand the lock over among
  # more threads than CPUs thousands of times)
  for m in lock trylock timedlock clocklock; do
    run lb -t 4 -n 5000 -m "$m" -c 1 -N 0
    [ "$status" -eq 0 ] || { echo "mode $m: $output"; return 1; }
    assert_output --partial "mutual excl.  ok"
  done
  for t in normal recursive errorcheck adaptive; do
    run lb -t 4 -n 5000 --type "$t" -N 0
    [ "$status" -eq 0 ] || { echo "type $t: $output"; return 1; }
  done
}

@test "the mutual-exclusion check fails on a broken lock (no-op LD_PRELOAD double)" {
  [ -f "$NOLOCK" ] || skip "build/doubles/nolock.so not built"
  local try
  for m in lock trylock timedlock; do
    # 4 threads on any number of CPUs: without a lock, critical sections
    # overlap (in parallel, or by preemption inside one) many times; on a
    # busy machine a 0.5 s run may see none (once at load 12), so a run
    # that saw none is repeated, up to 10 times: waiting for the
    # violation, not for luck
    for try in 1 2 3 4 5 6 7 8 9 10; do
      run "$RUN_LIMIT" -k 5 "$(hang_timeout)" LD_PRELOAD="$NOLOCK" "$LB" -t 4 -d 0.5 -c 8 -N 0 -m "$m"
      [ "$status" -eq 0 ] || break
    done
    [ "$status" -eq 3 ] || { echo "mode $m: status $status after $try runs: $output"; return 1; }
    assert_output --partial "lockbench: mutual exclusion violated"
    assert_output --partial "VIOLATED"
  done
}

# --- rwlocks and spinlocks (issue 19) ---------------------------------------------

@test "rwlock and spin modes: reads and writes add up to the acquisitions, --read 0 and 1 are all writes and all reads; exclusion holds with glibc in every mode and fails on the no-op double" {
  local line m
  line=$(lb -t 3 -n 2000 --read 0.5 --csv)
  csv "$line"
  [ "${C[lock_kind]}" = rwlock ] && [ "${C[read_fraction]}" = 0.5 ] || { echo "$line"; return 1; }
  [ $((C[reads] + C[writes])) -eq 6000 ] || { echo "$line"; return 1; }
  [ "${C[reads]}" -gt 0 ] && [ "${C[writes]}" -gt 0 ] || { echo "$line"; return 1; }
  [ "$(col reads "$(lb -t 2 -n 500 --read 0 --csv)")" -eq 0 ]
  [ "$(col writes "$(lb -t 2 -n 500 --read 1 --csv)")" -eq 0 ]
  line=$(lb -t 2 -n 500 -L spin --csv)
  csv "$line"
  [ "${C[lock_kind]}" = spin ] && [ "${C[acquisitions]}" -eq 1000 ] || { echo "$line"; return 1; }
  # (glibc's locks exclude: lockbench's check must not cry wolf; 4 x 5000
  # as for the mutex above)
  for m in lock trylock timedlock clocklock; do
    run lb -t 4 -n 5000 -m "$m" -c 2 -N 0 --read 0.7
    [ "$status" -eq 0 ] || { echo "rwlock, mode $m: $output"; return 1; }
    assert_output --partial "mutual excl.  ok"
  done
  run lb -t 4 -n 5000 --read 0.7 --rwkind writer -N 0
  assert_success
  assert_output --partial "writer-preferring rwlock, 70% reads"
  for m in lock trylock; do
    run lb -t 4 -n 5000 -m "$m" -N 0 -L spin
    [ "$status" -eq 0 ] || { echo "spin, mode $m: $output"; return 1; }
  done
  [ -f "$NOLOCK" ] || skip "build/doubles/nolock.so not built"
  for m in "--read 0.5" "--read 0.5 -m trylock" "-L spin"; do
    # shellcheck disable=SC2086
    run "$RUN_LIMIT" -k 5 "$TEST_TIMEOUT" LD_PRELOAD="$NOLOCK" "$LB" -t 4 -d 0.5 -c 8 -N 0 $m
    [ "$status" -eq 3 ] || { echo "$m: status $status: $output"; return 1; }
    assert_output --partial "VIOLATED"
  done
}

# ends NAME...: the first and the last name (lockbench's reporting and its
# exclusion check are its own, the same under every algorithm; each
# algorithm's exclusion is the specification of tests/exclusion.bats,
# rwlock.bats and spin.bats)
ends() {
  printf '%s\n' "$1" "${@: -1}" | awk '!seen[$0]++'
}

@test "under glibc's and two rwlock algorithms at 90% reads, and every spinlock algorithm: exclusion holds, the algorithm is reported" {
  [ -f "$LIB" ] && [ -x "$LOCKSWAP" ] || skip "the shim is not built yet"
  local a out failed=()
  # (untraced, as below)
  family_each() {
    # shellcheck disable=SC2046
    for a in pthread $(ends $(rwalgos lock)); do
      out=$(under_rw "$a" -- "$LB" -t 4 -n 1000 -N 0 --read 0.9 --csv 2>&1) || { failed+=("$a: $out"); continue; }
      csv "$out"
      [ "${C[algo]}" = "$a" ] || failed+=("$a: reported as ${C[algo]}")
    done
    for a in $(spinalgos); do
      out=$(under_family LOCKSWAP_SPINALGO "$a" -- "$LB" -t 4 -n 1000 -N 0 -L spin --csv 2>&1) || { failed+=("$a: $out"); continue; }
      csv "$out"
      [ "${C[algo]}" = "$a" ] || failed+=("$a: reported as ${C[algo]}")
    done
  }
  untraced family_each || true
  [ ${#failed[@]} -eq 0 ] || { printf '%s\n' "${failed[@]}"; return 1; }
}

# --- synthetic scheduler -------------------------------------------------------

@test "the synthetic scheduler preempts the chosen threads and reports their handler time" {
  # (0.1 s: 33 periods)
  run lb -t 4 -d 0.1 --preempt 0.5 --quantum 1000 --period 3000 --csv
  assert_success
  csv "$output"
  [ "${C[preempted_threads]}" -eq 2 ]
  local sig ms
  sig=${C[signals]}
  ms=${C[handler_ms_per_thread]}
  [ "$sig" -ge 2 ]
  IFS=';' read -r -a t <<<"$ms"
  [ "${#t[@]}" -eq 4 ]
  # each handler spins for the full 1 ms quantum: chosen threads >= 1 ms,
  # the others never run it
  awk -v a="${t[0]}" -v b="${t[1]}" 'BEGIN { exit !(a >= 1 && b >= 1) }'
  [ "${t[2]}" = 0.000 ] && [ "${t[3]}" = 0.000 ]
  # total handler time is at least one quantum per signal
  awk -v ms="${C[handler_ms]}" -v s="$sig" 'BEGIN { exit !(ms >= s * 1.0) }'
}

# --- try and timed modes -------------------------------------------------------

@test "timedlock and clocklock count timeouts (a holder keeps the lock 2 ms, patience 10 us); trylock counts EBUSY failures and retries until it succeeds; a timed run with patience never exceeded has no timeouts" {
  for m in timedlock clocklock; do
    run lb -t 2 -n 10 -m "$m" -p 10 --cs-ns 2000000 -N 0 --csv
    assert_success
    local a f at
    csv "$output"
    a=${C[acquisitions]}; f=${C[failed]}; at=${C[attempts]}
    [ "$a" -eq 20 ]
    [ "$f" -ge 1 ] || { echo "$m: no timeout: $output"; return 1; }
    [ "$at" -eq $((a + f)) ]
    [ "${C[patience_us]}" -eq 10 ]
    awk -v s="${C[success]}" 'BEGIN { exit !(s < 1) }'
  done
  run lb -t 2 -n 10 -m trylock --cs-ns 2000000 -N 0 --csv
  assert_success
  csv "$output"
  a=${C[acquisitions]}; f=${C[failed]}
  [ "$a" -eq 20 ]
  [ "$f" -ge 1 ]
  [ "${C[attempts]}" -eq $((a + f)) ]
  run lb -t 1 -n 1000 -m timedlock --csv
  assert_success
  csv "$output"
  [ "${C[failed]}" -eq 0 ]
  [ "${C[success]}" = 1.000000 ]
}

# --- load, locks, pinning -------------------------------------------------------

@test "external load as threads or processes; K locks with skew; pinning" {
  run lb -t 2 -n 2000 -e 2 --load-kind process --csv
  assert_success
  csv "$output"
  [ "${C[load]}" -eq 2 ]
  [ "${C[load_kind]}" = process ]
  run lb -t 2 -n 2000 -e 1 -k 8 --skew 0.9 --pin --csv
  assert_success
  csv "$output"
  [ "${C[locks]}" -eq 8 ]
  [ "${C[acquisitions]}" -eq 4000 ]
  [ "${C[pin]}" -eq 1 ]
}

# Waits (up to 20 s) until process $1 has $2 children; prints their pids.
children_of() {
  local i kids
  for ((i = 0; i < 400; i++)); do
    kids=$(pgrep -P "$1" || true)
    if [ "$(wc -w <<<"$kids")" -ge "$2" ]; then echo $kids; return 0; fi
    sleep 0.05
  done
  return 1
}

@test "load processes end with lockbench, even when it is killed" {
  local pid kids k
  # (1 s: the load processes are busy loops, each a CPU's worth; they are
  # seen within a poll or two)
  "$LB" -t 1 -d 1 -e 2 --load-kind process >/dev/null &
  pid=$!
  kids=$(children_of "$pid" 2) || { kill -9 "$pid"; echo "no load processes seen"; return 1; }
  wait "$pid"
  for k in $kids; do ! kill -0 "$k" 2>/dev/null || { echo "load $k survived"; return 1; }; done
  "$LB" -t 1 -d 60 -e 2 --load-kind process >/dev/null &
  pid=$!
  kids=$(children_of "$pid" 2) || { kill -9 "$pid"; echo "no load processes seen"; return 1; }
  kill -9 "$pid"
  wait "$pid" || true
  for k in $kids; do
    for ((i = 0; i < 200; i++)); do kill -0 "$k" 2>/dev/null || break; sleep 0.05; done
    ! kill -0 "$k" 2>/dev/null || { echo "load $k survived its parent"; return 1; }
  done
}

# --- under lockswap -------------------------------------------------------------

# Sets NAMES to pthread and every real lock, or skips the test (called
# directly, not in $(...), so that skip ends the test).
shim_algos() {
  [ -f "$LIB" ] || skip "build/liblockswap.so not built yet"
  [ -x "$LOCKSWAP" ] || skip "build/lockswap not built yet"
  local a
  a=$("$LOCKSWAP" --names --cap lock 2>/dev/null) || skip "lockswap --names failed"
  [ -n "$a" ] || skip "no lockswap algorithm exists yet"
  NAMES="pthread $a"
}

@test "under glibc's mutex through the shim and two lockswap algorithms: mutual exclusion holds, the algorithm is reported" {
  local a out failed=()
  shim_algos
  # shellcheck disable=SC2086
  for a in pthread $(ends ${NAMES#pthread }); do
    out=$(under "$a" -- "$LB" -t 4 -n 1000 -N 0 --csv 2>&1) || { failed+=("$a: $out"); continue; }
    [ "$(col algo "$out")" = "$a" ] || failed+=("$a: reported as $(col algo "$out")")
  done
  [ ${#failed[@]} -eq 0 ] || { printf '%s\n' "${failed[@]}"; return 1; }
}

@test "under every lockswap algorithm: timedlock and the synthetic scheduler" {
  local a out failed=()
  shim_algos
  # (30 ms: 15 periods of the scheduler, hundreds of timed acquisitions)
  # (untraced: bats' DEBUG trap on each command of the loop; FAILED names
  # each algorithm that failed, with its output)
  timed_each() {
    for a in $NAMES; do
      out=$(under "$a" -- "$LB" -t 3 -d 0.03 -m timedlock -p 20 --preempt 0.34 --quantum 200 \
        --period 2000 --csv 2>&1) || failed+=("$a: $out")
    done
  }
  untraced timed_each || true
  [ ${#failed[@]} -eq 0 ] || { printf '%s\n' "${failed[@]}"; return 1; }
}

# --- the drivers ------------------------------------------------------------------

@test "bench-sweep, bench-plot, core-bench: --help, and bad options exit 2 with one line; bench-sweep rejects an algorithm lockswap does not have" {
  for s in bench-sweep bench-plot core-bench; do
    run "$ROOT/scripts/sweeps/$s" --help
    assert_success
    assert_output --partial "usage: scripts/sweeps/$s"
  done
  run "$ROOT/scripts/sweeps/bench-sweep" --reps x
  assert_failure 2
  assert_output "bench-sweep: --reps: invalid value 'x' (expected an integer >= 1)"
  run "$ROOT/scripts/sweeps/bench-sweep" --exps fastest
  assert_failure 2
  assert_output --partial "unknown experiment 'fastest'"
  run "$ROOT/scripts/sweeps/bench-sweep" --frob
  assert_failure 2
  run "$ROOT/scripts/sweeps/core-bench" --reps 2
  assert_failure 2
  assert_output "core-bench: --reps: invalid value '2' (expected an integer >= 3)"
  [ -x "$LOCKSWAP" ] || skip "build/lockswap not built yet"
  run "$ROOT/scripts/sweeps/bench-sweep" --algos "glibc nosuchlock" --out "$BATS_TEST_TMPDIR/x"
  assert_failure 2
  assert_output --partial "unknown algorithm 'nosuchlock'"
}

@test "bench-sweep writes the raw CSV, machine description and plots (glibc, quick)" {
  command -v gnuplot >/dev/null || skip "gnuplot not installed"
  local out="$BATS_TEST_TMPDIR/sweep"
  # (runs of 20 ms: the pipeline is what is checked, not a figure)
  run timeout -k 5 120 "$ROOT/scripts/sweeps/bench-sweep" --quick --duration 0.02 --algos glibc --exps "single tput" --out "$out"
  assert_success
  [ -s "$out/single.png" ] && [ -s "$out/throughput.png" ] && [ -s "$out/fairness-latency.png" ]
  # header + 1 single + 8 tput points
  [ "$(wc -l <"$out/raw.csv")" -eq 10 ]
  [ ! -s "$out/failures.txt" ]
  grep -q '^cpu: ' "$out/machine.txt"
  grep -q '^date: ' "$out/machine.txt"
  grep -q '^tput,noload,acq_per_s,glibc,8,' "$out/summary.csv"
}

@test "core-bench measures glibc: instructions per pair from callgrind and the table" {
  command -v valgrind >/dev/null || skip "valgrind not installed"
  [ -x "$B/bench-pairs" ] || skip "build/bench-pairs not built (make bench-build)"
  [ -f "$LIB" ] && [ -x "$LOCKSWAP" ] || skip "the shim is not built yet"
  local out="$BATS_TEST_TMPDIR/core"
  # (lockbench runs of 20 ms: the pipeline is what is checked; callgrind's
  # counts do not depend on it)
  run timeout -k 5 300 "$ROOT/scripts/sweeps/core-bench" --algos glibc --reps 3 --duration 0.02 --out "$out"
  assert_success
  # glibc's instructions per pair inside libc: a positive count, the same
  # in every run (callgrind counts, it does not time)
  local ins
  ins=$(awk -F, '$1 == "glibc" { print $2 }' "$out/callgrind.csv")
  awk -v i="$ins" 'BEGIN { exit !(i > 10 && i < 500) }'
  grep -q '^| glibc | ' "$out/table.md"
  [ "$(grep -c ',glibc,' "$out/raw.csv")" -eq 12 ]
}

# bench_rwlock ARGS...: the sweep under Debian's python3, as scripts/deps.sh
# installs it (a python3 of PATH may be a version manager's shim: pyenv's
# cost 0.8 s of CPU a start on the 2-CPU VM)
bench_rwlock() { /usr/bin/python3 "$ROOT/scripts/sweeps/bench-rwlock" "$@"; }

@test "bench-rwlock: --help, bad options exit 2; a quick sweep writes raw.csv, the table with paired ratios and targets, and the plot" {
  run bench_rwlock --help
  assert_success
  assert_output --partial "usage: bench-rwlock"
  run bench_rwlock --parts everything
  assert_failure 2
  assert_output --partial "--parts: unknown part 'everything' (valid: counts, sweep, program)"
  [ -f "$LIB" ] && [ -x "$LOCKSWAP" ] || skip "the shim is not built yet"
  run bench_rwlock --algos nosuch --parts sweep --out "$BATS_TEST_TMPDIR/x"
  assert_failure 2
  assert_output --partial "unknown rwlock algorithm 'nosuch'"
  local out="$BATS_TEST_TMPDIR/rw"
  # a lock of its own: a benchmark running on the machine holds the shared one
  BENCH_LOCK="$BATS_TEST_TMPDIR/bench.lock" run timeout -k 5 120 /usr/bin/python3 "$ROOT/scripts/sweeps/bench-rwlock" --parts sweep --algos "central pf-t+bravo" --reps 2 \
    --duration 0.05 --threads 2 --reads "0.5 0.99" --out "$out"
  assert_success
  # header + 2 repetitions x 2 configurations x 3 series
  [ "$(wc -l <"$out/raw.csv")" -eq 13 ] && [ "$(grep -c ',ok$' "$out/raw.csv")" -eq 12 ] || { cat "$out/raw.csv"; return 1; }
  grep -qE '^\| pf-t\+bravo \| [0-9.]+ \([0-9.]+-[0-9.]+\) \| [0-9.]+ \([0-9.]+-[0-9.]+\) \|$' "$out/table.md" || { cat "$out/table.md"; return 1; }
  grep -qE '^- pf-t\+bravo, 2 threads, 99% reads: [0-9.]+x .* 2x: (hit|MISS)$' "$out/table.md" || { cat "$out/table.md"; return 1; }
  grep -q '^load average after: ' "$out/machine.txt"
  command -v gnuplot >/dev/null && { [ -s "$out/sweep.png" ] || return 1; }
  true
}
