"""An instruction listing (`attdec disasm`) as llvm-objdump prints it, or as JSON."""

from __future__ import annotations

import json

from attdec.report.base import Reporters, Writer
from attdec.report.common import console


def print_text(listing, out) -> None:
    """`listing`: (code object, instructions, labels {address: name})."""
    co, insts, labels = listing
    con = console(out)
    last_src = None
    for i in insts:
        if i.address in labels:
            con.print()
            con.print_spans([(labels[i.address], "bold"), (":", None)])
        src = co.source_of(i.address)
        if src and src != last_src:
            con.print_spans([("  ", None), (f"; {src}", "dim")])
        last_src = src or last_src
        words = " ".join(f"{w:08X}" for w in i.words)
        spans = [("  ", None), (f"{i.address:8x}:", "dim"), (f" {words:<26} ", None)]
        spans.append((i.text, "red" if i.mnemonic == ".long" else None))
        if i.target in labels:
            spans += [("  ", None), (f"<{labels[i.target]}>", "cyan")]
        con.print_spans(spans)


def print_json(listing, out) -> None:
    """{"instructions": [{"address", "size", "text"}, ...]}."""
    _co, insts, _labels = listing
    json.dump({"instructions": [{"address": i.address, "size": i.size, "text": i.text} for i in insts]}, out)
    out.write("\n")


def reporters() -> Reporters:
    """`attdec disasm`'s formats (the result: (code object, instructions, labels))."""
    return {"text": Writer(print_text), "json": Writer(print_json)}
