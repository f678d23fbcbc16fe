"""The columns of the matrix: series.

A series is one way of running the program: natively (glibc, no preload), or
under `lockswap` with a value on each axis. An axis is one setting of lockswap:
today the algorithm (`-a`) and the waiting policy (`-w`). Each axis has a CSV
column, and is passed either as an option of `lockswap` or as an environment
variable, and has a value meaning "lockswap's own default" that passes
nothing. A new axis (an rwlock algorithm in LOCKSWAP_RWALGO, a per-lock map in
LOCKSWAP_ALGO_MAP) is one more Axis in AXES and its parser in parse_algos; the
runner, the CSV, the report and the plots take the axes from here.

Algorithm names are opaque: whatever `lockswap --names` lists is accepted at
once, anything else is handed to `lockswap -a NAME` itself to judge (so a
wrapper such as NAME+gcr works as soon as lockswap knows it), and `all` and
`locks` come from `lockswap --names`.
"""
import os

from .util import die, split_list

NATIVE = "glibc"  # the algorithm name of native runs; its axes read "-"
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


class Series:
    """One column of the matrix: a value per axis, in AXES order."""

    __slots__ = ("values",)

    def __init__(self, *values):
        assert len(values) == len(AXES)
        self.values = tuple(values)

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
        return words + ["--"]

    def env(self):
        """The environment variables the series sets (axes carried that way)."""
        if self.is_native:
            return {}
        return {a.env: v for a, v in zip(AXES, self.values) if a.env and v != a.default}


def axis_span(header):
    """(first, last): the indexes of the axis columns in a CSV header, from
    "algorithm" on."""
    first = last = header.index("algorithm")
    while last + 1 < len(header) and header[last + 1] in COLUMNS:
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

    def names(self, cap=None):
        """`lockswap --names [--cap CAP]`, one name a line."""
        if cap not in self._names:
            from . import procs

            argv = [self.path(), "--names"] + (["--cap", cap] if cap else [])
            rc, out = procs.capture(argv)
            if rc != 0:
                die("'%s --names' failed" % self.path())
            self._names[cap] = out.split()
        return self._names[cap]

    def accepts(self, name):
        """Whether `lockswap -a NAME` runs a program (lockswap judges names
        it does not list, such as wrappers)."""
        from . import procs

        rc, _ = procs.capture([self.path(), "-a", name, "--", "true"], err="null")
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

    def add_lockswap(self, name, waits):
        """NAME with each waiting policy."""
        for w in waits:
            self.add(Series(name, w))


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


def parse_algos(text, waits, lockswap, series):
    """--algos LIST into series (a SeriesList): glibc, NAME, NAME/WAIT, all
    (glibc, then every name lockswap lists), locks (every real lock)."""
    items = split_list(text)
    if not items:
        die("--algos: empty list")
    for item in items:
        if item == NATIVE or item.startswith(NATIVE + "/"):
            series.add(Series.native())
        elif item == "all":
            series.add(Series.native())
            for a in lockswap.names():
                series.add_lockswap(a, waits)
        elif item == "locks":
            for a in lockswap.names("lock"):
                series.add_lockswap(a, waits)
        else:
            a, slash, w = item.partition("/")
            if a not in lockswap.names() and not (a and lockswap.accepts(a)):
                die("--algos: unknown algorithm '%s' (valid: %s, %s, all, locks)" % (a, NATIVE, ", ".join(lockswap.names())))
            if slash:
                check_wait(w, "--algos: unknown wait policy", " in '%s'" % item)
                series.add(Series(a, w))
            else:
                series.add_lockswap(a, waits)
    if not len(series):
        die("--algos: no algorithm to run")
    return series
