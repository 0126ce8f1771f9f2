#!/usr/bin/env python3
"""Edit a copy of a rocprofv3 ui_output dispatch folder with known effects (fixtures for `attdec diff`).

Edits work on the wave files' instruction records ([time, category, stall, duration, line]); afterwards
code.json's Hit/Latency/Stall/Idle are recomputed with tests/support/uisynth.py's plain loop (not with attdec),
and wave ends, filenames.json and occupancy.json follow the shifted times. Each edit's effect is exact:

* `slow_line(line, cycles)`: every execution of listing line id `line` stalls `cycles` more; later records
  of the wave move by as much, so that line's Latency and Stall grow by cycles x Hit and nothing else does.
* `insert(after, text, source, duration, stall)`: a new instruction right after listing line `after`
  (line ids and addresses after it move up by one / by 4 bytes); it executes wherever `after` did,
  costing `duration` cycles (`stall` of them stalled); later records move by `duration`.
* `retext(line, text)`: the instruction's text changes (e.g. other registers), its timing does not.
* `shift_source(path, first, by)`: source lines of `path` numbered `first` or more move down by `by`
  (what inserting `by` lines of source above them does).
* `jitter(seed, sigma)`: every stalled record (stall > 0) gets round(gauss(0, sigma)) more stall cycles
  (never below 0), later records moving along: a repeated run with random run-to-run noise.

    python3 tools/makers/uiedit.py SRC DST [--slow LINE:CYCLES] [--insert AFTER:DURATION:STALL:TEXT]
                                   [--jitter SEED:SIGMA]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
from types import SimpleNamespace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.support.uisynth import category, totals


class Folder:
    """A ui_output dispatch folder held in memory: code.json, filenames.json, occupancy.json, wave files."""

    def __init__(self, path: str):
        self.src = path
        self.doc = {n: self._read(n) for n in ("code.json", "filenames.json", "occupancy.json")}
        self.waves = {}  # file name -> wave document
        for se in (self.doc["filenames.json"].get("wave_filenames") or {}).values():
            for simd in se.values():
                for slot in simd.values():
                    for name, _begin, _end in slot.values():
                        self.waves[name] = self._read(name)

    def _read(self, name: str):
        with open(os.path.join(self.src, name)) as f:
            return json.load(f)

    @property
    def code(self) -> list[list]:
        return self.doc["code.json"]["code"]

    # ------------------------------------------------------------------------------------------ edits

    def _delay(self, wave: dict, index: int, cycles: int) -> None:
        """Move records index.. of `wave` later by `cycles`, and the wave's end with them."""
        for r in wave["instructions"][index:]:
            r[0] += cycles
        wave["end"] += cycles
        if wave.get("timeline"):
            wave["timeline"][-1][1] += cycles

    def slow_line(self, line: int, cycles: int) -> None:
        for doc in self.waves.values():
            w = doc["wave"]
            for k, r in enumerate(w["instructions"]):
                if r[4] == line:
                    r[2] += cycles
                    r[3] += cycles
                    self._delay(w, k + 1, cycles)

    def insert(self, after: int, text: str, source: str = "", duration: int = 4, stall: int = 0) -> None:
        rows = self.code
        at = next(k for k, r in enumerate(rows) if r[2] == after) + 1
        prev = rows[at - 1]
        vaddr = rows[at][5] if at < len(rows) else prev[5] + 4
        for r in rows[at:]:
            r[2] += 1
            r[5] += 4
        rows.insert(at, [text, 0, after + 1, source, prev[4], vaddr, *([0] * (len(prev) - 6))])
        for doc in self.waves.values():
            w = doc["wave"]
            ins = w["instructions"]
            for r in ins:
                if r[4] > after:
                    r[4] += 1
            k = 0
            while k < len(ins):
                if ins[k][4] == after:
                    t = ins[k + 1][0] if k + 1 < len(ins) else ins[k][0] + ins[k][3]
                    self._delay(w, k + 1, duration)
                    ins.insert(k + 1, [t, category(text), stall, duration, after + 1])
                    k += 1
                k += 1

    def retext(self, line: int, text: str) -> None:
        next(r for r in self.code if r[2] == line)[0] = text

    def shift_source(self, path: str, first: int, by: int) -> None:
        def move(frame: str) -> str:
            p, _, n = frame.rpartition(":")
            return f"{p}:{int(n) + by}" if p == path and n.isdigit() and int(n) >= first else frame

        for r in self.code:
            if r[3]:
                r[3] = " -> ".join(move(f.strip()) for f in r[3].split(" -> "))

    def jitter(self, seed: int, sigma: float) -> None:
        rng = random.Random(seed)
        for name in sorted(self.waves):
            w = self.waves[name]["wave"]
            for k, r in enumerate(w["instructions"]):
                if r[2] > 0:
                    d = max(-r[2], round(rng.gauss(0, sigma)))
                    r[2] += d
                    r[3] += d
                    self._delay(w, k + 1, d)

    # ------------------------------------------------------------------------------------------ write

    def save(self, dst: str) -> str:
        """Write the edited folder to `dst` (a copy of the source with the edited files replaced)."""
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(self.src, dst)
        # The GPU name comes from a rocprofv3 agent table next to the folder: keep it next to the copy.
        up, dst_up = os.path.dirname(os.path.abspath(self.src)), os.path.dirname(os.path.abspath(dst))
        for name in os.listdir(up):
            if name.endswith("_agent_info.csv") and not os.path.exists(os.path.join(dst_up, name)):
                shutil.copy(os.path.join(up, name), dst_up)
        ends = {}
        for name, doc in self.waves.items():
            w = doc["wave"]
            doc["duration"] = w["end"] - w["begin"]
            doc["num_insts"] = len(w["instructions"])
            ends[name] = w["end"]
        self._fix_code()
        self._fix_ends(ends)
        for name, doc in [*self.doc.items(), *self.waves.items()]:
            with open(os.path.join(dst, name), "w") as f:
                json.dump(doc, f, separators=(",", ":"))
        return dst

    def _fix_code(self) -> None:
        waves = [
            SimpleNamespace(begin=d["wave"]["begin"], insts=d["wave"]["instructions"]) for d in self.waves.values()
        ]
        acc = totals([r[:6] for r in self.code], waves)
        for r in self.code:
            r[6:10] = acc.get(r[2], [0, 0, 0, 0])

    def _fix_ends(self, ends: dict[str, int]) -> None:
        occ = self.doc["occupancy.json"]
        for se, simds in (self.doc["filenames.json"].get("wave_filenames") or {}).items():
            for simd, slots in simds.items():
                for slot, wvs in slots.items():
                    for entry in wvs.values():
                        old, new = entry[2], ends[entry[0]]
                        entry[2] = new
                        w = self.waves[entry[0]]["wave"]
                        for row in occ.get(se, []):
                            if (
                                isinstance(row, list)
                                and row[1:5] == [w["cu"], int(simd), int(slot), 0]
                                and row[0] == old
                            ):
                                row[0] = new


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--slow", action="append", default=[], metavar="LINE:CYCLES")
    ap.add_argument("--insert", action="append", default=[], metavar="AFTER:DURATION:STALL:TEXT")
    ap.add_argument("--jitter", metavar="SEED:SIGMA")
    a = ap.parse_args()
    f = Folder(a.src)
    for spec in a.slow:
        line, cycles = spec.split(":")
        f.slow_line(int(line), int(cycles))
    for spec in a.insert:
        after, duration, stall, text = spec.split(":", 3)  # the text last: it may hold ':'
        f.insert(int(after), text, "", int(duration), int(stall))
    if a.jitter:
        seed, sigma = a.jitter.split(":")
        f.jitter(int(seed), float(sigma))
    print(f.save(a.dst))


if __name__ == "__main__":
    main()
