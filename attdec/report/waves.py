"""Print per-wave rows as a table, JSON or CSV."""

from __future__ import annotations

from attdec.analysis.waves import WaveRow
from attdec.report.common import Col, console, fit_table, human, pct, write_csv, write_json

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
        round(r.share, 6) if r.stall_measured else None,
        r.dominant_type,
    ]


def print_json(rows: list[WaveRow], out, dispatches=()) -> None:
    """{"waves": [...]}, plus "notes" (what the decode lost or doubts) and "info" (the decoder's INFO
    records: dispatch, se, kind, count, byte) when the dispatches have any."""
    objs = []
    for r in rows:
        d = dict(zip(FIELDS, _values(r)))
        d["by_type"] = r.by_type
        d["file"] = r.path
        objs.append(d)
    doc: dict = {"waves": objs}
    notes = [f"{d.name}: {p}" for d in dispatches for p in d.problems]
    info = [
        {"dispatch": d.name, "se": i.se, "kind": i.kind, "count": i.count, "byte": i.byte}
        for d in dispatches
        for i in d.info
    ]
    if notes:
        doc["notes"] = notes
    if info:
        doc["info"] = info
    write_json(doc, out)


def print_csv(rows: list[WaveRow], out) -> None:
    write_csv(FIELDS, [[("" if v is None else v) for v in _values(r)] for r in rows], out)


def columns(rows: list[WaveRow]) -> dict[str, dict]:
    """The rows as one table of columns, `waves` (`--format npz`; a missing value is None, see report.columns)."""
    values = [_values(r) for r in rows]
    return {"waves": {f: [v[i] for v in values] for i, f in enumerate(FIELDS)}}


def print_table(rows: list[WaveRow], dispatches, matched: int | None, out) -> None:
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
    cells = []
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
            pct(r.share) if measured else "-",
            r.dominant_type or "-",
        ]
        cells.append(row)
    fit_table(con, cols, cells)
