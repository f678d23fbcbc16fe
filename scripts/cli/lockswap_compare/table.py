"""summary.txt from summary.csv: the table, best first per group, then the
notes (what '>' and '!' mean, a noisy glibc baseline, what was checked).

Columns: the key columns (those listed in hide are left out while they never
change; with M.N, threads and load are only in summary.csv), rank, the axis
columns, ok (as ok/runs), median, min, max, x_glibc, vs glibc (better, worse,
or ~: no difference beyond the spread; its p is in summary.csv; left out when
no cell was compared with glibc), spread ('!' when noisy), not ok. Text columns are left-aligned, figures right-aligned,
two spaces apart. The rank orders the medians; only "vs glibc" says whether
a cell differs from glibc, and the notes ask for more repetitions when too
few runs, or runs that spread too much, leave cells at ~.
"""
from . import series as S
from .stats import ALPHA

HEADS = {"config": "M.N", "ratio_glibc": "x_glibc", "vs_glibc": "vs glibc", "not_ok": "not ok"}


def render(header, rows, hide=(), threshold="1.5", checks=()):
    """The lines of summary.txt; threshold: the spread threshold as the
    user gave it (it is printed)."""
    col = {h: i for i, h in enumerate(header)}
    ia, iw = S.axis_span(header)
    inoisy, isp, irank, iruns = col["noisy"], col["spread"], col["rank"], col["runs"]
    ivs, ip, iok = col.get("vs_glibc"), col.get("p_glibc"), col["ok"]
    hascfg = "config" in col
    varies = set()
    for r in rows[1:]:
        for i in range(ia):
            if r[i] != rows[0][i]:
                varies.add(i)
    show = []
    for i in range(ia):
        if header[i] in hide and i not in varies:
            continue
        if hascfg and header[i] in ("threads", "load"):
            continue
        show.append(i)
    show.append(irank)
    # "vs glibc" only when a cell was compared with glibc (a matrix of glibc
    # alone has no verdict to show)
    novs = ivs if ivs is not None and not any(r[ivs] for r in rows) else None
    show += [i for i in range(ia, len(header)) if i not in (inoisy, irank, iruns, ip, novs)]
    text_cols = set(range(iw + 1)) | {col["not_ok"]} | ({ivs} if ivs is not None else set())

    def cell(r, i):
        v = r[i]
        if i == isp and r[inoisy] == "yes":
            v += "!"
        if header[i] == "ok":
            return v + "/" + r[iruns]
        return v if v != "" or header[i] in ("not_ok", "vs_glibc") else "-"

    table = [[HEADS.get(header[i], header[i]) for i in show]] + [[cell(r, i) for i in show] for r in rows]
    widths = [max(len(t[j]) for t in table) for j in range(len(show))]
    lines = []
    for t in table:
        parts = [t[j].ljust(widths[j]) if show[j] in text_cols else t[j].rjust(widths[j]) for j in range(len(show))]
        lines.append("  ".join(parts).rstrip(" "))

    foot = []
    if any(">" in v for r in rows for v in r):
        foot.append(">: a lower bound (the run was stopped at its time limit: over-limit)")
    if any(r[inoisy] == "yes" for r in rows):
        foot.append("!: noisy cell: its runs spread more than %sx (max/min)" % threshold)
    for r in rows:
        if r[inoisy] == "yes" and r[ia] == S.NATIVE:
            where = " ".join(r[i] for i in range(ia) if not (hascfg and header[i] in ("threads", "load")))
            foot.append(
                "warning: noisy glibc baseline, glibc%s: max/min %s: the ratios of its group are uncertain"
                % (" at " + where if where else "", r[isp])
            )
    foot += verdict_notes(header, rows, threshold)
    foot += list(checks)
    if foot:
        lines.append("")
    return lines + foot


def verdict_notes(header, rows, threshold="1.5"):
    """What "vs glibc" means, and, when cells stay at ~ because their runs are
    too few or spread too much, the repetitions to ask for."""
    col = {h: i for i, h in enumerate(header)}
    ivs = col.get("vs_glibc")
    if ivs is None or not any(r[ivs] for r in rows):
        return []
    notes = ["vs glibc: better or worse only where its runs separate from glibc's (one-sided Mann-Whitney U "
             "test, p <= %g; p_glibc in summary.csv); ~: no difference beyond the spread" % ALPHA]
    undecided = [r for r in rows if r[ivs] == "~"]
    if not undecided:
        return notes
    # each undecided cell with its group's glibc (the key columns before the axes)
    ia = S.axis_span(header)[0]
    base = {tuple(r[:ia]): r for r in rows if r[ia] == S.NATIVE}
    pairs = [(r, base[tuple(r[:ia])]) for r in undecided if tuple(r[:ia]) in base]
    fewest = min(min(int(r[col["ok"]]), int(g[col["ok"]])) for r, g in pairs)
    noisy = []
    for r, g in pairs:
        noisy += [x for x in (r, g) if x[col["noisy"]] == "yes" and not any(x is y for y in noisy)]
    if fewest < 3:
        notes.append("more repetitions needed: with %d run%s of a cell no difference can reach p <= %g "
                     "(3 runs each at least, every run of one beyond every run of the other): run --reps 5 or more"
                     % (fewest, "" if fewest == 1 else "s", ALPHA))
    elif noisy:
        worst = max(float(r[col["spread"]].lstrip(">")) for r in noisy)
        notes.append("more repetitions needed: %d cell%s at ~ or glibc spread more than %sx (up to %.2f): "
                     "run --reps 10 or more to tell them apart" % (len(noisy), "" if len(noisy) == 1 else "s",
                                                                     threshold, worst))
    return notes
