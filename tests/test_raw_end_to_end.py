"""Raw inputs through the real ISA layer, decoders and ui_output reader (skipped until they are present)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re

import numpy as np
import pytest
from conftest import FIXTURES, SHARED, SYNTHETIC_CAPTURES, SYNTHETIC_ORACLES, captures, real_data, shared_path

import attdec
from attdec.isa import disassemble, load_code_object
from attdec.model import Dispatch, Wave, empty_insts
from attdec.sources.listing import LoadedCode, build_listing


def _llvm_addresses(cap_dir, k) -> list[int]:
    """The instruction addresses llvm-objdump lists for the kernel's code object: a real capture's
    KERNEL.llvm.s, or the stored LLVM listing of a committed code object (tests/fixtures/isa)."""
    listing = cap_dir / f"{k['name']}.llvm.s"
    if listing.exists():
        return [int(m, 16) for m in re.findall(r"// ([0-9A-F]{12}):", listing.read_text())]
    digest = hashlib.sha256((cap_dir / k["code_object"]).read_bytes()).hexdigest()
    stored = json.loads(gzip.decompress((FIXTURES / "isa" / "fixtures_llvm.json.gz").read_bytes()))
    (entry,) = [e for e in stored if e["sha256"] == digest]
    return [addr for addr, *_ in entry["instructions"]]


@pytest.mark.parametrize("cap_dir", captures("gfx1100/gemm_run0", synthetic=("gfx1100",)))
def test_listing_with_real_code_object(cap_dir):
    """Whole kernel listed once, at the addresses llvm-objdump shows, hit counts from the waves."""
    k = json.loads((cap_dir / "capture.json").read_text())["kernels"][0]
    co = load_code_object((cap_dir / k["code_object"]).read_bytes(), k["code_object"])
    insts = disassemble(co.text, co.arch, co.text_vaddr)
    lc = LoadedCode(1, k["base"], k["code_object"], co, insts)
    want = _llvm_addresses(cap_dir, k)
    pcs = [k["base"] + a for a in want[:5]]
    a = empty_insts(len(pcs) + 1)
    a["time"] = range(10, 10 + 4 * len(a), 4)
    a["duration"], a["stall"] = 4, 1
    a["pc"] = [*pcs, pcs[0]]
    d = Dispatch("t", "gfx1100", waves=[Wave(0, 0, 0, 0, 0, 100, insts=a)])
    rows = build_listing(d, [lc])
    assert rows[0].text == f"; {k['name']}" and rows[0].vaddr == k["entry_vaddr"]
    assert [r.vaddr for r in rows[1:]] == [v for v in want if v >= k["entry_vaddr"]][: len(rows) - 1]
    assert rows[1].hit == 2 and rows[2].hit == 1 and sum(r.hit for r in rows) == len(a)


def _profiles_with_oracle() -> list:
    """(tinygrad profile, AMD's decoder's answers for its first dispatch's blobs): the synthetic demo
    profile (tools/makers/make_tinygrad_profiles.py), then the real gfx1100 gemm where ../shared has it."""
    demo = SYNTHETIC_CAPTURES["gfx942"]
    params = [pytest.param(FIXTURES / "tinygrad/gfx942/profile_demo_raw.pkl", SYNTHETIC_ORACLES[demo], id="demo")]
    if real_data("tinygrad_profiles") and real_data("captures", "gfx1100", "gemm_run0"):
        pkl, cap = SHARED / "tinygrad_profiles/gfx1100/profile_gemm_run_0.pkl", SHARED / "captures/gfx1100/gemm_run0"
        params.append(pytest.param(pkl, cap / "oracle.json", id="gemm"))
    return params


@pytest.mark.parametrize("pkl,oracle_file", _profiles_with_oracle())
def test_tinygrad_profile_figures_and_roundtrip(tmp_path, pkl, oracle_file):
    """A profile decodes to the official decoder's figures and its exported folder reads back with the
    same totals."""
    from attdec.report.ui_output import write_ui_output
    from attdec.sources import tinygrad
    from attdec.sources.raw import decode_dispatch

    oracle = json.loads(oracle_file.read_text())
    want = oracle["dispatches"][0]["summary"]  # the same blobs, as the official decoder saw them
    raw, *_ = tinygrad.load(pkl)
    d = decode_dispatch(raw)
    stall = sum(int(w.insts["stall"].sum()) for w in d.waves)
    traced = sum(1 for w in d.waves if len(w.insts))
    assert (stall, traced) == (want["stall_sum"], want["waves_with_instructions"])
    assert sum(c.stall for c in d.code) == stall and sum(c.hit for c in d.code) == want["instructions"]

    folder = write_ui_output(d, tmp_path, "ui_output_agent_0_dispatch_1")
    (back,) = attdec.open([folder])
    assert sum(int(w.insts["stall"].sum()) for w in back.waves) == stall
    assert sum(1 for w in back.waves if len(w.insts)) == traced
    assert [(c.line, c.hit, c.latency, c.stall, c.idle) for c in back.code] == [
        (c.line, c.hit, c.latency, c.stall, c.idle) for c in d.code
    ]


def test_hotspots_and_waves_take_raw_inputs(tmp_path):
    """`hotspots`/`waves` on a tinygrad profile, a capture folder and a rocprofv3 output root (each dispatch
    decoded from its raw files once, whether or not a ui_output folder of it lies beside them; that folder
    is what `--input-format ui_output` reads)."""

    from conftest import invoke

    pkl = shared_path("tinygrad_profiles", "gfx1100", "profile_gemm_run_0.pkl")
    cap = shared_path("captures", "gfx1100", "gemm_run0")
    want = json.loads((cap / "oracle.json").read_text())["dispatches"][0]["summary"]["stall_sum"]
    for args in ([str(pkl)], [str(cap)], ["--input-format", "tinygrad", str(pkl)]):
        r = invoke(["hotspots", "--format", "json", *args])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output[r.output.index("{") :])["totals"]["stall"] == want
    r = invoke(["waves", "--format", "json", str(pkl)])
    assert r.exit_code == 0 and r.output.count('"instructions": 59') == 10
    r = invoke(["hotspots", "--input-format", "rocprof-raw", str(pkl)])
    assert r.exit_code == 1 and "not a rocprof-raw input" in r.output

    from test_raw_sources import _rocprof_folder

    out, *_ = _rocprof_folder(tmp_path, cap)
    host = out / "gpu-host"
    for f in host.glob("*_7.att"):  # a second dispatch (8) with the same blobs
        f.with_name(f.name.replace("_7.att", "_8.att")).write_bytes(f.read_bytes())
    r = invoke(["export-ui", str(host), "-o", str(out)])
    assert r.exit_code == 0, r.output
    import shutil

    shutil.rmtree(out / "ui_output_agent_24601_dispatch_8")
    r = invoke(["hotspots", "--format", "json", str(out)])
    assert r.exit_code == 0, r.output
    names = sorted(d["dispatch"] for d in json.loads(r.output[r.output.index("{") :])["dispatches"])
    assert names == ["dispatch_7 r_32_32_16_2", "dispatch_8"]
    r = invoke(["hotspots", "--format", "json", "--input-format", "ui_output", str(out)])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output[r.output.index("{") :])["dispatch"] == "ui_output_agent_24601_dispatch_7"


def _gfx1100_with_oracle() -> list:
    synth = SYNTHETIC_CAPTURES["gfx1100"]
    params = [pytest.param(synth, SYNTHETIC_ORACLES[synth], id="synthetic")]
    if real_data("captures", "gfx1100", "gemm_run0"):
        cap = SHARED / "captures/gfx1100/gemm_run0"
        params.append(pytest.param(cap, cap / "oracle.json", id="gemm"))
    return params


@pytest.mark.parametrize("cap,oracle_file", _gfx1100_with_oracle())
def test_explicit_blobs_with_code(tmp_path, cap, oracle_file):
    """.att blobs + --code FILE@LOADBASE, as `attdec decode` takes them, in hotspots/waves/export-ui."""

    from conftest import invoke

    c = json.loads((cap / "capture.json").read_text())
    want = json.loads(oracle_file.read_text())["dispatches"][0]["summary"]
    k = c["kernels"][0]
    code = ["--code", f"{cap / k['code_object']}@{k['base']:#x}"]
    blobs = [str(cap / f) for f in c["dispatches"][0]["blobs"]]
    r = invoke(["hotspots", "--format", "json", *code, *blobs])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output[r.output.index("{") :])["totals"]["stall"] == want["stall_sum"]
    r = invoke(["export-ui", *code, *blobs, "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    files = json.loads((tmp_path / "ui_output_agent_0_dispatch_1" / "filenames.json").read_text())
    assert (
        sum(len(wv) for simds in files["wave_filenames"].values() for slots in simds.values() for wv in slots.values())
        == want["waves_with_instructions"]
    )
    r = invoke(["waves", "--arch", "gfx950", *code, *blobs])
    assert r.exit_code == 1 and "code object is gfx1100, but the trace is gfx950" in r.output


def test_waves_on_untraced_shader_engines_are_noted():
    """Waves that ran where instruction tracing was off (capture.json `itrace: false`) are in the occupancy
    records only; the dispatch says how many, so "waves 0" is not mistaken for an empty kernel."""
    cap_dir = shared_path("captures", "gfx950", "plus_run0")
    blobs = json.loads((cap_dir / "capture.json").read_text())["blobs"]
    off = [b["se"] for b in blobs if b["itrace"] is False]
    (d,) = attdec.open([cap_dir])
    starts = d.occupancy[np.isin(d.occupancy["se"], off)]["start"].sum()
    assert off and starts > 0
    assert f"{starts:,} wave(s) ran on" in "\n".join(d.problems)
