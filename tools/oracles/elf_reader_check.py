"""Check attdec.isa.elf against pyelftools: every AMDGPU ELF code object found in a folder tree (files,
ELFs embedded in .rgp / pickles / archives) read by `load_code_object` and by the pyelftools-based reader
of an earlier revision, and the two CodeObjects compared field by field.

    python3 tools/oracles/elf_reader_check.py [ROOT=../shared] [--rev 9967ac9]

The earlier reader comes from `git show REV:attdec/isa/codeobj.py` (the last one that used pyelftools).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import lzma
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, HERE)

from attdec.errors import AttdecError  # noqa: E402
from attdec.isa.codeobj import load_code_object  # noqa: E402
from attdec.model.record import Record  # noqa: E402


def plain(obj):
    """A code object as plain data, fields compared by value: the reference reader's are dataclasses,
    attdec's are Records."""
    if dataclasses.is_dataclass(obj) or isinstance(obj, Record):
        names = obj.fields() if isinstance(obj, Record) else [f.name for f in dataclasses.fields(obj)]
        return {n: plain(getattr(obj, n)) for n in names}
    if isinstance(obj, (list, tuple)):
        return type(obj)(plain(v) for v in obj)
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    return obj


def reference_reader(rev: str):
    src = subprocess.run(
        ["git", "show", f"{rev}:attdec/isa/codeobj.py"], cwd=HERE, check=True, capture_output=True, text=True
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("codeobj_pyelftools", f.name)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    os.unlink(f.name)
    assert "elftools" in src, f"{rev}'s reader does not use pyelftools"
    return mod.load_code_object


def blobs(root: str):
    """(where, bytes) of every file under root, archive members included."""
    for d, _, files in os.walk(root):
        for name in sorted(files):
            path = os.path.join(d, name)
            if name.endswith((".tar.xz", ".tar.gz", ".tar")):
                with tarfile.open(path) as t:
                    for m in t.getmembers():
                        if m.isfile():
                            yield f"{path}:{m.name}", t.extractfile(m).read()
                continue
            with open(path, "rb") as f:
                data = f.read()
            yield path, lzma.decompress(data) if name.endswith(".xz") else data


def elves(data: bytes):
    """Offsets of AMDGPU ELF64 LE headers in data."""
    at = data.find(b"\x7fELF\x02\x01")
    while at >= 0:
        if data[at + 18 : at + 20] == b"\xe0\x00":
            yield at
        at = data.find(b"\x7fELF\x02\x01", at + 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default=os.path.join(HERE, "..", "shared"))
    ap.add_argument("--rev", default="9967ac9")
    a = ap.parse_args()
    old = reference_reader(a.rev)
    seen, same, differ, errors = set(), 0, [], 0
    for where, data in blobs(a.root):
        for at in elves(data):
            co_bytes = data[at:]
            key = hash(co_bytes)
            if key in seen:
                continue
            seen.add(key)
            label = f"{where}@{at:#x}"
            try:
                want = old(co_bytes, label)
            except AttdecError as e:
                want = f"error: {e}"
            try:
                got = load_code_object(co_bytes, label)
            except AttdecError as e:
                got = f"error: {e}"
            if isinstance(want, str) and isinstance(got, str):
                errors += 1
            elif isinstance(want, str) or isinstance(got, str):
                differ.append((label, want, got))
            elif plain(want) == plain(got):
                same += 1
            else:
                fields = [k for k, v in plain(want).items() if plain(got)[k] != v]
                differ.append((label, fields, ""))
    for label, want, got in differ:
        print(f"DIFFERENT {label}: {want} {got}")
    print(f"{same + len(differ) + errors} distinct code objects: {same} identical, {len(differ)} different, ", end="")
    print(f"{errors} errors in both readers")
    return 1 if differ or not same else 0


if __name__ == "__main__":
    sys.exit(main())
