"""Print `Hotspots` as a rich table, JSON or CSV."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from attdec.analysis.hotspots import Hotspots, Row
from attdec.report.common import bar, common_dir, console, human, pct, strip_dir, write_csv, write_json
from attdec.report.kernel import occupancy_line
from attdec.report.kernel import to_json as kernel_json


def to_json(h: Hotspots, top: int) -> dict:
    rows = h.rows[:top] if top else h.rows
    out: dict[str, object] = {
        "dispatch": h.names[0] if len(h.names) == 1 else None,
        "kernel": h.kernel,
        "arch": h.arch,
        "waves": h.waves,
        "instructions": h.listing,
        "by": h.by,
        "totals": dict(h.totals),
        "by_type": [{"type": t, "stall": s, "share": round(f, 6)} for t, s, f in h.by_type],
        "rows": [_row_json(r) for r in rows],
    }
    if h.charge != "wait":
        out["charge"] = h.charge
    if len(h.names) > 1:
        out["merged"] = h.names
        del out["dispatch"]
    if h.problems:
        out["problems"] = h.problems
    if h.kernel_summary is not None:
        out["kernel_resources"] = kernel_json(h.kernel_summary)
    return out


def _row_json(r: Row) -> dict:
    d = {
        "key": r.key,
        "stall": r.stall,
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
                    r.stall,
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


def print_table(reports: list[Hotspots], top: int, out) -> None:
    con = console(out)
    for i, h in enumerate(reports):
        if i:
            con.print()
        _section(con, h, top)


def _section(con, h: Hotspots, top: int) -> None:
    t = h.totals
    title = h.names[0] if len(h.names) == 1 else f"{len(h.names)} dispatches merged"
    con.print(Text(f"{h.kernel or '(kernel unknown)'}  [{title}]", style="bold"))
    share = t["stall"] / t["latency"] if t["latency"] else 0.0
    con.print(f"  arch {h.arch}   waves {h.waves}   instructions {t['hits']:,} executed ({h.listing:,} in listing)")
    con.print(
        f"  total cycles {human(t['latency'])}   stall {human(t['stall'])} ({pct(share)} of cycles)"
        f"   idle {human(t['idle'])}"
    )
    if h.kernel_summary is not None:
        con.print(f"  occupancy {occupancy_line(h.kernel_summary)}")
    if h.charge == "producer":
        con.print("  wait stall charged to the operations the waits waited for (--charge producer)")
    for p in h.problems:
        con.print(f"  note: {p}", style="yellow")
    if h.by_type:
        con.print("stall by type", style="bold")
        tt = Table(title=None, box=None, pad_edge=False, show_header=True, header_style="bold")
        tt.add_column("  type", no_wrap=True)
        tt.add_column("stall", justify="right")
        tt.add_column("share", justify="right")
        tt.add_column("", no_wrap=True)
        for name, s, f in h.by_type:
            tt.add_row(f"  {name}", human(s), pct(f), bar(f, 30))
        con.print(tt)
    rows = h.rows[:top] if top else h.rows
    if not rows:
        con.print("  (no executed instructions)")
        return
    prefix = common_dir([r.extra.get("source", "") if h.by == "instruction" else r.key for r in rows])
    what = {"line": "source line", "instruction": "instruction", "file": "source file"}[h.by]
    con.print(
        f"top {len(rows)} of {len(h.rows)} by {what}, ranked by stall cycles"
        + (f" (paths under {prefix}/)" if prefix else ""),
        style="bold",
    )
    tab = Table(box=None, pad_edge=False, header_style="bold")
    tab.add_column("#", justify="right", no_wrap=True)
    tab.add_column("stall", justify="right", no_wrap=True)
    tab.add_column("share", justify="right", no_wrap=True)
    tab.add_column("", no_wrap=True)
    tab.add_column("hits", justify="right", no_wrap=True)
    tab.add_column("latency", justify="right", no_wrap=True)
    tab.add_column("idle", justify="right", no_wrap=True)
    tab.add_column("dominant", no_wrap=True)
    if h.by == "instruction":
        tab.add_column("instruction", overflow="fold", min_width=24, max_width=60)
        tab.add_column("source", overflow="fold", min_width=14)
    else:
        tab.add_column(what, overflow="fold")
    bar_w = 16 if con.width >= 140 else 8
    for n, r in enumerate(rows, 1):
        cells = [
            str(n),
            human(r.stall),
            pct(r.share),
            bar(r.share, bar_w),
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
            cells += [text, where]  # without a source line, the address tells equal texts apart
        else:
            cells.append(strip_dir(r.key, prefix))
        tab.add_row(*cells)
    con.print(tab)
