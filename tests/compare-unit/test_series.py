"""Series: the columns of the matrix, --algos and --wait, opaque algorithm
names, and an axis added the way a new one would be."""
import os
import unittest

from helper import TempDir

from lockswap_compare import series as S
from lockswap_compare import stats
from lockswap_compare.util import Fail

FAKE = """#!/bin/sh
# a lockswap that lists tas, mcs (lock: both) and pthread, and also runs
# NAME+gcr for a listed NAME (as a wrapper would); its rwlock family is
# pthread and central (lock), and it runs central+bravo too
case "$1" in
--names) case "${2:-}" in
    rwlock) if [ "${3:-}" = --cap ]; then printf 'central\\n'; else printf 'pthread\\ncentral\\n'; fi ;;
    --cap) printf 'tas\\nmcs\\n' ;;
    *) printf 'pthread\\ntas\\nmcs\\n' ;;
    esac ;;
-a) case "$2" in tas|mcs|pthread|tas+gcr|mcs+gcr) exit 0 ;; esac
    echo "lockswap: unknown algorithm '$2'" >&2; exit 2 ;;
-r) case "$2" in pthread|central|central+bravo) exit 0 ;; esac
    echo "lockswap: unknown rwlock algorithm '$2'" >&2; exit 2 ;;
*) exit 2 ;;
esac
"""


class Lockswap(TempDir):
    def setUp(self):
        super().setUp()
        self.exe = self.write("lockswap", FAKE)
        os.chmod(self.exe, 0o755)
        self.ls = S.Lockswap(self.exe)

    def parse(self, algos, waits=("default",)):
        return [s.values for s in S.parse_algos(algos, list(waits), self.ls, S.SeriesList())]

    def test_all_is_glibc_then_every_listed_name(self):
        self.assertEqual(self.parse("all"), [("glibc", "-"), ("pthread", "default"), ("tas", "default"),
                                             ("mcs", "default")])

    def test_locks_and_waits(self):
        self.assertEqual(self.parse("locks", ["spin", "park"]),
                         [("tas", "spin"), ("tas", "park"), ("mcs", "spin"), ("mcs", "park")])

    def test_name_slash_wait_glibc_first_no_duplicates(self):
        self.assertEqual(self.parse("tas/yield,mcs,glibc,tas/yield,glibc/spin"),
                         [("glibc", "-"), ("tas", "yield"), ("mcs", "default")])

    def test_a_name_lockswap_runs_but_does_not_list_is_passed_as_it_is(self):
        ss = S.parse_algos("mcs+gcr/spin", ["default"], self.ls, S.SeriesList())
        s = list(ss)[0]
        self.assertEqual(s.prefix(self.ls.path()), [self.ls.path(), "-a", "mcs+gcr", "-w", "spin", "--"])

    def test_unknown_names_and_policies(self):
        with self.assertRaises(Fail) as e:
            self.parse("tas,nosuch")
        self.assertEqual((e.exception.code, e.exception.message),
                         (2, "--algos: unknown algorithm 'nosuch' (valid: glibc, pthread, tas, mcs, all, locks)"))
        with self.assertRaises(Fail) as e:
            self.parse("tas/never")
        self.assertEqual(e.exception.message,
                         "--algos: unknown wait policy 'never' in 'tas/never' (valid: spin, yield, park, default)")
        for bad in ("", ",,"):
            with self.assertRaises(Fail) as e:
                self.parse(bad)
            self.assertEqual(e.exception.message, "--algos: empty list")
        with self.assertRaises(Fail) as e:
            S.parse_waits("spin,sometimes")
        self.assertEqual(e.exception.message, "--wait: unknown policy 'sometimes' (valid: spin, yield, park, default)")

    def test_an_explicit_lockswap_must_be_one(self):
        with self.assertRaises(Fail) as e:
            S.Lockswap("/nonexistent", [self.exe]).path()
        self.assertEqual(e.exception.message, "--lockswap: '/nonexistent' is not an executable file")
        self.assertEqual(S.Lockswap("", ["", "/nonexistent", self.exe]).path(), os.path.realpath(self.exe))
        with self.assertRaises(Fail) as e:
            S.Lockswap("", ["/nonexistent"], "; hint").path()
        self.assertTrue(e.exception.message.endswith("give --lockswap PATH); hint"), e.exception.message)


class RwAlgos(TempDir):
    """--rwalgos: the optional axis, its names, and every --algos series
    crossed with them."""

    def setUp(self):
        super().setUp()
        self.exe = self.write("lockswap", FAKE)
        os.chmod(self.exe, 0o755)
        self.ls = S.Lockswap(self.exe)
        self.saved = S.AXES, S.COLUMNS
        S.use_axis(S.RWALGO)

    def tearDown(self):
        S.AXES, S.COLUMNS = self.saved
        super().tearDown()

    def test_names_all_locks_and_unlisted_ones_lockswap_runs(self):
        self.assertEqual(S.parse_rwalgos("all", self.ls), ["pthread", "central"])
        self.assertEqual(S.parse_rwalgos("locks,central+bravo,central", self.ls), ["central", "central+bravo"])
        with self.assertRaises(Fail) as e:
            S.parse_rwalgos("central,nosuch", self.ls)
        self.assertEqual((e.exception.code, e.exception.message),
                         (2, "--rwalgos: unknown rwlock algorithm 'nosuch' (valid: pthread, central, all, locks)"))
        with self.assertRaises(Fail) as e:
            S.parse_rwalgos(",", self.ls)
        self.assertEqual(e.exception.message, "--rwalgos: empty list")

    def test_every_algorithm_and_wait_with_every_rwalgo(self):
        self.assertEqual(S.COLUMNS, ("algorithm", "wait", "rwalgo"))
        ss = S.parse_algos("glibc,tas,mcs/spin", ["default"], self.ls, S.SeriesList(), ["pthread", "central"])
        self.assertEqual([s.values for s in ss],
                         [("glibc", "-", "-"), ("tas", "default", "pthread"), ("tas", "default", "central"),
                          ("mcs", "spin", "pthread"), ("mcs", "spin", "central")])
        s = list(ss)[2]
        self.assertEqual((s.prefix("L"), s.label()), (["L", "-a", "tas", "-r", "central", "--"], "tas/central"))
        # a caller that knows two axes (splash2-runner) gets the default
        self.assertEqual(S.Series("tas", "yield").values, ("tas", "yield", "default"))

    def test_a_results_csv_with_the_column_is_read_with_it(self):
        S.AXES, S.COLUMNS = self.saved
        h = "algorithm,wait,rwalgo,load,rep,wall_s,user_s,sys_s,status".split(",")
        self.assertEqual(S.axis_span(h), (0, 2))
        S.use_columns(h)
        self.assertEqual(S.COLUMNS, ("algorithm", "wait", "rwalgo"))
        self.assertEqual(S.label(("pthread", "default", "pf-t")), "pthread/pf-t")


class Series(unittest.TestCase):
    def test_native_runs_bare(self):
        g = S.Series.native()
        self.assertTrue(g.is_native)
        self.assertEqual((g.prefix("/x/lockswap"), g.env(), g.label(), g.log_name(), g.describe()),
                         ([], {}, "glibc", "glibc-native", "glibc wait=-"))

    def test_under_lockswap(self):
        s = S.Series("tas", "yield")
        self.assertEqual(s.prefix("/x/lockswap"), ["/x/lockswap", "-a", "tas", "-w", "yield", "--"])
        self.assertEqual((s.label(), s.log_name(), s.describe()), ("tas/yield", "tas-yield", "tas wait=yield"))
        d = S.Series("mcs", "default")
        self.assertEqual(d.prefix("L"), ["L", "-a", "mcs", "--"])
        self.assertEqual(d.label(), "mcs")

    def test_per_lock_runs_each_algorithm_as_a_map(self):
        """--per-lock: the series' algorithm on the patterns, REST on every
        other mutex; native runs stay bare; the names do not change."""
        saved = S.PER_LOCK
        try:
            S.PER_LOCK = (["init_lock0", "app+0x1bc00"], "pthread")
            s = S.Series("mcs", "yield")
            self.assertEqual(s.prefix("L"), ["L", "-a", "mcs", "-w", "yield", "-m",
                                             "init_lock0=mcs,app+0x1bc00=mcs,*=pthread", "--"])
            self.assertEqual(S.per_lock_map("tas"), "init_lock0=tas,app+0x1bc00=tas,*=pthread")
            self.assertEqual((s.label(), S.Series.native().prefix("L")), ("mcs/yield", []))
        finally:
            S.PER_LOCK = saved
        self.assertEqual(S.Series("mcs", "default").prefix("L"), ["L", "-a", "mcs", "--"])

    def test_a_new_axis_is_one_line(self):
        """An rwlock algorithm carried in LOCKSWAP_RWALGO: one Axis more, and
        the prefix, environment, names, CSV layout and summary follow."""
        saved = S.AXES, S.COLUMNS
        try:
            S.AXES = saved[0] + (S.Axis("rwalgo", env="LOCKSWAP_RWALGO", default="default"),)
            S.COLUMNS = tuple(a.column for a in S.AXES)
            s = S.Series("mcs", "spin", "rw-phase")
            self.assertEqual(s.prefix("L"), ["L", "-a", "mcs", "-w", "spin", "--"])
            self.assertEqual(s.env(), {"LOCKSWAP_RWALGO": "rw-phase"})
            self.assertEqual(S.Series("mcs", "spin", "default").env(), {})
            self.assertEqual((s.label(), s.log_name()), ("mcs/spin/rw-phase", "mcs-spin-rw-phase"))
            h = "algorithm,wait,rwalgo,load,rep,wall_s,user_s,sys_s,status".split(",")
            rows = [["glibc", "-", "-", "0", "1", "1.000", "0", "0", "ok"],
                    ["mcs", "spin", "rw-phase", "0", "1", "2.000", "0", "0", "ok"],
                    ["mcs", "spin", "default", "0", "1", "0.500", "0", "0", "ok"]]
            hdr, out = stats.summarise(h, rows, False, 1.5)
            self.assertEqual(hdr[:4], ["load", "algorithm", "wait", "rwalgo"])
            self.assertEqual([r[1:4] + [r[4]] for r in out], [["mcs", "spin", "default", "1"], ["glibc", "-", "-", "2"],
                                                             ["mcs", "spin", "rw-phase", "3"]])
        finally:
            S.AXES, S.COLUMNS = saved


if __name__ == "__main__":
    unittest.main()
