#!/usr/bin/env python3
"""Build small `-g` AMDGPU code objects with Debian's LLVM 22 and record what llvm-symbolizer says.

Writes tests/fixtures/isa/dwarf5_gfx1100.co (DWARF 5) and dwarf4_gfx942.co (DWARF 4), compiled from
the OpenCL kernel below (two always-inline helpers, so the line table has inlined frames), and
dwarf_expected.json: for every instruction address, the inline chain as rocprofv3 writes it: the instruction's own
"file:line" first, then each call site outward (llvm-symbolizer-22 --inlining order). Needs clang-22, ld.lld-22,
llvm-objdump-22 and llvm-symbolizer-22; tests only read the results.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fixtures/isa"
SOURCE = """\
static inline __attribute__((always_inline)) float scale(float x, float s) {
  return x * s + 1.0f;
}
static inline __attribute__((always_inline)) float twice(float x) {
  return scale(x, 2.0f);
}
__kernel void kern(__global float *out, __global const float *in, int n) {
  int i = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 64;
  if (i < n)
    out[i] = twice(in[i]);
}
"""
BUILDS = [("dwarf5_gfx1100.co", "gfx1100", "-gdwarf-5"), ("dwarf4_gfx942.co", "gfx942", "-gdwarf-4")]


def chain(co: Path, addrs):
    out = subprocess.run(
        ["llvm-symbolizer-22", f"--obj={co}", "--inlining"] + [hex(a) for a in addrs],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result = {}
    for addr, block in zip(addrs, out.strip().split("\n\n")):
        locs = [ln for ln in block.splitlines() if re.search(r":\d+:\d+$", ln)]
        frames = [ln.rsplit(":", 1)[0] for ln in locs if not ln.startswith("??")]
        # rocprofv3's convention: own location first ("path:?" for line 0), then the call sites outward
        frames = [f[:-2] + ":?" if f.endswith(":0") and i == 0 else f for i, f in enumerate(frames)]
        result[hex(addr)] = " -> ".join(f for f in frames if not f.endswith(":0"))
    return result


def main() -> int:
    expected = {}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "k.cl").write_text(SOURCE)
        for name, mcpu, dwarf in BUILDS:
            subprocess.run(
                [
                    "clang-22",
                    "-target",
                    "amdgcn-amd-amdhsa",
                    f"-mcpu={mcpu}",
                    "-x",
                    "cl",
                    "-cl-std=CL2.0",
                    "-O2",
                    dwarf,
                    "-nogpulib",
                    f"-fdebug-prefix-map={tmp}=.",
                    "-c",
                    "k.cl",
                    "-o",
                    "k.o",
                ],
                cwd=tmp,
                check=True,
            )
            subprocess.run(["ld.lld-22", "-shared", "k.o", "-o", name], cwd=tmp, check=True)
            co = Path(tmp) / name
            listing = subprocess.run(
                ["llvm-objdump-22", "-d", f"--mcpu={mcpu}", str(co)], capture_output=True, text=True, check=True
            ).stdout
            addrs = [int(m.group(1), 16) for m in re.finditer(r"// ([0-9A-F]{12}):", listing)]
            expected[name] = {"arch": mcpu, "sources": chain(co, addrs)}
            (OUT / name).write_bytes(co.read_bytes())
            print(name, len(addrs), "instructions", file=sys.stderr)
    (OUT / "dwarf_expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
