"""hotspots --format folded / md, and the HTML report's page and data (without a browser; the browser tests are
in test_report_browser.py): figures equal attdec's own, budgets are respected, nothing points at the network."""

from __future__ import annotations

import base64
import io
import json
import re

import numpy as np
import pytest
from conftest import (
    SHARED,
    SYNTHETIC_CAPTURES,
    capture_without_line_tables,
    cli,
    invoke,
    one_line_error,
    real_data,
    repeated_capture,
)

import attdec
from attdec.analysis.hotspots import frames, hotspots
from attdec.commands.demo import demo_path
from attdec.report import Limits
from attdec.report.html import Table, build, render

SAMPLES = ("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples")


def run(*args):
    r = invoke([str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r.output


def parse_folded(text: str) -> dict[tuple[str, ...], int]:
    out = {}
    for line in text.splitlines():
        stack, count = line.rsplit(" ", 1)
        out[tuple(stack.split(";"))] = int(count)
    return out


def test_folded_sums_to_the_stall_and_follows_inline_chains():
    folded = parse_folded(run("hotspots", demo_path(), "--format", "folded"))
    [d] = attdec.open(demo_path())
    h = hotspots([d])
    assert sum(folded.values()) == h.totals["stall"]
    assert all(k[0] == d.kernel for k in folded)
    # an inlined instruction: kernel, call site, then its own line (the chain reversed)
    chained = next(c for c in d.code if " -> " in c.source and c.stall)
    inner, outer = frames(chained.source)[0], frames(chained.source)[-1]
    assert any(k[1:] == (outer, inner) for k in folded)
    # --by instruction adds the instruction as the leaf, --by file keeps files
    by_inst = parse_folded(run("hotspots", demo_path(), "--format", "folded", "--by", "instruction"))
    assert sum(by_inst.values()) == h.totals["stall"] and all(re.match(r"0x[0-9a-f]+ ", k[-1]) for k in by_inst)
    by_file = parse_folded(run("hotspots", demo_path(), "--format", "folded", "--by", "file"))
    assert all(not re.search(r":\d+$", f) for k in by_file for f in k[1:])


def _without_dwarf() -> list:
    params = [pytest.param(lambda tmp: capture_without_line_tables(tmp / "cap", SYNTHETIC_CAPTURES["gfx1100"]),
                           id="synthetic")]  # fmt: skip
    if real_data("captures", "gfx1100", "gemm_run0"):  # tinygrad's code objects carry no line table
        params.append(pytest.param(lambda _: SHARED / "captures/gfx1100/gemm_run0", id="gemm"))
    return params


@pytest.mark.parametrize("make", _without_dwarf())
def test_folded_without_source_lines_uses_instructions(tmp_path, make):
    cap = make(tmp_path)
    folded = parse_folded(run("hotspots", cap, "--format", "folded"))
    ds = attdec.open(cap)
    assert sum(folded.values()) == sum(hotspots([d]).totals["stall"] for d in ds)
    assert all(len(k) == 2 and k[1].startswith("0x") for k in folded)


def _listings() -> list:
    """ui_output samples with a source-mapped listing: the demo always, the real topk one where ../shared has it."""
    real = [SHARED.joinpath(*SAMPLES, "topk_gating_softmax")] if real_data(*SAMPLES, "topk_gating_softmax") else []
    return [pytest.param(demo_path(), id="demo"), *[pytest.param(p, id="topk") for p in real]]


@pytest.mark.parametrize("sample", _listings())
def test_md_is_a_table_with_the_ranking(sample):
    text = run("hotspots", sample, "--format", "md", "--top", "5")
    h = hotspots(attdec.open(sample))
    tables = [blk for blk in text.split("\n\n") if blk.startswith("|")]
    assert len(tables) == 2  # stall types, then the top rows
    types, top = (t.splitlines() for t in tables)
    assert types[1] == "|---|---:|---:|" and len(types) == 2 + len(h.by_type)
    assert len(top) == 2 + 5 and all(r.count("|") == top[0].count("|") for r in top)
    assert top[2].split("|")[1].strip() == "1" and h.rows[0].key.rsplit("/", 1)[-1] in top[2]
    by_inst = run("hotspots", sample, "--format", "md", "--top", "3", "--by", "instruction")
    assert "| instruction | source |" in by_inst and "`s_waitcnt" in by_inst


def test_md_escapes_pipes():
    from attdec.report.common import md_code, write_md_table

    buf = io.StringIO()
    write_md_table(buf, ["a|b", "n"], [[md_code("x | y"), 1]], {1})
    lines = buf.getvalue().splitlines()
    assert lines[0] == "| a\\|b | n |" and lines[1] == "|---|---:|" and lines[2] == "| `x \\| y` | 1 |"


def unpack(p) -> np.ndarray:
    return np.frombuffer(base64.b64decode(p["b"]), np.dtype("<" + p["d"]))


def _over_budget() -> list:
    """(how to get one dispatch whose instructions are more than half of 300): the synthetic capture with a
    blob repeated 10 times (~700 records, 40 waves), then the real gfx1200 gemm where ../shared has it."""
    params = [pytest.param(lambda tmp: attdec.open(repeated_capture(tmp / "big", 10))[:1], id="synthetic")]
    if real_data("captures", "gfx1200", "gemm_run0"):
        params.append(pytest.param(lambda _: attdec.open(SHARED / "captures/gfx1200/gemm_run0"), id="gemm"))
    return params


@pytest.mark.parametrize("big", _over_budget())
def test_data_holds_attdec_figures_and_respects_the_budgets(tmp_path, big):
    ds = big(tmp_path) + attdec.open(demo_path())
    limits = Limits(insts=300, runs=300)  # the demo (124 instructions) fits its half, the other does not
    data = build(ds, limits=limits)
    assert [x["name"] for x in data["dispatches"]] == [d.name for d in ds]
    for d, x in zip(ds, data["dispatches"]):
        h = hotspots([d])
        assert {k: x["summary"][k] for k in h.totals} == h.totals
        assert x["by_type"] == [[t, s, round(f, 6)] for t, s, f in h.by_type]
        assert [r[0] for r in x["isa"]] == [c.line for c in d.code]
        fl = x["flame"]
        assert sum(s[2] for s in fl["stacks"]) == h.totals["stall"]
        tl = x["timeline"]
        assert len(unpack(tl["waves"]["lane"])) == len(d.waves)
        for kind, tr in tl["tracks"].items():
            n = unpack(tr["n"])
            assert n.sum() == len(unpack(tr["v"])) == len(unpack(tr["dt"]))
            if tr["q"] > 1:
                assert any(f"timeline ({kind})" in note for note in x["notes"])
    runs = sum(int(unpack(x["timeline"]["tracks"]["state"]["n"]).sum()) for x in data["dispatches"])
    assert runs <= limits.runs
    embedded = sum(
        int(unpack(x["timeline"]["insts"]["n"]).sum()) for x in data["dispatches"] if "insts" in x["timeline"]
    )
    assert 0 < embedded <= limits.insts
    # the demo's instructions all fit; the gemm's only partly, and the page says so
    assert len(unpack(data["dispatches"][1]["timeline"]["insts"]["waves"])) == len(ds[1].waves)
    assert any("instructions embedded for" in n for n in data["dispatches"][0]["notes"])


@pytest.mark.parametrize("sample", _listings())
def test_waits_link_to_their_producers_by_default(sample):
    from attdec.analysis.waits import attribute, wait_sites

    ds = attdec.open(sample)
    links = build(ds)["dispatches"][0]["links"]
    sites = wait_sites(attribute(ds[0]))
    assert links and len(links) == sum(len(s.producers) for s in sites)
    texts = {c.line: c.text for c in ds[0].code}
    assert all(texts[a].startswith("s_waitcnt") for a, _, _ in links)
    assert build(ds, links={})["dispatches"][0]["links"] == []


def test_occupancy_says_it_counts_waves_on_untraced_cus_too():
    ds = attdec.open(demo_path())
    occ = build(ds)["dispatches"][0]["occupancy"]
    assert "untraced" in occ["what"] and occ["what"] in render(build(ds))


def test_page_is_self_contained():
    data = build(attdec.open(demo_path()), links={"ui_output_agent_4242_dispatch_7": [(3, 1, "waits for")]})
    page = render(data)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", page)
    assert not re.search(r"https?://", page)  # no URL at all: nothing the page could fetch
    blob = re.search(r'<script type="application/json" id="attdec-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(blob.replace("<\\/", "</"))["dispatches"][0]["links"] == [[3, 1, "waits for"]]


def test_script_end_in_the_data_cannot_break_out():
    [d] = attdec.open(demo_path())
    d.code[1].text = "</script><script>alert(1)</script>"
    page = render(build([d], tables={d.name: [Table("extra", ["a"], [["</script>"]])]}))
    assert page.count("</script>") == 2  # the data's and the code's own ends only


def test_cli_report_and_errors(tmp_path):
    out = tmp_path / "r.html"
    r = cli("report", demo_path(), "-o", out)
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stderr and out.stat().st_size > 10_000
    one_line_error(cli("report", tmp_path / "missing", "-o", tmp_path / "x.html"), "no such file")
    assert not (tmp_path / "x.html").exists()
    one_line_error(cli("report", demo_path(), "-o", tmp_path), "directory")


def test_source_text_is_found_under_source_dir(tmp_path):
    src = tmp_path / "src" / "demo"
    src.mkdir(parents=True)
    (src / "softmax_kernel.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 41)))
    out = tmp_path / "r.html"
    r = cli("report", demo_path(), "-o", out, "--source-dir", tmp_path / "src")
    assert r.returncode == 0, r.stderr
    blob = re.search(r'id="attdec-data">(.*?)</script>', out.read_text(), re.S).group(1)
    files = {f["file"]: f for f in json.loads(blob)["dispatches"][0]["source"]}
    k = files["/home/dev/demo/softmax_kernel.py"]
    assert k["text"][15 - k["text_from"]] == "line_15 = 15"
    assert "text" not in files["/home/dev/demo/warp_ops.py"]


def _big() -> list:
    """(how to get a big capture): the synthetic one with a blob repeated 2,000 times (~8,000 waves), then
    the real gemm_gfx1200 (3.7 MiB of SQTT) where ../shared has it."""
    params = [pytest.param(lambda tmp: attdec.open(repeated_capture(tmp / "big", 2000)), id="synthetic")]
    if real_data("captures", "gfx1200", "gemm_gfx1200_run0"):
        params.append(pytest.param(lambda _: attdec.open(SHARED / "captures/gfx1200/gemm_gfx1200_run0"), id="gemm"))
    return params


@pytest.mark.parametrize("big", _big())
def test_big_capture_stays_a_few_mb(tmp_path, big):
    ds = big(tmp_path)
    page = render(build(ds))
    assert len(page.encode()) < 4e6
    notes = [
        n
        for x in json.loads(re.search(r'id="attdec-data">(.*?)</script>', page, re.S).group(1))["dispatches"]
        for n in x["notes"]
    ]
    assert any("grid" in n for n in notes) and any("instructions embedded" in n for n in notes)
