"""Decoded records (what `attdec decode` prints): a summary table per blob, the records as JSON, or as columns.

The JSON keys are documented in docs/decode-json.md; the record kinds and their fields are AMD's decoder's
(trace_decoder_types.h), in the order oracle.json lists them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from attdec.model import Category
from attdec.model.record import Frozen
from attdec.model.records import Timeline, amd_name
from attdec.report.base import Reporters, Writer

_PLAIN_NAMES = [c.name for c in Category]  # by value: an IntEnum call per record costs more than its row
_NAMES = [f'"{name}"' for name in _PLAIN_NAMES]
_SLOT = amd_name("slot")
CHUNK = 1 << 16  # rows formatted at once: bounds the text held in memory


def write_rows(w, cols: list[list], sep: str = ",") -> None:
    """Rows `[a,b,...]` of equal-length columns (lists of ints, or strings already in JSON form), `sep`
    between values and rows (", " is json.dumps's). CHUNK rows are formatted by one %-operation over the
    interleaved values: no Python code runs per row, which is what makes this faster than json.dumps of
    the same lists (benchmarks/RESULTS.md)."""
    n, k = len(cols[0]) if cols else 0, len(cols)
    row = "[" + sep.join(["%s"] * k) + "]"
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        flat: list = [None] * (k * m)
        for i, c in enumerate(cols):
            flat[i::k] = c[start : start + m]
        w((sep if start else "") + sep.join([row] * m) % tuple(flat))


def write_json(dispatches, out) -> None:
    """Stream {"dispatches": [{"name", "waves": [...], "occupancy": [...], "realtime", "inst_other_simd",
    "shaderdata", "perfevents", "rt_frequency", "code_objects", "info", "problems", "warnings"}]} wave by
    wave, so memory stays bounded by one wave's rows. `dispatches` yields (name, [(blob label,
    BlobResult, seconds), ...]) pairs, the inner list lazily."""
    w = out.write
    w('{"dispatches": [')
    for n, (name, results) in enumerate(dispatches):
        w(("," if n else "") + '{"name": ' + json.dumps(name) + ', "waves": [')
        occ: list = []
        rest: dict[str, list] = {k: [] for k in _SIDE}
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
        first = True
        for res in occ:
            o = res.occupancy
            if len(o):
                w("" if first else ",\n")
                first = False
                cols = [o[k].tolist() for k in ("se", "cu", "simd", "slot", "start", "time", "pc")]
                _write_rows_with_ids(w, cols, res, o["pc"])
        w("]")
        for k, v in rest.items():
            w(f',\n"{k}": [' + ", ".join(v) + "]")
        w("}")
    w("]}\n")


def _write_rows_with_ids(w, cols: list[list], res, pcs) -> None:
    """Rows as `write_rows` writes them, with AMD's pc (code_object_id, then the offset inside that code
    object) as two more columns on the rows whose PC lies in a code object the trace announced (most traces
    announce none: the fast path)."""
    if not res.code_objects:
        write_rows(w, cols)
        return
    offsets, ids = (a.tolist() for a in res.amd_pcs(pcs))
    w(",".join("[" + ",".join(map(str, r)) + (f",{i},{o}]" if i else "]") for *r, i, o in zip(*cols, ids, offsets)))


def _write_wave(w, wave, res) -> None:
    a = wave.insts
    w(
        f'{{"se": {wave.se}, "cu": {wave.cu}, "simd": {wave.simd}, "{_SLOT}": {wave.slot}, '
        f'"begin_time": {wave.begin}, "end_time": {wave.end}, "contexts": {wave.contexts}, "timeline": ['
    )
    runs = wave.timeline
    if isinstance(runs, Timeline):  # a decoder's: two columns
        write_rows(w, [runs.state.tolist(), runs.duration.tolist()])
    else:
        w(",".join(f"[{s},{d}]" for s, d in runs))
    w('], "instructions": [')
    if len(a):
        names = _name_texts().take(a["category"]).tolist()
        cols = [a["pc"].tolist(), a["time"].tolist(), a["duration"].tolist(), a["stall"].tolist(), names]
        _write_rows_with_ids(w, cols, res, a["pc"])
    w("]}")


@lru_cache(maxsize=1)
def _name_texts():
    """_NAMES as an object array: a category column's names are one `take` (no Python code per record)."""
    import numpy as np

    return np.array(_NAMES, object)


def _rows(a, fields, named: int = -1) -> list[str]:
    """The records' `fields` as JSON rows, as json.dumps writes them (in texts of many rows, each to be joined
    with ", "); field number `named` (a category) by its name."""
    if not len(a):
        return []
    cols = [a[f].tolist() for f in fields]
    if named >= 0:
        cols[named] = [_NAMES[k] for k in cols[named]]
    return _columns_json(cols)


def _columns_json(cols: list[list]) -> list[str]:
    """Equal-length columns of ints (or JSON texts) as json.dumps writes their rows (one text; none if no rows)."""
    out: list[str] = []
    if cols and len(cols[0]):
        write_rows(out.append, cols, ", ")
    return ["".join(out)] if out else []


def _dumps(rows: list) -> list[str]:
    return [json.dumps(r) for r in rows]


# The per-blob record kinds written after the waves and occupancy: key -> (BlobResult, blob label) -> JSON
# texts of rows (joined with ", " inside the key's list).
_SIDE: dict[str, Callable[[Any, str], list[str]]] = {
    "realtime": lambda r, _: _columns_json([[r.se] * len(r.realtime), *map(list, zip(*r.realtime))]),
    "inst_other_simd": lambda r, _: _rows(r.other_simd, ("se", "time", "cycles", "wgp", "category"), named=4),
    "shaderdata": lambda r, _: _rows(r.shaderdata, ("se", "time", "value", "cu", "simd", "slot", "flags")),
    "perfevents": lambda r, _: _rows(
        r.perfevents, ("se", "time", "events0", "events1", "events2", "events3", "cu", "bank")
    ),
    "rt_frequency": lambda r, _: _dumps([[r.se, r.rt_frequency]] if r.rt_frequency else []),
    "code_objects": lambda r, _: _dumps(
        [{"se": r.se, "id": m.id, "addr": m.addr, "size": m.size} for m in r.code_objects if not m.unload]
    ),
    "info": lambda r, _: _dumps([{"se": i.se, "kind": i.kind, "count": i.count, "byte": i.byte} for i in r.info]),
    "problems": lambda r, label: _dumps([f"{label}: {p}" for p in r.problems]),
    "warnings": lambda r, label: _dumps([f"{label}: {p}" for p in r.warnings]),
}


def columns(dispatches) -> dict[str, dict]:
    """The decoded records as tables of columns (`attdec decode --format npz`, docs/api.md): dispatches,
    blobs, waves, records, occupancy, timeline, realtime, other_simd, shaderdata, perfevents, info,
    code_objects, problems, warnings, categories. A column named
    after a table holds row numbers into it; `waves.first` / `waves.records` are each wave's rows of
    `records`, `records.category` indexes `categories.name`."""
    import numpy as np

    from attdec.model import OCCUPANCY_DTYPE, PERFEVENT_DTYPE, SHADERDATA_DTYPE, empty_insts

    t: dict[str, dict[str, list]] = {
        "dispatches": {"name": []},
        "blobs": {"dispatch": [], "se": [], "label": [], "bytes_decoded": [], "rt_frequency": []},
        "waves": {k: [] for k in ("blob", "se", "cu", "simd", "slot", "begin", "end", "contexts", "first", "records")},
        "timeline": {"wave": [], "state": [], "duration": []},
        "realtime": {"blob": [], "shader_clock": [], "reference_clock": []},
        "other_simd": {"blob": [], "time": [], "cycles": [], "wgp": [], "category": []},
        "info": {"blob": [], "kind": [], "count": [], "byte": []},
        "code_objects": {"blob": [], "id": [], "addr": [], "size": []},
        "problems": {"blob": [], "text": []},
        "warnings": {"blob": [], "text": []},
    }
    insts, nrec = [], 0
    arrays: dict[str, list] = {"occupancy": [], "shaderdata": [], "perfevents": []}  # (blob, structured array)
    for d, (name, results) in enumerate(dispatches):
        t["dispatches"]["name"].append(name)
        for label, res, _dt in results:
            b = len(t["blobs"]["se"])
            for k, v in zip(t["blobs"], (d, res.se, label, res.bytes_decoded, res.rt_frequency or 0)):
                t["blobs"][k].append(v)
            for w in res.waves:
                n = len(t["waves"]["se"])
                row = (b, w.se, w.cu, w.simd, w.slot, w.begin, w.end, w.contexts, nrec, len(w.insts))
                for k, v in zip(t["waves"], row):
                    t["waves"][k].append(v)
                insts.append(w.insts)
                nrec += len(w.insts)
                for state, dur in w.timeline:
                    t["timeline"]["wave"].append(n)
                    t["timeline"]["state"].append(int(state))
                    t["timeline"]["duration"].append(int(dur))
            for name in arrays:
                arrays[name].append((b, getattr(res, name)))
            for shader, ref in res.realtime:
                for k, v in zip(("blob", "shader_clock", "reference_clock"), (b, int(shader), int(ref))):
                    t["realtime"][k].append(v)
            o = res.other_simd
            t["other_simd"]["blob"] += [b] * len(o)
            for k in ("time", "cycles", "wgp", "category"):
                t["other_simd"][k] += o[k].tolist()
            for i in res.info:
                for k, v in zip(t["info"], (b, i.kind, i.count, i.byte)):
                    t["info"][k].append(v)
            for m in res.code_objects:
                if not m.unload:
                    for k, v in zip(t["code_objects"], (b, m.id, m.addr, m.size)):
                        t["code_objects"][k].append(v)
            for table in ("problems", "warnings"):
                texts = getattr(res, table)
                t[table]["blob"] += [b] * len(texts)
                t[table]["text"] += list(texts)
    text = ("name", "label", "text", "kind")
    out = {n: {k: np.asarray(v, str if k in text else np.int64) for k, v in c.items()} for n, c in t.items()}
    rec = np.concatenate(insts) if insts else empty_insts()
    out["records"] = {"wave": np.repeat(np.arange(len(insts)), [len(a) for a in insts]).astype(np.int64)}
    out["records"].update({f: rec[f] for f in rec.dtype.names or () if f != "line"})  # no listing yet: no line
    dtypes = {"occupancy": OCCUPANCY_DTYPE, "shaderdata": SHADERDATA_DTYPE, "perfevents": PERFEVENT_DTYPE}
    for name, parts in arrays.items():  # structured arrays: their fields, and the blob of each row
        a = np.concatenate([p for _b, p in parts]) if parts else np.zeros(0, dtypes[name])
        out[name] = {"blob": np.repeat([b for b, _p in parts], [len(p) for _b, p in parts]).astype(np.int64)}
        out[name].update({f: a[f] for f in a.dtype.names or ()})
    out["categories"] = {"name": np.array([c.name for c in Category])}
    return out


class BlobSummary(Frozen):
    """What the text summary and `decode`'s warnings read of a BlobResult: a few numbers, so that a
    --jobs worker sends these back rather than the records (attdec.sources.parallel)."""

    se: int
    waves: int
    traced: int
    instructions: int
    nopc: int
    stall: int
    starts: int
    problems: list[str]
    warnings: list[str]

    @property
    def damaged(self) -> bool:
        return bool(self.problems)


def summarize(res) -> BlobSummary:
    """A BlobResult's summary row (`print_summary`)."""
    waves = res.waves
    return BlobSummary(
        se=res.se,
        waves=len(waves),
        traced=sum(1 for w in waves if len(w.insts)),
        instructions=sum(len(w.insts) for w in waves),
        nopc=sum(int((w.insts["pc"] == 0).sum()) for w in waves),
        stall=sum(int(w.insts["stall"].sum()) for w in waves),
        starts=int((res.occupancy["start"] == 1).sum()) if len(res.occupancy) else 0,
        problems=res.problems,
        warnings=res.warnings,
    )


def print_summary(dispatches, out) -> None:
    """One row per blob: waves, traced waves, instruction records (and how many lack a PC), stall.
    `dispatches` yields (name, [(blob label, BlobSummary, seconds), ...])."""
    from attdec.report.common import Col, console, draw_table

    rows = []
    for name, results in dispatches:
        for label, s, dt in results:
            rows.append((name, label, s, dt))
    several = len({r[0] for r in rows}) > 1
    cols = [Col("dispatch", "text", "left", min=10)] if several else []
    cols += [Col("blob", "path", "left", min=12), Col("se")]
    cols += [Col(c) for c in ("waves", "traced", "instructions", "no pc", "stall", "wave starts", "ms")]
    cells = []
    for name, label, s, dt in rows:
        cells.append(
            ([name] if several else [])
            + [os.path.basename(label), str(s.se), str(s.waves), str(s.traced), f"{s.instructions:,}"]
            + [f"{s.nopc:,}", f"{s.stall:,}", f"{s.starts:,}", f"{dt * 1000:.0f}"]
        )
    draw_table(console(out), cols, cells)


def write_columns(dispatches, out) -> None:
    """Every record as numpy columns in one .npz (docs/api.md, 'Columnar output')."""
    from attdec.report.columns import write_npz

    write_npz(out, columns(dispatches))


def reporters() -> Reporters:
    """`attdec decode`'s formats (the result: (name, [(blob label, result, seconds), ...]) per dispatch,
    BlobSummary results for "text", BlobResult for the others)."""
    return {"text": Writer(print_summary), "json": Writer(write_json), "npz": Writer(write_columns)}
