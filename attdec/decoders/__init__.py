"""Raw SQTT decoders: bytes of one shader engine's stream in, waves and occupancy records out.

`decode_blob` detects the stream format from its first 8 bytes (sqtt-format.md §1.2), checks it against
the architecture the user named, and hands the blob to the family decoder: `rdna` for gfx11/gfx12,
`gfx9` for CDNA (each imported when first needed).
"""

from __future__ import annotations

import struct

from attdec.decoders.common import BlobResult, CodeMap
from attdec.errors import ArchError, FormatError
from attdec.model.target import Target, target

__all__ = ["BlobResult", "CodeMap", "decode_blob", "detect_format", "stream_generation"]

# HEADER token version field -> stream format (sqtt-format.md §1.2)
RDNA_VERSIONS = {1: "gfx10", 2: "gfx10", 3: "gfx11", 4: "gfx12", 5: "gfx12.5"}


def detect_format(data: bytes) -> str | None:
    """Stream family from the first 8 bytes: 'gfx9', 'gfx10', 'gfx11', 'gfx12', 'gfx12.5', or None."""
    if len(data) < 8:
        return None
    h = struct.unpack_from("<Q", data)[0]
    legacy, v2 = h & 0x1FFF, (h >> 13) & 7
    if legacy in (0, 0x11) and 4 <= v2 <= 6:
        return "gfx9"
    if legacy != 0 and (h & 0x7F) == 0x11:
        return RDNA_VERSIONS.get((h >> 7) & 0x3F)
    return None


def stream_generation(data: bytes) -> int | None:
    """The gfx generation a blob's header says it is (9, 10, 11, 12), or None if it does not say."""
    fmt = detect_format(data)
    return int(fmt[3:].split(".")[0]) if fmt else None


def decode_blob(data: bytes, arch: str | Target, code: CodeMap | None, se: int, where: str = "", **opts) -> BlobResult:
    """Decode one SE blob. Raises ArchError/FormatError for input that cannot be this architecture's."""
    tgt = target(arch, where or None)
    if not data:
        raise FormatError("empty SQTT blob", where or None)
    got = detect_format(data)
    if got is None:
        raise FormatError(
            "not an SQTT stream (no gfx9 header or RDNA HEADER token in the first 8 bytes)",
            f"{where}@0" if where else "byte 0",
        )
    if got != tgt.stream:
        raise ArchError(f"the trace is {got}, not {tgt.display} (--arch)", where or None)
    if got == "gfx9":
        from attdec.decoders import gfx9

        return gfx9.decode(data, tgt.name, code, se, target_cu=opts.get("target_cu"), where=where)
    if got in ("gfx11", "gfx12"):
        from attdec.decoders import rdna

        return rdna.decode(data, tgt.name, code, se, where=where)
    raise ArchError(f"{got} streams are not supported (attdec decodes gfx9, gfx11 and gfx12)", where or None)
