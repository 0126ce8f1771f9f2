"""Print wait sites with their producers (`attdec waits`) and hidden latency (`attdec latency`, both definitions)."""

from __future__ import annotations

from collections.abc import Callable

from attdec.analysis.hotspots import frame_of
from attdec.analysis.latency import AmdHidden, AmdHiddenLatency, HiddenLatency, Latency
from attdec.analysis.waits import WaitSite
from attdec.isa.categories import mnemonic_of
from attdec.model import CodeLine, Dispatch
from attdec.model.record import Record
from attdec.report.base import Reporters, Writer
from attdec.report.common import Col, common_dir, console, draw_table, human, pct, strip_dir, write_csv, write_json


class WaitReport(Record):
    dispatch: Dispatch
    waves: int
    sites: list[WaitSite]


def _round(x, n=1):
    return None if x is None else round(x, n)


def _where(c) -> dict:
    return {"pc": c.vaddr, "codeobj": c.codeobj, "line": c.line, "text": c.text, "source": c.source}


def _head(d: Dispatch, waves: int) -> dict:
    return {"dispatch": d.name, "kernel": d.kernel, "arch": d.arch, "waves": waves}


def _one_or_many(objs: list[dict], out) -> None:
    write_json(objs[0] if len(objs) == 1 else {"dispatches": objs}, out)


# ---- attdec waits ---------------------------------------------------------------------------------


def waits_json(r: WaitReport, top: int) -> dict:
    sites = r.sites[:top] if top else r.sites
    obj = _head(r.dispatch, r.waves)
    obj["wait_stall"] = sum(s.stall for s in r.sites)
    obj["attributed"] = sum(s.attributed for s in r.sites)
    obj["waits"] = [
        {
            **_where(s.code),
            "counters": s.counters,
            "type": s.type,
            "hits": s.hits,
            "stall": s.stall,
            "stall_mean": _round(s.stall_mean),
            "stall_p50": _round(s.stall_p50),
            "stall_p95": _round(s.stall_p95),
            "attributed": s.attributed,
            "distance": {"instructions": _round(s.distance_instructions), "cycles": _round(s.distance_cycles)},
            "producers": [
                {
                    **_where(p.code),
                    "mnemonic": mnemonic_of(p.code.text),
                    "share": round(p.share, 6),
                    "stall": p.stall,
                    "executions": p.executions,
                    "distance": {"instructions": _round(p.distance_instructions), "cycles": _round(p.distance_cycles)},
                }
                for p in s.producers
            ],
        }
        for s in sites
    ]
    return obj


def print_waits_json(reports: list[WaitReport], top: int, out) -> None:
    _one_or_many([waits_json(r, top) for r in reports], out)


WAITS_CSV = [
    "dispatch",
    "pc",
    "wait",
    "source",
    "counters",
    "hits",
    "stall",
    "stall_p50",
    "stall_p95",
    "producer_pc",
    "producer",
    "producer_source",
    "share",
    "producer_stall",
]


def print_waits_csv(reports: list[WaitReport], top: int, out) -> None:
    rows = []
    for r in reports:
        for s in r.sites[:top] if top else r.sites:
            counters = " ".join(f"{k}({v})" for k, v in s.counters.items())
            head = [r.dispatch.name, s.code.vaddr, s.code.text, s.code.source, counters, s.hits, s.stall]
            head += [_round(s.stall_p50), _round(s.stall_p95)]
            if not s.producers:
                rows.append([*head, "", "", "", "", ""])
            for p in s.producers:
                rows.append([*head, p.code.vaddr, p.code.text, p.code.source, f"{p.share:.6f}", p.stall])
    write_csv(WAITS_CSV, rows, out)


def print_waits_table(reports: list[WaitReport], top: int, producers: int, out) -> None:
    con = console(out)
    for i, r in enumerate(reports):
        if i:
            con.print()
        _waits_section(con, r, top, producers)


def _title(con, d: Dispatch, waves: int) -> None:
    con.print(f"{d.kernel or '(kernel unknown)'}  [{d.name}]  {d.arch}  {waves} waves", style="bold")
    for p in d.problems:
        con.print(f"  note: {p}", style="yellow")


def _waits_section(con, r: WaitReport, top: int, producers: int) -> None:
    _title(con, r.dispatch, r.waves)
    total = sum(s.stall for s in r.sites)
    attributed = sum(s.attributed for s in r.sites)
    named = {p.code.line for s in r.sites for p in s.producers}
    con.print(
        f"  {len(r.sites)} wait sites, {sum(s.hits for s in r.sites):,} executed; wait stall {human(total)}, "
        f"{pct(attributed / total if total else 0)} charged to {len(named)} producer instructions"
    )
    sites = r.sites[:top] if top else r.sites
    if not sites:
        con.print("  (no wait instruction executed)")
        return
    prefix = common_dir([frame_of(c.source) for s in sites for c in (s.code, *(p.code for p in s.producers))])
    con.print(
        f"top {len(sites)} of {len(r.sites)} wait sites by stall" + (f" (paths under {prefix}/)" if prefix else ""),
        style="bold",
    )
    cols = [Col(name) for name in ("#", "stall", "share", "hits", "mean", "p50", "p95", "dist")]
    # an instruction and its source line share a cell (the line after the text): at 80 columns the two
    # instruction columns then keep their words whole
    cols += [Col("wait, source", "text", "left", min=10), Col("waits for, source", "text", "left", min=10)]
    cols.append(Col("share"))
    rows: list[list] = []
    for n, s in enumerate(sites, 1):
        dist = "-"
        if s.distance_instructions is not None and s.distance_cycles is not None:
            dist = f"{s.distance_instructions:.0f}i/{human(s.distance_cycles)}c"
        where = strip_dir(frame_of(s.code.source), prefix) or f"0x{s.code.vaddr:x}"
        cells = [
            str(n),
            human(s.stall),
            pct(s.stall / total if total else 0),
            human(s.hits),
            human(round(s.stall_mean)),
            human(round(s.stall_p50)),
            human(round(s.stall_p95)),
            dist,
            f"{s.code.text} ({where})",
        ]
        shown = s.producers[:producers]
        if not shown:
            rows.append([*cells, "(none named)" if s.stall else "-", ""])
        for k, p in enumerate(shown):
            psrc = strip_dir(frame_of(p.code.source), prefix) or f"0x{p.code.vaddr:x}"
            rows.append([*(cells if k == 0 else [""] * len(cells)), f"{p.code.text} ({psrc})", pct(p.share)])
        if len(s.producers) > producers:
            rest = sum(p.share for p in s.producers[producers:])
            rows.append([*[""] * len(cells), f"... {len(s.producers) - producers} more", pct(rest)])
    draw_table(con, cols, rows)
    con.print(
        "dist: mean instructions / cycles from the youngest producer's issue to the wait; "
        "share: of the wait's stall (of its executions if it never stalled)",
        style="dim",
    )


# ---- attdec latency -------------------------------------------------------------------------------


class LatencyReport(Record):
    dispatch: Dispatch
    waves: int
    result: HiddenLatency


def _code(x: Latency) -> CodeLine:
    """The instruction of a per-instruction row."""
    return x.code if x.code is not None else CodeLine(-1, x.key)


def _lat(x: Latency) -> dict:
    return {
        "executions": x.executions,
        "retired": x.retired,
        "unretired": x.unretired,
        "hidden": x.hidden,
        "exposed": x.exposed,
        "stalled_elsewhere": x.stalled_elsewhere,
        "hidden_share": round(x.share, 6),
    }


def latency_json(r: LatencyReport, by: str, top: int) -> dict:
    res = r.result
    rows = res.by_line if by == "line" else res.by_instruction
    rows = rows[:top] if top else rows
    obj = _head(r.dispatch, r.waves)
    obj["hidden_share"] = round(res.kernel.share, 6)
    obj["totals"] = _lat(res.kernel)
    obj["by_unit"] = [{"unit": u.key, **_lat(u)} for u in res.by_unit]
    obj["by"] = by
    if by == "line":
        obj["rows"] = [{"key": x.key, **_lat(x)} for x in rows]
    else:
        obj["rows"] = [{**_where(_code(x)), "unit": x.unit, **_lat(x)} for x in rows]
    return obj


def print_latency_json(reports: list[LatencyReport], by: str, top: int, out) -> None:
    _one_or_many([latency_json(r, by, top) for r in reports], out)


LATENCY_CSV = ["dispatch", "key", "unit", "executions", "retired", "hidden", "exposed", "hidden_share"]


def print_latency_csv(reports: list[LatencyReport], by: str, top: int, out) -> None:
    rows = []
    for r in reports:
        xs = r.result.by_line if by == "line" else r.result.by_instruction
        for x in xs[:top] if top else xs:
            rows.append(
                [r.dispatch.name, x.key, x.unit, x.executions, x.retired, x.hidden, x.exposed, f"{x.share:.6f}"]
            )
    write_csv(LATENCY_CSV, rows, out)


def print_latency_table(reports: list[LatencyReport], by: str, top: int, out) -> None:
    _sections(reports, _latency_section, by, top, out)


def _sections(reports, section, by: str, top: int, out) -> None:
    """One `section(con, report, by, top)` per dispatch, a blank line between them."""
    con = console(out)
    for i, r in enumerate(reports):
        if i:
            con.print()
        section(con, r, by, top)


def _ranking(con, rows: list, by: str, top: int, what: str, ranked_by: str) -> tuple[list, str]:
    """The rows to show and the folder their paths are shown under, after the ranking's heading line
    (nothing printed when there is no row)."""
    shown = rows[:top] if top else rows
    if not shown:
        return shown, ""
    prefix = common_dir([x.key for x in shown] if by == "line" else [frame_of(_code(x).source) for x in shown])
    con.print(
        f"top {len(shown)} of {len(rows)} by {what}, ranked by {ranked_by}"
        + (f" (paths under {prefix}/)" if prefix else ""),
        style="bold",
    )
    return shown, prefix


def _where_cols(by: str) -> list[Col]:
    if by == "line":
        return [Col("source line", "path", "left", min=16)]
    return [Col("instruction", "text", "left", min=12), Col("source", "path", "left", min=12)]


def _where_cells(x, by: str, prefix: str) -> list[str]:
    if by == "line":
        return [strip_dir(x.key, prefix)]
    c = _code(x)
    return [c.text, strip_dir(frame_of(c.source), prefix) or f"0x{c.vaddr:x}"]


def _latency_section(con, r: LatencyReport, by: str, top: int) -> None:
    _title(con, r.dispatch, r.waves)
    k = r.result.kernel
    con.print(
        f"  {pct(k.share)} of memory latency hidden: {human(k.hidden)} cycles covered, {human(k.exposed)} exposed "
        f"as stall, over {k.retired:,} operations a wait retired ({k.unretired:,} never waited for)"
    )
    if r.result.by_unit:
        cols = [Col("unit", justify="left"), *(Col(n) for n in ("ops", "retired", "hidden", "exposed", "hidden%"))]
        units = [
            [u.key, f"{u.executions:,}", f"{u.retired:,}", human(u.hidden), human(u.exposed), pct(u.share), share]
            for u in r.result.by_unit
            for share in [u.share if u.retired else 0.0]
        ]
        draw_table(con, [*cols, Col("", "bar", bar=20)], units, indent=2)
    rows = r.result.by_line if by == "line" else r.result.by_instruction
    what = "source line" if by == "line" else "memory instruction"
    shown, prefix = _ranking(con, rows, by, top, what, "exposed latency")
    if not shown:
        return
    cols = [Col(n, short=sh) for n, sh in (("#", ""), ("exposed", "exp"), ("hidden", "hid"), ("hidden%", "hid%"))]
    cols += [Col("ops"), Col("retired", short="ret"), Col("latency/op", short="lat/op"), *_where_cols(by)]
    table = []
    for n, x in enumerate(shown, 1):
        per = (x.hidden + x.exposed) / x.retired if x.retired else 0
        cells = [str(n), human(x.exposed), human(x.hidden), pct(x.share), human(x.executions), human(x.retired)]
        table.append([*cells, human(round(per)), *_where_cells(x, by, prefix)])
    draw_table(con, cols, table)
    con.print(
        "hidden: issue to the retiring wait's arrival; exposed: that wait's stall (counted for every "
        "operation it retired); latency/op: (hidden + exposed) / retired",
        style="dim",
    )


# ---- attdec latency --definition amd --------------------------------------------------------------


class AmdLatencyReport(Record):
    dispatch: Dispatch
    waves: int
    result: AmdHiddenLatency


def _amd(x: AmdHidden) -> dict:
    return {
        "hits": x.hits,
        "latency": x.latency,
        "idle": x.idle,
        "hidden_idle": x.hidden_idle,
        "hidden_stall": x.hidden_stall,
        "hidden_issue": x.hidden_issue,
        "hidden": x.hidden,
        "exposed": x.exposed,
        "hidden_share": round(x.share, 6),
    }


def amd_latency_json(r: AmdLatencyReport, by: str, top: int) -> dict:
    res = r.result
    rows = res.by_line if by == "line" else res.by_instruction
    rows = rows[:top] if top else rows
    obj = _head(r.dispatch, r.waves)
    obj["definition"] = "amd"
    obj["hidden_share"] = round(res.kernel.share, 6)
    obj["totals"] = _amd(res.kernel)
    obj["by"] = by
    if by == "line":
        obj["rows"] = [{"key": x.key, **_amd(x)} for x in rows]
    else:
        obj["rows"] = [{**_where(x.code or CodeLine(-1, x.key)), **_amd(x)} for x in rows]
    return obj


def print_amd_latency_json(reports: list[AmdLatencyReport], by: str, top: int, out) -> None:
    _one_or_many([amd_latency_json(r, by, top) for r in reports], out)


AMD_LATENCY_CSV = ["dispatch", "key", "hits", "latency", "idle", "hidden_idle", "hidden_stall", "hidden_issue"]
AMD_LATENCY_CSV += ["hidden", "exposed", "hidden_share"]


def print_amd_latency_csv(reports: list[AmdLatencyReport], by: str, top: int, out) -> None:
    rows = []
    for r in reports:
        xs = r.result.by_line if by == "line" else r.result.by_instruction
        for x in xs[:top] if top else xs:
            a = _amd(x)
            rows.append([r.dispatch.name, x.key, *(a[k] for k in AMD_LATENCY_CSV[2:-1]), f"{x.share:.6f}"])
    write_csv(AMD_LATENCY_CSV, rows, out)


def print_amd_latency_table(reports: list[AmdLatencyReport], by: str, top: int, out) -> None:
    _sections(reports, _amd_latency_section, by, top, out)


def _amd_latency_section(con, r: AmdLatencyReport, by: str, top: int) -> None:
    _title(con, r.dispatch, r.waves)
    k = r.result.kernel
    con.print(
        f"  {pct(k.share)} of latency + idle hidden by other pipes or waves of the same SIMD (AMD's definition): "
        f"{human(k.hidden)} of {human(k.total)} cycles (idle {human(k.hidden_idle)}, stall {human(k.hidden_stall)}, "
        f"issue {human(k.hidden_issue)})"
    )
    rows = r.result.by_line if by == "line" else r.result.by_instruction
    what = "source line" if by == "line" else "instruction"
    shown, prefix = _ranking(con, rows, by, top, what, "non-hidden cycles")
    if not shown:
        return
    cols = [Col(n, short=sh) for n, sh in (("#", ""), ("non-hidden", "exp"), ("total", "tot"), ("hidden", "hid"))]
    cols += [Col("hidden%", short="hid%"), Col("idle"), Col("stall"), Col("issue"), Col("hits"), *_where_cols(by)]
    table = []
    for n, x in enumerate(shown, 1):
        cells = [str(n), human(x.exposed), human(x.total), human(x.hidden), pct(x.share)]
        cells += [human(x.hidden_idle), human(x.hidden_stall), human(x.hidden_issue), human(x.hits)]
        table.append([*cells, *_where_cells(x, by, prefix)])
    draw_table(con, cols, table)
    con.print(
        "total: latency + idle; hidden: cycles of the idle, stall and issue windows during which other pipes or "
        "other waves of the same SIMD were busy (idle bounded by the listing's idle)",
        style="dim",
    )


def wait_reporters(top: int, producers: int) -> Reporters:
    """`attdec waits`' formats (the result: a WaitReport per dispatch); `producers` listed per wait in the table."""
    return {
        "table": Writer(print_waits_table, top=top, producers=producers),
        "json": Writer(print_waits_json, top=top),
        "csv": Writer(print_waits_csv, top=top),
    }


def latency_reporters(by: str, top: int, definition: str) -> Reporters:
    """`attdec latency`'s formats (the result: an AmdLatencyReport per dispatch for the "amd" definition,
    else a LatencyReport)."""
    writers: dict[str, Callable[..., None]]
    if definition == "amd":
        writers = {"table": print_amd_latency_table, "json": print_amd_latency_json, "csv": print_amd_latency_csv}
    else:
        writers = {"table": print_latency_table, "json": print_latency_json, "csv": print_latency_csv}
    return {fmt: Writer(fn, by=by, top=top) for fmt, fn in writers.items()}
