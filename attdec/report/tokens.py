"""Token listings (`attdec decode --tokens`) as aligned text or JSON, written to the stream given.

Text: one line a token, `offset  time  TYPE  field=value ...`. The offset is in bytes from the start of
the blob; RDNA tokens are nibble-aligned, so one that starts in the high half of a byte reads `12.5`.
The `delta` fields are left out (the time column is their running sum); one-bit flags are shown by name
when set and left out when clear; opcodes, subtypes and known registers are shown by name, addresses and
register data in hex, NEW_PC / INST_PC's dword PC as its byte address `pc`, and a gfx9 ISSUE as the
status of each wave slot it names (`slot3=STALL`).
JSON: the same, every field by its table name (numbers), plus `<field>_name` for named values.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TextIO

from attdec.decoders.tokens import TokenListing, TokenRow, issue_slots, register_name
from attdec.report.base import Reporters, Writer
from attdec.report.common import printable


def _offset(nibble: int) -> str:
    return f"{nibble >> 1}.5" if nibble & 1 else str(nibble >> 1)


def _fields_text(row: TokenRow) -> str:
    if row.packet is None:  # a run of unassigned ids
        return f"{row.values['ids']} unassigned token ids: lost sync here, each read as an 8-bit token"
    out = []
    fields = row.packet.fields
    reg = register_name(row)
    for name, v in row.values.items():
        if name == "delta":
            continue
        f = fields[name]
        if f.flag:
            if v:
                out.append(name)
        elif name == "status" and row.name == "ISSUE":  # gfx9: 2 bits per wave slot
            out.extend(f"slot{k}={st}" for k, st in issue_slots(row).items())
        elif name == "addr" and reg:
            out.append(f"addr={reg}")
        elif name == "pc_dw":
            out.append(f"pc={v << 2:#x}")
        elif f.names is not None:
            out.append(f"{name}={f.names.get(v, v)}")
        elif f.hex:
            out.append(f"{name}=0x{v:0{(f.width + 3) // 4}x}")
        else:
            out.append(f"{name}={v}")
    return " ".join(out)


def write_text(listings: Iterable[tuple[str, TokenListing]], out: TextIO) -> None:
    """Each blob's tokens under a heading line; its problems after them."""
    w = out.write
    for path, lst in listings:
        w(f"# {printable(path)}: {lst.format} stream, {lst.nbytes:,} bytes\n")
        w(f"{'offset':>10} {'time':>14}  {'token':<18} fields\n")
        n = 0
        for row in lst.tokens:
            time = "-" if row.time is None else str(row.time)
            w(f"{_offset(row.nibble):>10} {time:>14}  {row.name:<18} {_fields_text(row)}\n")
            n += 1
        w(f"# {n:,} tokens\n")
        for p in lst.problems:
            w(f"# problem: {p}\n")


def _token_json(row: TokenRow) -> dict:
    d: dict = {"byte": row.nibble >> 1}
    if row.nibble & 1:
        d["nibble"] = 1
    d["type"], d["time"] = row.name, row.time
    fields: dict = {}
    for name, v in row.values.items():
        fields[name] = v
        f = row.packet.fields[name] if row.packet is not None else None
        if f is not None and f.names is not None and v in f.names:
            fields[f"{name}_name"] = f.names[v]
        if name == "pc_dw":
            fields["pc"] = v << 2
    reg = register_name(row)
    if reg:
        fields["addr_name"] = reg
    if row.name == "ISSUE":
        fields["slots"] = issue_slots(row)
    d["fields"] = fields
    return d


def write_json(listings: Iterable[tuple[str, TokenListing]], out: TextIO) -> None:
    """{"blobs": [{"file", "format", "bytes", "tokens": [...], "problems": [...]}]}, a token a line."""
    w = out.write
    w('{"blobs": [')
    for k, (path, lst) in enumerate(listings):
        w(",\n" if k else "\n")
        w(f'{{"file": {json.dumps(path)}, "format": "{lst.format}", "bytes": {lst.nbytes}, "tokens": [')
        for j, row in enumerate(lst.tokens):
            w(",\n" if j else "\n")
            w(json.dumps(_token_json(row), separators=(", ", ": ")))
        w(f'],\n"problems": {json.dumps(lst.problems)}}}')
    w("]}\n")


def reporters() -> Reporters:
    """`attdec decode --tokens`' formats (the result: (path, TokenListing) per blob)."""
    return {"text": Writer(write_text), "json": Writer(write_json)}
