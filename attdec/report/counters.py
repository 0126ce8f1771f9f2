"""Print `CounterReport`s: per-counter totals, per SE / CU / block instance, and across dispatches."""

from __future__ import annotations

from attdec.analysis.counters import CounterReport, counters_across
from attdec.report.base import Reporters, Writer
from attdec.report.common import Col, console, draw_table, human, write_csv, write_json


def _where(report: CounterReport, row) -> str:
    if row.per_cu:
        return f"{len(row.per_cu)} {report.unit}s"
    if row.per_se:
        return f"{len(row.per_se)} SEs"
    if row.per_instance:
        return f"{len(row.per_instance)} instances"
    return f"{row.instances}" if row.instances > 1 else "1"


def _table(con, headers: list[str], right: set[int], rows: list[list[str]]) -> None:
    cols = [Col(h, justify="right" if i in right else "left") for i, h in enumerate(headers)]
    draw_table(con, cols, rows, indent=2)


def _section(con, r: CounterReport, by: str) -> None:
    con.print(f"{r.kernel or '(kernel unknown)'}  [{r.dispatch}]  {r.arch}", style="bold")
    if r.rows:
        con.print(f"  source: {', '.join(r.sources)}")
    if by == "total" and r.rows:
        rows = []
        for row in r.rows:
            mean = human(row.total / row.instances if row.instances else 0)
            rows.append([row.name, row.block, f"{row.total:,}", _where(r, row), human(row.min), mean, human(row.max)])
        _table(con, ["counter", "block", "total", "read at", "min", "mean", "max"], {2, 3, 4, 5, 6}, rows)
    elif by == "se" and r.rows:
        rows = [[row.name, str(xcc), str(se), f"{v:,}"] for row in r.rows for xcc, se, v in row.per_se]
        _table(con, ["counter", "xcc", "se", "value"], {1, 2, 3}, rows)
    elif by == "cu" and r.rows:
        rows = [
            [row.name, str(xcc), str(se), str(sa), str(cu), f"{v:,}"]
            for row in r.rows
            for xcc, se, sa, cu, v in row.per_cu
        ]
        _table(con, ["counter", "xcc", "se", "sa", r.unit.lower(), "value"], {1, 2, 3, 4, 5}, rows)
    elif by == "instance" and r.rows:
        rows = [
            [row.name, row.block, str(xcc), str(inst), f"{v:,}"] for row in r.rows for xcc, inst, v in row.per_instance
        ]
        _table(con, ["counter", "block", "xcc", "instance", "value"], {2, 3, 4}, rows)
    if r.time_resolved:
        con.print("  over time", style="bold")
        rows = [[row.name, str(tm), f"{v:,}"] for row in r.rows for tm, v in row.series]
        _table(con, ["counter", "time", "value"], {1, 2}, rows)
    for n in r.notes:
        con.print(f"  note: {n}", style="yellow")


def print_table(reports: list[CounterReport], by: str, out) -> None:
    con = console(out)
    for i, r in enumerate(reports):
        if i:
            con.print()
        _section(con, r, by)
    across = {k: v for k, v in counters_across(reports).items() if len(v) > 1}
    if across:
        con.print()
        con.print("totals across dispatches, in input order", style="bold")
        names = list(dict.fromkeys(d for series in across.values() for d, _ in series))
        rows = []
        for (_, counter), series in across.items():
            by_d = dict(series)
            rows.append([counter, *(f"{by_d[d]:,}" if d in by_d else "-" for d in names)])
        _table(con, ["counter", *names], set(range(1, len(names) + 1)), rows)


def to_json(r: CounterReport) -> dict:
    return {
        "dispatch": r.dispatch,
        "kernel": r.kernel,
        "arch": r.arch,
        "sources": r.sources,
        "time_resolved": r.time_resolved,
        "counters": [
            {
                "name": row.name,
                "block": row.block,
                "source": row.source,
                "total": row.total,
                "instances": row.instances,
                "min": row.min,
                "max": row.max,
                "per_se": [{"xcc": x, "se": s, "value": v} for x, s, v in row.per_se],
                "per_cu": [{"xcc": x, "se": s, "sa": a, "cu": c, "value": v} for x, s, a, c, v in row.per_cu],
                "per_instance": [{"xcc": x, "instance": i, "value": v} for x, i, v in row.per_instance],
                "series": [{"time": t, "value": v} for t, v in row.series],
            }
            for row in r.rows
        ],
        "notes": r.notes,
    }


def print_json(reports: list[CounterReport], by: str, out) -> None:
    write_json({"dispatches": [to_json(r) for r in reports]}, out)


def print_csv(reports: list[CounterReport], by: str, out) -> None:
    """One row per counter value at the chosen granularity (long format)."""
    header = ["dispatch", "kernel", "counter", "block", "source", "xcc", "se", "sa", "cu", "instance", "value"]
    rows = []
    for r in reports:
        for row in r.rows:
            base = [r.dispatch, r.kernel, row.name, row.block, row.source]
            if by == "total":
                rows.append([*base, "", "", "", "", "", row.total])
            elif by == "se":
                rows += [[*base, x, s, "", "", "", v] for x, s, v in row.per_se]
            elif by == "cu":
                rows += [[*base, x, s, a, c, "", v] for x, s, a, c, v in row.per_cu]
            else:
                rows += [[*base, x, "", "", "", i, v] for x, i, v in row.per_instance]
    write_csv(header, rows, out)


def reporters(by: str) -> Reporters:
    """`attdec counters`' formats (the result: a CounterReport per dispatch), rows per `by`."""
    return {fmt: Writer(fn, by=by) for fmt, fn in (("table", print_table), ("json", print_json), ("csv", print_csv))}
