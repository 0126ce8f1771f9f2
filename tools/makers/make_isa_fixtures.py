#!/usr/bin/env python3
"""Store LLVM 22's listing of every unique capture code object as a test fixture.

Runs ../shared/tools/isa_oracle/dump.py (llvm-objdump) on each distinct `.co` under
../shared/captures, target from the capture's `gfx_arch`, and writes
tests/fixtures/isa/captures_llvm.json.gz: one entry per code object with its sha256,
arch, a shared-relative path and the instructions as [address, size, text, target].
The tests compare attdec's disassembler with this listing without needing LLVM.
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--out", default=str(ROOT / "tests/fixtures/isa/captures_llvm.json.gz"))
    args = ap.parse_args()
    shared = Path(args.shared)
    dump = shared / "tools/isa_oracle/dump.py"
    seen, entries = set(), []
    for cap in sorted((shared / "captures").glob("*/*/capture.json")):
        arch = json.loads(cap.read_text())["gfx_arch"]
        for co in sorted(cap.parent.glob("*.co")):
            sha = hashlib.sha256(co.read_bytes()).hexdigest()
            if sha in seen:
                continue
            seen.add(sha)
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
            entries.append(
                {
                    "path": str(co.relative_to(shared)),
                    "sha256": sha,
                    "arch": arch,
                    "llvm": "llvm-objdump-22",
                    "instructions": [[r["offset"], r["size"], r["text"], r["target"]] for r in rows],
                }
            )
            print(f"{co.relative_to(shared)} {arch}: {len(rows)} instructions", file=sys.stderr)
    with gzip.open(args.out, "wt") as f:
        json.dump(entries, f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
