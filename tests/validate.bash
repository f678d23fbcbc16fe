# The generic validators (build/unit/stress, rwstress) over many algorithms
# and seeds in few processes (issue 35, item 3): on this suite's machines a
# process start costs ~10 ms of CPU, and validate_each (helpers.bash) starts
# three for every algorithm and seed (a subshell, timeout and the
# validator), more than most runs cost themselves. `load validate` after
# `load helpers`.
#
#   validate_lists "NAMES" "SEEDS" VALIDATOR ARGS...
#       as validate_each: VALIDATOR -a NAME -s SEED -q ARGS for each name and
#       seed, every run sized as validate_each sizes it (a word @N@, -w's
#       policy: helpers.bash iters_for), each run's limit STRESS_TIMEOUT
#       (default 120 s, the validator's own watchdog, -T: where each thread
#       is, then exit 1); but one process runs every name and seed whose
#       sized command is the same (-a A,B,... -s S1,S2,...), each run on
#       fresh locks and threads (the validators' headers). Fails naming each
#       failed run (the validator's FAIL lines name algorithm and seed).
validate_lists() {
  untraced validate_lists_untraced "$@"
}
validate_lists_untraced() {
  local names=$1 seeds=$2 a wait="" prev="" w key keys=() failed=0 i log rc sl runs
  shift 2
  [ -n "$names" ] || { echo "no algorithm to run"; return 1; }
  local -a sv
  read -r -a sv <<<"$seeds"
  [ ${#sv[@]} -gt 0 ] || { echo "no seed to run"; return 1; }
  sl=$(IFS=,; echo "${sv[*]}")
  for w in "$@"; do [ "$prev" = -w ] && wait=$w; prev=$w; done
  # the names whose sized command is the same, in the order of NAMES
  local -A group=() count=()
  for a in $names; do
    sized_words "$wait" "$a" "$@"
    key="$ITERS_PERCENT ${SIZED[*]}"
    if [ -z "${group[$key]:-}" ]; then
      keys+=("$key")
      group[$key]=$a
      count[$key]=1
    else
      group[$key]+=",$a"
      count[$key]=$((count[$key] + 1))
    fi
  done
  for i in "${!keys[@]}"; do
    key=${keys[i]}
    sized_words "$wait" "${group[$key]%%,*}" "$@"
    runs=$((count[$key] * ${#sv[@]}))
    log="$BATS_TEST_TMPDIR/validate.$i"
    rc=0
    TEST_ITERS_PERCENT=$ITERS_PERCENT timeout -k 2 $((${STRESS_TIMEOUT:-120} * runs + 10)) "${SIZED[@]}" \
      -a "${group[$key]}" -s "$sl" -T "${STRESS_TIMEOUT:-120}" -q >"$log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
      failed=1
      printf '=== %s -a %s -s %s: exit %d\n' "${SIZED[*]}" "${group[$key]}" "$sl" "$rc"
      [ "$rc" -ne 124 ] || echo "(killed after $((${STRESS_TIMEOUT:-120} * runs + 10)) s, the watchdog of each run silent)"
      grep -m 40 FAIL "$log" || tail -n 15 "$log"
    fi
  done
  [ "$failed" -eq 0 ] || { echo "failed: the runs above"; return 1; }
}
