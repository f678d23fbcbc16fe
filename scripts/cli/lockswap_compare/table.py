"""summary.txt from summary.csv: the table, best first per group, then the
notes (what '>' and '!' mean, a noisy glibc baseline, what was checked).

Columns: the key columns (those listed in hide are left out while they never
change; with M.N, threads and load are only in summary.csv), rank, the axis
columns, ok (as ok/runs), median, min, max, x_glibc, spread ('!' when noisy),
not ok. Text columns are left-aligned, figures right-aligned, two spaces
apart.
"""
from . import series as S

HEADS = {"config": "M.N", "ratio_glibc": "x_glibc", "not_ok": "not ok"}


def render(header, rows, hide=(), threshold="1.5", checks=()):
    """The lines of summary.txt; threshold: the spread threshold as the
    user gave it (it is printed)."""
    col = {h: i for i, h in enumerate(header)}
    ia, iw = S.axis_span(header)
    inoisy, isp, irank, iruns = col["noisy"], col["spread"], col["rank"], col["runs"]
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
    show += [i for i in range(ia, len(header)) if i not in (inoisy, irank, iruns)]
    text_cols = set(range(iw + 1)) | {col["not_ok"]}

    def cell(r, i):
        v = r[i]
        if i == isp and r[inoisy] == "yes":
            v += "!"
        if header[i] == "ok":
            return v + "/" + r[iruns]
        return v if v != "" or header[i] == "not_ok" else "-"

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
    foot += list(checks)
    if foot:
        lines.append("")
    return lines + foot
