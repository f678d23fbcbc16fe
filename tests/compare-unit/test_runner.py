"""One run, with real processes: statuses, times, limits, a stop."""
import os
import threading
import time
import unittest

from helper import TempDir

from lockswap_compare import procs
from lockswap_compare.runner import Runner
from lockswap_compare.util import Messages, Stop

S = 1000000


class Run(TempDir):
    def run_cmd(self, cmd, limit_us=60 * S, hang_us=60 * S, stdin="/dev/null", cwd=None, env=None):
        r = Runner(Messages("unit", quiet=True, tty=False), hang_us)
        self.runner = r
        return r.run(cmd, cwd or self.dir, stdin, self.path("log"), limit_us, "unit run", env or dict(os.environ))

    def read(self, name):
        with open(self.path(name)) as f:
            return f.read()

    def test_ok_with_its_output_times_stdin_and_folder(self):
        self.write("in.txt", "from stdin\n")
        res = self.run_cmd(["sh", "-c", "cat; pwd; echo oops >&2"], stdin=self.path("in.txt"))
        self.assertEqual(res.status, "ok")
        self.assertEqual(self.read("log.out"), "from stdin\n%s\n" % self.dir)
        self.assertEqual(self.read("log.err"), "oops\n")
        for t in (res.wall, res.user, res.sys):
            self.assertRegex(t, r"^[0-9]+\.[0-9]{3}$")

    def test_exit_status_and_crashes(self):
        self.assertEqual(self.run_cmd(["sh", "-c", "exit 3"]).status, "exit:3")
        self.assertEqual(self.run_cmd(["sh", "-c", "kill -SEGV $$"]).status, "crash:SIGSEGV")
        # a shell reporting its child's fatal signal
        self.assertEqual(self.run_cmd(["sh", "-c", "exit 134"]).status, "crash:SIGABRT")
        self.assertEqual(self.run_cmd(["/no/such/program"]).status, "exit:127")  # timeout(1) says so

    def test_a_busy_run_past_its_limit_is_over_limit_with_its_times(self):
        res = self.run_cmd(["sh", "-c", "while :; do :; done"], limit_us=S // 2, hang_us=S // 4)
        self.assertEqual(res.status, "over-limit")
        self.assertGreaterEqual(float(res.wall), 0.5)
        self.assertGreater(float(res.user) + float(res.sys), 0)

    def test_a_run_asleep_for_ever_is_a_hang_long_before_its_limit(self):
        start = time.monotonic()
        res = self.run_cmd(["sh", "-c", "sleep 300 & wait"], limit_us=100 * S, hang_us=S // 2)
        self.assertEqual(res.status, "hang")
        self.assertLess(time.monotonic() - start, 50)
        self.assertRegex(res.wall, r"^[0-9]+\.[0-9]{3}$")

    def test_a_stop_ends_the_run_and_raises(self):
        mark = self.path("started")
        timer = threading.Thread(target=self._stop_when, args=(mark,))
        timer.start()
        with self.assertRaises(Stop) as e:
            self.run_cmd(["sh", "-c", "echo $$ > %s; sleep 300 & wait" % mark])
        timer.join()
        self.assertEqual(e.exception.code, 143)
        pid = int(self.read("started"))
        self.assertFalse(procs.alive(pid))

    def _stop_when(self, mark):
        for _ in range(1000):
            if os.path.exists(mark) and os.path.getsize(mark) and getattr(self, "runner", None) and self.runner.cur:
                break
            time.sleep(0.01)
        self.runner.on_signal(143)


if __name__ == "__main__":
    unittest.main()
