#!/usr/bin/env python3
"""Write tests/fixtures/captures/gfx1100/synth_run0 and synth_run1: small RDNA capture folders for tests that
need one when ../shared is absent (the gfx9 one is the demo's, attdec/data/demo_raw).

The code object is tests/fixtures/isa/dwarf5_gfx1100.co (our own OpenCL kernel, compiled by
tools/makers/make_dwarf_fixtures.py). The SQTT streams are written with tests/support/sqtt_encoder.py: two
dispatches of kernel `kern`, each on two shader engines; on each, waves on the traced SIMD 0 walk the kernel's
code (one token per instruction that leaves one: INST of its kind, VALU_INST, IMM_ONE for s_waitcnt; none for
s_delay_alu), some taking the s_cbranch_execz straight to s_endpgm, and a wave on SIMD 1 that only shows in
occupancy; realtime samples every 200 cycles. Gaps come from a fixed-seed generator. Nothing here comes from a real GPU.

synth_run1 adds what synth_run0 lacks: memory instructions issued on the traced WGP's other SIMD (the INST
opcodes the decoders report as other-SIMD records), and a PMC buffer per dispatch as tinygrad writes it
(little-endian u64 per instance, ordered xcc, inst, se, sa, wgp; schedule in capture.json's `pmc`) whose
SQ_INSTS_VALU counts the VALU tokens written here and SQ_WAVES the waves; it has no wave on SIMD 1, so
every wave the counters count is traced.

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
OUT_MORE = "tests/fixtures/captures/gfx1100/synth_run1"
OTHER_SIMD = ["flat_other_simd_2", "vmem_other_simd_4", "lds_other_simd_3"]  # opcodes of the other SIMD's issue
# the PMC schedule of synth_run1 (name, block, instances, SEs, SAs, WGPs): the SQ counters per SE, SA and WGP
# (two of each), one GRBM value, a GL2C counter per channel (4)
PMC_SCHED = [
    ("SQ_INSTS_VALU", "SQ", 1, 2, 2, 2),
    ("SQ_WAVES", "SQ", 1, 2, 2, 2),
    ("GRBM_GUI_ACTIVE", "GRBM", 1, 1, 1, 1),
    ("GL2C_HIT", "GL2C", 4, 1, 1, 1),
]
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


def stream(rng: random.Random, se: int, dispatch: int, more: bool = False) -> tuple[bytes, int]:
    """Waves of one SE: (time, order, action) events merged in time order, then encoded; with the VALU
    tokens written. `more`: other-SIMD instructions too."""
    events, valu = [], 0
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
            valu += token == "valu"
        events.append((t + 8, 2, lambda e, w=slot: e.wave_end(simd=0, slot=w)))
    for t in range(16, 1200, 200):  # realtime samples: a 100 MHz clock against a 2.5 GHz shader clock
        events.append((t, 0, lambda e, rt=REALTIME_START + t // 25: e.token("TIMESTAMP", rt=1, value=rt)))
    if not more:
        events.append((60, 0, lambda e: e.wave_start(simd=1, slot=5)))  # untraced SIMD: occupancy only
        events.append((900, 2, lambda e: e.wave_end(simd=1, slot=5)))
    else:
        for k in range(6):
            op = OTHER_SIMD[(k + se) % len(OTHER_SIMD)]
            events.append((300 + 60 * k + 4 * se, 1, lambda e, op=op: e.inst(5, op)))
    e = RdnaEncoder(11, dp_rate=1)
    e.kernel_entry(BASE + ENTRY)
    now = 0
    for t, _order, act in sorted(events, key=lambda x: (x[0], x[1])):
        if t - now >= 4:  # the encoder moves time in steps of 4 or more; closer events share a time
            e.advance(t - now)
            now = t
        act(e)
    return e.advance(16).data(), valu


def pmc_buffer(valu_by_se: dict[int, int], waves_by_se: dict[int, int]) -> tuple[bytes, list[dict]]:
    """One dispatch's PMC buffer and schedule: every wave ran on WGP 0 of SA 0 of its SE."""
    values, sched = [], []
    for name, block, insts, ses, sas, wgps in PMC_SCHED:
        off = 8 * len(values)
        for inst in range(insts):
            for se in range(ses):
                for sa in range(sas):
                    for wgp in range(wgps):
                        if block == "GRBM":
                            values.append(1200)
                        elif block == "GL2C":
                            values.append(100 + inst)
                        elif wgp or sa:
                            values.append(0)
                        else:
                            values.append((valu_by_se if name == "SQ_INSTS_VALU" else waves_by_se)[se])
        n = insts * ses * sas * wgps
        sched.append(
            {"name": name, "block": block, "xcc": 1, "inst": insts, "se": ses, "sa": sas, "wgp": wgps, "off": off}
            | {"size": 8 * n}
        )
    return b"".join(v.to_bytes(8, "little") for v in values), sched


def main(out: str = OUT, more: bool = False) -> None:
    rng = random.Random(20261207)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shutil.copyfile(CODE_OBJECT, os.path.join(out, "kern.co"))
    blobs, dispatches, pmc = [], [], []
    for tag in (1, 2):
        names, valu_by_se = [], {}
        for se in (0, 1):
            name = f"kern_{tag}_se{se}.att"
            data, valu_by_se[se] = stream(rng, se, tag, more)
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
        if more:
            buf, sched = pmc_buffer(valu_by_se, {0: 4, 1: 4})  # 4 waves per SE
            name = f"kern_{tag}.pmc"
            with open(os.path.join(out, name), "wb") as f:
                f.write(buf)
            pmc.append({"kernel": "kern", "exec_tag": tag, "file": name, "sched": sched, "size": len(buf)})
    capture = {
        "format": 1,
        "example": "attdec tests (synthetic)",
        "gfx_arch": "gfx1100",
        "gfx_target_version": 110000,
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
    if more:
        capture["pmc"] = pmc
    with open(os.path.join(out, "capture.json"), "w") as f:
        json.dump(capture, f, indent=1)
        f.write("\n")
    print(f"wrote {out}: kern.co + {len(blobs)} SE blobs of {len(dispatches)} dispatches")


if __name__ == "__main__":
    main(OUT)
    main(OUT_MORE, more=True)
