"""Every crasher tools/fuzzers/fuzz.py found, kept as a regression fixture (tests/fixtures/fuzz/<kind>-<hash>/: the
case's files under in/, its command line and what it did in case.json): run again, each must now end in a
result or one clear error, never a traceback."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import FIXTURES, cli

CASES = sorted(p.parent for p in (FIXTURES / "fuzz").glob("*/case.json"))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fuzz_crasher_stays_fixed(tmp_path, case):
    meta = json.loads((case / "case.json").read_text())
    work = tmp_path / "in"
    shutil.copytree(case / "in", work)  # a command may write (timeline -o): never into the tree
    args = [a.replace("{in}", str(work)) for a in meta["args"]]
    r = cli(*args)
    assert "Traceback" not in r.stderr, (meta["found"], r.stderr)
    assert r.returncode in (0, 1, 3), (meta["found"], r.stderr)
    if r.returncode == 1:
        assert any(ln.startswith("attdec: error: ") for ln in r.stderr.splitlines()), r.stderr


def test_there_are_fixtures():
    assert len(CASES) >= 10
