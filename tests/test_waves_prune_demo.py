"""waves, prune-empty and demo on the synthesized fixtures (figures from tools/makers/make_fixtures.py)."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import FIXTURES, ROOT, SHARED, invoke, real_data

TINY = FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3"
DEMO = ROOT / "attdec" / "data" / "demo"


def run(*args, code=0):
    r = invoke([str(a) for a in args])
    assert r.exit_code == code, r.output
    return r.output


def test_waves_json():
    w = json.loads(run("waves", TINY, "--format", "json"))["waves"]
    assert [(x["se"], x["simd"], x["slot"], x["wave"], x["cu"], x["begin"], x["end"]) for x in w] == [
        (0, 0, 0, 0, 1, 100, 524),
        (1, 2, 1, 0, 1, 200, 528),
        (1, 2, 1, 1, 1, 600, 780),
    ]
    assert [x["stall"] for x in w] == [368, 272, 128]
    assert [x["instructions"] for x in w] == [8, 8, 8]
    assert all(x["dominant_type"] == "VMEM-wait" for x in w)
    assert abs(w[0]["stall_share"] - 368 / 424) < 1e-6


def test_waves_filters_sort_csv_table():
    w = json.loads(run("waves", TINY, "--format", "json", "--se", "1", "--sort", "stall"))["waves"]
    assert [x["stall"] for x in w] == [272, 128]
    assert json.loads(run("waves", TINY, "--format", "json", "--cu", "2"))["waves"] == []
    assert run("waves", TINY, "--format", "csv").splitlines()[0].startswith("dispatch,se,simd,slot,wave,cu")
    assert "VMEM-wait" in run("waves", TINY)


def _wave_files(folder) -> list[dict]:
    """Every wave file of a ui_output folder, read without attdec, in filenames.json's order."""
    fn = json.loads((folder / "filenames.json").read_text())["wave_filenames"]
    names = [c[0] for a in fn.values() for b in a.values() for slot in b.values() for c in slot.values()]
    return [json.loads((folder / n).read_text())["wave"] for n in names]


def _waves_samples() -> list:
    """(ui_output sample, its published figures or None): the demo's, then the real topk one (32 waves of
    1,162 instructions, 132,308 stall cycles, the first wave 95192..103868)."""
    params = [pytest.param(DEMO, None, id="demo")]
    topk = ("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "topk_gating_softmax")
    if real_data(*topk):
        params.append(pytest.param(SHARED.joinpath(*topk), (32, 1162, 132308, 95192, 103868), id="topk"))
    return params


@pytest.mark.parametrize("p,published", _waves_samples())
def test_real_waves_begin_end(p, published):
    w = json.loads(run("waves", p, "--format", "json"))["waves"]
    if published is not None:
        n, insts, stall, begin, end = published
        assert len(w) == n and all(x["instructions"] == insts for x in w)
        assert sum(x["stall"] for x in w) == stall
        assert w[0]["begin"] == begin and w[0]["end"] == end  # se0_sm0_sl0_wv0 in filenames.json
    else:  # the figures the wave files hold, read without attdec
        files = _wave_files(next(p.glob("ui_output_agent_*")))
        assert len(w) == len(files) > 0
        assert sorted(x["instructions"] for x in w) == sorted(len(f["instructions"]) for f in files)
        assert sum(x["stall"] for x in w) == sum(r[2] for f in files for r in f["instructions"])
        assert (w[0]["begin"], w[0]["end"]) == (files[0]["begin"], files[0]["end"])


def test_prune_dry_run_then_yes(tmp_path):
    root = tmp_path / "run"
    shutil.copytree(FIXTURES / "empty", root)
    shutil.copytree(FIXTURES / "pcs", root / "pcs")
    out = run("prune-empty", root)
    assert "would remove" in out and "ui_output_agent_7_dispatch_9" in out and "dispatch_10" in out
    assert "2 empty dispatch folder(s)" in out and "PC-sampling" in out
    assert (root / "ui_output_agent_7_dispatch_9").exists()  # dry run
    assert "*" in out and "tiny_kernel" in out  # survivor ranked, best marked
    out = run("prune-empty", root, "--yes")
    assert out.count("removed ") == 4  # 2 folders + 2 header-only CSVs
    assert not (root / "ui_output_agent_7_dispatch_9").exists()
    assert not (root / "ui_output_agent_7_dispatch_10").exists()
    assert not (root / "stats_ui_output_agent_7_dispatch_9.csv").exists()
    assert (root / "ui_output_agent_7_dispatch_3" / "se0_sm0_sl0_wv0.json").exists()
    assert (root / "stats_ui_output_agent_7_dispatch_3.csv").exists()
    assert (root / "pcs" / "pcsampling" / "code.json").exists()


def test_prune_keeps_folders_with_other_files(tmp_path):
    root = tmp_path / "run"
    shutil.copytree(FIXTURES / "empty", root)
    (root / "ui_output_agent_7_dispatch_9" / "notes.txt").write_text("mine")
    out = run("prune-empty", root, "--yes")
    assert (root / "ui_output_agent_7_dispatch_9" / "notes.txt").exists() and "notes.txt" in out
    assert not (root / "ui_output_agent_7_dispatch_10").exists()


def test_prune_errors(tmp_path):
    assert "no such folder" in run("prune-empty", tmp_path / "nope", code=1)
    (tmp_path / "x").mkdir()
    assert "no ui_output dispatch folder" in run("prune-empty", tmp_path / "x", code=1)


def test_demo():
    out = run("demo")
    assert "softmax_rows_0" in out and "gfx942" in out and "VMEM-wait" in out
    d = json.loads(run("demo", "--format", "json"))
    assert d["waves"] == 4 and d["totals"]["stall"] > 0 and d["rows"][0]["dominant_type"]
