#!/usr/bin/env bats
# lockswap compare (build/lockswap-compare), end to end: the ranking, the
# native check, the statuses that are never times, progress, output. Programs
# that misbehave on purpose run under tests/doubles/lockswap-double, a
# lockswap command whose "algorithms" are the defects of broken.so (nolock:
# no mutual exclusion; condlost: lost wake-ups; sound: glibc). Ranking tests
# use figures a script prints per algorithm, or check only that the table is
# in order: nothing here depends on how fast a lock is.
load helpers

CMP="$B/lockswap-compare"
DOUBLE="$ROOT/tests/doubles/lockswap-double"
STANDIN="$ROOT/tests/splash2-standin"

setup() {
	[ -x "$CMP" ] || skip "build/lockswap-compare not built (make)"
	OUTD="$BATS_TEST_TMPDIR/out"
}

# lc ARGS...: lockswap compare under a timeout (a hang of compare fails the
# test), scaled as every hang detector is (helpers.bash, hang_timeout)
# A run that no assertion of its test reads the plot of passes --no-plot
# (gnuplot's start and PNG were half of such a call's CPU): the plots are
# drawn and checked by the ranking, --load and --report tests, the failing
# statuses' plots by the wrong-output test and splash2-runner.bats.
lc() { timeout -k 5 "$(hang_timeout "${LC_TIMEOUT:-60}")" "$LOCKSWAP" compare "$@"; }
# status_rows ALGO STATUS: CSV rows of ALGO with STATUS
status_rows() { awk -F, -v a="$1" -v s="$2" '$1 == a && $NF == s' "$OUTD/results.csv" | wc -l; }
# summary_col ALGO COLUMN: the value of COLUMN in ALGO's summary.csv row
summary_col() {
	awk -F, -v a="$1" -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["algorithm"] == a { print $c[col] }' \
		"$OUTD/summary.csv"
}
# table_algos: the algorithm column of summary.txt, top to bottom
table_algos() { awk 'NR > 1 && $0 == "" { exit } NR > 1 { print $2 }' "$OUTD/summary.txt"; }
# a script printing "score: N", N chosen by the algorithm it runs under
score_prog() {
	cat >"$BATS_TEST_TMPDIR/score" <<'EOF'
#!/bin/sh
case ${LOCKSWAP_ALGO:-native} in
native) echo "score: 100" ;;
tas) echo "some text, score: 300 units" ;;
pthread) echo "score 200" ;;
mcs) echo "score: 50" ;;
esac
EOF
	chmod +x "$BATS_TEST_TMPDIR/score"
	echo "$BATS_TEST_TMPDIR/score"
}

@test "--help describes the command, its options and the statuses" {
	run lc --help
	assert_success
	assert_output --partial "usage: lockswap compare [options] -- PROG [ARGS...]"
	for o in --algos --wait --reps --load --metric --higher-is-better --check --timeout --hang --no-skip --out --spread \
		--dry-run --report; do
		assert_output --partial -- "$o"
	done
	for s in over-limit hang crash: wrong-output no-output no-metric skipped; do assert_output --partial "$s"; done
}

@test "bad options: one line naming the problem and the valid choices, exit 2; --per-lock's bad uses too" {
	local args msg
	while IFS='|' read -r args msg; do
		# shellcheck disable=SC2086
		run lc $args
		[ "$status" -eq 2 ] || { echo "$args: status $status: $output"; return 1; }
		[ "$output" = "lockswap compare: $msg" ] || { echo "$args: got: $output"; echo "wanted: lockswap compare: $msg"; return 1; }
	done <<EOF
--reps 0 -- true|--reps: '0' is not a positive integer
--timeout soon -- true|--timeout: 'soon' is not a positive number of seconds
--hang 0 -- true|--hang: '0' is not a positive number of seconds
--load two -- true|--load: 'two' is not a number of processes (0, 1, 2...)
--wait sometimes -- true|--wait: unknown policy 'sometimes' (valid: spin, yield, park, default)
--algos nosuchlock -- true|--algos: unknown algorithm 'nosuchlock' (valid: glibc, $(algos | paste -sd, | sed 's/,/, /g'), all, locks)
--algos tas/never -- true|--algos: unknown wait policy 'never' in 'tas/never' (valid: spin, yield, park, default)
--higher-is-better -- true|--higher-is-better needs --metric
--metric a( -- true|--metric: 'a(' is not a valid extended regular expression
--spread 0.5 -- true|--spread: '0.5' is not a number >= 1
--check /tmp -- true|--check: '/tmp' is a folder (give a file the program writes, or stdout)
--frobnicate|unknown option '--frobnicate' (see --help)
--reps|--reps needs a value (see --help)
true|'true': give the program after -- (lockswap compare [options] -- PROG [ARGS...])
--reps 2|no program to run (lockswap compare [options] -- PROG [ARGS...])
-- /no/such/prog|cannot run '/no/such/prog': no such program
--lockswap /nonexistent -- true|--lockswap: '/nonexistent' is not an executable file
EOF
	mkdir -p "$OUTD"
	touch "$OUTD/results.csv"
	run lc --algos tas --out "$OUTD" -- true
	assert_failure 2
	assert_output "lockswap compare: --out: '$OUTD' already holds a results.csv (choose another folder)"
	# --per-lock's
	run lc --rest ttas -- true
	assert_failure 2
	assert_output "lockswap compare: --rest is only meaningful with --per-lock"
	run lc --per-lock foo --per-lock-top 2 -- true
	assert_output "lockswap compare: --per-lock-top is only meaningful with --per-lock auto"
	run lc --per-lock 'foo=mcs' -- true
	assert_failure 2
	assert_output "lockswap compare: --per-lock: 'foo=mcs' is not a pattern of a rule (FUNCTION, FILE:LINE, MODULE, MODULE+0xOFFSET)"
}

@test "the dry run shows glibc natively and every algorithm through lockswap, repetitions interleaved; a name lockswap runs but does not list (a wrapper, NAME+gcr) is passed to lockswap -a as it is; one it refuses is unknown" {
	run lc --algos pthread,tas/yield --reps 2 --dry-run -- "$PROGS/hello" a b
	assert_success
	assert_line --index 0 "# lockswap compare dry run: 6 runs (3 algorithms, 1 load settings, 2 repetitions)"
	assert_line --index 2 "cd $PWD && $PROGS/hello a b"
	assert_line --index 3 "# glibc wait=- rep 1/2, 0 load processes"
	assert_line --index 4 "cd $PWD && $PROGS/hello a b"
	assert_line --index 6 "cd $PWD && $LOCKSWAP -a pthread -- $PROGS/hello a b"
	assert_line --index 8 "cd $PWD && $LOCKSWAP -a tas -w yield -- $PROGS/hello a b"
	assert_line --index 9 "# glibc wait=- rep 2/2, 0 load processes"
	run lc --dry-run -- true
	for a in $(algos); do assert_output --partial "$LOCKSWAP -a $a -- "; done
	# a wrapper's compositions
	local a
	a=$(algos lock | head -n 1)
	"$LOCKSWAP" -a "$a+gcr" -- true 2>/dev/null || skip "this lockswap has no +gcr wrapper"
	run lc --algos "$a+gcr/yield,$a+gcr" --reps 1 --dry-run -- true
	assert_success
	assert_line "cd $PWD && $LOCKSWAP -a $a+gcr -w yield -- true"
	assert_line "cd $PWD && $LOCKSWAP -a $a+gcr -- true"
	run lc --algos "$a+nosuch" --dry-run -- true
	assert_failure 2
	assert_output --partial "lockswap compare: --algos: unknown algorithm '$a+nosuch' (valid: glibc, "
}

@test "--rwalgos sweeps the rwlock algorithms: each with the --algos ones (glibc's own mutex by default) as lockswap -a ALGO -r RWALGO, an rwalgo column in results.csv, the table and --report; an unknown name is one line, exit 2" {
	run lc --rwalgos central,pf-t --reps 1 --dry-run -- true
	assert_success
	assert_line "cd $PWD && $LOCKSWAP -a pthread -r central -- true"
	assert_line "cd $PWD && $LOCKSWAP -a pthread -r pf-t -- true"
	run lc --rwalgos all --algos tas --reps 1 --dry-run -- true
	assert_success
	for a in $(rwalgos); do assert_line "cd $PWD && $LOCKSWAP -a tas -r $a -- true"; done
	run lc --rwalgos nosuch -- true
	assert_failure 2
	assert_output "lockswap compare: --rwalgos: unknown rwlock algorithm 'nosuch' (valid: $(rwalgos | paste -sd, | sed 's/,/, /g'), all, locks)"
	# a figure chosen by the rwlock algorithm the program runs under
	cat >"$BATS_TEST_TMPDIR/rwscore" <<'EOF'
#!/bin/sh
case ${LOCKSWAP_RWALGO:-native} in native) echo "score: 100" ;; central) echo "score: 300" ;; *) echo "score: 50" ;; esac
EOF
	chmod +x "$BATS_TEST_TMPDIR/rwscore"
	run lc --no-plot --rwalgos central,pf-t --reps 1 --metric 'score:?' --higher-is-better --out "$OUTD" -q -- "$BATS_TEST_TMPDIR/rwscore"
	assert_success
	[ "$(head -n 1 "$OUTD/results.csv")" = "algorithm,wait,rwalgo,load,rep,wall_s,user_s,sys_s,metric,status" ]
	grep -qx 'pthread,default,central,0,1,[0-9.]*,[0-9.]*,[0-9.]*,300,ok' "$OUTD/results.csv"
	assert_line --regexp '^ +1 +pthread +default +central +1/1 +300 +300 +300 +3\.000 '
	assert_line --regexp '^ +3 +pthread +default +pf-t +1/1 +50 '
	rm "$OUTD/summary.txt" "$OUTD/summary.csv"
	run lc --report "$OUTD"
	assert_success
	assert_line --index 0 --regexp '^rank +algorithm +wait +rwalgo +ok +median'
	assert_line --index 1 --regexp '^ +1 +pthread +default +central '
}

@test "ranking by a printed figure: best first, ratio to glibc, both directions" {
	local prog
	prog=$(score_prog)
	run lc --algos tas,mcs,pthread --reps 2 --metric 'score:?' --higher-is-better --out "$OUTD" -q -- "$prog"
	assert_success
	[ "$(table_algos | tr '\n' ' ')" = "tas pthread glibc mcs " ] || { cat "$OUTD/summary.txt"; return 1; }
	assert_line --regexp '^ +1 +tas +default +2/2 +300 +300 +300 +3\.000 +~ +1\.00$'
	assert_line --regexp '^ +3 +glibc +- +2/2 +100 +100 +100 +1\.000 +1\.00$'
	assert_line --regexp '^ +4 +mcs +default +2/2 +50 +50 +50 +0\.500 +~ +1\.00$'
	[ "$(head -n 1 "$OUTD/results.csv")" = "algorithm,wait,load,rep,wall_s,user_s,sys_s,metric,status" ]
	grep -qx 'tas,default,0,2,[0-9.]*,[0-9.]*,[0-9.]*,300,ok' "$OUTD/results.csv"
	[ "$(head -c 8 "$OUTD/plots/compare.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ]
	run lc --no-plot --algos tas,mcs,pthread --reps 1 --metric 'score:?' --out "$OUTD-2" -q -- "$prog"
	assert_success
	OUTD=$OUTD-2
	[ "$(table_algos | tr '\n' ' ')" = "mcs glibc pthread tas " ]
	[ "$(summary_col mcs rank)" = 1 ]
}

@test "a wrong output under a broken lock is wrong-output, kept, and never ranked or timed" {
	run lc --lockswap "$DOUBLE" --algos nolock,sound --reps 2 --check stdout --out "$OUTD" -q -- "$PROGS/compare_prog" held
	assert_success
	[ "$(status_rows glibc ok)" -eq 2 ]
	[ "$(status_rows sound ok)" -eq 2 ]
	[ "$(status_rows nolock wrong-output)" -eq 2 ]
	grep -qx 'nolock,default,0,[12],,,,wrong-output' "$OUTD/results.csv"
	assert_line --regexp '^ +- +nolock +default +0/2 +- +- +- +- +- +2 wrong-output$'
	[ "$(table_algos | tail -n 1)" = nolock ]
	grep -qx "trylock of a held mutex: EBUSY" "$OUTD/reference/stdout"
	grep -qx "trylock of a held mutex: acquired" "$OUTD/wrong-outputs/nolock-default-r1/stdout"
	assert_output --partial "output: stdout of every run compared with the native reference run's"
}

@test "a run that hangs under a broken lock is a hang, found long before the time limit, without stray errors" {
	# (found before the limit: a run the limit stopped would be over-limit, not hang)
	lc --no-plot --lockswap "$DOUBLE" --algos condlost,sound --reps 2 --check stdout --hang 1 --timeout 100 --out "$OUTD" -q \
		-- "$PROGS/compare_prog" handoff >"$BATS_TEST_TMPDIR/stdout" 2>"$BATS_TEST_TMPDIR/stderr"
	[ "$(status_rows condlost hang)" -eq 1 ]
	[ "$(status_rows condlost skipped)" -eq 1 ]
	[ "$(status_rows sound ok)" -eq 2 ]
	grep -qE '^ +- +condlost +default +0/2 +- +- +- +- +- +1 hang; 1 skipped$' "$BATS_TEST_TMPDIR/stdout"
	# nothing on stderr but what the user asked for (-q: nothing)
	[ ! -s "$BATS_TEST_TMPDIR/stderr" ] || { cat "$BATS_TEST_TMPDIR/stderr"; return 1; }
	# and no process is left (of this tree: other suites may run beside it)
	[ -z "$(pgrep -f "$PROGS/compare_prog handoff" || true)" ]
}

@test "a slow run is over-limit with its elapsed time as a lower bound; --no-skip runs the other repetitions" {
	cat >"$BATS_TEST_TMPDIR/slow" <<'EOF'
#!/bin/bash
[ "${LOCKSWAP_ALGO:-}" != tas ] || while :; do :; done
echo done
EOF
	chmod +x "$BATS_TEST_TMPDIR/slow"
	# (skipping after over-limit, the default, is shown by the hang test and in splash2-runner.bats)
	run lc --no-plot --algos tas,pthread --reps 2 --timeout 1 --no-skip --out "$OUTD" -q -- "$BATS_TEST_TMPDIR/slow"
	assert_success
	[ "$(status_rows tas over-limit)" -eq 2 ]
	[ "$(status_rows pthread ok)" -eq 2 ]
	# its times are kept: wall time at least the limit, and CPU times
	grep -qE '^tas,default,0,1,(1\.[0-9]{3}|[2-9]\.[0-9]{3}),[0-9]+\.[0-9]{3},[0-9]+\.[0-9]{3},over-limit$' "$OUTD/results.csv"
	assert_line --regexp '^ +3 +tas +default +0/2 +>[1-9]\.[0-9]{3} +>[1-9]\.[0-9]{3} +>[1-9]\.[0-9]{3} +>[0-9.]+ +~ +[0-9.]+ +2 over-limit$'
	assert_output --partial ">: a lower bound (the run was stopped at its time limit: over-limit)"
}

@test "a program that sleeps but keeps writing is making progress, not hung" {
	cat >"$BATS_TEST_TMPDIR/chatty" <<'EOF'
#!/bin/bash
for i in 1 2 3 4 5 6 7 8 9 10; do echo "step $i"; sleep 0.25; done
EOF
	chmod +x "$BATS_TEST_TMPDIR/chatty"
	# 2.5 s without CPU time or a runnable thread, but with output every 0.25 s
	run lc --no-plot --algos glibc --reps 1 --hang 2 --out "$OUTD" -q -- "$BATS_TEST_TMPDIR/chatty"
	assert_success
	[ "$(status_rows glibc ok)" -eq 1 ]
}

@test "progress on stderr: the number of runs and an estimate first, then runs done, elapsed, time left" {
	run lc --algos tas --reps 2 --out "$OUTD" -- "$PROGS/hello"
	assert_success
	assert_line --regexp "^lockswap compare: 4 runs \(2 algorithms x 1 configurations x 2 repetitions\), about [0-9]+s if each takes as long as its reference run; results in $OUTD$"
	assert_line --regexp '^lockswap compare: \[1/4\] glibc rep 1: [0-9.]+ s ok; [0-9]+s elapsed, about [0-9]+s left$'
	assert_line --regexp '^lockswap compare: \[4/4\] tas rep 2: [0-9.]+ s ok; '
	assert_line "lockswap compare: 4 runs, 0 not ok; results in $OUTD (results.csv, summary.txt, plots/)"
	assert_output --partial "output: not checked (no --check)"
}

@test "--check FILE compares a file the program writes; a run that does not write it is no-output" {
	cat >"$BATS_TEST_TMPDIR/writer" <<'EOF'
#!/bin/bash
[ "${LOCKSWAP_ALGO:-}" = mcs ] && exit 0
[ "${LOCKSWAP_ALGO:-}" = tas ] && { echo other >result.txt; exit 0; }
echo same >result.txt
EOF
	chmod +x "$BATS_TEST_TMPDIR/writer"
	cd "$BATS_TEST_TMPDIR"
	echo stale >result.txt
	run lc --no-plot --algos tas,mcs,pthread --reps 1 --check result.txt --out "$OUTD" -q -- ./writer
	assert_success
	[ "$(status_rows pthread ok)" -eq 1 ]
	[ "$(status_rows tas wrong-output)" -eq 1 ]
	[ "$(status_rows mcs no-output)" -eq 1 ]
	[ "$(cat "$OUTD/reference/result.txt")" = same ]
	[ "$(cat "$OUTD/wrong-outputs/tas-default-r1/result.txt")" = other ]
	assert_output --partial "output: result.txt compared with the one the native reference run wrote"
}

@test "a failing reference run stops everything with exit 1, naming it" {
	run lc --algos tas --out "$OUTD" -q -- "$PROGS/compare_prog" nosuchmode
	assert_failure 1
	assert_output "lockswap compare: reference run of $PROGS/compare_prog nosuchmode (native) failed: exit:2; see $OUTD/logs/reference.{out,err}"
	run lc --algos tas --metric 'throughput' --out "$OUTD-2" -q -- "$PROGS/hello"
	assert_failure 1
	assert_output --partial "lockswap compare: --metric: /throughput/ finds no number in the output of the reference run"
}

@test "--load N runs N spinning processes beside every run, and none outlives it" {
	cat >"$BATS_TEST_TMPDIR/count" <<EOF
#!/bin/bash
echo "load: \$(pgrep -fc 'lockswap-load\[$OUTD\]')"
EOF
	chmod +x "$BATS_TEST_TMPDIR/count"
	run lc --algos pthread --reps 1 --load 0,2 --metric 'load:' --out "$OUTD" -q -- "$BATS_TEST_TMPDIR/count"
	assert_success
	grep -qx 'glibc,-,0,1,[0-9.,]*,0,ok' "$OUTD/results.csv"
	grep -qx 'pthread,default,2,1,[0-9.,]*,2,ok' "$OUTD/results.csv"
	# two configurations: a load column in the table, and a line plot
	assert_line --regexp '^load +rank +algorithm'
	grep -q 'with yerrorlines' "$OUTD/plots/compare.gp"
	[ -z "$(pgrep -f "lockswap-load\[$OUTD\]" || true)" ]
}

@test "by default results go outside the current tree, and the last line says where" {
	local repo="$BATS_TEST_TMPDIR/repo"
	mkdir -p "$repo"
	git -C "$repo" init -q
	cd "$repo"
	XDG_DATA_HOME="$BATS_TEST_TMPDIR/data" run lc --algos tas --reps 1 -q -- "$PROGS/hello"
	assert_success
	[ -z "$(git -C "$repo" status --porcelain)" ]
	local out
	out=$(ls -d "$BATS_TEST_TMPDIR"/data/lockswap/compare-hello-*)
	[ -f "$out/results.csv" ]
	assert_line "lockswap compare: 2 runs, 0 not ok; results in $out (results.csv, summary.txt, plots/)"
	# LOCKSWAP_RESULTS, exported as a user has it, reaches every run's library too: no run fails for it
	LOCKSWAP_RESULTS="$BATS_TEST_TMPDIR/mine" run lc --algos tas --reps 1 -q -- "$PROGS/hello"
	assert_success
	out=$(ls -d "$BATS_TEST_TMPDIR"/mine/compare-hello-*)
	[ -f "$out/results.csv" ]
	assert_line "lockswap compare: 2 runs, 0 not ok; results in $out (results.csv, summary.txt, plots/)"
}

@test "on the SPLASH-2 stand-in: every run's image equals the native one, and the table is in rank order" {
	local tree="$BATS_TEST_TMPDIR/tree" names
	cp -r "$STANDIN" "$tree"
	make -s -C "$tree/codes/apps/raytrace" >/dev/null
	cd "$tree/codes/apps/raytrace"
	sed 's/^rlfile .*/rlfile out/; s/^resolution .*/resolution 48 48/' inputs/car.env >car48.env
	names="pthread,$(algos lock | head -n 3 | paste -sd,)"
	run lc --no-plot --algos "$names" --reps 2 --check out.ppm --out "$OUTD" -q -- ./RAYTRACE -p2 -m1 car48.env
	assert_success
	[ "$(awk -F, 'NR > 1 && $NF == "ok"' "$OUTD/results.csv" | wc -l)" -eq 10 ] || { cat "$OUTD/results.csv"; return 1; }
	[ "$(head -c 9 "$OUTD/reference/out.ppm")" = "$(printf 'P6\n48 48')" ]
	# ranks 1..5 top to bottom, medians in increasing order, glibc's ratio 1
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ if ($c["rank"] != NR - 1 || $c["median_s"] + 0 < prev) exit 1; prev = $c["median_s"] }' "$OUTD/summary.csv"
	[ "$(summary_col glibc ratio_glibc)" = 1.000 ]
}

@test "on lockbench: ranked by throughput, highest first; a lock that does not exclude fails lockbench's check" {
	[ -x "$B/lockbench" ] || skip "build/lockbench not built"
	run lc --no-plot --algos "$(algos lock | head -n 2 | paste -sd,)" --reps 2 --metric throughput --higher-is-better \
		--out "$OUTD" -q -- "$B/lockbench" -t 2 -d 0.05
	assert_success
	[ "$(awk -F, 'NR > 1 && $NF == "ok"' "$OUTD/results.csv" | wc -l)" -eq 6 ]
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["algorithm"] == "glibc" { g = $c["median"] }
		{ m[NR] = $c["median"]; r[NR] = $c["ratio_glibc"]; if (NR > 2 && m[NR] > m[NR - 1]) exit 1 }
		END { for (i = 2; i <= NR; i++) { d = m[i] / g - r[i]; if (d > 0.001 || d < -0.001) exit 1 } }' "$OUTD/summary.csv"
	run lc --no-plot --lockswap "$DOUBLE" --algos nolock,sound --reps 1 --metric throughput --higher-is-better --out "$OUTD-2" -q \
		-- "$B/lockbench" -t 4 -d 0.2 -c 64 -N 0
	assert_success
	OUTD=$OUTD-2
	# (4 threads in critical sections of 64 cache lines, 0.2 s: without a lock
	# they overlap, in parallel or by preemption, as in tests/lockbench.bats;
	# lockbench stops at the first overlap: 30 of 30 runs at 0.2 s did, 10 of
	# them on one CPU shared with a busy loop. The glibc and sound runs, which
	# last the whole 0.2 s on 4 threads, are what the duration costs)
	[ "$(status_rows nolock exit:3)" -eq 1 ] || { cat "$OUTD/results.csv" "$OUTD"/logs/nolock*; return 1; }
	[ "$(status_rows sound ok)" -eq 1 ]
	grep -q "lockbench: mutual exclusion violated" "$OUTD/logs/nolock-default-r1.err"
}

@test "--report recomputes the table and plot from results.csv" {
	local prog
	prog=$(score_prog)
	lc --algos tas,mcs --reps 1 --metric 'score:?' --higher-is-better --out "$OUTD" -q -- "$prog" >/dev/null
	rm "$OUTD/summary.txt" "$OUTD/summary.csv" "$OUTD/plots/compare.png"
	run lc --report "$OUTD"
	assert_success
	assert_line --index 0 --regexp '^rank +algorithm +wait +ok +median +min +max +x_glibc +vs glibc +spread +not ok$'
	assert_line --index 1 --regexp '^ +1 +tas '
	[ -s "$OUTD/plots/compare.png" ]
}

@test "--per-lock: each algorithm runs on the named mutexes only (lockswap -m PATTERN=ALGO,*=REST), and the best map is printed" {
	run lc -n --per-lock init_lock0 --rest ttas --algos tas,mcs --reps 1 -- "$B/lockbench" -t 2 -k 4 --skew 0.9 -d 0.1
	assert_success
	assert_line --partial "/lockswap -a tas -m 'init_lock0=tas,*=ttas' -- $B/lockbench"
	assert_line --partial "/lockswap -a mcs -m 'init_lock0=mcs,*=ttas' -- $B/lockbench"
	# auto: the contended mutexes' patterns from a profile; the runs really
	# run under the maps (the verbose report of each run names the rules)
	# (algo_map timeouts: every mutex contended, whatever the timing)
	run lc --no-plot --per-lock auto --per-lock-top 8 --algos mcs,tas --reps 1 --out "$OUTD" -- \
		env LOCKSWAP_VERBOSE=1 "$PROGS/algo_map" timeouts
	assert_success
	# named the best only if its runs beat glibc's (timing: either line)
	assert_line --regexp "^lockswap compare: (best map: LOCKSWAP_ALGO_MAP='make_(hot|cold)=(mcs|tas),make_(hot|cold)=(mcs|tas),\\*=pthread' \\([0-9.]+ x glibc; better than glibc: |per lock: no map beats glibc beyond the spread: the best median, LOCKSWAP_ALGO_MAP='make_(hot|cold)=(mcs|tas),make_(hot|cold)=(mcs|tas),\\*=pthread', is [0-9.]+ x glibc \\()"
	grep -q "^lockswap: map: rule 'make_hot=mcs': 3 mutexes -> mcs" "$OUTD"/logs/mcs* || { ls "$OUTD/logs"; cat "$OUTD"/logs/mcs*; false; }
	grep -q "^lockswap: map: rule 'make_cold=tas': 5 mutexes -> tas" "$OUTD"/logs/tas*
	grep -q "LOCKSWAP_ALGO_MAP='make_" "$OUTD/summary.txt"
	grep -q "^per lock: each algorithm ALGO ran as LOCKSWAP_ALGO_MAP=" "$OUTD/meta.txt"
}

# verdict_prog: a script printing "score: N", N the next of a list its
# algorithm (LOCKSWAP_ALGO, which lockswap sets, with --per-lock too) gives:
# one value per run, in turn (a counter file per algorithm)
verdict_prog() {
	cat >"$BATS_TEST_TMPDIR/verdict" <<'EOF'
#!/bin/bash
key=${LOCKSWAP_ALGO:-native}
case $key in
native) set -- 100 101 102 ;;
tas) set -- 50 51 52 ;;       # every run below glibc's
mcs) set -- 40 200 60 ;;      # one run above glibc's, two below
pthread) set -- 150 151 152 ;; # every run above glibc's
esac
n=$(cat "$0.$key" 2>/dev/null || echo 0)
echo $((n + 1)) >"$0.$key"
shift $((n % 3))
echo "score: $1"
EOF
	chmod +x "$BATS_TEST_TMPDIR/verdict"
	echo "$BATS_TEST_TMPDIR/verdict"
}

@test "better or worse than glibc only when the runs separate (one-sided Mann-Whitney U, p <= 0.05), else ~, with p in summary.csv; more repetitions asked for when runs spread widely or are too few" {
	local prog
	prog=$(verdict_prog)
	run lc --no-plot --algos tas,mcs,pthread --reps 3 --metric 'score' --out "$OUTD" -q -- "$prog"
	assert_success
	[ "$(summary_col tas vs_glibc) $(summary_col tas p_glibc)" = "better 0.050" ]
	# mcs's median (60) is below glibc's (101), but one of its runs is above every one of glibc's
	[ "$(summary_col mcs rank) $(summary_col mcs vs_glibc)" = "2 ~" ] || { cat "$OUTD/summary.txt"; return 1; }
	[ "$(summary_col pthread vs_glibc)" = worse ]
	[ "$(summary_col glibc vs_glibc)" = "" ]
	assert_line --index 0 --regexp '^rank +algorithm +wait +ok +median +min +max +x_glibc +vs glibc +spread +not ok$'
	assert_line --regexp '^ +1 +tas +default +3/3 +51 +50 +52 +0\.505 +better +1\.04$'
	assert_line --regexp '^ +2 +mcs +default +3/3 +60 +40 +200 +0\.594 +~ +5\.00!$'
	assert_line "vs glibc: better or worse only where its runs separate from glibc's (one-sided Mann-Whitney U test, p <= 0.05; p_glibc in summary.csv); ~: no difference beyond the spread"
	assert_line "more repetitions needed: 1 cell at ~ or glibc spread more than 1.5x (up to 5.00): run --reps 10 or more to tell them apart"
	# 2 runs each: nothing can be told apart
	rm -f "$prog".*
	run lc --no-plot --algos tas --reps 2 --metric 'score' --out "$OUTD.2" -q -- "$prog"
	assert_success
	assert_line --regexp '^ +1 +tas +default +2/2 .* +~ +'
	assert_line "more repetitions needed: with 2 runs of a cell no difference can reach p <= 0.05 (3 runs each at least, every run of one beyond every run of the other): run --reps 5 or more"
}

@test "--per-lock names a best map only if its runs beat glibc's; else it says no map does, with the numbers, and asks for more repetitions" {
	local prog
	prog=$(verdict_prog)
	run lc --no-plot --per-lock make_hot --algos mcs,tas --reps 3 --metric 'score' --out "$OUTD" -q -- "$prog"
	assert_success
	assert_line --regexp "^lockswap compare: best map: LOCKSWAP_ALGO_MAP='make_hot=tas,\\*=pthread' \\(0\\.505 x glibc; better than glibc: its 3 runs 50-52, glibc's 3 100-102; one-sided Mann-Whitney U p = 0\\.050\\)$"
	rm -f "$prog".*
	run lc --no-plot --per-lock make_hot --algos mcs --reps 3 --metric 'score' --out "$OUTD.2" -q -- "$prog"
	assert_success
	assert_line "lockswap compare: per lock: no map beats glibc beyond the spread: the best median, LOCKSWAP_ALGO_MAP='make_hot=mcs,*=pthread', is 0.594 x glibc (its 3 runs 40-200, glibc's 3 100-102; one-sided Mann-Whitney U p = 0.350)"
	assert_line "lockswap compare: per lock: more repetitions needed: 1 cell at ~ or glibc spread more than 1.5x (up to 5.00): run --reps 10 or more to tell them apart"
	[ "$(grep -c 'per lock:' "$OUTD.2/summary.txt")" -eq 2 ]
	[[ "$output" != *"best map"* ]] || { echo "$output"; return 1; }
}
