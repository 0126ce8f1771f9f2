#!/usr/bin/env python3
"""Write the small synthetic ui_output folders in tests/fixtures/ (run from the repository root).

Every figure the tests assert is derived by hand in tests/test_ui_output.py's docstrings from the
wave instructions below; code.json totals are computed by tests/support/uisynth.py, not by attdec.
"""

from __future__ import annotations

import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.support.uisynth import Inst, SynthWave, category, listing, write_dispatch, write_json, write_legacy_dispatch

OUT = "tests/fixtures"
KERNEL = "tiny_kernel"
PROGRAM = [
    Inst("s_load_dwordx2 s[0:1], s[4:5], 0x0", "/src/k.py:5", 8),
    Inst("s_waitcnt lgkmcnt(0)", "/src/k.py:5"),
    Inst("global_load_dword v1, v0, s[0:1]", "/src/k.py:6", 8),
    Inst("s_waitcnt vmcnt(0) lgkmcnt(0)", "/src/k.py:6"),
    Inst("v_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], 0", "/src/k.py:7 -> /src/main.py:40", 8),
    Inst("v_fma_f32 v1, v2, v3, v4", "/src/k.py:8 -> /src/main.py:40", 8),
    Inst("s_nop 1", "/src/k.py:8 -> /src/main.py:40"),
    Inst("s_endpgm", ""),
]


def tl(insts, begin):
    return [[1, insts[0][0] - begin]] + [[2, i[3]] for i in insts]


def tiny_waves():
    a = [
        [104, 1, 0, 4, 1],
        [108, 9, 40, 44, 2],
        [152, 3, 0, 8, 3],
        [164, 9, 300, 304, 4],
        [468, 6, 16, 32, 5],
        [500, 6, 4, 8, 6],
        [508, 9, 8, 12, 7],
        [520, 11, 0, 4, 8],
    ]
    b = [
        [200, 1, 0, 4, 1],
        [204, 9, 60, 64, 2],
        [268, 3, 4, 12, 3],
        [284, 9, 200, 204, 4],
        [488, 6, 0, 16, 5],
        [504, 6, 0, 4, 6],
        [508, 9, 8, 12, 7],
        [524, 11, 0, 4, 8],
    ]
    c = [
        [600, 1, 0, 4, 1],
        [604, 9, 20, 24, 2],
        [628, 3, 0, 8, 3],
        [640, 9, 100, 104, 4],
        [744, 6, 0, 16, 5],
        [760, 6, 0, 4, 6],
        [764, 9, 8, 12, 7],
        [776, 11, 0, 4, 8],
    ]
    return [
        SynthWave(0, 0, 0, 0, 1, 100, a, tl(a, 100), 524),
        SynthWave(1, 2, 1, 0, 1, 200, b, tl(b, 200), 528),
        SynthWave(1, 2, 1, 1, 1, 600, c, tl(c, 600), 780),
    ]


GFX12 = [
    Inst("s_load_b64 s[0:1], s[0:1], 0x0", "/src/r.py:3", 8),
    Inst("s_wait_kmcnt 0x0", "/src/r.py:3"),
    Inst("global_load_b32 v1, v0, s[0:1]", "/src/r.py:4", 12),
    Inst("ds_load_b32 v2, v0", "/src/r.py:4", 8),
    Inst("s_wait_loadcnt_dscnt 0x0", "/src/r.py:5"),
    Inst("v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]", "/src/r.py:6", 8),
    Inst("s_wait_dscnt 0x1", "/src/r.py:7"),
    Inst("s_endpgm", ""),
]


def gfx12_waves():
    a = [
        [10, 1, 0, 4, 1],
        [14, 9, 50, 54, 2],
        [68, 3, 0, 4, 3],
        [72, 5, 0, 4, 4],
        [76, 9, 400, 404, 5],
        [480, 6, 10, 42, 6],
        [522, 9, 6, 8, 7],
        [530, 11, 0, 4, 8],
    ]
    return [SynthWave(0, 0, 3, 0, 2, 8, a, tl(a, 8), 534)]


# rocprofv2-era (`rocprofv2 --plugin att auto --mode file`) folder of a MI300X-like run: a mangled kernel
# name, sources without a line table for two rows, waves on SE 1 and SE 3 (occupancy keys 0 and 1).
LEGACY_KERNEL = "_Z10vec_kernelPfPKfi"
LEGACY = [
    Inst("s_load_dwordx4 s[0:3], s[4:5], 0x0", "/src/vec.hip:12"),
    Inst("v_lshlrev_b32_e32 v1, 2, v0", "/src/vec.hip:13"),
    Inst("s_waitcnt lgkmcnt(0)", "/src/vec.hip:12"),
    Inst("global_load_dword v2, v1, s[0:1]", "/src/vec.hip:14"),
    Inst("s_waitcnt vmcnt(0)", "/src/vec.hip:14"),
    Inst("v_add_f32_e32 v2, 1.0, v2", "/src/vec.hip:15"),
    Inst("global_store_dword v1, v2, s[2:3]", ""),
    Inst("s_endpgm", ""),
]


def legacy_waves():
    """[time, category, stall (always 0 in this format), duration, line = position in code.json]."""

    def wave(se, simd, slot, wv, begin, durs):
        insts, t = [], begin + 8
        for line, d in enumerate(durs, 2):
            insts.append([t, category(LEGACY[line - 2].text), 0, d, line])
            t += d + 4
        return SynthWave(se, simd, slot, wv, 0, begin, insts, [[1, 8]] + [[2, i[3]] for i in insts], t)

    return [
        wave(1, 0, 0, 0, 1000, [16, 4, 208, 12, 964, 8, 16, 4]),
        wave(1, 0, 0, 1, 3000, [16, 4, 92, 12, 1520, 8, 16, 4]),
        wave(3, 2, 5, 0, 1200, [24, 8, 300, 12, 700, 8, 20, 4]),
    ]


def main():
    # only the folders this script writes: tests/fixtures also holds files other tools make (isa/, *.att)
    for sub in ("tiny", "early8", "python31", "empty", "gfx12", "pcs", "rocprofv2", "nocode"):
        shutil.rmtree(os.path.join(OUT, sub), ignore_errors=True)
    rows = listing(KERNEL, PROGRAM)
    write_dispatch(f"{OUT}/tiny/ui_output_agent_7_dispatch_3", KERNEL, rows, tiny_waves())
    write_dispatch(
        f"{OUT}/early8/ui_output_agent_7_dispatch_4",
        KERNEL,
        rows,
        tiny_waves(),
        columns=8,
        occupancy_layout="packed",
        realtime=False,
        stats_csv=False,
    )
    prow = listing("_" + KERNEL, PROGRAM)
    write_dispatch(
        f"{OUT}/python31/ui_output_att1",
        KERNEL,
        prow,
        tiny_waves(),
        occupancy_layout="python",
        stats_csv=False,
        extra_code_keys={
            "kernels": [{"address": 6400, "codeobj": 1, "name": KERNEL, "demangled": KERNEL}],
            "hsaco": [],
        },
    )
    # empty shells (code null / zero-hit rows), next to a dispatch that has waves
    write_dispatch(f"{OUT}/empty/ui_output_agent_7_dispatch_9", KERNEL, rows, [], code_null=True)
    write_dispatch(f"{OUT}/empty/ui_output_agent_7_dispatch_10", KERNEL, rows, [])
    write_dispatch(f"{OUT}/empty/ui_output_agent_7_dispatch_3", KERNEL, rows, tiny_waves())
    # gfx12 split counters, with an agent table naming the chip
    g = f"{OUT}/gfx12/ui_output_agent_8_dispatch_1"
    write_dispatch(g, "rdna4_kernel", listing("rdna4_kernel", GFX12), gfx12_waves(), gfxip=12)
    with open(f"{OUT}/gfx12/run_agent_info.csv", "w") as f:
        f.write('"Node_Id","Agent_Type","Gfx_Target_Version","Name"\n0,"CPU",0,"cpu"\n1,"GPU",120001,"gfx1201"\n')
    # PC-sampling folder (13 columns, list header)
    p = f"{OUT}/pcs/pcsampling"
    os.makedirs(p)
    write_json(
        f"{p}/filenames.json",
        {
            "counter_names": [],
            "gfxip": 9,
            "gfxv": "vega",
            "global_begin_time": 0,
            "is_pcs_stochastic": False,
            "pc_sampling": True,
            "thread_trace": False,
            "version": "3.0.0",
            "wave_filenames": None,
        },
    )
    hdr = [
        "ISA",
        "_",
        "LineNumber",
        "Source",
        "Codeobj",
        "Vaddr",
        "Hit",
        "Latency",
        "Stall",
        "Idle",
        "PC_Issued",
        "PC_Stalled",
        "Stall_Reasons",
    ]
    code = [[r[0], 0, r[2], r[3], r[4], r[5], 0, 0, 0, 0, 3, 1, [0] * 10] for r in rows]
    write_json(f"{p}/code.json", {"code": code, "header": hdr, "version": "3.0.0"})
    write_json(f"{p}/snapshots.json", {"/": {"src": {"k.py": "source_0_k.py"}}})
    write_legacy_dispatch(f"{OUT}/rocprofv2/vec_kernel_v0_ui", LEGACY_KERNEL, LEGACY, legacy_waves())
    # wave files but no listing: code null, code [], no code.json at all
    for kind in ("null", "empty", "missing"):
        folder = f"{OUT}/nocode/{kind}/ui_output_agent_7_dispatch_5"
        write_dispatch(folder, KERNEL, rows, tiny_waves(), code_null=True, stats_csv=False)
        if kind == "empty":
            write_json(f"{folder}/code.json", {"code": [], "header": "ISA, _, LineNumber", "version": "3.0.0"})
        elif kind == "missing":
            os.remove(f"{folder}/code.json")
    print(f"wrote fixtures under {OUT}")


if __name__ == "__main__":
    main()
