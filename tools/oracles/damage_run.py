#!/usr/bin/env python3
"""Damaged streams: how much attdec recovers from real blobs after truncations, bit flips, splices and
zero runs, against the undamaged decode (issue 11 part 4; the summary is kept in docs/damage.md).

For every capture under ../shared/captures (or the folders given), every dispatch, the blob with the most
instruction records is damaged `--per-kind` times per kind (seeded, so runs repeat):

  trunc   cut at a random byte
  flip    one random bit flipped
  splice  a random span of 16..1024 bytes removed (a lost chunk; the rest moves up)
  zeros   a random span of 8..512 bytes overwritten with zero bytes

and each damaged blob is decoded (`decode_blob`, 0.1.6 rules, with the capture's code). Per case:

  correct    instruction rows equal to a row of the same wave in the undamaged decode (pc, time,
             duration, stall, category; waves matched on se, cu, simd, slot, begin)
  shifted    rows equal to one of their wave's but for the time (a damaged time delta moves every later
             record of the wave)
  bogus      rows that match no row of their wave, even with another time
  catchable  bogus rows a plausibility check would flag: a record before its wave began or (RDNA) before
             an earlier record of the wave, after its ended wave's end, a PC outside every code object, a
             wave slot the SIMD does not have
  padding    correct rows of the 0.1.6 padding rule taken literally: the damaged blob with 8 zero
             bytes appended
  cut        waves decoded with fewer of their rows; cut_no_info: cases with cut waves and no INFO record;
             missing: waves not decoded at all (a cut before they began leaves no trace of them)
  silent     cases that lost or invented rows and said nothing (no problem, warning or INFO record)

With `--decoder DIR` (a folder holding AMD's librocprof-trace-decoder.so; never part of attdec) each
damaged blob is also decoded by AMD's library (tools/oracles/amd_reference.py, a child process per blob, answering
its ISA queries from the capture's job file in ../shared/tools/peers/native/jobs) and the case is
`identical` when attdec's waves (cu, simd, slot, begin, end, timeline, every record's pc, time, duration,
stall, category, in the library's wave order) and occupancy rows (cu, simd, slot, start, time, pc) equal
the library's. `differs` names the first thing that differs.

Usage: PYTHONPATH=. python3 tools/oracles/damage_run.py [--quick] [--per-kind N] [--seed S] [--json OUT]
       [--markdown OUT] [--decoder DIR] [CAPTURE_DIR ...]
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import numpy as np

from attdec.decoders import decode_blob
from attdec.errors import AttdecError
from attdec.model.target import target
from attdec.sources.explicit import codemap

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "captures"))
KINDS = ("trunc", "flip", "splice", "zeros")
JOBS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "tools", "peers", "native", "jobs"))
REFERENCE = os.path.join(HERE, "amd_reference.py")
HEADER = 8  # the stream header (gfx9 software header, RDNA HEADER token); damaged, a blob is refused


def damage(data: bytes, kind: str, rng: random.Random) -> bytes:
    """One damaged copy of a blob; the header is left alone."""
    n = len(data)
    if kind == "trunc":
        return data[: rng.randrange(HEADER + 1, n)]
    if kind == "flip":
        i = rng.randrange(HEADER, n)
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]
    span = rng.randrange(16, 1025) if kind == "splice" else rng.randrange(8, 513)
    i = rng.randrange(HEADER, max(HEADER + 1, n - span))
    if kind == "splice":
        return data[:i] + data[i + span :]
    return data[:i] + bytes(min(span, n - i)) + data[i + span :]


def rows_of(waves) -> dict[tuple, Counter]:
    """Per wave (se, cu, simd, slot, begin): the multiset of its rows."""
    out: dict[tuple, Counter] = {}
    for w in waves:
        a = w.insts
        fields = (a["pc"], a["time"], a["duration"], a["stall"], a["category"])
        rows = zip(*(f.tolist() for f in fields))
        out.setdefault((w.se, w.cu, w.simd, w.slot, w.begin), Counter()).update(rows)
    return out


def catchable(waves, code, slots: int, family: str) -> Counter:
    """Rows a plausibility check flags, by the first reason that flags them. On gfx9 the PC walk puts
    neighbours the hardware reported out of program order back in it (tests/test_gfx9_stitch.py), so a
    valid wave's rows may go back in time there: only a row before the wave began is implausible."""
    n: Counter = Counter()
    for w in waves:
        a = w.insts
        if not len(a):
            continue
        t = a["time"]
        floor = np.full(len(t), w.begin) if family == "gfx9" else np.maximum.accumulate(np.r_[w.begin, t[:-1]])
        checks = {
            "backwards": t < floor,
            "after end": (t > w.end) if w.end else np.zeros(len(a), bool),
            "pc": np.array([pc != 0 and code.get(pc) is None for pc in a["pc"].tolist()], bool),
            "slot": np.full(len(a), w.slot >= slots),
        }
        bad = np.zeros(len(a), bool)
        for reason, flags in checks.items():
            new = flags & ~bad
            n[reason] += int(new.sum())
            bad |= flags
    return +n


def score(ref: dict[tuple, Counter], waves) -> tuple[int, int, int, int, int]:
    """(correct rows, shifted rows, invented rows, waves cut (decoded with fewer rows), waves missing) of a
    decode against the undamaged one. A shifted row equals an undamaged row of its wave but for the time (a damaged time
    delta moves every later record of the wave); an invented row matches none."""
    got = rows_of(waves)
    correct = shifted = invented = cut = 0
    for key, rows in got.items():
        clean = ref.get(key, Counter())
        both = rows & clean
        correct += sum(both.values())
        untimed = Counter()
        for (pc, _t, d, s, c), n in (clean - both).items():
            untimed[pc, d, s, c] += n
        for (pc, _t, d, s, c), n in (rows - both).items():
            k = min(n, untimed[pc, d, s, c])
            untimed[pc, d, s, c] -= k
            shifted, invented = shifted + k, invented + n - k
        cut += sum(rows.values()) < sum(clean.values())
    missing = sum(1 for key in ref if key not in got)
    return correct, shifted, invented, cut, missing


def decode(data: bytes, arch: str, code, se: int):
    try:
        return decode_blob(data, arch, code, se)
    except AttdecError:  # a damaged header: the blob is refused with a clear error
        return None


def job_kernel(rel: str, blob: str) -> tuple[str, int] | None:
    """The job file of capture `rel` and the kernel table of the dispatch that holds `blob`."""
    job = os.path.join(JOBS, rel.replace(os.sep, "__") + ".job")
    if not os.path.isfile(job):
        return None
    kernel = None
    with open(job) as f:
        for line in f:
            kw, *rest = line.split(" ")
            if kw == "dispatch":
                kernel = int(rest[1])
            elif kw == "blob" and line.rstrip("\n").endswith("/" + blob):
                return job, kernel if kernel is not None and kernel >= 0 else 0
    return None


def library_decode(decoder: str, job: str, kernel: int, data: bytes) -> dict | str:
    """AMD's library on one blob (a child process: damage may crash it); an error text if it failed."""
    cmd = [sys.executable, REFERENCE, "--decoder", decoder, "--job", job, "--kernel", str(kernel)]
    try:
        p = subprocess.run(cmd, input=data, capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "timed out"
    if p.returncode != 0:
        return f"exit {p.returncode}"
    return json.loads(p.stdout)


def as_library(r) -> dict:
    """attdec's decode in the shape tools/oracles/amd_reference.py prints (without code object ids)."""
    waves = []
    for w in r.waves:
        a = w.insts
        rows = [list(x) for x in zip(*(a[f].tolist() for f in ("pc", "time", "duration", "stall", "category")))]
        waves.append([w.cu, w.simd, w.slot, w.begin, w.end, [list(t) for t in w.timeline], rows])
    occ = r.occupancy
    occupancy = list(zip(*(occ[f].tolist() for f in ("cu", "simd", "slot", "start", "time", "pc"))))
    return {"waves": waves, "occupancy": occupancy}


def differs(lib: dict, ours: dict) -> str:
    """What first differs between the library's answer and attdec's ("" when identical)."""
    theirs = [
        [w[0], w[1], w[2], w[3], w[4], w[6], [[i[0], i[2], i[3], i[4], i[5]] for i in w[7]]] for w in lib["waves"]
    ]
    if len(theirs) != len(ours["waves"]):
        return f"waves {len(theirs)} vs {len(ours['waves'])}"
    for a, b in zip(theirs, ours["waves"]):
        if a[:3] != b[:3]:
            return "wave order"
        for what, i in (("begin", 3), ("end", 4), ("timeline", 5)):
            if a[i] != b[i]:
                return f"wave {what}"
        if len(a[6]) != len(b[6]):
            return f"wave rows {len(a[6])} vs {len(b[6])}"
        for x, y in zip(a[6], b[6]):
            if x != y:
                field = ("pc", "time", "duration", "stall", "category")[[u != v for u, v in zip(x, y)].index(True)]
                return f"row {field}"
    occ, got = Counter(tuple(o[:6]) for o in lib["occupancy"]), Counter(tuple(o) for o in ours["occupancy"])
    if occ != got:
        return f"occupancy: {(occ - got).total()} rows only in the library, {(got - occ).total()} only in attdec"
    return ""


def blob_cases(cdir: str, first_only: bool):
    """(arch, code map, kernel, blob name, blob bytes, se, undamaged decode) per dispatch: its blob with
    the most instruction records."""
    with open(os.path.join(cdir, "capture.json")) as f:
        cap = json.load(f)
    arch = cap["gfx_arch"]
    for disp in cap["dispatches"][:1] if first_only else cap["dispatches"]:
        kernels = [k for k in cap["kernels"] if k["name"] == disp["kernel"]] or cap["kernels"]
        code = codemap([f"{os.path.join(cdir, k['code_object'])}@{k['base_hex']}" for k in kernels], arch)
        best = None
        for b in disp["blobs"]:
            with open(os.path.join(cdir, b), "rb") as f:
                data = f.read()
            se = int(b.rsplit("_se", 1)[1].split(".")[0])
            r = decode_blob(data, arch, code, se)
            key = (sum(len(w.insts) for w in r.waves), len(data))
            if best is None or key > best[0]:
                best = (key, b, data, se, r)
        if best is not None and best[0][0]:
            yield arch, code, disp["kernel"], *best[1:]


def against_library(case: dict, decoder: str, rel: str, blob: str, data: bytes, r) -> None:
    """Adds `identical` and `differs` to a case: attdec's decode of the damaged blob against the library's."""
    found = job_kernel(rel, blob)
    if found is None:
        case.update(identical=None, differs="no job file")
        return
    lib = library_decode(decoder, *found, data)
    if isinstance(lib, str):
        case.update(identical=r is None, differs=f"library: {lib}")
        return
    ours = as_library(r) if r is not None else {"waves": [], "occupancy": []}
    why = differs(lib, ours)
    case.update(identical=not why, differs=why)


def run(dirs, per_kind: int, seed: int, first_only: bool, decoder: str | None = None) -> list[dict]:
    rng = random.Random(seed)
    cases = []
    for cdir in dirs:
        rel = os.path.relpath(cdir, CAPTURES)
        for arch, code, kernel, name, data, se, clean in blob_cases(cdir, first_only):
            t = target(arch)
            slots = t.cu.wave_slots if t.cu is not None else 16
            ref = rows_of(clean.waves)
            total = sum(sum(c.values()) for c in ref.values())
            for kind in KINDS:
                for _ in range(per_kind):
                    bad = damage(data, kind, rng)
                    case = {"capture": rel, "family": t.family, "kernel": kernel, "blob": name, "kind": kind}
                    case["rows"] = total
                    r = decode(bad, arch, code, se)
                    if decoder:
                        against_library(case, decoder, rel, name, bad, r)
                    if r is None:
                        case.update(refused=True, correct=0, shifted=0, bogus=0, catchable=0, padding=0)
                        case.update(cut=0, missing=len(ref), cut_no_info=False, silent=False)
                        cases.append(case)
                        continue
                    correct, shifted, bogus, cut, missing = score(ref, r.waves)
                    pad = decode(bad + bytes(8), arch, code, se)
                    said = bool(r.problems or r.warnings or r.info)
                    flags = catchable(r.waves, code, slots, t.family)
                    case.update(
                        refused=False,
                        correct=correct,
                        shifted=shifted,
                        bogus=bogus,
                        catchable=sum(flags.values()),
                        catchable_by=dict(flags),
                        padding=score(ref, pad.waves)[0] if pad is not None else 0,
                        cut=cut,
                        missing=missing,
                        cut_no_info=bool(cut) and not r.info,
                        silent=(correct < total or shifted + bogus > 0) and not said,
                        info=sorted({i.kind for i in r.info}),
                        problems=len(r.problems),
                        warnings=len(r.warnings),
                    )
                    cases.append(case)
    return cases


def summary(cases: list[dict]) -> list[dict]:
    """Per kind and family, then per kind: the sums the docs table shows."""
    groups: dict[tuple, list] = collections.defaultdict(list)
    for c in cases:
        groups[(c["kind"], c["family"])].append(c)
        groups[(c["kind"], "all")].append(c)
    out = []
    for kind in KINDS:
        for fam in ("gfx9", "gfx11", "gfx12", "all"):
            cs = groups.get((kind, fam))
            if not cs:
                continue
            out.append(
                {
                    "kind": kind,
                    "family": fam,
                    "cases": len(cs),
                    "refused": sum(c["refused"] for c in cs),
                    "rows": sum(c["rows"] for c in cs),
                    "correct": sum(c["correct"] for c in cs),
                    "padding": sum(c["padding"] for c in cs),
                    "fewer than padding": sum(c["correct"] < c["padding"] for c in cs),
                    "shifted": sum(c["shifted"] for c in cs),
                    "bogus": sum(c["bogus"] for c in cs),
                    "bogus cases": sum(c["bogus"] > 0 for c in cs),
                    "catchable": sum(c["catchable"] for c in cs),
                    "cut cases": sum(c["cut"] > 0 for c in cs),
                    "missing waves": sum(c["missing"] for c in cs),
                    "cut, no INFO": sum(c["cut_no_info"] for c in cs),
                    "silent": sum(c["silent"] for c in cs),
                }
            )
            if any("identical" in c for c in cs):
                out[-1]["identical to the library"] = sum(bool(c.get("identical")) for c in cs)
    return out


def markdown(rows: list[dict], out) -> None:
    cols = list(rows[0]) if rows else []
    out.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
    for r in rows:
        out.write("| " + " | ".join(f"{r[c]:,}" if isinstance(r[c], int) else str(r[c]) for c in cols) + " |\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("captures", nargs="*", help="capture folders (default: every one under ../shared/captures)")
    ap.add_argument("--quick", action="store_true", help="one case per kind, the first dispatch of each capture")
    ap.add_argument("--per-kind", type=int, default=5, help="damaged copies per kind and dispatch (default 5)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--json", help="write every case here")
    ap.add_argument("--markdown", help="write the summary table here")
    ap.add_argument("--decoder", help="folder with AMD's librocprof-trace-decoder.so: compare with it too")
    a = ap.parse_args()
    if a.decoder and not os.path.isfile(os.path.join(a.decoder, "librocprof-trace-decoder.so")):
        sys.exit(f"damage_run: no librocprof-trace-decoder.so in {a.decoder}")
    dirs = a.captures or sorted(os.path.dirname(p) for p in glob.glob(os.path.join(CAPTURES, "*", "*", "capture.json")))
    t0 = time.perf_counter()
    cases = run(dirs, 1 if a.quick else a.per_kind, a.seed, a.quick, a.decoder)
    rows = summary(cases)
    markdown(rows, sys.stdout)
    print(f"\n{len(cases)} cases from {len(dirs)} captures in {time.perf_counter() - t0:.0f} s")
    compared = [c for c in cases if c.get("identical") is not None]
    if compared:
        same = sum(c["identical"] for c in compared)
        print(f"identical to the library: {same} / {len(compared)} ({100 * same / len(compared):.1f}%)")
        for c in compared:
            if not c["identical"]:
                print(f"  {c['capture']} {c['blob']} {c['kind']}: {c['differs']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"summary": rows, "cases": cases}, f, indent=1)
    if a.markdown:
        with open(a.markdown, "w") as f:
            markdown(rows, f)


if __name__ == "__main__":
    main()
