#!/usr/bin/env bats
# Mutexes and condvars in a child after fork(), under every algorithm
# (issue 2, item 4), exactly as glibc 2.36 gives them; and fork() while
# other threads wait (issue 31, tests/progs/fork_waiters.c).
#
# Cost (issue 35): each program takes a list of cases, so one process per
# algorithm runs all of them. Park is every algorithm's policy here; spin
# and yield run only for the algorithms whose own code reads the policy
# (helpers.bash, each_own_wait): elsewhere their waiting path is wait.c's,
# which park shares up to the sleep, and a waiter's state at fork is the
# same (queued, its node or ticket taken), so the fork path is too.
load helpers
TEST_TIMEOUT=20
P="$PROGS/fork"
W="$PROGS/fork_waiters"
# Each child of fork_waiters runs under a watchdog that turns a hang into a
# failure; each waiter is known to wait (asleep, or busy in its lock call)
# before the fork. The mutex cases: 1 and 3 waiters at fork, unlocked in
# the child handler, and 3 after the child's own waiter queued behind them
# (late1 takes the same path with a shorter chain of waiters that are
# gone: run it by hand).
MUTEX_CASES="mutex1 mutex3 late3"
# fork's cases, atfork last (the handlers it registers stay)
P_CASES="held owner busy atfork"
# The rwlock cases: read-held by the forking thread with 1 to 3 writers and
# readers waiting at fork (the writer kind and the default kind), unlocked
# in the child handler or after a child's writer waits; held by another
# thread, it stays held; and the same under NAME+bravo with its bias on
# (a default-kind lock read once: its next reads are fast, a slot of the
# visible readers' table that the inner lock does not count): the
# pthread_atfork pattern itself, the forking thread's fast read with a
# writer waiting (and after a writer revoked the bias), another thread's
# fast read that stays held; another thread's slow read beside the forking
# thread's (fast under NAME+bravo) stays held; a timed writer polling at
# fork (in the mutex-serialised mode's gate, over a mutex without
# timedlock) leaves the lock usable.
RW_CASES="rdheld rdheld1 rdheld3 rdlate rdpref rdother rdatfork rdfast rdfastlate rdrevoked rdfastother rdslowother gate"
gcr_names() { "$LOCKSWAP" --names --wrap gcr; }

@test "glibc passes every fork case, and fork_waiters' mutex, spinlock, rwlock-held-by-another-thread and atfork cases (the specification); its rwlock waits for ever in the child of every case where the forking thread read-held it with waiters" {
  local c out pids=() i
  out=$(timeout "$(hang_timeout)" env FORK_ROUNDS=2 "$P" $P_CASES 2>&1) || { echo "native fork: $out"; return 1; }
  out=$(timeout "$(hang_timeout)" "$W" $MUTEX_CASES held spin1 spin3 rdother rdatfork rdfastother rdslowother 2>&1) ||
    { echo "native fork_waiters: $out"; return 1; }
  # the hangs, each in a process of its own, all at once: their children's
  # 1 s watchdogs run out together, not one after another
  local hangs=(rdheld rdheld1 rdheld3 rdlate rdpref rdfast rdfastlate rdrevoked gate)
  for c in "${hangs[@]}"; do
    timeout "$(hang_timeout)" env FORK_WATCHDOG=1 "$W" "$c" >"$BATS_TEST_TMPDIR/native.$c" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    c=${hangs[i]}
    ! wait "${pids[i]}" && grep -q "the child hung" "$BATS_TEST_TMPDIR/native.$c" ||
      { echo "native $c: $(cat "$BATS_TEST_TMPDIR/native.$c")"; return 1; }
  done
}

@test "mutexes, every algorithm: in the child what the forking thread held is held and can be released, the rest is free, new threads use both; recursive and errorcheck mutexes held at fork belong to the parent's thread (unlock EPERM); the pthread_atfork pattern; forks while other threads lock, unlock and create threads, children and grandchildren using mutexes and condvars" {
  each_algo "" -- env FORK_ROUNDS=1 "$P" $P_CASES || return 1
}

@test "mutexes with waiters at fork, every algorithm under park: the atfork pattern with 1 and 3 waiters queued at fork, unlocked in the child handler or after the child's own waiter queued; a mutex another thread held (a waiter behind it) stays held, the others are free; 3 forks while 4 threads contend (a fork catches threads anywhere in their lock calls; fork_window, below, stops them at the one window that matters)" {
  each_algo "" park -- env FORKS=3 "$W" $MUTEX_CASES held forks || return 1
}

@test "mutexes with waiters at fork, spin and yield, where the algorithm's waiting path is its own: the atfork pattern with 1 waiter, and 3 late ones" {
  each_own_wait "" spin -- "$W" mutex1 late3 || return 1
  each_own_wait "" yield -- "$W" mutex1 late3 || return 1
}

# The wrapper's fork handling is one path whatever the base; what a base
# adds is its own (the tests above). So every composition under park, spin
# over a spinning, a queueing and the adaptive base, and each size of the
# active set over one of a spinning and a queueing base in turn.
@test "NAME+gcr: the atfork pattern with waiters at fork, every composition under park, spin over ttas, mcs and auto; LOCKSWAP_GCR_ACTIVE 1 to 8, odd over ttas and even over mcs: the child's active set counts no thread fork left behind" {
  local a n out
  each_family gcr_names LOCKSWAP_ALGO "" park -- "$W" mutex1 late3 held || return 1
  for a in ttas+gcr mcs+gcr auto+gcr; do
    out=$(under "$a" spin -- "$W" mutex1 mutex3 late3 held 2>&1) || { echo "=== $a (spin): $out"; return 1; }
  done
  for n in 1 2 3 4 5 6 7 8; do
    a=mcs+gcr
    [ $((n % 2)) -eq 1 ] && a=ttas+gcr
    out=$(under "$a" -- env LOCKSWAP_GCR_ACTIVE=$n "$W" mutex1 mutex3 late3 2>&1) ||
      { echo "=== $a, LOCKSWAP_GCR_ACTIVE=$n: $out"; return 1; }
  done
}

# Every rwlock algorithm, wrappers included: each has its own fork path
# (rwlock.h, FORK). The mutex-serialised mode's path is its mutex
# algorithm's (the tests above) under one adapter, with its gate of timed
# writers over a mutex without timedlock: over a queue, a ticket, an
# abortable and a per-thread record lock.
@test "rwlocks: read-held by the forking thread with writers and readers waiting at fork, unlocked in the child handler or after a child's writer waits, then read and written in the child; held by another thread, it stays held; NAME+bravo with its bias on at fork (the atfork pattern, the forking thread's fast read with a writer waiting, another thread's fast read or slow read); a timed writer polling at fork: every rwlock algorithm under park; spin and yield where the waiting path is its own; the mutex-serialised mode over mcs, ticket, clh-try and hemlock" {
  local a out
  each_rwalgo lock park -- "$W" @ARG@ $RW_CASES || return 1
  each_own_wait_rw lock spin -- "$W" rdheld3 rdpref || return 1
  each_own_wait_rw lock yield -- "$W" rdheld3 || return 1
  for a in mcs ticket clh-try hemlock; do
    out=$(under "$a" park -- env LOCKSWAP_RWALGO=mutex "$W" exclusive-ok rdheld rdslowother gate 2>&1) ||
      { echo "=== mutex over $a: $out"; return 1; }
  done
}

# Under the algorithm's own policy a NAME+bravo writer revokes holding the
# inner write lock until the slots are clear: at fork it holds it, waiting
# for the forking thread's fast read, and the child must pass it over
# (rdrevoking knows it is there: another thread's tryrdlock says EBUSY).
# (Under reader preference it waits without the inner lock, but one that
# has only just taken a ticket or the lock is in the same place: rdfast
# above, by chance.) Under mutex+bravo that writer holds the mutex, which
# the mode releases for it (its mark of a write hold), and the path is the
# mutex algorithm's: auto (timedlock) in each_rwalgo, then one without
# timedlock (the mode's gate) of each kind: a ticket, a queue and a
# hierarchical lock, with another thread's slow read (the mutex, which
# stays held) and a timed writer polling at fork.
@test "NAME+bravo, the bias on at fork, under LOCKSWAP_RWPOLICY=algorithm: a writer that waits at fork for the forking thread's fast read holding the inner write lock is passed over in the child, which then writes, reads and writes timed: every composition, park; mutex+bravo over ticket, mcs and hmcs too" {
  local a out
  each_rwalgo wrapper park -- env LOCKSWAP_RWPOLICY=algorithm "$W" rdfast rdfastlate rdrevoking || return 1
  for a in ticket mcs hmcs; do
    out=$(under "$a" park -- env LOCKSWAP_RWALGO=mutex+bravo LOCKSWAP_RWPOLICY=algorithm \
      "$W" exclusive-ok rdfast rdfastlate rdrevoking rdslowother gate 2>&1) ||
      { echo "=== mutex+bravo over $a: $out"; return 1; }
  done
}

@test "spinlocks: 1 and 3 waiters spinning at fork, unlocked in the child handler: every spinlock algorithm, spin and park" {
  local w
  for w in spin park; do
    each_spinalgo "" "$w" -- "$W" spin1 spin3 || return 1
  done
}

# A page a fork would show after 100 forks (90 pages, past the 64 the
# program allows: checked with a page leaked in the prepare handler), and
# pages come from what every algorithm shares (the pool, the shim, fork.h's
# table): 100 forks under mcs. What an algorithm
# keeps per fork is nodes or records, which the parent's count shows at
# once (in use at exit), or past the 8 it may carve: 20 forks under the
# others.
@test "forks while 4 threads contend for the mutex the atfork handlers take (100 under mcs, 20 under clh-try, hemlock and ticket+gcr): no hang, resident memory flat in the parent and the children; the parent's queue nodes all free at exit and no more than its 5 threads need" {
  local a out nodes carved n
  for a in mcs clh-try hemlock ticket+gcr; do
    n=20
    [ "$a" = mcs ] && n=100
    out=$(under "$a" -- env FORKS=$n LOCKSWAP_STATS=1 LOCKSWAP_VERBOSE=1 "$W" forks 2>&1) || { echo "=== $a: $out"; return 1; }
    # the parent's line at exit (a child exits by _exit: no line)
    nodes=$(echo "$out" | grep 'lockswap: nodes in_use=') || { echo "=== $a: no node line: $out"; return 1; }
    carved=${nodes##*carved=}
    [[ "$nodes" == *"in_use=0 "* ]] && [ "$carved" -le 8 ] || { echo "=== $a: $nodes"; return 1; }
  done
}

# Policies as above: every algorithm under park, spin and yield for those
# whose waiting is their own; the spinlock family under each.
@test "fork while a waiter is stopped between the step that made it visible (its node swapped in, its ticket taken) and the next (tests/unit/fork_window): every algorithm under park, spin and yield where the waiting path is its own; the spinlock family; NAME+gcr" {
  local own
  own=$(own_wait_algos | tr '\n' ',' | sed 's/,$//')
  run timeout "$(hang_timeout 120)" "$UNIT/fork_window" -a all -w park -k 1 -W 60
  [ "$status" -eq 0 ] || { echo "$output" | grep -v ': OK'; return 1; }
  run timeout "$(hang_timeout)" "$UNIT/fork_window" -a all -w park -k 0 -W 60
  [ "$status" -eq 0 ] || { echo "$output" | grep -v ': OK'; return 1; }
  run timeout "$(hang_timeout)" "$UNIT/fork_window" -a "$own" -w all -k 1 -W 60
  [ "$status" -eq 0 ] || { echo "$output" | grep -v ': OK'; return 1; }
  run timeout "$(hang_timeout)" "$UNIT/fork_window" -a spin -w all -k 2 -W 60
  [ "$status" -eq 0 ] || { echo "$output" | grep -v ': OK'; return 1; }
  run timeout "$(hang_timeout)" "$UNIT/fork_window" -a "$(gcr_names | tr '\n' ',' | sed 's/,$//')" -w park -k 1 -W 60
  [ "$status" -eq 0 ] || { echo "$output" | grep -v ': OK'; return 1; }
}
