"""Processes: /proc parsing (synthetic trees), and real ones: a process tree
stopped whole, SIGPIPE restored, load processes."""
import os
import time
import unittest

from helper import FakeProc, TempDir

from lockswap_compare import procs


def descends(p, root):
    """p's chain of parents (/proc/PID/stat's ppid) reaches root."""
    while p > 1:
        if p == root:
            return True
        try:
            with open("/proc/%d/stat" % p) as f:
                p = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


class ProcFiles(unittest.TestCase):
    def setUp(self):
        self.p = FakeProc()

    def tearDown(self):
        self.p.close()

    def test_stat_with_spaces_and_parentheses_in_the_name(self):
        self.p.set(100, comm="a) R (b", threads={100: "D"}, utime=12, stime=34)
        self.assertEqual(procs.read_stat(100, self.p.root), ("D", 12, 34))

    def test_a_missing_process_is_none(self):
        self.assertIsNone(procs.read_stat(4242, self.p.root))
        self.assertFalse(procs.alive(4242, self.p.root))
        self.assertEqual(procs.tree(4242, self.p.root), [4242])

    def test_a_zombie_is_not_alive(self):
        self.p.set(100, threads={100: "Z"})
        self.assertFalse(procs.alive(100, self.p.root))
        self.p.set(100, threads={100: "S"})
        self.assertTrue(procs.alive(100, self.p.root))

    def test_tree_parents_first(self):
        self.p.set(100)
        self.p.set(101, ppid=100)
        self.p.set(102, ppid=100)
        self.p.set(103, ppid=101)
        self.p.set(200, ppid=1)  # not ours
        self.assertEqual(procs.tree(100, self.p.root), [100, 101, 102, 103])

    def test_tree_without_children_files(self):
        self.p.children_files = False
        self.p.set(100)
        self.p.set(101, ppid=100)
        self.p.set(103, ppid=101)
        self.p.set(200, ppid=1)
        self.assertEqual(sorted(procs.tree(100, self.p.root)), [100, 101, 103])

    def test_sample_adds_ticks_and_sees_any_runnable_thread(self):
        self.p.set(100, utime=1, stime=2)
        self.p.set(101, ppid=100, threads={101: "S", 105: "S", 106: "R"}, utime=10, stime=20)
        s = procs.sample(100, self.p.root)
        self.assertEqual((s.uticks, s.sticks, s.ticks, s.runnable), (11, 22, 33, True))
        self.p.set(101, ppid=100, threads={101: "S", 105: "S", 106: "S"}, utime=10, stime=20)
        self.assertFalse(procs.sample(100, self.p.root).runnable)


class Real(TempDir):
    def test_kill_tree_stops_children_and_grandchildren(self):
        # sh -> sh -> sleep: a grandchild, which SIGKILL of the first would orphan
        pid = procs.spawn(["sh", "-c", "sh -c 'sleep 300 & wait' & wait"], stdout="/dev/null", stderr="/dev/null")
        members = []
        try:
            for _ in range(1000):
                members = procs.tree(pid)
                if len(members) >= 3:
                    break
                time.sleep(0.01)
            self.assertGreaterEqual(len(members), 3, members)
            procs.kill_tree(pid)
            procs.wait(pid)
            alive = [p for p in members[1:] if procs.alive(p)]
        finally:
            for p in members[1:]:  # whatever happened, leave nothing behind
                try:
                    os.kill(p, 9)
                except OSError:
                    pass
        self.assertEqual(alive, [])

    def test_kill_tree_stops_what_left_the_tree_but_not_timeouts_group(self):
        # a run's orphan (its parent gone, reparented) is no longer in the tree,
        # but in the process group timeout(1) leads
        mark = self.path("orphan")
        pid = procs.spawn(["timeout", "-s", "KILL", "100", "sh", "-c",
                           "(sleep 300 & echo $! > %s.tmp; mv %s.tmp %s); sleep 300" % (mark, mark, mark)],
                          stdout="/dev/null", stderr="/dev/null")
        orphan = None
        try:
            for _ in range(1000):
                if os.path.exists(mark):
                    break
                time.sleep(0.01)
            with open(mark) as f:
                orphan = int(f.read())
            # its parent, the subshell, exits just after the mark: wait
            # (60 s at most, for a busy machine) until the orphan's parent
            # chain, read from /proc/PID/stat, no longer reaches pid
            for _ in range(6000):
                if not descends(orphan, pid):
                    break
                time.sleep(0.01)
            self.assertNotIn(orphan, procs.tree(pid))
            procs.kill_tree(pid)
            procs.wait(pid)
            for _ in range(6000):  # init reaps it
                if not procs.alive(orphan):
                    break
                time.sleep(0.01)
            self.assertFalse(procs.alive(orphan))
        finally:
            if orphan and procs.alive(orphan):
                os.kill(orphan, 9)

    def test_children_get_sigpipe_back(self):
        # Python ignores SIGPIPE; a program it starts must not
        rc, out = procs.capture(["sh", "-c", "grep SigIgn /proc/self/status"])
        self.assertEqual(rc, 0)
        ignored = int(out.split()[1], 16)
        self.assertFalse(ignored & (1 << (13 - 1)), out)

    def test_capture_with_stdin_and_merged_stderr(self):
        rc, out = procs.capture(["sh", "-c", "cat; echo err >&2; exit 3"], stdin_text="in\n", err="merge")
        self.assertEqual((rc, out), (3, "in\nerr\n"))
        self.assertEqual(procs.capture(["/no/such/program"]), (127, ""))

    def test_run_appends(self):
        log = self.path("log")
        procs.run(["echo", "one"], stdout=log, append=True)
        procs.run(["sh", "-c", "echo two >&2"], stdout=log, append=True)
        with open(log) as f:
            self.assertEqual(f.read(), "one\ntwo\n")

    def test_load_processes_spin_and_stop(self):
        name = "unit-load[%s]" % self.dir
        load = procs.Load(name)
        load.start(2)
        try:
            self.assertEqual(len(load.pids), 2)
            for p in load.pids:
                with open("/proc/%d/cmdline" % p, "rb") as f:
                    self.assertIn(name.encode(), f.read())
        finally:
            pids = load.pids
            load.stop()
        self.assertEqual(load.pids, [])
        for p in pids:
            self.assertFalse(os.path.exists("/proc/%d" % p))

    def test_signal_names(self):
        self.assertEqual(procs.signal_name(11), "SIGSEGV")
        self.assertEqual(procs.signal_name(9), "SIGKILL")
        import signal

        self.assertEqual(procs.signal_name(signal.SIGRTMIN + 3), "SIGRTMIN+3")


if __name__ == "__main__":
    unittest.main()
