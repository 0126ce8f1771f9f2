"""Raw SQTT decoders: bytes of one shader engine's stream in, waves and occupancy records out.

`decode_blob` detects the stream format from its first 8 bytes (sqtt-format.md §1.2), checks it against
the architecture the user named, and hands the blob to the package `FAMILIES` names for the format:
`rdna` for gfx10/gfx11/gfx12, `gfx9` for CDNA (each imported when first needed). `compat.Rules` holds the
rules that differ between versions of AMD's decoder (`compat`, docs/compat.md); the default reproduces 0.1.6.
"""

from __future__ import annotations

import gc
import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from attdec.decoders.compat import COMPAT, Rules, rules_for
from attdec.errors import ArchError, FormatError
from attdec.model.records import MAX_SE

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from attdec.decoders.common import BlobResult, CodeMap
    from attdec.model.records import Wave
    from attdec.model.target import StreamFormat, Target

__all__ = [
    "COMPAT",
    "FAMILIES",
    "BlobResult",
    "CodeMap",
    "Rules",
    "decode_blob",
    "detect_format",
    "family",
    "stream_generation",
]

# The package that reads each stream format (`detect_format`'s answer, `Target.stream`), by name. Every package
# has the same parts: `decode` and `windowed.decode_windowed` for the formats it decodes (`StreamFormat.decoded`),
# `tokens.list_tokens` and `tokens.register_writes` for all of its formats, and its PC walkers in `stitch`.
FAMILIES = {"gfx9": "gfx9", "gfx10": "rdna", "gfx11": "rdna", "gfx12": "rdna"}


def __getattr__(name: str):
    # numpy-backed parts load on first use: commands that only name a decoder version (--compat) stay light
    if name in ("BlobResult", "CodeMap"):
        from attdec.decoders import common

        return getattr(common, name)
    raise AttributeError(name)


def detect_format(data: bytes) -> StreamFormat | None:
    """Stream format from the first 8 bytes (gfx9, gfx10, gfx11, gfx12, gfx12.5), or None."""
    from attdec.decoders.gfx9.packets import is_gfx9_header
    from attdec.decoders.rdna.packets import GFX11, HEADER_VERSION, HEADER_VERSIONS
    from attdec.model.target import STREAM_FORMATS

    if len(data) < 8:
        return None
    h = int.from_bytes(data[:8], "little")
    if is_gfx9_header(h):
        return STREAM_FORMATS["gfx9"]
    if h & 0x1FFF and GFX11["HEADER"].matches(h & 0xFF):  # an RDNA stream starts with its HEADER token
        name = HEADER_VERSIONS.get(HEADER_VERSION.get(h))
        return STREAM_FORMATS[name] if name else None
    return None


def family(fmt: StreamFormat, part: str = "") -> ModuleType:
    """The package that reads stream format `fmt` (its name a key of FAMILIES), or its module `part`."""
    module = _FAMILY_MODULES.get((fmt.name, part))
    if module is None:  # (import_module looks the name up again on every call: once per decoded blob)
        package = f"attdec.decoders.{FAMILIES[fmt.name]}"
        module = _FAMILY_MODULES[fmt.name, part] = importlib.import_module(f"{package}.{part}" if part else package)
    return module


_FAMILY_MODULES: dict[tuple[str, str], ModuleType] = {}


def stream_generation(data: bytes) -> int | None:
    """The gfx generation a blob's header says it is (9, 10, 11, 12), or None if it does not say."""
    fmt = detect_format(data)
    return fmt.generation if fmt else None


def decode_blob(
    data: bytes,
    arch: str | Target,
    code: CodeMap | None,
    se: int,
    where: str = "",
    compat: str | Rules | None = None,
    *,
    target_cu: int | None = None,
    fold: Callable[[Wave], Any] | None = None,
    window: int | None = None,
    progress: Callable[[int], None] | None = None,
    occupancy: bool = True,
    vectorised: bool = True,
) -> BlobResult:
    """Decode one SE blob as the decoder version `compat` does (a `COMPAT` name or `Rules`; default 0.1.6).
    Raises ArchError/FormatError for input that cannot be this architecture's. Options: `target_cu` (gfx9);
    `fold` (a callable taking each stitched Wave and returning what to keep of it) with `window` (bytes, None:
    windowed.WINDOW): a blob bigger than the window is decoded a window at a time, its waves folded, and
    `progress` (a callable) is told the bytes decoded so far after each window but the last; such a blob
    keeps no occupancy records with `occupancy=False` (`waves` reads none, and a gfx9 blob has a row per wave of
    every CU). `vectorised=False` runs a whole blob through the scalar timing model only (the reference the
    numpy model is checked against). An option not named here is a TypeError."""
    from attdec.model.target import stream_names, target

    rules = rules_for(compat)
    tgt = target(arch, where or None)
    if not 0 <= se <= MAX_SE:  # from a file name or a container: it must fit the records' se column
        raise FormatError(f"shader engine {se} is out of range (0..{MAX_SE})", where or None)
    if not data:
        raise FormatError("empty SQTT blob", where or None)
    got = detect_format(data)
    if got is None:
        raise FormatError(
            "not an SQTT stream (no gfx9 header or RDNA HEADER token in the first 8 bytes)",
            f"{where}@0" if where else "byte 0",
        )
    tgt.check_stream(got, where or None)
    if not got.decoded:
        raise ArchError(f"{got} streams are not supported (attdec decodes {stream_names(decoded=True)})", where or None)
    more = {"target_cu": target_cu} if got.generation == 9 else {}
    # A decode makes many small objects and no reference cycles: with the cyclic collector on, it rescans
    # them (and a caller's heap of earlier results) over and over (benchmarks/RESULTS.md, 2026-12-07).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if fold is not None:
            windowed = family(got, "windowed")
            size = windowed.window_size(len(data), window)
            if size is not None:
                return windowed.decode_windowed(
                    data, tgt, code, se, where, rules, fold, size, progress, occupancy=occupancy, **more
                )
        return family(got).decode(data, tgt, code, se, where=where, rules=rules, vectorised=vectorised, **more)
    finally:
        if was_enabled:
            gc.enable()
