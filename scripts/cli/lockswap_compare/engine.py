"""The matrix: reference runs, then groups x series x repetitions,
interleaved, then the report.

A driver (cli.py for `lockswap compare`, splash2-runner/splash2-run) sets a
Matrix's settings, adds its series, its reference runs (Ref) and its groups
(Group), and calls run(). Before the matrix, one native run per reference:
the output the checks compare with, and the time the estimate starts from.
The time limit of a run is --timeout, or --timeout-factor times the median
glibc run of the same group so far if sooner, never under 10 s; a run past it,
or a hang, skips the cell's remaining repetitions (unless --no-skip).
"""
import os

import _signal

from . import checks, csvio, limits, plots, procs, stats, table
from . import series as S
from .runner import Runner
from .util import Fail, Messages, Stop, die, dur, fatal, is_number, is_posint, quote_words, to_us, utc_now


class Ref:
    """A native reference run. Its log is logs/LOG-reference.*, its checked
    output is kept in reference/KEEP/, and meta.txt names it "reference
    LABEL"."""

    def __init__(self, log, keep, label, cwd, stdin, check, cmd):
        self.log, self.keep, self.label = log, keep, label
        self.cwd, self.stdin, self.check, self.cmd = cwd, stdin, check, list(cmd)
        self.hash = None
        self.wall = None

    @property
    def logbase(self):
        return (self.log + "-" if self.log else "") + "reference"


class Group:
    """One configuration of the program: keys and post, its CSV values for
    the key columns before and after the axis columns; label: how progress
    lines name it; log: the prefix of its log names; cwd, stdin: where and
    with what input cmd runs; load: spinning processes beside it; ref: the
    Ref whose output check is compared with; check: '' (none), 'stdout' or a
    path the command writes."""

    def __init__(self, keys, post, label, log, cwd, stdin, load, ref, check, cmd):
        self.keys, self.post, self.label, self.log = list(keys), list(post), label, log
        self.cwd, self.stdin, self.load, self.ref, self.check, self.cmd = cwd, stdin, load, ref, check, list(cmd)


class Matrix:
    def __init__(self, prog, quiet=False):
        self.msgs = Messages(prog, quiet)
        # settings, as the options give them (strings are checked by check_limits)
        self.reps = "3"
        self.timeout = "300"  # seconds: the absolute limit of a run
        self.factor = "10"  # x the median glibc run of the group (0: off)
        self.min_limit = "10"  # seconds: the factor never sets a limit below this
        self.hang = "10"  # seconds without progress
        self.skip = True  # skip a cell's remaining repetitions after over-limit or hang
        self.spread = "1.5"  # max/min above this flags a cell as noisy
        self.metric = ""  # ERE: rank by a printed figure instead of wall time
        self.higher = False  # with metric: higher is better
        self.plot = True
        self.strict = False
        self.loadname = "lockswap-load"
        self.wrong = "wrong-output"
        self.missing = "no-output"
        self.keepdir = "wrong-outputs"
        self.key_hdr = []  # CSV columns before the axis columns (the group's identity)
        self.post_hdr = []  # CSV columns between the axis columns and rep
        self.hide = []  # key columns summary.txt leaves out while constant
        self.title = ""  # plot title (default: the panel's keys)
        self.plotname = "compare"  # plot file name when there are no key columns
        self.combined = ""  # name of a figure with every panel side by side
        self.check_notes = []  # lines saying what was and was not checked
        self.series = S.SeriesList()
        self.lockswap = S.Lockswap()
        self.refs = []
        self.groups = []
        self.out = None
        self.on_exit = []
        self.runner = None
        self.load = None
        self._rx = None

    # ------------------------------------------------------------ checks

    def check_spread(self):
        if not (is_number(self.spread) and float(self.spread) >= 1):
            die("--spread: '%s' is not a number >= 1" % self.spread)

    def check_limits(self):
        if not is_posint(self.reps):
            die("--reps: '%s' is not a positive integer" % self.reps)
        if not (is_number(self.timeout) and to_us(self.timeout) > 0):
            die("--timeout: '%s' is not a positive number of seconds" % self.timeout)
        if not is_number(self.factor):
            die("--timeout-factor: '%s' is not a number" % self.factor)
        if not (is_number(self.hang) and to_us(self.hang) > 0):
            die("--hang: '%s' is not a positive number of seconds" % self.hang)
        self.check_spread()

    def check_metric(self):
        if self.higher and not self.metric:
            die("--higher-is-better needs --metric")
        if self.metric:
            try:
                self._rx = checks.compile_ere(self.metric)
            except ValueError:
                die("--metric: '%s' is not a valid extended regular expression" % self.metric)

    def total(self):
        return len(self.groups) * len(self.series) * int(self.reps)

    # ------------------------------------------------------------ dry run

    def dry_run(self, write):
        """The reference runs and every run of the matrix, as commands."""
        for r in self.refs:
            write("# reference run: %s" % r.label)
            write(_shell_line(r.cwd, r.cmd, r.stdin))
        lockswap = self.lockswap.found
        for rep in range(1, int(self.reps) + 1):
            for g in self.groups:
                for s in self.series:
                    write("# %s%s rep %d/%s, %s load processes" % (_sp(g.label), s.describe(), rep, self.reps, g.load))
                    write(_shell_line(g.cwd, s.prefix(lockswap) + g.cmd, g.stdin))

    # ------------------------------------------------------------ output folder

    def make_out(self, given, name):
        """The output folder: given, or by default NAME-<UTC date-time> under
        $LOCKSWAP_RESULTS, else ${XDG_DATA_HOME:-~/.local/share}/lockswap
        (never inside the current tree)."""
        d = given
        if not d:
            base = os.environ.get("LOCKSWAP_RESULTS")
            if not base:
                data = os.environ.get("XDG_DATA_HOME")
                if not data:
                    home = os.environ.get("HOME")
                    if not home:
                        die("HOME is not set: give --out DIR")
                    data = home + "/.local/share"
                base = data + "/lockswap"
            d = "%s/%s-%s" % (base, name, utc_now("%Y%m%d-%H%M%S"))
            n, cand = 1, d
            while os.path.lexists(cand):
                n += 1
                cand = "%s.%d" % (d, n)
            d = cand
        if os.path.lexists(os.path.join(d, "results.csv")):
            die("--out: '%s' already holds a results.csv (choose another folder)" % d)
        try:
            os.makedirs(os.path.join(d, "logs"), exist_ok=True)
        except OSError:
            die("--out: cannot create '%s'" % d)
        self.out = os.path.realpath(d)
        return self.out

    # ------------------------------------------------------------ signals, clean-up

    def start(self):
        """Installs the signal handlers: call before starting anything. A
        signal stops the current run; the matrix ends after it (130 for
        SIGINT, 143 for SIGTERM), keeping its partial results."""
        self.runner = Runner(self.msgs, to_us(self.hang) if is_number(self.hang) else 10000000)
        _signal.signal(_signal.SIGINT, lambda s, f: self.runner.on_signal(130))
        _signal.signal(_signal.SIGTERM, lambda s, f: self.runner.on_signal(143))

    def cleanup(self):
        if self.runner is not None and self.runner.cur is not None:
            procs.kill_tree(self.runner.cur)
        if self.load is not None:
            self.load.stop()
        for f in self.on_exit:
            f()

    def main(self, body):
        """Runs body(): its exit code; a Fail or a Stop is reported in one
        line, and every process started is stopped."""
        try:
            return body()
        except Fail as e:
            self.msgs.progress_end()
            self.msgs.warn(e.message)
            return e.code
        except Stop as e:
            self.msgs.progress_end()
            self.msgs.warn("%s%s" % ("interrupted" if e.code == 130 else "terminated",
                                     "; partial results in %s" % self.out if self.out else ""))
            return e.code
        finally:
            self.cleanup()

    def check_stop(self):
        if self.runner is not None:
            self.runner.check_stop()

    # ------------------------------------------------------------ the run

    def run(self):
        """The reference runs, the matrix, the report; OUT exists
        (make_out) and start() was called. The exit code."""
        out, msgs, reps = self.out, self.msgs, int(self.reps)
        total = self.total()
        timeout_us, min_us = to_us(self.timeout), to_us(self.min_limit)
        factor = float(self.factor)
        self.runner.hang_us = to_us(self.hang)
        self.load = procs.Load("%s[%s]" % (self.loadname, out))
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # glibc runs are native
        if self.metric and self._rx is None:
            self.check_metric()
        with open(os.path.join(out, "meta.txt"), "a") as f:
            f.write("limits: %ss, or %s x the median glibc run of the group (>= %ss; factor 0: off); "
                    "hang: no progress for %ss; %s\n" % (
                        self.timeout, self.factor, self.min_limit, self.hang,
                        "a cell's remaining repetitions are skipped after over-limit or hang" if self.skip
                        else "no repetition is skipped (--no-skip)"))
            if self.metric:
                f.write("metric: the number at /%s/ (%s is better)\n" % (self.metric, "higher" if self.higher else "lower"))
        with open(os.path.join(out, "checks.txt"), "w") as f:
            f.write("".join(n + "\n" for n in self.check_notes))
        with open(os.path.join(out, "report.conf"), "w") as f:
            f.write("title=%s\nplotname=%s\ncombined=%s\nhigher=%d\nmetric=%s\nspread=%s\nhide=%s\n" % (
                self.title, self.plotname, self.combined, self.higher, self.metric, self.spread, " ".join(self.hide)))

        # Reference runs: must succeed; their output is what the checks compare with.
        for r in self.refs:
            msgs.say("reference run: %s" % r.label)
            checks.clear(r.cwd, r.check)
            log = os.path.join(out, "logs", r.logbase)
            res = self.runner.run(r.cmd, r.cwd, r.stdin, log, timeout_us, "reference " + r.label, env)
            msgs.progress_end()
            if res.status != "ok":
                fatal("reference run of %s failed: %s; see %s.{out,err}" % (r.label, res.status, log))
            r.wall = res.wall
            if r.check:
                r.hash = checks.digest(r.cwd, r.check, log)
                if r.hash is None:
                    fatal("reference run of %s wrote no %s" % (r.label, checks.check_path(r.cwd, r.check)))
                checks.keep(r.cwd, r.check, log, os.path.join(out, "reference", r.keep))
                note = "reference %s: sha256 %s, %s s\n" % (r.label, r.hash, res.wall)
            else:
                note = "reference %s: %s s (output not checked)\n" % (r.label, res.wall)
            with open(os.path.join(out, "meta.txt"), "a") as f:
                f.write(note)
            if self.metric and checks.metric(self._rx, log) is None:
                fatal("--metric: /%s/ finds no number in the output of the reference run of %s; see %s.{out,err}"
                      % (self.metric, r.label, log))
            self.check_stop()
        # The estimate: every run of a group as long as its reference run.
        est = 0
        for g in self.groups:
            if g.ref is not None:
                est = int(est + float(g.ref.wall) * len(self.series) * reps + 0.5)
        msgs.say("%d runs (%d algorithms x %d configurations x %d repetitions)%s; results in %s" % (
            total, len(self.series), len(self.groups), reps,
            ", about %s if each takes as long as its reference run" % dur(est) if self.refs else "", out))

        header = self.key_hdr + list(S.COLUMNS) + self.post_hdr + ["rep", "wall_s", "user_s", "sys_s"]
        header += ["metric"] if self.metric else []
        header += ["status"]
        csv = csvio.Appender(os.path.join(out, "results.csv"), header)
        glibc_us = {}
        skip = set()
        not_ok = done = 0
        t_begin = _now_us()
        for rep in range(1, reps + 1):
            for gi, g in enumerate(self.groups):
                for si, s in enumerate(self.series):
                    run_id = (g.log + "-" if g.log else "") + s.log_name() + "-r%d" % rep
                    what = "[%d/%d] %s%s rep %d" % (done + 1, total, _sp(g.label), s.label(), rep)
                    value = ""
                    if (gi, si) in skip:
                        res = _skipped()
                    else:
                        limit = limits.limit_us(glibc_us.get(gi), factor, timeout_us, min_us)
                        checks.clear(g.cwd, g.check)
                        log = os.path.join(out, "logs", run_id)
                        self.load.start(g.load)
                        try:
                            res = self.runner.run(s.prefix(self.lockswap.found) + g.cmd, g.cwd, g.stdin, log, limit,
                                                  what, dict(env, **s.env()))
                        finally:
                            self.load.stop()
                        if res.status == "ok" and g.check:
                            h = checks.digest(g.cwd, g.check, log)
                            if h is None:
                                res.status = self.missing
                            elif h != g.ref.hash:
                                res.status = self.wrong
                                checks.keep(g.cwd, g.check, log, os.path.join(out, self.keepdir, run_id))
                        if res.status == "ok" and self.metric:
                            value = checks.metric(self._rx, log)
                            if value is None:
                                value = ""
                                res.status = "no-metric"
                        if res.status == "ok" and s.is_native:
                            glibc_us.setdefault(gi, []).append(to_us(res.wall))
                        elif res.status in ("over-limit", "hang") and self.skip:
                            skip.add((gi, si))
                    if res.status == "ok":
                        times = [res.wall, res.user, res.sys]
                    elif res.status == "over-limit":
                        times = [res.wall, res.user, res.sys]
                        not_ok += 1
                    else:
                        times = ["", "", ""]
                        not_ok += 1
                    csv.add(g.keys + list(s.values) + g.post + [str(rep)] + times + ([value] if self.metric else [])
                            + [res.status])
                    done += 1
                    now = _now_us()
                    eta = (now - t_begin) * (total - done) // done // 1000000
                    msgs.progress("%s: %s%s%s; %s elapsed, about %s left" % (
                        what, value + ", " if value else "", res.wall + " s " if res.wall else "", res.status,
                        dur((now - t_begin) // 1000000), dur(eta)), True)
        csv.close()
        msgs.progress_end()
        report(out, self.report_defaults(), self.plot, self.msgs)
        import sys

        with open(os.path.join(out, "summary.txt")) as f:
            sys.stdout.write(f.read())
        sys.stdout.write("\n%s: %d runs, %d not ok; results in %s (results.csv, summary.txt%s)\n" % (
            msgs.prog, done, not_ok, out, ", plots/" if self.plot else ""))
        sys.stdout.flush()
        return 1 if self.strict and not_ok else 0

    def report_defaults(self):
        """What report() uses where DIR has no report.conf."""
        return {"title": "", "plotname": self.plotname, "combined": self.combined, "higher": "1" if self.higher else "0",
                "metric": self.metric, "spread": self.spread, "hide": " ".join(self.hide)}


def _now_us():
    import time

    return time.monotonic_ns() // 1000


def _sp(label):
    return label + " " if label else ""


def _skipped():
    from .runner import Result

    return Result("skipped")


def _shell_line(cwd, cmd, stdin):
    return "cd %s && %s%s" % (quote_words([cwd]), quote_words(cmd), "" if stdin == "/dev/null" else " < " + quote_words([stdin]))


# ---------------------------------------------------------------- report


def report(d, defaults, plot, msgs, spread=None):
    """summary.csv, summary.txt and plots/ from DIR/results.csv, with the
    settings of DIR/report.conf (else defaults); spread: an explicit
    --spread, which wins over report.conf's."""
    results = os.path.join(d, "results.csv")
    if not os.path.isfile(results):
        die("no results.csv in '%s'" % d)
    conf = dict(defaults)
    try:
        with open(os.path.join(d, "report.conf")) as f:
            for line in f:
                k, eq, v = line.rstrip("\n").partition("=")
                if eq and k in conf:
                    conf[k] = v
    except FileNotFoundError:
        pass
    if spread is not None:
        conf["spread"] = spread
    try:
        header, rows = csvio.read(results)
        S.use_columns(header)  # the optional axes this matrix swept
        sum_header, sum_rows = stats.summarise(header, rows, conf["higher"] == "1", float(conf["spread"]))
    except (OSError, ValueError) as e:
        die("cannot read '%s': %s" % (results, e))
    csvio.write(os.path.join(d, "summary.csv"), sum_header, sum_rows)
    try:
        with open(os.path.join(d, "checks.txt")) as f:
            notes = f.read().splitlines()
    except FileNotFoundError:
        notes = []
    lines = table.render(sum_header, sum_rows, conf["hide"].split(), conf["spread"], notes)
    with open(os.path.join(d, "summary.txt"), "w") as f:
        f.write("".join(line + "\n" for line in lines))
    if plot:
        layout = stats.Layout(header)
        labels = [S.label(layout.series(r)) for r in rows]
        plots.draw(d, sum_header, sum_rows, labels, layout.npre, conf["title"], conf["plotname"], conf["combined"],
                   conf["metric"], conf["higher"] == "1", conf["spread"], msgs)
