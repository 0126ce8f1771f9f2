#!/usr/bin/env python3
"""Compare attdec.decoders.gfx9.decode with a capture's oracle.json directly (no CLI), optionally ignoring PCs.

Usage: gfx9_oracle_check.py [--no-pc] [--target-cu N] CAPTURE_DIR...   (a development aid; conformance.py is the
acceptance test)
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from attdec.decoders import gfx9  # noqa: E402
from attdec.decoders.common import CodeMap  # noqa: E402
from attdec.model import CATEGORIES  # noqa: E402


def listing_map(cdir, cap):
    """Dev aid: a code map from the capture's llvm-objdump listing (what the official decoder was fed)."""
    from listing_codemap import merged
    return merged([(os.path.join(cdir, k["code_object"][:-3] + ".llvm.s"), k["base"]) for k in cap["kernels"]])


def code_map(cdir, cap):
    cm = CodeMap()
    try:
        from attdec.isa import disassemble, load_code_object
    except ImportError:
        return cm
    for k in cap["kernels"]:
        with open(os.path.join(cdir, k["code_object"]), "rb") as f:
            co = load_code_object(f.read(), k["code_object"])
        cm.add(disassemble(co.text, cap["gfx_arch"], co.text_vaddr), k["base"])
    return cm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("captures", nargs="+")
    ap.add_argument("--no-pc", action="store_true")
    ap.add_argument("--target-cu", type=int)
    ap.add_argument("--listing", action="store_true", help="code from the .llvm.s listing instead of attdec.isa")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    tot = collections.Counter()
    for cdir in a.captures:
        cap = json.load(open(os.path.join(cdir, "capture.json")))
        opath = os.path.join(cdir, "oracle.json")
        oracle = json.load(open(opath)) if os.path.exists(opath) else None
        cm = CodeMap() if a.no_pc else listing_map(cdir, cap) if a.listing else code_map(cdir, cap)
        for disp in cap["dispatches"]:
            waves, occ, dt = [], [], 0.0
            for b in disp["blobs"]:
                se = int(re.search(r"se(\d+)", b).group(1))
                data = open(os.path.join(cdir, b), "rb").read()
                t0 = time.perf_counter()
                r = gfx9.decode(data, cap["gfx_arch"], cm, se, a.target_cu, where=b)
                dt += time.perf_counter() - t0
                for p in r.problems:
                    print("  problem:", p)
                waves += r.waves
                occ += [tuple(int(x) for x in o)[:6] for o in r.occupancy]
            tot["seconds"] += dt
            if oracle is None:
                print(f"{cdir}: no oracle; {len(waves)} waves, {len(occ)} occupancy rows, {dt:.3f}s")
                continue
            exp = next(d for d in oracle["dispatches"] if d["exec_tag"] == disp["exec_tag"] and d["kernel"] == disp["kernel"])
            got = {(w.se, w.cu, w.simd, w.slot, w.begin): w for w in waves}
            c = collections.Counter()
            for ew in exp["waves"]:
                k = (ew["se"], ew["cu"], ew["simd"], ew["wave_id"], ew["begin_time"])
                c["exp_waves"] += 1
                c["exp_rows"] += len(ew["instructions"])
                g = got.get(k)
                if g is None:
                    c["missing"] += 1
                    if a.v:
                        print("  missing wave", k)
                    continue
                grows = [[int(i["pc"]), int(i["time"]), int(i["duration"]), int(i["stall"]), CATEGORIES[i["category"]]]
                         for i in g.insts]
                erows = [[r[0], r[2], r[3], r[4], r[5]] for r in ew["instructions"]]
                if a.no_pc:
                    grows = [r[1:] for r in grows]
                    erows = [r[1:] for r in erows]
                same = sum(x == y for x, y in zip(grows, erows))
                c["same_rows"] += same
                ok = same == len(erows) == len(grows) and g.end == ew["end_time"]
                c["exact"] += ok
                if not ok and a.v:
                    print("  wave", k, "end", g.end, ew["end_time"], "rows", len(grows), len(erows))
                    for i, (x, y) in enumerate(zip(grows, erows)):
                        if x != y:
                            print("    first diff at", i, "got", x, "exp", y)
                            break
            c["extra_waves"] = len(set(got) - {(w["se"], w["cu"], w["simd"], w["wave_id"], w["begin_time"]) for w in exp["waves"]})
            eo = collections.Counter(tuple(o[:6]) for o in exp["occupancy"])
            go = collections.Counter((o[0], o[1], o[2], o[3], o[4], o[5]) for o in occ)
            c["exp_occ"] = sum(eo.values())
            c["same_occ"] = sum((eo & go).values())
            c["extra_occ"] = sum((go - eo).values())
            print(f"{cdir}: waves {c['exact']}/{c['exp_waves']} rows {c['same_rows']}/{c['exp_rows']} "
                  f"occ {c['same_occ']}/{c['exp_occ']} extra waves {c['extra_waves']} extra occ {c['extra_occ']} {dt:.3f}s")
            tot.update(c)
    print("TOTAL", dict(tot))


if __name__ == "__main__":
    main()
