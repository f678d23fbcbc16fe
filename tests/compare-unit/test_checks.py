"""Output checks (clear, digest, keep) and the --metric figure."""
import hashlib
import os
import unittest

from helper import TempDir

from lockswap_compare import checks


def sha(data):
    return hashlib.sha256(data).hexdigest()


class Digest(TempDir):
    def test_stdout(self):
        self.write("log.out", "hello\n")
        self.assertEqual(checks.digest(self.dir, "stdout", self.path("log")), sha(b"hello\n"))

    def test_a_file_relative_to_the_run_folder_or_absolute(self):
        self.write("run/out.ppm", "P6 pixels")
        self.assertEqual(checks.digest(self.path("run"), "out.ppm", "x"), sha(b"P6 pixels"))
        self.assertEqual(checks.digest("/nowhere", self.path("run", "out.ppm"), "x"), sha(b"P6 pixels"))

    def test_no_file_or_an_empty_folder_is_none(self):
        self.assertIsNone(checks.digest(self.dir, "missing.txt", "x"))
        os.mkdir(self.path("img"))
        self.assertIsNone(checks.digest(self.dir, "img", "x"))

    def test_a_folder_by_names_and_contents(self):
        self.write("img/b", "2")
        self.write("img/a", "1")
        listing = "%s  a\n%s  b\n" % (sha(b"1"), sha(b"2"))  # as `sha256sum *` lists them
        d = checks.digest(self.dir, "img", "x")
        self.assertEqual(d, sha(listing.encode()))
        os.rename(self.path("img/b"), self.path("img/c"))
        self.assertNotEqual(checks.digest(self.dir, "img", "x"), d)

    def test_one_byte_differs(self):
        self.write("f", "abc")
        d = checks.digest(self.dir, "f", "x")
        self.write("f", "abd")
        self.assertNotEqual(checks.digest(self.dir, "f", "x"), d)


class ClearKeep(TempDir):
    def test_clear_removes_the_file_or_a_folders_contents(self):
        self.write("out.txt", "stale")
        checks.clear(self.dir, "out.txt")
        self.assertFalse(os.path.exists(self.path("out.txt")))
        checks.clear(self.dir, "out.txt")  # nothing there: fine
        self.write("img/a", "1")
        self.write("img/sub/b", "2")
        checks.clear(self.dir, "img")
        self.assertEqual(os.listdir(self.path("img")), [])

    def test_clear_leaves_stdout_and_no_check_alone(self):
        self.write("log.out", "x")
        checks.clear(self.dir, "stdout")
        checks.clear(self.dir, "")
        self.assertTrue(os.path.exists(self.path("log.out")))

    def test_keep_copies_what_was_checked(self):
        self.write("log.out", "printed\n")
        checks.keep(self.dir, "stdout", self.path("log"), self.path("k1"))
        with open(self.path("k1", "stdout")) as f:
            self.assertEqual(f.read(), "printed\n")
        self.write("run/result.txt", "r")
        checks.keep(self.path("run"), "result.txt", "x", self.path("k2"))
        self.assertEqual(os.listdir(self.path("k2")), ["result.txt"])
        self.write("img/image.ppm", "P6")
        self.write("img/sub/x", "y")
        checks.keep(self.dir, "img", "x", self.path("k3"))
        self.assertEqual(sorted(os.listdir(self.path("k3"))), ["image.ppm", "sub"])
        self.assertTrue(os.path.isfile(self.path("k3", "sub", "x")))


class Metric(TempDir):
    def metric(self, regex, out, err=""):
        self.write("log.out", out)
        self.write("log.err", err)
        return checks.metric(checks.compile_ere(regex), self.path("log"))

    def test_the_last_matching_line(self):
        self.assertEqual(self.metric("score:", "score: 1\nscore: 2\nother 9\n"), "2")

    def test_first_number_in_the_match_else_after_it(self):
        self.assertEqual(self.metric("score: [0-9]+", "score: 12 of 40\n"), "12")
        self.assertEqual(self.metric("score:?", "some text, score: 300 units 7\n"), "300")
        self.assertEqual(self.metric("x", "4 x 5\n"), "5")  # not the one before

    def test_a_matching_line_without_a_number_does_not_count(self):
        self.assertEqual(self.metric("total time:", "total time: 0.2138s\ntotal time: n/a\n"), "0.2138")

    def test_stderr_when_stdout_has_none(self):
        self.assertEqual(self.metric("throughput", "nothing\n", "throughput 1.5e6 ops/s\n"), "1500000")
        self.assertEqual(self.metric("throughput", "throughput 3\n", "throughput 4\n"), "3")
        self.assertIsNone(self.metric("throughput", "nothing\n", "no figure\n"))

    def test_numbers_as_awk_prints_them(self):
        for text, want in (("12", "12"), ("12.50", "12.5"), ("-0.25", "-0.25"), (".5", "0.5"), ("1e3", "1000"),
                           ("3.14159265", "3.14159"), ("2147483647", "2147483647"), ("2147483648", "2.14748e+09"),
                           ("+7", "7"), ("-0", "0")):
            self.assertEqual(self.metric("v=", "v=%s\n" % text), want, text)

    def test_posix_bracket_expressions(self):
        self.assertEqual(self.metric("n[[:space:]]*[[:digit:]]", "n 5\n"), "5")
        self.assertEqual(self.metric("[]a]+:", "]a]: 6\n"), "6")
        self.assertEqual(self.metric("[^[:alpha:] ]+ ok", "abc 42 ok\n"), "42")
        self.assertEqual(self.metric("a[[.-.]]b", "a-b 8\n"), "8")

    def test_invalid_expressions(self):
        for bad in ("a(", "[[:nosuch:]]", "[abc", "*a"):
            with self.assertRaises(ValueError, msg=bad):
                checks.compile_ere(bad)


class Ere(unittest.TestCase):
    def test_translation(self):
        self.assertEqual(checks.ere_to_python("a[[:digit:]]b"), "a[0-9]b")
        self.assertEqual(checks.ere_to_python("[]x]"), "[\\]x]")
        self.assertEqual(checks.ere_to_python("[^a-z&|~]"), "[^a-z\\&\\|\\~]")
        self.assertEqual(checks.ere_to_python("\\<word\\>"), "\\bword\\b")
        self.assertEqual(checks.ere_to_python("x{2,3}(y|z)+$"), "x{2,3}(y|z)+$")


if __name__ == "__main__":
    unittest.main()
