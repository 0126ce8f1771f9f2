"""Dev-only: a CodeMap from a capture's `*.llvm.s` listing (what the official decoder was fed).

Used by tools/oracles/oracle_check.py --listing to check the PC walk independently of attdec.isa. The shipped
decoder never reads listings.
"""

import re
from types import SimpleNamespace

from attdec.decoders.common import CodeMap

LINE = re.compile(r"^\s+(\S.*?)\s*//\s+([0-9A-Fa-f]+):\s+([0-9A-Fa-f ]+?)(?:\s+<.*>)?$")


def codemap_from_listing(path: str, base: int) -> CodeMap:
    ins = []
    for ln in open(path):
        m = LINE.match(ln)
        if not m:
            continue
        text, addr, words = m.group(1).strip(), int(m.group(2), 16), m.group(3).split()
        ins.append(
            SimpleNamespace(address=addr, size=4 * len(words), text=text, mnemonic=text.split(" ")[0], target=None)
        )
    cm = CodeMap()
    cm.add(ins, base)
    return cm


def merged(paths_bases):
    cm = CodeMap()
    for p, b in paths_bases:
        cm._by_pc.update(codemap_from_listing(p, b)._by_pc)
    return cm


def codemap_from_oracle(oracle_disp: dict, fallback: CodeMap | None = None) -> CodeMap:
    """The exact (pc, text, memory size) answers the official decoder got, over a listing fallback."""
    cm = CodeMap()
    if fallback is not None:
        cm._by_pc.update(fallback._by_pc)
    for pc, _off, text, size in oracle_disp["isa"]["answered"]:
        cm._by_pc[pc] = SimpleNamespace(
            address=pc, size=size if size else 4, text=text, mnemonic=text.split(" ")[0], target=None
        )
    return cm
