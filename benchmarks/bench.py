#!/usr/bin/env python3
"""attdec's speed as ratios to its peers, each pair timed in the same run, interleaved (not a test).

    python3 benchmarks/bench.py                              # every case whose peer is here, 7 rounds
    python3 benchmarks/bench.py --only triage decode --rounds 9
    python3 benchmarks/bench.py --decoder DIR                # AMD's decoder: DIR/librocprof-trace-decoder.so + include/
    python3 benchmarks/bench.py --root ../other-tree         # attdec of another checkout against the same peers
    python3 benchmarks/bench.py --big 124M                   # also the streamed cases on a repeated blob of that size
    python3 benchmarks/bench.py --json out.json

A figure from another day or machine proves nothing here (2 shared cores), so every case is a group of
sides timed round after round in alternating order, and only ratios of their medians are reported, with the
load average before and after. The peers:
- FlyDSL's one-page `hotspot_analyzer.py` (../shared/tools/peers/), the script a user would pick instead for
  triage of a ui_output folder;
- AMD's decoder library driven from C (../shared/tools/peers/native/harness.c; the library is AMD's, under
  its licence: fetched for a run, never committed). Without `--decoder` its cases are skipped, saying why.
Sides: a fresh process (wall, process CPU and peak RSS from wait4), a snippet repeated in one process pinned to
one core after an untimed warm-up (the median of its runs), or the native harness's parse calls (its median).
Ratios are of process CPU: wall time on a shared machine says more about the neighbours than about attdec.
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
from collections.abc import Callable
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.abspath(os.environ.get("ATTDEC_SHARED", os.path.join(ROOT, "..", "shared")))
CAPTURES = os.path.join(SHARED, "captures")
SAMPLES = os.path.join(SHARED, "ui_output_samples")
PEERS = os.path.join(SHARED, "tools", "peers")
ANALYZER = os.path.join(PEERS, "flydsl_hotspot_analyzer.py")
NATIVE_JOBS = os.path.join(PEERS, "native", "jobs")
HEADLINE = ("gfx1200", "gemm_gfx1200_run0")  # the 4 MB capture: ~1M instruction records

# ---- in-process snippets: `setup` once, then run() timed; run() returns (bytes, records) --------------------
DECODE = """
import json, os
from attdec.sources.explicit import codemap
from attdec.decoders import decode_blob
jobs = []
for cap_dir in {caps!r}:
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

# `attdec hotspots` of one big raw blob: decoded in windows, its waves folded (what streaming costs)
HOTSPOTS_BLOB = """
import attdec
from attdec.analysis.hotspots import hotspots
def run():
    (d,) = attdec.open([{path!r}], code=[{code!r}], arch={arch!r}, jobs=1, fold="totals")
    h = hotspots([d])
    return os.path.getsize({path!r}), h.totals["hits"]
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
except ImportError:
    pass
{setup}
run()  # warm: imports, tables and caches a long-lived process has
cpu = []
for _ in range({runs}):
    c0 = time.process_time()
    nbytes, nrec = run()
    cpu.append(time.process_time() - c0)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"cpu": sorted(cpu)[len(cpu) // 2], "bytes": nbytes, "records": nrec, "rss": rss}}))
"""


@dataclass
class Sample:
    cpu: float  # seconds of process CPU
    wall: float = 0.0
    rss: float = 0.0  # MB


Side = Callable[[], Sample]


def fresh(cmd: list[str], cwd: str = ROOT, env: dict | None = None) -> Side:
    """A fresh process: its CPU (user + system) and peak RSS from wait4, its output read from a pipe."""

    def side() -> Sample:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert p.stdout is not None
        while p.stdout.read(1 << 16):
            pass
        _, status, use = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode:
            raise RuntimeError(f"{' '.join(map(str, cmd[:5]))} ...: exit status {p.returncode}")
        return Sample(use.ru_utime + use.ru_stime, time.perf_counter() - t0, use.ru_maxrss / 1024)

    return side


def in_process(setup: str, root: str, runs: int = 3) -> Side:
    """A snippet in a fresh process pinned to one core: set up once, run once untimed, then the median of `runs`."""
    code = CHILD.format(root=root, setup=textwrap.dedent(setup), runs=runs)

    def side() -> Sample:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env_for(root))
        if p.returncode:
            raise RuntimeError((p.stderr.strip().splitlines() or ["?"])[-1])
        r = json.loads(p.stdout.strip().splitlines()[-1])
        return Sample(r["cpu"], r["cpu"], r["rss"])

    return side


def native(harness: str, library: str, jobs: list[str], repeat: int = 3) -> Side:
    """AMD's decoder from C: the median process CPU of its parse calls, summed over `jobs` (one capture each)."""

    def side() -> Sample:
        total = 0.0
        for job in jobs:
            cmd = [harness, "--decoder", library, "--captures", CAPTURES, "--repeat", str(repeat), "--warmup", "1"]
            p = subprocess.run([*cmd, "--mode", "combined", "--quiet", "--json", "-", job], capture_output=True)
            if p.returncode:
                raise RuntimeError(f"native harness on {os.path.basename(job)}: {p.stderr.decode()[-300:]}")
            total += json.loads(p.stdout)["cpu_combined"]["median_ms"] / 1000
        return Sample(total, total)

    return side


def env_for(root: str) -> dict:
    return dict(os.environ, PYTHONPATH=root)


@dataclass
class Case:
    """Sides timed together; `ratios`: (name, numerator, denominator, bound, "max"|"min") over their medians,
    where a numerator or denominator may be "a-b" (a difference of two sides' medians)."""

    name: str
    sides: dict[str, Side]
    ratios: list[tuple[str, str, str, float, str]]
    note: str = ""
    metric: str = "cpu"  # "wall" where using more cores is the point
    results: dict[str, list[Sample]] = field(default_factory=dict)


def median(samples: list[Sample], metric: str = "cpu") -> float:
    return statistics.median(getattr(s, metric) for s in samples)


def measure(case: Case, rounds: int) -> None:
    """Every side once per round, the order rotated each round, so that all see the same minutes of load."""
    names = list(case.sides)
    for name in names:  # untimed: bytecode caches, page cache
        case.sides[name]()
    case.results = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        order = names[k:] + names[:k]
        if r % 2:
            order.reverse()
        for name in order:
            case.results[name].append(case.sides[name]())


def value(case: Case, expr: str) -> float:
    if "-" in expr:
        a, b = expr.split("-", 1)
        return median(case.results[a], case.metric) - median(case.results[b], case.metric)
    return median(case.results[expr], case.metric)


def job_for(capture: str) -> str:
    arch_folder, name = capture.split(os.sep)[-2:]
    return os.path.join(NATIVE_JOBS, f"{arch_folder}__{name}.job")


def captures() -> list[str]:
    return sorted(d for d, _, fs in os.walk(CAPTURES) if "capture.json" in fs)


def sample_folders() -> list[tuple[str, str]]:
    """(example, path) of every ui_output dispatch folder and .tar.xz archive of ../shared/ui_output_samples."""
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
        example = example.removesuffix(".tar.xz")
        if rel[0] == "jhinpan__flydsl-kernel-profiling":  # the earlier repository's two pa_mqa dispatches
            example += "-" + rel[-1].rsplit("_", 1)[-1]
        named.append((example, p))
    return named


def attdec_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "attdec", *args]


def build_cases(a, root: str, tmp: str) -> tuple[list[Case], list[str]]:
    """The cases of speed round 3's targets, and a line for each that cannot run here."""
    env = env_for(root)
    run = lambda *args: fresh(attdec_cmd(*args), root, env)
    cases: list[Case] = []
    skipped: list[str] = []
    headline = os.path.join(CAPTURES, *HEADLINE)
    native_side = None
    if a.decoder:
        harness, library = build_harness(a.decoder, tmp)
        native_side = lambda jobs, repeat=3: native(harness, library, jobs, repeat)
    else:
        skipped.append("decode-*, hotspots-fresh: AMD's decoder not given (--decoder DIR; see ../shared/tools/peers)")

    # 1: warm decode against native, the headline capture and all of them
    if native_side:
        cases.append(
            Case(
                "decode-gfx1200",
                {
                    "attdec": in_process(DECODE.format(caps=[headline]), root),
                    "native": native_side([job_for(headline)]),
                },
                [("attdec / native", "attdec", "native", 1.2, "max")],
                "warm, in process, one core",
            )
        )
        every = captures()
        cases.append(
            Case(
                f"decode-all-{len(every)}",
                {
                    "attdec": in_process(DECODE.format(caps=every), root),
                    "native": native_side([job_for(c) for c in every]),
                },
                [("attdec / native", "attdec", "native", 1.5, "max")],
                "warm, summed over every capture",
            )
        )
        # 2: a fresh command against a fresh native process (interpreter, imports and file reading included)
        harness_cmd = [harness, "--decoder", library, "--captures", CAPTURES, "--repeat", "1", "--warmup", "0"]
        cases.append(
            Case(
                "hotspots-fresh-gfx1200",
                {
                    "attdec": run("hotspots", headline, "--jobs", "1"),
                    "native": fresh([*harness_cmd, "--mode", "combined", "--quiet", job_for(headline)], root),
                },
                [("attdec / native", "attdec", "native", 2.5, "max")],
                "fresh processes",
            )
        )
    # 4: triage against the one-page script: whole commands, and the work beyond each one's fixed start
    if os.path.exists(ANALYZER):
        for example, path in sample_folders():
            sides = {"attdec": run("hotspots", path, "--top", "15")}
            if path.endswith(".tar.xz"):
                extracted = os.path.join(tmp, example)
                with tarfile.open(path) as t:
                    t.extractall(extracted, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
                folder = next(d for d, _, fs in os.walk(extracted) if "filenames.json" in fs)
                sides["analyzer"] = fresh([sys.executable, ANALYZER, folder, "--topk", "15", "--mode", "both"])
                cases.append(
                    Case(f"triage-{example}.tar.xz", sides, [("attdec / analyzer", "attdec", "analyzer", 2.0, "max")])
                )
                continue
            sides["analyzer"] = fresh([sys.executable, ANALYZER, path, "--topk", "15", "--mode", "both"])
            sides["libs"] = fresh([sys.executable, "-c", "import click, rich.console, rich.table"])
            sides["python"] = fresh([sys.executable, "-c", "pass"])
            cases.append(
                Case(
                    f"triage-{example}",
                    sides,
                    [
                        ("whole", "attdec", "analyzer", 2.0, "max"),
                        ("work beyond start", "attdec-libs", "analyzer-python", 1.0, "max"),
                    ],
                )
            )
    else:
        skipped.append(f"triage-*: no analyzer at {ANALYZER}")
    # 5: every analysis command on the headline capture against hotspots on it
    commands = {
        "waves": ["waves", headline],
        "waits": ["waits", headline],
        "latency": ["latency", headline],
        "cfg": ["cfg", headline],
        "loops": ["loops", headline],
        "kernel": ["kernel", headline],
        "decode-json": ["decode", headline, "--format", "json"],
        "timeline": ["timeline", headline, "-o", os.path.join(tmp, "t.json")],
        "report": ["report", headline, "-o", os.path.join(tmp, "r.html")],
    }
    for name, args in commands.items():
        cases.append(
            Case(
                f"command-{name}",
                {"command": run(*args, "--jobs", "1"), "hotspots": run("hotspots", headline, "--jobs", "1")},
                [(f"{name} / hotspots", "command", "hotspots", 1.5, "max")],
                "fresh processes, the 4 MB capture",
            )
        )
    # 5: --jobs 2 never slower than --jobs 1 while another process keeps a core busy
    cases.append(
        Case(
            "jobs-busy",
            {"jobs2": run("decode", CAPTURES, "--jobs", "2"), "jobs1": run("decode", CAPTURES, "--jobs", "1")},
            [("jobs 2 / jobs 1", "jobs2", "jobs1", 1.0, "max")],
            "wall time, beside a busy loop",
            metric="wall",
        )
    )
    if a.big:
        cases += big_cases(a.big, root, tmp, native_side)
    return cases, skipped


def big_cases(size_text: str, root: str, tmp: str, native_side) -> list[Case]:
    """Streamed: hotspots of gemm_gfx1200 SE0's body repeated to `size_text`, decoded in windows, against native
    on the same bytes."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from make_repeated_blob import make, size

    big = make(
        os.path.join(tmp, "big.att"), "/".join(HEADLINE), "r_32_16_8_16_4_4_256_4_3_se0.att", None, size(size_text)
    )
    sides: dict[str, Side] = {"attdec": in_process(HOTSPOTS_BLOB.format(**big), root, runs=1)}
    if native_side:
        sides["native"] = native_side([native_job(big, tmp)], repeat=1)
    ratios = [("attdec / native", "attdec", "native", 2.0, "max")] if native_side else []
    return [Case(f"streamed-hotspots-{size_text}", sides, ratios, f"{big['bytes'] >> 20} MB blob")]


def native_job(big: dict, tmp: str) -> str:
    """A job file for the native harness: the headline capture's PC table, one dispatch of the big blob."""
    with open(job_for(os.path.join(CAPTURES, *HEADLINE))) as f:
        lines = f.read().splitlines()
    kernel = next(ln for ln in lines if ln.startswith("kernel ") and "r_32_16" in ln).split()[1]
    keep = [ln for ln in lines if not ln.startswith(("dispatch ", "blob ", "end"))]
    rel = os.path.relpath(big["path"], CAPTURES)
    keep += [f"dispatch 0 {kernel} 1 1 big", f"blob 0 {big['bytes']} {rel}", "end"]
    path = os.path.join(tmp, "big.job")
    with open(path, "w") as f:
        f.write("\n".join(keep) + "\n")
    return path


def build_harness(decoder: str, tmp: str) -> tuple[str, str]:
    """Compile ../shared's harness against DIR/include; returns (harness, library)."""
    library = os.path.join(decoder, "librocprof-trace-decoder.so")
    if not os.path.exists(library):
        sys.exit(f"bench: no {library}")
    harness = os.path.join(tmp, "harness")
    src = os.path.join(PEERS, "native", "harness.c")
    cmd = ["cc", "-O2", "-std=c11", "-I", os.path.join(decoder, "include"), "-o", harness, src, "-ldl"]
    subprocess.run(cmd, check=True)
    return harness, os.path.abspath(library)


def busy_loop() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def report(case: Case) -> dict:
    rows = {}
    for label, num, den, bound, kind in case.ratios:
        r = value(case, num) / max(value(case, den), 1e-9)
        met = r <= bound if kind == "max" else r >= bound
        rows[label] = {"ratio": round(r, 3), "bound": bound, "met": met}
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", nargs="*", help="case names or prefixes (decode, triage, command, jobs, streamed)")
    ap.add_argument("--root", default=ROOT, help="the attdec tree to measure (default: this one)")
    ap.add_argument("--decoder", help="a folder with AMD's librocprof-trace-decoder.so and include/ (not shipped)")
    ap.add_argument("--big", metavar="SIZE", help="also streamed hotspots of a repeated blob of SIZE (124M, 1G)")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    if not os.path.isdir(CAPTURES):
        sys.exit(f"bench: no captures at {CAPTURES} (set ATTDEC_SHARED)")
    root = os.path.abspath(a.root)
    tmp = tempfile.mkdtemp(prefix="attdec-bench-")
    results = {}
    try:
        cases, skipped = build_cases(a, root, tmp)
        for line in skipped:
            print(f"skipped: {line}")
        print(f"{root}: {os.cpu_count()} cores, {a.rounds} rounds; median process CPU (s) unless noted")
        print(f"{'case':34} {'sides (median s)':44} {'ratio':28} {'met':>4} {'load':>11}")
        for c in cases:
            if a.only and not any(c.name == o or c.name.startswith(o) for o in a.only):
                continue
            load0 = os.getloadavg()[0]
            busy = busy_loop() if c.name == "jobs-busy" else None
            try:
                measure(c, a.rounds)
            except RuntimeError as e:
                print(f"{c.name:34} failed: {e}")
                continue
            finally:
                if busy:
                    busy.kill()
                    busy.wait()
            load1 = os.getloadavg()[0]
            rows = report(c)
            sides = " ".join(f"{n} {median(s, c.metric):.3f}" for n, s in c.results.items())
            ratio = "; ".join(f"{k} {v['ratio']:.2f} (<= {v['bound']})" for k, v in rows.items())
            met = "yes" if all(v["met"] for v in rows.values()) else "no"
            note = f"  {c.note}" if c.note else ""
            print(f"{c.name:34} {sides:44} {ratio:28} {met:>4} {load0:5.2f}-{load1:<5.2f}{note}")
            results[c.name] = {
                "sides": {n: [s.__dict__ for s in v] for n, v in c.results.items()},
                "ratios": rows,
                "load": [load0, load1],
                "note": c.note,
            }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
