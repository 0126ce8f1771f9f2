"""Unpacked capture folders (../shared/captures layout): blobs + code objects + capture.json -> RawDispatches.

capture.json names each dispatch's blob files and SEs and each kernel's code object and load base
(see captures/README.md); this is the "explicit blobs + code objects" input in folder form.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from attdec.errors import FormatError, read_bytes, read_json
from attdec.sources.kind import Tracker, blob_weight

if TYPE_CHECKING:
    from attdec.sources.raw import RawDispatch


def _name(v, what: str, where: Path) -> str:
    if not isinstance(v, str):
        raise FormatError(f"{what} is {type(v).__name__}, expected a name", str(where))
    return v


def load(folder: Path, tracker: Tracker | None = None) -> list[RawDispatch]:
    from attdec.sources.pmc import PendingPmc
    from attdec.sources.raw import MAPPED_BLOB, RawBlob, RawCodeObject, RawDispatch

    folder = Path(folder)
    cj = folder / "capture.json"
    cap = read_json(cj)
    try:
        kernels = {k["name"]: k for k in cap["kernels"]}
        blobs = {b["file"]: b for b in cap["blobs"]}
        pmc = {(p["kernel"], p.get("exec_tag")): p for p in cap.get("pmc") or []}
        out = []
        for d in cap["dispatches"]:
            k = kernels[d["kernel"]]
            co_path = folder / k["code_object"]
            tag = d.get("exec_tag")
            code = read_bytes(co_path)
            raw = RawDispatch(
                name=f"{d['kernel']}#{tag}" if tag is not None else d["kernel"],
                arch=_name(cap["gfx_arch"], "gfx_arch", cj),
                code_objects=[RawCodeObject(code, int(k["base"]), str(co_path), 1)],
                kernel=d["kernel"],
                path=str(folder),
            )
            raw.damage += [f"{co_path}: {what}" for what in differences(k, code, "code_object_")]
            for f in d["blobs"]:
                b, path = blobs[f], str(folder / f)
                data = read_bytes(path, MAPPED_BLOB)
                raw.blobs.append(RawBlob(int(b["se"]), data, path, b.get("itrace")))
                raw.damage += [f"{path}: {what}" for what in differences(b, data)]
            p = pmc.get((d["kernel"], tag))
            if p is not None:
                path = str(folder / p["file"])
                raw.counters.append(PendingPmc(read_bytes(path), p["sched"], path))
            out.append(raw)
        return out
    except (KeyError, TypeError, ValueError) as e:
        raise FormatError(f"not a capture.json this reader knows ({type(e).__name__}: {e})", str(cj)) from None


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
