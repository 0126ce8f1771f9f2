"""Start-up imports only what the command needs: `--help` of every command, and `hotspots` on a ui_output
folder (its listing is the whole report), run without numpy or dataclasses (click and rich, the command
line's own libraries, are allowed). A fresh
process each, since a test session has imported everything already. Nothing here is timed (benchmarks/bench.py
is)."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile

import pytest
from conftest import FIXTURES, ROOT

from attdec.cli import COMMANDS

HEAVY = ("numpy", "dataclasses")  # dataclasses: ~9 ms to import, ~1 ms a class (model/record.py)
TINY = FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3"


def imported(*args) -> tuple[int, list[str]]:
    """(exit status, whether numpy was imported) of `attdec ARGS` in a fresh interpreter."""
    code = (
        "import json, sys\n"
        "from attdec.cli import run\n"
        f"rc = run({[str(a) for a in args]!r})\n"
        "sys.stderr.write(json.dumps([rc, [m for m in ['numpy'] if m in sys.modules]]))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    rc, heavy = json.loads(p.stderr.strip().splitlines()[-1])
    return rc, heavy


@pytest.mark.parametrize("args", [["--help"], ["--version"], *([name, "--help"] for name in COMMANDS)])
def test_help_imports_nothing_heavy(args):
    code = "import json, sys\nfrom attdec.cli import run\n"
    code += f"try:\n    run({args!r})\nexcept SystemExit:\n    pass\n"
    code += f"sys.stderr.write(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert json.loads(p.stderr.strip().splitlines()[-1]) == [], args


def test_hotspots_on_a_folder_reads_its_listing_without_numpy(tmp_path):
    """(rich, which draws the tables, brings dataclasses: only numpy is counted here)"""
    assert imported("hotspots", TINY) == (0, [])
    assert imported("hotspots", TINY, "--format", "json", "--by", "instruction") == (0, [])
    assert imported("hotspots", TINY.parent, "--format", "csv") == (0, [])  # a parent: every kind's detect
    # a wave filter replays the waves: numpy (and what comes with it)
    rc, heavy = imported("hotspots", TINY, "--se", "1")
    assert rc == 0 and "numpy" in heavy
    arc = tmp_path / "d.tar.xz"
    with tarfile.open(arc, "w:xz") as tar:
        tar.add(TINY, arcname=TINY.name)
    assert imported("hotspots", arc) == (0, [])


def test_walking_a_parent_imports_no_other_kind_reader():
    """Every kind's detect is asked about every entry of a walked folder: detection imports no reader
    (csv for rocprofv3 tables, the raw-dispatch model, the worker pool; pickle and decimal, the tinygrad reader's,
    are not counted: rich imports them)."""
    code = (
        "import json, sys\n"
        "from attdec.cli import run\n"
        f"rc = run(['hotspots', {str(TINY.parent)!r}])\n"
        "mods = ['csv', 'attdec.sources.raw', 'attdec.sources.parallel']\n"
        "sys.stderr.write(json.dumps([rc, [m for m in mods if m in sys.modules]]))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert json.loads(p.stderr.strip().splitlines()[-1]) == [0, []]
