"""One run: start the command, watch it, stop it if it must, and say how it
ended.

The command runs under timeout(1), SIGKILL 2 s past its limit: a last resort
if this program is killed outright (timeout also leads a process group of its
own, which kill_tree uses). While it runs, its process tree is sampled from
/proc every half second (limits.Watch decides); its end is seen at once
through a pidfd. Its wall time is measured around it; its CPU times are those
of its process tree once reaped (wait4), or for a run that is stopped, those
of the last sample.

Statuses: ok, over-limit, hang, crash:SIGNAME, exit:N; error if its status
is lost (it could not be reaped: a bug). An exit status above 128 is a crash
too (a shell reports a child's fatal signal that way).
"""
import os
import select
import time

from . import procs
from .limits import Watch
from .util import Stop, dur

SAMPLE_MS = 500


class Result:
    __slots__ = ("status", "wall", "user", "sys")

    def __init__(self, status, wall="", user="", sys=""):
        self.status = status
        self.wall = wall  # seconds, "%.3f"; "" when not measured
        self.user = user
        self.sys = sys


def _now_us():
    return time.monotonic_ns() // 1000


class Runner:
    """Runs commands one at a time. on_signal() (from a signal handler)
    stops the current one; run() then raises util.Stop."""

    def __init__(self, msgs, hang_us):
        self.msgs = msgs
        self.hang_us = hang_us
        self.cur = None
        self.stop = None

    def on_signal(self, code):
        self.stop = code
        if self.cur is not None:
            procs.kill_tree(self.cur)

    def check_stop(self):
        if self.stop is not None:
            raise Stop(self.stop)

    def run(self, cmd, cwd, stdin, log, limit_us, what, env):
        """cmd in cwd, stdin from the file stdin, stdout and stderr into
        log.out and log.err; limit_us: its time limit; what: how the
        progress line names it. Returns a Result."""
        backstop = limit_us // 1000000 + 2
        argv = ["timeout", "-s", "KILL", str(backstop)] + list(cmd)
        t0 = time.monotonic()
        start = _now_us()
        try:
            pid = procs.spawn(argv, cwd=cwd, stdin=stdin, stdout=log + ".out", stderr=log + ".err", env=env)
        except OSError as e:
            with open(log + ".err", "a") as f:
                f.write("%s: cannot run in %s: %s\n" % (self.msgs.prog, cwd, e.strerror))
            return Result("exit:1")
        self.cur = pid
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            fd = None
        poller = None
        if fd is not None:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
        watch = Watch(start, limit_us, self.hang_us)
        killed = None
        last = procs.Sample()
        reaped = None
        stopped = False
        try:
            while True:
                reaped = self._wait(pid, poller)
                if reaped is not None:
                    break
                if self.stop is not None and not stopped:
                    # (the signal came before self.cur was set)
                    procs.kill_tree(pid)
                    stopped = True
                if self.stop is not None or killed:
                    continue
                now = _now_us()
                if self.msgs.tty:
                    self.msgs.progress("%s: running, %s" % (what, dur((now - start) // 1000000)))
                last = procs.sample(pid)
                killed = watch.observe(now, last.ticks, last.runnable, _size(log))
                if killed:
                    procs.kill_tree(pid)
        finally:
            if fd is not None:
                os.close(fd)
            self.cur = None
        t1 = time.monotonic()
        self.check_stop()
        status, usage = reaped
        if status is None:  # someone else reaped it: its status is lost
            return Result("error")
        if killed:
            user, sys_ = last.uticks / procs.CLK_TCK, last.sticks / procs.CLK_TCK
            result = killed
        else:
            user, sys_ = usage.ru_utime, usage.ru_stime
            code = os.waitstatus_to_exitcode(status)
            if code < 0:
                result = "crash:" + procs.signal_name(-code)
            elif code > 128:
                result = "crash:" + procs.signal_name(code - 128)
            elif code:
                result = "exit:%d" % code
            else:
                result = "ok"
        return Result(result, "%.3f" % (t1 - t0), "%.3f" % user, "%.3f" % sys_)

    @staticmethod
    def _wait(pid, poller):
        """(status, usage) once pid has ended (at most SAMPLE_MS from now),
        else None; (None, None) if it cannot be reaped."""
        try:
            if poller is not None:
                if not poller.poll(SAMPLE_MS):
                    return None
                return procs.wait(pid)
            return Runner._poll_wait(pid)
        except ChildProcessError:
            return None, None

    @staticmethod
    def _poll_wait(pid):
        end = time.monotonic() + SAMPLE_MS / 1000
        while True:
            p, status, usage = os.wait4(pid, os.WNOHANG)
            if p:
                return status, usage
            if time.monotonic() >= end:
                return None
            time.sleep(0.02)


def _size(log):
    n = 0
    for f in (log + ".out", log + ".err"):
        try:
            n += os.stat(f).st_size
        except OSError:
            pass
    return n
