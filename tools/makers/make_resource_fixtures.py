#!/usr/bin/env python3
"""Record what LLVM says about every kernel's resources in the shared captures' code objects.

For each distinct code object (by SHA-256) under ../shared/captures it stores
  * `notes`: the per-kernel scalars of `llvm-readelf --notes` (the NT_AMDGPU_METADATA map as YAML), and
  * `descriptors`: the `.amdhsa_*` directives `llvm-objdump -d -j .rodata` prints for each `<name>.kd`,
into tests/fixtures/resources_llvm.json. tests/test_resources.py compares attdec's reading with it, and
re-runs these same LLVM commands when they are installed. tinygrad's minimal containers have neither a
note nor symbols LLVM could name a descriptor by: they are listed with empty maps.

Needs Debian's llvm-22 (llvm-readelf-22, llvm-objdump-22); `--llvm-suffix ''` uses unversioned tools.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fixtures/resources_llvm.json"
# kernel-level scalars of the metadata note that attdec reads
NOTE_KEYS = (
    ".name",
    ".symbol",
    ".vgpr_count",
    ".agpr_count",
    ".sgpr_count",
    ".group_segment_fixed_size",
    ".private_segment_fixed_size",
    ".kernarg_segment_size",
    ".wavefront_size",
    ".max_flat_workgroup_size",
    ".uses_dynamic_stack",
    ".sgpr_spill_count",
    ".vgpr_spill_count",
)
KD_KEYS = (
    "group_segment_fixed_size",
    "private_segment_fixed_size",
    "kernarg_size",
    "next_free_vgpr",
    "next_free_sgpr",
    "accum_offset",
    "wavefront_size32",
    "uses_dynamic_stack",
    "workgroup_processor_mode",
)


def tools(suffix: str) -> tuple[str, str] | None:
    """(llvm-readelf, llvm-objdump) with this suffix, or None when either is missing."""
    names = (f"llvm-readelf{suffix}", f"llvm-objdump{suffix}")
    return names if all(shutil.which(n) for n in names) else None


def _scalar(text: str):
    text = text.strip().strip("'\"")
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text, 0)
    except ValueError:
        return text


def parse_notes(out: str) -> dict[str, dict]:
    """Kernel name -> its note scalars, from `llvm-readelf --notes` YAML (list items at '  - ')."""
    kernels, cur, in_kernels = {}, None, False
    for line in out.splitlines():
        if line.startswith("amdhsa.kernels:"):
            in_kernels = True
            continue
        if in_kernels and line and not line.startswith(" "):
            in_kernels = False
        if not in_kernels:
            continue
        m = re.match(r"^  (- |  )(\.[\w]+):\s*(.*)$", line)
        if not m:
            continue
        if m.group(1) == "- ":
            cur = {}
            kernels[len(kernels)] = cur
        if cur is not None and m.group(2) in NOTE_KEYS and m.group(3).strip():
            cur[m.group(2)] = _scalar(m.group(3))
    return {k[".name"]: k for k in kernels.values() if ".name" in k}


def parse_descriptors(out: str) -> dict[str, dict]:
    """Kernel name -> its `.amdhsa_*` directives, from llvm-objdump's disassembly of `.kd` symbols."""
    kds, cur = {}, None
    for line in out.splitlines():
        line = line.strip()
        m = re.match(r"^; error decoding (\S+)\.kd: (.*)$", line)
        if m:  # e.g. ROCm clang 19/20 set the gfx9-only SGPR block count on gfx10+, which LLVM 22 rejects
            kds[m.group(1)] = {"error": m.group(2)}
        elif line.startswith(".amdhsa_kernel "):
            cur = kds[line.split(None, 1)[1]] = {}
        elif line.startswith(".end_amdhsa_kernel"):
            cur = None
        elif cur is not None and line.startswith(".amdhsa_"):
            key, _, value = line[len(".amdhsa_") :].partition(" ")
            if key in KD_KEYS:
                cur[key] = _scalar(value)
    return kds


def llvm_facts(path: Path, readelf: str, objdump: str) -> dict:
    """What LLVM reports for one code object: {"notes": {...}, "descriptors": {...}}."""
    if path.read_bytes()[:4] != b"\x7fELF" or path.read_bytes()[18:20] != b"\xe0\x00":
        return {"notes": {}, "descriptors": {}}  # tinygrad minimal container: LLVM cannot read it as is
    run = lambda *a: subprocess.run(a, capture_output=True, text=True, check=True).stdout
    return {
        "notes": parse_notes(run(readelf, "--notes", str(path))),
        "descriptors": parse_descriptors(run(objdump, "-d", "-j", ".rodata", str(path))),
    }


def code_objects(captures: Path) -> dict[str, list[Path]]:
    """SHA-256 -> the capture code objects with that content."""
    out: dict[str, list[Path]] = {}
    for p in sorted(captures.glob("*/*/*.co")):
        out.setdefault(hashlib.sha256(p.read_bytes()).hexdigest(), []).append(p)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captures", type=Path, default=ROOT.parent / "shared" / "captures")
    ap.add_argument("--llvm-suffix", default="-22")
    args = ap.parse_args()
    have = tools(args.llvm_suffix)
    if have is None:
        print(f"needs llvm-readelf{args.llvm_suffix} and llvm-objdump{args.llvm_suffix}", file=sys.stderr)
        return 1
    version = subprocess.run([have[0], "--version"], capture_output=True, text=True).stdout
    version = next((ln.strip() for ln in version.splitlines() if "version" in ln.lower()), "")
    objects = {}
    for sha, paths in code_objects(args.captures).items():
        facts = llvm_facts(paths[0], *have)
        objects[sha] = {"paths": [str(p.relative_to(args.captures)) for p in paths], **facts}
    OUT.write_text(json.dumps({"llvm": version, "objects": objects}, indent=1, sort_keys=True) + "\n")
    kernels = sum(len(o["notes"]) for o in objects.values())
    print(f"{OUT}: {len(objects)} code objects, {kernels} kernels with notes ({version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
