"""Explicit SQTT blobs + `FILE@LOADBASE` code objects named on the command line -> one RawDispatch.

This is the input of `attdec decode --code k.co@0x7f... k_se0.att k_se1.att` (and of every command with
`--code`): each blob's shader engine comes from `se<N>` / `shader_engine_<N>` in its file name, else
from its position; the GPU from `--arch` or, at decode time, from the first code object.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from attdec.errors import InputError, read_bytes
from attdec.model.target import Target, target
from attdec.sources.raw import MAPPED_BLOB, RawBlob, RawCodeObject, RawDispatch

SE_RE = re.compile(r"(?:shader_engine_|se)(\d+)(?!.*(?:shader_engine_|se)\d)")


def se_of(path: str) -> int | None:
    """The shader engine a blob's file name names (`..._se3.att`, `..._shader_engine_3_...`), or None."""
    m = SE_RE.search(os.path.basename(path))
    return int(m.group(1)) if m else None


def parse_code_spec(spec: str) -> tuple[str, int]:
    """'k.co@0x7f0000001000' -> ('k.co', 0x7f0000001000)."""
    path, sep, base = spec.rpartition("@")
    if not sep or not path:
        raise InputError(f"--code wants FILE@LOADBASE, got {spec!r}")
    try:
        return path, int(base, 0)
    except ValueError:
        raise InputError(f"--code: load base {base!r} is not a number (e.g. 0x200001006000)") from None


def load(blobs, code, tgt: Target | None = None, se: int | None = None, need_code: bool = True) -> RawDispatch:
    """One dispatch of the given blobs and code objects. `se` names the shader engine of blobs whose file
    names do not say it. Without code objects (`need_code=False`: decode only) records get no PCs."""
    if need_code and not code:
        raise InputError("explicit blobs need at least one --code FILE@LOADBASE")
    if not code and tgt is None:
        raise InputError("without --code, pass --arch (the trace's GPU)")
    if not blobs:
        raise InputError("no SQTT blob given")
    cos = _code_objects(code)
    raws = []
    for i, b in enumerate(blobs):
        n = se if se is not None else se_of(str(b))
        raws.append(RawBlob(i if n is None else n, read_bytes(Path(b), MAPPED_BLOB), str(b)))
    if len({b.se for b in raws}) != len(raws):
        raise InputError(
            "two blobs for the same shader engine; name them ..._se<N>.att", ", ".join(str(b) for b in blobs)
        )
    name = Path(blobs[0]).name if len(blobs) == 1 else "explicit"
    raws.sort(key=lambda b: b.se)
    return RawDispatch(name=name, target=tgt, code_objects=cos, blobs=raws, path=str(Path(blobs[0]).parent))


def codemap(code, arch: str | None = None):
    """The absolute-PC map (attdec.decoders.CodeMap) of `FILE@LOADBASE` code objects, as a decode uses it;
    `arch` (a name, as a capture's files give it) when the code objects do not say."""
    from attdec.sources.raw import load_code

    return load_code(RawDispatch("code", target(arch) if arch else None, _code_objects(code))).codemap


def _code_objects(code) -> list[RawCodeObject]:
    out = []
    for i, spec in enumerate(code):
        path, base = parse_code_spec(spec)
        out.append(RawCodeObject(read_bytes(Path(path)), base, path, i + 1))
    return out
