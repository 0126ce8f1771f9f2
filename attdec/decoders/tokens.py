"""Every token of a blob with its named fields and time, laid out by the packet tables: what
`attdec decode --tokens` prints, the first thing to look at in a capture that decodes strangely.

The tokens are the ones the decoders see, split by the same code (so a listing never disagrees with a
decode): RDNA in stream order with the stream's own time (the decoders then move gfx10/11 WAVE_READY one
cycle back), gfx9 after its software header, TIMESTAMP and TIME_RESET without a time (the decoders never
deliver them; a TIME_RESET re-anchors the time of the tokens after it). Where sync is lost, a run of
unassigned ids is one UNKNOWN row.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from attdec.decoders import detect_format
from attdec.decoders.packets import Packet
from attdec.errors import ArchError, FormatError
from attdec.model.target import StreamFormat, stream_names


@dataclass
class TokenRow:
    """One token (or one run of unassigned ids, `name` UNKNOWN)."""

    nibble: int  # offset from the start of the blob, in nibbles (RDNA tokens are nibble-aligned)
    name: str
    fields: dict[str, int]
    time: int | None  # the decoders' time for it; None for gfx9 TIMESTAMP / TIME_RESET
    packet: Packet | None = None  # its layout (field names, value names, hex); None for UNKNOWN


@dataclass
class TokenListing:
    """The token stream of one blob. `tokens` is a generator: rows are made as they are printed."""

    format: StreamFormat
    nbytes: int
    tokens: Iterator[TokenRow]
    problems: list[str] = field(default_factory=list)


# Register offsets the decoders know (sqtt-format.md §4): compute-state writes (RDNA REG with cs set, gfx9
# REG_CS / REG_CS_PRIV) address the COMPUTE_* block; other writes carry a full register address.
COMPUTE_REGISTERS = {
    0x00: "COMPUTE_DISPATCH_INITIATOR",
    0x07: "COMPUTE_NUM_THREAD_X",
    0x08: "COMPUTE_NUM_THREAD_Y",
    0x09: "COMPUTE_NUM_THREAD_Z",
    0x0C: "COMPUTE_PGM_LO",
    0x0D: "COMPUTE_PGM_HI",
    0x0E: "COMPUTE_DISPATCH_PKT_ADDR_LO",
    0x0F: "COMPUTE_DISPATCH_PKT_ADDR_HI",
    0x12: "COMPUTE_PGM_RSRC1",
    0x13: "COMPUTE_PGM_RSRC2",
    0x2D: "COMPUTE_PGM_RSRC3",
}
OTHER_REGISTERS = {0xC340 + k: f"SQ_THREAD_TRACE_USERDATA_{k}" for k in range(4)}


def register_name(row: TokenRow) -> str | None:
    """The name of the register a register-write token writes, where the decoders know it."""
    if row.name in ("REG_CS", "REG_CS_PRIV") or (row.name == "REG" and row.fields.get("cs")):
        return COMPUTE_REGISTERS.get(row.fields["addr"])
    if row.name == "REG":
        return OTHER_REGISTERS.get(row.fields["addr"])
    return None


def issue_slots(row: TokenRow) -> dict[int, str]:
    """gfx9 ISSUE: what it says of each wave slot it names (slot -> IssueStatus name)."""
    from attdec.decoders.gfx9.packets import ISSUE_STATUS_BITS, SLOTS, IssueStatus

    status, mask = row.fields["status"], (1 << ISSUE_STATUS_BITS) - 1
    out = {}
    for slot in range(SLOTS):
        v = (status >> (ISSUE_STATUS_BITS * slot)) & mask
        if v:
            out[slot] = IssueStatus(v).name
    return out


def list_tokens(data: bytes, where: str = "") -> TokenListing:
    """The tokens of one SE blob; its format comes from its first 8 bytes."""
    fmt = detect_format(data)
    if fmt is None:
        raise FormatError(
            "not an SQTT stream (no gfx9 header or RDNA HEADER token in the first 8 bytes)",
            f"{where}@0" if where else "byte 0",
        )
    if not fmt.listed:
        raise ArchError(f"{fmt} streams are not supported (attdec reads {stream_names()})", where or None)
    return _gfx9(data, fmt) if fmt.generation == 9 else _rdna(data, fmt)


def _value(data: bytes, nibble: int, bits: int) -> int:
    """The token of `bits` bits starting at `nibble`, as an int (zeros past the end)."""
    b = nibble >> 1
    raw = int.from_bytes(data[b : b + (bits + 11) // 8], "little") >> (4 * (nibble & 1))
    return raw & ((1 << bits) - 1)


def _rdna(data: bytes, stream: StreamFormat) -> TokenListing:
    from attdec.decoders.rdna.packets import FORMATS, TOKEN_NAMES
    from attdec.decoders.rdna.splitter import split

    fmt = FORMATS[stream.generation]
    tk = split(data, fmt, keep=None)

    def rows() -> Iterator[TokenRow]:
        unknown = TOKEN_NAMES.index("UNKNOWN")
        pos, types, times, words = tk.pos.tolist(), tk.type.tolist(), tk.time.tolist(), tk.word.tolist()
        at = fmt.table.at
        i, n = 0, len(pos)
        while i < n:
            if types[i] == unknown:  # a run of unassigned ids: one row
                j = i
                while j + 1 < n and types[j + 1] == unknown:
                    j += 1
                yield TokenRow(pos[i], "UNKNOWN", {"ids": j - i + 1}, times[i])
                i = j + 1
                continue
            p = at(_value(data, pos[i], 8))
            assert p is not None
            # the decoders' 64-bit word holds the whole token unless it is longer or read from further in
            value = words[i] & ((1 << p.bits) - 1) if p.bits <= 64 and not p.window else _value(data, pos[i], p.bits)
            yield TokenRow(pos[i], p.name, p.decode(value), times[i], p)
            i += 1

    return TokenListing(stream, len(data), rows(), list(tk.problems))


def _gfx9(data: bytes, stream: StreamFormat) -> TokenListing:
    from attdec.decoders.gfx9.packets import GFX9, HEADER, HEADER_BYTES
    from attdec.decoders.gfx9.splitter import (
        ALL_SELECTION,
        official_timestamps,
        split_tokens,
        token_times,
        token_values,
    )

    words = np.frombuffer(data, "<u2", count=(len(data) - HEADER_BYTES) // 2, offset=HEADER_BYTES)
    starts, types, truncated = split_tokens(words)
    values = token_values(words, starts, types)
    ts_field = GFX9["TIMESTAMP"]["timestamp"]
    problems = []
    if truncated is not None:
        problems.append(f"truncated token at byte offset {HEADER_BYTES + 2 * truncated}: listed what comes before")

    def ts_of(at: np.ndarray) -> np.ndarray:  # word positions
        return official_timestamps(ts_field.column(values[np.searchsorted(starts, at)]))

    mask = np.zeros(len(words), bool)
    mask[starts] = True
    at, t_sel = token_times(words, mask, ts_of, truncated is not None, ALL_SELECTION)
    sel = np.searchsorted(starts, at)
    time = np.full(len(starts), -1, np.int64)
    time[sel] = t_sel
    delivered = np.zeros(len(starts), bool)
    delivered[sel] = True

    def rows() -> Iterator[TokenRow]:
        yield TokenRow(0, "HEADER", HEADER.decode(int.from_bytes(data[:HEADER_BYTES], "little")), None, HEADER)
        for s, ty, v, t, d in zip(starts.tolist(), types.tolist(), values.tolist(), time.tolist(), delivered.tolist()):
            p = GFX9.at(ty)
            assert p is not None
            yield TokenRow(2 * (HEADER_BYTES + 2 * s), p.name, p.decode(v), t if d else None, p)

    return TokenListing(stream, len(data), rows(), problems)
