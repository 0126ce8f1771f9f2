"""Small helpers every reporter shares: number formatting, bars, paths, escaping, the console and tables
(rich draws both). Widths are in terminal cells (`cell_len`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Container, Iterable, Sequence
from typing import Literal

from attdec.analysis import norm_path
from attdec.model.record import Record

PIPED_WIDTH = 4096  # piped output without COLUMNS: as wide as it needs to be, nothing folded or cut
JustifyMethod = Literal["left", "right"]


class Console:
    """Where every reporter prints: a rich console on one stream, wrapped at `width` cells (on a terminal
    its width, piped $COLUMNS or PIPED_WIDTH), styled only on a colour terminal. Text from inputs
    (instructions, paths, kernel names) has its control characters escaped, whoever printed it, so a trace
    cannot drive the terminal. Trailing blanks are dropped. A closed pipe raises BrokenPipeError, which the
    command line turns into a quiet exit 0."""

    def __init__(self, file, width: int, color: bool = False):
        from rich.console import Console as Rich

        self.file, self.width, self.color = file, width, color
        self.rich = Rich(
            file=file,
            width=width,
            color_system="standard" if color else None,
            force_terminal=color,
            no_color=not color,
            highlight=False,
            markup=False,
            emoji=False,
        )

    def print(self, text: object = "", style: str | None = None, wrap: bool = True) -> None:
        """One or more lines (`text` may hold newlines), each wrapped at the width unless `wrap` is False."""
        from rich.text import Text

        self.show(Text(_escape_keep_lines(str(text)), style=style or "", no_wrap=not wrap, overflow="ignore"))

    def print_spans(self, spans: Sequence[tuple[str, str | None]]) -> None:
        """One line of differently styled pieces (text, style), never wrapped."""
        from rich.text import Text

        line = Text(no_wrap=True, overflow="ignore")
        for t, st in spans:
            line.append(_escape_keep_lines(t), style=st or "")
        self.show(line)

    def show(self, renderable, width: int | None = None) -> None:
        """Render a rich renderable (already escaped) and write it, trailing blanks dropped."""
        self.rich.width = width or self.width  # wider than the console only for a table that cannot fit
        with self.rich.capture() as cap:
            self.rich.print(renderable, crop=False)
        text = cap.get()
        self.file.write("\n".join(line.rstrip(" ") for line in text.split("\n")))


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


# ---- tables ------------------------------------------------------------------------------------


class Col(Record):
    """One column of a `draw_table`.

    kind "whole": figures and short labels, never cut or folded; "text": wraps between words (folds a word
    wider than the column) when narrow; "path": cut from the left ('…/kernels/k.py:103'); "bar": `bar()`
    cells drawn at whatever width is left. `short` is the header used when the table is too wide with the
    full one; `min` the narrowest a text or path column gets.
    """

    header: str
    kind: str = "whole"
    justify: JustifyMethod = "right"
    short: str = ""
    min: int = 8
    bar: int = 16  # a bar column's preferred width


MAX_WORD = 24  # a word longer than this may be folded in a narrow text column
CHUNK_ROWS = 2000  # a long table is drawn this many rows at a time, its columns laid out once


def draw_table(
    con: Console,
    cols: Sequence[Col],
    rows: Iterable[Sequence],
    indent: int = 0,
    header: bool = True,
    cell_widths: Sequence[int] | None = None,
) -> None:
    """Print `rows` under `cols` as a rich table within the console's width, every figure whole
    (`header=False`: no header line). Bar cells are fractions; every other cell is a string. `cell_widths`:
    each column's widest cell, when the caller knows it: the rows are then read once, drawn a chunk at a
    time with every column's width fixed (a million rows need not all be held). A `Heading` among the rows
    is printed as a line of its own, the columns around it aligned.

    When the full headers make the table too wide the short ones are used; text and path columns give way
    (down to their `min`) before bars; what still does not fit is printed wider than the console (the
    terminal wraps the line) rather than cutting a figure."""
    words = [4] * len(cols)  # the narrowest a text column folds to: its longest word, when the rows are known
    if cell_widths is None:
        rows = [r if isinstance(r, Heading) else list(r) for r in rows]
        cells = [r for r in rows if not isinstance(r, Heading)]
        cell_widths = [
            c.bar if c.kind == "bar" else max([0] + [cell_len(printable(r[i])) for r in cells])
            for i, c in enumerate(cols)
        ]
        for i, c in enumerate(cols):
            if c.kind == "text":
                longest = max([cell_len(w) for r in cells for w in printable(r[i]).split()], default=4)
                words[i] = min(max(4, longest), MAX_WORD)
    width = con.width - indent
    heads = [c.header if header else "" for c in cols]
    natural = [c.bar if c.kind == "bar" else max(cell_len(h), w) for c, h, w in zip(cols, heads, cell_widths)]
    if header and sum(natural) + 2 * (len(cols) - 1) > width:
        heads = [c.short or c.header for c in cols]
    fixed, gap = _layout(cols, [max(w, cell_len(h)) for h, w in zip(heads, cell_widths)], words, width)
    chunk: list = []
    first = True
    for r in rows:
        if isinstance(r, Heading) or len(chunk) == CHUNK_ROWS:
            if chunk or (first and header):
                _draw(con, cols, heads if first else None, fixed, gap, chunk, indent, header)
                chunk, first = [], False
            if isinstance(r, Heading):
                con.print(" " * indent + r.text, style=r.style)
                continue
        chunk.append(r)
    if chunk or first:
        _draw(con, cols, heads if first else None, fixed, gap, chunk, indent, header)


class Heading(Record):
    """A line between the rows of a `draw_table` (a loop's heading between its blocks): the columns above
    and below it stay aligned."""

    text: str
    style: str = "bold"


def _layout(cols: Sequence[Col], natural: list[int], words: list[int], width: int) -> tuple[list[int], int]:
    """(each column's width, the gap between columns). Figures keep their own width; text and path columns
    give way, the widest first, down to their `min` (text: not below its longest word, `words`, so that a
    mnemonic is not broken); then the gap drops to one cell; then paths go down to 8 cells or their header, and only
    then does a word fold; bars take what is left (a bar is the first thing to go)."""
    widths = [0 if c.kind == "bar" else n for c, n in zip(cols, natural)]
    flex = [i for i, c in enumerate(cols) if c.kind in ("text", "path")]
    gap = 2

    def excess() -> int:
        return sum(widths) + gap * (len(cols) - 1) - width

    def shrink(floors: Sequence[int]) -> None:
        while excess() > 0:
            cand = [i for i in flex if widths[i] > min(floors[i], natural[i])]
            if not cand:
                return
            widths[max(cand, key=lambda j: widths[j])] -= 1

    shrink([max(c.min, w) if c.kind == "text" else c.min for c, w in zip(cols, words)])
    if excess() > 0:
        gap = 1
    shrink([w if c.kind == "text" else max(8, cell_len(c.short or c.header)) for c, w in zip(cols, words)])
    shrink([4 if c.kind == "text" else widths[i] for i, c in enumerate(cols)])  # a word folds: no figure is pushed
    for i in sorted(flex, key=lambda j: widths[j]):  # what the narrower gap freed goes back to text first
        widths[i] = min(natural[i], widths[i] + max(0, -excess()))
    for i, c in enumerate(cols):
        if c.kind == "bar":
            widths[i] = min(c.bar, max(0, -excess()))
    return widths, gap


def _draw(con: Console, cols, heads, widths, gap: int, rows, indent: int, header: bool) -> None:
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    keep = [i for i, c in enumerate(cols) if c.kind != "bar" or widths[i] >= 3]  # a bar with no room goes
    need = indent + sum(widths[i] for i in keep) + gap * (len(keep) - 1)
    if not con.color:
        lines = _plain_lines(cols, heads if header else None, widths, gap, rows, keep)
        if lines:
            pad = " " * indent
            text = "\n".join(pad + line for line in lines) if indent else "\n".join(lines)
            con.show(Text(text, no_wrap=True, overflow="ignore"), width=max(con.width, need))
            return
    t = Table(
        box=None,
        show_header=heads is not None and header,
        header_style="bold",
        show_edge=False,
        pad_edge=False,
        padding=(0, 1) if gap == 2 else (0, 1, 0, 0),
    )
    for i in keep:
        c = cols[i]
        t.add_column(
            Text(heads[i] if heads is not None and c.kind != "bar" else ""),
            justify="left" if c.kind == "bar" else c.justify,
            width=widths[i],
            no_wrap=c.kind != "text",
            overflow="fold" if c.kind == "text" else "crop",  # whole cells are never narrower than their column
            vertical="top",
        )
    for r in rows:
        cells = []
        for i in keep:
            c, v, w = cols[i], r[i], widths[i]
            if c.kind == "bar":
                cells.append(Text(bar(float(v), w)))
            elif c.kind == "path":
                cells.append(Text(left_cut(printable(v), w)))
            else:
                cells.append(Text(printable(v)))
        t.add_row(*cells)
    # rich would narrow even fixed columns to fit the console: a figure is never cut, the line is wider
    con.show(Padding(t, (0, 0, 0, indent)) if indent else t, width=max(con.width, need))


def _plain_lines(cols, heads, widths, gap: int, rows, keep: list[int]) -> list[str] | None:
    """The lines rich's Table draws for an unstyled table whose every cell fits its column on one line,
    laid out as one text: a Table lays out every cell through its whole renderer, most of a long table's
    cost. None when a cell needs folding, cutting or trimming (rich's Table draws those)."""
    from rich.cells import cell_len as rich_len

    sep = " " * gap
    kinds = [(cols[i].kind, cols[i].justify, widths[i], i) for i in keep]
    out = []
    if heads is not None:
        head_row = ["" if cols[i].kind == "bar" else heads[i] for i in range(len(cols))]
        line = _plain_line(head_row, kinds, sep, rich_len, header=True)
        if line is None:
            return None
        out.append(line)
    for r in rows:
        line = _plain_line(r, kinds, sep, rich_len)
        if line is None:
            return None
        out.append(line)
    return out


def _plain_line(r, kinds, sep: str, rich_len, header: bool = False) -> str | None:
    cells = []
    for kind, justify, w, i in kinds:
        if kind == "bar" and not header:
            cells.append(bar(float(r[i]), w))  # exactly w cells, spaces kept: left-justified
            continue
        s = printable(r[i]) if not header else r[i]
        if kind == "path":
            s = left_cut(s, w)
        n = len(s) if s.isascii() else rich_len(s)
        if n > w or (s and (s[0] == " " or s[-1] == " ")):
            return None
        cells.append(s + " " * (w - n) if justify == "left" or kind == "bar" else " " * (w - n) + s)
    return sep.join(cells)


def output_stream(path: str, binary: bool = False, inputs=()):
    """The file the user named with -o ('-' = stdout), checked now (refused: a folder, a read-only file, one
    of `inputs`, the files the command reads), written by `with` (attdec.report.output). Binary output
    (.npz) goes to a file only."""
    from attdec.report.output import open_output

    return open_output(path, binary, inputs)


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
