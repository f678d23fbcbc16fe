"""The plots: one PNG per panel (the key columns before the axis columns in
results.csv), drawn by gnuplot from a .gp script and a .dat file that stay
beside the PNG in plots/.

In a panel, x is the configuration (M.N for threads,load, else the other key
columns) and each series is a line of medians with bars from min to max; a
panel with a single configuration is a bar chart, best first. Each series
has its own colour, dash and point (or fill pattern) in every panel, from its
place in the matrix; glibc is always black, solid, with filled circles. The
runs that were not ok are listed in full below each plot, noisy cells are
marked '!' and lower bounds '>'. With a combined name, every panel side by
side as well (splash2.png).
"""
import os

from . import series as S
from .util import awk_str, which

PALETTE = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #17becf #bcbd22 #7b68ee".split()
POINTS = [1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14]
MN = "M.N"


def _is_mn(x):
    a, dot, b = x.partition(".")
    return bool(dot) and a.isdigit() and b.isdigit() and a.isascii() and b.isascii()


def _num(x):
    """A summary figure as a number (its '>' dropped; -0 is 0, as in awk)."""
    return float(x[1:] if x.startswith(">") else x) + 0.0


def _unquote(text):
    return text.replace('"', "")


class Styles:
    """The style of every series, from its place among all of them."""

    def __init__(self, all_series):
        self.order = list(dict.fromkeys(all_series))  # the matrix's order
        self.index = {}
        for s in self.order:
            if s != S.NATIVE and s not in self.index:
                self.index[s] = len(self.index)

    def line(self, s):
        if s == S.NATIVE:
            return 'lc rgb "black" dt 1 pt 7 lw 3'
        i = self.index.get(s, 0)
        return 'lc rgb "%s" dt %d pt %d lw 2' % (PALETTE[i % 10], 1 + (i // 10) % 5, POINTS[i % 13])

    def bar(self, s):
        if s == S.NATIVE:
            return 'lc rgb "black" fs solid 0.35'
        i = self.index.get(s, 0)
        return 'lc rgb "%s" fs %s' % (PALETTE[i % 10], "solid 0.6" if i < 10 else "pattern %d" % (1 + (i // 10) % 7))


def panel_keys(npanel, summary_rows):
    """The panels, in order: their key values joined by '-'."""
    out = []
    for r in summary_rows:
        k = "-".join(r[:npanel])
        if k not in out:
            out.append(k)
    return out


def fragment(header, rows, npanel, panel, datname, styles, title, metric, higher, threshold):
    """(gnuplot commands starting with "# size W H", data file text) of one
    panel of summary.csv."""
    col = {h: i for i, h in enumerate(header)}
    ia, iw = S.axis_span(header)
    im = col["median_s"] if "median_s" in col else col["median"]
    ptitle = ""
    xs, names = [], []
    med, lo, hi, cens, noisy, ratio, failed = {}, {}, {}, {}, {}, {}, {}
    fails = []
    for r in rows:
        keys = r[: min(npanel, ia)]
        if "-".join(keys) != panel:
            continue
        ptitle = " ".join(keys)
        s = S.label(r[ia : iw + 1])
        if "config" in col:
            x = r[col["config"]]
        else:
            x = " ".join(r[npanel:ia])
        if x not in xs:
            xs.append(x)
        if s not in names:
            names.append(s)
        if r[im] != "":
            med[s, x], lo[s, x], hi[s, x] = _num(r[im]), _num(r[im + 1]), _num(r[im + 2])
            cens[s, x] = ">" in r[im]
            if r[col["noisy"]] == "yes":
                noisy[s, x] = r[col["spread"]]
            ratio[s, x] = r[col["ratio_glibc"]]
        if r[col["not_ok"]] != "":
            fails.append((s, x, " (%s/%s ok; %s)" % (r[col["ok"]], r[col["runs"]], r[col["not_ok"]])))
            failed[s, x] = r[col["not_ok"]]
    nc, ns = len(xs), len(names)
    bars = nc == 1
    # notes below the plot: the marks, then the failures wrapped at about 110 characters
    notes = []
    if noisy:
        notes.append("! noisy: its runs spread more than %sx (max/min)" % threshold)
    if any(cens.values()):
        notes.append("> a lower bound: the run was stopped at its time limit (over-limit)")
    nmarks = len(notes)
    line = ""
    for i, (s, x, what) in enumerate(fails):
        item = s + (" at " + x if nc > 1 else "") + what + ("," if i < len(fails) - 1 else "")
        if line and len(line) + len(item) > 110:
            notes.append(line)
            line = ""
        line += (" " if line else "") + item
    if line:
        notes.append(line)
    nl = len(notes)
    width = (60 * ns + 200 if ns > 14 else 1000) if bars else 1000
    height = 600 + (18 * (nl + 1) if nl else 0) + (60 if bars else 0)
    g = ["# size %d %d" % (width, height), "reset"]
    dat = []
    if metric:
        what = "/%s/ (%s is better)" % (metric, "higher" if higher else "lower")
    else:
        what = "wall time in s (lower is better)"
    t = title or ptitle
    if bars and _is_mn(xs[0]):
        t += ", M.N " + xs[0]
    elif bars and xs[0] not in ("", "0"):
        t += ", %s load processes" % xs[0]
    g.append('set title "%s%s%s: median, bars from min to max" noenhanced' % (_esc(t), "\\n" if t else "", _esc(what)))
    g.append('set ylabel "%s" noenhanced' % _esc(metric if metric else "wall time (s)"))
    g.append("set grid ytics")
    bm = 4 + (nl + 2 if nl else 0) + (4 if bars else 0)
    g.append("set bmargin %d" % bm)
    for i, text in enumerate(notes, 1):
        lead = "" if i <= nmarks else "not ok: " if i == nmarks + 1 else "        "
        g.append(
            'set label %d "%s%s" at graph 0, graph 0 offset 0, %d left font ",9" noenhanced%s'
            % (100 + i, lead, _unquote(text), -(bm - nl - 1 + i) + 1, ' textcolor rgb "red"' if i <= nmarks else "")
        )
    if not med:
        g += ["set yrange [0:*]; set offsets 0, 0, graph 0.1, 0", "set yrange [0:1]; unset logscale y",
              'set label 2 "no run ended ok" at graph 0.5, graph 0.5 center', "plot NaN notitle"]
        return "\n".join(g) + "\n", ""
    ymin, ymax = min(lo.values()), max(hi.values())
    if ymin > 0 and ymax / ymin > 30:
        g.append("set logscale y")
    else:
        g.append("set yrange [0:*]; set offsets 0, 0, graph 0.1, 0")
    if bars:
        # one bar per series, best first (the summary's order), failures last
        x = xs[0]
        g.append("set xtics rotate by -40 left noenhanced (%s)" % ", ".join('"%s" %d' % (s, j) for j, s in enumerate(names)))
        g.append("set xrange [-0.7:%f]" % (ns - 0.3))
        g.append("set key off")
        g.append('set label 2 "above each bar: its median / glibc median (! noisy)" at graph 0.01, graph 0.97 left font ",9"')
        g.append("set boxwidth 0.7")
        g.append("set style fill border -1")
        for j, s in enumerate(names):
            dat.append("# %s" % s)
            if (s, x) in med:
                dat.append("%d %s %s %s" % (j, awk_str(med[s, x]), awk_str(lo[s, x]), awk_str(hi[s, x])))
                ratio_x = _num(ratio[s, x]) if ratio[s, x] else 0.0
                lab = (">" if cens[s, x] else "") + "%.2fx" % ratio_x + ("!" if (s, x) in noisy else "")
                g.append('set label %d "%s" at %d, %s center offset 0, 0.8 font ",8" noenhanced'
                         % (3 + j, lab, j, awk_str(hi[s, x])))
            else:
                dat.append("%d NaN NaN NaN" % j)
                g.append('set label %d "%s" at %d, graph 0.03 rotate by 90 left font ",9" noenhanced'
                         % (3 + j, _unquote(failed.get((s, x), "")), j))
            dat += ["", ""]
        g.append("plot " + ", \\\n     ".join(
            '"%s" index %d using 1:2:3:4:(0.7) with boxerrorbars %s title "%s"' % (datname, j, styles.bar(s), s)
            for j, s in enumerate(names)))
        return "\n".join(g) + "\n", "\n".join(dat) + "\n"
    # lines: in the order of the matrix (the same in every panel)
    names = [s for s in styles.order if s in names]
    nlab = 0
    for i, s in enumerate(names):
        dat.append("# %s" % s)
        for j, x in enumerate(xs):
            if (s, x) in med:
                xx = j + (i - (len(names) - 1) / 2) * 0.03
                dat.append("%.4f %s %s %s" % (xx, awk_str(med[s, x]), awk_str(lo[s, x]), awk_str(hi[s, x])))
                if (s, x) in noisy:
                    nlab += 1
                    g.append('set label %d "!" at %.4f, %s left offset 0.6, 0 font ",10" textcolor rgb "red"'
                             % (3 + nlab, xx, awk_str(med[s, x])))
                if cens[s, x]:
                    nlab += 1
                    g.append('set label %d ">" at %.4f, %s right offset -0.6, 0 font ",10"' % (3 + nlab, xx, awk_str(med[s, x])))
        dat += ["", ""]
    g.append("set xtics (%s)" % ", ".join('"%s" %d' % (x, j) for j, x in enumerate(xs)))
    g.append("set xrange [-0.5:%f]" % (nc - 0.5))
    g.append('set xlabel "%s"' % ("configuration M.N: M application threads, N load processes" if _is_mn(xs[0]) else "configuration"))
    g.append("set key outside right top noenhanced")
    g.append("plot " + ", \\\n     ".join(
        '"%s" index %d using 1:2:3:4 with yerrorlines %s title "%s"' % (datname, i, styles.line(s), s)
        for i, s in enumerate(names)))
    return "\n".join(g) + "\n", "\n".join(dat) + "\n"


def _esc(text):
    """Text inside a gnuplot double-quoted string."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def draw(outdir, header, rows, all_series, npanel, title, plotname, combined, metric, higher, threshold, msgs):
    """plots/*.png (and their .gp and .dat) in outdir from summary.csv's
    header and rows; all_series: every series label in matrix order."""
    if not which("gnuplot"):
        msgs.warn("gnuplot not found: no plots (install gnuplot-nox)")
        return
    from . import procs

    pd = os.path.join(outdir, "plots")
    os.makedirs(pd, exist_ok=True)
    for f in os.listdir(pd):
        if f.endswith((".png", ".dat", ".gp")):
            os.unlink(os.path.join(pd, f))
    styles = Styles(all_series)
    frags = []
    for key in panel_keys(npanel, rows):
        name = key or plotname
        frag, dat = fragment(header, rows, npanel, key, name + ".dat", styles, title, metric, higher, threshold)
        with open(os.path.join(pd, name + ".dat"), "w") as f:
            f.write(dat)
        w, h = frag.split("\n", 1)[0].split()[2:4]
        with open(os.path.join(pd, name + ".gp"), "w") as f:
            f.write('set terminal pngcairo size %s,%s font ",11"\n' % (w, h))
            f.write('set output "%s.png"\n' % name)
            f.write(frag)
        frags.append((frag, int(h)))
        if procs.run(["gnuplot", name + ".gp"], cwd=pd) != 0:
            msgs.warn("gnuplot failed on %s/%s.gp" % (pd, name))
    if combined and len(frags) > 1:
        with open(os.path.join(pd, combined + ".gp"), "w") as f:
            f.write('set terminal pngcairo size %d,%d font ",11"\nset output "%s.png"\n'
                    % (800 * len(frags), max(h for _, h in frags), combined))
            f.write("set multiplot layout 1,%d\n" % len(frags))
            for frag, _ in frags:
                f.write(frag)
            f.write("unset multiplot\n")
        if procs.run(["gnuplot", combined + ".gp"], cwd=pd) != 0:
            msgs.warn("gnuplot failed on %s/%s.gp" % (pd, combined))
