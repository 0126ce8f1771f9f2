#!/usr/bin/env python3
"""The triage cases of bench.py counted in instructions (valgrind's callgrind), not seconds (not a test).

    python3 benchmarks/triage_instructions.py                    # this tree, every sample folder
    python3 benchmarks/triage_instructions.py --root ../main quant moe_reduce

On a shared 2-core machine the process CPU of a 0.1 s process moves by tens of percent with the neighbours'
load, and "work beyond start" is a difference of two such medians; the instructions a process executes do
not depend on the load. This counts, once each, the same fresh processes bench.py times: `attdec hotspots
X --top 15`, the analyzer on X (on the extracted folder for an archive), `python -c 'import click,
rich.console, rich.table'` and `python -c pass`, and prints bench.py's ratios over those counts. It is a
second view of the same targets, not a replacement: time also holds what instructions do not (page faults,
reading files, cache misses), and the targets are set in process CPU.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

from bench import ANALYZER, ROOT, cache_bytecode, env_for, sample_folders  # this folder is first on sys.path

COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(cmd: list[str], env: dict) -> float:
    """Millions of instructions `cmd` executes (user space, every library), its bytecode written by an untimed
    run first."""
    subprocess.run(cmd, env=env, capture_output=True, check=True)
    counted = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd]
    p = subprocess.run(counted, env=env, capture_output=True, text=True)
    m = COLLECTED.search(p.stderr)
    if p.returncode or not m:
        raise RuntimeError(f"{' '.join(cmd[:4])} ...: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return int(m.group(1)) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("only", nargs="*", help="sample names (or parts of them) to count; default all")
    ap.add_argument("--root", default=ROOT, help="the attdec tree to count (default: this one)")
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("triage_instructions: no valgrind on PATH")
    tmp = tempfile.mkdtemp(prefix="attdec-ir-")
    try:
        cache_bytecode(tmp)
        env = env_for(os.path.abspath(a.root))
        py = sys.executable
        start = instructions([py, "-c", "pass"], env)
        libs = instructions([py, "-c", "import click, rich.console, rich.table"], env)
        print(f"{a.root}: millions of instructions; python -c pass {start:.1f}, the import line {libs:.1f}")
        print(f"{'case':34} {'attdec':>8} {'analyzer':>9} {'whole':>6} {'beyond start':>13}")
        for example, path in sample_folders():
            if a.only and not any(o in example for o in a.only):
                continue
            folder = path
            if path.endswith(".tar.xz"):  # the analyzer reads the folder extracted, as in bench.py
                safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                with tarfile.open(path) as t:
                    t.extractall(os.path.join(tmp, example), **safe)
                folder = next(d for d, _, fs in os.walk(os.path.join(tmp, example)) if "filenames.json" in fs)
            try:
                mine = instructions([py, "-m", "attdec", "hotspots", path, "--top", "15"], env)
                peer = instructions([py, ANALYZER, folder, "--topk", "15", "--mode", "both"], env)
            except (RuntimeError, subprocess.CalledProcessError) as e:
                print(f"{'triage-' + example:34} failed: {e}")
                continue
            beyond = "" if folder != path else f"{(mine - libs) / (peer - start):13.2f}"
            name = "triage-" + example + (".tar.xz" if folder != path else "")
            print(f"{name:34} {mine:8.1f} {peer:9.1f} {mine / peer:6.2f} {beyond}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
