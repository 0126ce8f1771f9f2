#!/usr/bin/env python3
"""Synthesize the demo dispatch that ships in attdec/data/demo (what `attdec demo` shows).

A made-up row-softmax kernel on a gfx942-like part: scalar loads, two global loads, a cross-lane max
through ds_swizzle/ds_bpermute (an inlined helper, so its Source is a chain), exp, an LDS round trip
with a barrier, stores. Four waves on one CU; stalls drawn from a fixed-seed generator so the output is
reproducible. Run from the repository root: python3 tools/makers/make_demo_sample.py
"""

from __future__ import annotations

import os
import random
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.support.uisynth import Inst, SynthWave, category, listing, write_dispatch

K = "/home/dev/demo/softmax_kernel.py"
H = "/home/dev/demo/warp_ops.py"
KERNEL = "softmax_rows_0"
PROGRAM = [
    Inst("s_load_dwordx4 s[0:3], s[4:5], 0x0", f"{K}:12", 8),
    Inst("s_load_dword s8, s[4:5], 0x10", f"{K}:12", 8),
    Inst("v_lshlrev_b32_e32 v1, 2, v0", f"{K}:14"),
    Inst("s_waitcnt lgkmcnt(0)", f"{K}:12"),
    Inst("global_load_dword v2, v1, s[0:1]", f"{K}:15", 8),
    Inst("global_load_dword v3, v1, s[0:1] offset:256", f"{K}:15", 8),
    Inst("s_waitcnt vmcnt(0)", f"{K}:15"),
    Inst("v_max_f32_e32 v4, v2, v3", f"{K}:17"),
    Inst("ds_swizzle_b32 v5, v4 offset:swizzle(SWAP,16)", f"{H}:8 -> {K}:17", 8),
    Inst("s_waitcnt lgkmcnt(0)", f"{H}:8 -> {K}:17"),
    Inst("v_max_f32_e32 v4, v4, v5", f"{H}:9 -> {K}:17"),
    Inst("ds_bpermute_b32 v5, v6, v4", f"{H}:10 -> {K}:17", 8),
    Inst("s_waitcnt lgkmcnt(0)", f"{H}:10 -> {K}:17"),
    Inst("v_max_f32_e32 v4, v4, v5", f"{H}:11 -> {K}:17"),
    Inst("v_sub_f32_e32 v2, v2, v4", f"{K}:18"),
    Inst("v_sub_f32_e32 v3, v3, v4", f"{K}:18"),
    Inst("v_exp_f32_e32 v2, v2", f"{K}:18"),
    Inst("v_exp_f32_e32 v3, v3", f"{K}:18"),
    Inst("v_add_f32_e32 v7, v2, v3", f"{K}:19"),
    Inst("ds_write_b32 v1, v7", f"{K}:20", 8),
    Inst("s_waitcnt lgkmcnt(0)", f"{K}:20"),
    Inst("s_barrier", f"{K}:21"),
    Inst("ds_read_b32 v8, v1 offset:4", f"{K}:22", 8),
    Inst("s_waitcnt lgkmcnt(0)", f"{K}:22"),
    Inst("v_rcp_f32_e32 v8, v8", f"{K}:23"),
    Inst("s_nop 1", f"{K}:23"),
    Inst("v_mul_f32_e32 v2, v2, v8", f"{K}:23"),
    Inst("v_mul_f32_e32 v3, v3, v8", f"{K}:23"),
    Inst("global_store_dword v1, v2, s[2:3]", f"{K}:24", 8),
    Inst("global_store_dword v1, v3, s[2:3] offset:256", f"{K}:24", 8),
    Inst("s_endpgm", ""),
]

# (low, high) stall in 4-cycle steps, by what the instruction waits for.
STALLS = {
    "s_waitcnt lgkmcnt(0)@4": (40, 80),
    "s_waitcnt vmcnt(0)": (120, 220),
    "s_barrier": (10, 60),
    "s_waitcnt lgkmcnt(0)": (8, 30),
    "s_nop 1": (2, 2),
    "v_exp_f32_e32": (1, 4),
    "v_rcp_f32_e32": (1, 4),
}


def simulate(rng: random.Random, begin: int) -> tuple[list, list, int]:
    t = begin + 4 * rng.randint(4, 10)
    insts, timeline = [], [[1, t - begin]]
    for line, ins in enumerate(PROGRAM, 1):
        mnem = ins.text.split(" ")[0]
        key = f"{ins.text}@{line}" if f"{ins.text}@{line}" in STALLS else (ins.text if ins.text in STALLS else mnem)
        lo, hi = STALLS.get(key, (0, 1))
        stall = 4 * rng.randint(lo, hi)
        issue = 8 if mnem.startswith(("v_exp", "v_rcp", "global_", "ds_")) else 4
        cat = category(ins.text)
        insts.append([t, cat, stall, stall + issue, line])
        if stall:
            timeline.append([3 if cat == 9 else 4, stall])
        timeline.append([2, issue])
        t += stall + issue
        gap = 4 * rng.choice([0, 0, 0, 1, 2])
        if gap and line < len(PROGRAM):
            timeline.append([1, gap])
            t += gap
    return insts, timeline, t


def main(out: str = "attdec/data/demo") -> None:
    rng = random.Random(20260415)
    waves = []
    for i, (simd, slot) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):
        begin = 51200 + 36 * i
        insts, timeline, end = simulate(rng, begin)
        waves.append(
            SynthWave(se=0, simd=simd, slot=slot, wv=0, cu=1, begin=begin, insts=insts, timeline=timeline, end=end)
        )
    folder = os.path.join(out, "ui_output_agent_4242_dispatch_7")
    shutil.rmtree(out, ignore_errors=True)
    write_dispatch(folder, KERNEL, listing(KERNEL, PROGRAM), waves)
    with open(os.path.join(out, "demo_agent_info.csv"), "w") as f:
        f.write('"Node_Id","Logical_Node_Id","Agent_Type","Gfx_Target_Version","Name","Product_Name"\n')
        f.write('0,0,"CPU",0,"demo-cpu","synthetic host"\n')
        f.write('1,1,"GPU",90402,"gfx942","synthetic demo GPU"\n')
    print(f"wrote {folder} ({len(waves)} waves, {len(PROGRAM)} instructions)")


if __name__ == "__main__":
    main(*sys.argv[1:])
