#!/usr/bin/env python3
"""Synthesize the raw capture that ships in attdec/data/demo_raw (what `attdec demo` points to for raw input).

The code object is tests/fixtures/isa/dwarf4_gfx942.co, which tools/makers/make_dwarf_fixtures.py compiles with
Debian's LLVM from our own OpenCL kernel (`out[i] = in[i] * 2 + 1` for i < n, two inlined helpers, DWARF 4
line table), so the capture has source lines and inline chains. The SQTT streams are written with
tests/support/sqtt_encoder.py: per shader engine, waves of kernel `kern` on the traced CU 0 walk its code
(the ones with i >= n take the s_cbranch_execz straight to s_endpgm) with stalls drawn from a fixed-seed
generator, and waves on CU 1 appear only in occupancy, as on hardware. Nothing here comes from a real GPU.

Run from the repository root: python3 tools/makers/make_demo_raw.py
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.support import sqtt_encoder as enc

CODE_OBJECT = "tests/fixtures/isa/dwarf4_gfx942.co"
OUT = "attdec/data/demo_raw"
BASE = 0x7FFF_0000_0000  # load base; the kernel entry (ELF 0x1600) stays 256-byte aligned
ENTRY = 0x1600
# gfx9 INST token types (sqtt-format.md §3.4): what the trace unit reports for each instruction of `kern`.
# None: an immediate (ISSUE status 3, no INST token).
SMEM, SALU, VALU, FLAT_RD, FLAT_WR, JUMP, NEXT, MSG = 0, 1, 5, 14, 4, 12, 13, 15
# (ELF address, INST type, (low, high) stall in 4-cycle steps) of the path a wave with i < n takes.
BODY = [
    (0x1600, SMEM, (0, 0)),  # s_load_dword s3, s[0:1], 0x10
    (0x1608, VALU, (0, 0)),  # v_lshl_add_u32
    (0x1610, None, (40, 90)),  # s_waitcnt lgkmcnt(0)
    (0x1614, VALU, (0, 1)),  # v_cmp_gt_i32_e32
    (0x1618, SALU, (0, 1)),  # s_and_saveexec_b64
    (0x161C, NEXT, (0, 0)),  # s_cbranch_execz (not taken)
    (0x1620, SMEM, (0, 0)),  # s_load_dwordx4
    (0x1628, VALU, (0, 0)),  # v_ashrrev_i32_e32
    (0x162C, VALU, (0, 1)),  # v_lshlrev_b64
    (0x1634, None, (30, 70)),  # s_waitcnt lgkmcnt(0)
    (0x1638, VALU, (0, 1)),  # v_lshl_add_u64
    (0x1640, FLAT_RD, (0, 2)),  # global_load_dword
    (0x1648, VALU, (0, 0)),  # v_lshl_add_u64
    (0x1650, None, (120, 260)),  # s_waitcnt vmcnt(0)
    (0x1654, VALU, (1, 3)),  # v_fma_f32
    (0x165C, FLAT_WR, (0, 2)),  # global_store_dword
    (0x1664, MSG, (0, 0)),  # s_endpgm
]
# i >= n: up to the branch, taken, then s_endpgm
SHORT = [*BODY[:5], (0x161C, JUMP, (0, 0)), BODY[-1]]


def wave_events(rng, se, simd, slot, begin, path):
    """(time, order, action) events of one traced wave; actions are called on the SE's encoder."""
    ev = [(begin, 0, lambda e: e.wave_start(0, simd, slot))]
    t = begin + 4 * rng.randint(6, 12)
    for _addr, itype, (lo, hi) in path:
        stall = 4 * rng.randint(lo, hi)
        if stall:
            ev.append((t, 1, lambda e, s=simd, w=slot: e.issue(s, {w: 1})))
            t += stall
        if itype is None:
            ev.append((t, 1, lambda e, s=simd, w=slot: e.issue(s, {w: 3})))
        else:
            ev.append((t, 1, lambda e, s=simd, w=slot: e.issue(s, {w: 2})))
            ev.append((t + 4, 2, lambda e, s=simd, w=slot, i=itype: e.inst(s, w, i)))
        t += 8 + 4 * rng.randint(0, 2)
    ev.append((t + 8, 3, lambda e: e.wave_end(0, simd, slot)))
    return ev


def stream(rng, se: int) -> bytes:
    e = enc.Gfx9Encoder(target_cu=0)
    e.kernel_entry(BASE + ENTRY)
    events = []
    for k, (simd, slot) in enumerate([(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1)]):
        path = SHORT if (se, k) in ((1, 4), (1, 5)) else BODY
        events += wave_events(rng, se, simd, slot, 400 + 40 * k + 24 * se, path)
    for k in range(4):  # untraced waves on CU 1: occupancy only
        b = 420 + 60 * k
        events.append((b, 0, lambda e, s=k: e.wave_start(1, s, 0)))
        events.append((b + 1800 + 40 * k, 3, lambda e, s=k: e.wave_end(1, s, 0)))
    for t, _order, act in sorted(events, key=lambda x: (x[0], x[1])):
        e.at(t)
        act(e)
    return e.advance(16).data()


def main(out: str = OUT) -> None:
    rng = random.Random(20260419)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shutil.copyfile(CODE_OBJECT, os.path.join(out, "kern.co"))
    blobs = []
    for se in (0, 1):
        name = f"kern_1_se{se}.att"
        with open(os.path.join(out, name), "wb") as f:
            f.write(stream(rng, se))
        blobs.append({"file": name, "se": se, "itrace": True})
    capture = {
        "format": 1,
        "example": "attdec demo (synthetic)",
        "gfx_arch": "gfx942",
        "kernels": [{"name": "kern", "code_object": "kern.co", "base": BASE, "base_hex": hex(BASE)}],
        "blobs": blobs,
        "dispatches": [{"kernel": "kern", "exec_tag": 1, "blobs": [b["file"] for b in blobs]}],
    }
    with open(os.path.join(out, "capture.json"), "w") as f:
        json.dump(capture, f, indent=1)
        f.write("\n")
    print(f"wrote {out}: kern.co + {len(blobs)} SE blobs")


if __name__ == "__main__":
    main(*sys.argv[1:])
