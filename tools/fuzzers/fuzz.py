#!/usr/bin/env python3
"""Long fuzz runs: every kind of input attdec reads, damaged, run through the command line in-process.

    python3 tools/fuzzers/fuzz.py --cases 100000 --jobs 2            # the long run (docs/reliability.md)
    python3 tools/fuzzers/fuzz.py --cases 3000 --kinds ui_output,elf # some kinds only
    python3 tools/fuzzers/fuzz.py --replay 1234 [--seed S]           # one case again: its command, output, traceback
    python3 tools/fuzzers/fuzz.py ... --save tests/fixtures/fuzz     # crashers kept as regression fixtures
    python3 tools/fuzzers/fuzz.py --faults all --cases 300           # faults from outside, a subprocess per case

A case is an input of one kind, built from a seed corpus (the project's own fixtures and demo data, plus
../shared's real data when it is there), damaged by a few random mutations (bit flips, 0xff runs, copied
and swapped ranges, cuts, hostile values in ELF/DWARF/JSON/pickle/container fields, odd file names),
written to a temporary folder and run with one attdec command in this process (so a case costs what the
command costs, not a Python start-up). Case N of a seed is always the same input, so `--replay N`
shows it again.

Outcomes. Fine: `ok` (exit 0, or 3 from decode: damage reported) and `refused` (exit 1, every stderr
line an `attdec: error:` / `attdec: warning:` line). Failures: `traceback` (any other exception, or an
exit status or stderr that is neither), `hang` (longer than --timeout; a worker silent for much longer is
killed and restarted), `memory` (a MemoryError, or the case's peak RSS above --rss-mb; workers also run
under an address-space limit), `warning` (a Python warning such as numpy's overflow reached stderr) and
`wrote` (a file written or deleted other than the output the command was given). `fuzzer`: a bug of
this tool (a case it could not build), counted apart.
Faults (`--faults CLASSES`, section "faults" below): instead of damaged input, what happens to a run from
outside: Ctrl-C and SIGTERM at a random point of its CPU time, a file-size limit (a full disk), -o naming a
fifo, a symlink, a read-only file or the command's own stdout, -o naming one of its inputs, another process
changing the output or the input while it runs, a pickle referencing one blob thousands of times through its
memo, and profiles whose worker results hold tinygrad's own classes (--jobs 2). Each case is a fresh
`python -m attdec` in its own session, in a temporary folder; besides the judgement above, `stopped` (130,
143) is fine, and a temporary file left, a worker outliving its command and an output or input not as the
fault class requires (`wrong`) are failures.
A crasher's files are saved with `--save DIR` when they are small and made from the project's own data
(not from ../shared); `tests/test_fuzz_fixtures.py` runs every saved case.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import pickle
import random
import re
import resource
import shutil
import signal
import struct
import sys
import tarfile
import tempfile
import time
import traceback
import types
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SHARED = Path(os.environ.get("ATTDEC_SHARED", ROOT.parent / "shared"))
KINDS = ("sqtt", "capture", "explicit", "rocprof_raw", "elf", "ui_output", "archive", "tinygrad", "rgp")

# ---------------------------------------------------------------------------------------------------------
# mutations
# ---------------------------------------------------------------------------------------------------------
INTERESTING = (0, 1, 2, 3, 4, 7, 8, 0x10, 0x3F, 0x40, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
               0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32, 1 << 40, (1 << 63) - 1, 1 << 63, (1 << 64) - 1)  # fmt: skip


def interesting(rng: random.Random, bits: int = 64) -> int:
    """A value that breaks code: a boundary, a huge count, all ones; masked to `bits`."""
    v = rng.choice(INTERESTING) if rng.random() < 0.8 else rng.getrandbits(bits)
    return v & ((1 << bits) - 1)


def put(buf: bytearray, off: int, size: int, value: int) -> None:
    """Little-endian `value` (masked) at `off`, if it fits in the buffer."""
    if off >= 0 and off + size <= len(buf):
        buf[off : off + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def mutate_bytes(data: bytes, rng: random.Random, rounds: int | None = None) -> bytes:
    """1-4 byte-level damages: bit flips, hostile bytes and words, 0xff/zero/random runs, copied, swapped
    and deleted ranges, inserted garbage, a cut."""
    b = bytearray(data)
    for _ in range(rounds or rng.randint(1, 4)):
        n = len(b)
        op = rng.randrange(11)
        at = rng.randrange(n) if n else 0
        span = min(n - at, rng.choice((1, 2, 4, 8, 16, 64, 256, 4096))) if n else 0
        if op == 0 and n:  # bit flips
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(n)
                b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and n:
            b[at] = rng.choice((0, 0xFF, 0x7F, 0x80, 1))
        elif op == 2:  # a hostile little-endian integer at an aligned offset
            size = rng.choice((2, 4, 8))
            put(b, at - at % size, size, interesting(rng, 8 * size))
        elif op == 3:
            b[at : at + span] = b"\xff" * span
        elif op == 4:
            b[at : at + span] = bytes(span)
        elif op == 5:
            b[at : at + span] = rng.randbytes(span)
        elif op == 6 and n:  # copy a range over another
            src = rng.randrange(n)
            chunk = b[src : src + span]
            b[at : at + len(chunk)] = chunk
        elif op == 7 and n > 2:  # swap two ranges
            j = rng.randrange(n)
            k = min(span, n - j)
            x, y = bytes(b[at : at + k]), bytes(b[j : j + k])
            if len(x) == len(y):
                b[at : at + k], b[j : j + k] = y, x
        elif op == 8:
            del b[at : at + span]
        elif op == 9:
            b[at:at] = rng.randbytes(rng.choice((1, 3, 8, 64)))
        elif op == 10 and n:  # a cut
            del b[rng.randrange(n) :]
    return bytes(b)


# ---- ELF (code objects) ----------------------------------------------------------------------------------
SHT_SYMTAB, SHT_NOTE, SHT_DYNSYM = 2, 7, 11
EHDR_FIELDS = ((0x04, 1), (0x05, 1), (0x08, 1), (0x10, 2), (0x12, 2), (0x18, 8), (0x20, 8), (0x28, 8),
               (0x30, 4), (0x36, 2), (0x38, 2), (0x3A, 2), (0x3C, 2), (0x3E, 2))  # fmt: skip
SHDR_FIELDS = ((0, 4), (4, 4), (8, 8), (16, 8), (24, 8), (32, 8), (40, 4), (44, 4), (48, 8), (56, 8))
SYM_FIELDS = ((0, 4), (4, 1), (5, 1), (6, 2), (8, 8), (16, 8))
NOTE_FIELDS = ((0, 4), (4, 4), (8, 4))


def elf_sections(data: bytes) -> list[tuple[int, int, int, int, int]]:
    """(header offset, sh_name, sh_type, sh_offset, sh_size) of an ELF64's sections; [] if unreadable."""
    try:
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        if shentsize != 64 or shnum > 256 or shoff + 64 * shnum > len(data):
            return []
        out = []
        for i in range(shnum):
            h = shoff + 64 * i
            name, typ = struct.unpack_from("<II", data, h)
            off, size = struct.unpack_from("<QQ", data, h + 24)
            out.append((h, name, typ, off, size))
        return out
    except struct.error:
        return []


def mutate_elf(data: bytes, rng: random.Random) -> bytes:
    """Hostile values in the fields a reader trusts: ELF header, section headers, symbols, note headers;
    or damage inside a section's bytes (DWARF, metadata msgpack, .text)."""
    b = bytearray(data)
    secs = elf_sections(data)
    for _ in range(rng.randint(1, 3)):
        what = rng.randrange(6)
        if what == 0:
            off, size = rng.choice(EHDR_FIELDS)
            put(b, off, size, interesting(rng, 8 * size))
        elif what == 1 and secs:
            h = rng.choice(secs)[0]
            off, size = rng.choice(SHDR_FIELDS)
            v = interesting(rng, 8 * size)
            if off == 4 and rng.random() < 0.6:  # a section type among the meaningful ones
                v = rng.choice((0, 1, 2, 3, 4, 6, 7, 8, 11, 0x6FFFFFF6))
            put(b, h + off, size, v)
        elif what == 2 and secs:
            tabs = [s for s in secs if s[2] in (SHT_SYMTAB, SHT_DYNSYM) and s[4] >= 24]
            if tabs:
                _, _, _, off, size = rng.choice(tabs)
                ent = off + 24 * rng.randrange(size // 24)
                f_off, f_size = rng.choice(SYM_FIELDS)
                put(b, ent + f_off, f_size, interesting(rng, 8 * f_size))
        elif what == 3 and secs:
            notes = [s for s in secs if s[2] == SHT_NOTE and s[4] >= 12]
            if notes:
                _, _, _, off, _ = rng.choice(notes)
                f_off, f_size = rng.choice(NOTE_FIELDS)
                put(b, off + f_off, f_size, interesting(rng, 8 * f_size))
        elif what == 4 and secs:  # inside one section (DWARF, the note's msgpack, .text, strings)
            _, _, _, off, size = rng.choice(secs)
            if 0 < size < len(b) and off + size <= len(b):
                b[off : off + size] = mutate_bytes(bytes(b[off : off + size]), rng, 1).ljust(size, b"\0")[:size]
        else:
            b = bytearray(mutate_bytes(bytes(b), rng, 1))
    return bytes(b)


# ---- JSON ------------------------------------------------------------------------------------------------
def _hostile_value(rng: random.Random):
    return rng.choice(
        (
            10**30,
            -(10**30),
            1 << 63,
            1 << 64,
            -1,
            1099511627776,
            float("nan"),
            float("inf"),
            -float("inf"),
            1e308,
            0.5,
            "x",
            "",
            None,
            True,
            [],
            {},
            [1, 2],
            [[0] * 7],
            {"a": 1},
            "SE1099511627776",
        )
    )


def _nodes(doc, path=()):
    yield path, doc
    if len(path) >= 100:  # a document nested deeper (Python 3.12+ parses some 1,000s deep) has no more fields
        return
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:50]):  # a few rows are enough to reach every column
            yield from _nodes(v, (*path, i))


def _set(doc, path, value):
    if not path:
        return value
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = value
    return doc


def _dumps(doc, rng: random.Random) -> str:
    """JSON text; NaN/Infinity written as Python does, sometimes a duplicated key."""
    text = json.dumps(doc, separators=(",", ":"))
    if rng.random() < 0.15:  # a duplicate key: repeat the first member of the first object with a new value
        m = re.search(r'\{"([^"\\]{1,40})":', text)
        if m:
            dup = json.dumps(_hostile_value(rng))
            text = (
                text[: m.end(0) - len(m.group(0))] + f'{{"{m.group(1)}":{dup},' + text[m.end(0) - len(m.group(0)) + 1 :]
            )
    return text


def mutate_json(data: bytes, rng: random.Random) -> bytes:
    """Structure-aware JSON damage: hostile values (huge numbers, NaN/Infinity, wrong types) in place of
    real ones, deleted keys and rows, deep nesting, duplicate keys; or byte damage to the text."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return mutate_bytes(data, rng)
    r = rng.random()
    if r < 0.1:  # deep nesting somewhere: thousands of [[[[
        depth = rng.choice((100, 1000, 5000, 100_000))
        nodes = list(_nodes(doc))
        path, _ = rng.choice(nodes)
        text = _dumps(_set(doc, path, "@DEEP@"), rng)
        return text.replace('"@DEEP@"', "[" * depth + "]" * depth, 1).encode()
    if r < 0.15:
        return mutate_bytes(data, rng)
    if r < 0.2:  # a huge number literal
        text = data.decode("utf-8", "replace")
        nums = list(re.finditer(r"(?<![\w.])\d+(?![\w.])", text[:200_000]))
        if nums:
            m = rng.choice(nums)
            big = rng.choice(("9" * 5000, "1e999", "-1e999", "1" + "0" * 400, "123456789012345678901234567890"))
            return (text[: m.start()] + big + text[m.end() :]).encode()
    nodes = list(_nodes(doc))
    for _ in range(rng.randint(1, 3)):
        path, node = rng.choice(nodes)
        op = rng.randrange(4)
        if op == 0 or not path:
            doc = _set(doc, path, _hostile_value(rng))
        elif op == 1 and isinstance(node, (int, float)) and not isinstance(node, bool):
            doc = _set(doc, path, rng.choice((node * (1 << 40), -node - 1, node + (1 << 31), 1 << 63)))
        elif op == 2:  # delete this node from its parent
            parent = doc
            for k in path[:-1]:
                parent = parent[k]
            with contextlib.suppress(KeyError, IndexError, TypeError):
                del parent[path[-1]]
        else:
            doc = _set(doc, path, [node, node] if rng.random() < 0.5 else {"x": node})
        nodes = list(_nodes(doc))
    return _dumps(doc, rng).encode()


# ---- file names ------------------------------------------------------------------------------------------
def odd_number(rng: random.Random) -> str:
    return rng.choice(("1099511627776", "18446744073709551616", "9" * 40, "00000000000000000007", "4294967296"))


def odd_name(name: str, rng: random.Random) -> str:
    """The name with a number made huge, or with spaces, a newline or a leading dash."""
    r = rng.random()
    nums = list(re.finditer(r"\d+", name))
    if r < 0.5 and nums:
        m = rng.choice(nums)
        return name[: m.start()] + odd_number(rng) + name[m.end() :]
    if r < 0.7:
        return "-" + name
    if r < 0.85:
        return name.replace("_", " ", 1) if "_" in name else "a b " + name
    return "new\nline " + name


# ---------------------------------------------------------------------------------------------------------
# the seed corpus
# ---------------------------------------------------------------------------------------------------------
@dataclass
class Seed:
    path: Path
    own: bool  # the project's own data (not ../shared): crashers made from it may be saved as fixtures


@dataclass
class Corpus:
    captures: list[Seed] = field(default_factory=list)
    ui_folders: list[Seed] = field(default_factory=list)
    pickles: list[Seed] = field(default_factory=list)
    rgps: list[Seed] = field(default_factory=list)
    code_objects: list[Seed] = field(default_factory=list)

    @classmethod
    def load(cls, shared: Path | None, max_kb: int = 400) -> Corpus:
        def small(p: Path) -> bool:
            files = [p] if p.is_file() else [f for f in p.rglob("*") if f.is_file()]
            return sum(f.stat().st_size for f in files if not f.name.endswith((".s", "oracle.json"))) <= max_kb << 10

        c = cls()
        c.captures.append(Seed(ROOT / "attdec/data/demo_raw", True))
        c.ui_folders += [Seed(p.parent, True) for p in sorted((ROOT / "tests/fixtures").rglob("filenames.json"))]
        c.ui_folders += [Seed(p.parent, True) for p in sorted((ROOT / "attdec/data/demo").rglob("filenames.json"))]
        c.code_objects += [Seed(p, True) for p in sorted((ROOT / "tests/fixtures/isa").glob("*.co"))]
        c.code_objects.append(Seed(ROOT / "attdec/data/demo_raw/kern.co", True))
        if shared is not None and shared.is_dir():
            caps = sorted(p.parent for p in (shared / "captures").glob("*/*/capture.json"))
            c.captures += [Seed(p, False) for p in caps if small(p)]
            uis = sorted(p.parent for p in (shared / "ui_output_samples").rglob("filenames.json"))
            c.ui_folders += [Seed(p, False) for p in uis if small(p)]
            c.pickles += [Seed(p, False) for p in sorted((shared / "tinygrad_profiles").rglob("*.pkl")) if small(p)]
            c.rgps += [Seed(p, False) for p in sorted((shared / "rgp").rglob("*.rgp")) if small(p)]
            c.rgps += _made_rgps(shared / "captures" / "gfx1100" / "plus_run0")
            seen = set()
            for p in sorted((shared / "captures").glob("*/*/*.co")):
                h = hashlib.sha1(p.read_bytes()).digest()
                if h not in seen:
                    seen.add(h)
                    c.code_objects.append(Seed(p, False))
        return c


def _made_rgps(capture: Path) -> list[Seed]:
    """The layouts ../shared has no real file of (RADV's SQTT file, RDF with and without zstd), written by
    tests/support/make_rgp.py into a folder removed at exit."""
    import atexit

    from tests.support import make_rgp

    if not capture.is_dir():
        return []
    d = Path(tempfile.mkdtemp(prefix="attdec-fuzz-rgp-"))
    atexit.register(shutil.rmtree, d, True)
    made = [make_rgp.radv(capture, d / "radv.rgp"), make_rgp.rdf(capture, d / "rdf.rgp")]
    with contextlib.suppress(ImportError):
        made.append(make_rgp.rdf(capture, d / "rdfz.rgp", zstd=True))
    return [Seed(p, False) for p in made]


# ---------------------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------------------
@dataclass
class Case:
    kind: str
    args: list[str]
    what: str  # how it was made, for reports
    own: bool  # made from the project's own data only
    root: Path


ANALYSES = (
    ["hotspots", "--format", "json"],
    ["hotspots", "--by", "line", "--format", "csv", "--top", "0"],
    ["hotspots", "--by", "instruction", "--format", "json", "--charge", "producer"],
    ["hotspots"],
    ["waves", "--format", "csv"],
    ["kernel", "--format", "json"],
    ["waits", "--format", "json"],
    ["latency", "--format", "json"],
    ["info", "--format", "json"],
    ["cfg", "--format", "json"],
    ["loops", "--format", "json"],
    ["timeline", "-o", "{out}/trace.json"],
)
RAW_ONLY = (["decode", "--format", "json"], ["decode", "--tokens"], ["counters", "--format", "json"])


def _command(rng: random.Random, root: Path, raw: bool) -> list[str]:
    cmds = ANALYSES + (RAW_ONLY if raw else ())
    return [a.format(out=root) for a in rng.choice(cmds)]


def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.s", "oracle.json"))
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)


def _damage_file(p: Path, rng: random.Random) -> str:
    data = p.read_bytes()
    if p.suffix == ".json":
        p.write_bytes(mutate_json(data, rng))
        return f"json {p.name}"
    if data[:4] == b"\x7fELF" or p.suffix in (".co", ".out", ".hsaco"):
        p.write_bytes(mutate_elf(data, rng))
        return f"elf {p.name}"
    p.write_bytes(mutate_bytes(data, rng))
    return f"bytes {p.name}"


def _damage_folder(folder: Path, rng: random.Random, rounds: int) -> list[str]:
    """`rounds` damages to the files of a folder: contents, names, a file removed."""
    what = []
    for _ in range(rounds):
        files = sorted(f for f in folder.rglob("*") if f.is_file())
        if not files:
            break
        f = rng.choice(files)
        r = rng.random()
        if r < 0.75:
            what.append(_damage_file(f, rng))
        elif r < 0.9:
            new = f.with_name(odd_name(f.name, rng))
            if not new.exists():
                f.rename(new)
                what.append(f"renamed {f.name!r} -> {new.name!r}")
        else:
            f.unlink()
            what.append(f"removed {f.name}")
    return what


def case_capture(rng, corpus: Corpus, root: Path) -> Case:
    seed = rng.choice(corpus.captures)
    dst = root / rng.choice(("cap", "cap with space", "-dash"))
    _copy_tree(seed.path, dst)
    what = _damage_folder(dst, rng, rng.randint(1, 3))
    return Case(
        "capture", [*_command(rng, root, True), str(dst)], f"{seed.path.name}: {'; '.join(what)}", seed.own, root
    )


def _capture_parts(folder: Path) -> tuple[dict, list[Path], Path, int]:
    cap = json.loads((folder / "capture.json").read_text())
    k = cap["kernels"][0]
    d = next(d for d in cap["dispatches"] if d["kernel"] == k["name"])
    return cap, [folder / b for b in d["blobs"]], folder / k["code_object"], int(k["base"])


def case_explicit(rng, corpus: Corpus, root: Path) -> Case:
    seed = rng.choice(corpus.captures)
    cap, blobs, co, base = _capture_parts(seed.path)
    names = []
    for i, b in enumerate(blobs[: rng.randint(1, 4)]):
        name = b.name if rng.random() < 0.7 else odd_name(b.name, rng)
        if any(n.name == name for n in names):
            name = f"x{i}_{name}"
        data = b.read_bytes()
        (root / name).write_bytes(mutate_bytes(data, rng) if rng.random() < 0.5 else data)
        names.append(root / name)
    (root / "k.co").write_bytes(mutate_elf(co.read_bytes(), rng) if rng.random() < 0.5 else co.read_bytes())
    if rng.random() < 0.2:
        base = rng.choice((0, 1 << 64, -1, 1 << 63, base + 3))
    spec = f"{root / 'k.co'}@{base:#x}" if base >= 0 else f"{root / 'k.co'}@{base}"
    cmd = rng.choice((["decode", "--format", "json"], ["hotspots", "--format", "json"], ["waves", "--format", "csv"]))
    args = [*cmd, "--code", spec]
    if rng.random() < 0.3:
        args += ["--arch", cap["gfx_arch"]]
    if rng.random() < 0.1:
        args += ["--se", odd_number(rng)]
    return Case(
        "explicit", [*args, "--", *map(str, names)], f"{seed.path.name} blobs {[n.name for n in names]}", seed.own, root
    )


def case_rocprof_raw(rng, corpus: Corpus, root: Path) -> Case:
    """A capture re-laid out as rocprofv3 writes raw output (<out>/<host>/<pid>_<agent>_shader_engine_...),
    with a results.json giving the load base."""
    seed = rng.choice(corpus.captures)
    cap, blobs, co, base = _capture_parts(seed.path)
    host = root / "out" / "host"
    host.mkdir(parents=True)
    pid, agent, disp = 4242, rng.choice((1, 2, 99)), rng.choice((1, 7, 1 << 40))
    for b in blobs:
        se = int(re.search(r"se(\d+)\.att$", b.name).group(1))  # type: ignore[union-attr]
        (host / f"{pid}_{agent}_shader_engine_{se}_{disp}.att").write_bytes(b.read_bytes())
    (host / f"{pid}_{cap['gfx_arch']}_code_object_id_1.out").write_bytes(co.read_bytes())
    results = {
        "code_objects": [{"code_object_id": 1, "load_delta": base}],
        "kernels": [{"kernel_id": 5, "kernel_name": cap["kernels"][0]["name"]}],
        "dispatches": [{"dispatch_id": disp, "kernel_id": 5}],
    }
    (host / "results.json").write_text(json.dumps(results))
    what = _damage_folder(host, rng, rng.randint(1, 3))
    return Case("rocprof_raw", [*_command(rng, root, True), str(root / "out")], "; ".join(what), seed.own, root)


def case_elf(rng, corpus: Corpus, root: Path) -> Case:
    """A damaged code object: disassembled alone, or decoded against with the capture it came from
    (which reads its symbols, kernel descriptors, metadata note and DWARF lines)."""
    if rng.random() < 0.5:
        seed = rng.choice(corpus.code_objects)
        (root / "k.co").write_bytes(mutate_elf(seed.path.read_bytes(), rng))
        cmd = rng.choice((["disasm"], ["disasm", "--format", "json"], ["kernel", "--format", "json"]))
        if rng.random() < 0.2:
            cmd += ["--arch", rng.choice(("gfx1100", "gfx942", "gfx1201"))]
        return Case("elf", [*cmd, str(root / "k.co")], f"{seed.path}", seed.own, root)
    seed = rng.choice(corpus.captures)
    dst = root / "cap"
    _copy_tree(seed.path, dst)
    _cap, _blobs, co, _base = _capture_parts(dst)
    co.write_bytes(mutate_elf(co.read_bytes(), rng))
    cmd = rng.choice(
        (
            ["hotspots", "--format", "json"],
            ["hotspots", "--by", "line", "--format", "csv"],
            ["kernel", "--format", "json"],
        )
    )
    return Case("elf", [*cmd, str(dst)], f"{seed.path.name}: code object", seed.own, root)


def case_ui_output(rng, corpus: Corpus, root: Path) -> Case:
    seed = rng.choice(corpus.ui_folders)
    parent = root / rng.choice(("run", "run with space", "-run"))
    dst = parent / seed.path.name
    parent.mkdir()
    _copy_tree(seed.path, dst)
    for f in seed.path.parent.glob("*.csv"):  # agent info and stats tables next to the folder
        shutil.copy(f, parent / f.name)
    what = []
    if rng.random() < 0.15:  # a wave file listed in filenames.json but absent
        waves = sorted(dst.glob("se*_sm*_sl*_wv*.json"))
        if waves:
            rng.choice(waves).unlink()
            what.append("wave file removed")
    what += _damage_folder(dst if rng.random() < 0.9 else parent, rng, rng.randint(1, 3))
    target = dst if rng.random() < 0.8 else parent
    return Case(
        "ui_output", [*_command(rng, root, False), str(target)], f"{seed.path.name}: {'; '.join(what)}", seed.own, root
    )


def _tar_add(tar: tarfile.TarFile, name: str, data: bytes, **info) -> None:
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    for k, v in info.items():
        setattr(ti, k, v)
    tar.addfile(ti, io.BytesIO(data) if ti.isfile() else None)


_ZIP_MODES = {tarfile.SYMTYPE: 0o120777, tarfile.LNKTYPE: 0o120777, tarfile.CHRTYPE: 0o20644, tarfile.FIFOTYPE: 0o10644}


class _ZipWriter:
    """A zip file written through tarfile's `addfile` (what `_tar_add` calls): links and devices become the
    Unix modes a zip records for them."""

    def __init__(self, path: Path):
        import zipfile

        self.zipfile = zipfile
        self.z = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.z.close()

    def addfile(self, ti: tarfile.TarInfo, f=None) -> None:
        info = self.zipfile.ZipInfo(ti.name)
        mode = 0o100644 if ti.isfile() else _ZIP_MODES.get(ti.type, 0o100644)
        info.create_system, info.external_attr, info.compress_type = 3, mode << 16, self.zipfile.ZIP_DEFLATED
        with warnings.catch_warnings():  # a hostile member written twice: zipfile warns, a zip may hold that
            warnings.simplefilter("ignore")
            self.z.writestr(info, f.read() if f is not None else ti.linkname.encode())


def case_archive(rng, corpus: Corpus, root: Path) -> Case:
    """A .zip, .tar.xz/.gz/.bz2 or .tar of a (maybe damaged) ui_output folder, with hostile members (links,
    devices, paths outside the archive, many or huge members), or with its compressed bytes damaged."""
    seed = rng.choice(corpus.ui_folders)
    src = root / "src" / seed.path.name
    _copy_tree(seed.path, src)
    what = _damage_folder(src, rng, rng.randint(0, 2))
    suffix, mode = rng.choice(
        ((".tar.xz", "w:xz"), (".tar.gz", "w:gz"), (".tar", "w"), (".tgz", "w:gz"), (".zip", ""), (".tar.bz2", "w:bz2"))
    )
    arc = root / f"{seed.path.name}{suffix}"
    top = rng.choice((seed.path.name, ".", "a/b"))
    with tarfile.open(arc, mode) if mode else _ZipWriter(arc) as tar:
        for f in sorted(src.iterdir()):
            _tar_add(tar, f"{top}/{f.name}", f.read_bytes())
        for _ in range(rng.choice((0, 0, 1, 2))):
            h = rng.randrange(9)
            if h == 0:
                _tar_add(tar, f"{top}/link.json", b"", type=tarfile.SYMTYPE, linkname="/etc/passwd")
            elif h == 1:
                _tar_add(tar, f"{top}/hard.json", b"", type=tarfile.LNKTYPE, linkname=f"{top}/filenames.json")
            elif h == 2:
                _tar_add(tar, f"{top}/dev", b"", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
            elif h == 3:
                _tar_add(tar, "../../escape.json", b"{}")
            elif h == 4:
                _tar_add(tar, "/abs/filenames.json", b"{}")
            elif h == 5:
                for i in range(rng.choice((100, 5000))):
                    _tar_add(tar, f"{top}/se0_sm0_sl0_wv{i}.json", b"{}")
            elif h == 6:
                _tar_add(tar, f"{top}/fifo", b"", type=tarfile.FIFOTYPE)
            elif h == 7:
                _tar_add(tar, f"{top}/big.bin", bytes(rng.choice((1 << 20, 16 << 20))))
            else:
                _tar_add(tar, f"{top}/se0_sm0_sl0_wv99.json", b"{" * 1000)
            what.append(f"hostile member {h}")
    if rng.random() < 0.3:
        arc.write_bytes(mutate_bytes(arc.read_bytes(), rng))
        what.append("archive bytes")
    shutil.rmtree(root / "src")
    return Case(
        "archive",
        [*_command(rng, root, False), str(arc)],
        f"{seed.path.name}{suffix}: {'; '.join(what)}",
        seed.own,
        root,
    )


# ---- tinygrad pickles ------------------------------------------------------------------------------------
_TG_CLASSES = ("ProfileDeviceEvent", "ProfileProgramEvent", "ProfileSQTTEvent", "ProfilePMCEvent", "PMCSample")


@dataclass
class TinygradObject:
    name: str  # of _TG_CLASSES
    state: dict


def _tinygrad_pickle(events: list, protocol: int = 4) -> bytes:
    """Pickle plain objects as if they were tinygrad's event classes (tinygrad.device.<name>)."""
    mod = types.ModuleType("tinygrad.device")
    classes = {}
    for n in _TG_CLASSES:
        classes[n] = type(n, (), {"__module__": "tinygrad.device"})
        setattr(mod, n, classes[n])
    pkg = types.ModuleType("tinygrad")
    saved = {k: sys.modules.get(k) for k in ("tinygrad", "tinygrad.device")}
    sys.modules.update({"tinygrad": pkg, "tinygrad.device": mod})
    try:

        def make(v):  # TinygradObject anywhere in the state (PMCSample in a schedule) made an object too
            if isinstance(v, TinygradObject):
                o = classes[v.name]()
                o.__dict__.update({k: make(x) for k, x in v.state.items()})
                return o
            return [make(x) for x in v] if isinstance(v, list) else v

        return pickle.dumps([make(TinygradObject(name, state)) for name, state in events], protocol=protocol)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def synthetic_profile(rng: random.Random, capture: Path) -> bytes:
    """A tinygrad profile of a capture's first dispatch, some field values hostile."""
    cap, blobs, co, base = _capture_parts(capture)
    from attdec.model.target import target

    version = target(cap["gfx_arch"]).version or 110000

    def maybe(v):
        return _hostile_value(rng) if rng.random() < 0.08 else v

    ev = [("ProfileDeviceEvent", {"device": "AMD", "props": maybe({"gfx_target_version": maybe(version)})})]
    ev.append(
        (
            "ProfileProgramEvent",
            {"device": "AMD", "name": "k", "lib": maybe(co.read_bytes()), "base": maybe(base), "tag": maybe(1)},
        )
    )
    for b in blobs:
        se = int(re.search(r"se(\d+)\.att$", b.name).group(1))  # type: ignore[union-attr]
        ev.append(
            (
                "ProfileSQTTEvent",
                {
                    "device": "AMD",
                    "kern": maybe(1),
                    "se": maybe(se),
                    "blob": maybe(b.read_bytes()),
                    "itrace": True,
                    "exec_tag": 1,
                },
            )
        )
    if rng.random() < 0.3:
        n = rng.choice((1, 2, 1 << 20))
        sched = [
            {
                "name": "SQ_WAVES",
                "block": "SQ",
                "xcc": 1,
                "inst": 1,
                "se": maybe(n),
                "sa": 1,
                "wgp": 1,
                "off": maybe(0),
                "size": maybe(8 * n),
            }
        ]
        ev.append(
            (
                "ProfilePMCEvent",
                {"device": "AMD", "kern": 1, "exec_tag": 1, "sched": sched, "blob": maybe(bytes(8 * min(n, 64)))},
            )
        )
    return _tinygrad_pickle(ev, rng.randint(2, 5))


def case_tinygrad(rng, corpus: Corpus, root: Path) -> Case:
    if corpus.pickles and rng.random() < 0.5:
        seed = rng.choice(corpus.pickles)
        data, own, what = seed.path.read_bytes(), seed.own, seed.path.name
    else:
        seed = rng.choice(corpus.captures)
        data, own, what = synthetic_profile(rng, seed.path), seed.own, f"synthetic from {seed.path.name}"
    if rng.random() < 0.6:
        data = mutate_bytes(data, rng)
        what += " (bytes)"
    (root / "profile.pkl").write_bytes(data)
    return Case("tinygrad", [*_command(rng, root, True), str(root / "profile.pkl")], what, own, root)


def case_rgp(rng, corpus: Corpus, root: Path) -> Case:
    if not corpus.rgps:
        return case_sqtt(rng, corpus, root)
    seed = rng.choice(corpus.rgps)
    (root / "t.rgp").write_bytes(mutate_bytes(seed.path.read_bytes(), rng))
    return Case("rgp", [*_command(rng, root, True), str(root / "t.rgp")], seed.path.name, seed.own, root)


# ---- SQTT token streams from the packet tables -----------------------------------------------------------
def _field_value(rng: random.Random, width: int) -> int:
    r = rng.random()
    if r < 0.3:
        return 0
    if r < 0.45:
        return (1 << width) - 1
    return rng.getrandbits(width)


def synthetic_stream(rng: random.Random, generation: int) -> bytes:
    """A stream of random tokens of the family's packet table (every type, random field values), with the
    header and the kernel-entry and wave tokens real streams have."""
    from tests.support import sqtt_encoder as enc

    if generation == 9:
        e9 = enc.Gfx9Encoder(target_cu=rng.randrange(16))
        e9.kernel_entry(0x7FFF00000000 + 0x100 * rng.randrange(16))
        names = [p.name for p in enc.GFX9]
        for _ in range(rng.randint(1, 300)):
            p = enc.GFX9[rng.choice(names)]
            fields = {k: _field_value(rng, f.width) for k, f in p.fields.items() if k not in ("id", "type")}
            with contextlib.suppress(ValueError, KeyError):
                e9.put(p.name, rng.random() < 0.3, **fields)
        return e9.data()
    e = enc.RdnaEncoder(generation, **{"simd": rng.randrange(4), "wgp": rng.randrange(8)})
    names = [p.name for p in e.table if p.name != "HEADER" or rng.random() < 0.05]
    for _ in range(rng.randint(1, 400)):
        p = e.table[rng.choice(names)]
        fields = {k: _field_value(rng, f.width) for k, f in p.fields.items() if k != "id"}
        with contextlib.suppress(ValueError, KeyError):
            e.token(p.name, **fields)
    return e.data()


SQTT_ARCH = {9: "gfx942", 10: "gfx1030", 11: "gfx1100", 12: "gfx1201"}


def case_sqtt(rng, corpus: Corpus, root: Path) -> Case:
    gen = rng.choice((9, 10, 11, 12))
    data = synthetic_stream(rng, gen)
    if rng.random() < 0.7:
        data = mutate_bytes(data, rng)
    name = rng.choice(("t_se0.att", "t_se1.att", f"t_se{odd_number(rng)}.att", "t.att"))
    (root / name).write_bytes(data)
    arch = SQTT_ARCH[gen]
    from attdec.model.target import TARGETS

    if arch not in TARGETS:
        arch = "gfx1100"
    cmd = rng.choice((["decode", "--format", "json", "--arch", arch], ["decode", "--tokens", "--arch", arch]))
    if gen == 9 and rng.random() < 0.5:  # decoded against the demo kernel, as far as the PCs go
        demo = ROOT / "attdec/data/demo_raw/kern.co"
        cmd = [rng.choice(("hotspots", "waves")), "--format", "json", "--code", f"{demo}@0x7fff00000000"]
    return Case("sqtt", [*cmd, "--", str(root / name)], f"gfx{gen} {len(data)} bytes", True, root)


BUILDERS = {
    "sqtt": case_sqtt,
    "capture": case_capture,
    "explicit": case_explicit,
    "rocprof_raw": case_rocprof_raw,
    "elf": case_elf,
    "ui_output": case_ui_output,
    "archive": case_archive,
    "tinygrad": case_tinygrad,
    "rgp": case_rgp,
}


def build(index: int, seed: int, kinds: tuple[str, ...], corpus: Corpus, root: Path) -> Case:
    """Case `index` of run `seed`: kinds in turn, its input from its own random stream."""
    kind = kinds[index % len(kinds)]
    rng = random.Random(f"{seed}:{index}")
    return BUILDERS[kind](rng, corpus, root)


# ---------------------------------------------------------------------------------------------------------
# running one case
# ---------------------------------------------------------------------------------------------------------
class Hang(BaseException):
    """Raised by the per-case timer: a BaseException, so that no `except Exception` in the code swallows it."""


def _alarm(signum, frame):
    raise Hang


@dataclass
class Outcome:
    status: str  # ok, refused | traceback, hang, memory, warning, wrote (outside its output) | fuzzer (a bug here)
    detail: str = ""  # the failure's signature (exception and where) or the stderr line
    secs: float = 0.0
    rss_mb: float = 0.0
    exit: int | None = None
    stdout: str = ""
    stderr: str = ""
    trace: str = ""

    @property
    def failed(self) -> bool:
        return self.status not in ("ok", "refused")


def _peak_rss_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _reset_peak_rss() -> None:
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _signature(e: BaseException) -> str:
    """Exception type and the innermost attdec frame: one bug, one signature."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "/attdec/" in f.filename]
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return f"{type(e).__name__}{where}: {str(e)[:120]}"


def run_cli(args: list[str], timeout: float, rss_mb: float) -> Outcome:
    """`attdec ARGS` in this process, with a timer; what came out of it judged."""
    from attdec.cli import main

    out, err = io.StringIO(), io.StringIO()
    code, exc = None, None
    _reset_peak_rss()
    t0 = time.perf_counter()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            try:
                main(args)
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException as e:
                exc = e
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except Hang as e:  # the timer fired between the try blocks
        exc = e
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    secs = time.perf_counter() - t0
    rss = _peak_rss_mb()
    o = Outcome("ok", secs=secs, rss_mb=rss, exit=code, stdout=out.getvalue(), stderr=err.getvalue())
    if isinstance(exc, Hang):
        o.status, o.detail = "hang", f"over {timeout:g} s"
    elif isinstance(exc, MemoryError):
        o.status, o.detail = "memory", _signature(exc)
        o.trace = "".join(traceback.format_exception(exc))
    elif exc is not None:
        o.status, o.detail = "traceback", _signature(exc)
        o.trace = "".join(traceback.format_exception(exc))
    elif "Traceback (most recent call last)" in o.stderr:
        o.status, o.detail = "traceback", "printed: " + o.stderr.strip().splitlines()[-1][:160]
    elif code not in (0, 1, 3):
        o.status, o.detail = "traceback", f"exit {code}: {o.stderr.strip()[:160]}"
    elif code == 1 and not any(ln.startswith("attdec: error: ") for ln in o.stderr.splitlines()):
        o.status, o.detail = "traceback", f"exit 1 without an error line: {o.stderr.strip()[-160:]!r}"
    elif caught:
        w = caught[0]
        o.status, o.detail = "warning", f"{w.category.__name__} at {Path(w.filename).name}:{w.lineno}: {w.message}"
    elif rss > rss_mb:
        o.status, o.detail = "memory", f"peak RSS {rss:.0f} MB"
    else:
        o.status = "refused" if code == 1 else "ok"
    return o


# ---------------------------------------------------------------------------------------------------------
# workers and the run
# ---------------------------------------------------------------------------------------------------------
@dataclass
class Result:
    index: int
    kind: str
    outcome: Outcome
    what: str
    args: list[str]
    own: bool
    files: dict[str, bytes] | None = None  # a failing case's input, when small


SAVE_LIMIT = 64 << 10  # bytes: crashers bigger than this are reported, not saved


def _snapshot(root: Path) -> dict[str, bytes] | None:
    files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    return files if sum(len(v) for v in files.values()) <= SAVE_LIMIT else None


def _clean(root: Path) -> None:
    for p in root.iterdir():
        if p.is_dir() and not p.is_symlink():
            for q in [p, *p.rglob("*")]:
                if q.is_dir() and not q.is_symlink():
                    with contextlib.suppress(OSError):
                        q.chmod(0o755)
            shutil.rmtree(p)
        else:
            p.unlink()


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def run_one(index: int, a, corpus: Corpus, root: Path) -> Result:
    """Case `index`: built in `root`, run from the empty folder `root`/cwd; anything written or deleted
    but the output file the command names is a failure too."""
    _clean(root)
    try:
        case = build(index, a.seed, a.kinds, corpus, root)
    except Exception as e:  # a bug of this tool, not of attdec: reported apart
        kind = a.kinds[index % len(a.kinds)]
        return Result(
            index, kind, Outcome("fuzzer", f"{type(e).__name__}: {e}", trace=traceback.format_exc()), "", [], False
        )
    cwd = root / "cwd"
    cwd.mkdir()
    before = _tree(root)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        o = run_cli(case.args, a.timeout, a.rss_mb)
    finally:
        os.chdir(old)
    after = _tree(root)
    outputs = {case.args[i + 1] for i, x in enumerate(case.args[:-1]) if x in ("-o", "--output")}
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p) and p not in outputs)
    if changed and not o.failed:
        o.status, o.detail = "wrote", f"wrote or deleted {changed[0].replace(str(root), '{root}')}"
    files = _snapshot(root) if o.failed and case.own else None
    rel = [s.replace(str(root), "{root}") for s in case.args]
    return Result(index, case.kind, o, case.what, rel, case.own, files)


def worker(conn, indices, a, corpus: Corpus) -> None:
    """Run cases `indices` in this process, one message per case (a 'start' first, so that a hard hang is
    pinned on its case)."""
    limit = a.max_mem_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    root = Path(tempfile.mkdtemp(prefix="attdec-fuzz-"))
    try:
        for i in indices:
            if a.deadline and time.time() > a.deadline:  # --minutes: stop between cases, report what was run
                break
            conn.send(("start", i))
            r = run_one(i, a, corpus, root)
            r.outcome.stdout, r.outcome.stderr = "", r.outcome.stderr[-2000:] if r.outcome.failed else ""
            conn.send(("done", r))
    finally:
        shutil.rmtree(root, ignore_errors=True)
        conn.send(("exit", None))


def run(a) -> int:
    import multiprocessing as mp

    corpus = Corpus.load(None if a.no_shared else SHARED)
    ctx = mp.get_context("fork")
    todo = list(range(a.start, a.start + a.cases))
    chunks = [todo[j :: a.jobs] for j in range(a.jobs)]
    procs: dict[int, tuple] = {}

    def launch(j: int, indices: list[int]) -> None:
        parent, child = ctx.Pipe()
        p = ctx.Process(target=worker, args=(child, indices, a, corpus), daemon=True)
        p.start()
        child.close()
        procs[j] = (p, parent, list(indices), None)

    for j, c in enumerate(chunks):
        if c:
            launch(j, c)
    results: list[Result] = []
    hard = a.timeout * 3 + 30
    t0 = time.time()
    last_print = 0.0
    while procs:
        for j in list(procs):
            p, conn, left, current = procs[j]
            if conn.poll(0.05):
                try:
                    msg, val = conn.recv()
                except (EOFError, OSError):
                    msg, val = "died", None
                if msg == "start":
                    procs[j] = (p, conn, left, (val, time.time()))
                elif msg == "done":
                    results.append(val)
                    if val.outcome.failed:  # at once: a long run's failures are known before it ends
                        print(
                            f"  case {val.index} ({val.kind}) {val.outcome.status}: {val.outcome.detail}",
                            file=sys.stderr,
                        )
                    left.remove(val.index)
                    procs[j] = (p, conn, left, None)
                else:
                    if msg == "died" and current is not None:  # killed by the kernel (memory?) mid-case
                        results.append(_lost(current[0], a, corpus, "memory", "worker died"))
                        left.remove(current[0])
                    p.join(1)
                    del procs[j]
                    if left and msg == "died":
                        launch(j, left)
            elif current is not None and time.time() - current[1] > hard:
                p.kill()
                p.join(1)
                results.append(_lost(current[0], a, corpus, "hang", f"no answer in {hard:g} s (killed)"))
                left.remove(current[0])
                del procs[j]
                if left:
                    launch(j, left)
        if time.time() - last_print > 30 and not a.quiet:
            last_print = time.time()
            bad = sum(r.outcome.failed for r in results)
            print(f"  {len(results):,}/{a.cases:,} cases, {bad} failing, {time.time() - t0:,.0f} s", file=sys.stderr)
    return report(results, a, time.time() - t0)


def _lost(index: int, a, corpus: Corpus, status: str, detail: str) -> Result:
    root = Path(tempfile.mkdtemp(prefix="attdec-fuzz-"))
    try:
        case = build(index, a.seed, a.kinds, corpus, root)
        rel = [s.replace(str(root), "{root}") for s in case.args]
        return Result(index, case.kind, Outcome(status, detail, secs=a.timeout), case.what, rel, case.own)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def report(results: list[Result], a, wall: float) -> int:
    by_kind: dict[str, Counter] = defaultdict(Counter)
    sigs: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for r in results:
        by_kind[r.kind][r.outcome.status] += 1
        if r.outcome.failed:
            sigs[(r.outcome.status, r.outcome.detail)].append(r)
    secs = sorted(r.outcome.secs for r in results)
    rss = max((r.outcome.rss_mb for r in results), default=0)
    statuses = ("ok", "refused", "traceback", "hang", "memory", "warning", "wrote", "fuzzer")
    cost = ("median ms", "max ms", "max MB")
    print(f"{'kind':<12}" + "".join(f"{s:>10}" for s in ("cases", *statuses, *cost)))
    total = Counter()
    for k in (*a.kinds, "all"):
        mine = [r.outcome for r in results if k in ("all", r.kind)]
        c = total if k == "all" else by_kind.get(k, Counter())
        total.update({} if k == "all" else c)
        t = sorted(o.secs for o in mine) or [0.0]
        figures = (t[len(t) // 2] * 1000, t[-1] * 1000, max((o.rss_mb for o in mine), default=0))
        print(
            f"{k:<12}{sum(c.values()):>10,}"
            + "".join(f"{c[s]:>10,}" for s in statuses)
            + "".join(f"{v:>10,.0f}" for v in figures)
        )
    if secs:
        q = lambda f: secs[min(len(secs) - 1, int(f * len(secs)))]
        print(
            f"time per case: mean {sum(secs) / len(secs) * 1000:.0f} ms, median {q(0.5) * 1000:.0f} ms, "
            f"p99 {q(0.99) * 1000:.0f} ms, max {secs[-1] * 1000:.0f} ms; max RSS {rss:.0f} MB; "
            f"wall {wall:,.0f} s with {a.jobs} job(s); seed {a.seed}"
        )
    saved = 0
    for (status, detail), rs in sorted(sigs.items(), key=lambda kv: -len(kv[1])):
        r = rs[0]
        print(f"\n{status.upper()} x{len(rs)} [{', '.join(sorted({x.kind for x in rs}))}]: {detail}")
        print(f"  e.g. case {r.index} ({r.kind}: {r.what[:200]!r}): attdec {' '.join(r.args)}")
        if a.save:
            small = next((x for x in rs if x.files is not None), None)
            if small is not None:
                saved += save_fixture(Path(a.save), small)
    if a.save:
        print(f"\n{saved} crasher(s) saved under {a.save}")
    return 1 if sigs else 0


def save_fixture(folder: Path, r: Result) -> int:
    """A failing case as tests/fixtures/fuzz/<kind>-<hash>/: its files under in/ and case.json."""
    h = hashlib.sha1(repr((r.outcome.status, r.outcome.detail)).encode()).hexdigest()[:10]
    dst = folder / f"{r.kind}-{h}"
    if dst.exists() or not all(rel.isprintable() for rel in r.files or {}):  # no newlines in tracked names
        return 0
    for rel, data in (r.files or {}).items():
        p = dst / "in" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    meta = {"args": [s.replace("{root}", "{in}") for s in r.args], "found": f"{r.outcome.status}: {r.outcome.detail}"}
    (dst / "case.json").write_text(json.dumps(meta, indent=1) + "\n")
    return 1


def replay(a) -> int:
    corpus = Corpus.load(None if a.no_shared else SHARED)
    root = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="attdec-fuzz-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        case = build(a.replay, a.seed, a.kinds, corpus, root)
        print(f"case {a.replay} ({case.kind}: {case.what})\nattdec {' '.join(map(repr, case.args))}")
        o = run_cli(case.args, a.timeout, a.rss_mb)
        print(f"-> {o.status} (exit {o.exit}, {o.secs * 1000:.0f} ms, peak RSS {o.rss_mb:.0f} MB) {o.detail}")
        print("stderr:", o.stderr[-3000:], o.trace, sep="\n")
        return 1 if o.failed else 0
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------------
# faults: what happens to a run from outside (--faults). Each case is a fresh `python -m attdec` process in
# its own session, run from and writing only into the case's folder; nothing points at a real device.
# ---------------------------------------------------------------------------------------------------------
FAULT_OUTPUTS = (
    ["timeline", "-o", "{out}"],
    ["decode", "--format", "json", "-o", "{out}"],
    ["decode", "--format", "npz", "-o", "{out}"],
    ["report", "-o", "{out}"],
    ["waves", "--format", "json", "-o", "{out}"],
    ["hotspots", "--format", "json", "-o", "{out}"],
)
STDERR_OK = ("attdec: ", "wrote ", "note: ")  # what a command may print on stderr


@dataclass
class FaultCase:
    fault: str
    args: list[str]
    what: str
    root: Path
    outputs: list[Path] = field(default_factory=list)  # what the command may write (the rest must not change)
    signal: tuple[int, float, bool] | None = None  # (signal, at this much CPU time of the run, to its group)
    fsize: int | None = None  # RLIMIT_FSIZE of the run
    stdout_to: Path | None = None  # stdout redirected to this file (else captured)
    racer: object = None  # callable(pid, case) run in a thread while the command runs
    check: object = None  # callable(case, ran) -> a failure, or None
    timeout: float = 60.0
    rss_mb: float = 1024.0
    notes: dict = field(default_factory=dict)


@dataclass
class Ran:
    exit: int | None  # None: killed for taking too long
    stdout: str
    stderr: str
    secs: float
    rss_mb: float


def _cpu_secs(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return -1.0


def _tree_digest(root: Path) -> dict[str, tuple]:
    out = {}
    for p in root.rglob("*"):
        st = os.lstat(p)
        if p.is_symlink():
            out[str(p)] = ("link", os.readlink(p))
        elif p.is_fifo():
            out[str(p)] = ("fifo",)
        elif p.is_file():
            out[str(p)] = (st.st_size, st.st_mode, hashlib.sha1(p.read_bytes()).hexdigest())
    return out


def run_fault(c: FaultCase, tree: Path) -> Ran:
    """The case's command in a new session; signal, racer and limits applied; its peak RSS from wait4."""
    import subprocess
    import threading

    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")

    def limits():
        if c.fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (c.fsize, c.fsize))

    out_f = open(c.stdout_to, "w") if c.stdout_to else None
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "attdec", *c.args],
        cwd=c.root,
        env=env,
        stdout=out_f or subprocess.PIPE,
        stderr=subprocess.PIPE,  # pipes: the file-size limit does not cut what the command says
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=limits,
    )
    streams = {"out": b"", "err": b""}

    def drain(name, f):
        streams[name] = f.read()

    stop = threading.Event()

    def deliver():
        sig, at, group = c.signal  # type: ignore[misc]
        while not stop.is_set():
            if _cpu_secs(p.pid) >= at:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, sig) if group else os.kill(p.pid, sig)
                c.notes["signalled"] = True
                return
            time.sleep(0.01)

    threads = [threading.Thread(target=drain, args=("err", p.stderr), daemon=True)]
    if out_f is None:
        threads.append(threading.Thread(target=drain, args=("out", p.stdout), daemon=True))
    if c.signal is not None:
        threads.append(threading.Thread(target=deliver, daemon=True))
    if c.racer is not None:
        threads.append(threading.Thread(target=c.racer, args=(p.pid, c), daemon=True))
    for t in threads:
        t.start()

    def kill():
        c.notes["killed"] = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)

    timer = threading.Timer(c.timeout, kill)
    timer.start()
    _, status, usage = os.wait4(p.pid, 0)
    timer.cancel()
    stop.set()
    p.returncode = os.waitstatus_to_exitcode(status)
    secs = time.perf_counter() - t0
    with contextlib.suppress(ProcessLookupError):  # a worker that outlived its parent
        os.killpg(p.pid, 0)
        c.notes["orphans"] = True
        os.killpg(p.pid, signal.SIGKILL)
    for t in threads:
        t.join(10)
    if out_f is not None:
        out_f.close()
    exit_ = None if c.notes.get("killed") else p.returncode
    text = {k: v.decode(errors="replace") for k, v in streams.items()}
    return Ran(exit_, text["out"], text["err"], secs, usage.ru_maxrss / 1024)


def judge_fault(c: FaultCase, r: Ran, before: dict, after: dict) -> tuple[str, str]:
    """(status, detail): what every fault case must keep, then the fault's own check."""
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    if r.exit is None:
        return "hang", f"over {c.timeout:g} s"
    if "Traceback" in r.stderr or any(not ln.startswith(STDERR_OK) for ln in lines):
        bad = next((ln for ln in lines if not ln.startswith(STDERR_OK)), lines[-1] if lines else "")
        return "traceback", f"stderr: {bad[:160]}"
    # killed by the signal itself: in Python's start-up or its exit, before or after attdec's own handling,
    # with nothing of attdec's to clean up (the checks below see any file left)
    died = r.exit in (-signal.SIGINT, -signal.SIGTERM) and c.notes.get("signalled")
    if r.exit not in (0, 1, 3, 130, 143) and not died:
        return "traceback", f"exit {r.exit}"
    want = {1: "attdec: error: ", 130: "attdec: error: interrupted", 143: "attdec: error: terminated"}.get(r.exit)
    if want and not any(ln.startswith(want) for ln in lines):
        return "traceback", f"exit {r.exit} without {want!r}: {lines[-1:]}"
    if c.notes.get("orphans"):
        return "hang", "a worker process outlived the command"
    if r.rss_mb > c.rss_mb:
        return "memory", f"peak RSS {r.rss_mb:.0f} MB"
    left = sorted(p for p in after if re.search(r"/\.[^/]*\.\d+\.(tmp|old)(/|$)", p))
    if left:
        return "wrote", f"left {left[0].replace(str(c.root), '{root}')}"
    mine = [str(o) for o in c.outputs]
    changed = sorted(
        p for p in before.keys() | after.keys() if before.get(p) != after.get(p) and not p.startswith(tuple(mine))
    )
    if changed:
        return "wrote", f"wrote or deleted {changed[0].replace(str(c.root), '{root}')}"
    detail = c.check(c, r) if c.check is not None else None  # type: ignore[operator]
    if detail:
        return "wrong", detail
    return {1: "refused", 130: "stopped", 143: "stopped"}.get(r.exit, "stopped" if died else "ok"), ""


def _complete(path: Path) -> str | None:
    """None if `path` holds a whole output of its kind (JSON that parses, an .npz that opens, a closed HTML
    page, ui_output folders whose every listed wave file is there), else what is wrong with it."""
    if path.is_dir():
        for fn in path.rglob("filenames.json"):
            doc = json.loads(fn.read_text())
            names = doc.get("wave_filenames") or {}
            listed = [v[0] for se in names.values() for sm in se.values() for sl in sm.values() for v in sl.values()]
            missing = [n for n in listed if not (fn.parent / n).is_file()]
            if missing or not (fn.parent / "code.json").is_file():
                return f"{fn.parent.name} reads as complete but lacks {(missing or ['code.json'])[0]}"
        return None
    data = path.read_bytes()
    try:
        if data[:2] == b"PK":
            import zipfile

            zipfile.ZipFile(io.BytesIO(data)).testzip()
        elif data.lstrip()[:1] in (b"{", b"["):
            json.loads(data)
        elif b"<html" in data[:200].lower() and b"</html>" not in data[-200:].lower():
            return "an HTML page cut short"
    except Exception as e:
        return f"not whole: {type(e).__name__}"
    return None


def _fault_input(rng: random.Random, corpus: Corpus, root: Path) -> tuple[Path, str]:
    seed = rng.choice(corpus.captures)
    dst = root / "cap"
    _copy_tree(seed.path, dst)
    return dst, seed.path.name


def _output_command(rng: random.Random, out: Path) -> list[str]:
    return [a.format(out=out) for a in rng.choice(FAULT_OUTPUTS)]


def fault_signals(rng, corpus: Corpus, root: Path) -> FaultCase:
    """Ctrl-C (SIGINT to the process group) or SIGTERM (to the command) at a random point of a run that
    writes an output over an earlier one, sometimes with --jobs workers."""
    cap, name = _fault_input(rng, corpus, root)
    inputs = [str(cap)]
    if rng.random() < 0.4:  # several dispatches: workers
        for i in range(rng.randint(2, 6)):
            shutil.copytree(cap, root / f"cap{i}")
            inputs.append(str(root / f"cap{i}"))
    if rng.random() < 0.25:
        out = root / "ex"
        args = ["export-ui", "-o", str(out), *inputs]
    else:
        out = root / rng.choice(("out.json", "out.npz", "out.html"))
        args = [*_output_command(rng, out), *inputs]
        if "npz" not in args and out.suffix == ".npz":
            out = out.with_suffix(".json")
            args = [str(out) if a.endswith("out.npz") else a for a in args]
        out.write_bytes(b"earlier")
    args += ["--jobs", rng.choice(("1", "2"))]
    sig = rng.choice((signal.SIGINT, signal.SIGTERM))
    earlier = out.read_bytes() if out.is_file() else None

    def check(c: FaultCase, r: Ran) -> str | None:
        if r.exit in (0, 3):
            return _complete(out) if out.exists() else "exit 0 and no output"
        if out.is_file() and out.read_bytes() != earlier:
            return _complete(out) and "the earlier output was replaced by a partial one"
        return _complete(out) if out.is_dir() else None

    return FaultCase(
        "signals",
        args,
        f"{signal.Signals(sig).name} into {args[0]} on {name}",
        root,
        outputs=[out],
        signal=(sig, rng.uniform(0.08, 1.0), sig == signal.SIGINT),
        check=check,
    )


def fault_full_disk(rng, corpus: Corpus, root: Path) -> FaultCase:
    """A file-size limit (`ulimit -f`, as a full disk shows itself) on a run writing -o or a redirected stdout."""
    cap, name = _fault_input(rng, corpus, root)
    out = root / "out.json"
    out.write_bytes(b"earlier")
    if rng.random() < 0.3:
        args, stdout_to = [*rng.choice((["decode", "--format", "json"], ["waves", "--format", "json"])), str(cap)], out
    else:
        args, stdout_to = [*_output_command(rng, out), str(cap)], None
    fsize = rng.choice((0, 512, 4096, 65536, 1 << 20))

    def check(c: FaultCase, r: Ran) -> str | None:
        if r.exit == 1:
            if "File too large" not in r.stderr:
                return f"exit 1 but not for the file size: {r.stderr.strip()[-160:]}"
            if stdout_to is None and out.read_bytes() != b"earlier":
                return "the earlier output was not kept"
        return None

    return FaultCase(
        "full_disk",
        args,
        f"ulimit -f {fsize} bytes, {args[0]} on {name}",
        root,
        outputs=[out],
        fsize=fsize,
        stdout_to=stdout_to,
        check=check,
    )


def fault_special_output(rng, corpus: Corpus, root: Path) -> FaultCase:
    """-o names a fifo, a symlink (to a file, to a link, dangling), a read-only file, or a link to the
    command's own stdout: each must stay what it is."""
    import threading

    cap, name = _fault_input(rng, corpus, root)
    variant = rng.choice(("fifo", "symlink", "link-to-link", "dangling", "read-only", "stdout"))
    real = root / "real.out"
    out = root / "named.out"
    got: list[bytes] = []
    if variant == "fifo":
        os.mkfifo(out)
        threading.Thread(target=lambda: got.append(out.read_bytes()), daemon=True).start()
    elif variant in ("symlink", "link-to-link"):
        real.write_bytes(b"earlier")
        if variant == "link-to-link":
            (root / "mid.out").symlink_to(real.name)
            out.symlink_to("mid.out")
        else:
            out.symlink_to(real.name)
    elif variant == "dangling":
        out.symlink_to(real.name)
    elif variant == "read-only":
        out.write_bytes(b"earlier")
        out.chmod(0o444)
    else:
        out.symlink_to("/proc/self/fd/1")
    args = [*_output_command(rng, out), str(cap)]
    if "npz" in args and variant == "stdout":
        args[args.index("npz")] = "json"

    def check(c: FaultCase, r: Ran) -> str | None:
        if variant == "fifo":
            if not out.is_fifo():
                return "the fifo was replaced"
            time.sleep(0.2)
            return "exit 0 but nothing reached the fifo" if r.exit in (0, 3) and not (got and got[0]) else None
        if variant == "read-only":
            return None if r.exit == 1 and out.read_bytes() == b"earlier" else "a read-only file was written"
        if not out.is_symlink():
            return "the symlink was replaced by a file"
        if variant == "stdout":
            return "exit 0 but nothing reached stdout" if r.exit in (0, 3) and not r.stdout else None
        if r.exit in (0, 3) and not (real.is_file() and real.read_bytes() != b"earlier"):
            return "exit 0 but the link's target was not written"
        return None

    return FaultCase(
        "special_output", args, f"-o {variant} ({args[0]} on {name})", root, outputs=[out, real], check=check
    )


def fault_output_is_input(rng, corpus: Corpus, root: Path) -> FaultCase:
    """-o names a file the command reads (a blob, capture.json, a code object, a ui_output file), directly
    or through a hard link or symlink: refused, the input left as it was."""
    if corpus.ui_folders and rng.random() < 0.3:
        seed = rng.choice(corpus.ui_folders)
        src = root / "ui"
        _copy_tree(seed.path, src)
        name = seed.path.name
    else:
        src, name = _fault_input(rng, corpus, root)
    victim = rng.choice(sorted(p for p in src.rglob("*") if p.is_file()))
    how = rng.choice(("direct", "hard link", "symlink"))
    out = victim
    if how == "hard link":
        out = root / "alias.out"
        os.link(victim, out)
    elif how == "symlink":
        out = root / "alias.out"
        out.symlink_to(victim)
    cmd = _output_command(rng, out)
    if src.name == "ui" and cmd[0] == "decode":
        cmd = ["report", "-o", str(out)]

    def check(c: FaultCase, r: Ran) -> str | None:
        return None if r.exit == 1 else f"exit {r.exit}: an input was taken as the output"

    return FaultCase("output_is_input", [*cmd, str(src)], f"-o {how} {victim.name} of {name}", root, check=check)


def fault_race(rng, corpus: Corpus, root: Path) -> FaultCase:
    """Another process changes what the command works on while it runs: the output file rewritten while
    it is being written, or a wave file added to a folder prune-empty is about to judge."""
    cap, name = _fault_input(rng, corpus, root)
    if rng.random() < 0.5:
        out = root / "out.json"
        out.write_bytes(b"earlier")
        args = [*_output_command(rng, out), str(cap)]

        def racer(pid: int, c: FaultCase) -> None:
            deadline = time.time() + c.timeout
            while time.time() < deadline:
                tmps = list(root.glob(f".{out.name}.{pid}*.tmp"))
                if tmps:
                    out.write_bytes(b"someone else's")
                    c.notes["raced"] = tmps[0].exists()  # the command had not put its output in place yet
                    return
                time.sleep(0.002)

        def check(c: FaultCase, r: Ran) -> str | None:
            if c.notes.get("raced") and out.read_bytes() != b"someone else's":
                return "a file changed while the command ran was replaced"
            return None

        return FaultCase(
            "race", args, f"output rewritten during {args[0]} on {name}", root, [out], racer=racer, check=check
        )
    runs = root / "runs"
    ex = subprocess_export(cap, runs)
    folder = next(ex.glob("ui_output_*"))
    waves = sorted(folder.glob("se*_sm*_sl*_wv*.json"))
    keep = waves[0].read_bytes() if waves else b"{}"
    for w in waves:
        w.unlink()
    fn = json.loads((folder / "filenames.json").read_text())
    fn["wave_filenames"] = None
    (folder / "filenames.json").write_text(json.dumps(fn))
    added = folder / "se0_sm0_sl0_wv0.json"

    def add_wave(pid: int, c: FaultCase) -> None:
        time.sleep(rng.uniform(0.0, 0.6))
        with contextlib.suppress(OSError):
            added.write_bytes(keep)
            c.notes["added"] = True

    def check_prune(c: FaultCase, r: Ran) -> str | None:
        if c.notes.get("added") and not added.exists():
            return "a wave file written while prune-empty ran was deleted"
        return None

    return FaultCase(
        "race",
        ["prune-empty", "--yes", str(runs)],
        f"wave file added during prune-empty ({name})",
        root,
        outputs=[runs],
        racer=add_wave,
        check=check_prune,
    )


def subprocess_export(cap: Path, out: Path) -> Path:
    """export-ui of `cap` into `out`, in this process (a case's starting point, not what is tested)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        from attdec.cli import run as cli_run

        cli_run(["export-ui", "-o", str(out), str(cap)])
    return out


def fault_memo(rng, corpus: Corpus, root: Path) -> FaultCase:
    """A small pickle that references one SQTT blob thousands of times through the pickle memo."""
    cap = rng.choice(corpus.captures).path
    meta, blobs, co, base = _capture_parts(cap)
    from attdec.model.target import target

    blob = blobs[0].read_bytes()
    n = rng.choice((2_000, 20_000, 100_000))
    ev = [
        ("ProfileDeviceEvent", {"device": "AMD", "props": {"gfx_target_version": target(meta["gfx_arch"]).version}}),
        ("ProfileProgramEvent", {"device": "AMD", "name": "k", "lib": co.read_bytes(), "base": base, "tag": 1}),
    ]
    ev += [
        ("ProfileSQTTEvent", {"device": "AMD", "kern": 1, "se": 0, "blob": blob, "itrace": True, "exec_tag": i})
        for i in range(n)
    ]
    (root / "profile.pkl").write_bytes(_tinygrad_pickle(ev))
    return FaultCase(
        "memo",
        ["hotspots", "--format", "csv", str(root / "profile.pkl")],
        f"one {len(blob):,}-byte blob referenced {n:,} times ({cap.name})",
        root,
        timeout=120.0,
    )


def fault_unpicklable(rng, corpus: Corpus, root: Path) -> FaultCase:
    """A tinygrad profile with PMC events and hundreds of dispatches, decoded on --jobs 2 (a worker's
    result holds the profile's own classes)."""
    cap = rng.choice(corpus.captures).path
    meta, blobs, co, base = _capture_parts(cap)
    from attdec.model.target import target

    n = rng.randint(300, 700)
    ev = [
        ("ProfileDeviceEvent", {"device": "AMD", "props": {"gfx_target_version": target(meta["gfx_arch"]).version}}),
        ("ProfileProgramEvent", {"device": "AMD", "name": "k", "lib": co.read_bytes(), "base": base, "tag": 1}),
    ]
    sample = {"name": "SQ_WAVES", "block": "SQ", "xcc": 1, "inst": 1, "se": 1, "sa": 1, "wgp": 1, "off": 0, "size": 8}
    sched = [TinygradObject("PMCSample", sample)]  # as tinygrad pickles it: its own class
    for i in range(n):
        for b in blobs:
            se = int(re.search(r"se(\d+)\.att$", b.name).group(1))  # type: ignore[union-attr]
            data = bytes(bytearray(b.read_bytes()))  # a copy each: no memo sharing
            ev.append(
                (
                    "ProfileSQTTEvent",
                    {"device": "AMD", "kern": 1, "se": se, "blob": data, "itrace": True, "exec_tag": i},
                )
            )
        ev.append(("ProfilePMCEvent", {"device": "AMD", "kern": 1, "exec_tag": i, "sched": sched, "blob": bytes(8)}))
    (root / "profile.pkl").write_bytes(_tinygrad_pickle(ev))
    cmd = rng.choice((["hotspots", "--format", "csv"], ["counters", "--format", "json"], ["waves", "--format", "csv"]))
    return FaultCase(
        "unpicklable",
        [*cmd, "--jobs", "2", str(root / "profile.pkl")],
        f"{n} dispatches with PMC ({cap.name})",
        root,
        timeout=60.0,
    )


FAULTS = {
    "signals": fault_signals,
    "full_disk": fault_full_disk,
    "special_output": fault_special_output,
    "output_is_input": fault_output_is_input,
    "race": fault_race,
    "memo": fault_memo,
    "unpicklable": fault_unpicklable,
}


def run_faults(a) -> int:
    """--faults: cases of the named fault classes in turn, one subprocess each; a table by class, then
    each failure's signature with one case to replay."""
    corpus = Corpus.load(None if a.no_shared else SHARED)
    tree = Path(a.tree).resolve() if a.tree else ROOT
    results: dict[str, Counter] = defaultdict(Counter)
    sigs: dict[tuple[str, str, str], list[tuple[int, str, list[str]]]] = defaultdict(list)
    t0 = time.time()
    cases = [a.replay] if a.replay is not None else range(a.start, a.start + a.cases)
    for index in cases:
        if a.deadline and time.time() > a.deadline:
            break
        fault = a.faults[index % len(a.faults)]
        rng = random.Random(f"{a.seed}:fault:{index}")
        root = Path(tempfile.mkdtemp(prefix="attdec-fault-"))
        try:
            c = FAULTS[fault](rng, corpus, root)
            before = _tree_digest(root)
            r = run_fault(c, tree)
            status, detail = judge_fault(c, r, before, _tree_digest(root))
            rel = [x.replace(str(root), "{root}") for x in c.args]
        except Exception as e:  # a bug of this tool
            status, detail, rel, c = "fuzzer", f"{type(e).__name__}: {e}", [], None  # type: ignore[assignment]
            if a.replay is not None:
                traceback.print_exc()
        finally:
            _clean(root)
            shutil.rmtree(root, ignore_errors=True)
        results[fault][status] += 1
        if status not in ("ok", "refused", "stopped"):
            sigs[(fault, status, detail)].append((index, c.what if c else "", rel))
            if not a.quiet or a.replay is not None:
                print(f"  fault case {index} ({fault}) {status}: {detail}", file=sys.stderr)
        if a.replay is not None:
            print(f"case {index} ({fault}: {c.what if c else ''}) -> {status} {detail}\nattdec {' '.join(rel)}")
    statuses = ("ok", "refused", "stopped", "traceback", "hang", "memory", "wrote", "wrong", "fuzzer")
    print(f"{'fault':<16}" + "".join(f"{s:>10}" for s in ("cases", *statuses)))
    for f in (*a.faults, "all"):
        cnt = sum(results.values(), Counter()) if f == "all" else results[f]
        print(f"{f:<16}{sum(cnt.values()):>10,}" + "".join(f"{cnt[s]:>10,}" for s in statuses))
    print(f"wall {time.time() - t0:,.0f} s; seed {a.seed}")
    for (fault, status, detail), rs in sorted(sigs.items(), key=lambda kv: -len(kv[1])):
        index, what, rel = rs[0]
        print(f"\n{status.upper()} x{len(rs)} [{fault}]: {detail}")
        print(f"  e.g. fault case {index} ({what}): attdec {' '.join(rel)}")
    return 1 if sigs else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    ap.add_argument("--rss-mb", type=float, default=1024, help="peak RSS per case above which it fails")
    ap.add_argument("--max-mem-mb", type=int, default=4096, help="address-space limit of each worker")
    ap.add_argument("--no-shared", action="store_true", help="only the project's own data as seeds")
    ap.add_argument("--save", metavar="DIR", help="save small crashers as fixtures (e.g. tests/fixtures/fuzz)")
    ap.add_argument("--replay", type=int, metavar="N", help="run case N alone and show its output")
    ap.add_argument("--keep", metavar="DIR", help="with --replay: write the case's files here and keep them")
    ap.add_argument("--minutes", type=float, default=0, help="stop starting cases after this long; report them")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--tree", metavar="DIR", help="fuzz the attdec of another checkout (e.g. to save old crashers)")
    ap.add_argument(
        "--faults",
        metavar="CLASSES",
        help=f"run fault cases instead of damaged inputs: comma-separated, of {', '.join(FAULTS)}, or all",
    )
    a = ap.parse_args()
    if a.tree:
        sys.path.insert(0, str(Path(a.tree).resolve()))
    a.deadline = time.time() + a.minutes * 60 if a.minutes else 0.0
    a.kinds = tuple(k for k in a.kinds.split(",") if k)
    unknown = set(a.kinds) - set(KINDS)
    if unknown:
        ap.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    if a.faults:
        a.faults = tuple(FAULTS) if a.faults == "all" else tuple(f for f in a.faults.split(",") if f)
        unknown = set(a.faults) - set(FAULTS)
        if unknown:
            ap.error(f"unknown fault classes: {', '.join(sorted(unknown))}")
        return run_faults(a)
    if a.replay is not None:
        return replay(a)
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
