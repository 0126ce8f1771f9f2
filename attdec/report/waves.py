"""Print per-wave rows as a table, JSON or CSV."""

from __future__ import annotations

import json
from collections.abc import Iterable

import numpy as np

from attdec.analysis.classify import STALL_TYPES
from attdec.analysis.waves import WaveRow, WaveRows
from attdec.report.base import Reporters, Writer
from attdec.report.common import Col, cell_len, console, draw_table, human, pct, printable, write_csv

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
        r.cu if r.cu >= 0 else None,
        r.begin,
        r.end,
        r.duration,
        r.instructions,
        r.latency,
        r.stall if r.stall_measured else None,
        round(r.stall_share, 6) if r.stall_measured else None,
        r.dominant_type,
    ]


def print_json(rows: Iterable[WaveRow], out, dispatches=()) -> None:
    """{"waves": [...]}, plus "notes" (what the decode lost or doubts) and "info" (the decoder's INFO
    records: dispatch, se, kind, count, byte) when the dispatches have any. Written a row at a time (as
    json.dumps(doc, indent=1) would write it whole): a million rows are never one string."""
    notes = [f"{d.name}: {p}" for d in dispatches for p in d.problems]
    info = [
        {"dispatch": d.name, "se": i.se, "kind": i.kind, "count": i.count, "byte": i.byte}
        for d in dispatches
        for i in d.info
    ]
    out.write('{\n "waves": [')
    sep = "\n"
    for r in rows:
        d = dict(zip(FIELDS, _values(r)))
        d["by_type"] = r.by_type
        d["file"] = r.path
        out.write(sep + "  " + json.dumps(d, indent=1).replace("\n", "\n  "))
        sep = ",\n"
    out.write("]" if sep == "\n" else "\n ]")
    rest: dict = {}
    if notes:
        rest["notes"] = notes
    if info:
        rest["info"] = info
    out.write("," + json.dumps(rest, indent=1)[1:] + "\n" if rest else "\n}\n")


def print_csv(rows: Iterable[WaveRow], out) -> None:
    write_csv(FIELDS, ([("" if v is None else v) for v in _values(r)] for r in rows), out)


def columns(rows) -> dict[str, dict]:
    """The rows as one table of columns, `waves` (`--format npz`; a missing value is None, see report.columns).
    WaveRows give theirs without a row object each, in the types report.columns.plain makes of the values."""
    if not isinstance(rows, WaveRows) or not len(rows):
        values = [_values(r) for r in rows]
        return {"waves": {f: [v[i] for v in values] for i, f in enumerate(FIELDS)}}
    c, i64 = rows.cols, np.int64
    measured = np.array(rows.measured, bool)[c["dispatch"]]
    by_type = np.where(rows.by_type != 0, rows.by_type, np.iinfo(i64).min)
    dom = np.array(STALL_TYPES, object)[by_type.argmax(1)]
    dom[c["stall"] == 0] = None
    share = [round(x, 6) if m else None for x, m in zip(c["stall_share"].tolist(), measured.tolist())]
    return {
        "waves": {
            "dispatch": [rows.labels[d] for d in c["dispatch"].tolist()],
            **{f: c[f].astype(i64) for f in ("se", "simd", "slot", "wave")},
            "cu": np.where(c["cu"] >= 0, c["cu"], -1).astype(i64),
            **{f: c[f].astype(i64) for f in ("begin", "end", "duration", "instructions", "latency")},
            "stall": np.where(measured, c["stall"], -1).astype(i64),
            "stall_share": share,
            "dominant_type": dom.tolist(),
        }
    }


def print_table(rows, dispatches, matched: int | None, out) -> None:
    """One header line, then the table; with several dispatches a dispatch column (and a kernel column
    when they ran different kernels)."""
    con = console(out)
    several = len(dispatches) > 1
    kernels = list(dict.fromkeys(d.kernel or "?" for d in dispatches))
    count = matched if matched is not None else len(rows)
    shown = "" if matched in (None, len(rows)) else f" (showing {len(rows)})"
    archs = ", ".join(sorted({d.arch for d in dispatches}))
    if several:
        ks = ", ".join(kernels[:3]) + (f" and {len(kernels) - 3} more" if len(kernels) > 3 else "")
        what = f"{len(dispatches)} dispatches of {ks}"
    else:
        d = dispatches[0] if dispatches else None
        what = f"{d.kernel or d.name} [{d.name}]" if d else "no dispatch"
    con.print(f"{count} waves of {what} {archs}{shown}", style="bold")
    for d in dispatches:  # what the decode lost or doubts: damage, waves cut, walks stopped (with SE and byte)
        for p in d.problems:
            con.print(f"  note: {d.name + ': ' if several else ''}{p}", style="yellow")
    if not rows:
        return
    cols = [Col("dispatch", "text", "left", min=12)] if several else []
    if several and len(kernels) > 1:
        cols.append(Col("kernel", "text", "left", min=8))
    cols += [
        Col("se"),
        Col("simd", short="sm"),
        Col("slot", short="sl"),
        Col("wave", short="wv"),
        Col("cu"),
        Col("begin"),
        Col("end"),
        Col("duration", short="dur"),
        Col("instrs", short="ins"),
        Col("stall"),
        Col("stall/dur", short="st/d"),
        Col("dominant", justify="left", short="type"),
    ]

    def cells(rows):
        for r in rows:
            row = [r.dispatch] if several else []
            if several and len(kernels) > 1:
                row.append(r.kernel or "?")
            measured = r.stall_measured
            row += [
                str(r.se),
                str(r.simd),
                str(r.slot),
                str(r.wave),
                str(r.cu) if r.cu >= 0 else "?",
                str(r.begin),
                str(r.end),
                human(r.duration),
                str(r.instructions),
                human(r.stall) if measured else "-",
                pct(r.stall_share) if measured else "-",
                r.dominant_type or "-",
            ]
            yield row

    widths = [0] * len(cols)  # a first pass for the widths, so that the rows are made as they are printed
    for row in cells(rows):
        widths = [max(w, cell_len(printable(v))) for w, v in zip(widths, row)]
    draw_table(con, cols, cells(rows), cell_widths=widths)


def write_columns(rows, out) -> None:
    """The rows as numpy columns in one .npz (docs/api.md, 'Columnar output')."""
    from attdec.report.columns import write_npz

    write_npz(out, columns(rows))


def reporters(dispatches, matched: int | None) -> Reporters:
    """`attdec waves`' formats (the result: the WaveRows shown); the dispatches they came from give the
    header and JSON notes, `matched` the rows before --top."""
    return {
        "table": Writer(print_table, dispatches=dispatches, matched=matched),
        "json": Writer(print_json, dispatches=dispatches),
        "csv": Writer(print_csv),
        "npz": Writer(write_columns),
    }
