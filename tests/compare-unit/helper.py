"""Shared by the unit tests of the compare engine (tests/compare-unit.bats
runs them: /usr/bin/python3 -m unittest in this folder). Puts
scripts/cli on sys.path, so that `import lockswap_compare` is the source
tree's, and builds synthetic /proc trees."""
import os
import shutil
import sys
import tempfile
import unittest

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts", "cli"))


def stat_line(pid, comm, state, ppid, utime, stime):
    """A /proc/PID/stat line: pid (comm) state ppid pgrp session tty tpgid
    flags minflt cminflt majflt cmajflt utime stime ..."""
    return "%d (%s) %s %d %d %d 0 -1 4194560 10 0 0 0 %d %d 0 0 20 0 1 0 100 1000 100\n" % (
        pid, comm, state, ppid, pid, pid, utime, stime)


class FakeProc:
    """A /proc of our making: processes with threads, states, CPU ticks and
    children, rewritten between samples as a test needs."""

    def __init__(self, children_files=True):
        self.root = tempfile.mkdtemp(prefix="fakeproc.")
        self.children_files = children_files
        self.procs = {}

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def set(self, pid, ppid=1, comm="prog", threads=None, utime=0, stime=0):
        """Process pid; threads: {tid: state} (default: one thread, S)."""
        self.procs[pid] = dict(ppid=ppid, comm=comm, threads=threads or {pid: "S"}, utime=utime, stime=stime)
        self.write()

    def remove(self, pid):
        del self.procs[pid]
        self.write()

    def write(self):
        for d in os.listdir(self.root):
            shutil.rmtree(os.path.join(self.root, d))
        for pid, p in self.procs.items():
            base = os.path.join(self.root, str(pid))
            main_state = p["threads"].get(pid, "S")
            os.makedirs(os.path.join(base, "task"))
            with open(os.path.join(base, "stat"), "w") as f:
                f.write(stat_line(pid, p["comm"], main_state, p["ppid"], p["utime"], p["stime"]))
            kids = [c for c, q in self.procs.items() if q["ppid"] == pid]
            for i, (tid, state) in enumerate(p["threads"].items()):
                t = os.path.join(base, "task", str(tid))
                os.makedirs(t)
                with open(os.path.join(t, "stat"), "w") as f:
                    f.write(stat_line(tid, p["comm"], state, p["ppid"], 0, 0))
                if self.children_files:
                    with open(os.path.join(t, "children"), "w") as f:
                        f.write("".join("%d " % c for c in kids) if i == 0 else "")


class TempDir(unittest.TestCase):
    """A test case with a fresh folder in self.dir."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="compare-unit.")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def write(self, name, text, mode="w"):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, mode) as f:
            f.write(text)
        return p
