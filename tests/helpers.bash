# Shared by every bats file: `load helpers`.
#
#   algos [CAP...]          names of the algorithms having every CAP
#                           (fifo, timeout, qnode, hier, passthrough; "lock"
#                           means every real lock, i.e. not passthrough)
#   under ALGO [WAIT] -- CMD...
#                           run CMD with liblockswap preloaded, under a
#                           timeout (hang_timeout: 5 x TEST_TIMEOUT s): a
#                           deadlock becomes a failure, not a hang
#   each_algo "CAPS" [WAIT] -- CMD...
#                           run CMD under every algorithm with CAPS and WAIT
#                           (default: the default policy);
#                           fails naming every algorithm whose run failed,
#                           with its output
#   native_passes PROG      every case of a tests/progs program (the list it
#                           prints without arguments) passes under glibc
#                           natively: the programs are the specification
#   rwalgos [CAP...]        the reader-writer family's names having every CAP
#                           (lockswap --names rwlock: NAME+WRAPPER compositions
#                           included; caps also kind, exclusive, wrapper; "lock"
#                           = not passthrough); RW_ALGOS="a b" keeps only those
#   under_rw RWALGO [WAIT] -- CMD...
#                           as under, with LOCKSWAP_RWALGO=RWALGO
#   each_rwalgo "CAPS" [WAIT] -- CMD...
#                           as each_algo, over rwalgos CAPS; a word @ARG@ in CMD
#                           becomes "all", or "exclusive-ok" for an algorithm
#                           whose readers exclude each other (the spec
#                           programs' case lists for the mutex-serialised mode)
#   spinalgos [CAP...], each_spinalgo "CAPS" [WAIT] -- CMD...
#                           the same for the spinlock family (LOCKSWAP_SPINALGO)
#   validate_each "NAMES" "SEEDS" VALIDATOR ARGS...
#                           a validator (build/unit/stress, rwstress) with
#                           -a NAME -s SEED -q for each name and seed, under
#                           STRESS_TIMEOUT (default 120 s); fails naming each
#                           failed run, with the end of its output
ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
B="$ROOT/build"
LIB="$B/liblockswap.so"
LOCKSWAP="$B/lockswap"
PROGS="$B/progs"
UNIT="$B/unit"
: "${TEST_TIMEOUT:=60}"
# A per-run timeout turns a deadlock into a failure; it is a hang detector,
# never a speed check. A file's TEST_TIMEOUT is what a run needs on a quiet
# machine; CI may run the suite beside other work (load 20-30 on 2 CPUs has
# been seen), where every hand-off to a descheduled thread costs a
# scheduling round, so the limit applied is LOCKSWAP_TEST_TIMEOUT_SCALE (5)
# times that. A real deadlock is still reported, only later.
hang_timeout() { echo $(( ${1:-$TEST_TIMEOUT} * ${LOCKSWAP_TEST_TIMEOUT_SCALE:-5} )); }

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

algos() {
  local caps=() c
  for c in "$@"; do caps+=(--cap "$c"); done
  "$LOCKSWAP" --names "${caps[@]}"
}

# under ALGO [WAIT] -- CMD...
under() {
  under_family LOCKSWAP_ALGO "$@"
}

# each_algo "CAPS" [WAIT] -- CMD...   (CAPS space-separated, may be "")
each_algo() {
  local caps=$1
  shift
  each_family algos LOCKSWAP_ALGO "$caps" "$@"
}

# native_passes PROG
native_passes() {
  local p=$1 c out
  for c in $("$p" 2>&1 | sed -n 's/^cases://p'); do
    out=$(timeout "$(hang_timeout)" "$p" "$c" 2>&1) || { echo "native $c: $out"; return 1; }
  done
}

# ---- the reader-writer and spinlock families (issue 19) ----

rwalgos() {
  local caps=() c names n
  for c in "$@"; do caps+=(--cap "$c"); done
  names=$("$LOCKSWAP" --names rwlock "${caps[@]}") || return 1
  if [ -n "${RW_ALGOS:-}" ]; then
    for n in $names; do [[ " $RW_ALGOS " == *" $n "* ]] && echo "$n"; done
    return 0
  fi
  printf '%s\n' "$names"
}

spinalgos() {
  local caps=() c
  for c in "$@"; do caps+=(--cap "$c"); done
  "$LOCKSWAP" --names spin "${caps[@]}"
}

# under_family VAR ALGO [WAIT] -- CMD...: as under, with VAR=ALGO
under_family() {
  local var=$1 algo=$2 wait=
  shift 2
  if [ "$1" != "--" ]; then wait=$1; shift; fi
  shift
  local env=(LD_PRELOAD="$LIB" "$var=$algo")
  [ -n "$wait" ] && env+=(LOCKSWAP_WAIT="$wait")
  timeout -k 5 "$(hang_timeout)" env "${env[@]}" "$@"
}

under_rw() {
  under_family LOCKSWAP_RWALGO "$@"
}

# each_family LISTFN VAR "CAPS" [WAIT] -- CMD...
each_family() {
  local listfn=$1 var=$2 caps=$3 wait= failed=() a out rc names excl arg w
  shift 3
  if [ "$1" != "--" ]; then wait=$1; shift; fi
  shift
  # shellcheck disable=SC2086
  names=$($listfn $caps)
  [ -n "$names" ] || { echo "no algorithm has capabilities: $caps"; return 1; }
  excl=" "
  if [ "$listfn" = rwalgos ]; then excl=" $(rwalgos exclusive | tr '\n' ' ') "; fi
  for a in $names; do
    arg=all
    [[ "$excl" == *" $a "* ]] && arg=exclusive-ok
    # the algorithm's own policy gives up the default kind's reader preference
    [ "$arg" = all ] && [ "${LOCKSWAP_RWPOLICY:-}" = algorithm ] && arg=own-ok
    local cmd=()
    for w in "$@"; do [ "$w" = @ARG@ ] && cmd+=("$arg") || cmd+=("$w"); done
    if [ -n "$wait" ]; then
      out=$(under_family "$var" "$a" "$wait" -- "${cmd[@]}" 2>&1) && rc=0 || rc=$?
    else
      out=$(under_family "$var" "$a" -- "${cmd[@]}" 2>&1) && rc=0 || rc=$?
    fi
    if [ $rc -ne 0 ]; then
      failed+=("$a")
      printf '=== %s (wait=%s) exit %d:\n%s\n' "$a" "${wait:-default}" "$rc" "$out" | tail -n 20
    fi
  done
  if [ ${#failed[@]} -ne 0 ]; then
    echo "failed under: ${failed[*]}"
    return 1
  fi
}

each_rwalgo() {
  local caps=$1
  shift
  each_family rwalgos LOCKSWAP_RWALGO "$caps" "$@"
}

each_spinalgo() {
  local caps=$1
  shift
  each_family spinalgos LOCKSWAP_SPINALGO "$caps" "$@"
}

validate_each() {
  local names=$1 seeds=$2 a s rc out failed=()
  shift 2
  [ -n "$names" ] || { echo "no algorithm to run"; return 1; }
  for a in $names; do
    for s in $seeds; do
      rc=0
      out=$(timeout -k 2 "${STRESS_TIMEOUT:-120}" "$@" -a "$a" -s "$s" -q 2>&1) || rc=$?
      if [ "$rc" -ne 0 ]; then
        failed+=("$a(seed $s)")
        [ "$rc" -eq 124 ] && out+=$'\n(killed after '"${STRESS_TIMEOUT:-120}"' s: deadlock or lost wake-up?)'
        printf '=== %s seed %s: %s exit %d\n%s\n' "$a" "$s" "$*" "$rc" "$(tail -n 15 <<<"$out")"
      fi
    done
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}
