"""Write synthetic rocprofv3 ui_output dispatch folders (for the demo sample and the test fixtures).

Independent of attdec on purpose: code.json totals are computed here with a plain loop over the wave
instructions (formulas of ui-output-format.md §5.1), so tests comparing attdec's numbers with these
files check attdec against a second implementation, not against itself.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

HEADER = "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"


@dataclass
class Inst:
    text: str
    source: str = ""
    size: int = 4


@dataclass
class SynthWave:
    se: int
    simd: int
    slot: int
    wv: int
    cu: int
    begin: int
    insts: list = field(default_factory=list)  # [time, category, stall, duration, line]
    timeline: list = field(default_factory=list)
    end: int = 0


def listing(kernel: str, insts: list[Inst], codeobj: int = 1, base: int = 0x1900):
    """Code rows [text, 0, line, source, codeobj, vaddr] with the label row first (line 0)."""
    rows = [[f"; {kernel}", 0, 0, "", codeobj, base]]
    addr = base
    for i, ins in enumerate(insts, 1):
        rows.append([ins.text, 0, i, ins.source, codeobj, addr])
        addr += ins.size
    return rows


def totals(rows, waves):
    """Hit/Latency/Stall/Idle per line, by the writer's formulas."""
    acc = {r[2]: [0, 0, 0, 0] for r in rows}
    for w in waves:
        prev_end = w.begin
        for t, _cat, stall, dur, line in w.insts:
            a = acc.setdefault(line, [0, 0, 0, 0])
            a[0] += 1
            a[1] += dur
            a[2] += stall
            a[3] += max(0, t - prev_end)
            prev_end = max(prev_end, t + dur)
    return acc


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"))


def write_dispatch(
    folder,
    kernel,
    rows,
    waves,
    *,
    gfxip=9,
    columns=10,
    code_null=False,
    occupancy_layout="rows",
    realtime=True,
    stats_csv=True,
    extra_code_keys=None,
):
    """Write one dispatch folder. `columns` 10 (current) or 8 (early writer, no header)."""
    os.makedirs(folder, exist_ok=True)
    acc = totals(rows, waves)
    code = []
    for r in rows:
        h, la, s, i = acc.get(r[2], [0, 0, 0, 0])
        if columns == 8:
            label = r[0].startswith(";")
            code.append([r[0][2:] if label else r[0], 100 if label else 0, r[2], r[3], r[4], r[5], h, la])
        else:
            code.append([*r, h, la, s, i])
    doc = {"code": None if code_null else code, "version": "3.0.0"}
    if columns == 10:
        doc["header"] = HEADER
    doc.update(extra_code_keys or {})
    write_json(os.path.join(folder, "code.json"), doc)

    tree = {}
    for w in waves:
        name = _file_wave(tree, w)
        write_json(
            os.path.join(folder, name),
            {
                "duration": w.end - w.begin,
                "name": f"SE{w.se}",
                "num_insts": len(w.insts),
                "num_stitched": len(w.insts),
                "wave": {
                    "begin": w.begin,
                    "cu": w.cu,
                    "end": w.end,
                    "id": w.wv,
                    "instructions": w.insts,
                    "simd": w.simd,
                    "slot": w.slot,
                    "timeline": w.timeline,
                    "waitcnt": [],
                },
            },
        )
    write_json(
        os.path.join(folder, "filenames.json"),
        {
            "counter_names": [],
            "gfxip": gfxip,
            "gfxv": "vega" if gfxip == 9 else "navi",
            "global_begin_time": 0,
            "version": "3.0.0",
            "wave_filenames": tree or None,
        },
    )

    occ = {}
    for w in waves:
        for t, start in ((w.begin, 1), (w.end, 0)):
            if occupancy_layout == "packed":
                v = 1 | (w.simd << 12) | (w.slot << 14) | (start << 18) | (w.cu << 19) | ((t // 8) << 23)
                occ.setdefault(str(w.se), []).append(v)
            elif occupancy_layout == "python":
                occ.setdefault(str(w.se), []).append([t, w.cu, w.simd, w.slot, start, 1, 0, 0, 0, 0, 0])
            else:
                occ.setdefault(str(w.se), []).append([t, w.cu, w.simd, w.slot, start, 1])
    occ["dispatches"] = {"0": "0 / 0x0", "1": kernel}
    if occupancy_layout != "packed":
        occ["version"] = "3.0.0"
    if occupancy_layout == "python":
        occ["occupancy_fields"] = [
            "time",
            "cu",
            "simd",
            "wave_id",
            "start",
            "kernel_id",
            "me_id",
            "pipe_id",
            "is_ext",
            "workgroup_id",
            "cluster_id",
        ]
        occ["events"] = {}
    write_json(os.path.join(folder, "occupancy.json"), occ)

    if realtime and waves:
        ses = sorted({w.se for w in waves})
        rt = {
            f"SE{s}": [
                [min(w.begin for w in waves) - 400, 1_000_000],
                [max(w.end for w in waves) + 400, 1_000_000 + 60],
            ]
            for s in ses
        }
        rt["metadata"] = {"descriptor": "[gfx_clock, realtime_clock]", "frequency": 100000000}
        write_json(os.path.join(folder, "realtime.json"), rt)

    if stats_csv:
        parent = os.path.dirname(os.path.abspath(folder))
        with open(os.path.join(parent, f"stats_{os.path.basename(folder)}.csv"), "w") as f:
            f.write('"CodeObj","Vaddr","Instruction","Hitcount","Latency","Stall","Idle","Source"\n')
            if waves and not code_null:
                for r in rows:
                    h, la, s, i = acc.get(r[2], [0, 0, 0, 0])
                    f.write(f'{r[4]},{r[5]},"{r[0]}",{h},{la},{s},{i},"{r[3]}"\n')


# Official instruction categories (trace_decoder_types.h): SMEM 1, SALU 2, VMEM 3, FLAT 4, LDS 5,
# VALU 6, JUMP 7, NEXT 8, IMMED 9, MESSAGE 11.
def category(text: str) -> int:
    m = text.split()[0]
    if m.startswith(("s_load", "s_buffer_load")):
        return 1
    if m.startswith(("s_waitcnt", "s_nop", "s_barrier", "s_wait_")):
        return 9
    if m.startswith(("s_endpgm", "s_sendmsg")):
        return 11
    if m.startswith("s_cbranch"):
        return 8
    if m.startswith("s_"):
        return 2
    if m.startswith(("global_", "buffer_", "scratch_")):
        return 3
    if m.startswith("flat_"):
        return 4
    if m.startswith("ds_"):
        return 5
    return 6


# ---- rocprofv2-era folders (`rocprofv2 --plugin att auto --mode file`, ROCm 5.x-6.x) ----------------
#
# Layout from ROCm/rocm-systems projects/rocprofiler/plugin/att/{att.py,stitch.py,trace_view.py}
# (read, not copied) and ui-output-format.md §15 "legacy":
#   code.json       {"code": rows, "top_n": [[index, hits, 0, cycles], ...]}, 8-column rows
#                   [text, inst type, line, source, index, line_num, hits, cycles]; row 0 is the comment
#                   "; Begin ATT ASM" (type 100), each kernel starts with a "; <symbol>" row (type 100)
#                   that copies columns 2/4/5 of the row before it; an instruction's column 2 is its own
#                   position in the list (what wave files refer to), columns 4/5 count instructions only.
#                   hits/cycles are summed per position; there is no stall column.
#   wave files      name "SE" (no number), no "cu"; instructions [time, type, 0, duration, line]
#                   (stall always 0); extra keys info, loop_count, top_n, websocket_port, generation_time.
#   filenames.json  wave_filenames, se_filenames, global_begin_time, gfxv ("vega"/"navi"); no gfxip/version.
#   se<N>_info.json per SE with waves; occupancy.json packed integers keyed by trace-file index with
#   "names" (the .att files) and "dispatches"; wstates<k>.json {"data": [...]}; live.json.


def legacy_rows(kernel: str, insts: list[Inst]) -> list[list]:
    """rocprofv2 code rows without totals: [text, type, line, source, index, line_num]."""
    rows = [["; Begin ATT ASM", 100, 0, "", 0, 0], ["; " + kernel, 100, 0, "", 0, 0]]
    for n, ins in enumerate(insts, 1):
        rows.append([ins.text, category(ins.text), len(rows), ins.source or None, n, n])
    return rows


def write_legacy_dispatch(folder, kernel, insts, waves, *, gfxv="vega", se_numbers=None):
    """One `<name>_ui/` folder as the rocprofv2 ATT plugin writes it. Wave instructions refer to code rows by
    position (column 2); their stall field is written as 0, as the plugin does."""
    os.makedirs(folder, exist_ok=True)
    rows = legacy_rows(kernel, insts)
    hits, cycles = [0] * len(rows), [0] * len(rows)
    for w in waves:
        for _t, _cat, _stall, dur, line in w.insts:
            hits[line] += 1
            cycles[line] += dur
    code = [[*r, h, c] for r, h, c in zip(rows, hits, cycles)]
    top = sorted(code, key=lambda r: r[-1], reverse=True)[:10]
    write_json(os.path.join(folder, "code.json"), {"code": code, "top_n": [[r[4], r[6], 0, r[7]] for r in top]})

    tree, ses = {}, {}
    for w in waves:
        name = _file_wave(tree, w)
        ses.setdefault(w.se, []).append(w)
        write_json(
            os.path.join(folder, name),
            {
                "name": "SE",
                "duration": sum(d for _s, d in w.timeline),
                "wave": {
                    "id": w.wv,
                    "simd": w.simd,
                    "slot": w.slot,
                    "begin": w.begin,
                    "end": w.end,
                    "info": {"Issue": len(w.insts), "Valu": 0, "Valu_stall": 0},
                    "instructions": [[t, cat, 0, dur, line] for t, cat, _s, dur, line in w.insts],
                    "timeline": w.timeline,
                    "waitcnt": [],
                },
                "loop_count": {},
                "top_n": [],
                "num_stitched": len(w.insts),
                "num_insts": len(w.insts),
                "websocket_port": 18000,
                "generation_time": "Tue Mar 12 10:00:00 2024",
            },
        )
    for se in ses:
        write_json(
            os.path.join(folder, f"se{se}_info.json"),
            {"name": "SE", "websocket_port": 18000, "generation_time": "Tue Mar 12 10:00:00 2024"},
        )
    se_list = sorted(ses) if se_numbers is None else se_numbers
    write_json(
        os.path.join(folder, "filenames.json"),
        {
            "wave_filenames": tree,
            "se_filenames": [f"se{se}_info.json" for se in sorted(ses)],
            "global_begin_time": 0,
            "gfxv": gfxv,
        },
    )
    occ = {}
    for k, se in enumerate(se_list):
        packed = []
        for w in ses.get(se, []):
            for t, start in ((w.begin, 1), (w.end, 0)):
                packed.append(1 | (w.simd << 12) | (w.slot << 14) | (start << 18) | (1 << 19) | ((t // 8) << 23))
        occ[str(k)] = sorted(packed, key=lambda v: v >> 23)
    occ["dispatches"] = {"0": "Addr #0x0", "1": kernel}
    occ["names"] = [f"run_{kernel}_v0_se{se}.att" for se in se_list]
    write_json(os.path.join(folder, "occupancy.json"), occ)
    for k in range(5):
        write_json(os.path.join(folder, f"wstates{k}.json"), {"data": [0, 1, 1, 0]})
    write_json(os.path.join(folder, "live.json"), {"live": 0})
    return code


def _file_wave(tree: dict, w) -> str:
    """Enter wave `w` in filenames.json's se/simd/slot/wave tree; the name of its wave file."""
    name = f"se{w.se}_sm{w.simd}_sl{w.slot}_wv{w.wv}.json"
    tree.setdefault(str(w.se), {}).setdefault(str(w.simd), {}).setdefault(str(w.slot), {})[str(w.wv)] = [
        name,
        w.begin,
        w.end,
    ]
    return name
