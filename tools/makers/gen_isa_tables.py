#!/usr/bin/env python3
"""Generate attdec/isa/tables/*.json from the LLVM-derived opcode tables in ../shared/isa/llvm-opcodes.

Per target we keep, for every encoding: the opcode field position and `op -> [mnemonic, size]`
(size = template byte length; a size above the encoding's base marks an always-literal opcode).
Targets with identical tables (gfx1100-1103, gfx1150/1151, gfx1200/1201) share one file;
`index.json` maps every target to its file. Facts only, no code.

    python3 tools/makers/gen_isa_tables.py [--src ../shared/isa/llvm-opcodes]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "attdec/isa/tables"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--src", default=str(ROOT.parent / "shared/isa/llvm-opcodes"))
    args = ap.parse_args()
    index, files = {}, {}
    for path in sorted(Path(args.src).glob("gfx*.json")):
        src = json.loads(path.read_text())
        encs = {}
        for name, enc in src["encodings"].items():
            encs[name] = {
                "op_lsb": enc["op_lsb"],
                "op_bits": enc["op_bits"],
                "ops": {int(k): v for k, v in sorted(enc["ops"].items(), key=lambda kv: int(kv[0]))},
            }
        table = {"generation": src["generation"], "llvm": src["llvm"], "encodings": encs}
        blob = json.dumps(table, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(blob.encode()).hexdigest()
        if digest not in files:
            files[digest] = src["mcpu"]
            (OUT / f"{src['mcpu']}.json").write_text(blob + "\n")
        index[src["mcpu"]] = files[digest] + ".json"
    (OUT / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    print(f"{len(index)} targets, {len(files)} distinct tables -> {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
