#!/usr/bin/env python3
"""Speed and memory of attdec on the project's real data, beside the reference figures of issue 12 (not part
of the test suite: nothing here passes or fails a build).

    python3 benchmarks/bench.py                       # every case (data from ../shared or $ATTDEC_SHARED)
    python3 benchmarks/bench.py --only help hotspots-vec_add --runs 9
    python3 benchmarks/bench.py --root /path/to/other/checkout  # the same cases on another tree (before/after)
    python3 benchmarks/bench.py --big                 # also the synthetic 1 GB RDNA and gfx9 blobs (minutes, disk, RAM)
    python3 benchmarks/bench.py --big --big-size 256M --big-family gfx9 --only waves hotspots

Two kinds of case. Command-line cases run `python -m attdec ARGS` in a fresh process per run, output to a
pipe, from the tree's root, after one untimed run (it writes the bytecode caches an installed package has;
--no-pyc measures without them); CPU and peak RSS are that process's. In-process cases run a snippet in a
fresh Python process pinned to one core: setup once (imports, reading files), then the timed part --runs
times. Columns: wall median / min / max, CPU median, MB/s and records/s from the median, seconds per million
records, peak RSS, the load average when the case ran, the reference figure and the target (`met`: the
median is at most the target). The machines are shared (2 cores): compare runs made at similar load, or
alternate two trees with --root.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.abspath(os.environ.get("ATTDEC_SHARED", os.path.join(ROOT, "..", "shared")))
CAPTURES = os.path.join(SHARED, "captures")
SAMPLES = os.path.join(SHARED, "ui_output_samples")

# ---- reference figures (issue 12; measured on this machine class, 2 shared cores) ----------------------
# FlyDSL's hotspot_analyzer.py (standard library only, reads code.json), `--topk 15`, fresh process, output
# to a pipe, medians at load ~2.5. Target 1: attdec hotspots DIR --top 15 takes at most as long.
ANALYZER = {
    "blockscale_preshuffle_gemm": 0.106,
    "flash_attn_func": 0.098,
    "fused_rope_cache": 0.068,
    "hgemm_splitk": 0.102,
    "layernorm": 0.102,
    "mla_decode": 0.145,
    "moe_blockscale": 0.144,
    "moe_gemm": 0.146,
    "pa": 0.167,
    "pa_mqa_logits_fp4": 0.135,
    "quant": 0.106,
    "rmsnorm": 0.120,
    "topk_gating_softmax": 0.104,
    "vec_add": 0.073,
    "moe_reduce": 0.112,  # extracted
}
ANALYZER_HELP = 0.077
NATIVE_GFX1200 = "AMD native (C) 0.10-0.16 s"
NATIVE_ALL = "AMD native (C) 0.15-0.17 s for all 59"
NATIVE_GFX9 = "AMD native ~0.17 s (2.1-2.45 s = 12-14x)"

# ---- in-process snippets: `setup` once, then run() -> (bytes processed, records produced) timed ----------
DECODE = """
import json, os
from attdec.sources.explicit import codemap
from attdec.decoders import decode_blob
caps = {caps!r}
jobs = []
for cap_dir in caps:
    cap = json.load(open(os.path.join(cap_dir, "capture.json")))
    for d in cap["dispatches"]:
        codes = [os.path.join(cap_dir, k["code_object"]) + "@" + k["base_hex"] for k in cap["kernels"]
                 if k["name"] == d["kernel"]]
        blobs = [(b, open(os.path.join(cap_dir, b), "rb").read()) for b in d["blobs"]]
        jobs.append((codes, blobs, cap["gfx_arch"]))
def run():
    nbytes = nrec = 0
    for codes, blobs, arch in jobs:
        code = codemap(codes, arch)
        for name, data in blobs:
            se = int(name.rsplit("_se", 1)[1].split(".")[0])
            r = decode_blob(data, arch, code, se, where=name)
            nbytes += len(data)
            nrec += sum(len(w.insts) for w in r.waves) + len(r.occupancy)
    return nbytes, nrec
"""

BLOB = """
from attdec.sources.explicit import codemap
from attdec.decoders import decode_blob
data = open({path!r}, "rb").read()
code = codemap([{code!r}], {arch!r})
def run():
    r = decode_blob(data, {arch!r}, code, 0, where={path!r})
    return len(data), sum(len(w.insts) for w in r.waves) + len(r.occupancy)
"""

# `attdec hotspots` of a raw blob: decoded in windows (attdec.decoders.{rdna,gfx9}.windowed), its waves folded
HOTSPOTS_BLOB = """
from attdec.analysis.hotspots import hotspots
from attdec.sources.pipeline import open_dispatches
def run():
    more = {{"before_decode": lambda raws: tune_allocator(raws, "totals")}} if tune_allocator else {{}}
    (d,) = open_dispatches([{path!r}], code=[{code!r}], arch={arch!r}, jobs=1, fold="totals", **more)
    h = hotspots([d])
    return os.path.getsize({path!r}), h.totals["hits"] + len(d.occupancy)
"""

# `attdec waves` of a raw blob as the command line runs it (decoded in windows, its waves folded into columns,
# no occupancy kept), its table (the default format) to /dev/null
WAVES_BLOB = """
from attdec.cli import run as attdec
def run():
    status = attdec(["waves", {path!r}, "--code", {code!r}, "--arch", {arch!r}, "--jobs", "1", "-o", os.devnull])
    if status:
        raise SystemExit(f"attdec waves: exit status {{status}}")
    return os.path.getsize({path!r}), 0
"""

# `attdec decode --format json` of gemm_gfx1200_run0 without the decoding: the writer alone, into a sink
JSON_WRITER = """
from attdec.sources.pipeline import open_raw
from attdec.sources.raw import decode_blobs
from attdec.report import records
raws = open_raw([{cap!r}])
decoded = [(r.name, [(b.label, res, dt) for b, res, dt in decode_blobs(r)]) for r in raws]
n = sum(len(w.insts) for _, rs in decoded for _, res, _ in rs for w in res.waves)
class Sink:
    size = 0
    def write(self, s):
        Sink.size += len(s)
def run():
    Sink.size = 0
    records.write_json(((name, iter(rs)) for name, rs in decoded), Sink())
    return Sink.size, n
"""

# CPython's floor for the same output: json.dumps of the records as lists (made from the arrays, as any
# writer must), one list per wave
JSON_FLOOR = """
import json
from attdec.model import Category
from attdec.sources.pipeline import open_raw
from attdec.sources.raw import decode_blobs
raws = open_raw([{cap!r}])
waves = [w for r in raws for _, res, _ in decode_blobs(r) for w in res.waves]
names = [c.name for c in Category]
def run():
    size = n = 0
    for w in waves:
        a = w.insts
        rows = [[p, t, d, s, names[c]] for p, t, d, s, c in zip(
            a["pc"].tolist(), a["time"].tolist(), a["duration"].tolist(), a["stall"].tolist(), a["category"].tolist())]
        size += len(json.dumps(rows))
        n += len(rows)
    return size, n
"""

DISASM = """
import json, os
from attdec.isa import disassemble, load_code_object
path = {path!r}
co = load_code_object(open(path, "rb").read())
arch = co.arch or json.load(open(os.path.join(os.path.dirname(path), "capture.json")))["gfx_arch"]
def run():
    return len(co.text), len(disassemble(co.text, arch, co.text_vaddr))
"""

CHILD = """
import os, resource, sys, time, json
sys.path.insert(0, {root!r})
os.chdir({root!r})
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {{min(os.sched_getaffinity(0))}})  # one core
try:  # glibc's malloc set for whole-blob decodes, as the command line sets it before it decodes
    from attdec.commands.common import tune_allocator
    tune_allocator()
except ImportError:  # a tree from before it
    tune_allocator = None
{setup}
times, cpu = [], []
for _ in range({runs}):
    t0, c0 = time.perf_counter(), time.process_time()
    nbytes, nrec = run()
    times.append(time.perf_counter() - t0); cpu.append(time.process_time() - c0)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"times": times, "cpu": cpu, "bytes": nbytes, "records": nrec, "peak_rss_mb": rss}}))
"""


class Case:
    """A command line (`cli`: the args of `python -m attdec`) or an in-process snippet (`setup`). `folder`:
    a ui_output dispatch folder the analyzer (--analyzer) can be timed on beside it."""

    def __init__(self, name, ref="", target=None, cli=None, setup=None, nbytes=0, runs=None, note="", folder=None):
        self.name, self.ref, self.target, self.cli, self.setup = name, ref, target, cli, setup
        self.nbytes, self.runs, self.note, self.folder = nbytes, runs, note, folder


def folder_bytes(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def samples() -> list[tuple[str, str]]:
    """(case name, path) of every ui_output dispatch folder and archive in ../shared/ui_output_samples."""
    out = []
    for d, dirs, files in os.walk(SAMPLES):
        dirs.sort()
        if "filenames.json" in files:
            out.append(d)
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".tar.xz")]
    named = []
    for p in out:
        rel = os.path.relpath(p, SAMPLES).split(os.sep)
        example = rel[2] if len(rel) > 2 and rel[1] == "examples" else rel[-1]
        name = f"hotspots-{example}" + (".tar.xz" if p.endswith(".tar.xz") else "")
        if rel[0] == "jhinpan__flydsl-kernel-profiling":  # the earlier repository's two big pa_mqa dispatches
            name += "-" + rel[-1].rsplit("_", 1)[-1]
        named.append((name, p))
    return named


def cases(tmp: str) -> list[Case]:
    cap = lambda *p: os.path.join(CAPTURES, *p)
    out = [
        Case("help", f"0.564 s before; analyzer --help {ANALYZER_HELP}", 0.15, cli=["--help"]),
        Case("help-hotspots", f"0.510 s before; analyzer --help {ANALYZER_HELP}", 0.15, cli=["hotspots", "--help"]),
        Case("help-decode", "0.375 s before", None, cli=["decode", "--help"]),
    ]
    for name, path in samples():
        example = name.removeprefix("hotspots-").split("-")[0].removesuffix(".tar.xz")
        if path.endswith(".tar.xz"):
            out.append(
                Case(name, "2.24-2.5 s before", 0.5, cli=["hotspots", path, "--top", "15"], nbytes=folder_bytes(path))
            )
            extracted = os.path.join(tmp, "extracted")
            with tarfile.open(path) as t:
                t.extractall(extracted, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
            ref = ANALYZER.get(example)
            out.append(
                Case(
                    f"hotspots-{example}",
                    f"analyzer {ref} s",
                    0.15,
                    cli=["hotspots", extracted, "--top", "15"],
                    nbytes=folder_bytes(extracted),
                    folder=next(os.path.join(d, "") for d, _, fs in os.walk(extracted) if "filenames.json" in fs),
                )
            )
            continue
        ref = ANALYZER.get(example)
        out.append(
            Case(
                name,
                f"analyzer {ref} s" if ref else "",
                ref,
                cli=["hotspots", path, "--top", "15"],
                nbytes=folder_bytes(path),
                folder=path if ref else None,
            )
        )
    gfx1200 = cap("gfx1200", "gemm_gfx1200_run0")
    out.append(Case("decode-gfx1200", NATIVE_GFX1200, 0.17, setup=DECODE.format(caps=[gfx1200]), note="stretch 0.11"))
    every = sorted(
        os.path.dirname(os.path.join(d, "capture.json")) for d, _, fs in os.walk(CAPTURES) if "capture.json" in fs
    )
    out.append(Case(f"decode-all-{len(every)}-captures", NATIVE_ALL, 0.5, setup=DECODE.format(caps=every)))
    # target 7: the same through the command line and the input pipeline, serial and on two worker processes
    # (--jobs 2 must take at most 1/1.7 of --jobs 1 on two idle cores; compare the two medians)
    att_bytes = sum(os.path.getsize(os.path.join(d, f)) for d in every for f in os.listdir(d) if f.endswith(".att"))
    for jobs in (1, 2):
        out.append(
            Case(
                f"decode-cli-all-captures-jobs{jobs}",
                "attdec decode CAPTURES (text summary), fresh process",
                None,
                cli=["decode", CAPTURES, "--jobs", str(jobs)],
                nbytes=att_bytes,
            )
        )
    # the commands people run on a raw capture (code objects disassembled, decoded, listed, reported)
    ops = cap("gfx1100", "ops_run0")
    for command, path in (("hotspots", gfx1200), ("waves", gfx1200), ("hotspots", ops)):
        blobs = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path) if f.endswith(".att"))
        name = f"{command}-raw-{os.path.basename(os.path.dirname(path))}-{os.path.basename(path)}"
        out.append(Case(name, "fresh process, --jobs 1", None, cli=[command, path, "--jobs", "1"], nbytes=blobs))
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from make_repeated_blob import make

    g9 = make(os.path.join(tmp, "gfx950_x2000.att"), "gfx950/gemm_run0", "r_32_32_16_2_1_se0.att", 2000, None)
    out.append(
        Case(
            "decode-gfx9-9.7MB", NATIVE_GFX9, 0.52, setup=BLOB.format(path=g9["path"], code=g9["code"], arch=g9["arch"])
        )
    )
    out.append(Case("decode-gfx950", "", None, setup=DECODE.format(caps=[cap("gfx950", "gemm_run0")])))
    out.append(Case("decode-gfx1100", "", None, setup=DECODE.format(caps=[cap("gfx1100", "gemm_run0")])))
    out.append(Case("json-writer", "~1.0 s/1M records before", None, setup=JSON_WRITER.format(cap=gfx1200)))
    out.append(Case("json-floor", "CPython's json.dumps of the same rows", None, setup=JSON_FLOOR.format(cap=gfx1200)))
    cos = [os.path.join(d, f) for d, _, fs in os.walk(CAPTURES) for f in fs if f.endswith(".co")]
    if cos:
        out.append(Case("disasm-largest", "", None, setup=DISASM.format(path=max(cos, key=os.path.getsize))))
    return out


def child_env(pyc: bool, root: str) -> dict:
    env = dict(os.environ, PYTHONPATH=root)
    if pyc:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(cmd: list[str], cwd: str, env: dict) -> tuple[float, float, float, int]:
    """(wall, CPU, peak RSS MB, exit status) of one fresh process, its output read from a pipe."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdout.read()
    _, status, use = os.wait4(p.pid, 0)
    return (
        time.perf_counter() - t0,
        use.ru_utime + use.ru_stime,
        use.ru_maxrss / 1024,
        os.waitstatus_to_exitcode(status),
    )


def run_cli(case: Case, root: str, runs: int, pyc: bool, analyzer: str | None) -> dict:
    """`python -m attdec ARGS` `runs` times after an untimed one; with `analyzer` (FlyDSL's
    hotspot_analyzer.py) and a folder, the analyzer on it alternately, so both see the same load."""
    env = child_env(pyc, root)
    cmd = [sys.executable, "-m", "attdec", *map(str, case.cli)]
    other = (
        [sys.executable, analyzer, case.folder, "--topk", "15", "--mode", "both"] if analyzer and case.folder else None
    )
    times, cpu, rss, codes, theirs = [], [], [], set(), []
    for i in range(runs + 1):  # the first run writes bytecode caches and warms the page cache: not timed
        dt, c, m, code = timed(cmd, root, env)
        codes.add(code)
        if i:
            times.append(dt)
            cpu.append(c)
            rss.append(m)
        if other:
            dt, *_ = timed(other, root, env)
            if i:
                theirs.append(dt)
    if codes != {0}:
        raise RuntimeError(f"exit status {sorted(codes)}")
    out = {"times": times, "cpu": cpu, "bytes": case.nbytes, "records": 0, "peak_rss_mb": max(rss)}
    if theirs:
        out["analyzer_median"] = statistics.median(theirs)
    return out


def run_inproc(case: Case, root: str, runs: int) -> dict:
    code = CHILD.format(root=root, setup=textwrap.dedent(case.setup), runs=case.runs or runs)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(True, root))
    if p.returncode:
        raise RuntimeError((p.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(p.stdout.strip().splitlines()[-1])


BIG_SOURCES = {  # family -> (capture, blob) whose body is repeated
    "rdna": ("gfx1200/gemm_gfx1200_run0", "r_32_16_8_16_4_4_256_4_3_se0.att"),
    "gfx9": ("gfx950/gemm_run0", "r_32_32_16_2_1_se0.att"),
}


def big_blob(tmp: str, root: str, size: int = 1 << 30, family: str = "rdna") -> tuple[list[Case], str]:
    """A synthetic big blob of `family` (gfx1200 gemm SE0's or gfx950 gemm SE0's body repeated to `size`
    bytes, 1 GB by default): `hotspots` and `waves` of it (decoded in windows, target: peak RSS under 1 GB),
    and its whole decode to memory when the memory that needs (bytes of RAM per input byte, measured on a
    16 MB copy) is available, else a note saying what it costs."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from make_repeated_blob import make

    args = BIG_SOURCES[family]
    label = f"{size >> 30}GB" if size >= 1 << 30 else f"{size >> 20}MB"
    probe = make(os.path.join(tmp, f"{family}_16M.att"), *args, None, 16 << 20)
    r = run_inproc(
        Case("probe", setup=BLOB.format(path=probe["path"], code=probe["code"], arch=probe["arch"]), runs=1), root, 1
    )
    per_byte = r["peak_rss_mb"] * 2**20 / probe["bytes"]
    need = per_byte * size / 2**30
    with open("/proc/meminfo") as f:
        avail = next(int(ln.split()[1]) for ln in f if ln.startswith("MemAvailable")) / 2**20
    note = (
        f"16 MB copy: {r['times'][0]:.2f} s, peak {r['peak_rss_mb']:.0f} MB ({per_byte:.0f} bytes of RAM per input "
        f"byte): {label} would need ~{need:.0f} GB, {avail:.1f} GB available"
    )
    big = make(os.path.join(tmp, f"{family}_{label}.att"), *args, None, size)
    where = {"path": big["path"], "code": big["code"], "arch": big["arch"]}
    cases = [
        Case(f"{command}-{family}-{label}", "peak RSS < 1 GB for 1 GB (issue 12 target 6)", None,
             setup=setup.format(**where), runs=1, note=what)
        for command, setup, what in (
            ("hotspots", HOTSPOTS_BLOB, "decoded in windows, waves folded"),
            ("waves", WAVES_BLOB, "the command, its table to /dev/null"),
        )
    ]  # fmt: skip
    if need > 0.8 * avail:
        return cases, note + ": whole decode to memory skipped"
    cases.append(Case(f"decode-{family}-{label}", note, None, setup=BLOB.format(**where), runs=1))
    return cases, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", nargs="*", help="case names (or prefixes: hotspots, waves, decode) to run")
    ap.add_argument("--root", default=ROOT, help="the attdec tree to measure (default: this one)")
    ap.add_argument("--no-pyc", action="store_true", help="command-line cases without bytecode caches")
    ap.add_argument("--big", action="store_true", help="also the synthetic 1 GB blobs (RDNA, gfx9)")
    ap.add_argument(
        "--big-size", default="1G", help="their size (1G, 256M, ...): `hotspots-rdna-<size>`, `decode-gfx9-<size>`..."
    )
    ap.add_argument("--big-family", nargs="*", choices=sorted(BIG_SOURCES), default=sorted(BIG_SOURCES))
    ap.add_argument(
        "--analyzer",
        help="FlyDSL's hotspot_analyzer.py (not shipped): timed on each folder alternately with attdec, and the "
        "target becomes its median at this load",
    )
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    if not os.path.isdir(CAPTURES):
        sys.exit(f"no captures at {CAPTURES} (set ATTDEC_SHARED)")
    root = os.path.abspath(a.root)
    results = {}
    tmp = tempfile.mkdtemp(prefix="attdec-bench-")
    try:
        todo = cases(tmp)
        if a.big:
            sys.path.insert(0, os.path.join(ROOT, "tools"))
            from make_repeated_blob import size as parse_size

            for family in a.big_family:
                big, note = big_blob(tmp, root, parse_size(a.big_size), family)
                todo += big
                if note:
                    name = big[0].name.replace("hotspots", "decode")
                    print(f"{name}: {note}")
                    results[name] = {"skipped": note}
        print(
            f"{root}: load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; wall seconds, CPU = process time"
        )
        print(
            f"{'case':36} {'median':>7} {'min':>6} {'max':>6} {'CPU':>6} {'MB/s':>7} {'records/s':>11} {'s/1M':>6} "
            f"{'MB':>5} {'load':>5}  {'target':>6} met  reference"
        )
        for c in todo:
            if a.only and not any(c.name == o or c.name.startswith(o + "-") for o in a.only):
                continue
            try:
                r = run_cli(c, root, a.runs, not a.no_pyc, a.analyzer) if c.cli else run_inproc(c, root, a.runs)
            except RuntimeError as e:
                print(f"{c.name:36} failed: {e}")
                continue
            med = statistics.median(r["times"])
            if "analyzer_median" in r:  # measured beside it: the target is the analyzer at this load
                c.target = round(r["analyzer_median"], 3)
                c.ref = f"analyzer {r['analyzer_median']:.3f} s here ({c.ref.removeprefix('analyzer ')} in the issue)"
            r.update(median=med, min=min(r["times"]), max=max(r["times"]), cpu_median=statistics.median(r["cpu"]))
            r.update(load=os.getloadavg()[0], reference=c.ref, target=c.target)
            results[c.name] = r
            met = "-" if c.target is None else ("yes" if med <= c.target else "no")
            rec = r["records"]
            print(
                f"{c.name:36} {med:7.3f} {r['min']:6.3f} {r['max']:6.3f} {r['cpu_median']:6.3f} "
                f"{r['bytes'] / med / 1e6:7.2f} {rec / med if rec else 0:11,.0f} "
                f"{med / rec * 1e6 if rec else 0:6.3f} {r['peak_rss_mb']:5.0f} {r['load']:5.2f}  "
                f"{c.target if c.target is not None else '':>6} {met:>3}  {c.ref}{'; ' + c.note if c.note else ''}"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
