"""The raw input kinds (undecoded SQTT + code objects): how each is recognised and loaded.

Each kind is a (detect, load) pair over the list of paths the user gave; `load_raw` picks the first
kind that recognises them, or the one named by `--input-format`. The general input resolver
(attdec.sources) registers these next to the ui_output reader.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from attdec.errors import InputError
from attdec.sources import capture, rocprof_raw, tinygrad
from attdec.sources.raw import RawDispatch


def _tinygrad_detect(paths: list[Path]) -> bool:
    return len(paths) == 1 and tinygrad.is_profile(paths[0])


RAW_KINDS: dict[str, tuple[Callable[[list[Path]], bool], Callable[[list[Path]], list[RawDispatch]]]] = {
    "tinygrad": (_tinygrad_detect, lambda paths: tinygrad.load(paths[0])),
    "rocprof-raw": (rocprof_raw.detect, rocprof_raw.load),
    "capture": (capture.detect, capture.load),
}


def detect_raw(paths: list[Path]) -> str | None:
    for name, (detect, _) in RAW_KINDS.items():
        if detect(paths):
            return name
    return None


def load_raw(paths: list[str | Path], fmt: str | None = None) -> list[RawDispatch]:
    """RawDispatches of the given inputs, of kind `fmt` or of the kind they are recognised as."""
    paths = [Path(p) for p in paths]
    for p in paths:
        if not p.exists():
            raise InputError("no such file or folder", str(p))
    kind = fmt or detect_raw(paths)
    if kind is None:
        raise InputError("not a raw capture attdec knows (tinygrad profile.pkl, rocprofv3 raw output with "
                         "*_shader_engine_*.att files, or a capture folder with capture.json)",
                         ", ".join(map(str, paths)))
    if kind not in RAW_KINDS:
        raise InputError(f"unknown input format {kind!r} (known: {', '.join(RAW_KINDS)})")
    return RAW_KINDS[kind][1](paths)
