#!/usr/bin/env bash
# Adaptivity of the time-published locks (issue 5): lockbench runs, CSV and
# plots in results/tp/. See --help.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LB="$ROOT/build/lockbench"
LS="$ROOT/build/lockswap"

usage() {
  cat <<'EOF'
usage: results/tp/run.sh [--quick] [--reps N] [--duration S] [--out DIR] [--no-plot]
Measures, with build/lockbench on this machine, what TR 867 (He, Scherer,
Scott; ../shared/papers/000_9c294dcad948dd76.txt) claims for the
time-published locks: they keep their throughput when threads outnumber
processors, where plain queue locks collapse. Writes into DIR (default
results/tp):
  raw.csv      one lockbench CSV line per run, prefixed by
               exp,env,variant,x,rep (variant = ALGO/WAIT, or glibc: no preload)
  summary.csv  exp,env,variant,x,median_acq_per_s,min,max,median_success,n
  ratios.txt   TP locks against the plain queue locks, per environment
  threads.png  acquisitions/s vs threads 2..16, three environments (TR 867
               figs. 7-9): none; load = 2 spinning processes; sched =
               lockbench's synthetic scheduler (half the threads lose 1 ms
               every 4 ms; TR 867 section 4 / fig. 10)
  patience.png timedlock, 8 threads, CS 40 lines, NCS 4 us: acquisitions/s
               and success rate vs patience 2..500 us (TR 867 fig. 11)
  blocking.png lock(), 16 threads, synthetic scheduler: acquisitions/s vs
               LOCKSWAP_TP_PATIENCE_NS (the default's justification)
  (single)     in summary.csv: 1 thread, empty CS and NCS, the cost of an
               uncontended acquire/release pair (TR 867 fig. 6)
Experiments (CS 2 lines, NCS 1 us unless said): variants glibc, tas/yield,
mcs and clh under spin and park, mcs-tp and clh-tp under spin and park.
Repetitions are interleaved; every run is niced and under a timeout; a failed
run goes to failures.txt and the sweep goes on. Default: 3 repetitions of
0.4 s (the patience sweep: 0.3 s), about 7 minutes; --quick: 1 repetition of
0.1 s. Also writes clock.txt (build/unit/tp_clock --measure: the time source
and the numbers behind the thresholds' defaults) and space.txt
(build/unit/tp_space: most queue nodes in use at once vs threads).
EOF
}

out="$ROOT/results/tp"
reps=3
dur=0.4
plot=1
need() { [ $# -ge 2 ] || { echo "run.sh: $1 needs a value; see --help" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --quick) reps=1; dur=0.1; shift ;;
    --reps) need "$@"; reps=$2; shift 2 ;;
    --duration) need "$@"; dur=$2; shift 2 ;;
    --out) need "$@"; out=$2; shift 2 ;;
    --no-plot) plot=0; shift ;;
    *) echo "run.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --reps: '$reps' is not a positive integer" >&2; exit 2; }
[[ "$dur" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "run.sh: --duration: '$dur' is not a number of seconds" >&2; exit 2; }
[ -x "$LB" ] && [ -x "$LS" ] || { echo "run.sh: build/lockbench or build/lockswap missing (make all build/lockbench)" >&2; exit 1; }
mkdir -p "$out"

VARIANTS="glibc tas/yield mcs/spin clh/spin mcs/park clh/park mcs-tp/spin clh-tp/spin mcs-tp/park clh-tp/park"
THREADS="2 4 8 16"
ENVS="none load sched"
PATIENCES="2 5 10 20 50 100 200 500"
BLOCKPAT="20000 50000 100000 200000 500000 1000000 5000000"
TO=30

env_args() {
  case "$1" in
    none) ;;
    load) echo "-e 2 --load-kind process" ;;
    sched) echo "--preempt 0.5 --quantum 1000 --period 4000" ;;
  esac
}

raw="$out/raw.csv"
fails="$out/failures.txt"
echo "exp,env,variant,x,rep,$("$LB" --csv-header)" >"$raw"
: >"$fails"

# run EXP ENV VARIANT X REP [VAR=VALUE...] -- LOCKBENCH_ARGS...
run() {
  local exp=$1 env=$2 v=$3 x=$4 rep=$5 vars=() line rc=0
  shift 5
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  local cmd
  if [ "$v" = glibc ]; then
    cmd=("$LB")
  else
    cmd=("$LS" -a "${v%/*}" -w "${v#*/}" -- "$LB")
  fi
  # shellcheck disable=SC2046
  line=$(env "${vars[@]}" nice -n 5 timeout -k 2 "$TO" "${cmd[@]}" --csv -d "$dur" "$@" $(env_args "$env") 2>&1 | tail -n 1) || rc=$?
  if [ "$rc" -ne 0 ] || [[ "$line" != *,* ]]; then
    echo "$exp $env $v x=$x rep=$rep: exit $rc: $line" >>"$fails"
    return 0
  fi
  echo "$exp,$env,$v,$x,$rep,$line" >>"$raw"
}

pdur=$(awk -v d="$dur" 'BEGIN { print (d > 0.3) ? 0.3 : d }')
start=$(date +%s)
for rep in $(seq 1 "$reps"); do
  for v in $VARIANTS; do
    run single none "$v" 1 "$rep" -- -t 1 -c 0 -N 0
  done
  for env in $ENVS; do
    for t in $THREADS; do
      for v in $VARIANTS; do
        run threads "$env" "$v" "$t" "$rep" -- -t "$t" -c 2 -N 1000
      done
    done
  done
  for env in none sched; do
    for p in $PATIENCES; do
      for v in mcs-tp/spin clh-tp/spin; do
        dur=$pdur run patience "$env" "$v" "$p" "$rep" -- -t 8 -m timedlock -p "$p" -c 40 -N 4000
      done
    done
  done
  for p in $BLOCKPAT; do
    for v in mcs-tp/spin clh-tp/spin; do
      run blocking sched "$v" "$p" "$rep" LOCKSWAP_TP_PATIENCE_NS="$p" -- -t 16 -c 2 -N 1000
    done
  done
  echo "run.sh: repetition $rep done after $(($(date +%s) - start)) s" >&2
done

# --- time source and space ------------------------------------------------
if [ -x "$ROOT/build/unit/tp_clock" ]; then
  nice -n 5 timeout 120 "$ROOT/build/unit/tp_clock" --measure >"$out/clock.txt" 2>&1 || echo "tp_clock --measure failed" >>"$fails"
fi
if [ -x "$ROOT/build/unit/tp_space" ]; then
  : >"$out/space.txt"
  for a in clh-tp mcs-tp; do
    for m in contend held; do
      for w in spin yield; do
        for t in 2 4 8 16 32; do
          nice -n 5 timeout 120 "$ROOT/build/unit/tp_space" -a "$a" -m "$m" -w "$w" -t "$t" -n 3000 >>"$out/space.txt" 2>&1 ||
            echo "tp_space $a $m $w $t failed" >>"$fails"
        done
      done
    done
  done
fi

# --- summary: medians per point ---------------------------------------------
col() { head -n 1 "$raw" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
ca=$(col acq_per_s)
cs=$(col success)
awk -F, -v ca="$ca" -v cs="$cs" '
  NR == 1 { next }
  { k = $1 "," $2 "," $3 "," $4; n[k]++; a[k, n[k]] = $ca; s[k, n[k]] = $cs; if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
  function med(arr, k, c,   i, j, t, v) {
    for (i = 1; i <= c; i++) v[i] = arr[k, i] + 0
    for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    lo = v[1]; hi = v[c]
    return c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
  }
  END {
    print "exp,env,variant,x,median_acq_per_s,min,max,median_success,n"
    for (i = 1; i <= m; i++) { k = order[i]; ma = med(a, k, n[k]); l = lo; h = hi; ms = med(s, k, n[k])
      printf "%s,%.0f,%.0f,%.0f,%.4f,%d\n", k, ma, l, h, ms, n[k] }
  }' "$raw" >"$out/summary.csv"

# --- ratios -----------------------------------------------------------------
awk -F, '
  NR == 1 || $1 != "threads" { next }
  { v[$2 "," $3 "," $4] = $5; envs[$2] = 1; xs[$4] = 1 }
  function r(a, b) { return (b > 0) ? sprintf("%.1f", a / b) : "inf" }
  END {
    for (e in envs) {
      printf "environment %s (median acquisitions/s; ratio = TP / plain)\n", e
      printf "%7s %12s %12s %12s %12s %12s %12s %12s %12s %8s %8s %8s %8s\n", "threads", "mcs/spin", "mcs-tp/spin", "clh/spin", "clh-tp/spin", "mcs/park", "mcs-tp/park", "tas/yield", "glibc", "mcsTP/mcs", "clhTP/clh", "mcsTP/glibc", "clhTP/glibc"
      for (t = 2; t <= 16; t++) if (t in xs) {
        k = e "," ; printf "%7d %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f %8s %8s %8s %8s\n", t,
          v[k "mcs/spin," t], v[k "mcs-tp/spin," t], v[k "clh/spin," t], v[k "clh-tp/spin," t], v[k "mcs/park," t],
          v[k "mcs-tp/park," t], v[k "tas/yield," t], v[k "glibc," t],
          r(v[k "mcs-tp/spin," t], v[k "mcs/spin," t]), r(v[k "clh-tp/spin," t], v[k "clh/spin," t]),
          r(v[k "mcs-tp/spin," t], v[k "glibc," t]), r(v[k "clh-tp/spin," t], v[k "glibc," t])
      }
      print ""
    }
  }' "$out/summary.csv" >"$out/ratios.txt"
awk -F, '$1 == "single" { printf "%s %.1f ns\n", $3, 1e9 / $5 }' "$out/summary.csv" |
  { echo "single thread, empty CS and NCS: ns per acquire/release pair (median)"; cat; } >>"$out/ratios.txt"

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)"
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "runs: $reps x $dur s per point; $(($(date +%s) - start)) s in all; failures: $(wc -l <"$fails")"
} >"$out/machine.txt"

# --- plots ------------------------------------------------------------------
if [ "$plot" = 1 ] && command -v gnuplot >/dev/null; then
  sum="$out/summary.csv"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for e in $ENVS; do
    for v in $VARIANTS; do
      awk -F, -v e="$e" -v v="$v" '$1 == "threads" && $2 == e && $3 == v { print $4, $5, $6, $7 }' "$sum" >"$tmp/t-$e-${v//\//_}.dat"
    done
  done
  for e in none sched; do
    for v in mcs-tp/spin clh-tp/spin; do
      awk -F, -v e="$e" -v v="$v" '$1 == "patience" && $2 == e && $3 == v { print $4, $5, $6, $7, $8 }' "$sum" >"$tmp/p-$e-${v//\//_}.dat"
    done
  done
  for v in mcs-tp/spin clh-tp/spin; do
    awk -F, -v v="$v" '$1 == "blocking" && $3 == v { print $4 / 1000, $5, $6, $7 }' "$sum" >"$tmp/b-${v//\//_}.dat"
  done
  title="$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%Y-%m-%d); medians of $reps x $dur s"
  {
    echo "set terminal pngcairo size 1500,520 font ',10'"
    echo "set output '$out/threads.png'"
    echo "set multiplot layout 1,3 title 'lockbench, CS 2 lines, NCS 1 us: acquisitions/s vs threads ($title)'"
    echo "set logscale y; set grid; set xlabel 'threads'; set ylabel 'acquisitions/s'; set key bottom left font ',8'"
    echo "set xrange [1:17]; set yrange [100:*]"
    for e in $ENVS; do
      case $e in none) t="no external load" ;; load) t="2 spinning load processes" ;; sched) t="synthetic scheduler (1 ms of every 4 ms)" ;; esac
      echo "set title '$t'"
      printf "plot "
      first=1
      for v in $VARIANTS; do
        [ $first = 1 ] || printf ", "
        first=0
        lw=1; case $v in *-tp/*) lw=3 ;; esac
        printf "'%s' using 1:2:3:4 with yerrorlines lw %s title '%s'" "$tmp/t-$e-${v//\//_}.dat" "$lw" "$v"
      done
      echo
    done
    echo "unset multiplot"

    echo "set terminal pngcairo size 1100,800 font ',10'"
    echo "set output '$out/patience.png'"
    echo "set multiplot layout 2,2 title 'timedlock, 8 threads, CS 40 lines, NCS 4 us, vs patience ($title)'"
    echo "unset logscale; set logscale x; set xrange [1:1000]; set xlabel 'patience (us)'; set key top left"
    for e in none sched; do
      echo "set logscale y; set yrange [*:*]; set ylabel 'acquisitions/s'; set title 'throughput, env $e'"
      echo "plot '$tmp/p-$e-mcs-tp_spin.dat' using 1:2:3:4 with yerrorlines title 'mcs-tp/spin', '$tmp/p-$e-clh-tp_spin.dat' using 1:2:3:4 with yerrorlines title 'clh-tp/spin'"
      echo "unset logscale y; set yrange [0:1.05]; set ylabel 'success rate'; set title 'success rate, env $e'"
      echo "plot '$tmp/p-$e-mcs-tp_spin.dat' using 1:5 with linespoints title 'mcs-tp/spin', '$tmp/p-$e-clh-tp_spin.dat' using 1:5 with linespoints title 'clh-tp/spin'"
    done
    echo "unset multiplot"

    echo "set terminal pngcairo size 800,500 font ',10'"
    echo "set output '$out/blocking.png'"
    echo "set title 'lock(), 16 threads, synthetic scheduler: acquisitions/s vs LOCKSWAP_TP_PATIENCE_NS\n($title)'"
    echo "set logscale x; set logscale y; set xrange [10:10000]; set yrange [*:*]; set xlabel 'LOCKSWAP_TP_PATIENCE_NS (us)'; set ylabel 'acquisitions/s'"
    echo "plot '$tmp/b-mcs-tp_spin.dat' using 1:2:3:4 with yerrorlines title 'mcs-tp/spin', '$tmp/b-clh-tp_spin.dat' using 1:2:3:4 with yerrorlines title 'clh-tp/spin'"
  } >"$tmp/plot.gp"
  gnuplot "$tmp/plot.gp"
fi
echo "run.sh: wrote $out (raw.csv, summary.csv, ratios.txt, machine.txt, plots); $(wc -l <"$fails") failed run(s)" >&2
