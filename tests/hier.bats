#!/usr/bin/env bats
# The hierarchical locks and their clusters (issue 10): cluster ids from
# hwloc, read only when a hierarchical algorithm is chosen; LOCKSWAP_CLUSTER
# and LOCKSWAP_TOPOLOGY, and their errors; `lockswap --topology`; the
# round-robin rule of thread:N, as lockswap and lockbench apply it; the
# pass bound and the locality of every lock that claims them, from queued
# waiters (tests/unit/hier_order.c, deterministic); stress with 3 and 4
# clusters, with the fast path off, with groups; with no address space left
# (tests/unit/hier_nomem.c, and aslimit hold-many). The end-to-end suites run
# the six locks too (capability hier), with the default clusters (auto).
# Yield runs are sized by iters_for and @N@ (helpers.bash); the other runs
# by what they check (issue 35, item 3): the pass bound at its smallest (1)
# and a larger one (3), and the validator's runs enough critical sections
# (6 threads x 600) that every cluster hands over to itself and to the
# others many times over.
load helpers
load validate
TEST_TIMEOUT=60
HELLO="$PROGS/hello"
ORDER="$UNIT/hier_order"
# tests/data/topo-2pack.xml: hwloc_topology_export_xml() of the synthetic
# topology "pack:2 core:1 pu:1" (hwloc 2.9).
XML="$ROOT/tests/data/topo-2pack.xml"

hier_algos() { algos hier; }

@test "six hierarchical locks, listed with their papers and capability hier" {
  run "$LOCKSWAP" --names --cap hier
  assert_success
  for a in hbo hclh c-bo-mcs c-tkt-tkt hmcs cna; do
    assert_line "$a"
  done
  run "$LOCKSWAP" --list
  assert_output --regexp 'hbo +timeout,hier +.*AMP 7\.8\.1'
  assert_output --regexp 'hclh +qnode,hier +.*AMP 7\.8\.2'
  assert_output --regexp 'c-bo-mcs +qnode,hier +.*PPoPP 2012'
  assert_output --regexp 'c-tkt-tkt +hier +.*PPoPP 2012'
  assert_output --regexp 'hmcs +qnode,hier +.*PPoPP 2015'
  assert_output --regexp 'cna +qnode,hier +.*EuroSys 2019'
  assert_output --partial "LOCKSWAP_COHORT_PASSES=64"
}

@test "lockswap --topology: the levels hwloc finds and the cluster of every CPU" {
  run "$LOCKSWAP" --topology
  assert_success
  assert_output --partial "topology: this machine"
  assert_output --regexp 'clusters: level=[a-z0-9]+ \(auto\), [0-9]+ clusters?'
  local ncpu
  ncpu=$(getconf _NPROCESSORS_CONF)
  run "$LOCKSWAP" --topology=table
  assert_success
  [ "$(tr ',' '\n' <<<"$output" | wc -l)" -eq "$ncpu" ]
  [[ "$output" =~ ^[0-9]+(,[0-9]+)*$ ]]
  run env LOCKSWAP_CLUSTER=thread:4/2 "$LOCKSWAP" --topology
  assert_success
  assert_output --partial "thread:4/2"
  run "$LOCKSWAP" --topology=tree
  [ "$status" -eq 2 ]
}

@test "LOCKSWAP_TOPOLOGY: a synthetic machine and an XML file; real CPU i is PU i mod their count" {
  run env LOCKSWAP_TOPOLOGY="pack:2 core:1 pu:1" "$LOCKSWAP" --topology
  assert_success
  assert_output --partial "topology: synthetic (2 PUs"
  assert_output --partial "clusters: level=package (auto), 2 clusters"
  run env LOCKSWAP_TOPOLOGY="pack:2 [numa] l3:2 core:2 pu:1" LOCKSWAP_CLUSTER=l3 "$LOCKSWAP" --topology
  assert_success
  assert_output --regexp 'l3 +4 '
  run env LOCKSWAP_TOPOLOGY="$XML" LOCKSWAP_CLUSTER=package "$LOCKSWAP" --topology=table
  assert_success
  [ "$(cut -d, -f1-2 <<<"$output")" = "0,1" ]
  # the library reads the same, before main, under a hierarchical lock
  run under c-tkt-tkt -- env LOCKSWAP_TOPOLOGY="$XML" LOCKSWAP_VERBOSE=1 "$HELLO"
  assert_success
  assert_output --partial "clusters level=package (auto), 2 clusters"
  assert_output --partial "topology of XML file"
}

@test "every level name is accepted; LOCKSWAP_VERBOSE reports the level in use" {
  untraced level_names
}
# (one program start a run, no subshell: a start costs ~10 ms of CPU)
level_names() {
  local l rc text f="$BATS_TEST_TMPDIR/level" limit=$((TEST_TIMEOUT * ${LOCKSWAP_TEST_TIMEOUT_SCALE:-5}))
  for l in auto numa package l3 l2 core thread:1 thread:64 thread:6/3; do
    rc=0
    "$RUN_LIMIT" -k 5 "$limit" LD_PRELOAD="$LIB" LOCKSWAP_ALGO=hmcs LOCKSWAP_CLUSTER=$l LOCKSWAP_VERBOSE=1 "$HELLO" >"$f" 2>&1 || rc=$?
    read -r -d '' text <"$f" || true
    [ "$rc" -eq 0 ] || { echo "$l: exit $rc: $text"; return 1; }
    [[ $'\n'"$text" == *$'\n'"lockswap: clusters "* ]] || { echo "$l: no clusters line: $text"; return 1; }
    [[ $'\n'"$text"$'\n' == *$'\n'"main ran"$'\n'* ]] || { echo "$l: main did not run: $text"; return 1; }
  done
  "$RUN_LIMIT" -k 5 "$limit" LD_PRELOAD="$LIB" LOCKSWAP_ALGO=mcs LOCKSWAP_VERBOSE=1 "$HELLO" >"$f" 2>&1 || true
  read -r -d '' text <"$f" || true
  [[ "$text" != *clusters* ]] || { echo "mcs reports clusters: $text"; return 1; }
}

# rejected VAR VALUE ALGO EXPECTED: one line naming it, exit 2, main never
# runs (one program start, no subshell: a start costs ~10 ms of CPU)
rejected() {
  local f="$BATS_TEST_TMPDIR/rejected" rc=0 out=()
  "$RUN_LIMIT" -k 5 $((TEST_TIMEOUT * ${LOCKSWAP_TEST_TIMEOUT_SCALE:-5})) LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$3" "$1=$2" "$HELLO" >"$f" 2>&1 || rc=$?
  mapfile -t out <"$f"
  [ "$rc" -eq 2 ] || { echo "$1='$2' under $3: status $rc"; return 1; }
  [ "${#out[@]}" -eq 1 ] || { echo "$1='$2': ${#out[@]} lines: ${out[*]}"; return 1; }
  [[ "${out[0]}" == "lockswap: $1"*"$4"* ]] || { echo "$1='$2': ${out[0]}"; return 1; }
}

@test "bad LOCKSWAP_CLUSTER and LOCKSWAP_TOPOLOGY: one line, exit 2 before main" {
  untraced bad_values
}
bad_values() {
  local v='valid: auto, numa, package, l3, l2, core, thread:N, thread:N/G'
  for bad in foo "" thread: thread:0 thread:65 thread:x thread:4/4 thread:4/1 L3 pu; do
    rejected LOCKSWAP_CLUSTER "$bad" c-tkt-tkt "$v" || return 1
  done
  rejected LOCKSWAP_CLUSTER foo mcs "$v" || return 1 # whatever the algorithm
  # malformed: rejected whatever the algorithm, without hwloc
  for bad in "pack:2 [numa l3:2" "pack:" "pack:0" "(x" ":2" "pack:2,core:2"; do
    rejected LOCKSWAP_TOPOLOGY "$bad" mcs "malformed synthetic description" || return 1
  done
  # well formed, but hwloc's parser refuses it: found when the topology loads
  rejected LOCKSWAP_TOPOLOGY "pack:2 foo:3" hmcs "hwloc rejects the synthetic description" || return 1
  rejected LOCKSWAP_TOPOLOGY /nonexistent/topo.xml cna "cannot read XML file" || return 1
  local junk="$BATS_TEST_TMPDIR/junk.xml"
  echo "not xml" >"$junk"
  rejected LOCKSWAP_TOPOLOGY "$junk" cna "hwloc cannot load" || return 1
}

# hwloc_runs: the test below, one program start a run (no subshell, one
# env, no grep: a start costs ~10 ms of CPU), untraced (bats' DEBUG trap
# on every command of 30 runs)
hwloc_runs() {
  local a hier limit text f="$BATS_TEST_TMPDIR/maps" rc
  local fini=$'calling fini: [^\n]*libhwloc\\.so\\.15'
  limit=$(hang_timeout)
  hier=" $(hier_algos | tr '\n' ' ') "
  for a in $(algos lock); do
    [[ "$hier" != *" $a "* ]] || continue
    rc=0
    "$RUN_LIMIT" -k 5 "$limit" LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$a" LD_DEBUG=files cat /proc/self/maps >"$f" 2>&1 || rc=$?
    read -r -d '' text <"$f" || true
    [ "$rc" -eq 0 ] || { echo "$a: exit $rc: $text"; return 1; }
    [[ "$text" != *hwloc* ]] || { echo "$a maps or loads hwloc"; return 1; }
  done
  for a in $(hier_algos); do
    "$RUN_LIMIT" -k 5 "$limit" LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$a" LD_DEBUG=files "$HELLO" >"$f" 2>&1 || true
    read -r -d '' text <"$f" || true
    [[ "$text" == *'file=libhwloc.so.15 [0];  dynamically loaded by'* ]] || { echo "$a: no hwloc"; return 1; }
    [[ "$text" =~ $fini ]] || { echo "$a: hwloc not closed"; return 1; }
    # thread:N needs no topology
    "$RUN_LIMIT" -k 5 "$limit" LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$a" LD_DEBUG=files LOCKSWAP_CLUSTER=thread:3 "$HELLO" >"$f" 2>&1 || true
    read -r -d '' text <"$f" || true
    [[ "$text" != *hwloc* ]] || { echo "$a with thread:3 loads hwloc"; return 1; }
  done
}

@test "a run with any other algorithm never maps libhwloc; a hierarchical one loads it (and closes it)" {
  untraced hwloc_runs
}

@test "thread:N: lockswap and lockbench give every thread the same cluster" {
  local out n
  out=$(under c-tkt-tkt -- env LOCKSWAP_CLUSTER=thread:3 LOCKSWAP_VERBOSE=1 \
    "$B/lockbench" -t 5 -n 200 --remote-ns 100 2>&1)
  # lockswap: "thread TID (#K) is in cluster C"; lockbench: "#K tid TID cluster C"
  local shim bench
  shim=$(sed -n 's/^lockswap: thread \([0-9]*\) (#\([0-9]*\)) is in cluster \([0-9]*\)$/#\2 \1 \3/p' <<<"$out" | sort)
  bench=$(grep '^  registered' <<<"$out" | sed 's/^  registered *//; s/main //' | tr ',' '\n' |
    sed 's/^ *//; s/ tid / /; s/ cluster / /' | sort)
  n=$(wc -l <<<"$shim")
  [ "$n" -eq 6 ] || { echo "$out"; return 1; }
  [ "$shim" = "$bench" ] || { echo "lockswap: $shim"; echo "lockbench: $bench"; return 1; }
  grep -q 'clusters      thread:3: ' <<<"$out"
}

@test "lockbench: cluster options, and the local hand-off statistics" {
  run "$B/lockbench" -t 2 -n 100 --clusters thread:0
  [ "$status" -eq 2 ]
  run "$B/lockbench" -t 2 -n 100 --remote-ns 10
  [ "$status" -eq 2 ]
  assert_output --partial "--remote-ns needs clusters"
  run "$B/lockbench" -t 2 -n 100 --clusters cpus:0,x
  [ "$status" -eq 2 ]
  # one cluster: every hand-off is local
  run under ticket -- "$B/lockbench" -t 3 -n 2000 --clusters thread:1 --csv
  assert_success
  [ "$(cut -d, -f40- <<<"$output" | cut -d, -f1,3)" = "thread:1,1.0000" ]
  # a cluster per thread, a FIFO lock: no hand-off is local
  run under ticket -- "$B/lockbench" -t 3 -n 2000 --clusters thread:4 --csv
  assert_success
  [ "$(cut -d, -f40- <<<"$output" | cut -d, -f1,3,4)" = "thread:4,0.0000,0" ]
}

# order_all "ALGOS" HIER_ORDER_OPTIONS...: hier_order for each algorithm
# (each run one program start, no subshell: a start costs ~10 ms of CPU)
order_all() {
  local names=$1 a out="$BATS_TEST_TMPDIR/order" failed=()
  shift
  for a in $names; do
    timeout -k 2 60 "$ORDER" -a "$a" "$@" >"$out" 2>&1 || { failed+=("$a"); echo "== $a: $(cat "$out")"; }
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

@test "fairness: queued waiters of another cluster wait for at most LOCKSWAP_COHORT_PASSES local hand-offs" {
  local o b
  for o in 0000001111 0101010101 0011001100 1111100000 0001011100; do
    for b in 1 3; do
      order_all "c-tkt-tkt hmcs cna" -c 2 -o "$o" -b "$b" || return 1
    done
  done
  order_all "c-tkt-tkt hmcs cna" -c 3 -o 012012012012 -b 2 || return 1
}

@test "locality: queued waiters are served cluster by cluster (one switch for two clusters)" {
  order_all "c-tkt-tkt hmcs cna c-bo-mcs" -c 2 -o 0101010101 -s 1 || return 1
  order_all "c-tkt-tkt hmcs cna c-bo-mcs" -c 3 -o 210210210 -s 2 || return 1
  # the others serve every waiter too
  order_all "hbo hclh" -c 2 -o 0101010101 || return 1
}

@test "hmcs over three levels (thread:4/2): the group bound and locality between groups" {
  order_all hmcs -c 4/2 -o 213021302130 -b 2 -B 1 || return 1
  order_all hmcs -c 4/2 -o 213021302130 -s 3 -g 1 || return 1
  order_all hmcs -c 6/3 -o 543210543210 -b 1 -B 1 || return 1
}

@test "hier_order catches a lock that passes more than the bound, and one that ignores clusters" {
  local a
  for a in c-tkt-tkt hmcs cna; do
    run timeout 60 "$ORDER" -a "$a" -c 2 -o 0000001111 -P 3 -b 2
    assert_failure
    assert_output --partial "3 hand-offs in a row inside one cluster while another cluster waited (bound 2)"
  done
  # hclh's batches are its cluster-mates queued when its master splices;
  # one waiter at a time makes batches of one
  run timeout 60 "$ORDER" -a hclh -c 2 -o 0101010101 -s 1
  assert_failure
  assert_output --partial "hand-offs to another cluster (at most 1 expected)"
}

# stress_hier ENV... : the validator for every hierarchical lock, one
# process per command (validate.bash: each run a child of its own)
stress_hier() {
  (
    export "$@" STRESS_TIMEOUT=60
    local names rc=0
    names=$(hier_algos)
    validate_lists "$names" 1 "$UNIT/stress-inject" -w park -t 6 -n 600 -m mix -l 3 || rc=1
    validate_lists "$names" 1 "$UNIT/stress-inject" -w yield -t 6 -n @600@ -m mix -l 3 || rc=1
    validate_lists "$names" 1 "$UNIT/stress" -w spin -t 2 -n 800 -m mix -l 2 || rc=1
    [ "$rc" -eq 0 ] || { echo "failed ($*)"; return 1; }
  )
}

@test "stress, fault injection: 4 clusters for 6 threads, pass bound 1" {
  stress_hier LOCKSWAP_CLUSTER=thread:4 LOCKSWAP_COHORT_PASSES=1 LOCKSWAP_HMCS_GROUP_PASSES=1
}

@test "stress, fault injection: the papers' paths (no fast path), 3 clusters in hmcs' groups" {
  stress_hier LOCKSWAP_CLUSTER=thread:6/3 LOCKSWAP_HIER_FASTPATH=0 LOCKSWAP_HCLH_COMBINE_NS=2000
}

@test "no address space left: a lock that gets no per-cluster block is its top-level lock alone, exclusive, and gets its block after destroy" {
  # tests/unit/hier_nomem.c: RLIMIT_AS at the current size and the pool's
  # chunk used up, then 6 threads race on fresh locks (lock and trylock):
  # exclusion, the flat marker, no queue node; destroy, address space
  # back: a block of their own again
  local a w failed=()
  for a in c-bo-mcs c-tkt-tkt hclh hmcs; do
    for w in park yield; do
      # iters_for without its subshell (a process start is ~10 ms of CPU)
      iters_percent "$w" "$a"
      sized_n 1000
      LOCKSWAP_INJECT=10 timeout -k 2 60 "$UNIT/hier_nomem-inject" -a "$a" -w "$w" -t 6 -n "$SIZED_N" ||
        failed+=("$a/$w")
    done
    timeout -k 2 60 "$UNIT/hier_nomem" -a "$a" -w spin -t 2 -n 1000 || failed+=("$a/spin")
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

@test "no address space left, end to end: 600 mutexes held while another thread takes 600 more, nothing printed" {
  local a out failed=()
  for a in $(hier_algos); do
    out=$(under "$a" -- "$PROGS/aslimit" hold-many 2>&1) || true
    [ "$out" = "aslimit: ok" ] || { failed+=("$a"); printf '=== %s: %s\n' "$a" "$out"; }
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed under: ${failed[*]}"; return 1; }
}

# (no hierarchical lock reads the policy: under yield and spin, wait.c's
# shared path runs for two of them, helpers.bash each_own_wait; park, the
# policy that also checks each release's wake-up, for all six)
@test "end to end under thread:3: exclusion, condvars, trylock and timed locks, every policy" {
  each_algo hier park -- env LOCKSWAP_CLUSTER=thread:3 "$PROGS/exclusion" mixed 6 500 || return 1
  each_own_wait hier yield -- env LOCKSWAP_CLUSTER=thread:3 LOCKSWAP_HIER_FASTPATH=0 "$PROGS/exclusion" mixed 6 @500@ || return 1
  each_own_wait hier spin -- env LOCKSWAP_CLUSTER=thread:3 "$PROGS/exclusion" normal 2 300 || return 1
  each_algo hier -- env LOCKSWAP_CLUSTER=thread:2 "$PROGS/condvar" no-lost-wakeup || return 1
  each_own_wait hier yield -- env LOCKSWAP_CLUSTER=thread:2 "$PROGS/condvar" broadcast-exclusion || return 1
}
