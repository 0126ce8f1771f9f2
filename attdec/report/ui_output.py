"""Write a Dispatch as a rocprofv3 ui_output folder (the current C++ writer's "3.0.0", 10-column format).

Follows ui-output-format.md: filenames.json, code.json, one `se<S>_sm<M>_sl<L>_wv<W>.json` per wave
that has instructions or at least 3 timeline entries, occupancy.json, realtime.json (when the trace
has realtime samples, every family's, per SE), wstates<k>.json for the states that occur, and
`stats_<dirname>.csv` next to the folder. JSON is compact with sorted keys, as nlohmann::json writes
it, so rocprof-compute-viewer and attdec's own reader open the result. Every wave file's `waitcnt`
list holds the memory operations each executed wait waited for (attdec.analysis.waits), entered per
counter in the order of the writer's rules for the generation; records without a PC are on the
listing's (no PC) row in both code.json and the wave files, so their totals agree. Other-SIMD and
SHADERDATA records go to `other_simd_se<S>_<i>.json` / `shaderdata_<S>_0.json`, listed in
filenames.json as the newest writers do. Source files found on this machine are copied in with
snapshots.json. Not written: perf counters.
"""

from __future__ import annotations

import csv
import json
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

import numpy as np

from attdec.errors import InputError
from attdec.model import REALTIME_HZ, Dispatch, Target, Wave
from attdec.model.records import amd_name
from attdec.model.totals import distinct
from attdec.report.output import open_output, output_folder

VERSION = "3.0.0"
CODE_HEADER = "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"
STATS_HEADER = ["CodeObj", "Vaddr", "Instruction", "Hitcount", "Latency", "Stall", "Idle", "Source"]
AGENT_INFO = "attdec_agent_info.csv"  # names the chip for readers (filenames.json only has gfxip)


def _dump(path: Path, obj) -> None:
    # json.dumps, not json.dump: dump streams through the pure-Python encoder (30x slower on big waves)
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    try:
        path.write_text(text)
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", str(path)) from None


def wave_file_name(w: Wave) -> str:
    return f"se{w.se}_sm{w.simd}_sl{w.slot}_wv{w.seq}.json"


def _numbered(waves: list[Wave]) -> list[Wave]:
    """The waves that get a file, with unique wv numbers (renumbered in order if they collide)."""
    keep = [w for w in waves if len(w.insts) or len(w.timeline) >= 3]
    keys = [(w.se, w.simd, w.slot, w.seq) for w in keep]
    if len(set(keys)) != len(keys):
        seq: dict[tuple[int, int, int], int] = {}
        for w in keep:
            k = (w.se, w.simd, w.slot)
            w.seq = seq.get(k, 0)
            seq[k] = w.seq + 1
    return keep


def wave_json(w: Wave, no_pc_line: int = -1, waitcnt: list | None = None) -> dict:
    """One wave file. Records without a PC go on the listing's (no PC) row when it has one (code.json
    lists it too, so that its totals and the wave files agree), else on line 0 as the C++ writer puts
    unresolved PCs. `waitcnt`: the wave's [wait line, [[producer line, 0], ...]] entries."""
    a = w.insts
    lines = np.where(a["line"] < 0, no_pc_line if no_pc_line >= 0 else 0, a["line"])
    insts = (
        np.stack([a["time"], a["category"].astype(np.int64), a["stall"], a["duration"], lines], axis=1)
        if len(a)
        else np.zeros((0, 5), np.int64)
    )
    return {
        "duration": int(w.end - w.begin),
        "name": f"SE{w.se}",
        "num_insts": len(a),
        "num_stitched": len(a),
        "wave": {
            "begin": int(w.begin),
            "cu": int(w.cu),
            "end": int(w.end),
            "id": int(w.seq),
            "instructions": insts.tolist(),
            "simd": int(w.simd),
            "slot": int(w.slot),
            "timeline": np.asarray(w.timeline, np.int64).reshape(-1, 2).tolist(),
            "waitcnt": waitcnt or [],
        },
    }


def wstates(waves: list[Wave]) -> dict[int, dict]:
    """Per wave state, the step function of how many of these waves are in it (wstates<k>.json):
    one entry per distinct time a wave enters or leaves the state, with the count from then on."""
    parts = []
    for w in waves:
        if w.timeline:
            tl = np.asarray(w.timeline, np.int64).reshape(-1, 2)
            ends = w.begin + np.cumsum(tl[:, 1])
            parts.append(np.stack([tl[:, 0], ends - tl[:, 1], ends], axis=1))
    if not parts:
        return {}
    seg = np.concatenate(parts)
    seg = seg[seg[:, 2] > seg[:, 1]]
    out = {}
    for state in distinct(seg[:, 0]).tolist():
        if state == 0:
            continue
        s_ = seg[seg[:, 0] == state]
        times = np.concatenate([s_[:, 1], s_[:, 2]])
        delta = np.concatenate([np.ones(len(s_), np.int64), -np.ones(len(s_), np.int64)])
        order = np.lexsort((delta, times))
        times, count = times[order], np.cumsum(delta[order])
        last = np.r_[times[1:] != times[:-1], True]  # the count after the last event at each time
        out[int(state)] = {"name": f"wstates{state}.json", "state": count[last].tolist(), "time": times[last].tolist()}
    return out


def code_rows(d: Dispatch) -> list[list]:
    """The listing's rows; the (no PC) row is kept (rocprofv3's writer leaves such records out of
    code.json but not of the wave files: here both hold them, on that row)."""
    return [[c.text, 0, c.line, c.source, c.codeobj, c.vaddr, c.hit, c.latency, c.stall, c.idle] for c in d.code]


# Per gfx generation, the counters rocprofv3's writer tracks, in the order it lists one wait's entries
# (att-tool and rocprof-compute-viewer waitcnt/gfx9|10|12: gfx11 takes gfx10's rules). A counter not
# listed (expcnt before gfx12) gets no entries from the writer.
WAITCNT_ORDER = {
    9: ("lgkmcnt", "vmcnt"),
    10: ("vscnt", "vmcnt", "lgkmcnt"),
    11: ("vscnt", "vmcnt", "lgkmcnt"),
    12: ("bvhcnt", "expcnt", "samplecnt", "kmcnt", "storecnt", "loadcnt", "dscnt"),
}
# The counters whose entry lists FLAT stores after the other operations (the writer joins them last).
_FLAT_STORES_LAST = ("lgkmcnt", "dscnt")
# gfx12's s_wait_idle waits for everything: the writer gives it one entry, counter by counter in this order.
_IDLE_ORDER = ("loadcnt", "storecnt", "samplecnt", "dscnt", "kmcnt", "expcnt", "bvhcnt")


def _flat_kinds(d: Dispatch) -> np.ndarray:
    """Per listing line (the last slot: records without a line), 1 for a FLAT load, 2 for a FLAT store,
    else 0: the writer keeps FLAT operations in lists of their own and hands a list over whole."""
    kind = np.zeros(max((c.line for c in d.code), default=-1) + 2, np.int64)
    for c in d.code:
        op = c.text.split()[0] if c.text.split() else ""
        if op.startswith("flat_"):
            kind[c.line] = 2 if "store" in op else 1
    return kind


def waitcnt_lists(d: Dispatch, waves: list[Wave]) -> list[list]:
    """Per wave of `waves`, its wave file's `waitcnt` list, as rocprofv3's writer (att-tool
    waitcnt/gfx9|10|12) makes it: for each executed wait that waited on a memory counter the writer
    tracks, in execution order, one entry per such counter it waited for something on, in the writer's
    counter order (WAITCNT_ORDER), [its line, [[producer line, 0], ...]] (FLAT operations first, then
    the rest, each in execution order); an s_wait_idle gets one entry. The pairs come from
    attdec.analysis.waits, which applies the same counter rules; a producer named through several
    counters is listed under the first."""
    from attdec.analysis.waits import attribute

    out: list[list] = [[] for _ in waves]
    order_ = WAITCNT_ORDER.get(d.target.generation, ())
    if not waves or not order_ or not any(len(w.insts) for w in waves):
        return out
    a = attribute(d, waves)
    listed = sum(1 << i for i, c in enumerate(a.counters) if c in order_)
    rank = np.array([order_.index(c) if c in order_ else len(order_) for c in a.counters])
    bits = np.array([1 << i for i in range(len(a.counters))], np.int64)
    keep = (a.mask & listed) != 0
    wait, prod, mask = a.wait[keep], a.producer[keep], a.mask[keep] & listed
    if not len(wait):
        return out
    named = (mask[:, None] & bits[None, :]) != 0
    counter = np.where(named, rank[None, :], len(order_)).min(axis=1)
    lines, wave_of = a.stream.lines, a.stream.wave
    flat = _flat_kinds(d)
    flat = flat[np.where(lines[prod] >= 0, np.minimum(lines[prod], len(flat) - 1), -1)]
    # FLAT operations first, then the counter's own; FLAT stores last on gfx10+ lgkmcnt / dscnt
    late = np.isin(counter, [i for i, c in enumerate(order_) if c in _FLAT_STORES_LAST]) & (flat == 2)
    group = np.where(flat == 0, 1, np.where(late & (d.target.generation >= 10), 2, 0))
    idle_lines = [c.line for c in d.code if c.text.lstrip().startswith("s_wait_idle")]
    idle = np.isin(lines[wait], idle_lines) if idle_lines else np.zeros(len(wait), bool)
    if idle.any():  # one entry per s_wait_idle, its producers counter by counter
        group[idle] = [_IDLE_ORDER.index(order_[k]) if order_[k] in _IDLE_ORDER else 0 for k in counter[idle]]
        counter[idle] = 0
    order = np.lexsort((prod, group, counter, wait))
    wait, prod, counter = wait[order], prod[order], counter[order]
    new = np.r_[True, (wait[1:] != wait[:-1]) | (counter[1:] != counter[:-1])]
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], len(wait)]
    for s, e, wl, k in zip(
        starts.tolist(), ends.tolist(), lines[wait[starts]].tolist(), wave_of[wait[starts]].tolist()
    ):
        out[k].append([wl, [[pl, 0] for pl in lines[prod[s:e]].tolist()]])
    return out


def other_simd_files(d: Dispatch) -> list[tuple[str, int, dict]]:
    """(file name, SE, document) of `other_simd_se<S>_<i>.json`: the instructions the traced WGP issued on
    its other SIMD (gfx11+), one file per SE and WGP, in time order."""
    o = d.other_simd
    if o is None or not len(o):
        return []
    out = []
    for se in distinct(o["se"]).tolist():
        for i, wgp in enumerate(distinct(o["wgp"][o["se"] == se]).tolist()):
            r = o[(o["se"] == se) & (o["wgp"] == wgp)]
            r = r[np.argsort(r["time"], kind="stable")]
            rows = np.stack([r["time"], r["cycles"].astype(np.int64), r["category"].astype(np.int64)], 1)
            doc = {
                "type": "OTHER_SIMD_INSTRUCTIONS",
                "begin_time": int(r["time"][0]),
                "end_time": int((r["time"] + r["cycles"]).max()),
                "wgp": int(wgp),
                "instructions_schema": ["time", "duration", "category"],
                "instructions_count": len(r),
                "instructions": rows.tolist(),
            }
            out.append((f"other_simd_se{se}_{i}.json", se, doc))
    return out


SHADERDATA_FIELDS = ("time", "value", "cu", "simd", "slot", "flags")


def shaderdata_files(d: Dispatch) -> list[tuple[str, int, dict]]:
    """(file name, SE, document) of `shaderdata_<S>_0.json`: the values the kernel wrote into the trace
    (s_ttracedata), one file per SE, in time order."""
    sd = d.shaderdata
    if sd is None or not len(sd):
        return []
    out = []
    for se in distinct(sd["se"]).tolist():
        r = sd[sd["se"] == se]
        r = r[np.argsort(r["time"], kind="stable")]
        rows = [[int(r[k][i]) for k in SHADERDATA_FIELDS] for i in range(len(r))]
        doc = {
            "type": "shaderdata",
            "begin_time": int(r["time"][0]),
            "end_time": int(r["time"][-1]),
            "records_schema": [amd_name(k) for k in SHADERDATA_FIELDS],
            "records_count": len(r),
            "records": rows,
        }
        out.append((f"shaderdata_{se}_0.json", se, doc))
    return out


def occupancy_json(d: Dispatch) -> dict:
    """Rows [time, cu, simd, slot, start, kernel_id] per SE; every row is this dispatch's kernel (id 1)."""
    out: dict[str, object] = {"dispatches": {"0": "0 / 0x0", "1": d.kernel or d.name}, "version": VERSION}
    occ = d.occupancy
    if len(occ):
        occ = occ[np.argsort(occ["time"], kind="stable")]
        for se in distinct(occ["se"]).tolist():
            o = occ[occ["se"] == se]
            rows = np.stack(
                [
                    o["time"],
                    o["cu"].astype(np.int64),
                    o["simd"].astype(np.int64),
                    o["slot"].astype(np.int64),
                    o["start"].astype(np.int64),
                    np.ones(len(o), np.int64),
                ],
                axis=1,
            )
            out[str(se)] = rows.tolist()
    return out


def snapshots(sources: dict[str, list[str]]) -> tuple[dict, list[tuple[str, str]]]:
    """snapshots.json's tree for source files found on this machine ({path as the Source column names
    it: its lines}) and the (file name, text) of each `source_<n>_<basename>`: the path's components
    from the root ("/" for an absolute path) down to the local file name."""
    tree: dict = {}
    files = []
    for n, (path, lines) in enumerate(sorted(sources.items())):
        parts = PurePosixPath(path).parts
        if not parts:
            continue
        local = f"source_{n}_{parts[-1]}"
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):  # a file and a folder of the same path: keep the file
                break
        else:
            node[parts[-1]] = local
            files.append((local, "\n".join(lines) + "\n"))
    return tree, files


def write_ui_output(
    d: Dispatch, out_dir: str | Path, dirname: str, sources: dict[str, list[str]] | None = None
) -> Path:
    """Write `d` as `<out_dir>/<dirname>/` plus `<out_dir>/stats_<dirname>.csv`; returns the folder.
    `sources`: the text of source files the listing names that exist on this machine (path as in the
    Source column -> lines), copied in as rocprofv3 does, with snapshots.json. The folder is written whole
    under a temporary name and then replaces an earlier export's (report.output)."""
    out_dir = Path(out_dir)
    with output_folder(out_dir / dirname, ours=is_written_here) as folder:
        _write_folder(d, folder, sources)
    write_stats_csv(d, out_dir / f"stats_{dirname}.csv")
    return out_dir / dirname


def _write_folder(d: Dispatch, folder: Path, sources: dict[str, list[str]] | None = None) -> None:
    waves = _numbered(d.waves)
    gen = d.target.generation

    names: dict[str, dict] = {}
    no_pc_line = next((c.line for c in d.code if c.is_no_pc), -1)
    for w, waitcnt in zip(waves, waitcnt_lists(d, waves)):
        fname = wave_file_name(w)
        _dump(folder / fname, wave_json(w, no_pc_line, waitcnt))
        (names.setdefault(str(w.se), {}).setdefault(str(w.simd), {}).setdefault(str(w.slot), {}))[str(w.seq)] = [
            fname,
            int(w.begin),
            int(w.end),
        ]
    listing: dict[str, object] = {
        "counter_names": [],
        "gfxip": gen,
        "gfxv": "navi" if gen > 9 else "vega",
        "global_begin_time": 0,
        "version": VERSION,
        "wave_filenames": names or None,
    }
    for key, files in (("other_simd_filenames", other_simd_files(d)), ("shaderdata_filenames", shaderdata_files(d))):
        if files:
            per_se: dict[str, list] = {}
            for fname, se, obj in files:
                _dump(folder / fname, obj)
                per_se.setdefault(str(se), []).append([fname, obj["begin_time"], obj["end_time"]])
            listing[key] = per_se
    _dump(folder / "filenames.json", listing)
    rows = code_rows(d)
    _dump(folder / "code.json", {"code": rows or None, "header": CODE_HEADER, "version": VERSION})
    _dump(folder / "occupancy.json", occupancy_json(d))
    realtime = d.realtime_se or ({0: d.realtime} if d.realtime else {})
    if realtime:
        rt: dict[str, object] = {f"SE{se}": [[int(g), int(r)] for g, r in pairs] for se, pairs in realtime.items()}
        # the trace's own RT_FREQUENCY record when it has one, as rocprofv3's writer takes it
        rt["metadata"] = {"descriptor": "[gfx_clock, realtime_clock]", "frequency": d.rt_frequency or REALTIME_HZ}
        _dump(folder / "realtime.json", rt)
    for state, obj in wstates(waves).items():
        _dump(folder / f"wstates{state}.json", obj)
    if sources:
        tree, copies = snapshots(sources)
        for local, text in copies:
            try:
                (folder / local).write_text(text)
            except OSError as e:
                raise InputError(f"cannot write: {e.strerror}", str(folder / local)) from None
        if copies:
            _dump(folder / "snapshots.json", tree)
    write_agent_info(d.target, folder / AGENT_INFO)


_OUR_FILES = (
    "se*_sm*_sl*_wv*.json",
    "other_simd_se*_*.json",
    "shaderdata_*_*.json",
    "wstates*.json",
    "filenames.json",
    "code.json",
    "occupancy.json",
    "realtime.json",
    "snapshots.json",
    "source_*_*",
    AGENT_INFO,
)


def is_written_here(name: str) -> bool:
    """A file name this writer makes: an earlier export's such files are replaced (a stale wave file would
    sit next to a filenames.json that no longer lists it), any other file is kept."""
    return any(fnmatch(name, pattern) for pattern in _OUR_FILES)


def write_agent_info(tgt: Target, path: Path) -> None:
    """A one-GPU rocprofv3-style agent table inside the folder: filenames.json only says gfxip, and
    readers (attdec's among them) name the chip from `*_agent_info.csv` next to the dispatch."""
    v = tgt.version
    if v is None or not tgt.chip_known:
        return
    with open(path, "w", newline="") as f:
        wr = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        wr.writerow(["Node_Id", "Logical_Node_Id", "Agent_Type", "Gfx_Target_Version", "Name"])
        wr.writerow([1, 1, "GPU", v, tgt.name])


def write_stats_csv(d: Dispatch, path: Path) -> None:
    """code.json's rows sorted by (CodeObj, Vaddr), each label right before its kernel's first instruction,
    the (no PC) row last."""
    rows = sorted(d.code, key=lambda c: (c.is_no_pc, c.codeobj, c.vaddr, not c.is_label, c.line))
    with open_output(path) as f:
        wr = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        wr.writerow(STATS_HEADER)
        for c in rows:
            wr.writerow([c.codeobj, c.vaddr, c.text, c.hit, c.latency, c.stall, c.idle, c.source])
