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
# MODULE:WHAT, every module of tests/compare-unit and what it checks
UNITS=(
	"test_limits:the time limit (median glibc run, factor, at least 10 s, at most --timeout) and the hang detector"
	"test_procs:/proc trees, CPU ticks and thread states; stopping a process tree; load processes"
	"test_runner:one run: ok, exit:N, crash:SIG, over-limit, hang, a stop"
	"test_checks:output checks (stdout, a file, a folder) and the --metric figure"
	"test_series:series, --algos and --wait, opaque algorithm names, a new axis"
	"test_stats:medians, lower bounds, ratios, spread, ranking and ties"
	"test_output:CSV read and written, the summary table, plot styles"
)

setup() {
	[ -x "$PY" ] || skip "$PY not installed (scripts/deps.sh test)"
}

# units MODULE...: each module's tests in turn, in one Python process (its
# start and the engine's import once, not once a module), each on a runner
# of its own: one line "MODULE: OK N" or "MODULE: FAILED N" and, when it
# failed, its verbose output
units() {
	cd "$UNITDIR"
	timeout -k 5 120 "$PY" -B - "$@" <<'PY'
import io, sys, unittest
for m in sys.argv[1:]:
    out = io.StringIO()
    r = unittest.TextTestRunner(stream=out, verbosity=2).run(unittest.defaultTestLoader.loadTestsFromName(m))
    ok = r.wasSuccessful() and r.testsRun > 0
    print("%s: %s %d" % (m, "OK" if ok else "FAILED", r.testsRun))
    if not ok:
        print(out.getvalue())
PY
}

@test "unit: the time limit (median glibc run, factor, at least 10 s, at most --timeout) and the hang detector; /proc trees, CPU ticks and thread states; stopping a process tree; load processes; one run: ok, exit:N, crash:SIG, over-limit, hang, a stop; output checks (stdout, a file, a folder) and the --metric figure; series, --algos and --wait, opaque algorithm names, a new axis; medians, lower bounds, ratios, spread, ranking and ties; CSV read and written, the summary table, plot styles; every test file in tests/compare-unit is run" {
	local u mods=() f bad=0
	for u in "${UNITS[@]}"; do mods+=("${u%%:*}"); done
	# every test file is one of them
	for f in "$UNITDIR"/test_*.py; do
		f=$(basename "$f" .py)
		[[ " ${mods[*]} " == *" $f "* ]] || { echo "$f is not run by $BATS_TEST_FILENAME"; return 1; }
	done
	run units "${mods[@]}"
	for u in "${UNITS[@]}"; do
		[[ "$output" =~ (^|$'\n')"${u%%:*}: OK "[1-9] ]] || { echo "${u%%:*} (${u#*:}): not OK"; bad=1; }
	done
	[ "$status" -eq 0 ] && [ "$bad" = 0 ] || { echo "$output"; return 1; }
}
