"""lockswap compare: which lock suits this program? Runs PROG natively (glibc)
and under each chosen lockswap algorithm and waiting policy, several times,
and ranks them best first. `lockswap compare --help` says how to use it.

This module reads the options and describes the matrix of one program (one
reference run, one group per --load value); the engine does the rest. It
imports only util until the options are read, so that --help and a bad option
cost no more than starting the interpreter.
"""
import os
import sys

from .util import Fail, die, is_uint, quote_words, split_list, which

PROG = "lockswap compare"

USAGE = """\
usage: lockswap compare [options] -- PROG [ARGS...]
       lockswap compare --report DIR

Runs PROG natively (glibc) and under each chosen lockswap algorithm and
waiting policy, --reps times each, interleaved, and prints a table of them
best first: median, min, max, ratio to glibc's median, spread. Writes
results.csv, summary.txt, summary.csv and plots/compare.png. Progress on
stderr: runs done / total, elapsed, estimate.

What to run:
  --algos LIST       comma-separated: names from 'lockswap --names', NAME/WAIT
                     (e.g. tas/yield), 'locks' (every real lock), 'all'
                     (pthread, glibc's mutex through the shim, and every lock).
                     glibc (native, no preload) always runs. A name lockswap
                     does not list is passed to 'lockswap -a' if it accepts
                     it. Default: all
  --rwalgos LIST     also sweep the reader-writer lock algorithms: comma-
                     separated names from 'lockswap --names rwlock' (NAME+bravo
                     too), 'locks' (every real rwlock), 'all' (pthread, glibc's
                     rwlock through the shim, and every lock); each runs with
                     every --algos algorithm (then by default pthread, glibc's
                     own mutex) as 'lockswap -a ALGO -r RWALGO', named
                     ALGO/RWALGO; results.csv gets an rwalgo column
  --wait LIST        waiting policies (spin, yield, park, default) for each
                     algorithm given without /WAIT (default: default, i.e.
                     lockswap's own, park)
  --reps N           repetitions of every algorithm (default: 3)
  --load LIST        N spinning processes beside the program (the papers'
                     M.N); a list runs every algorithm at each (default: 0)
  --stdin FILE       the program's standard input (default: /dev/null)
  --lockswap PATH    the lockswap command (default: $LOCKSWAP_COMMAND, set by
                     'lockswap compare'; else lockswap beside this program, or
                     the installed one)
What to measure and check:
  --metric REGEX     rank by a figure the program prints instead of wall time:
                     on the last line of its stdout (else stderr) that the
                     extended regular expression REGEX matches, the first
                     number in the matched text, or else the first after it
                     (e.g. --metric 'throughput')
  --higher-is-better with --metric: a higher figure is better
  --check stdout|FILE  compare each run's stdout, or FILE (which the program
                     writes; removed before every run), with the native
                     reference run's: a difference is 'wrong-output'
Limits:
  --timeout SEC      a run still going after SEC seconds is stopped and
                     reported as 'over-limit' with its elapsed time
                     (default: 300), or after F x the median glibc run if
                     sooner (but never under 10 s)
  --timeout-factor F (default: 10; 0 = off)
  --hang SEC         a run with no progress for SEC seconds (no CPU time used,
                     no thread runnable, no output) is stopped: 'hang'
                     (default: 10)
  --no-skip          after an over-limit run or a hang, still run that
                     algorithm's remaining repetitions (default: skip them)
Per lock:
  --per-lock PATTERNS  try the algorithms on some mutexes only, keeping the
                     others on --rest's: each algorithm A runs as the map
                     PATTERN=A,...,*=REST (lockswap -m; PATTERNS comma-separated,
                     as in LOCKSWAP_ALGO_MAP: FUNCTION, FILE:LINE, MODULE,
                     MODULE+0xOFFSET), and the best map is printed at the end
                     if its runs beat glibc's beyond the spread (one-sided
                     Mann-Whitney U test, p <= 0.05), else that none does
                     'auto': the patterns of the --per-lock-top most contended
                     mutexes, from a profile of one native run (lockswap
                     profile, then lockswap report --map)
  --per-lock-top N   with --per-lock auto: how many mutexes (default: 1)
  --rest ALGO        with --per-lock: every other mutex's algorithm (default:
                     pthread, glibc's own mutex: the program as it is)
Output:
  --out DIR          output folder, must not hold a results.csv (default:
                     $LOCKSWAP_RESULTS, else ~/.local/share/lockswap, then
                     compare-PROG-<UTC date-time>)
  --spread F         flag cells whose runs spread more than F x (max/min;
                     default: 1.5)
  --no-plot          no PNG
  --strict           exit 1 if any run is not "ok"
  -n, --dry-run      print the commands, run nothing
  -q, --quiet        no progress
  --report DIR       recompute the summary and plot from DIR/results.csv
  -h, --help

Before the matrix, one native run of PROG is the reference: its output is what
--check compares with, and its time gives the estimate. A run's status is ok,
over-limit, hang, crash:SIGNAME, exit:N, wrong-output, no-output (--check FILE
not written), no-metric (--metric found no number), skipped, or error (this
program lost the measurement: a bug). Only ok runs have times (over-limit runs
their elapsed time, shown as a lower bound '>'); the ranking leaves out every
algorithm with a crash, hang, exit, wrong output or missing figure (with
--metric, an over-limit run printed none). Exit status: 0 when the
matrix ran (unless --strict), 1 when the reference run failed, 2 for bad
options or a missing tool.
"""

VALUED = frozenset(
    "--algos --rwalgos --wait --reps --load --stdin --lockswap --metric --check --timeout --timeout-factor --hang --out "
    "--spread --report --per-lock --per-lock-top --rest".split()
)


class Options:
    def __init__(self):
        self.algos = ""  # all, or pthread with --rwalgos
        self.rwalgos = ""
        self.wait = "default"
        self.load = "0"
        self.stdin = "/dev/null"
        self.check = ""
        self.out = ""
        self.dry = False
        self.report = ""
        self.prog = []
        # for the engine
        self.reps = "3"
        self.lockswap = ""
        self.metric = ""
        self.higher = False
        self.timeout = "300"
        self.factor = "10"
        self.hang = "10"
        self.skip = True
        self.spread = "1.5"
        self.spread_given = False
        self.plot = True
        self.strict = False
        self.quiet = False
        self.per_lock = ""
        self.per_lock_top = "1"
        self.rest = ""


def parse(args):
    """The options (Fail for a bad one); None after --help."""
    o = Options()
    args = list(args)
    while args:
        opt, val = args.pop(0), ""
        if opt == "--":
            o.prog = args
            break
        if opt.startswith("--") and "=" in opt:
            opt, val = opt.split("=", 1)
        elif opt in VALUED:
            if not args:
                die("%s needs a value (see --help)" % opt)
            val = args.pop(0)
        if opt in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return None
        elif opt in ("--algos", "--rwalgos", "--wait", "--load", "--stdin", "--check", "--out", "--report", "--reps", "--lockswap",
                     "--metric", "--timeout", "--hang"):
            setattr(o, opt[2:], val)
        elif opt == "--timeout-factor":
            o.factor = val
        elif opt in ("--per-lock", "--per-lock-top", "--rest"):
            setattr(o, opt[2:].replace("-", "_"), val)
        elif opt == "--spread":
            o.spread, o.spread_given = val, True
        elif opt == "--higher-is-better":
            o.higher = True
        elif opt == "--no-skip":
            o.skip = False
        elif opt == "--no-plot":
            o.plot = False
        elif opt == "--strict":
            o.strict = True
        elif opt in ("-n", "--dry-run"):
            o.dry = True
        elif opt in ("-q", "--quiet"):
            o.quiet = True
        elif opt.startswith("-"):
            die("unknown option '%s' (see --help)" % opt)
        else:
            die("'%s': give the program after -- (lockswap compare [options] -- PROG [ARGS...])" % opt)
    return o


def main(args, self_path):
    """`lockswap compare ARGS`; self_path: this program (lockswap is looked
    for beside it). The exit code."""
    from .util import guard

    return guard(lambda: _main(args, self_path))


def _main(args, self_path):
    try:
        o = parse(args)
    except Fail as e:
        sys.stderr.write("%s: %s\n" % (PROG, e.message))
        return e.code
    if o is None:
        return 0
    from . import engine

    m = engine.Matrix(PROG, o.quiet)
    m.reps, m.metric, m.higher, m.timeout, m.factor, m.hang = o.reps, o.metric, o.higher, o.timeout, o.factor, o.hang
    m.skip, m.spread, m.plot, m.strict = o.skip, o.spread, o.plot, o.strict
    m.lockswap.explicit = o.lockswap
    here = os.path.dirname(os.path.realpath(self_path))
    # beside it (build/), else the installed one (this is PREFIX/libexec/lockswap/)
    m.lockswap.candidates = [os.environ.get("LOCKSWAP_COMMAND", ""), os.path.join(here, "lockswap"),
                             os.path.normpath(os.path.join(here, "../../bin/lockswap"))]
    return m.main(lambda: _compare(m, o, args))


def _compare(m, o, args):
    from . import series as S
    from .util import host_lines, utc_now

    m.check_spread()
    if o.report:
        from . import engine

        engine.report(o.report, m.report_defaults(), m.plot, m.msgs, o.spread if o.spread_given else None)
        with open(os.path.join(o.report, "summary.txt")) as f:
            sys.stdout.write(f.read())
        return 0
    m.check_limits()
    m.check_metric()
    loads = split_list(o.load)
    if not loads:
        die("--load: empty list")
    for n in loads:
        if not is_uint(n):
            die("--load: '%s' is not a number of processes (0, 1, 2...)" % n)
    stdin = o.stdin
    if stdin != "/dev/null":
        if not os.path.isfile(stdin):
            die("--stdin: no file '%s'" % stdin)
        stdin = os.path.realpath(stdin)
    if not o.prog:
        die("no program to run (lockswap compare [options] -- PROG [ARGS...])")
    if not which(o.prog[0]):
        die("cannot run '%s': no such program" % o.prog[0])
    if o.check and o.check != "stdout" and os.path.isdir(o.check):
        die("--check: '%s' is a folder (give a file the program writes, or stdout)" % o.check)
    if not which("timeout"):
        die("timeout not found: install it (Debian: apt-get install coreutils)")
    waits = S.parse_waits(o.wait)
    rwalgos = None
    if o.rwalgos:
        S.use_axis(S.RWALGO)
        rwalgos = S.parse_rwalgos(o.rwalgos, m.lockswap)
    m.series.add(S.Series.native())
    S.parse_algos(o.algos or ("pthread" if rwalgos else "all"), waits, m.lockswap, m.series, rwalgos)
    lockswap = m.lockswap.path()
    if o.per_lock_top != "1" and o.per_lock != "auto":
        die("--per-lock-top is only meaningful with --per-lock auto")
    if o.rest and not o.per_lock:
        die("--rest is only meaningful with --per-lock")
    if o.per_lock:
        S.PER_LOCK = (_per_lock_patterns(o, lockswap, stdin), o.rest or "pthread")
        if not o.dry:
            m.msgs.say("per lock: every algorithm ALGO runs as LOCKSWAP_ALGO_MAP=%s" % S.per_lock_map("ALGO"))

    cwd = _pwd()
    m.title = quote_words(o.prog)
    m.plotname = "compare"
    m.post_hdr = ["load"]
    m.hide = ["load"]
    m.loadname = "lockswap-load"
    ref = _ref(m, cwd, stdin, o)
    for n in loads:
        one = len(loads) == 1
        m.groups.append(_group(post=[n], label="" if one else "load " + n, log="" if one else "load" + n, cwd=cwd,
                               stdin=stdin, load=int(n), ref=ref, check=o.check, cmd=o.prog))
    if not o.check:
        m.check_notes = ["output: not checked (no --check)"]
    elif o.check == "stdout":
        m.check_notes = ["output: stdout of every run compared with the native reference run's"]
    else:
        m.check_notes = ["output: %s compared with the one the native reference run wrote" % o.check]
    if o.dry:
        print("# %s dry run: %d runs (%d algorithms, %d load settings, %s repetitions)"
              % (PROG, m.total(), len(m.series), len(loads), m.reps))
        m.dry_run(print)
        return 0
    out = m.make_out(o.out, "compare-" + os.path.basename(o.prog[0]))
    m.start()
    meta = ["command: lockswap compare %s" % quote_words(args), "program: %s (in %s)" % (m.title, cwd),
            "date: %s" % utc_now()] + host_lines() + ["lockswap: %s" % lockswap]
    meta += ["environment: %s=%s" % (k, v) for k, v in os.environ.items()
             if k.startswith("LOCKSWAP_") and k != "LOCKSWAP_COMMAND"]
    meta += ["algorithms:"] + ["  " + line for line in _lockswap_list(lockswap)]
    if S.PER_LOCK:
        meta += ["per lock: each algorithm ALGO ran as LOCKSWAP_ALGO_MAP=%s" % S.per_lock_map("ALGO")]
    with open(os.path.join(out, "meta.txt"), "w") as f:
        f.write("".join(line + "\n" for line in meta))
    rc = m.run()
    if S.PER_LOCK:
        _best_map(out, o.spread)
    return rc


def _per_lock_patterns(o, lockswap, stdin):
    """--per-lock's patterns: as given, or (auto) from a profile."""
    if o.per_lock != "auto":
        pats = split_list(o.per_lock)
        for p in pats:
            if not p or "=" in p or p == "*":
                die("--per-lock: '%s' is not a pattern of a rule (FUNCTION, FILE:LINE, MODULE, MODULE+0xOFFSET)" % p)
        if not pats:
            die("--per-lock: empty list")
        return pats
    if not is_uint(o.per_lock_top) or o.per_lock_top == "0":
        die("--per-lock-top: '%s' is not a number of mutexes (1, 2, ...)" % o.per_lock_top)
    if o.dry:
        print("# --per-lock auto: not run in a dry run: lockswap profile -- PROG, then lockswap report --map "
              "--top %s; HOT stands for their patterns" % o.per_lock_top)
        return ["HOT"]
    import tempfile

    from .procs import capture

    with tempfile.TemporaryDirectory(prefix="lockswap-compare.") as t:
        prof = os.path.join(t, "profile.json")
        stdin_text = None
        if stdin != "/dev/null":
            with open(stdin) as f:
                stdin_text = f.read()
        rc, _ = capture([lockswap, "profile", "--top", "0", "-o", prof, "--"] + o.prog, stdin_text=stdin_text,
                        err="null")
        if not os.path.isfile(prof):
            die("--per-lock auto: the profile run of the program failed (exit %d)" % rc)
        rc, text = capture([lockswap, "report", prof, "--map", "--top", o.per_lock_top, "--algo", "ALGO"])
    line = [l for l in text.splitlines() if l.startswith("LOCKSWAP_ALGO_MAP=")]
    rules = line[0].split("=", 1)[1].strip("'").split(",") if line else []
    pats = [r.rsplit("=", 1)[0] for r in rules if r.endswith("=ALGO")]
    if not pats:
        die("--per-lock auto: the profile names no contended mutex a rule can tell apart:\n" + text.rstrip())
    return pats


def _best_map(out, spread="1.5"):
    """The best map of the matrix, named only if it beats glibc beyond the
    spread (summary.csv's vs_glibc: a one-sided Mann-Whitney U test);
    otherwise the line says there is no difference, with the numbers, and
    asks for more repetitions where they would tell."""
    from . import csvio
    from . import series as S
    from .table import verdict_notes

    header, rows = csvio.read(os.path.join(out, "summary.csv"))
    col = {h: i for i, h in enumerate(header)}
    u = "" if "median" in col else "_s"
    unit = "" if u == "" else " s"
    ranked = sorted((r for r in rows if r[col["algorithm"]] != S.NATIVE and r[col["rank"]]),
                    key=lambda r: int(r[col["rank"]]))
    if not ranked:
        lines = ["%s: per lock: no map ran ok" % PROG]
    else:
        b = ranked[0]
        base = [r for r in rows if r[col["algorithm"]] == S.NATIVE]
        mp = "LOCKSWAP_ALGO_MAP='%s'" % S.per_lock_map(b[col["algorithm"]])
        runs = "its %s runs %s-%s%s" % (b[col["ok"]], b[col["min" + u]], b[col["max" + u]], unit)
        if base and base[0][col["min" + u]]:
            g = base[0]
            runs += ", glibc's %s %s-%s%s" % (g[col["ok"]], g[col["min" + u]], g[col["max" + u]], unit)
        test = "one-sided Mann-Whitney U p = %s" % b[col["p_glibc"]] if b[col["p_glibc"]] else "no glibc runs to test"
        ratio = b[col["ratio_glibc"]] or "?"
        if b[col["vs_glibc"]] == "better":
            lines = ["%s: best map: %s (%s x glibc; better than glibc: %s; %s)" % (PROG, mp, ratio, runs, test)]
        else:
            lines = ["%s: per lock: no map beats glibc beyond the spread: the best median, %s, is %s x glibc (%s; %s)"
                     % (PROG, mp, ratio, runs, test)]
        lines += ["%s: per lock: %s" % (PROG, n) for n in verdict_notes(header, rows, spread)[1:]]
    for line in lines:
        print(line)
    with open(os.path.join(out, "summary.txt"), "a") as f:
        f.write("".join(line + "\n" for line in lines))


def _ref(m, cwd, stdin, o):
    from .engine import Ref

    r = Ref(log="", keep="", label=m.title + " (native)", cwd=cwd, stdin=stdin, check=o.check, cmd=o.prog)
    m.refs.append(r)
    return r


def _group(**kw):
    from .engine import Group

    return Group(keys=[], **kw)


def _lockswap_list(lockswap):
    from .procs import capture

    _, text = capture([lockswap, "--list"], err="merge")
    return text.splitlines()


def _pwd():
    """The current folder as the shell names it ($PWD, if it is this folder)."""
    pwd = os.environ.get("PWD", "")
    try:
        if pwd.startswith("/") and os.path.samefile(pwd, "."):
            return pwd
    except OSError:
        pass
    return os.getcwd()
