"""Raw SQTT decoders: bytes of one shader engine's stream in, waves and occupancy records out.

`decode_blob` detects the stream format from its first 8 bytes (sqtt-format.md §1.2), checks it against
the architecture the user named, and hands the blob to the family decoder: `rdna` for gfx11/gfx12,
`gfx9` for CDNA (imported lazily, it lives on its own branch until it lands).
"""
from __future__ import annotations

import struct

from attdec.decoders.common import BlobResult, CodeMap
from attdec.errors import ArchError, FormatError

__all__ = ["BlobResult", "CodeMap", "decode_blob", "detect_format", "family_of_arch"]

RDNA_VERSIONS = {1: "gfx10", 2: "gfx10", 3: "gfx11", 4: "gfx12", 5: "gfx12.5"}


def family_of_arch(arch: str) -> str | None:
    """'gfx9', 'gfx11', 'gfx12' (the decoder family) for an architecture name, or None."""
    a = (arch or "").lower()
    if a.startswith("gfx9"):
        return "gfx9"
    if a.startswith("gfx11"):
        return "gfx11"
    if a.startswith("gfx12"):
        return "gfx12"
    if a.startswith("gfx10"):
        return "gfx10"
    return None


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


def decode_blob(data: bytes, arch: str, code: CodeMap | None, se: int, where: str = "", **opts) -> BlobResult:
    """Decode one SE blob. Raises ArchError/FormatError for input that cannot be this architecture's."""
    fam = family_of_arch(arch)
    if fam is None:
        raise ArchError(f"unknown architecture {arch!r} (expected gfx9xx, gfx11xx or gfx12xx)", where or None)
    if not data:
        raise FormatError("empty SQTT blob", where or None)
    got = detect_format(data)
    if got is None:
        raise FormatError("not an SQTT stream (no gfx9 header or RDNA HEADER token in the first 8 bytes)",
                          f"{where}@0" if where else "byte 0")
    if got != fam:
        raise ArchError(f"the trace is {got}, not {arch} (--arch)", where or None)
    if fam == "gfx9":
        try:
            from attdec.decoders import gfx9  # noqa: PLC0415 - lands from its own branch
        except ImportError:
            raise ArchError("the gfx9 (CDNA) decoder is not part of this build", where or None) from None
        return gfx9.decode(data, arch, code, se, target_cu=opts.get("target_cu"), where=where)
    if fam in ("gfx11", "gfx12"):
        from attdec.decoders import rdna
        return rdna.decode(data, arch, code, se, where=where)
    raise ArchError(f"{fam} streams are not supported", where or None)
