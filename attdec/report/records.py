"""Decoded records (what `attdec decode` prints): a summary table per blob, or the records as JSON.

The JSON keys are documented in docs/decode-json.md; the record kinds and their fields are AMD's decoder's
(trace_decoder_types.h), in the order oracle.json lists them.
"""

from __future__ import annotations

import json
import os

from attdec.model import Category

_NAMES = [f'"{c.name}"' for c in Category]


def write_json(dispatches, out) -> None:
    """Stream {"dispatches": [{"name", "waves": [...], "occupancy": [...], "realtime", "inst_other_simd",
    "shaderdata", "perfevents", "rt_frequency", "code_objects", "info", "problems", "warnings"}]} wave by
    wave, so memory stays bounded by one wave's rows. `dispatches` yields (name, [(blob label,
    BlobResult, seconds), ...]) pairs, the inner list lazily."""
    w = out.write
    w('{"dispatches": [')
    for n, (name, results) in enumerate(dispatches):
        w(("," if n else "") + '{"name": ' + json.dumps(name) + ', "waves": [')
        occ, rest = [], {k: [] for k in _SIDE}
        first = True
        for label, res, _dt in results:
            for wave in res.waves:
                if not first:
                    w(",\n")
                first = False
                _write_wave(w, wave, res)
            occ.append(res)
            for k, f in _SIDE.items():
                rest[k] += f(res, label)
        w('],\n"occupancy": [')
        w(",\n".join(p for p in (_occupancy(r) for r in occ) if p))
        w("]")
        for k, v in rest.items():
            w(f',\n"{k}": ' + json.dumps(v))
        w("}")
    w("]}\n")


def _code_object_tail(res, pcs) -> list[str]:
    """`,id` for PCs in a code object the trace announced (AMD's pc.code_object_id), '' elsewhere."""
    if not res.code_objects:
        return [""] * len(pcs)
    return [f",{i}" if i else "" for i in res.code_object_ids(pcs).tolist()]


def _write_wave(w, wave, res) -> None:
    a = wave.insts
    w(
        f'{{"se": {wave.se}, "cu": {wave.cu}, "simd": {wave.simd}, "wave_id": {wave.slot}, '
        f'"begin_time": {wave.begin}, "end_time": {wave.end}, "contexts": {wave.contexts}, '
        f'"timeline": [{",".join(f"[{s},{d}]" for s, d in wave.timeline)}], "instructions": ['
    )
    if len(a):
        w(
            ",".join(
                f"[{p},{t},{d},{s},{_NAMES[c]}{co}]"
                for p, t, d, s, c, co in zip(
                    a["pc"].tolist(),
                    a["time"].tolist(),
                    a["duration"].tolist(),
                    a["stall"].tolist(),
                    a["category"].tolist(),
                    _code_object_tail(res, a["pc"]),
                )
            )
        )
    w("]}")


def _occupancy(res) -> str:
    o = res.occupancy
    if not len(o):
        return ""
    cols = [o[k].tolist() for k in ("se", "cu", "simd", "wave_id", "start", "time", "pc")]
    tail = _code_object_tail(res, o["pc"])
    return ",".join(f"[{a},{b},{c},{d},{e},{f},{g}{co}]" for a, b, c, d, e, f, g, co in zip(*cols, tail))


def _rows(a, fields) -> list[list]:
    return [list(r) for r in zip(*(a[f].tolist() for f in fields))] if len(a) else []


_SIDE = {
    "realtime": lambda r, _: [[r.se, int(a), int(b)] for a, b in r.realtime],
    "inst_other_simd": lambda r, _: [
        [se, t, c, g, Category(k).name]
        for se, t, c, g, k in _rows(r.other_simd, ("se", "time", "cycles", "wgp", "category"))
    ],
    "shaderdata": lambda r, _: _rows(r.shaderdata, ("se", "time", "value", "cu", "simd", "wave_id", "flags")),
    "perfevents": lambda r, _: _rows(
        r.perfevents, ("se", "time", "events0", "events1", "events2", "events3", "cu", "bank")
    ),
    "rt_frequency": lambda r, _: [[r.se, r.rt_frequency]] if r.rt_frequency else [],
    "code_objects": lambda r, _: [
        {"se": r.se, "id": m.id, "addr": m.addr, "size": m.size} for m in r.code_objects if not m.unload
    ],
    "info": lambda r, _: [{"se": i.se, "kind": i.kind, "count": i.count, "byte": i.byte} for i in r.info],
    "problems": lambda r, label: [f"{label}: {p}" for p in r.problems],
    "warnings": lambda r, label: [f"{label}: {p}" for p in r.warnings],
}


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
