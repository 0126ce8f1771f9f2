"""Small helpers every reporter shares: number formatting, bars, path shortening, the console."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Container
from typing import IO, cast

from rich.console import Console


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


def console(out=None) -> Console:
    """A console on `out` (default stdout); wide and colourless when piped so tables are not squeezed."""
    out = sys.stdout if out is None else out
    if out.isatty():
        return Console(file=out, highlight=False, markup=False)
    return Console(
        file=cast(IO[str], _RStrip(out)), width=200, no_color=True, highlight=False, soft_wrap=False, markup=False
    )


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


def common_dir(paths: list[str]) -> str:
    """Longest common directory of the paths that look like paths ('' if none or only one dir deep)."""
    ps = [p for p in paths if "/" in p]
    if len(ps) < 1:
        return ""
    try:
        d = os.path.commonpath([os.path.dirname(p) or "/" for p in ps])
    except ValueError:
        return ""
    return "" if d in ("", "/", ".") else d


def strip_dir(path: str, prefix: str) -> str:
    return path[len(prefix) + 1 :] if prefix and path.startswith(prefix + "/") else path


def write_json(obj, out) -> None:
    out.write(json.dumps(obj, indent=1) + "\n")


def write_csv(header: list[str], rows: list[list], out) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)


def write_md_table(out, header: list[str], rows: list[list], right: Container[int] = ()) -> None:
    """A GitHub-flavoured markdown table; columns whose index is in `right` are right-aligned."""

    def cell(v) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    out.write("| " + " | ".join(cell(h) for h in header) + " |\n")
    out.write("|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|\n")
    for r in rows:
        out.write("| " + " | ".join(cell(v) for v in r) + " |\n")
