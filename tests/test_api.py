"""The public Python API (docs/api.md): the pipeline the CLI runs, as functions returning numpy columns."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, SYNTHETIC_CAPTURES, captures, oracle_captures, ui_samples

import attdec
from attdec.analysis.table import Table
from attdec.model import Category


def test_import_is_cheap_and_lazy():
    code = (
        "import sys, attdec; assert 'attdec.api' not in sys.modules and 'numpy' not in sys.modules; attdec.open; "
        "assert 'attdec.api' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    with pytest.raises(AttributeError):
        attdec.nonexistent  # noqa: B018


def test_occupancy_columns_read_under_amds_names_too():
    (d,) = attdec.open(ROOT / "attdec" / "data" / "demo_raw")
    t = attdec.occupancy(d)
    assert t.nrows == len(d.occupancy) > 0 and "slot" in t and "wave_id" not in t
    assert t["wave_id"] is t["slot"] and (t["slot"] == d.occupancy["slot"]).all()


@pytest.mark.parametrize(
    "cap,oracle_file", oracle_captures("gfx1100/gemm_run0", synthetic=(SYNTHETIC_CAPTURES["gfx942"],))
)
def test_open_hotspots_instructions_on_a_raw_capture(cap, oracle_file):
    want = json.loads(oracle_file.read_text())["dispatches"][0]["summary"]  # AMD's decoder
    ds = attdec.open(cap)
    (d,) = ds
    h = attdec.hotspots(ds, by="instruction")
    assert h.totals["stall"] == want["stall_sum"] and h.totals["hits"] == want["instructions"]
    t = h.table
    assert int(t["stall"].sum()) == h.totals["stall"] and t.nrows == len(h.rows)
    assert set(t) >= {"key", "stall", "hits", "line", "vaddr", "type"}
    ins = attdec.instructions(ds)
    assert ins.nrows == sum(len(w.insts) for w in d.waves) == want["instructions"]
    assert int(ins["stall"].sum()) == want["stall_sum"]
    assert int((ins["category"] == Category.IMMED).sum()) > 0
    w = attdec.waves(d)
    assert w.nrows == len(d.waves) and int(w["stall"].sum()) == want["stall_sum"]
    # the column is stall_share, as the waves command's CSV/JSON/npz name it; its former name still reads it
    assert "stall_share" in w and "share" not in w and w["share"] is w["stall_share"]
    assert ((w["stall_share"] > 0) == (w["stall"] > 0)).all()


@pytest.mark.parametrize("cap", captures("gfx1100/gemm_run0", synthetic=("gfx942",)))
def test_decode_one_blob_equals_the_pipeline(cap):
    doc = json.loads((cap / "capture.json").read_text())
    k = doc["kernels"][0]
    blob = cap / doc["dispatches"][0]["blobs"][0]
    res = attdec.decode(blob, code=[f"{cap / k['code_object']}@{k['base_hex']}"], se=0)
    (d,) = attdec.open(cap)
    se0 = [w for w in d.waves if w.se == 0]
    assert [len(w.insts) for w in res.waves if len(w.insts) or len(w.timeline) >= 3] == [len(w.insts) for w in se0]
    assert all((a.insts["pc"] == b.insts["pc"]).all() for a, b in zip([w for w in res.waves if len(w.insts)], se0))
    raw_bytes = blob.read_bytes()
    co = ((cap / k["code_object"]).read_bytes(), k["base"])
    assert len(attdec.decode(raw_bytes, code=[co]).waves) == len(res.waves)


def test_table_is_a_mapping_of_equal_columns():
    t = Table.from_rows([{"a": 1, "b": "x", "c": 0.5}, {"a": 2, "b": None, "c": 1}])
    assert list(t) == ["a", "b", "c"] and t.nrows == 2 and t["a"].dtype == np.int64 and t["c"].dtype == np.float64
    assert t.records() == [{"a": 1, "b": "x", "c": 0.5}, {"a": 2, "b": None, "c": 1.0}]
    with pytest.raises(ValueError):
        Table({"a": np.zeros(2), "b": np.zeros(3)})
    assert Table.from_rows([], ["a"]).nrows == 0


def test_hotspots_ranks_instructions_where_there_are_no_source_lines(tmp_path):
    """As the command line does: one "(no source line)" row would say nothing."""
    import shutil

    from conftest import FIXTURES

    folder = tmp_path / "d"
    shutil.copytree(FIXTURES / "python31" / "ui_output_att1", folder)
    doc = json.loads((folder / "code.json").read_text())
    for row in doc["code"]:
        row[3] = ""
    (folder / "code.json").write_text(json.dumps(doc))
    [d] = attdec.open(folder)
    h = attdec.hotspots(d)
    assert h.by == "instruction" and len(h.rows) == len({r.key for r in h.rows}) > 1
    assert attdec.hotspots(d, by="line").by == "line"
    [with_lines] = attdec.open(FIXTURES / "python31" / "ui_output_att1")
    assert attdec.hotspots(with_lines).by == "line"


def test_table_is_read_only():
    t = Table({"a": np.arange(3)})
    with pytest.raises(TypeError):
        t["b"] = np.arange(3)
    with pytest.raises(TypeError):
        t.update(b=np.arange(3))
    import pickle

    assert list(pickle.loads(pickle.dumps(t))["a"]) == [0, 1, 2]


def test_pandas_data_frame_of_a_table_has_one_column_per_name():
    pd = pytest.importorskip("pandas", reason="pandas not installed (the `pandas` test extra)")
    t = Table({"a": np.arange(4), "b": np.arange(4) * 0.5, "c": np.array(list("wxyz"), object)})
    df = pd.DataFrame(t)
    assert df.shape == (4, 3) and list(df.columns) == ["a", "b", "c"]
    assert df["a"].tolist() == [0, 1, 2, 3] and df["c"].tolist() == list("wxyz")


@pytest.mark.parametrize("cap", captures("gfx1100/gemm_run0", synthetic=("gfx1100",)))
def test_pandas_recipe_of_the_docs_on_a_capture(cap):
    pd = pytest.importorskip("pandas", reason="pandas not installed (the `pandas` test extra)")
    ds = attdec.open(cap)
    ins = attdec.instructions(ds)
    df = pd.DataFrame(ins)
    assert df.shape == (ins.nrows, len(ins)) and list(df.columns) == list(ins)
    assert int(df["stall"].sum()) == int(ins["stall"].sum())
    h = attdec.hotspots(ds, by="instruction")
    assert pd.DataFrame(h.table).shape == (h.table.nrows, len(h.table))


@pytest.mark.parametrize("sample", ui_samples("jhinpan__flydsl-kernel-profiling-lib/examples/topk_gating_softmax"))
def test_why_compare_and_resource_analyses_on_a_sample(sample):
    """The API's analyses agree with the listing they come from (figures recomputed, not stored)."""
    (d,) = attdec.open(sample)
    sites = attdec.waits(d)
    wait_stall = sum(c.stall for c in d.code if c.text.startswith("s_waitcnt") and c.hit)
    assert sites and sum(s.stall for s in sites) == wait_stall
    assert all(s.attributed <= s.stall for s in sites) and any(s.producers for s in sites)
    (g,) = attdec.cfg(d)
    assert sum(len(b.lines) for b in g.blocks) == sum(1 for c in d.code if not c.is_label)
    assert attdec.hidden_latency(d).kernel is not None
    same = attdec.diff([d], [d])
    assert [k.total.delta("cycles") for k in same.kernels] == [0] and not same.unmatched
    assert len(attdec.noise([d])) == 1
    assert attdec.kernel(d) is not None and attdec.counters(d) is not None
    import io

    page = io.StringIO()
    attdec.html_report(d, page)
    assert page.getvalue().lstrip().lower().startswith("<!doctype html")


def test_the_lazy_names_are_the_api():
    """attdec/__init__.py lists the API's names (it cannot import attdec.api: start-up); they must be
    exactly attdec.api.__all__, each a function."""
    import attdec.api

    assert set(attdec.api.__all__) == attdec._API
    assert all(callable(getattr(attdec, name)) for name in attdec._API)
