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
#   TEST_QUICK=1 (make test-quick) each_* runs two algorithms of the list
#                           (quick_pick), not every one
#   TEST_POLICY_OWN=1 each_* WAIT (yield, spin): only the algorithms whose
#                           own code reads the policy (own_policy_algos) and
#                           WAIT_C_REPS, for a program whose loops are not
#                           sized: for the others the policy is wait.c's,
#                           one path, and the default policy runs them all
#   iters_for WAIT ALGO N, @N@ in CMD or ARGS, TEST_ITERS_PERCENT
#                           runs under yield sized by what they
#                           check: see "Sizing runs by policy" below
# (the folder above tests/, without a subshell per test where bats gives an
# absolute path, as it does)
if [[ "$BATS_TEST_DIRNAME" == /*/tests ]]; then ROOT=${BATS_TEST_DIRNAME%/tests}; else
  ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
fi
# Tests run what the repository builds and scripts/deps.sh installs
# (Debian's packages, in the system's directories), never what else a
# user's PATH puts first: a pyenv shim for python3 costs 0.8 s of CPU a
# start, and another program of the same name may behave otherwise.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
B="$ROOT/build"
LIB="$B/liblockswap.so"
LOCKSWAP="$B/lockswap"
PROGS="$B/progs"
UNIT="$B/unit"
# timeout -k K SECS env VAR=VALUE... in one static start (tests/tools/run-limit.c:
# the two starts cost ~10 ms more of CPU per run here); under, each_* and
# validate_each run through it
RUN_LIMIT="$B/tools/run-limit"
: "${TEST_TIMEOUT:=60}"
# A per-run timeout turns a deadlock into a failure; it is a hang detector,
# never a speed check. A file's TEST_TIMEOUT is what a run needs on a quiet
# machine; CI may run the suite beside other work (load 20-30 on 2 CPUs has
# been seen), where every hand-off to a descheduled thread costs a
# scheduling round, so the limit applied is LOCKSWAP_TEST_TIMEOUT_SCALE (5)
# times that. A real deadlock is still reported, only later.
hang_timeout() { echo $(( ${1:-$TEST_TIMEOUT} * ${LOCKSWAP_TEST_TIMEOUT_SCALE:-5} )); }

# Sizing runs by policy. Under yield a waiter hands its CPU to whatever
# else is runnable: beside busy loops every yield gives a busy loop a time
# slice, and a queue of waiters behind a descheduled holder or grantee (a
# convoy) then costs milliseconds per acquisition for the rest of the run.
# A run's time under load follows its contended acquisitions, so runs
# under yield are sized in iterations, never by time. Most algorithms wait
# only through locks/common/wait.[ch] (ls_spin_step, ls_wait_while_eq):
# their yield path is that file's, shared by every algorithm, and differs
# from park's only in never sleeping; each still runs under yield, with a
# tenth of the iterations (at least 50), and in full under park. The
# algorithms whose own code reads the policy or sets its own budgets
# (own_policy_algos: ls_wait_cfg.policy, LS_WAIT_*, ls_wait_cfg.yield or
# ls_spin_step_n in their file or a header it includes; a deadline check's
# clock cadence, s.n >= ls_wait_cfg.spin, is not a path of its own) keep
# every iteration, and so does a composition with such a wrapper. Spin runs
# keep every iteration too: two spinners on two cores overlap for real,
# which is how the stress runs find a race in an algorithm's own code (an
# MCS release that empties the queue without its CAS, in the -inject build:
# caught in 4 of 5 seeds at 300 iterations, in 1 of 5 at 50).
#   iters_percent WAIT ALGO sets ITERS_PERCENT: 10 or 100 as above (or
#                           less, if TEST_ITERS_PERCENT already says so);
#                           under, each_* and validate_each pass it to what
#                           they run as TEST_ITERS_PERCENT, which the loops
#                           of tests/progs apply (check.h: sized())
#   iters_for WAIT ALGO N   N sized so (at least min(N, 50)); a word @N@ (N
#                           digits) in each_*'s CMD or validate_each's ARGS
#                           (WAIT from its -w) becomes it
#   TEST_SHARED_PATH=1      the run checks a path that is wait.c's or the
#                           shim's, whatever the policy (every waiter asleep
#                           at once, LOCKSWAP_SPIN=0; a mutex kind's own
#                           bookkeeping): sized as under yield under every
#                           policy, a tenth for the algorithms whose waiting
#                           is wait.c's, all of it for the others; the runs
#                           of the algorithms' own paths stay whole
OWN_POLICY_RE='ls_wait_cfg\.(policy|yield)|LS_WAIT_(SPIN|YIELD|PARK)|ls_spin_step_n\('
# Computed once per bats run (each test file is one in run-tests' pool) and
# kept in BATS_RUN_TMPDIR: the greps over locks/ cost 0.2 s of CPU, and
# every test that runs a policy asked again.
own_policy_algos() {
  local memo=${BATS_RUN_TMPDIR:-}/own-policy-algos
  if [ -n "${BATS_RUN_TMPDIR:-}" ] && [ -f "$memo" ]; then
    cat "$memo"
    return
  fi
  local names
  names=$(algos_with_code "$OWN_POLICY_RE") || return 1
  if [ -n "${BATS_RUN_TMPDIR:-}" ]; then
    printf '%s\n' "$names" >"$memo.$$" && mv -f "$memo.$$" "$memo"
  fi
  printf '%s\n' "$names"
}

# algos_with_code RE: the names (of any family) registered by a file of
# locks/ that has a line matching RE (grep -E), or includes a header of
# locks/ that has one (locks/common/, every lock's, aside)
algos_with_code() {
  local re=$1 f h
  {
    grep -rlE "$re" "$ROOT/locks" --include='*.c' | grep -v '/locks/common/'
    for h in $(grep -rlE "$re" "$ROOT/locks" --include='*.h' | grep -v '/locks/common/'); do
      grep -lE "#include \"([a-z_]+/)?${h##*/}\"" "$ROOT"/locks/*/*.c
    done
  } | sort -u | while read -r f; do
    sed -n 's/^[[:space:]]*\.name = "\([^"]*\)",.*/\1/p' "$f"
  done
}

iters_percent() {
  local part
  ITERS_PERCENT=${TEST_ITERS_PERCENT:-100}
  [ "$1" = yield ] || [ -n "${TEST_SHARED_PATH:-}" ] || return 0
  [ -n "${OWN_POLICY:-}" ] || OWN_POLICY=" $(own_policy_algos | tr '\n' ' ') "
  for part in ${2//+/ }; do
    [[ "$OWN_POLICY" == *" $part "* ]] && return 0
  done
  [ "$ITERS_PERCENT" -lt 10 ] || ITERS_PERCENT=10
}

iters_for() {
  iters_percent "$1" "$2"
  sized_n "$3"
  echo "$SIZED_N"
}

# sized_n N: SIZED_N = N x ITERS_PERCENT / 100, at least min(N, 50)
sized_n() {
  local n=$(($1 * ITERS_PERCENT / 100)) floor=$(($1 < 50 ? $1 : 50))
  SIZED_N=$((n < floor ? floor : n))
}

# sized_words WAIT ALGO WORD...: SIZED=(the words, each @N@ replaced by
# iters_for WAIT ALGO N)
sized_words() {
  local w
  iters_percent "$1" "$2"
  shift 2
  SIZED=()
  for w in "$@"; do
    if [[ "$w" =~ ^@([0-9]+)@$ ]]; then
      sized_n "${BASH_REMATCH[1]}"
      SIZED+=("$SIZED_N")
    else
      SIZED+=("$w")
    fi
  done
}

# bats-support and bats-assert, sourced file by file: their load.bash runs
# $(dirname ...) once per file, and every test sources this file again, so
# the two loads cost 0.17 s of CPU per test (90 s over the suite).
for _f in /usr/lib/bats/bats-support/src/{output,error,lang}.bash \
  /usr/lib/bats/bats-assert/src/{assert,refute,assert_equal,assert_not_equal}.bash \
  /usr/lib/bats/bats-assert/src/{assert_success,assert_failure,assert_output}.bash \
  /usr/lib/bats/bats-assert/src/{refute_output,assert_line,refute_line}.bash \
  /usr/lib/bats/bats-assert/src/{assert_regex,refute_regex}.bash; do
  source "$_f"
done
unset _f

# names_of ARG...: NAMES_OF=(the lines of lockswap --names ARG...), kept for
# the bats run (one file of run-tests' pool) in BATS_RUN_TMPDIR: the lists
# are the build's, and each_* asked at every call (a start of lockswap and
# a subshell, 10-15 ms of CPU on this VM). A failure is not kept: lockswap's
# message goes to stderr and its status is returned.
names_of() {
  local key memo
  NAMES_OF=()
  if [ -z "${BATS_RUN_TMPDIR:-}" ] || [ "$LOCKSWAP" != "$B/lockswap" ]; then
    mapfile -t NAMES_OF < <("$LOCKSWAP" --names "$@")
    wait $! || return
    return 0
  fi
  key="$*"
  memo=$BATS_RUN_TMPDIR/names.${key//[^A-Za-z0-9_.+-]/_}
  if [ ! -f "$memo" ]; then
    "$LOCKSWAP" --names "$@" >"$memo.new" || { local rc=$?; rm -f "$memo.new"; return "$rc"; }
    mv -f "$memo.new" "$memo"
  fi
  mapfile -t NAMES_OF <"$memo"
}

algos() {
  local caps=() c
  for c in "$@"; do caps+=(--cap "$c"); done
  names_of "${caps[@]}" || return
  [ ${#NAMES_OF[@]} -eq 0 ] || printf '%s\n' "${NAMES_OF[@]}"
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
  local caps=() c n
  for c in "$@"; do caps+=(--cap "$c"); done
  names_of rwlock "${caps[@]}" || return 1
  if [ -n "${RW_ALGOS:-}" ]; then
    for n in "${NAMES_OF[@]}"; do [[ " $RW_ALGOS " == *" $n "* ]] && echo "$n"; done
    return 0
  fi
  [ ${#NAMES_OF[@]} -eq 0 ] || printf '%s\n' "${NAMES_OF[@]}"
}

spinalgos() {
  local caps=() c
  for c in "$@"; do caps+=(--cap "$c"); done
  names_of spin "${caps[@]}" || return
  [ ${#NAMES_OF[@]} -eq 0 ] || printf '%s\n' "${NAMES_OF[@]}"
}

# under_family VAR ALGO [WAIT] -- CMD...: as under, with VAR=ALGO
under_family() {
  local var=$1 algo=$2 wait=
  shift 2
  if [ "$1" != "--" ]; then wait=$1; shift; fi
  shift
  iters_percent "$wait" "$algo"
  local env=(LD_PRELOAD="$LIB" "$var=$algo" TEST_ITERS_PERCENT="$ITERS_PERCENT")
  [ -n "$wait" ] && env+=(LOCKSWAP_WAIT="$wait")
  # hang_timeout, without a subshell per run
  "$RUN_LIMIT" -k 5 $((TEST_TIMEOUT * ${LOCKSWAP_TEST_TIMEOUT_SCALE:-5})) "${env[@]}" "$@"
}

# quick_pick LISTFN NAME...: under `make test-quick` (TEST_QUICK=1), which
# each_* runs: the first name that is not glibc's own (LISTFN passthrough)
# and the last, so that the edit-compile loop runs every end-to-end check
# against two locks of each family; the whole suite runs every one.
quick_pick() {
  local listfn=$1 own n first=
  shift
  own=" $($listfn passthrough | tr '\n' ' ') "
  for n in "$@"; do [[ "$own" == *" $n "* ]] || { first=$n; break; }; done
  printf '%s\n' ${first:-$1} "${@: -1}" | awk '!seen[$0]++'
}

# policy_own_pick NAME...: those whose waiting path is their own
# (own_policy_algos, a composition with one) or one of WAIT_C_REPS, the
# locks that run wait.c's path under every policy: a queue lock (a
# waiter's own flag) and a ticket lock (one word every waiter watches)
WAIT_C_REPS="mcs ticket"
policy_own_pick() {
  local n part keep=" $(own_policy_algos | tr '\n' ' ') $WAIT_C_REPS "
  for n in "$@"; do
    for part in ${n//+/ }; do
      [[ "$keep" == *" $part "* ]] && { echo "$n"; break; }
    done
  done
  return 0
}

# untraced FN ARGS...: FN without bats' DEBUG trap, which runs before every
# command to know the line of a failure and, over the hundreds of runs of
# each_* and validate_each, costs as much as the runs themselves (their
# failures name the algorithm and print its output instead); then the trap
# as it was.
untraced() {
  local dbg rc
  dbg=$(trap -p DEBUG)
  trap - DEBUG
  "$@" && rc=0 || rc=$?
  eval "$dbg"
  return "$rc"
}

under_rw() {
  under_family LOCKSWAP_RWALGO "$@"
}

# each_family LISTFN VAR "CAPS" [WAIT] -- CMD...
each_family() {
  untraced each_family_untraced "$@"
}
# lines_of FILE CMD...: LINES_OF="CMD's output lines, space-separated",
# read through FILE (no subshell: a fork of the test's shell costs 4-8 ms of
# CPU here)
lines_of() {
  local f=$1 l=()
  shift
  "$@" >"$f"
  mapfile -t l <"$f"
  LINES_OF="${l[*]}"
}
each_family_untraced() {
  local listfn=$1 var=$2 caps=$3 wait= failed=() a rc names excl arg w out
  out=${BATS_TEST_TMPDIR:-${TMPDIR:-/tmp}}/each-family.$BASHPID.$RANDOM
  shift 3
  if [ "$1" != "--" ]; then wait=$1; shift; fi
  shift
  # the lists through $out, not $(...): no subshell per call
  # shellcheck disable=SC2086
  lines_of "$out" $listfn $caps
  names=$LINES_OF
  [ -n "$names" ] || { echo "no algorithm has capabilities: $caps"; return 1; }
  [ -z "${TEST_QUICK:-}" ] || names=$(quick_pick "$listfn" $names)
  if [ -n "${TEST_POLICY_OWN:-}" ] && [ -n "$wait" ] && [ "$wait" != park ]; then
    # shellcheck disable=SC2086
    lines_of "$out" policy_own_pick $names
    names=$LINES_OF
  fi
  excl=" "
  if [ "$listfn" = rwalgos ]; then
    lines_of "$out" rwalgos exclusive
    excl=" $LINES_OF "
  fi
  for a in $names; do
    arg=all
    [[ "$excl" == *" $a "* ]] && arg=exclusive-ok
    # the algorithm's own policy gives up the default kind's reader preference
    [ "$arg" = all ] && [ "${LOCKSWAP_RWPOLICY:-}" = algorithm ] && arg=own-ok
    local cmd=()
    sized_words "$wait" "$a" "$@"
    for w in "${SIZED[@]}"; do [ "$w" = @ARG@ ] && cmd+=("$arg") || cmd+=("$w"); done
    # the output into a file, not $(...): a process start (a fork of this
    # shell) costs 2-3 ms of CPU here, and each_* runs thousands
    if [ -n "$wait" ]; then
      under_family "$var" "$a" "$wait" -- "${cmd[@]}" >"$out" 2>&1 && rc=0 || rc=$?
    else
      under_family "$var" "$a" -- "${cmd[@]}" >"$out" 2>&1 && rc=0 || rc=$?
    fi
    if [ $rc -ne 0 ]; then
      failed+=("$a")
      { printf '=== %s (wait=%s) exit %d:\n' "$a" "${wait:-default}" "$rc"; cat "$out"; } | tail -n 20
    fi
  done
  # (bats removes BATS_TEST_TMPDIR; rm is one more start per call)
  [ -n "${BATS_TEST_TMPDIR:-}" ] || rm -f "$out"
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
  untraced validate_each_untraced "$@"
}
validate_each_untraced() {
  local names=$1 seeds=$2 a s rc out wait= prev= w failed=() log
  shift 2
  [ -n "$names" ] || { echo "no algorithm to run"; return 1; }
  for w in "$@"; do [ "$prev" = -w ] && wait=$w; prev=$w; done
  # each run's output into a file, read only on failure (as each_family)
  log=${BATS_TEST_TMPDIR:-${TMPDIR:-/tmp}}/validate.$BASHPID.$RANDOM
  for a in $names; do
    sized_words "$wait" "$a" "$@"
    for s in $seeds; do
      rc=0
      "$RUN_LIMIT" -k 2 "${STRESS_TIMEOUT:-120}" TEST_ITERS_PERCENT="$ITERS_PERCENT" "${SIZED[@]}" -a "$a" -s "$s" -q \
        >"$log" 2>&1 || rc=$?
      if [ "$rc" -ne 0 ]; then
        failed+=("$a(seed $s)")
        out=$(tail -n 15 "$log")
        [ "$rc" -eq 124 ] && out+=$'\n(killed after '"${STRESS_TIMEOUT:-120}"' s: deadlock or lost wake-up?)'
        printf '=== %s seed %s: %s exit %d\n%s\n' "$a" "$s" "${SIZED[*]}" "$rc" "$out"
      fi
    done
  done
  [ -n "${BATS_TEST_TMPDIR:-}" ] || rm -f "$log"
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

# ---- a policy whose path is shared runs where it differs (issue 35, item 3) ----
# Under yield (and spin) most algorithms wait through locks/common/wait.c
# alone: their code is the same under every policy, and the shim never reads
# the policy (own_policy_algos, "Sizing runs by policy" above). A program
# whose every algorithm runs under park, the policy that also checks each
# release's wake-up, then runs under yield for the algorithms whose code
# reads the policy (own_policy_algos; a composition NAME+WRAPPER when NAME
# does) and two that wait through wait.c alone (the first and the last of
# the list), for wait.c's own path under that policy.
#   own_wait_algos [CAP...]     those among algos CAP...
#   own_wait_rwalgos [CAP...]   the same among rwalgos CAP... (RW_ALGOS applies)
#   each_own_wait "CAPS" WAIT -- CMD...     each_algo over own_wait_algos
#   each_own_wait_rw "CAPS" WAIT -- CMD...  each_rwalgo over own_wait_rwalgos
own_wait_pick() {
  local own shared=() n
  [ -n "${OWN_POLICY:-}" ] || OWN_POLICY=" $(own_policy_algos | tr '\n' ' ') "
  for n in "$@"; do
    if [[ "$OWN_POLICY" == *" ${n%%+*} "* ]]; then echo "$n"; else shared+=("$n"); fi
  done
  [ ${#shared[@]} -eq 0 ] || printf '%s\n' "${shared[0]}" "${shared[@]: -1}" | awk '!seen[$0]++'
}
own_wait_algos() {
  # shellcheck disable=SC2046
  own_wait_pick $(algos "$@" | grep -vxF "$(algos passthrough)")
}
own_wait_rwalgos() {
  # shellcheck disable=SC2046
  own_wait_pick $(rwalgos "$@" | grep -vxF "$(rwalgos passthrough)")
}
each_own_wait() {
  local caps=$1
  shift
  each_family own_wait_algos LOCKSWAP_ALGO "$caps" "$@"
}
# (through RW_ALGOS, so that each_rwalgo's @ARG@ still knows the exclusive ones)
each_own_wait_rw() {
  local caps=$1 picked
  shift
  # shellcheck disable=SC2086
  picked=$(own_wait_rwalgos $caps | tr '\n' ' ')
  RW_ALGOS="${picked:- }" each_rwalgo "$caps" "$@"
}

# TEST_CPU_LOG=FILE (scripts/sweeps/suite-times sets it): each test appends
# "NUMBER CPU_SECONDS" to FILE, the user and system time of the test's
# process and of the children it waited for (bash's `times`), so that the
# suite's CPU can be read test by test. A file with a teardown of its own
# (defined after `load helpers`, so it wins) is not measured.
if [ -n "${TEST_CPU_LOG:-}" ]; then
  teardown() {
    times >"$BATS_TEST_TMPDIR/.times"
    tr -s 'ms \n' '   ' <"$BATS_TEST_TMPDIR/.times" |
      awk -v n="$BATS_TEST_NUMBER" '{ c = 0; for (i = 1; i < NF; i += 2) c += $i * 60 + $(i + 1); printf "%s %.2f\n", n, c }' >>"$TEST_CPU_LOG"
  }
fi
