"""waves, prune-empty and demo on the synthesized fixtures (figures from tools/makers/make_fixtures.py)."""

from __future__ import annotations

import json
import shutil

from conftest import FIXTURES, invoke, shared_path

TINY = FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3"


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


def test_real_waves_begin_end():
    p = shared_path("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "topk_gating_softmax")
    w = json.loads(run("waves", p, "--format", "json"))["waves"]
    assert len(w) == 32 and all(x["instructions"] == 1162 for x in w)
    assert sum(x["stall"] for x in w) == 132308
    assert w[0]["begin"] == 95192 and w[0]["end"] == 103868  # se0_sm0_sl0_wv0 in filenames.json


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
