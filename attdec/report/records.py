"""Decoded records (what `attdec decode` prints): a summary table per blob, or the records as JSON."""

from __future__ import annotations

import json
import os

from attdec.model import Category

_NAMES = [f'"{c.name}"' for c in Category]


def write_json(dispatches, out) -> None:
    """Stream {"dispatches": [{"name", "waves": [...], "occupancy": [...], "realtime", "inst_other_simd",
    "problems"}]} wave by wave, so memory stays bounded by one wave's rows. `dispatches` yields
    (name, [(blob label, BlobResult, seconds), ...]) pairs, the inner list lazily."""
    w = out.write
    w('{"dispatches": [')
    for n, (name, results) in enumerate(dispatches):
        w(("," if n else "") + '{"name": ' + json.dumps(name) + ', "waves": [')
        occ, realtime, other, problems = [], [], [], []
        first = True
        for label, res, _dt in results:
            problems += [f"{label}: {p}" for p in res.problems]
            for wave in res.waves:
                if not first:
                    w(",\n")
                first = False
                _write_wave(w, wave)
            occ.append(res.occupancy)
            realtime += [[res.se, int(a), int(b)] for a, b in res.realtime]
            other += [[res.se, int(t), int(c), Category(g).name] for t, c, g in res.other_simd]
        w('],\n"occupancy": [')
        parts = []
        for o in occ:
            if len(o):
                cols = [o[k].tolist() for k in ("se", "cu", "simd", "wave_id", "start", "time", "pc")]
                parts.append(",".join(f"[{a},{b},{c},{d},{e},{f},{g}]" for a, b, c, d, e, f, g in zip(*cols)))
        w(",\n".join(p for p in parts if p))
        w('],\n"realtime": ' + json.dumps(realtime))
        w(',\n"inst_other_simd": ' + json.dumps(other))
        w(',\n"problems": ' + json.dumps(problems))
        w("}")
    w("]}\n")


def _write_wave(w, wave) -> None:
    a = wave.insts
    w(
        f'{{"se": {wave.se}, "cu": {wave.cu}, "simd": {wave.simd}, "wave_id": {wave.slot}, '
        f'"begin_time": {wave.begin}, "end_time": {wave.end}, "contexts": {wave.contexts}, '
        f'"timeline": [{",".join(f"[{s},{d}]" for s, d in wave.timeline)}], "instructions": ['
    )
    if len(a):
        w(
            ",".join(
                f"[{p},{t},{d},{s},{_NAMES[c]}]"
                for p, t, d, s, c in zip(
                    a["pc"].tolist(),
                    a["time"].tolist(),
                    a["duration"].tolist(),
                    a["stall"].tolist(),
                    a["category"].tolist(),
                )
            )
        )
    w("]}")


def print_summary(dispatches, out) -> None:
    """One row per blob: waves, traced waves, instruction records (and how many lack a PC), stall."""
    from attdec.report.common import Col, console, fit_table

    rows = []
    for name, results in dispatches:
        for label, res, dt in results:
            rows.append((name, label, res, dt))
    several = len({r[0] for r in rows}) > 1
    cols = [Col("dispatch", "text", "left", min=10)] if several else []
    cols += [Col("blob", "path", "left", min=12), Col("se")]
    cols += [Col(c) for c in ("waves", "traced", "instructions", "no pc", "stall", "wave starts", "ms")]
    cells = []
    for name, label, res, dt in rows:
        n_inst = sum(len(w.insts) for w in res.waves)
        nopc = sum(int((w.insts["pc"] == 0).sum()) for w in res.waves)
        stall = sum(int(w.insts["stall"].sum()) for w in res.waves)
        traced = sum(1 for w in res.waves if len(w.insts))
        starts = int((res.occupancy["start"] == 1).sum()) if len(res.occupancy) else 0
        cells.append(
            ([name] if several else [])
            + [os.path.basename(label), str(res.se), str(len(res.waves)), str(traced), f"{n_inst:,}"]
            + [f"{nopc:,}", f"{stall:,}", f"{starts:,}", f"{dt * 1000:.0f}"]
        )
    fit_table(console(out), cols, cells)
