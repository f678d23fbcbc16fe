"""Processes: starting them, reading /proc, stopping a process tree, and the
load processes.

Programs start through posix_spawn (no fork of this interpreter, and no import
of subprocess on the start-up path), with SIGPIPE and SIGXFSZ back at their
defaults (Python ignores both, and a child would inherit that).

Reading /proc of a process that may have exited at any moment: every read
tolerates a vanished file, and a process that is gone is simply not counted.
The functions take the /proc root as an argument so that the unit tests can
feed them a synthetic tree.
"""
import os
import time

import _signal

PROC = "/proc"
CLK_TCK = os.sysconf("SC_CLK_TCK") if "SC_CLK_TCK" in os.sysconf_names else 100
_SIGDEF = (_signal.SIGPIPE, _signal.SIGXFSZ)


def spawn(argv, cwd=None, stdin=None, stdout=None, stderr=None, env=None, fds=None):
    """Starts argv (argv[0] searched on PATH) and returns its pid. stdin,
    stdout, stderr: file names (relative to cwd), opened for reading,
    writing (truncated) and writing; fds: {child fd: our fd} to pass as is."""
    actions = []
    for fd, path, flags in (
        (0, stdin, os.O_RDONLY),
        (1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        if path is not None:
            actions.append((os.POSIX_SPAWN_OPEN, fd, path, flags, 0o666))
    for child, ours in (fds or {}).items():
        actions.append((os.POSIX_SPAWN_DUP2, ours, child))
    back = None
    if cwd is not None:
        back = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.chdir(cwd)
        except OSError:
            os.close(back)
            raise
    try:
        return os.posix_spawnp(argv[0], argv, os.environ if env is None else env, file_actions=actions, setsigdef=_SIGDEF)
    finally:
        if back is not None:
            os.fchdir(back)
            os.close(back)


def wait(pid):
    """Reaps pid: (wait status, resource usage of it and its reaped children)."""
    _, status, usage = os.wait4(pid, 0)
    return status, usage


def capture(argv, cwd=None, stdin_text=None, err=None):
    """Runs argv to its end: (exit code, its stdout as text). Its stderr is
    ours (err None), goes with its stdout ("merge") or nowhere ("null"). An
    argv that cannot start gives (127, "")."""
    r, w = os.pipe()
    fds = {1: w, 2: w} if err == "merge" else {1: w}
    inr = None
    try:
        if stdin_text is not None:
            inr, inw = os.pipe()
            with os.fdopen(inw, "w") as f:  # small: fits in the pipe
                f.write(stdin_text)
            fds[0] = inr
        try:
            pid = spawn(argv, cwd=cwd, stdin=None if stdin_text is not None else "/dev/null",
                        stderr="/dev/null" if err == "null" else None, fds=fds)
        except OSError:
            os.close(w)
            os.close(r)
            return 127, ""
    finally:
        if inr is not None:
            os.close(inr)
    os.close(w)
    chunks = []
    with os.fdopen(r, "rb") as f:
        for chunk in iter(lambda: f.read(65536), b""):
            chunks.append(chunk)
    status, _ = wait(pid)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "surrogateescape")


def run(argv, cwd=None, stdout=None, stderr=None, append=False):
    """Runs argv to its end with its output into a file (appended with
    append): its exit code."""
    if append:
        fd = os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        try:
            pid = spawn(argv, cwd=cwd, stdin="/dev/null", fds={1: fd, 2: fd})
        finally:
            os.close(fd)
    else:
        pid = spawn(argv, cwd=cwd, stdin="/dev/null", stdout=stdout, stderr=stderr)
    status, _ = wait(pid)
    return os.waitstatus_to_exitcode(status)


# ---------------------------------------------------------------- /proc


def read_stat(pid, proc=PROC, task=None):
    """(state, user ticks, system ticks) of a process (or one of its
    threads), or None if it is gone."""
    path = "%s/%s/stat" % (proc, pid) if task is None else "%s/%s/task/%s/stat" % (proc, pid, task)
    try:
        with open(path, "rb") as f:
            line = f.read()
        rest = line[line.rindex(b")") + 2 :].split()
        return rest[0].decode(), int(rest[11]), int(rest[12])
    except (OSError, ValueError, IndexError):
        return None


def _ppid(pid, proc):
    try:
        with open("%s/%s/stat" % (proc, pid), "rb") as f:
            line = f.read()
        return int(line[line.rindex(b")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def children(pid, proc=PROC):
    """The children of pid: from /proc/PID/task/*/children, or where the
    kernel has no such file, by the parent field of every process."""
    try:
        tasks = os.listdir("%s/%s/task" % (proc, pid))
    except OSError:
        return []
    kids = []
    has_file = False
    for t in tasks:
        try:
            with open("%s/%s/task/%s/children" % (proc, pid, t), "rb") as f:
                kids += [int(k) for k in f.read().split()]
            has_file = True
        except FileNotFoundError:
            pass
        except (OSError, ValueError):
            has_file = True
    if has_file or not tasks:
        return kids
    out = []
    for p in os.listdir(proc):
        if p.isdigit() and _ppid(p, proc) == int(pid):
            out.append(int(p))
    return out


def tree(pid, proc=PROC):
    """pid and its descendants, parents first."""
    out = [int(pid)]
    i = 0
    while i < len(out):
        for k in children(out[i], proc):
            if k not in out:
                out.append(k)
        i += 1
    return out


class Sample:
    """A process tree at one moment: CPU ticks used so far, and whether any
    of its threads is running or in uninterruptible sleep (so progress is
    possible)."""

    __slots__ = ("uticks", "sticks", "runnable")

    def __init__(self, uticks=0, sticks=0, runnable=False):
        self.uticks = uticks
        self.sticks = sticks
        self.runnable = runnable

    @property
    def ticks(self):
        return self.uticks + self.sticks


def sample(pid, proc=PROC):
    s = Sample()
    for p in tree(pid, proc):
        st = read_stat(p, proc)
        if st is None:
            continue
        s.uticks += st[1]
        s.sticks += st[2]
        if s.runnable:
            continue
        try:
            tasks = os.listdir("%s/%s/task" % (proc, p))
        except OSError:
            continue
        for t in tasks:
            ts = read_stat(p, proc, t)
            if ts is not None and ts[0] in ("R", "D"):
                s.runnable = True
                break
    return s


def alive(pid, proc=PROC):
    """It exists and is not a zombie."""
    st = read_stat(pid, proc)
    return st is not None and st[0] != "Z"


def kill_tree(pid):
    """SIGKILL pid, its descendants and its process group (timeout(1), the
    head of every run, leads one), then wait (at most 2 s in all) until each
    is dead: SIGKILL is asynchronous."""
    procs = tree(pid)
    try:
        os.killpg(pid, _signal.SIGKILL)
    except OSError:
        pass
    for p in procs:
        try:
            os.kill(p, _signal.SIGKILL)
        except OSError:
            pass
    deadline = time.monotonic() + 2
    for p in procs:
        while alive(p) and time.monotonic() < deadline:
            time.sleep(0.01)


def signal_name(n):
    """SIGSEGV, SIGRTMIN+3, or the number."""
    import signal

    try:
        return signal.Signals(n).name
    except ValueError:
        if signal.SIGRTMIN < n < signal.SIGRTMAX:
            return "SIGRTMIN+%d" % (n - signal.SIGRTMIN)
        return str(n)


# ---------------------------------------------------------------- load


SPIN_SRC = 'while [ -d "/proc/$1" ]; do for ((i = 0; i < 200000; i++)); do :; done; done'


class Load:
    """Spinning processes beside a run: bash busy loops, named NAME[OUT] so
    that they can be found (pgrep -f), each ending by itself once the
    process that started it is gone."""

    def __init__(self, name):
        self.name = name
        self.pids = []

    def start(self, n):
        me = str(os.getpid())
        for _ in range(n):
            self.pids.append(spawn(["bash", "-c", SPIN_SRC, self.name, me], stdin="/dev/null",
                                   stdout="/dev/null", stderr="/dev/null"))
        # posix_spawn returns as the child's exec replaces its memory, before
        # the kernel has set up its command line: wait (a few seconds at
        # most) until each is bash, spinning under its name.
        name = self.name.encode()
        deadline = time.monotonic() + 5
        for p in self.pids:
            while time.monotonic() < deadline:
                try:
                    with open("/proc/%d/cmdline" % p, "rb") as f:
                        if name in f.read():
                            break
                except OSError:
                    break
                time.sleep(0.002)

    def stop(self):
        for p in self.pids:
            try:
                os.kill(p, _signal.SIGKILL)
            except OSError:
                pass
        for p in self.pids:
            try:
                os.waitpid(p, 0)
            except ChildProcessError:
                pass
        self.pids = []
