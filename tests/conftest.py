"""Shared test helpers: where the project's real data (../shared) lives, and a skip when it is absent."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = Path(os.environ.get("ATTDEC_SHARED", ROOT.parent / "shared")).resolve()


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the test with the reason when that data is not on this machine."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"real data not present: {p} (set ATTDEC_SHARED to the shared/ folder)")
    return p


@dataclass
class Run:
    """What a command-line run left: exit status and the two streams (a traceback lands in stderr)."""

    returncode: int
    stdout: str
    stderr: str


def cli(*args, cwd=None) -> Run:
    """`attdec ARGS` in this process (click's CliRunner; counted by coverage), from folder `cwd`."""
    from click.testing import CliRunner

    from attdec.cli import main

    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        r = CliRunner().invoke(main, [str(a) for a in args])
    finally:
        os.chdir(old)
    err = r.stderr
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        err += "Traceback (most recent call last):\n" + "".join(traceback.format_exception(r.exception))
    return Run(r.exit_code, r.stdout, err)


def run_decode(*args, cwd=None) -> Run:
    """`attdec decode ARGS` (what the conformance tool runs)."""
    return cli("decode", *args, cwd=cwd)


def run_subprocess(*args, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    """`python -m attdec ARGS` in a fresh process of this tree: for what only a real process shows
    (exit on a closed pipe, what a terminal sees, start-up imports)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "attdec", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def one_line_error(p, *words: str) -> None:
    """The CLI refused the input the way users must see it: exit 1, one `attdec: error:` line naming `words`."""
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attdec: error:"), p.stderr
    for w in words:
        assert w in lines[0], lines[0]


@functools.cache
def decoded(path: Path) -> tuple:
    """The dispatches at a real-data path, opened once per test session (analyses only read them)."""
    from attdec.sources.pipeline import open_dispatches

    return tuple(open_dispatches([path]))
