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

from attdec.decoders import detect_format, family
from attdec.decoders.packets import Packet
from attdec.errors import ArchError, FormatError
from attdec.model.record import Record, field
from attdec.model.target import StreamFormat, stream_names


class TokenRow(Record):
    """One token (or one run of unassigned ids, `name` UNKNOWN)."""

    __slots__ = ("name", "nibble", "packet", "time", "values")
    nibble: int  # offset from the start of the blob, in nibbles (RDNA tokens are nibble-aligned)
    name: str
    values: dict[str, int]  # the token's fields by name (the packet's field names)
    time: int | None  # the decoders' time for it; None for gfx9 TIMESTAMP / TIME_RESET
    packet: Packet | None  # its layout (field names, value names, hex); None for UNKNOWN

    def __init__(self, nibble, name, values, time, packet=None):
        # made once per token of a listing: slots and plain stores, as attdec.isa.decoder.Instruction
        self.nibble = nibble
        self.name = name
        self.values = values
        self.time = time
        self.packet = packet


class TokenListing(Record):
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
    if row.name in ("REG_CS", "REG_CS_PRIV") or (row.name == "REG" and row.values.get("cs")):
        return COMPUTE_REGISTERS.get(row.values["addr"])
    if row.name == "REG":
        return OTHER_REGISTERS.get(row.values["addr"])
    return None


def issue_slots(row: TokenRow) -> dict[int, str]:
    """gfx9 ISSUE: what it says of each wave slot it names (slot -> IssueStatus name)."""
    from attdec.decoders.gfx9.packets import ISSUE_STATUS_BITS, SLOTS, IssueStatus

    status, mask = row.values["status"], (1 << ISSUE_STATUS_BITS) - 1
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
    return family(fmt, "tokens").list_tokens(data, fmt)
