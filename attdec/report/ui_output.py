"""Write a Dispatch as a rocprofv3 ui_output folder (the current C++ writer's "3.0.0", 10-column format).

Follows ui-output-format.md: filenames.json, code.json, one `se<S>_sm<M>_sl<L>_wv<W>.json` per wave
that has instructions or at least 3 timeline entries, occupancy.json, realtime.json (when there are
realtime samples), wstates<k>.json for the states that occur, and `stats_<dirname>.csv` next to the
folder. JSON is compact with sorted keys, as nlohmann::json writes it, so rocprof-compute-viewer and
attdec's own reader open the result. Not written: waitcnt dependencies (always []), snapshots.json,
perf counters.
"""

from __future__ import annotations

import csv
import json
from fnmatch import fnmatch
from pathlib import Path

import numpy as np

from attdec.errors import InputError
from attdec.model import REALTIME_HZ, Dispatch, Target, Wave
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


def wave_json(w: Wave, no_pc_line: int = -1) -> dict:
    """One wave file; records without a PC (line -1, or the listing's (no PC) row) go on line 0, as the
    C++ writer puts unresolved PCs."""
    a = w.insts
    lines = np.where((a["line"] < 0) | (a["line"] == no_pc_line), 0, a["line"])
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
            "waitcnt": [],
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
    return [
        [c.text, 0, c.line, c.source, c.codeobj, c.vaddr, c.hit, c.latency, c.stall, c.idle]
        for c in d.code
        if not c.is_no_pc  # rocprofv3's writer leaves records without a PC out
    ]


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
                    o["wave_id"].astype(np.int64),
                    o["start"].astype(np.int64),
                    np.ones(len(o), np.int64),
                ],
                axis=1,
            )
            out[str(se)] = rows.tolist()
    return out


def write_ui_output(d: Dispatch, out_dir: str | Path, dirname: str) -> Path:
    """Write `d` as `<out_dir>/<dirname>/` plus `<out_dir>/stats_<dirname>.csv`; returns the folder. The
    folder is written whole under a temporary name and then replaces an earlier export's (report.output)."""
    out_dir = Path(out_dir)
    with output_folder(out_dir / dirname, ours=is_written_here) as folder:
        _write_folder(d, folder)
    write_stats_csv(d, out_dir / f"stats_{dirname}.csv")
    return out_dir / dirname


def _write_folder(d: Dispatch, folder: Path) -> None:
    waves = _numbered(d.waves)
    gen = d.target.generation

    names: dict[str, dict] = {}
    no_pc_line = next((c.line for c in d.code if c.is_no_pc), -1)
    for w in waves:
        fname = wave_file_name(w)
        _dump(folder / fname, wave_json(w, no_pc_line))
        (names.setdefault(str(w.se), {}).setdefault(str(w.simd), {}).setdefault(str(w.slot), {}))[str(w.seq)] = [
            fname,
            int(w.begin),
            int(w.end),
        ]
    _dump(
        folder / "filenames.json",
        {
            "counter_names": [],
            "gfxip": gen,
            "gfxv": "navi" if gen > 9 else "vega",
            "global_begin_time": 0,
            "version": VERSION,
            "wave_filenames": names or None,
        },
    )
    rows = code_rows(d)
    _dump(folder / "code.json", {"code": rows or None, "header": CODE_HEADER, "version": VERSION})
    _dump(folder / "occupancy.json", occupancy_json(d))
    realtime = d.realtime_se or ({0: d.realtime} if d.realtime else {})
    if realtime:
        rt: dict[str, object] = {f"SE{se}": [[int(g), int(r)] for g, r in pairs] for se, pairs in realtime.items()}
        rt["metadata"] = {"descriptor": "[gfx_clock, realtime_clock]", "frequency": REALTIME_HZ}
        _dump(folder / "realtime.json", rt)
    for state, obj in wstates(waves).items():
        _dump(folder / f"wstates{state}.json", obj)
    write_agent_info(d.target, folder / AGENT_INFO)


_OUR_FILES = (
    "se*_sm*_sl*_wv*.json",
    "wstates*.json",
    "filenames.json",
    "code.json",
    "occupancy.json",
    "realtime.json",
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
    """code.json's rows sorted by (CodeObj, Vaddr), each label right before its kernel's first instruction."""
    rows = sorted((c for c in d.code if not c.is_no_pc), key=lambda c: (c.codeobj, c.vaddr, not c.is_label, c.line))
    with open_output(path) as f:
        wr = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        wr.writerow(STATS_HEADER)
        for c in rows:
            wr.writerow([c.codeobj, c.vaddr, c.text, c.hit, c.latency, c.stall, c.idle, c.source])
