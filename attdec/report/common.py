"""Small helpers every reporter shares: number formatting, bars, paths, escaping, the console, tables that fit.

The console and the tables are plain Python (no rich): a report is a few lines and tables, and rich's import
alone costs more than a small folder's whole report. Widths are in terminal cells (`cell_len`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Container, Iterable, Sequence
from typing import Literal

from attdec.analysis import norm_path
from attdec.model.record import Record

PIPED_WIDTH = 4096  # piped output without COLUMNS: as wide as it needs to be, nothing folded or cut
JustifyMethod = Literal["left", "right"]

# SGR codes of the styles reporters use; a style is one or more of these names ("bold yellow").
_SGR = {"bold": "1", "dim": "2", "italic": "3", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


class Console:
    """Where every reporter prints: lines of text, wrapped at `width` cells (on a terminal its width,
    piped $COLUMNS or PIPED_WIDTH), styled only on a colour terminal. Text from inputs (instructions,
    paths, kernel names) has its control characters escaped, whoever printed it, so a trace cannot drive
    the terminal. Trailing blanks are dropped. A closed pipe raises BrokenPipeError, which the command
    line turns into a quiet exit 0."""

    def __init__(self, file, width: int, color: bool = False):
        self.file, self.width, self.color = file, width, color

    def style(self, text: str, style: str | None) -> str:
        """`text` (already escaped) wrapped in the SGR codes of `style` when colour is on."""
        if not (self.color and style):
            return text
        codes = ";".join(_SGR[s] for s in style.split() if s in _SGR)
        return f"\x1b[{codes}m{text}\x1b[0m" if codes else text

    def print(self, text: object = "", style: str | None = None, wrap: bool = True) -> None:
        """One or more lines (`text` may hold newlines), each wrapped at the width unless `wrap` is False."""
        out = []
        for line in _escape_keep_lines(str(text)).split("\n"):
            for part in wrap_text(line, self.width, hang=True) if wrap else [line]:
                out.append(self.style(part.rstrip(), style))
        self.file.write("\n".join(out) + "\n")

    def print_spans(self, spans: Sequence[tuple[str, str | None]]) -> None:
        """One line of differently styled pieces (text, style), never wrapped."""
        self.file.write("".join(self.style(_escape_keep_lines(t), st) for t, st in spans).rstrip() + "\n")


def _columns_env() -> int | None:
    try:
        n = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return n if n > 0 else None


def console(out=None) -> Console:
    """A console on `out` (default stdout). On a terminal it is as wide as the terminal ($COLUMNS first)
    and styled unless $NO_COLOR is set or TERM=dumb; piped, it is colourless and as wide as $COLUMNS says,
    or wide enough that nothing is folded."""
    out = sys.stdout if out is None else out
    if out.isatty():
        width = _columns_env()
        if width is None:
            try:
                width = os.get_terminal_size(out.fileno()).columns
            except (OSError, ValueError, AttributeError):
                width = 80
        color = "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
        return Console(out, width, color)
    return Console(out, _columns_env() or PIPED_WIDTH)


# ---- text from inputs ----------------------------------------------------------------------------

# C0/C1 controls (ESC, CR, BEL, backspace, ...) and the bidirectional overrides: text from a trace
# (instruction text, source paths, kernel and file names) must not clear the screen or reorder a line.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROLS.update({c: f"\\u{c:04x}" for c in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def printable(text: object) -> str:
    """`text` with control characters shown as escapes (`\\x1b`): for output that does not go through a
    Console (error and warning lines on stderr), and to measure a cell as it will print."""
    s = str(text)
    return s if s.isprintable() else s.translate(_CONTROLS)


_KEEP_LINES = {k: v for k, v in _CONTROLS.items() if k != 0x0A}


def _escape_keep_lines(text: str) -> str:
    return text.translate(_KEEP_LINES)


# ---- numbers -------------------------------------------------------------------------------------


def human(n: float) -> str:
    """272728 -> '272.7K', 950 -> '950', 1.53e6 -> '1.53M' (the figures FlyDSL's analyzer prints)."""
    n = float(n)
    if abs(n) < 1000:
        return f"{int(n)}" if n == int(n) else f"{n:.1f}"
    if abs(n) < 1e6:
        return f"{n / 1e3:.1f}K"
    if abs(n) < 1e9:
        return f"{n / 1e6:.2f}M"
    return f"{n / 1e9:.2f}G"


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(fraction: float, width: int = 20) -> str:
    """A horizontal bar of `width` cells filled to `fraction` (eighth-cell resolution)."""
    fraction = min(max(fraction, 0.0), 1.0)
    cells = fraction * width
    full = int(cells)
    part = int((cells - full) * 8)
    s = "█" * full + (_EIGHTHS[part] if part and full < width else "")
    return s.ljust(width)


# ---- paths ---------------------------------------------------------------------------------------


def common_dir(paths: list[str]) -> str:
    """Longest common directory of the paths that look like paths, normalised ('' if none or only '/')."""
    ps = [norm_path(p) for p in paths if "/" in p]
    if not ps:
        return ""
    try:
        d = os.path.commonpath([os.path.dirname(p) or "/" for p in ps])
    except ValueError:
        return ""
    return "" if d in ("", "/", ".") else d


def strip_dir(path: str, prefix: str) -> str:
    """`path` (normalised) relative to `prefix` when it lies under it."""
    path = norm_path(path)
    return path[len(prefix) + 1 :] if prefix and path.startswith(prefix + "/") else path


def cell_len(text: str) -> int:
    """Terminal cells `text` takes: wide (East Asian) characters 2, combining marks 0, the rest 1."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


_WORDS = r"\s*\S+\s*|\s+"  # compiled (by re, once) when a line is first wrapped: piped output never is


def wrap_text(text: str, width: int, hang: bool = False) -> list[str]:
    """`text` in lines of at most `width` cells, broken between words; a word wider than that is folded.
    With `hang`, continuation lines keep the first line's indentation. Always at least one line."""
    if cell_len(text) <= width or width <= 0:
        return [text]
    indent = text[: len(text) - len(text.lstrip(" "))] if hang else ""
    if cell_len(indent) >= width // 2:
        indent = ""
    lines, line = [], ""
    for word in re.findall(_WORDS, text):
        if line and cell_len(line + word.rstrip()) > width:
            lines.append(line.rstrip())
            line, word = indent, word.lstrip()
        while cell_len(line + word.rstrip()) > width:  # a word that fits on no line: fold it
            room = max(1, width - cell_len(line))
            cut = _fit(word, room)
            lines.append(line + word[:cut])
            line, word = indent, word[cut:]
        line += word
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def _fit(text: str, width: int) -> int:
    """How many characters of `text` fit in `width` cells (at least one)."""
    n, used = 0, 0
    for ch in text:
        used += cell_len(ch)
        if used > width:
            break
        n += 1
    return max(n, 1)


def left_cut(text: str, width: int) -> str:
    """`text` cut to `width` cells from the left ('…/kernels/k.py:103'): a path's end says the most."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    out = text
    while cell_len(out) > width - 1:
        out = out[1:]
    return "…" + out


# ---- tables that fit -----------------------------------------------------------------------------


class Col(Record):
    """One column of a `fit_table`.

    kind "whole": figures and short labels, never cut or folded; "text": folds onto more lines when narrow;
    "path": cut from the left; "bar": `bar()` cells drawn at whatever width is left (gone when none is).
    `short` is the header used when the table is too wide with the full one; `min` the narrowest a text or
    path column gets before the gap between columns shrinks.
    """

    header: str
    kind: str = "whole"
    justify: JustifyMethod = "right"
    short: str = ""
    min: int = 8
    bar: int = 16  # a bar column's preferred width


def fit_table(
    con: Console,
    cols: Sequence[Col],
    rows: Iterable[Sequence],
    indent: int = 0,
    header: bool = True,
    cell_widths: Sequence[int] | None = None,
) -> None:
    """Print `rows` under `cols` within the console's width, keeping every figure whole (`header=False`:
    no header line, and headers take no width). `cell_widths`: each column's widest cell, when the caller
    knows it (`rows` are then read once, to print: a million rows need not all be held).

    Narrowing, in order: bars shrink (and go), text and path columns shrink to their minimum, headers
    take their short forms, the gap between columns drops to one space, text columns go down to 4 cells.
    What still does not fit is printed wider than the console (the terminal wraps the line) rather than
    cutting a figure. Bar cells are fractions; every other cell is a string.
    """
    width = con.width - indent
    headers = [c.header if header else "" for c in cols]
    gap = 2

    def natural(i: int, head: str) -> int:
        if cell_widths is None:
            return _natural(cols[i], head, [r[i] for r in rows])
        return cols[i].bar if cols[i].kind == "bar" else max(cell_len(head), cell_widths[i])

    nat = [natural(i, h) for i, h in enumerate(headers)]
    widths = list(nat)

    def total() -> int:
        shown = [w for c, w in zip(cols, widths) if w or c.kind != "bar"]
        return sum(shown) + gap * (len(shown) - 1)

    flex = [i for i, c in enumerate(cols) if c.kind in ("text", "path")]
    for i, c in enumerate(cols):  # 1. bars give way first
        if c.kind == "bar" and total() > width:
            widths[i] = max(0, widths[i] - (total() - width))
            if widths[i] < 3:
                widths[i] = 0
    if total() > width:  # 2. text and path columns, down to their minimum, the widest first
        _shrink(widths, flex, [min(cols[i].min, nat[i]) for i in range(len(cols))], total() - width)
    if total() > width and header:  # 3. short headers
        headers = [c.short or c.header for c in cols]
        for i, c in enumerate(cols):
            if c.kind == "whole":
                widths[i] = natural(i, headers[i])
    if total() > width:  # 4. one space between columns
        gap = 1
    if total() > width:  # 5. text below its comfortable minimum (it folds onto more lines)
        _shrink(widths, flex, [min(4, nat[i]) for i in range(len(cols))], total() - width)
    if total() < width:  # give text columns back what the short headers and the gap freed
        _grow(widths, flex, nat, width - total())

    keep = [i for i, c in enumerate(cols) if widths[i] or c.kind != "bar"]
    sep, pad = " " * gap, " " * indent
    if header:
        head = [wrap_text(headers[i] if cols[i].kind != "bar" else "", widths[i]) for i in keep]
        _print_row(con, [cols[i] for i in keep], [widths[i] for i in keep], head, sep, pad, style="bold")
    for r in rows:
        cells = []
        for i in keep:
            c, v = cols[i], r[i]
            if c.kind == "bar":
                cells.append([bar(float(v), widths[i])])
            elif c.kind == "path":
                cells.append([left_cut(printable(v), widths[i])])
            elif c.kind == "text":
                cells.append(wrap_text(printable(v), widths[i]))
            else:
                cells.append([printable(v)])  # whole: never cut (a figure may push the line wider)
        _print_row(con, [cols[i] for i in keep], [widths[i] for i in keep], cells, sep, pad)


def _print_row(con: Console, cols, widths, cells: list[list[str]], sep: str, pad: str, style=None) -> None:
    """One table row: cells side by side, `sep` between them, a cell of several lines making the row that
    tall. A header row (styled) sits on the table: its shorter cells are aligned to the bottom."""
    height = max(len(c) for c in cells)
    if style:
        cells = [[""] * (height - len(c)) + c for c in cells]
    lines = []
    for n in range(height):
        parts = []
        for c, w, cell in zip(cols, widths, cells):
            text = cell[n] if n < len(cell) else ""
            fill = " " * max(0, w - cell_len(text))
            parts.append(con.style(text, style) + fill if c.justify != "right" else fill + con.style(text, style))
        lines.append((pad + sep.join(parts)).rstrip())
    con.file.write("\n".join(lines) + "\n")


def _natural(c: Col, header: str, cells: list) -> int:
    if c.kind == "bar":
        return c.bar
    return max([cell_len(header)] + [cell_len(printable(v)) for v in cells])


def _shrink(widths: list[int], idx: list[int], floor: list[int], excess: int) -> None:
    """Take `excess` cells from the columns `idx`, always from the widest, none below its floor."""
    while excess > 0:
        cand = [i for i in idx if widths[i] > floor[i]]
        if not cand:
            return
        i = max(cand, key=lambda j: widths[j])
        widths[i] -= 1
        excess -= 1


def _grow(widths: list[int], idx: list[int], nat: list[int], spare: int) -> None:
    while spare > 0:
        cand = [i for i in idx if widths[i] < nat[i]]
        if not cand:
            return
        i = min(cand, key=lambda j: widths[j])
        widths[i] += 1
        spare -= 1


def write_json(obj, out) -> None:
    out.write(json.dumps(obj, indent=1) + "\n")


def write_csv(header: list[str], rows: Iterable[Sequence], out) -> None:
    import csv

    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)


def write_md_table(out, header: list[str], rows: list[list], right: Container[int] = ()) -> None:
    """A GitHub-flavoured markdown table; columns whose index is in `right` are right-aligned."""

    def cell(v) -> str:
        return printable(str(v).replace("|", "\\|").replace("\n", " "))

    out.write("| " + " | ".join(cell(h) for h in header) + " |\n")
    out.write("|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|\n")
    for r in rows:
        out.write("| " + " | ".join(cell(v) for v in r) + " |\n")


def md_code(text) -> str:
    """`text` as an inline code span (one with a backtick in it gets a double-backtick span)."""
    s = str(text)
    return f"`` {s} ``" if "`" in s else f"`{s}`"
