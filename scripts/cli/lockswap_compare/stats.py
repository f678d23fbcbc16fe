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
"""
from . import series as S


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
        + ["rank", "ok", "runs", "median" + u, "min" + u, "max" + u, "ratio_glibc", "spread", "noisy", "not_ok"]
    )
    out = []
    for g, cs in cells(layout, rows):
        stats = {id(c): Stats(c.values) for c in cs if c.values}
        base = None
        for c in cs:
            st = stats.get(id(c))
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
                figures = [""] * 6
            else:
                gt = lambda cen: ">" if cen else ""  # noqa: E731
                figures = [
                    gt(st.medcen) + fmt(st.med, metric),
                    gt(st.locen) + fmt(st.lo, metric),
                    gt(st.hicen) + fmt(st.hi, metric),
                    "" if base is None else gt(st.medcen) + "%.3f" % (st.med / base),
                    gt(st.spcen) + "%.2f" % st.spread,
                    "yes" if st.spread > threshold else "",
                ]
            out.append(list(g) + list(c.series) + [r, str(c.ok), str(c.runs)] + figures + [notok])
    return out_header, out
