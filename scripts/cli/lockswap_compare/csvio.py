"""results.csv and summary.csv: comma-separated, one header line, "\\n" line
ends. A field holding a comma, a double quote or a line end is quoted as RFC
4180 says (a,b is written "a,b", and a quote inside is doubled); no other
field is, so the files read as plain comma-separated text wherever names and
figures are plain. (The csv module would do the same, but loads the re
module, and this is on the path of every run.)"""

_SPECIAL = frozenset(',"\r\n')


def field(value):
    value = str(value)
    if _SPECIAL.isdisjoint(value):
        return value
    return '"' + value.replace('"', '""') + '"'


def line(values):
    return ",".join(field(v) for v in values) + "\n"


def parse(text):
    """The rows of a CSV text, each a list of strings; blank lines are left
    out. ValueError on a quote that is never closed."""
    rows = []
    row, cur = [], []
    i, n = 0, len(text)
    quoted = False
    at_start = True  # at the start of a field
    while i < n:
        c = text[i]
        if quoted:
            if c == '"':
                if i + 1 < n and text[i + 1] == '"':
                    cur.append('"')
                    i += 1
                else:
                    quoted = False
            else:
                cur.append(c)
        elif c == '"' and at_start:
            quoted = True
            at_start = False
        elif c == ",":
            row.append("".join(cur))
            cur = []
            at_start = True
            i += 1
            continue
        elif c in "\r\n":
            if c == "\r" and i + 1 < n and text[i + 1] == "\n":
                i += 1
            row.append("".join(cur))
            if row != [""]:
                rows.append(row)
            row, cur = [], []
            at_start = True
            i += 1
            continue
        else:
            cur.append(c)
        at_start = False
        i += 1
    if quoted:
        raise ValueError("a quoted field is not closed")
    if cur or row:
        row.append("".join(cur))
        rows.append(row)
    return rows


def read(path):
    """(header, rows) of a CSV file; header [] if it is empty."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        rows = parse(f.read())
    return (rows[0], rows[1:]) if rows else ([], [])


def write(path, header, rows):
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(line(header))
        for r in rows:
            f.write(line(r))


class Appender:
    """A CSV written a row at a time, each row on disk before the next run
    (an interrupted matrix leaves its partial results)."""

    def __init__(self, path, header):
        self.f = open(path, "w", encoding="utf-8", errors="surrogateescape", newline="")
        self.add(header)

    def add(self, values):
        self.f.write(line(values))
        self.f.flush()

    def close(self):
        self.f.close()
