#!/usr/bin/env python3
"""Store LLVM 22's listing of every unique capture code object as a test fixture.

Runs ../shared/tools/isa_oracle/dump.py (llvm-objdump) on each distinct `.co` under
../shared/captures, target from the capture's `gfx_arch`, and writes
tests/fixtures/isa/captures_llvm.json.gz: one entry per code object with its sha256,
arch, a shared-relative path and the instructions as [address, size, text, target].
The tests compare attdec's disassembler with this listing without needing LLVM. With --fixtures, the same
for the committed fixture code objects (tests/fixtures/isa/fixtures_llvm.json.gz, paths from the repository root).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The committed code objects (our own kernels, built by tools/makers/make_dwarf_fixtures.py) and their targets:
# with --fixtures, their listings let the tests run where ../shared is absent.
FIXTURE_OBJECTS = [
    ("tests/fixtures/isa/dwarf4_gfx942.co", "gfx942"),
    ("tests/fixtures/isa/dwarf5_gfx1100.co", "gfx1100"),
]


def listing(dump: Path, co: Path, arch: str) -> list:
    """LLVM's listing of one code object: [address, size, text, target] per instruction."""
    data = co.read_bytes()
    with tempfile.NamedTemporaryFile(suffix=".co") as tmp:
        if data[:4] != b"\x7fELF":  # tinygrad minimal container with zeroed e_ident
            data = b"\x7fELF\x02\x01\x01" + data[7:]
        tmp.write(data)
        tmp.flush()
        out = subprocess.run(
            [sys.executable, str(dump), "--json", "--mcpu", arch, tmp.name],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    rows = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    return [[r["offset"], r["size"], r["text"], r["target"]] for r in rows]


def entry(dump: Path, co: Path, arch: str, relative_to: Path) -> dict:
    rows = listing(dump, co, arch)
    print(f"{co.relative_to(relative_to)} {arch}: {len(rows)} instructions", file=sys.stderr)
    return {
        "path": str(co.relative_to(relative_to)),
        "sha256": hashlib.sha256(co.read_bytes()).hexdigest(),
        "arch": arch,
        "llvm": "llvm-objdump-22",
        "instructions": rows,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--out", default=str(ROOT / "tests/fixtures/isa/captures_llvm.json.gz"))
    ap.add_argument(
        "--fixtures",
        action="store_true",
        help="list the committed fixture code objects instead (tests/fixtures/isa/fixtures_llvm.json.gz)",
    )
    args = ap.parse_args()
    shared = Path(args.shared)
    dump = shared / "tools/isa_oracle/dump.py"
    entries = []
    if args.fixtures:
        for co, arch in FIXTURE_OBJECTS:
            entries.append(entry(dump, ROOT / co, arch, ROOT))
        out = ROOT / "tests/fixtures/isa/fixtures_llvm.json.gz"
    else:
        seen = set()
        for cap in sorted((shared / "captures").glob("*/*/capture.json")):
            arch = json.loads(cap.read_text())["gfx_arch"]
            for co in sorted(cap.parent.glob("*.co")):
                sha = hashlib.sha256(co.read_bytes()).hexdigest()
                if sha not in seen:
                    seen.add(sha)
                    entries.append(entry(dump, co, arch, shared))
        out = Path(args.out)
    with gzip.open(out, "wt") as f:
        json.dump(entries, f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
