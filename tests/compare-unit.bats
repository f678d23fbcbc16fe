#!/usr/bin/env bats
# The compare engine's parts, unit by unit (tests/compare-unit/test_*.py,
# Python's unittest under Debian's python3, as the engine runs): the time
# limit and the hang detector fed with synthetic /proc trees, processes,
# one run, output checks and --metric, series and --algos, statistics and
# ranking, CSV, the table and the plots. tests/compare.bats and
# tests/splash2-runner.bats test the same engine end to end.
load helpers

PY=/usr/bin/python3
UNITDIR="$ROOT/tests/compare-unit"

setup() {
	[ -x "$PY" ] || skip "$PY not installed (scripts/deps.sh test)"
}

# unit MODULE: its tests, verbose on failure
unit() {
	cd "$UNITDIR"
	run timeout -k 5 60 "$PY" -B -m unittest "$@"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	[[ $output == *OK* ]]
}

@test "unit: the time limit (median glibc run, factor, at least 10 s, at most --timeout) and the hang detector" {
	unit test_limits
}

@test "unit: /proc trees, CPU ticks and thread states; stopping a process tree; load processes" {
	unit test_procs
}

@test "unit: one run: ok, exit:N, crash:SIG, over-limit, hang, a stop" {
	unit test_runner
}

@test "unit: output checks (stdout, a file, a folder) and the --metric figure" {
	unit test_checks
}

@test "unit: series, --algos and --wait, opaque algorithm names, a new axis" {
	unit test_series
}

@test "unit: medians, lower bounds, ratios, spread, ranking and ties" {
	unit test_stats
}

@test "unit: CSV read and written, the summary table, plot styles" {
	unit test_output
}

@test "unit: every test file in tests/compare-unit is run above" {
	local f
	for f in "$UNITDIR"/test_*.py; do
		f=$(basename "$f" .py)
		grep -q "^	unit $f\$" "$BATS_TEST_FILENAME" || { echo "$f is not run by $BATS_TEST_FILENAME"; return 1; }
	done
}
