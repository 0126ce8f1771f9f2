#!/usr/bin/env python3
"""Ask LLVM (llc-22) what occupancy it computes for small kernels on every target attdec models.

Each case is a kernel that clobbers chosen VGPR/AGPR/SGPRs with inline assembly, stores into a static
LDS array of a chosen size and declares a fixed workgroup size; it is compiled for one target (wave32 or
wave64, CU or WGP mode) and what the compiler reports is kept: the metadata note's register counts,
LDS bytes, wave size, and the "; Occupancy: N" comment. tests/test_occupancy.py computes attdec's
theoretical occupancy from those same counts and must find N. Cases are drawn from a fixed-seed grid,
so re-running gives the same file. Writes tests/fixtures/occupancy_llvm.json; needs Debian's llvm-22.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from attdec.model.target import TARGETS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_resource_fixtures import parse_notes

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fixtures/occupancy_llvm.json"
LLC = "llc-22"
CASES_PER_TARGET = 36
VGPRS = (0, 23, 40, 63, 95, 127, 167, 200, 255)
AGPRS = (None, 31, 127)
SGPRS = (None, 40, 79, 85, 95)
WG_SIZES = (32, 64, 96, 256, 320, 640, 1024)
LDS_DWORDS = (0, 1024, 4096, 12288, 16384)

KERNEL = """\
{lds_decl}
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {{
  call void asm sideeffect "", "{clobbers}"()
{lds_use}  ret void
}}
attributes #0 = {{ "amdgpu-flat-work-group-size"="{wg},{wg}" }}
"""


def kernel_ir(vgpr: int, agpr: int | None, sgpr: int | None, wg: int, lds_dwords: int) -> str:
    clobbers = ",".join(
        f"~{{{r}}}" for r in (f"v{vgpr}", agpr is not None and f"a{agpr}", sgpr is not None and f"s{sgpr}") if r
    )
    lds_decl = lds_use = ""
    if lds_dwords:
        lds_decl = f"@lds = internal addrspace(3) global [{lds_dwords} x i32] poison, align 4"
        lds_use = (
            f"  %p = getelementptr [{lds_dwords} x i32], ptr addrspace(3) @lds, i32 0, i32 1\n"
            "  store volatile i32 1, ptr addrspace(3) %p\n"
        )
    return KERNEL.format(lds_decl=lds_decl, lds_use=lds_use, clobbers=clobbers, wg=wg)


def compile_case(cpu: str, mattr: str, ir: str, tmp: Path) -> dict | None:
    src = tmp / "k.ll"
    src.write_text(ir)
    cmd = [LLC, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", str(src), "-o", "-"]
    if mattr:
        cmd.insert(2, f"-mattr={mattr}")
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"; Occupancy: (\d+)", p.stdout)
    if p.returncode or not m:
        return None
    note = next(iter(parse_notes(p.stdout).values()), {})
    wgp = re.search(r"\.amdhsa_workgroup_processor_mode (\d)", p.stdout)
    return {
        "occupancy": int(m.group(1)),
        "vgpr": note.get(".vgpr_count"),
        "agpr": note.get(".agpr_count"),
        "sgpr": note.get(".sgpr_count"),
        "lds_bytes": note.get(".group_segment_fixed_size"),
        "wave_size": note.get(".wavefront_size"),
        "workgroup_size": note.get(".max_flat_workgroup_size"),
        "wgp_mode": bool(int(wgp.group(1))) if wgp else None,
    }


def main() -> int:
    version = subprocess.run([LLC, "--version"], capture_output=True, text=True)
    if version.returncode:
        print(f"needs {LLC} (Debian package llvm-22)", file=sys.stderr)
        return 1
    rng = random.Random(16)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, tgt in TARGETS.items():
            if tgt.cu is None or name in ("gfx940", "gfx941"):  # gone from LLVM 20+; they share gfx942's figures
                continue
            rdna = tgt.generation >= 10
            mai = tgt.cu.unified_agprs or name == "gfx908"
            grid = list(
                itertools.product(
                    VGPRS,
                    AGPRS if mai else (None,),
                    SGPRS,
                    WG_SIZES,
                    LDS_DWORDS,
                    ("", "+wavefrontsize64") if rdna else ("",),
                    ("", "+cumode") if rdna else ("",),
                )
            )
            for vgpr, agpr, sgpr, wg, lds, w64, cumode in rng.sample(grid, CASES_PER_TARGET):
                mattr = ",".join(a for a in (w64, cumode) if a)
                got = compile_case(name, mattr, kernel_ir(vgpr, agpr, sgpr, wg, lds), Path(tmp))
                if got is None:
                    print(f"{name} {mattr}: llc failed for v{vgpr} a{agpr} s{sgpr} wg{wg} lds{lds}", file=sys.stderr)
                    continue
                cases.append({"target": name, "mattr": mattr, **got})
    llvm = next((ln.strip() for ln in version.stdout.splitlines() if "version" in ln.lower()), "")
    rows = ",\n".join(json.dumps(c, sort_keys=True) for c in cases)  # one case per line
    OUT.write_text(f'{{"llvm": {json.dumps(llvm)},\n"cases": [\n{rows}\n]}}\n')
    print(f"{OUT}: {len(cases)} cases on {len({c['target'] for c in cases})} targets ({llvm})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
