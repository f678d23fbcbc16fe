"""Messages, errors and the small conversions every part uses."""
import os
import sys


class Fail(Exception):
    """The matrix cannot go on: the driver prints "PROG: message" and exits
    with code (2: a usage or environment error; 1: a reference run or a build
    failed)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class Stop(Exception):
    """SIGINT (code 130) or SIGTERM (143) arrived: partial results stay."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


def die(message):
    raise Fail(2, message)


def fatal(message):
    raise Fail(1, message)


def guard(main):
    """main()'s exit code; a Ctrl-C before the matrix's own handlers are in
    place ends it quietly with 130, and a closed stdout or stderr (`| head`)
    with 141, as a shell program would end by SIGINT or SIGPIPE."""
    try:
        return main()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # so that the flush at exit cannot fail again
        os.dup2(devnull, 2)
        return 141


class Messages:
    """What the user sees on stderr: one-line messages prefixed with the
    program's name, and progress. On a terminal the progress is one line,
    rewritten; elsewhere a line per finished run."""

    def __init__(self, prog, quiet=False, tty=None):
        self.prog = prog
        self.quiet = quiet
        self.tty = os.isatty(2) if tty is None else tty
        self.open = False
        self.err = sys.stderr

    def say(self, text):
        if not self.quiet:
            self.err.write("%s: %s\n" % (self.prog, text))
            self.err.flush()

    def warn(self, text):
        self.err.write("%s: %s\n" % (self.prog, text))
        self.err.flush()

    def progress(self, text, final=False):
        if self.quiet:
            return
        if self.tty:
            self.err.write("\r\033[K%s: %s" % (self.prog, text))
            self.err.flush()
            self.open = True
        elif final:
            self.say(text)

    def progress_end(self):
        if self.open:
            self.err.write("\n")
            self.err.flush()
            self.open = False


DIGITS = frozenset("0123456789")


def is_uint(text):
    """0, 1, 2... in decimal digits only (no sign, no space)."""
    return bool(text) and set(text) <= DIGITS


def is_posint(text):
    return is_uint(text) and int(text) > 0


def is_number(text):
    """A non-negative decimal: 12, 1.5, .5 (no sign, no exponent)."""
    whole, dot, frac = text.partition(".")
    if not dot:
        return is_uint(whole)
    return (whole == "" or is_uint(whole)) and is_uint(frac)


def to_us(seconds):
    """Seconds (a decimal string or a number) to whole microseconds, rounded."""
    return int(float(seconds) * 1000000 + 0.5)


def dur(seconds):
    """45s, 3m05s, 2h10m."""
    s = int(seconds)
    if s < 60:
        return "%ds" % s
    if s < 3600:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%dh%02dm" % (s // 3600, s % 3600 // 60)


def split_list(text):
    """The items of a comma-separated list, empty ones left out."""
    return [i for i in text.split(",") if i]


SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")


def quote(word):
    """A word as a POSIX shell reads it back (for the dry run)."""
    if word and set(word) <= SAFE:
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def quote_words(words):
    return " ".join(quote(w) for w in words)


def awk_str(x):
    """A number as awk (mawk) prints it: an integral value within int range
    as an integer, anything else as %.6g. The old engine wrote its figures
    this way, and results.csv and the plots' data keep the format."""
    x = float(x)
    if x == x and x not in (float("inf"), float("-inf")) and x == int(x) and -2147483647 <= x <= 2147483647:
        return "%d" % int(x)
    return "%.6g" % x


def which(name):
    """The path of a program as the shell finds it, or None."""
    if "/" in name:
        return name if os.access(name, os.X_OK) and not os.path.isdir(name) else None
    for d in os.environ.get("PATH", "/usr/bin:/bin").split(":"):
        p = os.path.join(d or ".", name)
        if os.access(p, os.X_OK) and not os.path.isdir(p):
            return p
    return None


def read_text(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError:
        return default


def host_lines():
    """meta.txt's host and load lines."""
    u = os.uname()
    model = ""
    for line in read_text("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            model = line.split(": ", 1)[1] if ": " in line else ""
            break
    load = " ".join(read_text("/proc/loadavg").split()[:3])
    return [
        "host: %s (%s %s %s), %d CPUs: %s" % (u.nodename, u.sysname, u.release, u.machine, ncpus(), model),
        "load average: %s" % load,
    ]


def ncpus():
    """The CPUs this process may run on (nproc)."""
    try:
        return len(os.sched_getaffinity(0))
    except OSError:
        return os.cpu_count() or 1


def utc_now(fmt="%Y-%m-%d %H:%M:%S UTC"):
    import time

    return time.strftime(fmt, time.gmtime())
