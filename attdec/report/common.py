"""Small helpers every reporter shares: number formatting, bars, paths, escaping, the console, tables that fit."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, cast

from rich.cells import cell_len
from rich.console import Console, JustifyMethod
from rich.segment import Segment
from rich.table import Table

from attdec.analysis import norm_path

PIPED_WIDTH = 4096  # piped output without COLUMNS: as wide as it needs to be, nothing folded or cut


class _RStrip(io.TextIOBase):
    """File wrapper that drops the trailing blanks rich pads table lines with (for piped output)."""

    def __init__(self, f):
        self._f, self._buf = f, ""

    def write(self, s: str) -> int:
        self._buf += s
        *lines, self._buf = self._buf.split("\n")
        for line in lines:
            self._f.write(line.rstrip() + "\n")
        return len(s)

    def flush(self) -> None:
        if self._buf:
            self._f.write(self._buf)
            self._buf = ""
        self._f.flush()

    def isatty(self) -> bool:
        return False


class SafeConsole(Console):
    """The Console every reporter prints through. Text from inputs (instructions, paths, kernel names)
    has its control characters escaped, whoever printed it, so a trace cannot drive the terminal; a
    closed pipe (`attdec ... | head`) reaches the command line, which exits 0 quietly (rich exits 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control or seg.text.isprintable() else Segment(_escape_keep_lines(seg.text), seg.style)
            for seg in buffer
        )


def _columns_env() -> int | None:
    try:
        n = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return n if n > 0 else None


def console(out=None) -> Console:
    """A console on `out` (default stdout). On a terminal rich sizes it; piped, it is colourless and as wide
    as $COLUMNS says, or wide enough that nothing is folded."""
    out = sys.stdout if out is None else out
    if out.isatty():
        return SafeConsole(file=out, highlight=False, markup=False)
    width = _columns_env() or PIPED_WIDTH
    return SafeConsole(
        file=cast(IO[str], _RStrip(out)), width=width, no_color=True, highlight=False, soft_wrap=False, markup=False
    )


# ---- text from inputs ----------------------------------------------------------------------------

# C0/C1 controls (ESC, CR, BEL, backspace, ...) and the bidirectional overrides: text from a trace
# (instruction text, source paths, kernel and file names) must not clear the screen or reorder a line.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROLS.update({c: f"\\u{c:04x}" for c in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def printable(text: object) -> str:
    """`text` with control characters shown as escapes (`\\x1b`): for output that does not go through a
    SafeConsole (click.echo, stderr lines), and to measure a cell as it will print."""
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


@dataclass
class Col:
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


def fit_table(con: Console, cols: Sequence[Col], rows: Sequence[Sequence], indent: int = 0) -> None:
    """Print `rows` under `cols` within the console's width, keeping every figure whole.

    Narrowing, in order: bars shrink (and go), text and path columns shrink to their minimum, headers
    take their short forms, the gap between columns drops to one space, text columns go down to 4 cells.
    What still does not fit is printed wider than the console (the terminal wraps the line) rather than
    cutting a figure. Bar cells are fractions; every other cell is a string.
    """
    width = con.width - indent
    headers = [c.header for c in cols]
    gap = 2
    nat = [_natural(c, h, [r[i] for r in rows]) for i, (c, h) in enumerate(zip(cols, headers))]
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
    if total() > width:  # 3. short headers
        headers = [c.short or c.header for c in cols]
        for i, c in enumerate(cols):
            if c.kind == "whole":
                widths[i] = _natural(c, headers[i], [r[i] for r in rows])
    if total() > width:  # 4. one space between columns
        gap = 1
    if total() > width:  # 5. text below its comfortable minimum (it folds onto more lines)
        _shrink(widths, flex, [min(4, nat[i]) for i in range(len(cols))], total() - width)
    if total() < width:  # give text columns back what the short headers and the gap freed
        _grow(widths, flex, nat, width - total())

    tab = Table(box=None, pad_edge=False, show_header=True, header_style="bold", padding=(0, gap - 1, 0, 1))
    keep = [i for i, c in enumerate(cols) if widths[i] or c.kind != "bar"]
    for i in keep:
        c = cols[i]
        tab.add_column(
            headers[i] if c.kind != "bar" else "",
            justify="left" if c.kind == "bar" else c.justify,
            width=widths[i],
            no_wrap=c.kind in ("whole", "bar"),  # path cells are cut to fit; only a long header folds
            overflow="fold",
        )
    for r in rows:
        cells = []
        for i in keep:
            c, v = cols[i], r[i]
            if c.kind == "bar":
                cells.append(bar(float(v), widths[i]))
            elif c.kind == "path":
                cells.append(left_cut(printable(v), widths[i]))
            else:
                cells.append(printable(v))
        tab.add_row(*cells)
    need = sum(widths[i] for i in keep) + gap * (len(keep) - 1) + indent
    old = con.width
    con.width = max(old, need)  # a figure is never cut: too narrow a terminal wraps the line instead
    try:
        if indent:
            from rich.padding import Padding

            con.print(Padding(tab, (0, 0, 0, indent)))
        else:
            con.print(tab)
    finally:
        con.width = old


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


def write_csv(header: list[str], rows: list[list], out) -> None:
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
