"""`attdec disasm`: JSON listing equal to LLVM's, labels, errors as one line."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import invoke

from tests.conftest import FIXTURES, ROOT, real_data, shared_path


def run(*args):
    return invoke(list(args))


@pytest.mark.parametrize(
    ("listing", "name"),
    [
        pytest.param("fixtures_llvm.json.gz", "dwarf5_gfx1100.co", id="fixture"),
        *(
            [pytest.param("captures_llvm.json.gz", "handwritten_run0/custom_handwritten.co", id="capture")]
            if real_data("captures", "gfx1201", "handwritten_run0")
            else []
        ),
    ],
)
def test_json_listing_matches_llvm(listing, name):
    entries = json.loads(gzip.open(FIXTURES / "isa" / listing, "rt").read())
    entry = next(e for e in entries if e["path"].endswith(name))
    path = ROOT / entry["path"] if listing.startswith("fixtures") else shared_path(entry["path"])
    r = run("disasm", str(path), "--arch", entry["arch"], "--format", "json")
    assert r.exit_code == 0, r.output
    got = [(i["address"], i["size"], i["text"]) for i in json.loads(r.output)["instructions"]]
    assert got == [(a, s, t) for a, s, t, _ in entry["instructions"]]


def test_text_listing_has_kernel_label_branch_label_and_source():
    r = run("disasm", str(FIXTURES / "isa" / "dwarf5_gfx1100.co"), "--kernel", "kern")
    assert r.exit_code == 0, r.output
    assert "kern:" in r.output and "s_cbranch_execz 23  <.LBB_1680>" in r.output
    assert "; ./k.cl:2 -> ./k.cl:5 -> ./k.cl:10 -> ./k.cl:7" in r.output
    assert "__clang_ocl_kern_imp_kern" not in r.output  # --kernel keeps to that kernel


def test_errors_are_one_line():
    r = run("disasm", "/no/such.co")
    assert r.exit_code == 1 and r.output.strip().endswith("/no/such.co: no such file")
    r = run("disasm", str(FIXTURES / "isa" / "dwarf5_gfx1100.co"), "--kernel", "nope")
    assert r.exit_code == 1 and "no kernel 'nope' (kernels: kern" in r.output
    r = run("disasm", str(FIXTURES / "isa" / "dwarf5_gfx1100.co"), "--arch", "gfx803")
    assert r.exit_code == 1 and "unknown architecture 'gfx803' (known: gfx908" in r.output
