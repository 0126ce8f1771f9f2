"""Print per-wave rows as a rich table, JSON or CSV."""

from __future__ import annotations

from rich.table import Table

from attdec.analysis.waves import WaveRow
from attdec.report.common import console, human, pct, write_csv, write_json

FIELDS = [
    "dispatch",
    "se",
    "simd",
    "slot",
    "wave",
    "cu",
    "begin",
    "end",
    "duration",
    "instructions",
    "latency",
    "stall",
    "stall_share",
    "dominant_type",
]


def _values(r: WaveRow) -> list:
    return [
        r.dispatch,
        r.se,
        r.simd,
        r.slot,
        r.wave,
        r.cu,
        r.begin,
        r.end,
        r.duration,
        r.instructions,
        r.latency,
        r.stall,
        round(r.share, 6),
        r.dominant_type,
    ]


def print_json(rows: list[WaveRow], out) -> None:
    objs = []
    for r in rows:
        d = dict(zip(FIELDS, _values(r)))
        d["by_type"] = r.by_type
        d["file"] = r.path
        objs.append(d)
    write_json({"waves": objs}, out)


def print_csv(rows: list[WaveRow], out) -> None:
    write_csv(FIELDS, [[("" if v is None else v) for v in _values(r)] for r in rows], out)


def print_table(rows: list[WaveRow], dispatches, matched: int | None, out) -> None:
    con = console(out)
    several = len({r.dispatch for r in rows}) > 1
    tab = Table(box=None, pad_edge=False, header_style="bold")
    if several:
        tab.add_column("dispatch", overflow="fold")
    for name in ("se", "simd", "slot", "wave", "cu", "begin", "end", "duration", "instrs", "stall"):
        tab.add_column(name, justify="right", no_wrap=True)
    tab.add_column("stall/dur", justify="right", no_wrap=True)
    tab.add_column("dominant", no_wrap=True)
    for r in rows:
        cells = [
            str(r.se),
            str(r.simd),
            str(r.slot),
            str(r.wave),
            str(r.cu),
            str(r.begin),
            str(r.end),
            human(r.duration),
            str(r.instructions),
            human(r.stall),
            pct(r.share),
            r.dominant_type or "-",
        ]
        tab.add_row(*(([r.dispatch] if several else []) + cells))
    names = ", ".join(f"{d.kernel or d.name} [{d.name}] {d.arch}" for d in dispatches)
    shown = "" if matched in (None, len(rows)) else f" (showing {len(rows)})"
    con.print(f"{matched if matched is not None else len(rows)} waves of {names}{shown}", style="bold")
    if rows:
        con.print(tab)
