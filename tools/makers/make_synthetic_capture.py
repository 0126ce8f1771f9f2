#!/usr/bin/env python3
"""Write tests/fixtures/captures/gfx1100/synth_run0: a small RDNA capture folder for tests that need one when
../shared is absent (the gfx9 one is the demo's, attdec/data/demo_raw).

The code object is tests/fixtures/isa/dwarf5_gfx1100.co (our own OpenCL kernel, compiled by
tools/makers/make_dwarf_fixtures.py). The SQTT streams are written with tests/support/sqtt_encoder.py: two
dispatches of kernel `kern`, each on two shader engines; on each, waves on the traced SIMD 0 walk the kernel's
code (one token per instruction that leaves one: INST of its kind, VALU_INST, IMM_ONE for s_waitcnt; none for
s_delay_alu), some taking the s_cbranch_execz straight to s_endpgm, and a wave on SIMD 1 that only shows in
occupancy; realtime samples every 200 cycles. Gaps come from a fixed-seed generator. Nothing here comes from a real GPU.

Run from the repository root: python3 tools/makers/make_synthetic_capture.py
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.support.sqtt_encoder import RdnaEncoder

CODE_OBJECT = "tests/fixtures/isa/dwarf5_gfx1100.co"
OUT = "tests/fixtures/captures/gfx1100/synth_run0"
BASE = 0x7FFF_0000_0000  # load base; the kernel entry (ELF 0x1600) stays 256-byte aligned
ENTRY = 0x1600
# The token each instruction of `kern` leaves, in code order up to s_endpgm (None: no token), and the
# (low, high) wait before it in cycles.
BODY = [
    ("smem_rd", (0, 0)),  # s_load_b32
    ("valu", (0, 0)),  # v_lshl_add_u32
    ("imm", (20, 60)),  # s_waitcnt lgkmcnt(0)
    (None, (0, 0)),  # s_delay_alu
    ("valu", (0, 4)),  # v_cmp_gt_i32_e32
    ("salu_wr_exec", (0, 4)),  # s_and_saveexec_b32
    ("branch_not_taken", (0, 0)),  # s_cbranch_execz
    ("smem_rd", (0, 0)),  # s_load_b128
    ("valu", (0, 0)),  # v_ashrrev_i32_e32
    (None, (0, 0)),  # s_delay_alu
    ("valu", (0, 4)),  # v_lshlrev_b64
    ("imm", (20, 50)),  # s_waitcnt lgkmcnt(0)
    ("valu", (0, 4)),  # v_add_co_u32
    (None, (0, 0)),  # s_delay_alu
    ("valu", (0, 4)),  # v_add_co_ci_u32_e64
    ("valu", (0, 4)),  # v_add_co_u32
    ("valu", (0, 4)),  # v_add_co_ci_u32_e64
    ("flat_rd_2", (0, 8)),  # global_load_b32
    ("imm", (100, 240)),  # s_waitcnt vmcnt(0)
    ("valu", (4, 12)),  # v_fma_f32
    ("flat_wr_3", (0, 8)),  # global_store_b32
    ("message", (0, 0)),  # s_endpgm
]
REALTIME_START = 1_000_000
# i >= n: up to the branch, taken, then s_endpgm
SHORT = [*BODY[:6], ("branch_taken", (0, 0)), BODY[-1]]


def emit(e: RdnaEncoder, slot: int, token: str) -> None:
    if token == "valu":
        e.valu(slot)
    elif token == "imm":
        e.imm_one(slot)
    else:
        e.inst(slot, token)


def stream(rng: random.Random, se: int, dispatch: int) -> bytes:
    """Waves of one SE: (time, order, action) events merged in time order, then encoded."""
    events = []
    for k in range(4):
        slot, path = k, SHORT if (se + dispatch + k) % 4 == 3 else BODY
        t = 40 + 32 * k + 8 * se
        events.append((t, 0, lambda e, w=slot: e.wave_start(simd=0, slot=w)))
        t += 8 + 4 * rng.randint(0, 3)
        for token, (lo, hi) in path:
            if token is None:
                continue
            t += 4 + rng.randint(lo, hi)
            events.append((t, 1, lambda e, w=slot, tok=token: emit(e, w, tok)))
        events.append((t + 8, 2, lambda e, w=slot: e.wave_end(simd=0, slot=w)))
    for t in range(16, 1200, 200):  # realtime samples: a 100 MHz clock against a 2.5 GHz shader clock
        events.append((t, 0, lambda e, rt=REALTIME_START + t // 25: e.token("TIMESTAMP", rt=1, value=rt)))
    events.append((60, 0, lambda e: e.wave_start(simd=1, slot=5)))  # untraced SIMD: occupancy only
    events.append((900, 2, lambda e: e.wave_end(simd=1, slot=5)))
    e = RdnaEncoder(11, dp_rate=1)
    e.kernel_entry(BASE + ENTRY)
    now = 0
    for t, _order, act in sorted(events, key=lambda x: (x[0], x[1])):
        if t - now >= 4:  # the encoder moves time in steps of 4 or more; closer events share a time
            e.advance(t - now)
            now = t
        act(e)
    return e.advance(16).data()


def main(out: str = OUT) -> None:
    rng = random.Random(20261207)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shutil.copyfile(CODE_OBJECT, os.path.join(out, "kern.co"))
    blobs, dispatches = [], []
    for tag in (1, 2):
        names = []
        for se in (0, 1):
            name = f"kern_{tag}_se{se}.att"
            data = stream(rng, se, tag)
            with open(os.path.join(out, name), "wb") as f:
                f.write(data)
            blobs.append(
                {
                    "file": name,
                    "kernel": "kern",
                    "se": se,
                    "itrace": True,
                    "size": len(data),
                    "sha256": hashlib.sha256(data).hexdigest(),
                }
            )
            names.append(name)
        dispatches.append({"kernel": "kern", "exec_tag": tag, "blobs": names})
    capture = {
        "format": 1,
        "example": "attdec tests (synthetic)",
        "gfx_arch": "gfx1100",
        # a Radeon RX 7900 XTX as the KFD reports it (what .rgp writers put in their ASIC info)
        "device_props": {
            "array_count": 12,
            "cu_per_simd_array": 8,
            "gfx_target_version": 110000,
            "lds_size_in_kb": 64,
            "max_waves_per_simd": 16,
            "simd_arrays_per_engine": 2,
            "simd_count": 192,
            "simd_per_cu": 2,
        },
        "kernels": [
            {
                "name": "kern",
                "code_object": "kern.co",
                "base": BASE,
                "base_hex": hex(BASE),
                "entry_vaddr": ENTRY,
                "code_start": BASE + ENTRY,
            }
        ],
        "blobs": blobs,
        "dispatches": dispatches,
    }
    with open(os.path.join(out, "capture.json"), "w") as f:
        json.dump(capture, f, indent=1)
        f.write("\n")
    print(f"wrote {out}: kern.co + {len(blobs)} SE blobs of {len(dispatches)} dispatches")


if __name__ == "__main__":
    main(*sys.argv[1:])
