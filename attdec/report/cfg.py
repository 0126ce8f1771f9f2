"""Print control-flow graphs (`attdec cfg`: indented view, JSON, Graphviz dot) and loop iterations (`attdec loops`)."""

from __future__ import annotations

import numpy as np

from attdec.analysis.cfg import Block, Cfg
from attdec.analysis.hotspots import frame_of
from attdec.analysis.loops import LoopTiming, WaveLoop
from attdec.model import Dispatch
from attdec.model.record import Record, field
from attdec.report.base import Reporters, Writer
from attdec.report.common import Col, Heading, common_dir, console, draw_table, human, pct, strip_dir, write_json


class CfgReport(Record):
    dispatch: Dispatch
    waves: int
    cfgs: list[Cfg]
    timings: list[LoopTiming] = field(default_factory=list)

    def timing(self, cfg: Cfg, loop_id: int) -> LoopTiming | None:
        return next((t for t in self.timings if t.cfg is cfg and t.loop.id == loop_id), None)


def _source(b: Block) -> str:
    """The block's most stalled instruction's own source line (else its first with a source)."""
    ranked = sorted(b.lines, key=lambda c: -c.stall)
    return next((frame_of(c.source) for c in ranked if c.source), "")


def _name(cfg: Cfg) -> str:
    return cfg.kernel or f"(code object {cfg.codeobj})"


# ---- JSON -----------------------------------------------------------------------------------------


def _summary_json(t: LoopTiming | None) -> dict | None:
    if t is None:
        return None
    s = t.summary()
    s["main"] = t.main
    return s


def cfg_json(r: CfgReport) -> dict:
    kernels = []
    for cfg in r.cfgs:
        blocks = [
            {
                "id": b.id,
                "start": b.start,
                "end": b.last.vaddr,
                "instructions": len(b.lines),
                "first_line": b.lines[0].line,
                "last_line": b.last.line,
                "last": b.last.text,
                "source": _source(b),
                "hits": b.hits,
                "cycles": b.cycles,
                "stall": b.stall,
                "idle": b.idle,
                "dominant": b.dominant,
                "by_type": b.by_type,
                "succ": [{"block": s, "kind": k} for s, k in b.succ],
                "pred": b.pred,
                "exit": b.exit,
                "loop": b.loop,
                "consistent": b.consistent,
            }
            for b in cfg.blocks
        ]
        loops = [
            {
                "id": lp.id,
                "header": lp.header,
                "blocks": lp.blocks,
                "back_edges": [list(e) for e in lp.back_edges],
                "parent": lp.parent,
                "depth": lp.depth,
                "children": lp.children,
                "iterations": _summary_json(r.timing(cfg, lp.id)),
            }
            for lp in cfg.loops
        ]
        kernels.append(
            {
                "kernel": cfg.kernel,
                "codeobj": cfg.codeobj,
                "blocks": blocks,
                "loops": loops,
                "irreducible": [list(e) for e in cfg.irreducible],
            }
        )
    return {**_head(r), "kernels": kernels}


def _head(r: CfgReport) -> dict:
    d = r.dispatch
    return {"dispatch": d.name, "kernel": d.kernel, "arch": d.arch, **({"problems": d.problems} if d.problems else {})}


def print_cfg_json(reports: list[CfgReport], out) -> None:
    objs = [cfg_json(r) for r in reports]
    write_json(objs[0] if len(objs) == 1 else {"dispatches": objs}, out)


# ---- dot ------------------------------------------------------------------------------------------


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot_node(out, b: Block, total: int, indent: str) -> None:
    share = b.stall / total
    label = (
        f"B{b.id} 0x{b.start:x}\\n{len(b.lines)} instrs, hits {b.hits}\\n"
        f"cycles {human(b.cycles)}, stall {human(b.stall)} ({pct(share)})"
    )
    if b.dominant:
        label += f"\\n{b.dominant}"
    if b.exit:
        label += f"\\nexit: {b.exit}"
    fill = f"0.0 {min(share * 2, 1):.3f} 1.0"
    out.write(f'{indent}B{b.id} [label="{label}", fillcolor="{fill}"];\n')


def _dot_cluster(out, cfg: Cfg, loop_id: int, total: int, indent: str) -> None:
    lp = cfg.loops[loop_id]
    out.write(f"{indent}subgraph cluster_L{lp.id} {{\n{indent}  label={_q(f'loop L{lp.id}')};\n")
    for b in lp.blocks:
        if cfg.blocks[b].loop == lp.id:
            _dot_node(out, cfg.blocks[b], total, indent + "  ")
    for c in lp.children:
        _dot_cluster(out, cfg, c, total, indent + "  ")
    out.write(f"{indent}}}\n")


def print_cfg_dot(reports: list[CfgReport], out) -> None:
    """One Graphviz digraph per kernel; loops are nested clusters, nodes are shaded by stall share."""
    for r in reports:
        for cfg in r.cfgs:
            total = sum(b.stall for b in cfg.blocks) or 1
            gid = f"{r.dispatch.name}:{_name(cfg)}"
            out.write(f"digraph {_q(gid)} {{\n  node [shape=box, fontname=monospace, style=filled];\n")
            out.write(f"  label={_q(f'{_name(cfg)} [{r.dispatch.name}] {r.dispatch.arch}')};\n")
            for b in cfg.blocks:
                if b.loop is None:
                    _dot_node(out, b, total, "  ")
            for lp in cfg.loops:
                if lp.parent is None:
                    _dot_cluster(out, cfg, lp.id, total, "  ")
            backs = {e for lp in cfg.loops for e in lp.back_edges}
            for b in cfg.blocks:
                for s, k in b.succ:
                    style = ", style=bold, color=red" if (b.id, s) in backs else ""
                    out.write(f'  B{b.id} -> B{s} [label="{k}"{style}];\n')
            out.write("}\n")


# ---- indented terminal view -----------------------------------------------------------------------


def cfg_reports(dispatches, wave_filter=None) -> list[CfgReport]:
    """A CfgReport per dispatch: its control-flow graphs, block statistics (of the waves `wave_filter`
    keeps) and loop timings; what `attdec cfg` and `attdec loops` print."""
    from attdec.analysis.cfg import dispatch_cfgs
    from attdec.analysis.loops import loop_timings
    from attdec.model.totals import aggregate_lines

    out = []
    for d in dispatches:
        waves = d.waves if wave_filter is None else [w for w in d.waves if wave_filter(w)]
        totals = aggregate_lines(waves).as_dict() if wave_filter is not None else None
        cfgs = dispatch_cfgs(d, totals)
        out.append(CfgReport(d, len(waves), cfgs, loop_timings(d, waves, cfgs)))
    return out


def print_cfg_table(reports: list[CfgReport], out) -> None:
    con = console(out)
    for i, r in enumerate(reports):
        if i:
            con.print()
        if not r.cfgs:
            d = r.dispatch
            con.print(f"{d.kernel or '(kernel unknown)'}  [{d.name}]  {d.arch}  {r.waves} waves", style="bold")
            _notes(con, d)
            con.print("  no code listing")
        for k, cfg in enumerate(r.cfgs):
            _cfg_section(con, r, cfg, notes=k == 0)


def _notes(con, d) -> None:
    """What the source noted about the dispatch (wave files missing or left out, damage), under its title."""
    for p in d.problems:
        con.print(f"  note: {p}", style="yellow")


def _n(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def _chain(cfg: Cfg, b: Block) -> list[int]:
    chain, lp = [], b.loop
    while lp is not None:
        chain.append(lp)
        lp = cfg.loops[lp].parent
    return chain[::-1]


def _loop_line(r: CfgReport, cfg: Cfg, loop_id: int) -> str:
    lp = cfg.loops[loop_id]
    backs = ", ".join(f"B{a}→B{b}" for a, b in lp.back_edges)
    s = f"loop L{lp.id}: header B{lp.header}, {_n(len(lp.blocks), 'block')}, back edge {backs}"
    t = r.timing(cfg, loop_id)
    if t is not None and t.waves:
        m = t.summary()
        per = m["iterations_per_wave"]["p50"]
        s += f"; {m['iterations']:,} iterations in {m['waves']} waves ({per:g} per wave)"
        if m["first"]["p50"] is not None:
            s += f", first {human(m['first']['p50'])}"
        if m["steady"]["p50"] is not None:
            s += f", steady p50 {human(m['steady']['p50'])} p95 {human(m['steady']['p95'])} cycles"
        if t.main:
            s += "  [main loop]"
    return s


def _cfg_section(con, r: CfgReport, cfg: Cfg, notes: bool) -> None:
    d = r.dispatch
    con.print(f"{_name(cfg)}  [{d.name}]  {d.arch}  {r.waves} waves", style="bold")
    if notes:
        _notes(con, d)
    ninst = sum(len(b.lines) for b in cfg.blocks)
    con.print(f"  {_n(ninst, 'instruction')}, {_n(len(cfg.blocks), 'block')}, {_n(len(cfg.loops), 'loop')}")
    if cfg.irreducible:
        con.print(f"  note: {len(cfg.irreducible)} retreating edges into no dominator (irreducible)", style="yellow")
    total = sum(b.stall for b in cfg.blocks)
    prefix = common_dir([_source(b) for b in cfg.blocks])
    cols = [Col("block", justify="left"), Col("address"), Col("instrs"), Col("hits"), Col("cycles"), Col("stall")]
    cols += [Col("share"), Col("dominant", justify="left", short="type"), Col("source", "path", "left", min=12)]
    cols.append(Col("next", "text", "left", min=8))
    rows: list = []  # block rows, a Heading where a loop starts
    shown: list[int] = []
    for b in cfg.blocks:
        chain = _chain(cfg, b)
        common = 0
        while common < min(len(chain), len(shown)) and chain[common] == shown[common]:
            common += 1
        for depth in range(common, len(chain)):
            cont = " (continued)" if any(x.loop == chain[depth] for x in cfg.blocks[: b.id]) else ""
            rows.append(Heading("  " * depth + _loop_line(r, cfg, chain[depth]) + cont))
        shown = chain
        nxt = [f"B{s}" + ("" if k == "fallthrough" else f" {k}") for s, k in b.succ]
        if b.exit:
            nxt.append(f"exit: {b.exit}")
        rows.append(
            [
                "  " * len(chain) + f"B{b.id}" + ("" if b.consistent else " *"),
                f"0x{b.start:x}",
                str(len(b.lines)),
                human(b.hits),
                human(b.cycles),
                human(b.stall),
                pct(b.stall / total if total else 0),
                b.dominant or "-",
                strip_dir(_source(b), prefix) or "-",
                ", ".join(nxt),
            ]
        )
    draw_table(con, cols, rows)
    if prefix:
        con.print(f"sources under {prefix}/", style="dim")
    if any(not b.consistent for b in cfg.blocks):
        con.print("*: instructions of the block have different hit counts (a partly traced wave?)", style="yellow")


# ---- attdec loops ---------------------------------------------------------------------------------


def _wave_json(w: WaveLoop) -> dict:
    steady = w.steady()

    def q(p):
        return float(np.percentile(steady, p)) if len(steady) else None

    return {
        "se": w.wave.se,
        "simd": w.wave.simd,
        "slot": w.wave.slot,
        "wave": w.wave.seq,
        "cu": w.wave.cu,
        "iterations": w.iterations,
        "trips": w.trips,
        "first": w.cycles[w.first].tolist(),
        "steady": {"p50": q(50), "p95": q(95), "mean": float(steady.mean()) if len(steady) else None},
        "max": int(w.cycles.max()) if w.iterations else None,
        "outliers": np.flatnonzero(w.outlier).tolist(),
        "cycles": w.cycles.tolist(),
    }


def loops_json(r: CfgReport) -> dict:
    loops = []
    for t in r.timings:
        h = t.header
        loops.append(
            {
                "kernel": t.cfg.kernel,
                "id": t.loop.id,
                "main": t.main,
                "header": {"block": t.loop.header, "pc": h.vaddr, "line": h.line, "text": h.text, "source": h.source},
                "depth": t.loop.depth,
                "parent": t.loop.parent,
                "blocks": t.loop.blocks,
                "back_edges": [list(e) for e in t.loop.back_edges],
                "summary": t.summary(),
                "waves": [_wave_json(w) for w in t.waves],
            }
        )
    return {**_head(r), "loops": loops}


def print_loops_json(reports: list[CfgReport], out) -> None:
    objs = [loops_json(r) for r in reports]
    write_json(objs[0] if len(objs) == 1 else {"dispatches": objs}, out)


def print_loops_table(reports: list[CfgReport], top: int, out) -> None:
    con = console(out)
    for i, r in enumerate(reports):
        if i:
            con.print()
        d = r.dispatch
        con.print(f"{d.kernel or '(kernel unknown)'}  [{d.name}]  {d.arch}  {r.waves} waves", style="bold")
        _notes(con, d)
        if not r.timings:
            con.print("  no loops (no back edge in the control-flow graph)")
        for t in r.timings:
            _loop_section(con, t, top)


def _loop_section(con, t: LoopTiming, top: int) -> None:
    lp, h = t.loop, t.header
    ninst = sum(len(t.cfg.blocks[b].lines) for b in lp.blocks)
    where = f" ({frame_of(h.source)})" if h.source else ""
    con.print(
        f"loop L{lp.id}{' (main)' if t.main else ''}  {_name(t.cfg)}: header B{lp.header} at 0x{h.vaddr:x}"
        f"{where}, depth {lp.depth}, {_n(len(lp.blocks), 'block')}, {_n(ninst, 'instruction')}",
        style="bold",
    )
    m = t.summary()
    if not t.waves:
        con.print("  never entered by a traced wave")
        return
    first, steady = m["first"], m["steady"]
    first_p50 = human(first["p50"]) if first["p50"] is not None else "-"  # no wave finished an iteration
    con.print(
        f"  {m['iterations']:,} iterations in {m['waves']} waves ({m['iterations_per_wave']['p50']:g} per wave, "
        f"{m['trips']} trips); first iteration p50 {first_p50}; steady state "
        + (f"p50 {human(steady['p50'])}, p95 {human(steady['p95'])} cycles" if steady["p50"] is not None else "-")
        + f"; {m['outliers']} outliers beyond 3 MADs"
    )
    heads = [("se", ""), ("simd", "sm"), ("slot", "sl"), ("wave", "wv"), ("iters", "it"), ("trips", "tr")]
    heads += [("first", ""), ("p50", ""), ("p95", ""), ("max", ""), ("outliers", "out"), ("cycles", "cyc")]
    waves = t.waves[:top] if top else t.waves
    rows = []
    for w in waves:
        s = w.steady()
        first_c = w.cycles[w.first]
        rows.append(
            [
                str(w.wave.se),
                str(w.wave.simd),
                str(w.wave.slot),
                str(w.wave.seq),
                str(w.iterations),
                str(w.trips),
                human(first_c[0]) if len(first_c) else "-",
                human(float(np.percentile(s, 50))) if len(s) else "-",
                human(float(np.percentile(s, 95))) if len(s) else "-",
                human(int(w.cycles.max())),
                str(int(w.outlier.sum())),
                human(int(w.cycles.sum())),
            ]
        )
    draw_table(con, [Col(h, short=sh) for h, sh in heads], rows)
    if len(waves) < len(t.waves):
        con.print(f"  ... {len(t.waves) - len(waves)} more waves (--top 0 shows all)", style="dim")


def cfg_reporters() -> Reporters:
    """`attdec cfg`'s formats (the result: a CfgReport per dispatch)."""
    return {"table": Writer(print_cfg_table), "json": Writer(print_cfg_json), "dot": Writer(print_cfg_dot)}


def loop_reporters(top: int) -> Reporters:
    """`attdec loops`' formats (the result: a CfgReport per dispatch); `top` waves listed per loop."""
    return {"table": Writer(print_loops_table, top=top), "json": Writer(print_loops_json)}
