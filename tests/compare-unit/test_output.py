"""results.csv and summary.csv read and written, summary.txt's table, and
the plots' styles."""
import os
import unittest

from helper import TempDir

from lockswap_compare import csvio, plots, table


class Csv(TempDir):
    def test_plain_fields_stay_plain(self):
        self.assertEqual(csvio.line(["tas", "default", "0", "1", "0.244", "ok"]), "tas,default,0,1,0.244,ok\n")

    def test_special_fields_are_quoted_and_read_back(self):
        row = ["a,b", 'say "hi"', "two\nlines", "", "plain", " spaced "]
        text = csvio.line(["h1", "h2", "h3", "h4", "h5", "h6"]) + csvio.line(row)
        self.assertEqual(csvio.line(row), '"a,b","say ""hi""","two\nlines",,plain, spaced \n')
        self.assertEqual(csvio.parse(text)[1], row)

    def test_parse(self):
        self.assertEqual(csvio.parse("a,b\n1,2\n\n3,\n"), [["a", "b"], ["1", "2"], ["3", ""]])
        self.assertEqual(csvio.parse("a,b\r\n1,2"), [["a", "b"], ["1", "2"]])
        self.assertEqual(csvio.parse('x\n"1,5"\n'), [["x"], ["1,5"]])
        with self.assertRaises(ValueError):
            csvio.parse('a\n"open\n')

    def test_files_round_trip(self):
        p = self.path("results.csv")
        a = csvio.Appender(p, ["algorithm", "status"])
        a.add(["tas", "ok"])
        a.add(["x,y", "crash:SIGSEGV"])
        with open(p) as f:  # each row is on disk once added
            self.assertEqual(f.read(), 'algorithm,status\ntas,ok\n"x,y",crash:SIGSEGV\n')
        a.close()
        self.assertEqual(csvio.read(p), (["algorithm", "status"], [["tas", "ok"], ["x,y", "crash:SIGSEGV"]]))
        csvio.write(self.path("s.csv"), ["h"], [["1"], ["2"]])
        self.assertEqual(csvio.read(self.path("s.csv")), (["h"], [["1"], ["2"]]))


SUM_H = "load,algorithm,wait,rank,ok,runs,median_s,min_s,max_s,ratio_glibc,spread,noisy,not_ok".split(",")


class Table(unittest.TestCase):
    def test_columns_alignment_and_notes(self):
        rows = [
            ["0", "glibc", "-", "1", "3", "3", "0.214", "0.207", "0.267", "1.000", "1.29", "", ""],
            ["0", "tas", "default", "2", "3", "3", "0.231", "0.184", "0.314", "1.081", "1.71", "yes", ""],
            ["0", "ticket", "default", "", "0", "3", "", "", "", "", "", "", "1 over-limit (>10.6 s); 2 skipped"],
        ]
        lines = table.render(SUM_H, rows, hide=["load"], threshold="1.5", checks=["output: not checked (no --check)"])
        self.assertEqual(lines, [
            "rank  algorithm  wait      ok  median_s  min_s  max_s  x_glibc  spread  not ok",
            "   1  glibc      -        3/3     0.214  0.207  0.267    1.000    1.29",
            "   2  tas        default  3/3     0.231  0.184  0.314    1.081   1.71!",
            "   -  ticket     default  0/3         -      -      -        -       -  1 over-limit (>10.6 s); 2 skipped",
            "",
            ">: a lower bound (the run was stopped at its time limit: over-limit)",  # (>10.6 s)
            "!: noisy cell: its runs spread more than 1.5x (max/min)",
            "output: not checked (no --check)",
        ])

    def test_a_hidden_column_that_varies_is_shown(self):
        rows = [["0", "glibc", "-", "1", "1", "1", "1.000", "1.000", "1.000", "1.000", "1.00", "", ""],
                ["2", "glibc", "-", "1", "1", "1", ">2.000", "2.000", "2.000", "1.000", "1.00", "", ""]]
        lines = table.render(SUM_H, rows, hide=["load"])
        self.assertTrue(lines[0].startswith("load  rank  algorithm"), lines[0])
        self.assertEqual(lines[-1], ">: a lower bound (the run was stopped at its time limit: over-limit)")

    def test_configuration_and_a_noisy_baseline(self):
        h = ["app", "input", "config", "threads", "load"] + SUM_H[1:]
        rows = [["raytrace", "car", "2.2", "2", "2", "glibc", "-", "1", "3", "3", "2.900", "2.800", "16.800", "1.000",
                 "6.00", "yes", ""]]
        lines = table.render(h, rows)
        self.assertTrue(lines[0].startswith("app       input  M.N  rank  algorithm"), lines[0])
        self.assertIn("warning: noisy glibc baseline, glibc at raytrace car 2.2: max/min 6.00: "
                      "the ratios of its group are uncertain", lines)


VS_H = "load,algorithm,wait,rank,ok,runs,median_s,min_s,max_s,ratio_glibc,vs_glibc,p_glibc,spread,noisy,not_ok".split(",")


class Verdicts(TempDir):
    """The table says better or worse than glibc only where the runs separate,
    ~ elsewhere, and asks for more repetitions when runs are too few or spread
    too much; --per-lock names a best map only if it is better."""

    def test_the_column_and_its_note(self):
        rows = [
            ["0", "tas", "default", "1", "3", "3", "0.500", "0.400", "0.600", "0.500", "better", "0.050", "1.50", "", ""],
            ["0", "glibc", "-", "2", "3", "3", "1.000", "0.900", "1.100", "1.000", "", "", "1.22", "", ""],
            ["0", "mcs", "default", "3", "3", "3", "1.100", "0.300", "2.000", "1.100", "~", "0.350", "6.67", "yes", ""],
        ]
        lines = table.render(VS_H, rows, hide=["load"], threshold="1.5")
        self.assertEqual(lines, [
            "rank  algorithm  wait      ok  median_s  min_s  max_s  x_glibc  vs glibc  spread  not ok",
            "   1  tas        default  3/3     0.500  0.400  0.600    0.500  better      1.50",
            "   2  glibc      -        3/3     1.000  0.900  1.100    1.000              1.22",
            "   3  mcs        default  3/3     1.100  0.300  2.000    1.100  ~          6.67!",
            "",
            "!: noisy cell: its runs spread more than 1.5x (max/min)",
            "vs glibc: better or worse only where its runs separate from glibc's (one-sided Mann-Whitney U test, "
            "p <= 0.05; p_glibc in summary.csv); ~: no difference beyond the spread",
            "more repetitions needed: 1 cell at ~ or glibc spread more than 1.5x (up to 6.67): run --reps 10 or more "
            "to tell them apart",
        ])

    def test_too_few_runs_ask_for_more(self):
        rows = [["0", "glibc", "-", "1", "2", "2", "1.000", "0.900", "1.100", "1.000", "", "", "1.22", "", ""],
                ["0", "tas", "default", "2", "2", "2", "1.100", "1.000", "1.200", "1.100", "~", "0.500", "1.20", "", ""]]
        notes = table.render(VS_H, rows, hide=["load"])[-1]
        self.assertEqual(notes, "more repetitions needed: with 2 runs of a cell no difference can reach p <= 0.05 "
                                "(3 runs each at least, every run of one beyond every run of the other): run --reps 5 "
                                "or more")

    def best_map(self, rows):
        import io
        from contextlib import redirect_stdout

        from lockswap_compare import cli
        from lockswap_compare import series as S

        saved, S.PER_LOCK = S.PER_LOCK, (["make_hot"], "pthread")
        csvio.write(self.path("summary.csv"), VS_H, rows)
        if os.path.exists(self.path("summary.txt")):
            os.remove(self.path("summary.txt"))
        out = io.StringIO()
        try:
            with redirect_stdout(out):
                cli._best_map(self.dir)
        finally:
            S.PER_LOCK = saved
        with open(self.path("summary.txt")) as f:
            self.assertEqual(f.read(), out.getvalue())
        return out.getvalue().splitlines()

    def test_per_lock_names_a_best_map_only_if_it_is_better(self):
        g = ["0", "glibc", "-", "2", "3", "3", "1.000", "0.950", "1.100", "1.000", "", "", "1.16", "", ""]
        better = ["0", "mcs", "default", "1", "3", "3", "0.700", "0.610", "0.800", "0.700", "better", "0.050", "1.31",
                  "", ""]
        self.assertEqual(self.best_map([better, g]), [
            "lockswap compare: best map: LOCKSWAP_ALGO_MAP='make_hot=mcs,*=pthread' (0.700 x glibc; better than "
            "glibc: its 3 runs 0.610-0.800 s, glibc's 3 0.950-1.100 s; one-sided Mann-Whitney U p = 0.050)"])
        # issue 34: "clh-tp the best map at 0.769x with a spread of 7.10"
        noisy = ["0", "clh-tp", "default", "1", "3", "3", "0.769", "0.610", "4.331", "0.769", "~", "0.350", "7.10",
                 "yes", ""]
        self.assertEqual(self.best_map([noisy, g]), [
            "lockswap compare: per lock: no map beats glibc beyond the spread: the best median, "
            "LOCKSWAP_ALGO_MAP='make_hot=clh-tp,*=pthread', is 0.769 x glibc (its 3 runs 0.610-4.331 s, glibc's 3 "
            "0.950-1.100 s; one-sided Mann-Whitney U p = 0.350)",
            "lockswap compare: per lock: more repetitions needed: 1 cell at ~ or glibc spread more than 1.5x (up to "
            "7.10): run --reps 10 or more to tell them apart"])
        # glibc first: the best map is slower
        slower = ["0", "tas", "default", "2", "3", "3", "1.014", "0.990", "1.050", "1.014", "~", "0.350", "1.06", "", ""]
        g1 = g[:3] + ["1"] + g[4:]
        self.assertEqual(self.best_map([g1, slower])[0],
                         "lockswap compare: per lock: no map beats glibc beyond the spread: the best median, "
                         "LOCKSWAP_ALGO_MAP='make_hot=tas,*=pthread', is 1.014 x glibc (its 3 runs 0.990-1.050 s, "
                         "glibc's 3 0.950-1.100 s; one-sided Mann-Whitney U p = 0.350)")


class Plots(unittest.TestCase):
    def test_twenty_series_twenty_styles_glibc_black(self):
        names = ["glibc"] + ["lock%02d" % i for i in range(1, 21)]
        st = plots.Styles(names)
        lines = [st.line(n) for n in names]
        self.assertEqual(len(set(lines)), 21)
        self.assertEqual(st.line("glibc"), 'lc rgb "black" dt 1 pt 7 lw 3')
        self.assertEqual(len({st.bar(n) for n in names}), 21)
        # past ten series the colours come round again, with another dash and fill
        self.assertEqual(st.line("lock01"), 'lc rgb "#1f77b4" dt 1 pt 1 lw 2')
        self.assertEqual(st.line("lock11"), 'lc rgb "#1f77b4" dt 2 pt 12 lw 2')
        self.assertEqual(st.bar("lock11"), 'lc rgb "#1f77b4" fs pattern 2')
        # the style follows the place in the matrix, not the panel
        self.assertEqual(plots.Styles(names).line("lock07"), st.line("lock07"))

    def test_a_bar_chart_best_first_with_failures_listed(self):
        rows = [
            ["0", "glibc", "-", "1", "1", "1", "2.000", "2.000", "2.000", "1.000", "1.00", "", ""],
            ["0", "tas", "yield", "2", "1", "1", "4.000", "4.000", "4.000", "2.000", "1.00", "", ""],
            ["0", "mcs", "default", "", "0", "1", "", "", "", "", "", "", "1 hang"],
        ]
        gp, dat = plots.fragment(SUM_H, rows, 0, "", "compare.dat", plots.Styles(["glibc", "mcs", "tas/yield"]),
                                 "./app", "", False, "1.5")
        self.assertIn("boxerrorbars", gp)
        self.assertIn('set xtics rotate by -40 left noenhanced ("glibc" 0, "tas/yield" 1, "mcs" 2)', gp)
        self.assertIn('not ok: mcs (0/1 ok; 1 hang)', gp)
        self.assertIn('set label 4 "2.00x" at 1, 4 center', gp)
        self.assertEqual(dat.split("\n")[:2], ["# glibc", "0 2 2 2"])

    def test_lines_for_several_configurations(self):
        rows = [["0", "glibc", "-", "1", "1", "1", "1.000", "1.000", "1.000", "1.000", "1.00", "", ""],
                ["2", "glibc", "-", "1", "1", "1", "3.000", "2.000", "4.000", "1.000", "2.00", "yes", ""]]
        gp, dat = plots.fragment(SUM_H, rows, 0, "", "c.dat", plots.Styles(["glibc"]), "", "", False, "1.5")
        self.assertIn("with yerrorlines", gp)
        self.assertIn('set xtics ("0" 0, "2" 1)', gp)
        self.assertIn('set label 4 "!" at 1.0000, 3 left', gp)
        self.assertIn("1.0000 3 2 4", dat)


if __name__ == "__main__":
    unittest.main()
