#!/usr/bin/env python3
"""Every-opcode test corpus: synthesized words for every opcode of every table, with LLVM 22's text.

For each target table and each opcode, start from the template LLVM accepts (tools/oracles/probe_isa.py),
then make two words: (a) operand fields set to other registers / constants than the probe used,
(b) the same plus random modifier bits (offsets, abs/neg/clamp, cache bits, immediates) and a
literal constant where a source allows one. llvm-objdump decides what each word is (possibly
`.long`); the result goes to tests/fixtures/isa/opcodes_llvm.json.gz as [arch, hex words, size, text].
Needs llvm-objdump-22 (dev tool); tests read the stored fixture.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.oracles import probe_isa as P

ROOT = Path(__file__).resolve().parents[2]

# replacement operand values (distinct from the probe's) per field name
VALUES = {
    "vdst": [3, 6, 10],
    "src0": [P.V + 5, 2, 130, 255, 242],
    "src1": [P.V + 9, 3, 129, 193],
    "src2": [P.V + 12, 4, 128],
    "vsrc1": [7, 11],
    "sdst": [6, 106, 2],
    "ssrc0": [3, 106, 255, 129, 242],
    "ssrc1": [5, 126, 255, 200],
    "addr": [8, 2],
    "data0": [12, 5],
    "data1": [14, 9],
    "data": [20, 4],
    "saddr": [2, 6],
    "vaddr": [6, 1],
    "vdata": [24, 2],
    "srsrc": [1, 3],
    "soffset": [5, 128, 124],
    "rsrc": [4, 12],
    "vsrc": [26, 28],
    "sdata": [10, 2, 16],
    "sbase": [1, 2],
}
# modifier bit ranges (bit offset, width) set randomly in variant (b)
MODS = {
    "SOPP": [(0, 16)],
    "SOPK": [(0, 16)],
    "VOP3": [(8, 3), (15, 1), (59, 2), (61, 3), (11, 4)],
    "VOP3P": [(8, 3), (11, 3), (14, 1), (15, 1), (59, 2), (61, 3)],
    "DS": [(0, 16)],
    "FLAT": [(0, 12), (14, 2)],
    "GLOBAL": [(0, 13), (14, 2)],
    "SCRATCH": [(0, 13), (14, 2)],
    "SMEM": [(32, 20)],
    "VGLOBAL": [(72, 24), (50, 5)],
    "VFLAT": [(72, 24), (50, 5)],
    "VSCRATCH": [(72, 24), (50, 5)],
    "MUBUF": [(0, 12)],
    "VINTERP": [(8, 3), (15, 1)],
    "LDSDIR": [(8, 8), (16, 4)],
    "VDSDIR": [(8, 8), (16, 4)],
}


def run_safe(objdump, mcpu, mach, words, crashed):
    """P.run, bisecting around words that crash llvm-objdump (recorded in `crashed`, result None)."""
    import subprocess

    try:
        return P.run(objdump, mcpu, mach, words)
    except subprocess.CalledProcessError:
        if len(words) == 1:
            crashed.append(words[0])
            return ["crash"]
        h = len(words) // 2
        return run_safe(objdump, mcpu, mach, words[:h], crashed) + run_safe(objdump, mcpu, mach, words[h:], crashed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--objdump", default="llvm-objdump-22")
    ap.add_argument("--out", default=str(ROOT / "tests/fixtures/isa/opcodes_llvm.json.gz"))
    args = ap.parse_args()
    P.SHARED = Path(args.shared)
    sys.path.insert(0, str(P.SHARED / "tools/isa_oracle"))
    import enumerate_opcodes as eo
    from dump import MACH_TO_GPU

    index = json.loads((P.TABLES / "index.json").read_text())
    rows = []
    for mcpu in sorted({v[:-5] for v in index.values()}):
        rng = random.Random(mcpu)
        gen, formats = eo.generation(mcpu)
        mach = next(k for k, v in MACH_TO_GPU.items() if v == mcpu)
        table = json.loads((P.TABLES / f"{mcpu}.json").read_text())
        sig = json.loads(gzip.decompress((P.TABLES / f"{mcpu}.sig.json.gz").read_bytes()))
        fmt = {f[0]: f for f in formats}
        words = []
        for enc, e in table["encodings"].items():
            if enc not in fmt:
                continue
            _, base, _, _, extra = fmt[enc]
            for op in e["ops"]:
                if enc in ("VOPD_X", "VOPD_Y"):
                    continue
                zero = sig["ops"].get(enc, {}).get(op, [[], ""])[0]
                tmpl = [base | int(op) << e["op_lsb"], *list(extra)]
                for variant in (0, 1):
                    w = list(tmpl)
                    fixed = {(b, w) for b, w, _ in zero}
                    for name, bit, width, _ in P.fields_for(gen, enc):
                        if (bit, width) in fixed:
                            continue
                        w = P.set_field(w, bit, width, rng.choice(VALUES.get(name, [1])))
                    if variant:
                        for bit, width in MODS.get(enc, []):
                            w = P.set_field(w, bit, width, rng.getrandbits(width))
                    w.append(rng.getrandbits(32))  # a literal / next-dword candidate
                    words.append(w)
                # (c) DPP16 / DPP8 / SDWA forms of VOP1/VOP2/VOPC (and VOP3 DPP on gfx11+)
                markers = [250, 249] if gen == "gfx9" else [250, 233]
                if enc in ("VOP1", "VOP2", "VOPC") or (enc == "VOP3" and gen != "gfx9"):
                    for marker in markers:
                        w = list(tmpl)
                        for name, bit, width, _ in P.fields_for(gen, enc):
                            if name not in ("src0",) and (bit, width) not in {(b, wd) for b, wd, _ in zero}:
                                w = P.set_field(w, bit, width, rng.choice(VALUES.get(name, [1])))
                        w = P.set_field(w, 32 if enc == "VOP3" else 0, 9, marker)
                        ctrl = rng.choice(
                            [
                                0x1B,
                                0xE4,
                                0x101,
                                0x111,
                                0x11F,
                                0x121,
                                0x130,
                                0x138,
                                0x140,
                                0x141,
                                0x142,
                                0x143,
                                0x150,
                                0x15F,
                                0x161,
                            ]
                        )
                        dpp = (
                            rng.choice([1, 5, 20])
                            | ctrl << 8
                            | rng.getrandbits(8) << 18
                            | 0xF << 24
                            | rng.choice([0xF, 0xA]) << 28
                        )
                        if marker == 249:
                            dpp = rng.getrandbits(32) & 0x3F3F3FFF | rng.choice([1, 5, 20])
                        if marker == 233:
                            dpp = rng.getrandbits(32) & 0xFFFFFF00 | rng.choice([1, 5, 20])
                        words.append([*w, dpp])
        if "VOPD_X" in table["encodings"]:
            xs, ys = table["encodings"]["VOPD_X"]["ops"], table["encodings"]["VOPD_Y"]["ops"]
            for x in xs:
                for y in ys:
                    w0 = (
                        0xC8000000
                        | (int(x) << 22)
                        | (int(y) << 17)
                        | rng.choice([P.V + 1, 3, 255, 129])
                        | (rng.choice([2, 5]) << 9)
                    )
                    w1 = (
                        (rng.choice([4, 10]) << 24) | (rng.choice([3, 7]) << 17) | rng.choice([P.V + 6, 130]) | (9 << 9)
                    )
                    words.append([w0, w1, rng.getrandbits(32)])
        crashed = []
        res = run_safe(args.objdump, mcpu, mach, words, crashed)
        for w, hit in zip(words, res):
            if hit is not None and hit != "crash":
                rows.append([mcpu, " ".join(f"{x:08x}" for x in w), hit[1], hit[0]])
        print(
            mcpu,
            len(words),
            "words;",
            len(crashed),
            "crash llvm-objdump:",
            " ".join(f"{c[0]:08x}" for c in crashed),
            file=sys.stderr,
        )
    with gzip.open(args.out, "wt") as f:
        json.dump(rows, f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
