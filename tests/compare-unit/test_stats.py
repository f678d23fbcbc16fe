"""summary.csv from results.csv: medians, lower bounds, ratios, spread,
ranking and ties."""
import unittest

import helper  # noqa: F401 (puts scripts/cli on sys.path)
from lockswap_compare import stats

H = "algorithm,wait,load,rep,wall_s,user_s,sys_s,status".split(",")
HM = "algorithm,wait,load,rep,wall_s,user_s,sys_s,metric,status".split(",")


def run(algo, rep, wall, status="ok", wait=None, load="0"):
    wait = wait or ("-" if algo == "glibc" else "default")
    t = [wall, "0.1", "0.0"] if status in ("ok", "over-limit") else ["", "", ""]
    return [algo, wait, load, str(rep)] + t + [status]


def mrun(algo, rep, value, status="ok", wall="1.000"):
    wait = "-" if algo == "glibc" else "default"
    t = [wall, "0.1", "0.0"] if status in ("ok", "over-limit") else ["", "", ""]
    return [algo, wait, "0", str(rep)] + t + [value if status == "ok" else "", status]


def summary(rows, header=H, higher=False, threshold=1.5):
    hdr, out = stats.summarise(header, rows, higher, threshold)
    return [dict(zip(hdr, r)) for r in out]


def col(rows, name):
    return [r[name] for r in rows]


class Figures(unittest.TestCase):
    def test_median_min_max_ratio_spread(self):
        s = summary([run("glibc", 1, "2.000"), run("glibc", 2, "1.000"), run("glibc", 3, "3.000"),
                     run("mcs", 1, "4.000"), run("mcs", 2, "6.000"), run("mcs", 3, "3.000"), run("mcs", 4, "5.000")])
        g, m = s
        self.assertEqual((g["median_s"], g["min_s"], g["max_s"], g["ratio_glibc"], g["spread"]),
                         ("2.000", "1.000", "3.000", "1.000", "3.00"))
        # an even count: the mean of the middle two
        self.assertEqual((m["median_s"], m["min_s"], m["max_s"], m["ratio_glibc"], m["spread"]),
                         ("4.500", "3.000", "6.000", "2.250", "2.00"))
        self.assertEqual((m["ok"], m["runs"]), ("4", "4"))

    def test_the_spread_flag(self):
        rows = [run("glibc", 1, "1.000"), run("glibc", 2, "1.500"), run("tas", 1, "1.000"), run("tas", 2, "1.510")]
        s = summary(rows)
        self.assertEqual(col(s, "noisy"), ["", "yes"])  # 1.50 is not above 1.5; 1.51 is
        self.assertEqual(col(s, "spread"), ["1.50", "1.51"])
        self.assertEqual(col(summary(rows, threshold=1.6), "noisy"), ["", ""])
        self.assertEqual(col(summary(rows, threshold=1.0), "noisy"), ["yes", "yes"])

    def test_ratio_to_the_median_not_the_mean(self):
        s = summary([run("glibc", 1, "2.800"), run("glibc", 2, "16.800"), run("glibc", 3, "2.900"),
                     run("mcs", 1, "5.800")])
        self.assertEqual(col(s, "ratio_glibc"), ["1.000", "2.000"])

    def test_no_glibc_no_ratio(self):
        s = summary([run("tas", 1, "1.000"), run("mcs", 1, "2.000")])
        self.assertEqual(col(s, "ratio_glibc"), ["", ""])
        self.assertEqual(col(s, "rank"), ["1", "2"])

    def test_large_figures_as_integers(self):
        self.assertEqual(stats.fmt(12345.678, False), "12346")
        self.assertEqual(stats.fmt(-20000.4, False), "-20000")
        self.assertEqual(stats.fmt(12.3456, False), "12.346")
        self.assertEqual(stats.fmt(300.0, True), "300")  # a figure printed as an integer
        self.assertEqual(stats.fmt(300.0, False), "300.000")  # seconds
        self.assertEqual(stats.fmt(0.25, True), "0.250")


class LowerBounds(unittest.TestCase):
    def test_over_limit_is_a_lower_bound_sorted_after_exact_values(self):
        s = summary([run("glibc", 1, "1.000"), run("tas", 1, "30.000", "over-limit"), run("tas", 2, "2.000"),
                     run("tas", 3, "3.000")])
        t = s[1]
        self.assertEqual((t["median_s"], t["min_s"], t["max_s"], t["spread"]), ("3.000", "2.000", ">30.000", ">15.00"))
        self.assertEqual((t["ok"], t["runs"], t["rank"]), ("2", "3", "2"))
        self.assertEqual(t["not_ok"], "1 over-limit")

    def test_a_median_of_lower_bounds_is_one(self):
        s = summary([run("glibc", 1, "2.000"), run("tas", 1, "30.000", "over-limit"), run("tas", 2, "", "skipped"),
                     run("tas", 3, "", "skipped")])
        t = s[1]
        self.assertEqual((t["median_s"], t["ratio_glibc"], t["spread"], t["rank"]), (">30.000", ">15.000", "1.00", "2"))
        self.assertEqual(t["not_ok"], "1 over-limit; 2 skipped")

    def test_with_a_metric_over_limit_has_no_figure_and_disqualifies(self):
        s = summary([mrun("glibc", 1, "100"), mrun("tas", 1, "", "over-limit", "10.412"), mrun("tas", 2, "", "skipped"),
                     mrun("mcs", 1, "50")], HM)
        self.assertEqual(col(s, "algorithm"), ["mcs", "glibc", "tas"])
        t = s[2]
        self.assertEqual((t["rank"], t["median"], t["not_ok"]), ("", "", "1 over-limit (>10.4 s); 1 skipped"))
        # a cell with figures and an over-limit run is not ranked either
        s = summary([mrun("glibc", 1, "100"), mrun("tas", 1, "10"), mrun("tas", 2, "", "over-limit", "10.0")], HM)
        self.assertEqual([(r["algorithm"], r["rank"], r["median"]) for r in s], [("glibc", "1", "100"), ("tas", "", "10")])

    def test_a_glibc_median_that_is_a_lower_bound_or_zero_is_no_baseline(self):
        s = summary([run("glibc", 1, "30.000", "over-limit"), run("tas", 1, "2.000")])
        self.assertEqual(col(s, "ratio_glibc"), ["", ""])
        s = summary([mrun("glibc", 1, "0"), mrun("tas", 1, "5")], HM)
        self.assertEqual(col(s, "ratio_glibc"), ["", ""])


class Ranking(unittest.TestCase):
    def test_best_first_and_both_directions(self):
        rows = [mrun("glibc", 1, "100"), mrun("tas", 1, "300"), mrun("pthread", 1, "200"), mrun("mcs", 1, "50")]
        lo = summary(rows, HM)
        self.assertEqual(col(lo, "algorithm"), ["mcs", "glibc", "pthread", "tas"])
        self.assertEqual(col(lo, "rank"), ["1", "2", "3", "4"])
        hi = summary(rows, HM, higher=True)
        self.assertEqual(col(hi, "algorithm"), ["tas", "pthread", "glibc", "mcs"])
        self.assertEqual(col(hi, "ratio_glibc"), ["3.000", "2.000", "1.000", "0.500"])
        self.assertEqual(col(hi, "median"), ["300", "200", "100", "50"])

    def test_ties_keep_the_order_of_the_matrix(self):
        rows = [run("glibc", 1, "1.000"), run("tas", 1, "1.000"), run("mcs", 1, "0.500"), run("clh", 1, "1.000")]
        self.assertEqual(col(summary(rows), "algorithm"), ["mcs", "glibc", "tas", "clh"])
        rows = [run("glibc", 1, "1.000"), run("clh", 1, "1.000"), run("mcs", 1, "0.500"), run("tas", 1, "1.000")]
        self.assertEqual(col(summary(rows), "algorithm"), ["mcs", "glibc", "clh", "tas"])

    def test_failures_unranked_after_the_ranked(self):
        rows = [run("glibc", 1, "2.000"),
                run("crashy", 1, "0.100"), run("crashy", 2, "", "crash:SIGSEGV"),  # fastest, but crashed once
                run("hung", 1, "", "hang"), run("hung", 2, "", "skipped"),
                run("wrong", 1, "", "wrong-output"),
                run("slow", 1, "3.000")]
        s = summary(rows)
        self.assertEqual(col(s, "algorithm"), ["glibc", "slow", "crashy", "hung", "wrong"])
        self.assertEqual(col(s, "rank"), ["1", "2", "", "", ""])
        self.assertEqual(col(s, "not_ok"), ["", "", "1 crash:SIGSEGV", "1 hang; 1 skipped", "1 wrong-output"])
        self.assertEqual(s[3]["median_s"], "")

    def test_each_group_ranked_apart(self):
        rows = [run("glibc", 1, "1.000", load="0"), run("tas", 1, "2.000", load="0"),
                run("glibc", 1, "5.000", load="2"), run("tas", 1, "3.000", load="2")]
        s = summary(rows)
        self.assertEqual([(r["load"], r["algorithm"], r["rank"]) for r in s],
                         [("0", "glibc", "1"), ("0", "tas", "2"), ("2", "tas", "1"), ("2", "glibc", "2")])
        self.assertEqual(s[2]["ratio_glibc"], "0.600")

    def test_threads_and_load_make_the_configuration(self):
        h = "app,input,algorithm,wait,threads,load,rep,wall_s,user_s,sys_s,status".split(",")
        hdr, out = stats.summarise(h, [["barnes", "p9", "glibc", "-", "2", "1", "1", "2.000", "1.0", "0.1", "ok"]],
                                   False, 1.5)
        self.assertEqual(hdr[:6], ["app", "input", "config", "threads", "load", "algorithm"])
        self.assertEqual(out[0][:6], ["barnes", "p9", "2.1", "2", "1", "glibc"])

    def test_a_header_without_the_needed_columns(self):
        with self.assertRaises(ValueError):
            stats.summarise(["algorithm", "rep", "status"], [], False, 1.5)


def runs(algo, *walls):
    return [run(algo, i + 1, w) for i, w in enumerate(walls)]


class VersusGlibc(unittest.TestCase):
    """Better or worse than glibc only when the runs separate: the one-sided
    Mann-Whitney U test at p <= 0.05; else ~."""

    def test_the_exact_distribution_of_u(self):
        # 3 runs against 3: 20 orderings, U = 0..9
        self.assertEqual(stats._u_counts(3, 3), [1, 1, 2, 3, 3, 3, 3, 2, 1, 1])
        self.assertEqual(stats._u_counts(1, 4), [1, 1, 1, 1, 1])
        self.assertAlmostEqual(stats._p_at_most(0, 3, 3), 0.05)
        self.assertAlmostEqual(stats._p_at_most(1, 4, 4), 2 / 70.0)
        # the normal approximation, used beyond 400 pairs, agrees with the
        # exact distribution where both are known
        for u in (120, 160, 200):
            self.assertAlmostEqual(stats._p_normal(u, 20, 20), stats._p_at_most(u, 20, 20), delta=0.003)

    def test_three_runs_each_all_faster_is_better_at_p_005(self):
        s = summary(runs("glibc", "1.000", "1.100", "1.200") + runs("tas", "0.500", "0.600", "0.900"))
        g, t = sorted(s, key=lambda r: r["algorithm"])
        self.assertEqual((t["vs_glibc"], t["p_glibc"]), ("better", "0.050"))
        self.assertEqual((g["vs_glibc"], g["p_glibc"]), ("", ""))  # glibc itself

    def test_overlapping_runs_are_no_difference_even_with_a_lower_median(self):
        # the median is 0.769x glibc's, but one run is slower than all of glibc's
        s = summary(runs("glibc", "1.000", "1.100", "1.200") + runs("clh-tp", "0.700", "0.800", "7.100"))
        t = [r for r in s if r["algorithm"] == "clh-tp"][0]
        self.assertEqual((t["rank"], t["vs_glibc"]), ("1", "~"))
        self.assertEqual(t["p_glibc"], "0.350")  # U = 3 of 9 (7.1 is slower than all 3): P(U <= 3) = 7/20

    def test_all_slower_is_worse(self):
        s = summary(runs("glibc", "1.000", "1.100", "1.200", "1.050") + runs("mcs", "2.0", "2.1", "1.3", "2.2"))
        t = [r for r in s if r["algorithm"] == "mcs"][0]
        self.assertEqual((t["vs_glibc"], t["p_glibc"]), ("worse", "0.014"))

    def test_too_few_runs_never_decide(self):
        s = summary(runs("glibc", "1.000", "1.100") + runs("tas", "0.100", "0.200"))
        t = [r for r in s if r["algorithm"] == "tas"][0]
        self.assertEqual((t["vs_glibc"], t["p_glibc"]), ("~", "0.167"))
        s = summary(runs("glibc", "1.000") + runs("tas", "0.100"))
        self.assertEqual([r["vs_glibc"] for r in s if r["algorithm"] == "tas"], ["~"])

    def test_a_metric_higher_is_better(self):
        rows = [mrun("glibc", i, v) for i, v in enumerate(["100", "110", "105"], 1)]
        rows += [mrun("tas", i, v) for i, v in enumerate(["300", "310", "290"], 1)]
        s = summary(rows, HM, higher=True)
        self.assertEqual([(r["algorithm"], r["vs_glibc"]) for r in s], [("tas", "better"), ("glibc", "")])
        s = summary(rows, HM, higher=False)
        self.assertEqual([(r["algorithm"], r["vs_glibc"]) for r in s], [("glibc", ""), ("tas", "worse")])

    def test_lower_bounds_count_only_where_their_order_is_known(self):
        # over-limit runs beyond every glibc run: surely slower
        rows = runs("glibc", "1.000", "1.100", "1.200") + [run("ticket", 1, "30.0", "over-limit"),
                                                           run("ticket", 2, "31.0", "over-limit"),
                                                           run("ticket", 3, "32.0", "over-limit")]
        t = [r for r in summary(rows) if r["algorithm"] == "ticket"][0]
        self.assertEqual(t["vs_glibc"], "worse")
        # a lower bound below glibc's runs: its order is open (a half each)
        rows = runs("glibc", "1.000", "1.100", "1.200") + [run("tas", 1, "0.500", "over-limit"),
                                                           run("tas", 2, "0.600"), run("tas", 3, "0.700")]
        t = [r for r in summary(rows) if r["algorithm"] == "tas"][0]
        self.assertEqual(t["vs_glibc"], "~")

    def test_failed_cells_and_a_failed_glibc_get_no_verdict(self):
        rows = runs("glibc", "1.000", "1.100", "1.200") + [run("tas", 1, "0.100"), run("tas", 2, "", "crash:SIGSEGV")]
        self.assertEqual([r["vs_glibc"] for r in summary(rows) if r["algorithm"] == "tas"], [""])
        rows = [run("glibc", 1, "", "exit:1")] + runs("tas", "0.1", "0.2", "0.3")
        self.assertEqual([r["vs_glibc"] for r in summary(rows)], ["", ""])


if __name__ == "__main__":
    unittest.main()
