"""Print `Hotspots` as a table, JSON, CSV, markdown or folded stacks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attdec.analysis.hotspots import Hotspots, Row
from attdec.report.base import Reporters, Writer
from attdec.report.common import (
    Col,
    common_dir,
    console,
    draw_table,
    human,
    md_code,
    pct,
    strip_dir,
    write_csv,
    write_json,
    write_md_table,
)
from attdec.report.kernel import occupancy_line
from attdec.report.kernel import to_json as kernel_json

if TYPE_CHECKING:
    from attdec.analysis.flame import Stack


def to_json(h: Hotspots, top: int) -> dict:
    rows = h.rows[:top] if top else h.rows
    out: dict[str, object] = {
        "dispatch": h.names[0] if len(h.names) == 1 else None,
        "kernel": h.kernel,
        "arch": h.arch,
        "waves": h.waves,
        "instructions": h.listing,
        "by": h.by,
        "ranked_by": "stall" if h.stall_measured else "latency",
        "totals": {k: (None if k == "stall" and not h.stall_measured else v) for k, v in h.totals.items()},
        "by_type": [{"type": t, "stall": s, "share": round(f, 6)} for t, s, f in h.by_type],
        "rows": [_row_json(r, h.stall_measured) for r in rows],
    }
    if h.charge != "wait":
        out["charge"] = h.charge
    if len(h.names) > 1:
        out["merged"] = h.names
        del out["dispatch"]
    if h.problems:
        out["problems"] = h.problems
    if h.info:
        out["info"] = [{"se": i.se, "kind": i.kind, "count": i.count, "byte": i.byte} for i in h.info]
    if h.kernel_summary is not None:
        out["kernel_resources"] = kernel_json(h.kernel_summary)
    return out


def _row_json(r: Row, stall_measured: bool = True) -> dict:
    d = {
        "key": r.key,
        "stall": r.stall if stall_measured else None,
        "latency": r.latency,
        "hits": r.hits,
        "idle": r.idle,
        "share": round(r.share, 6),
        "dominant_type": r.dominant_type,
    }
    d.update(r.extra)
    return d


def print_json(reports: list[Hotspots], top: int, out) -> None:
    objs = [to_json(h, top) for h in reports]
    write_json(objs[0] if len(objs) == 1 else {"dispatches": objs}, out)


CSV_HEADER = [
    "dispatch",
    "key",
    "stall",
    "latency",
    "hits",
    "idle",
    "share",
    "dominant_type",
    "line",
    "vaddr",
    "source",
]


def print_csv(reports: list[Hotspots], top: int, out) -> None:
    rows = []
    for h in reports:
        name = h.names[0] if len(h.names) == 1 else "+".join(h.names)
        for r in h.rows[:top] if top else h.rows:
            rows.append(
                [
                    r.extra.get("dispatch", name),
                    r.key,
                    r.stall if h.stall_measured else "",
                    r.latency,
                    r.hits,
                    r.idle,
                    f"{r.share:.6f}",
                    r.dominant_type or "",
                    r.extra.get("line", ""),
                    r.extra.get("vaddr", ""),
                    r.extra.get("source", ""),
                ]
            )
    write_csv(CSV_HEADER, rows, out)


def columns(reports: list[Hotspots], top: int) -> dict[str, dict]:
    """`--format npz`: `rows` (what the table shows, all of them with top 0, `rows.report` numbering the
    reports), `by_type` and `totals`, one row per report."""
    rows: dict[str, list] = {"report": []}
    by_type: dict[str, list] = {"report": [], "type": [], "stall": [], "share": []}
    totals: dict[str, list] = {k: [] for k in ("dispatch", "kernel", "arch", "waves", "instructions")}
    totals.update({k: [] for k in ("hits", "latency", "stall", "idle")})
    for n, h in enumerate(reports):
        shown = h.rows[:top] if top else h.rows
        for r in shown:
            row = {**_row_json(r, h.stall_measured), "dispatch": r.extra.get("dispatch", "+".join(h.names))}
            row.pop("counters", None)
            for k in row:
                if k not in rows:  # a column only some rows have (by instruction: line, vaddr, ...)
                    rows[k] = [None] * len(rows["report"])
            for k in rows:
                rows[k].append(n if k == "report" else row.get(k))
        for t, s, f in h.by_type:
            for k, v in zip(by_type, (n, t, s, f)):
                by_type[k].append(v)
        head = ("+".join(h.names), h.kernel, h.arch, h.waves, h.listing)
        for k, v in zip(totals, head + tuple(h.totals[k] for k in ("hits", "latency", "stall", "idle"))):
            totals[k].append(None if k == "stall" and not h.stall_measured else v)
    return {"rows": rows, "by_type": by_type, "totals": totals}


def print_table(reports: list[Hotspots], top: int, out) -> None:
    con = console(out)
    for i, h in enumerate(reports):
        if i:
            con.print()
        _section(con, h, top)


def _section(con, h: Hotspots, top: int) -> None:
    t = h.totals
    title = h.names[0] if len(h.names) == 1 else f"{len(h.names)} dispatches merged"
    con.print(f"{h.kernel or '(kernel unknown)'}  [{title}]", style="bold")
    con.print(f"  arch {h.arch}   waves {h.waves}   instructions {t['hits']:,} executed ({h.listing:,} in listing)")
    if h.stall_measured:
        share = t["stall"] / t["latency"] if t["latency"] else 0.0
        stall = f"stall {human(t['stall'])} ({pct(share)} of cycles)"
    else:
        stall = "stall - (not in this format)"
    con.print(f"  total cycles {human(t['latency'])}   {stall}   idle {human(t['idle'])}")
    if h.kernel_summary is not None:
        con.print(f"  occupancy {occupancy_line(h.kernel_summary)}")
    if h.charge == "producer":
        con.print("  wait stall charged to the operations the waits waited for (--charge producer)")
    for p in h.problems:
        con.print(f"  note: {p}", style="yellow")
    if h.by_type:
        con.print("stall by type", style="bold")
        draw_table(
            con,
            [Col("type", "text", "left", min=6), Col("stall"), Col("share"), Col("", "bar", bar=30)],
            [(name, human(s), pct(f), f) for name, s, f in h.by_type],
            indent=2,
        )
    rows = h.rows[:top] if top else h.rows
    if not rows:
        con.print("  (no executed instructions)")
        return
    prefix = common_dir([r.extra.get("source", "") if h.by == "instruction" else r.key for r in rows])
    what = {"line": "source line", "instruction": "instruction", "file": "source file"}[h.by]
    measure = "stall cycles" if h.stall_measured else "latency (no stall in this format)"
    con.print(
        f"top {len(rows)} of {len(h.rows)} by {what}, ranked by {measure}"
        + (f" (paths under {prefix}/)" if prefix else ""),
        style="bold",
    )
    cols = [
        Col("#"),
        Col("stall"),
        Col("share"),
        Col("", "bar", bar=16 if con.width >= 140 else 8),
        Col("hits"),
        Col("latency", short="lat"),
        Col("idle"),
        Col("dominant", justify="left", short="type"),
    ]
    if h.by == "instruction":
        cols += [Col("instruction", "text", "left", min=12), Col("source", "path", "left", min=12)]
    else:
        cols.append(Col(what, "path", "left", min=16))
    cells = []
    for n, r in enumerate(rows, 1):
        row = [
            str(n),
            human(r.stall) if h.stall_measured else "-",
            pct(r.share),
            r.share,
            human(r.hits),
            human(r.latency),
            human(r.idle),
            r.dominant_type or "-",
        ]
        if h.by == "instruction":
            text = r.key
            if r.extra.get("dispatch"):
                text = f"{r.extra['dispatch']}: {text}"
            vaddr = r.extra.get("vaddr")
            where = strip_dir(r.extra.get("source", ""), prefix) or (f"0x{vaddr:x}" if vaddr else "-")
            row += [text, where]  # without a source line, the address tells equal texts apart
        else:
            row.append(strip_dir(r.key, prefix))
        cells.append(row)
    draw_table(con, cols, cells)


def print_md(reports: list[Hotspots], top: int, out) -> None:
    """Markdown (GitHub-flavoured) to paste into a pull request: header line, stall types, the top rows."""
    for i, h in enumerate(reports):
        if i:
            out.write("\n")
        _md_section(h, top, out)


def _md_section(h: Hotspots, top: int, out) -> None:
    t = h.totals
    title = h.names[0] if len(h.names) == 1 else f"{len(h.names)} dispatches merged"
    share = t["stall"] / t["latency"] if t["latency"] else 0.0
    out.write(f"### {h.kernel or '(kernel unknown)'} ({md_code(title)})\n\n")
    out.write(
        f"{h.arch} · {h.waves:,} waves · {t['hits']:,} instructions executed ({h.listing:,} in listing)"
        f" · {human(t['latency'])} cycles · stall {human(t['stall'])} ({pct(share)} of cycles)"
        f" · idle {human(t['idle'])}\n\n"
    )
    for p in h.problems:
        out.write(f"> note: {p}\n")
    if h.problems:
        out.write("\n")
    if h.by_type:
        write_md_table(out, ["stall type", "stall", "share"], [[n, human(s), pct(f)] for n, s, f in h.by_type], {1, 2})
        out.write("\n")
    rows = h.rows[:top] if top else h.rows
    if not rows:
        out.write("(no executed instructions)\n")
        return
    prefix = common_dir([r.extra.get("source", "") if h.by == "instruction" else r.key for r in rows])
    what = {"line": "source line", "instruction": "instruction", "file": "source file"}[h.by]
    under = f" (paths under {md_code(prefix + '/')})" if prefix else ""
    out.write(f"Top {len(rows)} of {len(h.rows)} by {what}, ranked by stall cycles{under}:\n\n")
    header = ["#", "stall", "share", "hits", "latency", "idle", "dominant"]
    header += ["instruction", "source"] if h.by == "instruction" else [what]
    body = []
    for n, r in enumerate(rows, 1):
        cells = [n, human(r.stall), pct(r.share), human(r.hits), human(r.latency), human(r.idle)]
        cells.append(r.dominant_type or "-")
        if h.by == "instruction":
            text = f"{r.extra['dispatch']}: {r.key}" if r.extra.get("dispatch") else r.key
            vaddr = r.extra.get("vaddr")
            where = strip_dir(r.extra.get("source", ""), prefix) or (f"0x{vaddr:x}" if vaddr else "-")
            cells += [md_code(text), md_code(where)]
        else:
            cells.append(md_code(strip_dir(r.key, prefix)))
        body.append(cells)
    write_md_table(out, header, body, {0, 1, 2, 3, 4, 5})


def print_folded(stacks: list[Stack], out) -> None:
    """Folded stacks (`frame;frame;frame count`), the input of flamegraph.pl, inferno and speedscope.

    Stall types are summed per chain; a ';' inside a frame would split it, so it becomes ','.
    """
    acc: dict[str, int] = {}
    for s in stacks:
        key = ";".join(f.replace(";", ",").replace("\n", " ") for f in s.frames)
        acc[key] = acc.get(key, 0) + s.stall
    for key, stall in acc.items():
        out.write(f"{key} {stall}\n")


def write_columns(reports: list[Hotspots], top: int, out) -> None:
    """The rows, stall types and totals as numpy columns in one .npz (docs/api.md, 'Columnar output')."""
    from attdec.report.columns import write_npz

    write_npz(out, columns(reports, top))


def print_table_and_pointer(reports: list[Hotspots], top: int, dispatches, out) -> None:
    """The table, then a pointer to `attdec advise` from the rules that read the listing only."""
    from attdec.analysis.advise import advise
    from attdec.report.advise import print_pointer

    print_table(reports, top, out)
    print_pointer([advise(d, cheap=True) for d in dispatches], out)


def reporters(top: int, dispatches) -> Reporters:
    """`attdec hotspots`' formats. The result: a Hotspots per report, or for "folded" the stall stacks
    (analysis.flame); the table's pointer to `attdec advise` reads the `dispatches`."""
    return {
        "table": Writer(print_table_and_pointer, top=top, dispatches=dispatches),
        "json": Writer(print_json, top=top),
        "csv": Writer(print_csv, top=top),
        "md": Writer(print_md, top=top),
        "npz": Writer(write_columns, top=top),
        "folded": Writer(print_folded),
    }
