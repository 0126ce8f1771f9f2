#!/usr/bin/env python3
"""Compare the decoders (every family, through decode_blob) with oracle.json, PC column optional.

Usage: PYTHONPATH=. python3 tools/oracles/oracle_check.py [--pc] [--timeline] CAPTURE_DIR...
Prints per dispatch: waves matched / exact, rows equal, occupancy equal, and the first differences.
"""

import collections
import gzip
import json
import os
import re
import sys

from attdec.decoders import decode_blob
from attdec.model import Category


def load(p):
    if os.path.exists(p):
        return json.load(open(p))
    if os.path.exists(p + ".gz"):
        return json.load(gzip.open(p + ".gz"))
    return None


def main():
    args = sys.argv[1:]
    use_pc = "--pc" in args or "--listing" in args
    use_listing = "--listing" in args
    use_tl = "--timeline" in args
    verbose = "-v" in args
    dirs = [a for a in args if not a.startswith("-")]
    tot = collections.Counter()
    for d in dirs:
        cap = load(os.path.join(d, "capture.json"))
        orc = load(os.path.join(d, "oracle.json"))
        if orc is None:
            continue
        code = None
        if use_listing:
            sys.path.insert(0, os.path.dirname(__file__))
            from listing_codemap import merged

            code = merged(
                [
                    (os.path.join(d, k["code_object"].rsplit(".", 1)[0] + ".llvm.s"), int(k["base_hex"], 16))
                    for k in cap["kernels"]
                ]
            )
        elif use_pc:
            from attdec.sources.explicit import codemap

            code = codemap(
                [f"{os.path.join(d, k['code_object'])}@{k['base_hex']}" for k in cap["kernels"]], cap["gfx_arch"]
            )
        od = {(x["kernel"], x["exec_tag"]): x for x in orc["dispatches"]}
        for disp in cap["dispatches"]:
            o = od.get((disp["kernel"], disp["exec_tag"]))
            if o is None:
                continue
            if use_listing:
                from listing_codemap import codemap_from_oracle

                code = codemap_from_oracle(o, code)
            waves, occ = [], []
            for b in disp["blobs"]:
                se = int(re.search(r"se(\d+)", b).group(1))
                r = decode_blob(open(os.path.join(d, b), "rb").read(), cap["gfx_arch"], code, se)
                waves += r.waves
                occ += [tuple(int(x) for x in row)[:6] for row in r.occupancy.tolist()]
            got = {(w.se, w.cu, w.simd, w.slot, w.begin): w for w in waves}
            c = collections.Counter()
            diffs = []
            sys.path.insert(0, "/work/shared/tools")
            from conformance import expected_from_oracle

            ew, _ = expected_from_oracle(o)
            alone = dict(ew.items())
            owaves = []
            for ow in o["waves"]:
                k = (ow["se"], ow["cu"], ow["simd"], ow["wave_id"], ow["begin_time"])
                if k in alone:
                    owaves.append(
                        dict(
                            ow,
                            instructions=[[r[0], 0, *list(r[1:])] for r in alone[k]["rows"]],
                            end_time=alone[k]["end_time"],
                        )
                    )
            for ow in owaves:
                k = (ow["se"], ow["cu"], ow["simd"], ow["wave_id"], ow["begin_time"])
                c["exp"] += 1
                erows = [[r[0] if use_pc else 0, r[2], r[3], r[4], r[5]] for r in ow["instructions"]]
                c["erows"] += len(erows)
                g = got.get(k)
                if g is None:
                    diffs.append(f"missing wave {k}")
                    continue
                grows = [
                    [
                        int(x["pc"]) if use_pc else 0,
                        int(x["time"]),
                        int(x["duration"]),
                        int(x["stall"]),
                        Category(x["category"]).name,
                    ]
                    for x in g.insts
                ]
                same = sum(a == b for a, b in zip(erows, grows))
                c["rows"] += same
                ok = same == len(erows) == len(grows) and g.end == ow["end_time"]
                if use_tl:
                    etl = [
                        (s["type"] if isinstance(s, dict) else s[0], s["duration"] if isinstance(s, dict) else s[1])
                        for s in ow.get("timeline", [])
                    ]
                    if etl != [tuple(x) for x in g.timeline]:
                        c["tl_diff"] += 1
                        if len(diffs) < 3:
                            diffs.append(f"timeline {k}: exp {etl[:8]} got {g.timeline[:8]}")
                c["exact"] += ok
                if not ok and len(diffs) < 6:
                    first = next(
                        (i for i, (a, b) in enumerate(zip(erows, grows)) if a != b), min(len(erows), len(grows))
                    )
                    diffs.append(
                        f"wave {k} end {g.end} vs {ow['end_time']} n {len(grows)} vs {len(erows)} first diff @{first}: "
                        f"exp {erows[max(0, first - 2) : first + 2]} got {grows[max(0, first - 2) : first + 2]}"
                    )
            c["extra"] = len(
                set(got) - {(w["se"], w["cu"], w["simd"], w["wave_id"], w["begin_time"]) for w in o["waves"]}
            )
            eo = collections.Counter(tuple(x[:6]) for x in o["occupancy"])
            go = collections.Counter(occ)
            c["eocc"] = sum(eo.values())
            c["occ"] = sum((eo & go).values())
            c["xocc"] = sum((go - eo).values())
            tot.update(c)
            status = (
                "ok"
                if c["exact"] == c["exp"] and c["occ"] == c["eocc"] and not c["xocc"] and not c["extra"]
                else "DIFF"
            )
            print(
                f"{d:45} {disp['kernel'][:20]:20} waves {c['exact']}/{c['exp']} rows {c['rows']}/{c['erows']} "
                f"occ {c['occ']}/{c['eocc']} xocc {c['xocc']} extra {c['extra']} tl {c['tl_diff']} {status}"
            )
            if status != "ok" or verbose:
                for x in diffs[:6]:
                    print("    ", x)
                if c["xocc"] or c["occ"] != c["eocc"]:
                    print("     occ missing", list((eo - go).items())[:4], "extra", list((go - eo).items())[:4])
    print("TOTAL", dict(tot))


if __name__ == "__main__":
    main()
