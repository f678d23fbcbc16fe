"""Output checks and the figure a run prints.

A check is '' (none), 'stdout' (the run's standard output) or a path, relative
to the run's folder, of a file or a folder the program writes. Before each run
the path is cleared, so that a run that writes nothing is caught; after it,
the output's sha256 is compared with the reference run's.

--metric REGEX: on the last line of the run's stdout (else stderr) that the
extended regular expression matches and that yields a number, the first number
in the matched text, or else the first number after it.
"""
import os

NUMBER = r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?"


def check_path(cwd, check):
    return check if check.startswith("/") else os.path.join(cwd, check)


def clear(cwd, check):
    """Removes the output a run must write: a file, or a folder's contents."""
    if not check or check == "stdout":
        return
    p = check_path(cwd, check)
    if os.path.isdir(p) and not os.path.islink(p):
        for root, dirs, files in os.walk(p, topdown=False):
            for f in files:
                os.unlink(os.path.join(root, f))
            for d in dirs:
                d = os.path.join(root, d)
                os.unlink(d) if os.path.islink(d) else os.rmdir(d)
    else:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def _sha256_file(path):
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def digest(cwd, check, log):
    """The sha256 of the checked output, or None if there is none. A
    folder: the sha256 of the lines "SHA256  NAME" of its files (those
    `sha256sum *` lists in it)."""
    import hashlib

    if check == "stdout":
        return _sha256_file(log + ".out")
    p = check_path(cwd, check)
    if os.path.isdir(p):
        names = sorted(os.listdir(p))
        if not names:
            return None
        listing = "".join(
            "%s  %s\n" % (_sha256_file(os.path.join(p, n)), n)
            for n in names
            if not n.startswith(".") and os.path.isfile(os.path.join(p, n))
        )
        return hashlib.sha256(listing.encode("utf-8", "surrogateescape")).hexdigest()
    if os.path.isfile(p):
        return _sha256_file(p)
    return None


def _copy(src, dst):
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        for chunk in iter(lambda: fi.read(1 << 20), b""):
            fo.write(chunk)


def keep(cwd, check, log, dest):
    """Copies the checked output into the folder dest (stdout as dest/stdout,
    a file under its name, a folder's contents)."""
    os.makedirs(dest, exist_ok=True)
    if check == "stdout":
        _copy(log + ".out", os.path.join(dest, "stdout"))
        return
    p = check_path(cwd, check)
    if not os.path.isdir(p):
        _copy(p, os.path.join(dest, os.path.basename(p)))
        return
    for root, dirs, files in os.walk(p):
        rel = os.path.relpath(root, p)
        for d in dirs:
            os.makedirs(os.path.join(dest, rel, d), exist_ok=True)
        for f in files:
            _copy(os.path.join(root, f), os.path.join(dest, rel, f))


# ---------------------------------------------------------------- --metric

# POSIX character classes, for Python's re (which has none).
CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


def ere_to_python(ere):
    """An extended regular expression as Python's re reads it. The two
    differ in bracket expressions: POSIX classes ([[:digit:]]), collating
    elements ([.-.], [=a=]), a ']' first in the list, and characters Python
    would take for nested sets; and in the word boundaries \\< \\> of GNU awk.
    Elsewhere ERE is a subset of re. (Where alternatives match at the same
    place, re takes the first listed and POSIX the longest; --metric reads
    the first number of the matched text, so this rarely matters.)"""
    out = []
    i, n = 0, len(ere)
    while i < n:
        c = ere[i]
        if c == "\\" and i + 1 < n:
            nxt = ere[i + 1]
            out.append("\\b" if nxt in "<>y" else c + nxt)
            i += 2
        elif c == "[":
            i = _bracket(ere, i, out)
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _bracket(ere, i, out):
    """Translates the bracket expression starting at ere[i] == '['; returns
    the index after it (a '[' that opens none stays a literal '[')."""
    n = len(ere)
    j = i + 1
    items = []
    negate = j < n and ere[j] == "^"
    if negate:
        j += 1
    first = True
    while j < n:
        c = ere[j]
        if c == "]" and not first:
            out.append("[" + ("^" if negate else "") + "".join(items) + "]")
            return j + 1
        first = False
        if c == "[" and j + 1 < n and ere[j + 1] in ":.=":
            kind = ere[j + 1]
            end = ere.find(kind + "]", j + 2)
            if end < 0:
                raise ValueError("unterminated [%s" % kind)
            name = ere[j + 2 : end]
            if kind == ":":
                if name not in CLASSES:
                    raise ValueError("unknown class [:%s:]" % name)
                items.append(CLASSES[name])
            else:
                items.append("".join("\\" + ch if not ch.isalnum() else ch for ch in name))
            j = end + 2
        elif c == "\\" and j + 1 < n:
            items.append(ere[j : j + 2])  # awk reads escapes inside brackets too
            j += 2
        elif c == "-":
            items.append("-")
            j += 1
        elif c.isalnum() or c == " " or ord(c) > 127:
            items.append(c)
            j += 1
        else:
            items.append("\\" + c)
            j += 1
    raise ValueError("unterminated [")


def compile_ere(ere):
    """The compiled expression; ValueError if it is not a valid one."""
    import re

    try:
        return re.compile(ere_to_python(ere))
    except re.error as e:
        raise ValueError(str(e))


def metric(rx, log):
    """The figure in a run's output (log.out, else log.err), as awk prints
    numbers, or None."""
    import re

    from .util import awk_str

    number = re.compile(NUMBER)
    for f in (log + ".out", log + ".err"):
        found = None
        try:
            with open(f, encoding="utf-8", errors="surrogateescape", newline="\n") as fh:
                for line in fh:
                    m = rx.search(line.rstrip("\n"))
                    if not m:
                        continue
                    hit = number.search(m.group(0)) or number.search(line.rstrip("\n"), m.end())
                    if hit:
                        found = hit.group(0)
        except OSError:
            continue
        if found is not None:
            return awk_str(float(found))
    return None
