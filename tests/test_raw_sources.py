"""rocprofv3 raw folders (synthesized from a real capture in rocprofv3's naming), capture folders,
input detection, and decode_dispatch/export-ui with stand-in ISA and decoder layers."""

from __future__ import annotations

import json
import shutil
import sys
import types

import numpy as np
import pytest
from conftest import SYNTHETIC_CAPTURES, capture_sets, captures, invoke, oracle_captures, real_data, shared_path

from attdec.decoders.common import BlobResult
from attdec.errors import ArchError, InputError
from attdec.model import OCCUPANCY_DTYPE, Wave, empty_insts
from attdec.model.target import target
from attdec.sources import capture, rocprof_raw
from attdec.sources.pipeline import kind_of, open_raw
from attdec.sources.raw import RawBlob, RawCodeObject, RawDispatch, decode_dispatch
from tests.support.sqtt_encoder import RdnaEncoder, roc_marker_words

PID, AGENT, DISP = 31337, 24601, 7


def _rocprof_folder(tmp_path, cap_dir, results=True, code_object=True):
    """A rocprofv3 output folder made of a capture's files: <out>/<host>/<pid>_<agent>_shader_engine_<SE>_<D>.att,
    <pid>_<gfx>_code_object_id_1.out, and (optionally) <pid>_results.json giving the load base."""
    cap = json.loads((cap_dir / "capture.json").read_text())
    (disp,) = cap["dispatches"]
    k = next(k for k in cap["kernels"] if k["name"] == disp["kernel"])
    host = tmp_path / "out" / "gpu-host"
    host.mkdir(parents=True)
    blobs = {b["file"]: b for b in cap["blobs"]}
    for f in disp["blobs"]:
        shutil.copy(cap_dir / f, host / f"{PID}_{AGENT}_shader_engine_{blobs[f]['se']}_{DISP}.att")
    if code_object:
        shutil.copy(cap_dir / k["code_object"], host / f"{PID}_{cap['gfx_arch']}_code_object_id_1.out")
    if results:
        doc = {
            "rocprofiler-sdk-tool": [
                {
                    "code_objects": [
                        {
                            "size": 0,
                            "code_object_id": 1,
                            "uri": "file:///tmp/a.out",
                            "load_base": k["base"],
                            "load_size": 0x3000,
                            "load_delta": k["base"],
                            "storage_type": 1,
                        }
                    ],
                    "kernel_symbols": [{"kernel_id": 4, "code_object_id": 1, "kernel_name": k["name"]}],
                    "buffer_records": {
                        "kernel_dispatch": [
                            {"dispatch_info": {"dispatch_id": DISP, "kernel_id": 4, "agent_id": {"handle": 1}}}
                        ]
                    },
                }
            ]
        }
        (host / f"{PID}_results.json").write_text(json.dumps(doc))
    return tmp_path / "out", cap, disp, k


@pytest.mark.parametrize("cap_dir", captures("gfx1100/gemm_run0", synthetic=("gfx942",)))
def test_rocprof_folder_groups_and_places_code_objects(tmp_path, cap_dir):
    out, cap, disp, k = _rocprof_folder(tmp_path, cap_dir)
    assert kind_of(out).name == "rocprof-raw"
    (d,) = open_raw([out])
    assert (d.agent, d.dispatch_id, d.target, d.kernel) == (AGENT, DISP, target(cap["gfx_arch"]), k["name"])
    blobs = {b["file"]: b for b in cap["blobs"]}
    assert [b.se for b in d.blobs] == sorted(blobs[f]["se"] for f in disp["blobs"])
    for b in d.blobs:
        f = next(f for f in disp["blobs"] if blobs[f]["se"] == b.se)
        assert b.data == (cap_dir / f).read_bytes()
    (co,) = d.code_objects
    assert (co.id, co.base) == (1, k["base"]) and co.data == (cap_dir / k["code_object"]).read_bytes()


@pytest.mark.parametrize("cap_dir", captures("gfx950/gemm_run0", synthetic=("gfx942",)))
def test_loose_files_without_results_leave_the_base_to_inference(tmp_path, cap_dir):
    out, cap, disp, k = _rocprof_folder(tmp_path, cap_dir, results=False)
    files = sorted((out / "gpu-host").iterdir())
    (d,) = open_raw(files)
    assert len(d.blobs) == len(disp["blobs"]) and d.code_objects[0].base is None
    assert d.target == target(cap["gfx_arch"])
    # the base inference, given a code object whose kernel entry is known (stand-in for attdec.isa)
    from attdec.isa import load_code_object
    from attdec.sources.raw import _infer_bases

    co = load_code_object((cap_dir / k["code_object"]).read_bytes())
    (kern,) = [x for x in co.kernels if x.name == k["name"]]
    fake = types.SimpleNamespace(kernels=[(k["name"], kern.entry)], text_vaddr=co.text_vaddr)
    assert _infer_bases(d, [(d.code_objects[0], fake)]) == {0: k["base"]}


def test_markers_in_the_trace_give_the_base(tmp_path):
    host = tmp_path / "h"
    host.mkdir()
    blob = RdnaEncoder(11).userdata(roc_marker_words(3, 0x7F00_0000_0000, 0x2000)).data()
    (host / f"{PID}_{AGENT}_shader_engine_0_{DISP}.att").write_bytes(blob)
    (host / f"{PID}_gfx1100_code_object_id_3.out").write_bytes(b"\x7fELF")
    (host / f"{PID}_gfx1100_code_object_id_4.out").write_bytes(b"\x7fELF")
    (d,) = rocprof_raw.load_files([host])
    assert [(c.id, c.base) for c in d.code_objects] == [(3, 0x7F00_0000_0000), (4, None)]
    # one loose .att file: the code objects are found next to it
    (d,) = rocprof_raw.load_files([host / f"{PID}_{AGENT}_shader_engine_0_{DISP}.att"])
    assert [c.id for c in d.code_objects] == [3, 4] and len(d.blobs) == 1


ONE_DISPATCH = oracle_captures("gfx1100/gemm_run0", synthetic=(SYNTHETIC_CAPTURES["gfx942"],))


@pytest.mark.parametrize("cap_dir,oracle_file", ONE_DISPATCH)
def test_missing_code_object_decodes_without_pcs_and_says_what_is_missing(tmp_path, cap_dir, oracle_file):
    """rocprofv3 often keeps no code object: with no ui_output code.json either, the dispatch is still
    decoded (totals, waves, occupancy), its records without PCs, and a note names both missing files."""
    want = json.loads(oracle_file.read_text())["dispatches"][0]["summary"]
    family = target(json.loads((cap_dir / "capture.json").read_text())["gfx_arch"]).family
    out, *_ = _rocprof_folder(tmp_path, cap_dir, code_object=False)
    r = invoke(["hotspots", "--format", "json", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output[r.output.index("{") :])
    assert doc["totals"]["hits"] == want["instructions"]
    assert doc["arch"].startswith(family)  # no code object names the chip
    (note,) = [p for p in doc["problems"] if "decoded without PCs" in p]
    assert (
        f"{PID}_<gfx>_code_object_id_<id>.out" in note and f"ui_output_agent_{AGENT}_dispatch_{DISP}/code.json" in note
    )


def _blob_and_code(real: bool) -> tuple[bytes, bytes]:
    """A gfx9 blob and a gfx1100 code object: the real captures' or the synthetic ones'."""
    if real:
        gfx9_blob = shared_path("captures", "gfx950", "gemm_run0", "r_32_32_16_2_1_se0.att").read_bytes()
        return gfx9_blob, shared_path("captures", "gfx1100", "gemm_run0", "r_32_32_16_2.co").read_bytes()
    gfx9, rdna = SYNTHETIC_CAPTURES["gfx942"], SYNTHETIC_CAPTURES["gfx1100"]
    return (gfx9 / "kern_1_se0.att").read_bytes(), (rdna / "kern.co").read_bytes()


REAL_PAIR = real_data("captures", "gfx950", "gemm_run0") and real_data("captures", "gfx1100", "gemm_run0")


@pytest.mark.parametrize(
    "real", [pytest.param(False, id="synthetic"), *([pytest.param(True, id="real")] if REAL_PAIR else [])]
)
def test_blob_arch_must_match_code_object(tmp_path, real):
    gfx9_blob, co = _blob_and_code(real)
    raw = RawDispatch("d", None, [RawCodeObject(co, 0x1000, "k.co")], [RawBlob(0, gfx9_blob, "x_se0.att")])
    with pytest.raises(ArchError, match=r"x_se0\.att: blob is a gfx9 SQTT stream but the code object is gfx1100"):
        decode_dispatch(raw)
    raw.target = target("gfx950")  # the capture's own arch (device props, --arch) disagrees with the ELF
    with pytest.raises(ArchError, match=r"k\.co: code object is gfx1100, but the trace is gfx950"):
        decode_dispatch(raw)


@pytest.mark.parametrize("folders,least", capture_sets(59))
def test_capture_folders_load(folders, least):
    n = 0
    for cj in (f / "capture.json" for f in folders):
        cap = json.loads(cj.read_text())
        assert kind_of(cj.parent).name == "capture"
        ds = capture.load(cj.parent)
        assert [d.kernel for d in ds] == [d["kernel"] for d in cap["dispatches"]]
        assert all(d.target == target(cap["gfx_arch"]) and d.blobs for d in ds)
        n += len(ds)
    assert n >= least


def test_unknown_input_is_a_clear_error(tmp_path):
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(InputError, match="not an input attdec reads"):
        open_raw([tmp_path / "x.txt"])
    with pytest.raises(InputError, match="no such file"):
        open_raw([tmp_path / "nope"])


@pytest.mark.parametrize("cap_dir", captures("gfx1100/gemm_run0", synthetic=("gfx1100",)))
def test_a_bare_blob_without_code_says_what_it_needs(tmp_path, cap_dir):
    blob = sorted(cap_dir.glob("*.att"))[0]
    with pytest.raises(InputError, match=f"--code FILE@LOADBASE.*capture folder it belongs to \\({cap_dir} is one\\)"):
        open_raw([blob])
    (tmp_path / "k_se0.att").write_bytes(blob.read_bytes())  # on its own: no folder to suggest
    with pytest.raises(InputError, match=r"\(and --arch\), or give the capture folder it belongs to$"):
        open_raw([tmp_path / "k_se0.att"])


# --- decode_dispatch and export-ui end to end, with stand-ins for attdec.isa and the decoders ---------


class _Ins:
    def __init__(self, address, text):
        self.address, self.size, self.text = address, 4, text


class _CO:
    arch, target, text_vaddr = "gfx1100", target("gfx1100"), 0x100
    text = bytes(16)
    kernels = [("k", 0x100)]

    def source_of(self, vaddr):
        return f"k.py:{vaddr}"


@pytest.fixture
def fake_layers(monkeypatch):
    import attdec.sources.listing  # before the stand-in: it needs the real attdec.isa's names

    def readings(code, arch, vaddr):
        insts = [_Ins(vaddr + 4 * i, f"op{i}") for i in range(len(code) // 4)]
        return insts, insts

    isa = types.ModuleType("attdec.isa")
    isa.load_code_object = lambda data, where="": _CO()
    isa.readings = readings
    # the ISA rules the analyses import (export-ui classifies stalls) are the real ones
    from attdec.isa import categories, waitcnt

    isa.categories, isa.waitcnt = categories, waitcnt
    monkeypatch.setitem(sys.modules, "attdec.isa", isa)
    import attdec

    monkeypatch.setattr(attdec, "isa", isa, raising=False)
    calls = []

    def decode_blob(data, arch, code, se, **_opts):
        calls.append((se, arch.name, len(code)))
        base = 0x5000_0000
        a = empty_insts(3)
        a["time"], a["stall"], a["duration"] = [10, 20, 40], [0, 5 + se, 1], [4, 9, 4]
        a["pc"] = [base + 0x100, base + 0x104, base + 0x100]
        w = Wave(se=se, cu=0, simd=0, slot=1, begin=0, end=60, insts=a, timeline=[(1, 10), (2, 50)])
        occ = np.zeros(2, OCCUPANCY_DTYPE)
        occ[:] = [(se, 0, 0, 1, 1, 0, 0), (se, 0, 0, 1, 0, 60, 0)]
        return BlobResult(se=se, target=arch, waves=[w], occupancy=occ, realtime=[(5, 100)])

    monkeypatch.setattr("attdec.decoders.decode_blob", decode_blob, raising=False)
    return calls


def test_decode_dispatch_and_export(tmp_path, fake_layers):
    blob = RdnaEncoder(11).data()
    raw = RawDispatch(
        "k#1",
        target("gfx1100"),
        [RawCodeObject(b"elf", 0x5000_0000, "k.co", 2)],
        [RawBlob(0, blob, "se0"), RawBlob(1, blob, "se1")],
        kernel="k",
    )
    seen = []
    d = decode_dispatch(raw, lambda blob: seen.append(blob.label))
    assert fake_layers == [(0, "gfx1100", 4), (1, "gfx1100", 4)]
    assert seen == ["se0", "se1"]
    assert [r.text for r in d.code] == ["; k", "op0", "op1", "op2", "op3"]
    assert [(r.hit, r.stall) for r in d.code[1:3]] == [(4, 2), (2, 5 + 6)]
    assert d.code[1].codeobj == 2 and d.realtime_se == {0: [(5, 100)], 1: [(5, 100)]}
    assert all(w.insts["line"].tolist() == [1, 2, 1] for w in d.waves)

    # export-ui on a capture-like folder, through the CLI
    src = tmp_path / "cap"
    src.mkdir()
    (src / "k.co").write_bytes(b"elf")
    (src / "k_1_se0.att").write_bytes(blob)
    (src / "capture.json").write_text(
        json.dumps(
            {
                "gfx_arch": "gfx1100",
                "kernels": [{"name": "k", "code_object": "k.co", "base": 0x5000_0000}],
                "blobs": [{"file": "k_1_se0.att", "se": 0}],
                "dispatches": [{"kernel": "k", "exec_tag": 1, "blobs": ["k_1_se0.att"]}],
            }
        )
    )
    r = invoke(["export-ui", str(src), "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    folder = tmp_path / "o" / "ui_output_agent_0_dispatch_1"
    code = json.loads((folder / "code.json").read_text())["code"]
    assert code[1][:3] == ["op0", 0, 1] and code[1][6] == 2
    assert (tmp_path / "o" / "stats_ui_output_agent_0_dispatch_1.csv").exists()
    assert "\x1b[" not in r.output  # no progress bar when not on a terminal


@pytest.mark.parametrize("cap", captures("gfx1201/plus_run0", synthetic=("gfx942",)))
def test_before_decode_runs_once_and_only_when_something_is_decoded(tmp_path, cap):
    """The command line tunes its allocator (commands.common.tune_allocator) through `before_decode`: called
    once, with the raw dispatches, before they are decoded, never for inputs that need no decoding."""
    from attdec.sources.pipeline import open_dispatches

    calls = []
    assert open_dispatches([cap], before_decode=lambda raws: calls.append(len(raws)))
    assert calls == [1]
    assert invoke(["export-ui", str(cap), "-o", str(tmp_path / "ui")]).exit_code == 0
    folders = sorted(p for p in (tmp_path / "ui").iterdir() if p.is_dir())
    assert folders
    assert open_dispatches(folders, before_decode=lambda raws: calls.append(2))
    assert calls == [1]


@pytest.mark.parametrize("cap", captures("gfx1201/plus_run0", synthetic=("gfx942",)))
def test_decode_and_export_ui_set_the_allocator_for_whole_blobs(monkeypatch, tmp_path, cap):
    """`decode` and `export-ui` read raw inputs without open_dispatches: they set the allocator themselves
    (without it, the 59 captures' decode faulted 39k pages in instead of 24k)."""
    import ctypes

    from attdec.commands import common

    calls = []
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", lambda name: types.SimpleNamespace(mallopt=lambda *a: calls.append(a)))
    keep = [(common.M_TRIM_THRESHOLD, common.MALLOC_KEEP_BYTES), (common.M_MMAP_THRESHOLD, common.MALLOC_REUSE_BYTES)]
    assert invoke(["decode", str(cap)]).exit_code == 0
    assert calls == keep
    calls.clear()
    assert invoke(["export-ui", str(cap), "-o", str(tmp_path / "ui")]).exit_code == 0
    assert calls == keep


def test_allocator_keeps_freed_memory_unless_a_big_blob_is_decoded_in_windows(monkeypatch):
    import ctypes

    from attdec.commands import common

    calls = []
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", lambda name: types.SimpleNamespace(mallopt=lambda *a: calls.append(a)))
    small = RawDispatch("k", target("gfx1200"), [], [RawBlob(0, b"\0" * 64, "a.att")])
    big = RawDispatch("k", target("gfx1200"), [], [RawBlob(0, b"\0" * (9 << 20), "b.att")])
    common.tune_allocator([small, big], fold=None)  # whole blobs: keep freed blocks for reuse
    assert calls == [
        (common.M_TRIM_THRESHOLD, common.MALLOC_KEEP_BYTES),
        (common.M_MMAP_THRESHOLD, common.MALLOC_REUSE_BYTES),
    ]
    calls.clear()
    common.tune_allocator([small], fold="totals")  # nothing big enough for windows
    assert calls[-1] == (common.M_MMAP_THRESHOLD, common.MALLOC_REUSE_BYTES)
    calls.clear()
    common.tune_allocator([small, big], fold="totals")  # windows: big blocks and freed heap go back at once
    assert calls == [
        (common.M_MMAP_THRESHOLD, common.MALLOC_RETURN_BYTES),
        (common.M_TRIM_THRESHOLD, common.MALLOC_RETURN_BYTES),
    ]
