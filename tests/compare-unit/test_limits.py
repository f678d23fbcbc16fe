"""The time limit of a run, and the hang detector fed with synthetic /proc
samples."""
import unittest

from helper import FakeProc

from lockswap_compare import limits, procs

S = 1000000  # microseconds


class Limit(unittest.TestCase):
    def test_without_glibc_runs_the_timeout(self):
        self.assertEqual(limits.limit_us([], 10, 300 * S, 10 * S), 300 * S)
        self.assertEqual(limits.limit_us(None, 10, 300 * S, 10 * S), 300 * S)

    def test_factor_times_the_median_glibc_run(self):
        self.assertEqual(limits.limit_us([2 * S, 3 * S, 4 * S], 10, 300 * S, 10 * S), 30 * S)
        self.assertEqual(limits.limit_us([5 * S], 2.5, 300 * S, 10 * S), int(12.5 * S))

    def test_one_noisy_glibc_run_cannot_move_it(self):
        # the mean would be 20 s (limit 200 s); the median is 2 s
        self.assertEqual(limits.limit_us([2 * S, 56 * S, 2 * S], 10, 300 * S, 10 * S), 20 * S)

    def test_never_under_the_minimum(self):
        self.assertEqual(limits.limit_us([S // 10], 10, 300 * S, 10 * S), 10 * S)

    def test_never_over_the_timeout(self):
        self.assertEqual(limits.limit_us([100 * S], 10, 300 * S, 10 * S), 300 * S)
        # a timeout under the minimum wins: it is the absolute limit
        self.assertEqual(limits.limit_us([S], 10, 5 * S, 10 * S), 5 * S)

    def test_factor_zero_is_off(self):
        self.assertEqual(limits.limit_us([S], 0, 300 * S, 10 * S), 300 * S)
        self.assertEqual(limits.limit_us([S], 0.0, 300 * S, 10 * S), 300 * S)

    def test_median_of_an_even_count_is_truncated(self):
        self.assertEqual(limits.median_us([1, 2]), 1)
        self.assertEqual(limits.median_us([4, 1, 3, 2]), 2)
        self.assertEqual(limits.median_us([3, 1, 2]), 2)


class Watch(unittest.TestCase):
    def test_over_limit_is_elapsed_time_only(self):
        w = limits.Watch(0, 5 * S, 100 * S)
        self.assertIsNone(w.observe(5 * S, 1, True, 0))
        self.assertEqual(w.observe(5 * S + 1, 2, True, 0), "over-limit")

    def test_over_limit_comes_before_hang(self):
        w = limits.Watch(0, 5 * S, 1 * S)
        w.observe(S // 2, 0, False, 0)
        self.assertEqual(w.observe(6 * S, 0, False, 0), "over-limit")

    def test_no_progress_for_the_hang_time_is_a_hang(self):
        w = limits.Watch(0, 300 * S, 10 * S)
        self.assertIsNone(w.observe(S, 7, False, 100))  # first sample: progress
        self.assertIsNone(w.observe(6 * S, 7, False, 100))
        self.assertIsNone(w.observe(11 * S, 7, False, 100))  # 10 s exactly: not yet
        self.assertEqual(w.observe(11 * S + 1, 7, False, 100), "hang")

    def test_cpu_time_output_or_a_runnable_thread_is_progress(self):
        for change in ("ticks", "out", "runnable"):
            w = limits.Watch(0, 300 * S, 2 * S)
            w.observe(0, 1, False, 1)
            t = 0
            for i in range(1, 20):
                t = i * S
                ticks = 1 + i if change == "ticks" else 1
                out = 1 + i if change == "out" else 1
                self.assertIsNone(w.observe(t, ticks, change == "runnable", out), change)

    def test_a_sleeper_that_keeps_writing_is_not_hung(self):
        w = limits.Watch(0, 300 * S, 2 * S)
        for i in range(40):  # 20 s asleep, a line every 0.5 s
            self.assertIsNone(w.observe(i * S // 2, 3, False, 10 * i))

    def test_progress_restarts_the_hang_clock(self):
        w = limits.Watch(0, 300 * S, 2 * S)
        w.observe(0, 1, False, 0)
        self.assertIsNone(w.observe(2 * S, 1, False, 0))
        self.assertIsNone(w.observe(3 * S, 2, False, 0))  # one tick more
        self.assertIsNone(w.observe(5 * S, 2, False, 0))
        self.assertEqual(w.observe(5 * S + 1, 2, False, 0), "hang")


class HangFromProc(unittest.TestCase):
    """procs.sample() over a synthetic /proc, into the Watch."""

    def setUp(self):
        self.p = FakeProc()

    def tearDown(self):
        self.p.close()

    def sample(self, pid=100):
        s = procs.sample(pid, self.p.root)
        return s.ticks, s.runnable

    def test_every_thread_asleep_and_no_cpu_is_a_hang(self):
        # timeout(1) -> lockswap'd app with 3 threads, all in futex waits
        self.p.set(100, comm="timeout", utime=1, stime=1)
        self.p.set(101, ppid=100, comm="app", threads={101: "S", 102: "S", 103: "S"}, utime=50, stime=5)
        w = limits.Watch(0, 300 * S, 1 * S)
        verdicts = []
        for i in range(6):
            ticks, runnable = self.sample()
            self.assertEqual((ticks, runnable), (57, False))
            verdicts.append(w.observe(i * S // 2, ticks, runnable, 0))
        self.assertEqual(verdicts, [None, None, None, "hang", "hang", "hang"])

    def test_a_thread_running_or_in_disk_sleep_is_not_a_hang(self):
        for state in ("R", "D"):
            self.p.set(100, comm="timeout")
            self.p.set(101, ppid=100, threads={101: "S", 102: state})
            w = limits.Watch(0, 300 * S, 1 * S)
            for i in range(10):
                ticks, runnable = self.sample()
                self.assertTrue(runnable, state)
                self.assertIsNone(w.observe(i * S // 2, ticks, runnable, 0), state)

    def test_cpu_ticks_of_a_grandchild_count(self):
        self.p.set(100, comm="timeout")
        self.p.set(101, ppid=100, comm="sh")
        self.p.set(102, ppid=101, comm="app", utime=1)
        w = limits.Watch(0, 300 * S, 1 * S)
        for i in range(10):
            self.p.set(102, ppid=101, comm="app", utime=1 + i)  # busy between samples
            ticks, runnable = self.sample()
            self.assertEqual(ticks, 1 + i)
            self.assertIsNone(w.observe(i * S // 2, ticks, runnable, 0))

    def test_a_vanished_process_is_not_counted(self):
        self.p.set(100, comm="timeout", utime=3)
        self.p.set(101, ppid=100, utime=4)
        self.assertEqual(self.sample(), (7, False))
        self.p.remove(101)
        self.assertEqual(self.sample(), (3, False))


if __name__ == "__main__":
    unittest.main()
