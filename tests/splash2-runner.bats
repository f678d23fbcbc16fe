#!/usr/bin/env bats
# splash2-runner/splash2-run, end to end, against tests/splash2-standin: a tiny
# Splash-3-shaped tree of our own (the real suite is never needed). The stand-in
# apps misbehave on request (STANDIN_HANG, _SPIN, _CRASH, _FAIL, _WRONG_IMAGE,
# _NO_IMAGE: the thread count at which to do it), so each detection is shown to
# work. Runs use glibc natively unless the test is about lockswap; those skip
# when build/liblockswap.so is absent. Every runner call is under a timeout.
load helpers

RUNNER="$ROOT/splash2-runner/splash2-run"
STANDIN="$ROOT/tests/splash2-standin"

setup_file() {
	# One built copy shared by the tests that do not test building.
	TREE="$BATS_FILE_TMPDIR/tree"
	cp -r "$STANDIN" "$TREE"
	make -s -C "$TREE/codes/apps/raytrace" >/dev/null
	make -s -C "$TREE/codes/apps/barnes" >/dev/null
	export TREE
}

setup() {
	OUTD="$BATS_TEST_TMPDIR/out"
	unset SPLASH2_DIR SPLASH2_LOCKSWAP
}

# s2 ARGS...: the runner under a timeout (a hang of the runner fails the test).
s2() { timeout -k 5 "${S2_TIMEOUT:-90}" "$RUNNER" "$@"; }
# s2g ARGS...: the shared tree, glibc only, small inputs, output in $OUTD.
# A run whose plots no assertion of its test reads passes --no-plot (gnuplot
# was half of such a call's CPU): the plots are checked by the glibc matrix
# and the --report tests, and drawn for every failing status by the crash
# matrix (a plot that fails fails its exit status and last line).
s2g() { s2 --splash2 "$TREE" --algos glibc --ray-res 32 --barnes-bodies 200 --out "$OUTD" -q "$@"; }
fresh_tree() {
	cp -r "$STANDIN" "$BATS_TEST_TMPDIR/fresh"
	echo "$BATS_TEST_TMPDIR/fresh"
}
# rows APP THREADS LOAD STATUS: number of CSV rows with these fields
rows() {
	awk -F, -v a="$1" -v t="$2" -v l="$3" -v s="$4" '$1 == a && $5 == t && $6 == l && $11 == s' "$OUTD/results.csv" | wc -l
}
need_lockswap() {
	[ -f "$LIB" ] && [ -x "$LOCKSWAP" ] || skip "build/liblockswap.so or build/lockswap not built (run make)"
}
# procs_with TEXT: pids of processes whose command line holds TEXT
procs_with() { pgrep -f -- "$(sed 's/[][\\.*^$+?(){}|]/\\&/g' <<<"$1")" || true; }
# procs_in DIR: pids of processes whose working directory is DIR
procs_in() { find /proc -mindepth 2 -maxdepth 2 -name cwd -lname "$1" 2>/dev/null | cut -d/ -f3; }
some_with() { [ -n "$(procs_with "$1")" ]; }
none_with() { [ -z "$(procs_with "$1")" ]; }
some_in() { [ -n "$(procs_in "$1")" ]; }
none_in() { [ -z "$(procs_in "$1")" ]; }
# gone PID...: none of them is alive (a zombie is gone: it holds no CPU, no
# folder); read by the shell itself, a cheap poll where procs_in scans all
# of /proc
gone() {
	local p st
	for p; do
		{ read -r st <"/proc/$p/stat"; } 2>/dev/null || continue
		st=${st##*) }
		[ "${st%% *}" = Z ] || return 1
	done
}
# wait_for SECONDS CMD...: poll until CMD succeeds, every 0.1 s (every
# WAIT_STEP s); fail after SECONDS
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep "${WAIT_STEP:-0.1}"
	done
}

@test "--help describes the command, its options and the run statuses" {
	run s2 --help
	assert_success
	assert_output --partial "usage: splash2-run --splash2 DIR"
	for o in --algos --configs --fill --reps --ray-scene --ray-res --barnes-bodies --timeout --hang --dry-run --report; do
		assert_output --partial -- "$o"
	done
	assert_output --partial "wrong-image"
}

@test "without a checkout: one line saying how to give one, exit 2; a checkout that does not exist, or is not Splash-3-shaped, is named; SPLASH2_DIR gives the checkout; its codes/ folder is accepted too" {
	run s2 --algos glibc
	assert_failure 2
	assert_output "splash2-run: no SPLASH-2 checkout: give --splash2 DIR or set SPLASH2_DIR (a Splash-3 checkout; see splash2-runner/README.md)"
	run s2 --algos glibc --splash2 "$BATS_TEST_TMPDIR/nothere"
	assert_failure 2
	assert_output "splash2-run: SPLASH-2 checkout '$BATS_TEST_TMPDIR/nothere' does not exist"
	mkdir "$BATS_TEST_TMPDIR/empty"
	run s2 --algos glibc --splash2 "$BATS_TEST_TMPDIR/empty"
	assert_failure 2
	assert_output "splash2-run: '$BATS_TEST_TMPDIR/empty' is not a Splash-3 checkout: it has no codes/apps/ folder"
	SPLASH2_DIR="$TREE" run s2 --algos glibc --dry-run
	assert_success
	assert_output --partial "cd $TREE/codes/apps/raytrace && ./RAYTRACE -p1"
	run s2 --algos glibc --dry-run --splash2 "$TREE/codes"
	assert_success
	assert_output --partial "cd $TREE/codes/apps/barnes && ./BARNES <"
}

@test "missing m4 is reported before building anything; a missing compiler is named as codes/Makefile.config names it; a build failure shows make's error and exits 1" {
	local fresh bin
	fresh=$(fresh_tree)
	bin="$BATS_TEST_TMPDIR/bin"
	mkdir "$bin"
	ln -s /usr/bin/* "$bin/" 2>/dev/null || true
	rm -f "$bin/m4"
	PATH="$bin" run s2 --splash2 "$fresh" --algos glibc
	assert_failure 2
	assert_output --partial "m4 not found ('m4', M4 in $fresh/codes/Makefile.config)"
	[ ${#lines[@]} -eq 1 ]
	[ ! -e "$fresh/codes/apps/raytrace/RAYTRACE" ]
	# (each case on a fresh copy of the stand-in)
	rm -rf "$fresh"
	fresh=$(fresh_tree)
	sed -i 's/^CC := gcc$/CC := nosuch-gcc/' "$fresh/codes/Makefile.config"
	run s2 --splash2 "$fresh" --algos glibc
	assert_failure 2
	assert_output "splash2-run: C compiler 'nosuch-gcc' not found (CC in $fresh/codes/Makefile.config): install it (Debian: apt-get install gcc) or set CC there"
	rm -rf "$fresh"
	fresh=$(fresh_tree)
	echo '#error standin-broken-on-purpose' >>"$fresh/codes/apps/barnes/barnes.c.in"
	run s2 --splash2 "$fresh" --algos glibc --out "$OUTD" -q
	assert_failure 1
	assert_output --partial "standin-broken-on-purpose"
	assert_output --partial "splash2-run: building barnes failed (make -C $fresh/codes/apps/barnes); full log: $OUTD/build.log"
}

@test "both apps are built in the checkout once, then reused; --no-build needs them built; by default results go outside the checkout and the current tree: git status stays clean" {
	local fresh r1 b1 out
	fresh=$(fresh_tree)
	git -C "$fresh" init -q
	git -C "$fresh" add -A
	git -C "$fresh" -c user.name=t -c user.email=t@t commit -qm standin
	run s2 --splash2 "$fresh" --algos glibc --no-build --dry-run
	assert_success
	run s2 --splash2 "$fresh" --algos glibc --no-build --out "$OUTD"
	assert_failure 2
	assert_output "splash2-run: --no-build: $fresh/codes/apps/raytrace/RAYTRACE is not built"
	# the first run builds, in the checkout, with no --out
	(cd "$fresh" && XDG_DATA_HOME="$BATS_TEST_TMPDIR/data" s2 --splash2 . --algos glibc --configs 1 --reps 1 --ray-res 16 --barnes-bodies 50 -q) >"$BATS_TEST_TMPDIR/stdout"
	[ -z "$(git -C "$fresh" status --porcelain)" ] || { git -C "$fresh" status --porcelain; return 1; }
	out=$(ls -d "$BATS_TEST_TMPDIR"/data/lockswap/splash2-*)
	[ -f "$out/results.csv" ]
	grep -qx "splash2-run: 2 runs, 0 not ok; results in $out (results.csv, summary.txt, plots/)" "$BATS_TEST_TMPDIR/stdout" ||
		{ cat "$BATS_TEST_TMPDIR/stdout"; return 1; }
	r1=$(stat -c %.9Y "$fresh/codes/apps/raytrace/RAYTRACE")
	b1=$(stat -c %.9Y "$fresh/codes/apps/barnes/BARNES")
	# the second reuses them
	run s2 --no-plot --splash2 "$fresh" --algos glibc --configs 1 --reps 1 --ray-res 16 --barnes-bodies 50 --out "$OUTD/2" -q
	assert_success
	[ "$(stat -c %.9Y "$fresh/codes/apps/raytrace/RAYTRACE")" = "$r1" ]
	[ "$(stat -c %.9Y "$fresh/codes/apps/barnes/BARNES")" = "$b1" ]
	grep -q "Nothing to be done\|is up to date" "$OUTD/2/build.log"
}

@test "dry run prints the build and every run, and runs, builds and writes nothing" {
	local fresh
	fresh=$(fresh_tree)
	run s2 --splash2 "$fresh" --algos glibc --configs 1.0,2.1 --reps 2 --ray-res 800 --out "$OUTD" --dry-run
	assert_success
	assert_line --index 0 "# splash2-run dry run: 8 runs (2 apps, 1 algorithms, 2 configurations, 2 repetitions)"
	assert_line "make -C $fresh/codes/apps/raytrace"
	assert_line "make -C $fresh/codes/apps/barnes"
	# 2 reference runs (1 per input) + 2 apps x 2 configurations x 2 repetitions
	[ "$(grep -c '^cd ' <<<"$output")" -eq 10 ]
	# the paper's 800x800 image needs -m of at least 80
	assert_output --regexp "cd $fresh/codes/apps/raytrace && \./RAYTRACE -p2 -m128 /tmp/[^ ]*/car-800x800\.env"
	assert_output --regexp "cd $fresh/codes/apps/barnes && \./BARNES < /tmp/[^ ]*/barnes-plummer-262144-p2\.in"
	assert_output --partial "# barnes plummer-262144 2.1 glibc wait=- rep 2/2, 1 load processes"
	[ ! -e "$fresh/codes/apps/raytrace/RAYTRACE" ]
	[ ! -e "$OUTD" ]
}

@test "a glibc matrix writes one CSV row per run, the summary table and the plots; the number of runs and an estimate come first, then a progress line per run with elapsed and remaining time" {
	# s2g without -q: the progress lines
	run s2 --splash2 "$TREE" --algos glibc --ray-res 32 --barnes-bodies 200 --out "$OUTD" --configs 1.0,2.1 --reps 2
	assert_success
	assert_line "splash2-run: reference run: raytrace car-32x32 (glibc, 1 thread)"
	assert_line "splash2-run: reference run: barnes plummer-200 (glibc, 1 thread)"
	assert_line --regexp "^splash2-run: 8 runs \(1 algorithms x 4 configurations x 2 repetitions\), about [0-9]+s if each takes as long as its reference run; results in $OUTD$"
	assert_line --regexp '^splash2-run: \[1/8\] raytrace car-32x32 1\.0 glibc rep 1: [0-9.]+ s ok; [0-9]+s elapsed, about [0-9]+s left$'
	assert_line --regexp '^splash2-run: \[8/8\] barnes plummer-200 2\.1 glibc rep 2: [0-9.]+ s ok; '
	[ "$(head -n 1 "$OUTD/results.csv")" = "app,input,algorithm,wait,threads,load,rep,wall_s,user_s,sys_s,status" ]
	[ "$(wc -l <"$OUTD/results.csv")" -eq 9 ]
	run grep -cE '^(raytrace,car-32x32|barnes,plummer-200),glibc,-,(1,0|2,1),[12],[0-9]+\.[0-9]{3},[0-9]+\.[0-9]{3},[0-9]+\.[0-9]{3},ok$' "$OUTD/results.csv"
	assert_output 8
	run cat "$OUTD/summary.txt"
	assert_line --index 0 --regexp '^app +input +M\.N +rank +algorithm +wait +ok +median_s +min_s +max_s +x_glibc +spread +not ok$'
	assert_line --regexp '^raytrace +car-32x32 +2\.1 +1 +glibc +- +2/2 +[0-9.]+ +[0-9.]+ +[0-9.]+ +1\.000 +[0-9.]+!?$'
	assert_line --regexp '^barnes +plummer-200 +1\.0 +1 +glibc +- +2/2 '
	[ "$(head -n 1 "$OUTD/summary.csv")" = "app,input,config,threads,load,algorithm,wait,rank,ok,runs,median_s,min_s,max_s,ratio_glibc,vs_glibc,p_glibc,spread,noisy,not_ok" ]
	for p in raytrace-car-32x32 barnes-plummer-200 splash2; do
		[ "$(head -c 8 "$OUTD/plots/$p.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ]
	done
	grep -q 'reference raytrace car-32x32 (glibc, 1 thread): sha256 [0-9a-f]\{64\}' "$OUTD/meta.txt"
	grep -q 'reference barnes plummer-200 (glibc, 1 thread): [0-9.]* s (output not checked)' "$OUTD/meta.txt"
}

@test "M.N runs N load processes beside the app, and none outlives the run" {
	STANDIN_COUNT_PROCS="splash2-load[$OUTD]" run s2g --no-plot --configs 1.3,2.0 --reps 1
	assert_success
	grep -q "standin: 3 processes match" "$OUTD/logs/raytrace-car-32x32-1.3-glibc-native-r1.out"
	grep -q "standin: 3 processes match" "$OUTD/logs/barnes-plummer-200-1.3-glibc-native-r1.out"
	grep -q "standin: 0 processes match" "$OUTD/logs/barnes-plummer-200-2.0-glibc-native-r1.out"
	[ -z "$(procs_with "splash2-load[$OUTD]")" ]
}

@test "--fill adds load processes on the cores the app leaves idle, as in the paper" {
	local n
	n=$(nproc)
	STANDIN_COUNT_PROCS="splash2-load[$OUTD]" run s2g --no-plot --apps barnes --configs 1.1 --reps 1 --fill
	assert_success
	grep -q "standin: $n processes match" "$OUTD/logs/barnes-plummer-200-1.1-glibc-native-r1.out"
	grep -q "^configs: 1.1 (fill: (nproc - M) + N load processes)" "$OUTD/meta.txt"
}

@test "a run still busy at the time limit is over-limit with its elapsed time, not a hang; later repetitions are skipped" {
	STANDIN_SPIN=2 s2g --no-plot --apps barnes --configs 1,2 --reps 2 --timeout 2 >"$BATS_TEST_TMPDIR/stdout" 2>"$BATS_TEST_TMPDIR/stderr"
	[ "$(rows barnes 1 0 ok)" -eq 2 ]
	grep -qE '^barnes,plummer-200,glibc,-,2,0,1,[2-9]\.[0-9]{3},[0-9]+\.[0-9]{3},[0-9]+\.[0-9]{3},over-limit$' "$OUTD/results.csv"
	grep -qx 'barnes,plummer-200,glibc,-,2,0,2,,,,skipped' "$OUTD/results.csv"
	run cat "$OUTD/summary.txt"
	assert_line --regexp '^barnes +plummer-200 +2\.0 +1 +glibc +- +0/2 +>[0-9]\.[0-9]{3} +>[0-9]\.[0-9]{3} +>[0-9]\.[0-9]{3} +- +1\.00 +1 over-limit; 1 skipped$'
	assert_line ">: a lower bound (the run was stopped at its time limit: over-limit)"
	[ -z "$(procs_in "$TREE/codes/apps/barnes")" ]
	# nothing the user did not cause is printed as an error (-q: nothing at all)
	[ ! -s "$BATS_TEST_TMPDIR/stderr" ] || { cat "$BATS_TEST_TMPDIR/stderr"; return 1; }
}

@test "a run whose threads all sleep for ever is a hang, found long before the time limit, with no stray errors" {
	STANDIN_HANG=2 s2g --no-plot --configs 1,2 --reps 1 --hang 1 --timeout 120 >"$BATS_TEST_TMPDIR/stdout" 2>"$BATS_TEST_TMPDIR/stderr"
	[ ! -s "$BATS_TEST_TMPDIR/stderr" ] || { cat "$BATS_TEST_TMPDIR/stderr"; return 1; }
	grep -qx 'raytrace,car-32x32,glibc,-,2,0,1,,,,hang' "$OUTD/results.csv"
	grep -qx 'barnes,plummer-200,glibc,-,2,0,1,,,,hang' "$OUTD/results.csv"
	[ "$(rows raytrace 1 0 ok)" -eq 1 ]
	[ -z "$(procs_in "$TREE/codes/apps/raytrace")" ]
}

@test "a crash is reported with its signal, a failure with its exit status; a Raytrace image that differs from the 1-thread glibc image is wrong-image, and kept; a Raytrace run that writes no image is no-image; --strict exits 1 when a run is not ok" {
	# one matrix, each misbehaviour at a thread count of its own
	STANDIN_CRASH=2 STANDIN_FAIL=3 STANDIN_WRONG_IMAGE=4 STANDIN_NO_IMAGE=5 run s2g --configs 1,2,3,4,5 --reps 1 --strict
	assert_failure 1
	assert_output --partial "splash2-run: 10 runs, 6 not ok"
	[ "$(rows raytrace 2 0 crash:SIGSEGV)" -eq 1 ]
	[ "$(rows barnes 2 0 crash:SIGSEGV)" -eq 1 ]
	[ "$(rows raytrace 3 0 exit:3)" -eq 1 ]
	[ "$(rows barnes 3 0 exit:3)" -eq 1 ]
	[ "$(rows barnes 1 0 ok)" -eq 1 ]
	grep -q "failing on request" "$OUTD/logs/barnes-plummer-200-3.0-glibc-native-r1.err"
	[ "$(rows raytrace 1 0 ok)" -eq 1 ]
	[ "$(rows raytrace 4 0 wrong-image)" -eq 1 ]
	[ "$(rows barnes 4 0 ok)" -eq 1 ]
	[ -f "$OUTD/wrong-images/raytrace-car-32x32-4.0-glibc-native-r1/image.ppm" ]
	[ "$(head -c 9 "$OUTD/reference/car-32x32/image.ppm")" = "$(printf 'P6\n32 32')" ]
	! cmp -s "$OUTD/reference/car-32x32/image.ppm" "$OUTD/wrong-images/raytrace-car-32x32-4.0-glibc-native-r1/image.ppm"
	[ "$(rows raytrace 5 0 no-image)" -eq 1 ]
	[ "$(rows barnes 5 0 ok)" -eq 1 ]
	# and without --strict, the same matrix is a success
	STANDIN_FAIL=2 run s2g --no-plot --apps barnes --configs 2 --reps 1 --out "$OUTD-2"
	assert_success
}

@test "--no-image-check compares no image, and the summary says so" {
	STANDIN_WRONG_IMAGE=2 run s2g --no-plot --apps raytrace --configs 1,2 --reps 1 --no-image-check
	assert_success
	[ "$(rows raytrace 1 0 ok)" -eq 1 ]
	[ "$(rows raytrace 2 0 ok)" -eq 1 ]
	[ ! -e "$OUTD/reference" ]
	assert_line "raytrace images: not checked (--no-image-check)"
	grep -qx "raytrace images: not checked (--no-image-check)" "$OUTD/summary.txt"
	grep -qx "raytrace images: not checked (--no-image-check)" "$OUTD/meta.txt"
	run s2g --no-plot --apps raytrace,barnes --configs 1 --reps 1 --out "$OUTD-2"
	assert_line "raytrace images: compared with the image of a 1-thread glibc run of the same input"
	assert_line "barnes output: not checked (Barnes prints no checksum): exit status and completion only"
}

@test "a failing reference run stops everything with exit 1, naming it; Raytrace gets the -m it is given (too small a one fails the reference run)" {
	STANDIN_CRASH=1 run s2g --apps raytrace --configs 2 --reps 1
	assert_failure 1
	assert_output "splash2-run: reference run of raytrace car-32x32 (glibc, 1 thread) failed: crash:SIGSEGV; see $OUTD/logs/raytrace-car-32x32-reference.{out,err}"
	run s2g --apps raytrace --ray-res 400 --ray-mem 15 --configs 1 --reps 1 --out "$OUTD-m"
	assert_failure 1
	grep -q -- "-m15 is too small for 400x400" "$OUTD-m/logs/raytrace-car-400x400-reference.err"
}

@test "inputs follow the options: scene, resolution, body count, a Barnes input file" {
	printf '\n500\n7\n\n0.025\n0.05\n1.0\n2.0\n5.0\n0.05\n0.25\nNUMPROCS\n' >"$BATS_TEST_TMPDIR/myinput"
	run s2g --no-plot --ray-scene teapot --ray-res 48,24 --barnes-input "$BATS_TEST_TMPDIR/myinput" --configs 2 --reps 1
	assert_success
	[ "$(cut -d, -f2 "$OUTD/results.csv" | sort -u | tr '\n' ' ')" = "input myinput teapot-24x24 teapot-48x48 " ]
	[ "$(head -c 9 "$OUTD/reference/teapot-48x48/image.ppm")" = "$(printf 'P6\n48 48')" ]
	grep -q "raytrace stand-in: 48x48, 2 threads" "$OUTD/logs/raytrace-teapot-48x48-2.0-glibc-native-r1.out"
	grep -q "barnes stand-in: 500 bodies, 3 steps, 2 threads" "$OUTD/logs/barnes-myinput-2.0-glibc-native-r1.out"
	run s2g --no-plot --apps barnes --barnes-bodies 300 --configs 3 --reps 1 --out "$OUTD-2"
	assert_success
	grep -q "barnes stand-in: 300 bodies, 4 steps, 3 threads" "$OUTD-2/logs/barnes-plummer-300-3.0-glibc-native-r1.out"
}

@test "bad options and values: one line naming them, exit 2" {
	local args msg
	while IFS='|' read -r args msg; do
		# shellcheck disable=SC2086
		run s2 --splash2 "$TREE" --algos glibc $args
		msg=${msg//TREE/$TREE}
		[ "$status" -eq 2 ] || { echo "$args: status $status: $output"; return 1; }
		[ "$output" = "splash2-run: $msg" ] || { echo "$args: got: $output"; echo "wanted: splash2-run: $msg"; return 1; }
	done <<'EOF'
--configs 2.x|--configs: '2.x' is not M.N (M application threads >= 1, N load processes >= 0)
--configs 0.1|--configs: '0.1' is not M.N (M application threads >= 1, N load processes >= 0)
--reps 0|--reps: '0' is not a positive integer
--timeout soon|--timeout: 'soon' is not a positive number of seconds
--hang 0|--hang: '0' is not a positive number of seconds
--apps raytrace,fft|--apps: unknown app 'fft' (valid: raytrace, barnes)
--wait sometimes|--wait: unknown policy 'sometimes' (valid: spin, yield, park, default)
--ray-res 12x12|--ray-res: '12x12' is not a positive integer
--ray-scene nosuch|--ray-scene: no TREE/codes/apps/raytrace/inputs/nosuch.env (shipped scenes: car, teapot, balls4)
--barnes-bodies -5|--barnes-bodies: '-5' is not a positive integer
--frobnicate|unknown option '--frobnicate' (see --help)
--lockswap /nonexistent --algos pthread|--lockswap: '/nonexistent' is not an executable file
--out|--out needs a value (see --help)
EOF
	mkdir -p "$OUTD"
	touch "$OUTD/results.csv"
	run s2 --splash2 "$TREE" --algos glibc --out "$OUTD"
	assert_failure 2
	assert_output "splash2-run: --out: '$OUTD' already holds a results.csv (choose another folder)"
}

@test "terminating the runner kills the app and the load processes, and keeps partial results" {
	STANDIN_SPIN=2 timeout -k 5 60 "$RUNNER" --splash2 "$TREE" --algos glibc --apps barnes --configs 1,2.2 \
		--reps 1 --barnes-bodies 200 --out "$OUTD" -q --timeout 50 3>&- &
	local pid=$!
	wait_for 20 some_with "splash2-load[$OUTD]"
	wait_for 20 some_in "$TREE/codes/apps/barnes"
	kill -TERM $pid
	local rc=0
	wait $pid || rc=$?
	[ $rc -eq 143 ]
	[ -z "$(procs_with "splash2-load[$OUTD]")" ]
	[ -z "$(procs_in "$TREE/codes/apps/barnes")" ]
	grep -qx 'barnes,plummer-200,glibc,-,1,0,1,[0-9.]*,[0-9.]*,[0-9.]*,ok' "$OUTD/results.csv"
}

@test "if the runner is killed outright, its load processes and the app still end by themselves; the next run removes its scratch folder (its owner is gone, or its pid names another process), not a live runner's" {
	# the app stays busy until its time limit, 10 s: long enough to be seen
	# running (by scans of /proc, slow on a busy machine) before the runner
	# would stop it
	STANDIN_SPIN=2 "$RUNNER" --splash2 "$TREE" --algos glibc --apps raytrace --configs 2.2 --reps 1 \
		--ray-res 32 --out "$OUTD" -q --timeout 10 3>&- &
	local pid=$!
	wait_for 20 some_with "splash2-load[$OUTD]"
	wait_for 20 some_in "$TREE/codes/apps/raytrace"
	local app
	app=$(procs_in "$TREE/codes/apps/raytrace")
	kill -KILL $pid
	# load processes notice within a fraction of a second; the app is
	# killed by its backstop, timeout(1), 2 s after the time limit: waited
	# for by its pids (the backstop and the app), then none left in its folder
	wait_for 20 none_with "splash2-load[$OUTD]"
	# (a wait of about 12 s: looked at twice a second)
	# shellcheck disable=SC2086
	WAIT_STEP=0.5 wait_for 40 gone $app
	wait_for 5 none_in "$TREE/codes/apps/raytrace"
	# its scratch folder is removed by the next run
	local work
	work=$(grep -l "^$pid " /tmp/splash2-run.*/owner | xargs dirname)
	[ -d "$work" ]
	# a folder whose owner's pid now names another process (a pid is
	# reused: the start time differs) goes too; a live owner's stays
	local stat rest reused live
	stat=$(cat /proc/$$/stat)
	read -r -a rest <<<"${stat##*) }"
	reused=$(mktemp -d /tmp/splash2-run.XXXXXXXX)
	live=$(mktemp -d /tmp/splash2-run.XXXXXXXX)
	echo "$$ 1" >"$reused/owner"
	echo "$$ ${rest[19]}" >"$live/owner"
	run s2g --no-plot --apps barnes --configs 1 --reps 1 --out "$OUTD-2"
	assert_success
	[ ! -e "$work" ]
	[ ! -e "$reused" ]
	[ -d "$live" ] || { echo "the folder of a live owner was removed"; return 1; }
	rm -r "$live"
}

@test "--report recomputes medians, ranges, ratios to glibc and failures from a CSV" {
	mkdir -p "$OUTD"
	cat >"$OUTD/results.csv" <<'EOF'
app,input,algorithm,wait,threads,load,rep,wall_s,user_s,sys_s,status
barnes,plummer-9,glibc,-,2,1,1,2.000,1.0,0.1,ok
barnes,plummer-9,glibc,-,2,1,2,1.000,1.0,0.1,ok
barnes,plummer-9,glibc,-,2,1,3,3.000,1.0,0.1,ok
barnes,plummer-9,mcs,spin,2,1,1,4.000,1.0,0.1,ok
barnes,plummer-9,mcs,spin,2,1,2,,,,crash:SIGSEGV
barnes,plummer-9,mcs,spin,2,1,3,6.000,1.0,0.1,ok
barnes,plummer-9,mcs,spin,2,1,4,3.000,1.0,0.1,ok
barnes,plummer-9,tas,yield,2,1,1,30.000,1.0,0.1,over-limit
barnes,plummer-9,tas,yield,2,1,2,,,,skipped
barnes,plummer-9,tas,yield,2,1,3,,,,skipped
barnes,plummer-9,clh,park,2,1,1,,,,hang
EOF
	run s2 --report "$OUTD"
	assert_success
	# best first; a crash or hang is never ranked; over-limit is a lower bound
	assert_line --index 1 --regexp '^barnes +plummer-9 +2\.1 +1 +glibc +- +3/3 +2\.000 +1\.000 +3\.000 +1\.000 +3\.00!$'
	assert_line --index 2 --regexp '^barnes +plummer-9 +2\.1 +2 +tas +yield +0/3 +>30\.000 +>30\.000 +>30\.000 +>15\.000 +~ +1\.00 +1 over-limit; 2 skipped$'
	assert_line --index 3 --regexp '^barnes +plummer-9 +2\.1 +- +mcs +spin +3/4 +4\.000 +3\.000 +6\.000 +2\.000 +2\.00! +1 crash:SIGSEGV$'
	assert_line --index 4 --regexp '^barnes +plummer-9 +2\.1 +- +clh +park +0/1 +- +- +- +- +- +1 hang$'
	grep -qx 'barnes,plummer-9,2.1,2,1,mcs,spin,,3,4,4.000,3.000,6.000,2.000,,,2.00,yes,1 crash:SIGSEGV' "$OUTD/summary.csv"
	[ -s "$OUTD/plots/barnes-plummer-9.png" ]
	grep -q 'title "mcs/spin"' "$OUTD/plots/barnes-plummer-9.gp"
	grep -q 'title "barnes plummer-9, M.N 2.1' "$OUTD/plots/barnes-plummer-9.gp"
	grep -q 'not ok: tas/yield (0/3 ok; 1 over-limit; 2 skipped), mcs/spin (3/4 ok; 1 crash:SIGSEGV),' \
		"$OUTD/plots/barnes-plummer-9.gp"
}

@test "a noisy baseline is flagged in the table and the plot, and ratios use the median" {
	mkdir -p "$OUTD"
	# one glibc run of 16.8 s among runs of about 2.8 s (as seen on the real suite)
	cat >"$OUTD/results.csv" <<'EOF'
app,input,algorithm,wait,threads,load,rep,wall_s,user_s,sys_s,status
raytrace,car-800x800,glibc,-,2,2,1,2.800,1.0,0.1,ok
raytrace,car-800x800,mcs,default,2,2,1,5.600,1.0,0.1,ok
raytrace,car-800x800,glibc,-,2,2,2,16.800,1.0,0.1,ok
raytrace,car-800x800,mcs,default,2,2,2,5.700,1.0,0.1,ok
raytrace,car-800x800,glibc,-,2,2,3,2.900,1.0,0.1,ok
raytrace,car-800x800,mcs,default,2,2,3,5.800,1.0,0.1,ok
raytrace,car-800x800,glibc,-,2,0,1,2.000,1.0,0.1,ok
raytrace,car-800x800,glibc,-,2,0,2,2.100,1.0,0.1,ok
EOF
	run s2 --report "$OUTD"
	assert_success
	assert_line --regexp '^raytrace +car-800x800 +2\.2 +1 +glibc +- +3/3 +2\.900 +2\.800 +16\.800 +1\.000 +6\.00!$'
	assert_line --regexp '^raytrace +car-800x800 +2\.2 +2 +mcs +default +3/3 +5\.700 +5\.600 +5\.800 +1\.966 +~ +1\.04$'
	assert_line --regexp '^raytrace +car-800x800 +2\.0 +1 +glibc +- +2/2 +2\.050 +2\.000 +2\.100 +1\.000 +1\.05$'
	assert_line "!: noisy cell: its runs spread more than 1.5x (max/min)"
	assert_line "warning: noisy glibc baseline, glibc at raytrace car-800x800 2.2: max/min 6.00: the ratios of its group are uncertain"
	# and mcs, whose runs all take twice glibc's median, is ~ beside that 16.8 s run: more repetitions
	assert_line "more repetitions needed: 1 cell at ~ or glibc spread more than 1.5x (up to 6.00): run --reps 10 or more to tell them apart"
	# the plot marks it and says what the mark means
	grep -q '^set label [0-9]* "!" at ' "$OUTD/plots/raytrace-car-800x800.gp"
	grep -q 'noisy: its runs spread more than 1.5x (max/min)' "$OUTD/plots/raytrace-car-800x800.gp"
	# the threshold is an option
	run s2 --report "$OUTD" --spread 10
	refute_output --partial "noisy"
}

@test "plots: 20 algorithms get 20 distinct styles, the same in every panel; glibc always black; every failure listed" {
	mkdir -p "$OUTD"
	{
		echo "app,input,algorithm,wait,threads,load,rep,wall_s,user_s,sys_s,status"
		for app in raytrace barnes; do
			for a in glibc $(seq -f 'lock%02g' 1 20); do
				for t in 1 2; do
					if [ "$a" = lock07 ] || [ "$a" = lock19 ] || { [ $t = 2 ] && [ "$a" = lock13 ]; }; then
						echo "$app,in,$a,default,$t,0,1,,,,crash:SIGSEGV-with-a-long-explanation-$a"
					else
						echo "$app,in,$a,default,$t,0,1,$t.$((RANDOM % 900 + 100)),1.0,0.1,ok"
					fi
				done
			done
		done
	} >"$OUTD/results.csv"
	run s2 --report "$OUTD"
	assert_success
	local gp styles a
	for gp in "$OUTD/plots/raytrace-in.gp" "$OUTD/plots/barnes-in.gp"; do
		# one style per series: colour, dash and point, all distinct
		styles=$(grep -o 'lc rgb "[^"]*" dt [0-9]* pt [0-9]* lw [0-9]* title "[^"]*"' "$gp")
		[ "$(wc -l <<<"$styles")" -eq 21 ]
		[ "$(sed 's/ lw .*//' <<<"$styles" | sort -u | wc -l)" -eq 21 ]
		grep -qx 'lc rgb "black" dt 1 pt 7 lw 3 title "glibc"' <<<"$styles"
		# every failure, in full
		for a in lock07 lock13 lock19; do
			grep -q "$a.*crash:SIGSEGV-with-a-long-explanation-$a" "$gp" || { echo "$a missing from $gp"; return 1; }
		done
	done
	# the same algorithm looks the same in both panels
	diff <(grep -o 'lc rgb.*title "[^"]*"' "$OUTD/plots/raytrace-in.gp") <(grep -o 'lc rgb.*title "[^"]*"' "$OUTD/plots/barnes-in.gp")
	[ -s "$OUTD/plots/splash2.png" ]
}

@test "every lockswap algorithm and pthread run both apps through lockswap, with the wait policy asked" {
	need_lockswap
	local names n
	names=$(algos lock)
	n=$(($(wc -w <<<"$names") + 1))
	run s2 --no-plot --splash2 "$TREE" --algos pthread,locks --wait park --configs 2 --reps 1 --ray-res 32 \
		--barnes-bodies 200 --out "$OUTD" -q --timeout 30 --hang 5
	assert_success
	[ "$(rows raytrace 2 0 ok)" -eq $n ] || { cat "$OUTD/results.csv"; return 1; }
	[ "$(rows barnes 2 0 ok)" -eq $n ] || { cat "$OUTD/results.csv"; return 1; }
	for a in pthread $names; do
		grep -q "^raytrace,car-32x32,$a,park,2,0,1," "$OUTD/results.csv"
		grep -qx "standin: LOCKSWAP_ALGO=$a" "$OUTD/logs/barnes-plummer-200-2.0-$a-park-r1.out"
	done
	grep -q "^lockswap: $LOCKSWAP" "$OUTD/meta.txt"
}

@test "--algos all is glibc, pthread and every algorithm; NAME/WAIT picks a policy; the default algorithms are glibc, pthread and those of the paper's that lockswap has; an unknown algorithm is named with the valid ones, exit 2" {
	need_lockswap
	run s2 --splash2 "$TREE" --algos all --configs 1 --reps 1 --dry-run
	assert_success
	assert_output --partial "cd $TREE/codes/apps/raytrace && ./RAYTRACE -p1"
	for a in $(algos); do
		assert_output --partial "&& $LOCKSWAP -a $a -- ./BARNES"
	done
	a=$(algos lock | head -n 1)
	run s2 --splash2 "$TREE" --algos "$a/yield" --configs 1 --reps 1 --dry-run
	assert_output --partial "&& $LOCKSWAP -a $a -w yield -- ./RAYTRACE -p1"
	# the defaults
	run s2 --splash2 "$TREE" --configs 1 --reps 1 --apps barnes --dry-run
	assert_success
	assert_output --partial "# barnes plummer-262144 1.0 glibc wait=- rep 1/1"
	assert_output --partial "-a pthread -- ./BARNES"
	for a in mcs mcs-tp clh-tp; do
		if algos | grep -qx -- "$a"; then
			assert_output --partial "-a $a -- ./BARNES"
		else
			refute_output --partial "-a $a "
		fi
	done
	if algos | grep -qx tas; then assert_output --partial "-a tas -w yield -- ./BARNES"; fi
	# unknown names
	run s2 --splash2 "$TREE" --algos glibc,nosuchlock
	assert_failure 2
	assert_output "splash2-run: --algos: unknown algorithm 'nosuchlock' (valid: glibc, $(algos | paste -sd, | sed 's/,/, /g'), all, locks)"
	run s2 --splash2 "$TREE" --algos "$(algos lock | head -n 1)/never"
	assert_failure 2
	assert_output --partial "unknown wait policy 'never'"
}
