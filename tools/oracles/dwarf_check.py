"""Check attdec.isa.dwarf against its pyelftools version: every code object under the roots (.co files, ELFs
embedded in .rgp / pickles / archives, found as tools/oracles/elf_reader_check.py finds them), LineIndex.source_of
of every 4-byte-aligned .text address by both; with --mutate, also N copies of each code object that has
DWARF with 1-4 bytes of its .debug_* sections changed (the reader must give the same answer or decline);
with --bench, LineIndex.build of all of them (but those the reader declines) timed in fresh processes, both
versions alternating.

    python3 tools/oracles/dwarf_check.py [ROOT ...] [--rev 5657283] [--mutate 200] [--bench 9]

The pyelftools version comes from `git show REV:attdec/isa/dwarf.py` (the last one that read DWARF only
with pyelftools). Default roots: ../shared, tests/fixtures/isa, attdec/data/demo_raw.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pickle
import py_compile
import random
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "tools", "oracles"))

from elf_reader_check import blobs, elves  # noqa: E402

from attdec.errors import AttdecError  # noqa: E402
from attdec.isa import dwarf  # noqa: E402
from attdec.isa.codeobj import load_code_object  # noqa: E402
from attdec.isa.dwarf_tables import Unsupported, read_tables  # noqa: E402
from attdec.isa.elf import Elf  # noqa: E402


def reference_module(rev: str, path: str):
    """attdec/isa/dwarf.py of `rev`, imported from a file of its own; `path` is where that file goes."""
    src = subprocess.run(
        ["git", "show", f"{rev}:attdec/isa/dwarf.py"], cwd=HERE, check=True, capture_output=True, text=True
    ).stdout
    assert "elftools" in src and "dwarf_tables" not in src, f"{rev}'s attdec/isa/dwarf.py is not the pyelftools one"
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("dwarf_pyelftools", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def code_objects(roots):
    """(where, ELF bytes, [.text addresses]) of every distinct code object under the roots."""
    seen = set()
    for root in roots:
        for where, data in blobs(root):
            starts = [(where, 0)] if where.endswith(".co") else []
            starts += [(f"{where}@{at:#x}", at) for at in elves(data) if at or not starts]
            for label, at in starts:
                co_bytes = data[at:]
                if hash(co_bytes) in seen:
                    continue
                seen.add(hash(co_bytes))
                try:
                    co = load_code_object(co_bytes, label)
                except AttdecError:
                    continue
                yield label, co._elf_bytes, range(co.text_vaddr, co.text_end, 4)


def debug_ranges(data: bytes) -> list[tuple[int, int]]:
    """File (start, end) of the .debug_* sections."""
    try:
        elf = Elf(data, "")
    except AttdecError:
        return []
    return [(s.offset, s.offset + s.size) for s in elf.sections if s.name.startswith(".debug_") and s.size]


def mutants(data: bytes, n: int, rng: random.Random):
    spans = debug_ranges(data)
    cells = [i for lo, hi in spans for i in range(lo, min(hi, len(data)))]
    for _ in range(n if cells else 0):
        b = bytearray(data)
        for at in rng.sample(cells, rng.randint(1, 4)):
            b[at] = rng.choice([0, 0xFF, b[at] ^ (1 << rng.randrange(8)), rng.randrange(256)])
        yield bytes(b)


def declined(data: bytes) -> bool:
    try:
        read_tables(data)
    except Unsupported:
        return True
    return False


def compare(old, data: bytes, addresses) -> list[str]:
    a, b = old.LineIndex.build(data), dwarf.LineIndex.build(data)
    return [f"{x:#x}: {a.source_of(x)!r} != {b.source_of(x)!r}" for x in addresses if a.source_of(x) != b.source_of(x)]


BENCH = """
import pickle, sys, time
t0 = time.process_time()
sys.path.insert(0, {path!r})
from {module} import LineIndex
for data in pickle.load(open({blobs!r}, "rb")):
    LineIndex.build(data)
print(time.process_time() - t0)
"""


def bench(items, old_path: str, runs: int) -> None:
    """CPU seconds of one fresh process importing LineIndex and building every code object's index."""
    py_compile.compile(old_path)  # both versions imported from .pyc files
    with tempfile.TemporaryDirectory() as tmp:
        blobs_file = os.path.join(tmp, "blobs.pickle")
        with open(blobs_file, "wb") as f:
            pickle.dump([data for _, data, _ in items], f)
        cmds = {
            "pyelftools": BENCH.format(path=os.path.dirname(old_path), module="dwarf_pyelftools", blobs=blobs_file),
            "struct": BENCH.format(path=HERE, module="attdec.isa.dwarf", blobs=blobs_file),
        }
        times: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(runs):
            for name, code in cmds.items():
                out = subprocess.run([sys.executable, "-c", code], cwd=tmp, check=True, capture_output=True, text=True)
                times[name].append(float(out.stdout))
        with open("/proc/loadavg") as f:
            load = f.read().split()[:3]
        for name, ts in times.items():
            print(f"LineIndex.build of {len(items)} code objects, {name}: median {statistics.median(ts) * 1000:.1f} ms")
            print(f"  CPU, {runs} fresh processes: " + " ".join(f"{t * 1000:.1f}" for t in ts))
        print(f"load average {' '.join(load)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="*")
    ap.add_argument("--rev", default="5657283")
    ap.add_argument("--mutate", type=int, default=0, help="changed copies of each code object with DWARF")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bench", type=int, default=0, help="fresh processes per version")
    a = ap.parse_args()
    roots = a.roots or [os.path.join(HERE, p) for p in ("../shared", "tests/fixtures/isa", "attdec/data/demo_raw")]
    with tempfile.TemporaryDirectory() as tmp:
        old_path = os.path.join(tmp, "dwarf_pyelftools.py")
        old = reference_module(a.rev, old_path)
        items = list(code_objects(roots))
        rng = random.Random(a.seed)
        bad = 0
        with_dwarf = addresses = mutated = mutants_declined = 0
        for label, data, text in items:
            addresses += len(text)
            if debug_ranges(data):
                with_dwarf += 1
            for diff in compare(old, data, text):
                bad += 1
                print(f"DIFFERENT {label} {diff}")
            for m in mutants(data, a.mutate, rng):
                mutated += 1
                mutants_declined += declined(m)
                diffs = compare(old, m, text)
                if diffs:
                    bad += 1
                    print(f"DIFFERENT mutant of {label}: {diffs[0]} ({len(diffs)} addresses)")
        print(f"{len(items)} distinct code objects ({with_dwarf} with .debug_* sections), {addresses} .text addresses")
        print(f"{mutated} mutants ({mutants_declined} read with pyelftools); {bad} with a different source_of")
        if a.bench:  # the code objects the reader reads itself: a declined one costs the pyelftools import
            read = [item for item in items if not declined(item[1])]
            print(f"timing the {len(read)} code objects the reader does not decline")
            bench(read, old_path, a.bench)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
