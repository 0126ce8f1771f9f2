"""Unpacked capture folders (../shared/captures layout): blobs + code objects + capture.json -> RawDispatches.

capture.json names each dispatch's blob files and SEs and each kernel's code object and load base
(see captures/README.md); this is the "explicit blobs + code objects" input in folder form.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from attdec.errors import FormatError, checked_int, read_bytes, read_json
from attdec.model.target import target
from attdec.sources.kind import Tracker, blob_weight

if TYPE_CHECKING:
    from attdec.sources.raw import RawDispatch


def _get(obj, key: str, path: str, where: str, kind: type | tuple[type, ...] | None = None):
    """`obj[key]`, `obj` an object at JSON path `path`; a FormatError naming the file and the path when either
    is not there, or the value is not of `kind`."""
    if not isinstance(obj, dict):
        raise FormatError(f"{path or 'the top level'} is not an object", where)
    at = f"{path}.{key}" if path else key
    if key not in obj:
        raise FormatError(f"{at} is missing", where)
    v = obj[key]
    if kind is not None and (not isinstance(v, kind) or isinstance(v, bool)):
        want = "a list" if kind is list else "an integer" if kind is int else "a string" if kind is str else "valid"
        raise FormatError(f"{at} is {type(v).__name__} {str(v)[:40]!r}, expected {want}", where)
    return v


def _by(items: list, key: str, path: str, where: str) -> dict[str, tuple[str, dict]]:
    """The entries of the list at `path` by their `key` (a name): (their JSON path, the entry)."""
    return {_get(x, key, f"{path}[{i}]", where, str): (f"{path}[{i}]", x) for i, x in enumerate(items)}


def _tag(obj: dict, path: str, where: str):
    """An entry's exec_tag: absent, an integer or a name."""
    tag = obj.get("exec_tag")
    if tag is not None and (isinstance(tag, bool) or not isinstance(tag, (int, str))):
        raise FormatError(f"{path}.exec_tag is {type(tag).__name__}, expected an integer", where)
    return tag


def _file(folder: Path, name: str, path: str, where: str) -> str:
    """The path of a file capture.json names at JSON path `path`."""
    if "\0" in name:
        raise FormatError(f"{path} {name[:60]!r} is not a file name (a NUL character)", where)
    return str(folder / name)


def load(folder: Path, tracker: Tracker | None = None) -> list[RawDispatch]:
    """The dispatches a capture folder's capture.json lists; anything it lacks or holds of the wrong type is
    a FormatError naming the file and the JSON path."""
    from attdec.sources.pmc import PendingPmc
    from attdec.sources.raw import MAPPED_BLOB, RawBlob, RawCodeObject, RawDispatch

    folder = Path(folder)
    cj = folder / "capture.json"
    where = str(cj)
    cap = read_json(cj)
    kernels = _by(_get(cap, "kernels", "", where, list), "name", "kernels", where)
    blobs = _by(_get(cap, "blobs", "", where, list), "file", "blobs", where)
    pmc = {}
    if cap.get("pmc") is not None:
        for i, p in enumerate(_get(cap, "pmc", "", where, list)):
            pmc[(_get(p, "kernel", f"pmc[{i}]", where, str), _tag(p, f"pmc[{i}]", where))] = (f"pmc[{i}]", p)
    arch = _get(cap, "gfx_arch", "", where, str)
    tgt = target(arch, where) if arch else None
    out = []
    for i, d in enumerate(_get(cap, "dispatches", "", where, list)):
        at = f"dispatches[{i}]"
        name = _get(d, "kernel", at, where, str)
        if name not in kernels:
            raise FormatError(f"{at}.kernel {name[:60]!r} is not among kernels[].name", where)
        kat, k = kernels[name]
        co_path = _file(folder, _get(k, "code_object", kat, where, str), f"{kat}.code_object", where)
        base = checked_int(_get(k, "base", kat, where), f"{kat}.base", where, 0, (1 << 64) - 1)
        tag = _tag(d, at, where)
        code = read_bytes(co_path)
        raw = RawDispatch(
            name=f"{name}#{tag}" if tag is not None else name,
            target=tgt,
            code_objects=[RawCodeObject(code, base, co_path, 1)],
            kernel=name,
            path=str(folder),
        )
        raw.damage += [f"{co_path}: {what}" for what in differences(k, code, "code_object_")]
        for j, f in enumerate(_get(d, "blobs", at, where, list)):
            if not isinstance(f, str) or f not in blobs:
                raise FormatError(f"{at}.blobs[{j}] {str(f)[:60]!r} is not among blobs[].file", where)
            (bat, b), path = blobs[f], _file(folder, f, f"{at}.blobs[{j}]", where)
            se = checked_int(_get(b, "se", bat, where), f"{bat}.se", where)
            data = read_bytes(path, MAPPED_BLOB)
            raw.blobs.append(RawBlob(se, data, path, b.get("itrace")))
            raw.damage += [f"{path}: {what}" for what in differences(b, data)]
        if (name, tag) in pmc:
            pat, p = pmc[(name, tag)]
            path = _file(folder, _get(p, "file", pat, where, str), f"{pat}.file", where)
            raw.counters.append(PendingPmc(read_bytes(path), _get(p, "sched", pat, where), path))
        out.append(raw)
    return out


HASH_STEP = 16 << 20  # a mapped blob is hashed this many bytes at a time, each step's pages given back


def differences(entry: dict, data, prefix: str = "") -> list[str]:
    """How a file differs from the size and sha256 capture.json recorded for it when it was captured
    (`prefix` + "size", + "sha256"): a cut or damaged copy decodes into other figures, with nothing in the
    stream to tell."""
    size = entry.get(prefix + "size")
    if isinstance(size, int) and not isinstance(size, bool) and size != len(data):
        return [f"{len(data):,} bytes, capture.json records {size:,}: the file was cut or changed since capture"]
    recorded = entry.get(prefix + "sha256")
    if not isinstance(recorded, str):
        return []
    import hashlib
    import mmap

    h = hashlib.sha256()
    view = memoryview(data)
    for at in range(0, len(data), HASH_STEP):
        h.update(view[at : at + HASH_STEP])
        if isinstance(data, mmap.mmap):  # read once: resident pages of a big blob are not kept
            data.madvise(mmap.MADV_DONTNEED, at, min(HASH_STEP, len(data) - at))
    view.release()
    if h.hexdigest() != recorded.lower():
        return ["sha256 differs from the one capture.json records: the file was damaged or changed since capture"]
    return []


# ---- the input kind (attdec.sources.KINDS) -----------------------------------------------------


def detect(path: Path) -> bool:
    return path.is_dir() and (path / "capture.json").is_file()


def weight(path: Path) -> int:
    with os.scandir(path) as entries:  # not Path.glob: a Path per file costs more than its stat
        return sum(blob_weight(e.stat().st_size) for e in entries if e.name.endswith(".att"))
