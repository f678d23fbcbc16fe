"""summary.csv from results.csv: per group (the key columns), per series (the
axis columns), the runs' median, min, max, ratio to glibc's median, spread,
and the rank.

- results.csv's header: the group's key columns, then the series' axis
  columns (algorithm first: series.COLUMNS), then more key columns (load;
  threads,load become the configuration M.N as well), rep, wall_s, user_s,
  sys_s, [metric,] status.
- The values of a cell: wall_s (or metric) of its ok runs; without --metric,
  an over-limit run's elapsed time is a value too, a lower bound (censored),
  sorted after every exact value. A median made of a lower bound is one too:
  it is written with '>' and so are min, max, ratio and spread that are.
- Ranked: the cells with values and no crash, hang, exit, wrong output,
  missing output or missing figure (over-limit without --metric and skipped
  runs do not disqualify), by median, best first; ties keep the order of the
  matrix. Then the cells with failures but some values, then those without
  values, unranked.
- Ratios are to the group's glibc median (when it is exact and positive);
  spread is max/min, "noisy" above the threshold.
- Better or worse than glibc (vs_glibc, p_glibc): only when a ranked cell's
  runs separate from glibc's: the one-sided Mann-Whitney U test (the exact
  distribution of U for these run counts), p <= ALPHA in the direction of the
  medians; else "~", no difference beyond the spread. A pair of runs that
  tie, or whose order a lower bound leaves open, counts a half (and p is
  taken at the next whole U: a tie never helps a verdict). With 3 runs of
  each, only complete separation reaches p = 0.05.
"""
import functools
import math

from . import series as S

ALPHA = 0.05  # the level a difference from glibc must reach


class Layout:
    """Where things are in a results.csv header."""

    def __init__(self, header):
        col = {h: i for i, h in enumerate(header)}
        for need in ("algorithm", "wait", "rep", "status", "wall_s"):
            if need not in col:
                raise ValueError("results.csv: header lacks algorithm, wait, rep, wall_s or status")
        self.header = header
        ia, iw = S.axis_span(header)
        self.ia, self.iw = ia, iw  # the axis columns: ia..iw
        self.ir = col["rep"]
        self.ist = col["status"]
        self.iwall = col["wall_s"]
        self.imet = col.get("metric")
        pre = header[:ia]
        post = header[iw + 1 : self.ir]
        # threads,load: the configuration M.N as well
        self.cfg = post == ["threads", "load"]
        self.keys = pre + (["config"] if self.cfg else []) + post
        self.npre = ia

    def group(self, row):
        g = row[: self.ia]
        post = row[self.iw + 1 : self.ir]
        if self.cfg:
            g = g + [post[0] + "." + post[1]]
        return tuple(g + post)

    def series(self, row):
        return tuple(row[self.ia : self.iw + 1])


class Cell:
    __slots__ = ("group", "series", "runs", "ok", "values", "failed", "bad", "over_wall")

    def __init__(self, group, series):
        self.group = group
        self.series = series
        self.runs = 0
        self.ok = 0
        self.values = []  # (censored, value)
        self.failed = False
        self.bad = {}  # status -> count, in the order first seen
        self.over_wall = 0.0  # with --metric: the longest over-limit run


def cells(layout, rows):
    """The cells, grouped: [(group, [Cell...])...] in the order first seen."""
    groups = {}
    for row in rows:
        if len(row) <= max(layout.ist, layout.iwall, layout.ir):
            raise ValueError("results.csv: a row has fewer fields than the header")
        g = layout.group(row)
        s = layout.series(row)
        cs = groups.setdefault(g, {})
        c = cs.get(s)
        if c is None:
            c = cs[s] = Cell(g, s)
        c.runs += 1
        st = row[layout.ist]
        wall = row[layout.iwall]
        if st == "ok":
            c.ok += 1
            c.values.append((False, float(row[layout.imet] if layout.imet is not None else wall)))
            continue
        if st == "over-limit" and wall != "":
            if layout.imet is None:
                c.values.append((True, float(wall)))
            elif float(wall) > c.over_wall:
                c.over_wall = float(wall)
        if not (st == "skipped" or (st == "over-limit" and layout.imet is None)):
            c.failed = True
        c.bad[st] = c.bad.get(st, 0) + 1
    return [(g, list(cs.values())) for g, cs in groups.items()]


class Stats:
    """A cell's figures; each with whether it is a lower bound."""

    __slots__ = ("lo", "locen", "hi", "hicen", "med", "medcen", "spread", "spcen")

    def __init__(self, values):
        s = sorted(values)  # exact values first, each kind ascending
        n = len(s)
        self.locen, self.lo = s[0]
        self.hicen, self.hi = s[-1]
        if n % 2:
            self.medcen, self.med = s[n // 2]
        else:
            self.med = (s[n // 2 - 1][1] + s[n // 2][1]) / 2
            self.medcen = s[n // 2 - 1][0] or s[n // 2][0]
        self.spread = self.hi / self.lo if self.lo > 0 else 0
        self.spcen = self.hicen and not self.locen


@functools.lru_cache(maxsize=64)
def _u_counts(n, m):
    """How many orderings of n runs of one cell and m of another give each U
    (the pairs in which the first's run is the larger), for U = 0..n*m."""
    # f[i][j]: the counts for i and j runs; the largest run is one of the
    # first cell's (it exceeds all j others: U grows by j) or of the second's
    f = [[None] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                f[i][j] = [1]
                continue
            a, b = f[i - 1][j], f[i][j - 1]
            c = [0] * (i * j + 1)
            for u, k in enumerate(a):
                c[u + j] += k
            for u, k in enumerate(b):
                c[u] += k
            f[i][j] = c
    return f[n][m]


def _p_normal(u, n, m):
    """P(U <= u) by the normal approximation, with continuity correction."""
    mean, var = n * m / 2.0, n * m * (n + m + 1) / 12.0
    return 0.5 * (1 + math.erf((u + 0.5 - mean) / math.sqrt(2 * var)))


def _p_at_most(u, n, m):
    """P(U <= u) when both cells' runs come from one distribution: exact up
    to 400 pairs of runs (20 each), approximated beyond."""
    if n * m > 400:
        return _p_normal(u, n, m)
    counts = _u_counts(n, m)
    return sum(counts[: int(u) + 1]) / float(sum(counts))


def _worse(a, b, higher):
    """How much run a is worse than run b: 1, 0, or 0.5 when they tie or a
    lower bound (censored) leaves their order open."""
    (ac, av), (bc, bv) = a, b
    if higher:  # with --metric there are no lower bounds
        return 1.0 if av < bv else 0.0 if av > bv else 0.5
    if not ac and not bc:
        return 1.0 if av > bv else 0.0 if av < bv else 0.5
    if ac and not bc:  # a >= av
        return 1.0 if av > bv else 0.5
    if bc and not ac:  # b >= bv
        return 0.0 if av < bv else 0.5
    return 0.5


def better_p(a, b, higher):
    """The one-sided Mann-Whitney p that cell a's runs (values: (censored,
    value) pairs) are better than cell b's: small when a's runs are rarely
    worse than b's."""
    u = sum(_worse(x, y, higher) for x in a for y in b)
    return _p_at_most(math.ceil(u), len(a), len(b))


def versus(a, base, higher):
    """(verdict, p): "better" or "worse" than base when p <= ALPHA in the
    direction of the medians, else "~" with the p of that direction."""
    pa, pb = better_p(a, base, higher), better_p(base, a, higher)
    if pa <= ALPHA:
        return "better", pa
    if pb <= ALPHA:
        return "worse", pb
    ma, mb = Stats(a).med, Stats(base).med
    ahead = ma > mb if higher else ma < mb
    return "~", pa if ahead else pb


def fmt(x, metric):
    """Seconds and small figures with 3 decimals; large figures (a
    throughput) as integers, and so is a figure the program printed as one."""
    if x >= 10000 or x <= -10000 or (metric and x == int(x)):
        return "%.0f" % x
    return "%.3f" % x


def order(group_cells, stats, higher):
    """The cells of a group best first: (class, cell), class 0 ranked, 1
    failed with values, 2 without values. Stable: ties keep matrix order."""

    def key(c):
        st = stats.get(id(c))
        cls = 2 if st is None else 1 if c.failed else 0
        return (cls, 0 if st is None else (-st.med if higher else st.med))

    return sorted(group_cells, key=key)


def summarise(header, rows, higher, threshold):
    """(summary header, summary rows) from results.csv's header and rows;
    threshold: the spread above which a cell is noisy (a number)."""
    layout = Layout(header)
    metric = layout.imet is not None
    u = "" if metric else "_s"
    out_header = (
        layout.keys
        + list(header[layout.ia : layout.iw + 1])
        + ["rank", "ok", "runs", "median" + u, "min" + u, "max" + u, "ratio_glibc", "vs_glibc", "p_glibc", "spread",
           "noisy", "not_ok"]
    )
    out = []
    for g, cs in cells(layout, rows):
        stats = {id(c): Stats(c.values) for c in cs if c.values}
        base = basecell = None
        for c in cs:
            st = stats.get(id(c))
            if c.series[0] == S.NATIVE and st and not c.failed:
                basecell = c
            if c.series[0] == S.NATIVE and st and not st.medcen and st.med > 0:
                base = st.med
        rank = 0
        for c in order(cs, stats, higher):
            st = stats.get(id(c))
            notok = "; ".join(
                "%d %s%s" % (k, status, " (>%.1f s)" % c.over_wall if status == "over-limit" and c.over_wall else "")
                for status, k in c.bad.items()
            )
            r = ""
            if st is not None and not c.failed:
                rank += 1
                r = str(rank)
            if st is None:
                figures = [""] * 8
            else:
                gt = lambda cen: ">" if cen else ""  # noqa: E731
                verdict = p = ""
                if basecell is not None and c is not basecell and not c.failed:
                    verdict, pv = versus(c.values, basecell.values, higher)
                    p = "%.3f" % pv
                figures = [
                    gt(st.medcen) + fmt(st.med, metric),
                    gt(st.locen) + fmt(st.lo, metric),
                    gt(st.hicen) + fmt(st.hi, metric),
                    "" if base is None else gt(st.medcen) + "%.3f" % (st.med / base),
                    verdict,
                    p,
                    gt(st.spcen) + "%.2f" % st.spread,
                    "yes" if st.spread > threshold else "",
                ]
            out.append(list(g) + list(c.series) + [r, str(c.ok), str(c.runs)] + figures + [notok])
    return out_header, out
