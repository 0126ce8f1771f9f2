"""How an .rgp file starts: what `detect` needs, apart from the layouts so that recognising a file is cheap."""

from __future__ import annotations

SQTT_MAGIC = 0x50303042  # the SQTT file format's FileHeader.magic (Mesa ac_rgp.c)
RDF_IDENTIFIERS = (b"AMD_RDF ", b"RTA_DATA")  # RTA_DATA: the legacy identifier libamdrdf still accepts


def sniff(head: bytes) -> str | None:
    """'sqtt' or 'rdf' from a file's first 8 bytes, else None."""
    if len(head) >= 4 and int.from_bytes(head[:4], "little") == SQTT_MAGIC:
        return "sqtt"
    if head[:8] in RDF_IDENTIFIERS:
        return "rdf"
    return None
