"""The columns of the matrix: series.

A series is one way of running the program: natively (glibc, no preload), or
under `lockswap` with a value on each axis. An axis is one setting of lockswap:
the algorithm (`-a`) and the waiting policy (`-w`), and, in a matrix that
sweeps them (use_axis), the rwlock algorithm (`-r`, --rwalgos). Each axis has a
CSV column, and is passed either as an option of `lockswap` or as an
environment variable, and has a value meaning "lockswap's own default" that
passes nothing. A new axis (a per-lock map in LOCKSWAP_ALGO_MAP) is one more
Axis in AXES (or an optional one, like RWALGO) and its parser; the runner, the
CSV, the report and the plots take the axes from here. An optional axis is a
column of results.csv only in the matrices that use it, so that the others'
files keep their layout.

Algorithm names are opaque: whatever `lockswap --names` lists is accepted at
once, anything else is handed to `lockswap -a NAME` itself to judge (so a
wrapper such as NAME+gcr works as soon as lockswap knows it), and `all` and
`locks` come from `lockswap --names`.
"""
import os

from .util import die, split_list

NATIVE = "glibc"  # the algorithm name of native runs; its axes read "-"

# --per-lock: (patterns, rest). Every lockswap series then runs with an
# algorithm map (lockswap -m): its algorithm on the mutexes the patterns name
# (the hot ones), `rest` on every other mutex; the algorithm column still
# names the series, so the CSV, the table and the plots are unchanged.
PER_LOCK = None


def per_lock_map(algorithm):
    """The map a series runs with under --per-lock."""
    patterns, rest = PER_LOCK
    return ",".join("%s=%s" % (p, algorithm) for p in patterns) + ",*=" + rest
WAITS = ("spin", "yield", "park", "default")


class Axis:
    __slots__ = ("column", "option", "env", "default")

    def __init__(self, column, option=None, env=None, default=None):
        self.column = column  # results.csv column
        self.option = option  # lockswap's option for it, or
        self.env = env  # the environment variable that carries it
        self.default = default  # the value that passes nothing (lockswap's default)


AXES = (
    Axis("algorithm", option="-a"),
    Axis("wait", option="-w", default="default"),
)
COLUMNS = tuple(a.column for a in AXES)
RWALGO = Axis("rwalgo", option="-r", default="default")
OPTIONAL = (RWALGO,)


def use_axis(axis):
    """The matrix sweeps an optional axis: it becomes one of AXES (and a
    column of results.csv)."""
    global AXES, COLUMNS
    if axis not in AXES:
        AXES = AXES + (axis,)
        COLUMNS = tuple(a.column for a in AXES)


def use_columns(header):
    """Reading a results.csv (--report): the optional axes whose columns it
    has."""
    for a in OPTIONAL:
        if a.column in header:
            use_axis(a)


class Series:
    """One column of the matrix: a value per axis, in AXES order."""

    __slots__ = ("values",)

    def __init__(self, *values):
        """One value per axis, in AXES order; the axes not given take their
        default (an optional axis a caller does not know)."""
        assert len(values) <= len(AXES)
        self.values = tuple(values) + tuple(a.default for a in AXES[len(values):])

    @classmethod
    def native(cls):
        return cls(NATIVE, *("-" for _ in AXES[1:]))

    @property
    def algorithm(self):
        return self.values[0]

    @property
    def is_native(self):
        return self.values[0] == NATIVE

    def __eq__(self, other):
        return isinstance(other, Series) and self.values == other.values

    def __hash__(self):
        return hash(self.values)

    def __repr__(self):
        return "Series%r" % (self.values,)

    def label(self):
        """How progress lines and plots name it: tas, tas/yield, glibc."""
        return label(self.values)

    def log_name(self):
        """Its part of a log file's name: tas-yield, glibc-native."""
        return "-".join("native" if v == "-" else v for v in self.values)

    def describe(self):
        """The dry run's words: "tas wait=yield"."""
        return " ".join([self.values[0]] + ["%s=%s" % (a.column, v) for a, v in zip(AXES[1:], self.values[1:])])

    def prefix(self, lockswap):
        """The words before the program: none natively, else lockswap's."""
        if self.is_native:
            return []
        words = [lockswap]
        for axis, v in zip(AXES, self.values):
            if axis.option and v != axis.default:
                words += [axis.option, v]
        if PER_LOCK:
            words += ["-m", per_lock_map(self.algorithm)]
        return words + ["--"]

    def env(self):
        """The environment variables the series sets (axes carried that way)."""
        if self.is_native:
            return {}
        return {a.env: v for a, v in zip(AXES, self.values) if a.env and v != a.default}


def axis_span(header):
    """(first, last): the indexes of the axis columns in a CSV header, from
    "algorithm" on (an optional axis's column counts even when this matrix
    does not use it)."""
    known = set(COLUMNS) | {a.column for a in OPTIONAL}
    first = last = header.index("algorithm")
    while last + 1 < len(header) and header[last + 1] in known:
        last += 1
    return first, last


def label(values):
    """A series' name from its axis values (also from a CSV row's)."""
    return values[0] + "".join("/" + v for a, v in zip(AXES[1:], values[1:]) if v not in ("-", a.default))


class Lockswap:
    """The lockswap command: the first executable file among an explicit
    choice (--lockswap, an error if it is not one) and the candidates; found
    only when some series needs it."""

    def __init__(self, explicit="", candidates=(), hint=""):
        self.explicit = explicit
        self.candidates = list(candidates)
        self.hint = hint
        self._path = None
        self._names = {}

    @property
    def found(self):
        return self._path

    def path(self):
        if self._path:
            return self._path
        for c in [self.explicit] + self.candidates:
            if c and os.path.isfile(c) and os.access(c, os.X_OK):
                self._path = os.path.realpath(c)
                return self._path
            if c and c == self.explicit:
                die("--lockswap: '%s' is not an executable file" % c)
        die("lockswap not found (run make in the lockswap repository, or give --lockswap PATH)" + self.hint)

    def names(self, cap=None, family=None):
        """`lockswap --names [FAMILY] [--cap CAP]`, one name a line (FAMILY:
        rwlock, spin; the mutexes' by default)."""
        key = (cap, family)
        if key not in self._names:
            from . import procs

            argv = [self.path(), "--names"] + ([family] if family else []) + (["--cap", cap] if cap else [])
            rc, out = procs.capture(argv)
            if rc != 0:
                die("'%s --names%s' failed" % (self.path(), " " + family if family else ""))
            self._names[key] = out.split()
        return self._names[key]

    def accepts(self, name, option="-a"):
        """Whether `lockswap -a NAME` (or -r NAME) runs a program (lockswap
        judges names it does not list, such as wrappers)."""
        from . import procs

        rc, _ = procs.capture([self.path(), option, name, "--", "true"], err="null")
        return rc == 0


class SeriesList:
    """The series of a matrix in order, native first (its times set the
    ratios and the time limit), without duplicates."""

    def __init__(self):
        self.items = []

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)

    def add(self, series):
        if series in self.items:
            return
        if series.is_native:
            self.items.insert(0, series)
        else:
            self.items.append(series)

    def add_lockswap(self, name, waits, rwalgos=None):
        """NAME with each waiting policy (and each rwlock algorithm, when the
        matrix sweeps them)."""
        for rw in rwalgos or [None]:
            for w in waits:
                self.add(Series(name, w) if rw is None else Series(name, w, rw))


def check_wait(policy, context, suffix=""):
    if policy not in WAITS:
        die("%s '%s'%s (valid: %s)" % (context, policy, suffix, ", ".join(WAITS)))


def parse_waits(text):
    """--wait LIST: the policies for algorithms given without /WAIT."""
    waits = split_list(text)
    if not waits:
        die("--wait: empty list")
    for w in waits:
        check_wait(w, "--wait: unknown policy")
    return waits


def parse_rwalgos(text, lockswap):
    """--rwalgos LIST: rwlock algorithm names (NAME, all: every name
    `lockswap --names rwlock` lists, locks: every real lock of them), in
    order, without duplicates; a name lockswap does not list is asked
    about (`lockswap -r NAME`), as for --algos."""
    items = split_list(text)
    if not items:
        die("--rwalgos: empty list")
    names = []
    for item in items:
        if item == "all":
            names += lockswap.names(family="rwlock")
        elif item == "locks":
            names += lockswap.names(cap="lock", family="rwlock")
        elif item in lockswap.names(family="rwlock") or lockswap.accepts(item, "-r"):
            names.append(item)
        else:
            die("--rwalgos: unknown rwlock algorithm '%s' (valid: %s, all, locks)"
                % (item, ", ".join(lockswap.names(family="rwlock"))))
    return [n for i, n in enumerate(names) if n not in names[:i]]


def parse_algos(text, waits, lockswap, series, rwalgos=None):
    """--algos LIST into series (a SeriesList): glibc, NAME, NAME/WAIT, all
    (glibc, then every name lockswap lists), locks (every real lock); each
    with every name of rwalgos, when the matrix sweeps rwlock algorithms."""
    items = split_list(text)
    if not items:
        die("--algos: empty list")
    for item in items:
        if item == NATIVE or item.startswith(NATIVE + "/"):
            series.add(Series.native())
        elif item == "all":
            series.add(Series.native())
            for a in lockswap.names():
                series.add_lockswap(a, waits, rwalgos)
        elif item == "locks":
            for a in lockswap.names("lock"):
                series.add_lockswap(a, waits, rwalgos)
        else:
            a, slash, w = item.partition("/")
            if a not in lockswap.names() and not (a and lockswap.accepts(a)):
                die("--algos: unknown algorithm '%s' (valid: %s, %s, all, locks)" % (a, NATIVE, ", ".join(lockswap.names())))
            if slash:
                check_wait(w, "--algos: unknown wait policy", " in '%s'" % item)
                series.add_lockswap(a, [w], rwalgos)
            else:
                series.add_lockswap(a, waits, rwalgos)
    if not len(series):
        die("--algos: no algorithm to run")
    return series
