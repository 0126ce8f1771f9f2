"""The ui_output writer: structure and field types as in real rocprofv3 folders, totals that read back."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter, defaultdict

import numpy as np
import pytest
from conftest import SHARED, SYNTHETIC_CAPTURES, real_data, shared_path
from test_listing import BASE, _code, _wave

from attdec.model import OCCUPANCY_DTYPE, Dispatch, Wave
from attdec.report.ui_output import write_ui_output, wstates
from attdec.sources.listing import build_listing

SAMPLE = (
    "ui_output_samples",
    "jhinpan__flydsl-kernel-profiling-lib",
    "examples",
    "flash_attn_func",
    "att_viewer",
    "small",
    "ui_output_agent_32235_dispatch_44",
)


def _norm(key: str) -> str:
    return re.sub(r"\d+", "#", key)


def fits(ours, sample, path="") -> None:
    """`ours` has the same keys (digits normalised) and value types as `sample`, recursively."""
    if isinstance(sample, dict):
        assert isinstance(ours, dict), path
        s_keys = {_norm(k): k for k in sample}
        o_keys = {_norm(k): k for k in ours}
        assert set(o_keys) == set(s_keys), f"{path}: keys {sorted(o_keys)} != {sorted(s_keys)}"
        for nk, ok in o_keys.items():
            fits(ours[ok], sample[s_keys[nk]], f"{path}.{nk}")
    elif isinstance(sample, list):
        assert isinstance(ours, list), path
        if not ours or not sample:
            return
        for i, o in enumerate(ours[:30]):
            if isinstance(o, (dict, list)):
                fits(o, sample[min(i, len(sample) - 1)], f"{path}[{i}]")
            else:
                assert any(type(o) is type(s) for s in sample[:30]), f"{path}[{i}]: {type(o).__name__}"
    else:
        assert type(ours) is type(sample), f"{path}: {type(ours).__name__} != {type(sample).__name__}"


def _dispatch() -> Dispatch:
    w1 = _wave(
        100,
        [
            (110, 2, 0, 4, BASE + 0x110),
            (120, 9, 30, 34, BASE + 0x114),
            (130, 6, 0, 8, 0),
            (200, 6, 2, 8, BASE + 0x118),
            (300, 11, 0, 4, BASE + 0x12C),
        ],
    )
    w1.timeline = [(1, 10), (2, 10), (4, 30), (2, 250)]
    w2 = _wave(50, [(60, 2, 0, 4, BASE + 0x110), (90, 1, 5, 20, BASE + 0x114)])
    w2.simd, w2.timeline = 1, [(1, 10), (3, 30), (2, 30)]
    w3 = _wave(400, [(410, 2, 1, 4, BASE + 0x110)])  # same slot as w1, later
    w3.timeline = [(1, 10), (2, 4)]
    bare = Wave(se=1, cu=0, simd=0, slot=0, begin=0, end=5, timeline=[(1, 5)])  # gets no file
    occ = np.zeros(4, OCCUPANCY_DTYPE)
    occ[:] = [(0, 0, 0, 0, 1, 100, 0), (0, 0, 0, 0, 0, 1100, 0), (1, 2, 1, 3, 1, 7, 0), (1, 2, 1, 3, 0, 9, 0)]
    d = Dispatch(
        name="k#1",
        target="gfx1100",
        kernel="b",
        waves=[w1, w2, w3, bare],
        occupancy=occ,
        realtime_se={0: [(10, 1000), (5000, 3000)], 1: [(12, 1000)]},
    )
    d.code = build_listing(d, _code())
    return d


def test_structure_matches_real_sample(tmp_path):
    sample = shared_path(*SAMPLE)
    folder = write_ui_output(_dispatch(), tmp_path, "ui_output_agent_0_dispatch_1")
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "attdec_agent_info.csv",
        "code.json",
        "filenames.json",
        "occupancy.json",
        "realtime.json",
        "se0_sm0_sl0_wv0.json",
        "se0_sm0_sl0_wv1.json",
        "se0_sm1_sl0_wv0.json",
        "wstates1.json",
        "wstates2.json",
        "wstates3.json",
        "wstates4.json",
    ]
    for f in ("filenames.json", "code.json", "occupancy.json", "realtime.json", "wstates1.json"):
        fits(json.loads((folder / f).read_text()), json.loads((sample / f).read_text()), f)
    fits(
        json.loads((folder / "se0_sm0_sl0_wv0.json").read_text()),
        json.loads((sample / "se3_sm0_sl0_wv0.json").read_text()),
        "wave",
    )
    fn = json.loads((folder / "filenames.json").read_text())
    assert fn["gfxip"] == 11 and fn["gfxv"] == "navi" and fn["version"] == "3.0.0"
    # every listed file exists with the listed begin/end, and vice versa (as on the real samples)
    listed = {}
    for se, simds in fn["wave_filenames"].items():
        for simd, slots in simds.items():
            for slot, wvs in slots.items():
                for wv, (f, b, e) in wvs.items():
                    assert f == f"se{se}_sm{simd}_sl{slot}_wv{wv}.json"
                    w = json.loads((folder / f).read_text())["wave"]
                    assert (w["begin"], w["end"], w["id"]) == (b, e, int(wv))
                    listed[f] = 1
    assert set(listed) == {n for n in names if n.startswith("se")}
    code = json.loads((folder / "code.json").read_text())
    assert code["header"] == "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"
    assert all(len(r) == 10 for r in code["code"])
    occ = json.loads((folder / "occupancy.json").read_text())
    assert occ["0"] == [[100, 0, 0, 0, 1, 1], [1100, 0, 0, 0, 0, 1]] and occ["dispatches"]["1"] == "b"
    rt = json.loads((folder / "realtime.json").read_text())
    assert rt["SE0"] == [[10, 1000], [5000, 3000]] and rt["metadata"]["frequency"] == 100_000_000


def test_totals_read_back(tmp_path):
    """code.json and the stats CSV hold what the wave files give under ui-output-format §5.1."""
    d = _dispatch()
    folder = write_ui_output(d, tmp_path, "ui_output_x")
    code = json.loads((folder / "code.json").read_text())["code"]
    tot = defaultdict(lambda: [0, 0, 0, 0])
    total_stall = 0
    for f in folder.glob("se*_sm*_sl*_wv*.json"):
        w = json.loads(f.read_text())["wave"]
        prev_end = w["begin"]
        for t, _c, s, du, line in w["instructions"]:
            total_stall += s
            if line == 0:  # unresolved PC (line 0 is the first label row)
                continue
            r = tot[line]
            r[0] += 1
            r[1] += du
            r[2] += s
            r[3] += max(0, t - prev_end)
            prev_end = max(prev_end, t + du)
    assert total_stall == sum(int(w.insts["stall"].sum()) for w in d.waves) == 38
    for row in code:
        if not row[0].startswith(";"):
            assert row[6:10] == tot.get(row[2], [0, 0, 0, 0]), row
    with open(tmp_path / "stats_ui_output_x.csv") as f:
        stats = list(csv.reader(f))
    assert stats[0] == ["CodeObj", "Vaddr", "Instruction", "Hitcount", "Latency", "Stall", "Idle", "Source"]
    assert len(stats) == 1 + len(code) and stats[1][2] == "; b"
    assert sorted((int(r[0]), int(r[1]), int(r[5])) for r in stats[1:]) == sorted((r[4], r[5], r[8]) for r in code)
    assert (tmp_path / "stats_ui_output_x.csv").read_text().splitlines()[1].startswith('3,272,"; b"')


def test_zero_wave_dispatch_is_an_empty_shell(tmp_path):
    d = Dispatch(name="e", target="gfx950", kernel="E")
    folder = write_ui_output(d, tmp_path, "ui_output_agent_0_dispatch_2")
    fn = json.loads((folder / "filenames.json").read_text())
    assert fn["wave_filenames"] is None and fn["gfxip"] == 9 and fn["gfxv"] == "vega"
    assert json.loads((folder / "code.json").read_text())["code"] is None
    assert not (folder / "realtime.json").exists()
    assert (tmp_path / "stats_ui_output_agent_0_dispatch_2.csv").read_text().count("\n") == 1


def test_wstates_reproduce_real_samples():
    """wstates<k>.json recomputed from each real sample's own wave files equals that sample's files."""
    n = 0
    for fn in sorted(shared_path("ui_output_samples").rglob("filenames.json")):
        sample = fn.parent
        waves = []
        for f in sorted(sample.glob("se*_sm*_sl*_wv*.json")):
            w = json.loads(f.read_text())["wave"]
            waves.append(
                Wave(
                    se=0,
                    cu=w["cu"],
                    simd=w["simd"],
                    slot=w["slot"],
                    begin=w["begin"],
                    end=w["end"],
                    timeline=[tuple(x) for x in w["timeline"]],
                )
            )
        if not waves:
            continue
        got = wstates(waves)
        for k in range(1, 5):
            want = json.loads((sample / f"wstates{k}.json").read_text())
            assert got[k] == want, (sample.name, k)
            n += 1
    assert n >= 64


def test_reexport_replaces_stale_files(tmp_path):
    d = _dispatch()
    write_ui_output(d, tmp_path, "f")
    d.waves = d.waves[:1]
    folder = write_ui_output(d, tmp_path, "f")
    assert sorted(p.name for p in folder.glob("se*.json")) == ["se0_sm0_sl0_wv0.json"]


# ---- what rocprof-compute-viewer reads beyond the totals -------------------------------------------


def _wave_docs(folder) -> dict[str, dict]:
    return {f.name: json.loads(f.read_text())["wave"] for f in sorted(folder.glob("se*_sm*_sl*_wv*.json"))}


def test_waitcnt_lists_are_the_writers_on_every_sample(tmp_path):
    """Every real ui_output sample re-exported: each wave file's waitcnt list is the one rocprofv3's writer
    put there, entry for entry and in its order."""
    from attdec.sources.pipeline import open_dispatches

    root = shared_path("ui_output_samples")
    folders = sorted({p.parent for p in root.rglob("filenames.json")})
    waves = entries = 0
    for n, folder in enumerate(folders):
        for d in open_dispatches([str(folder)]):
            ours = _wave_docs(write_ui_output(d, tmp_path / str(n), folder.name))
            for name, theirs in _wave_docs(folder).items():
                assert ours[name]["waitcnt"] == theirs["waitcnt"], (folder, name)
                waves += 1
                entries += len(theirs["waitcnt"])
    assert waves > 1000 and entries > 10_000


@pytest.mark.parametrize(
    "arch, texts, want",
    [
        # gfx10/gfx11: the writer lists vscnt, then vmcnt, then lgkmcnt
        (
            "gfx1100",
            ["global_load_b32 v1, v[2:3], off", "ds_load_b32 v1, v2", "s_waitcnt vmcnt(0) lgkmcnt(0)"],
            [[3, [[1, 0]]], [3, [[2, 0]]]],
        ),
        # FLAT operations first in an entry (gfx9 as well), FLAT stores last on lgkmcnt
        (
            "gfx950",
            ["global_load_dword v1, v[2:3], off", "flat_load_dword v1, v[2:3]", "s_waitcnt vmcnt(0)"],
            [[3, [[2, 0], [1, 0]]]],
        ),
        (
            "gfx1100",
            ["flat_store_b32 v[2:3], v1", "ds_load_b32 v1, v2", "flat_load_b32 v1, v[2:3]", "s_waitcnt lgkmcnt(0)"],
            [[4, [[3, 0], [2, 0], [1, 0]]]],
        ),
        (
            "gfx1100",
            ["global_store_b32 v[2:3], v1, off", "flat_store_b32 v[2:3], v1", "s_waitcnt_vscnt null, 0x0"],
            [[3, [[2, 0], [1, 0]]]],
        ),
        # expcnt is not a counter the gfx10 rules track
        ("gfx1100", ["exp mrt0 v0, v0, v0, v0", "s_waitcnt expcnt(0)"], []),
        # gfx12: loadcnt before dscnt; s_wait_idle one entry, loadcnt, storecnt, dscnt, kmcnt
        (
            "gfx1200",
            ["global_load_b32 v1, v[2:3], off", "ds_load_b32 v1, v2", "s_wait_loadcnt_dscnt 0x0"],
            [[3, [[1, 0]]], [3, [[2, 0]]]],
        ),
        (
            "gfx1200",
            [
                "global_load_b32 v1, v[2:3], off",
                "ds_load_b32 v1, v2",
                "s_load_b32 s4, s[0:1], 0x10",
                "global_store_b32 v[2:3], v1, off",
                "s_wait_idle",
            ],
            [[5, [[1, 0], [4, 0], [2, 0], [3, 0]]]],
        ),
    ],
)
def test_waitcnt_entries_in_the_writers_counter_order(arch, texts, want):
    """Each generation's entries in the order of rocprofv3's writer (att-tool waitcnt/gfx9|10|12, the same
    in rocprof-compute-viewer's src/data/waitcnt/): counter by counter, FLAT operations where it joins them."""
    from test_waits import dispatch

    from attdec.report.ui_output import waitcnt_lists

    d = dispatch(arch, texts, [[(i, 0) for i in range(1, len(texts) + 1)]])
    assert waitcnt_lists(d, d.waves) == [want]


def test_realtime_json_of_a_gfx9_session(tmp_path):
    """A rocprofv3 session of gfx9 .att files whose traces carry the ROCm protocol's realtime samples and
    RT_FREQUENCY record: realtime.json holds each SE's samples and the trace's frequency, laid out as in
    rocprofv3's gfx950 folders (its samples hold 100 MHz; this trace says 25 MHz)."""

    from test_records_official import agent_info

    from attdec.decoders.userdata import ROC_MAGIC, USERDATA_3
    from attdec.sources.pipeline import open_dispatches
    from tests.support.sqtt_encoder import Gfx9Encoder

    host = tmp_path / "session" / "host"
    host.mkdir(parents=True)
    want = {}
    for se, (start, high) in enumerate([(40, 7), (44, 9)]):
        e = Gfx9Encoder().userdata([ROC_MAGIC, agent_info(0, 25_000)])  # RT_FREQUENCY in kHz
        samples = []
        for t, low in ((start, 0x20), (start + 400, 0x40)):
            e.advance(t - e.time).reg(USERDATA_3, 5).reg(USERDATA_3, 0x10).reg(USERDATA_3, high)
            e.reg(USERDATA_3, low)
            samples.append([e.time, low | high << 32])
        want[f"SE{se}"] = samples
        (host / f"11_22_shader_engine_{se}_3.att").write_bytes(e.data())
    (host / "11_agent_info.csv").write_text(
        '"Node_Id","Logical_Node_Id","Agent_Type","Gfx_Target_Version","Name"\n1,1,"GPU",90500,"gfx950"\n'
    )
    (d,) = open_dispatches([str(tmp_path / "session")])
    folder = write_ui_output(d, tmp_path / "out", "ui_output_agent_22_dispatch_3")
    rt = json.loads((folder / "realtime.json").read_text())
    fits(rt, json.loads(shared_path(*SAMPLE, "realtime.json").read_text()))
    assert rt == {**want, "metadata": {"descriptor": "[gfx_clock, realtime_clock]", "frequency": 25_000_000}}
    (back,) = open_dispatches([str(folder)])
    assert back.realtime_se == {se: [tuple(p) for p in want[f"SE{se}"]] for se in (0, 1)}
    assert back.rt_frequency == 25_000_000  # read back from metadata.frequency, not assumed


def test_export_of_the_real_session_is_rocprofv3s_own_folder(tmp_path):
    """The real rocprofv3 session exported from its .att files: every wave file (waitcnt lists included),
    filenames.json and the wstates files equal rocprofv3's own, code.json's rows equal its older 8-column
    rows, occupancy equals its early packed layout at that layout's 8-cycle resolution, and neither writes
    realtime.json (the trace holds no realtime samples)."""
    from attdec.sources.pipeline import open_dispatches

    session = shared_path("rocprofv3_sessions", "skinny_M128_att_hack0")
    theirs = session / "ui_output_agent_1026_dispatch_20"
    (d,) = open_dispatches([str(session)])
    ours = write_ui_output(d, tmp_path, theirs.name)
    names = sorted(p.name for p in theirs.glob("*.json") if p.name != "snapshots.json")
    assert names == sorted(p.name for p in ours.glob("*.json"))
    for name in names:
        a, b = (json.loads((f / name).read_text()) for f in (ours, theirs))
        if name == "code.json":
            assert [r[:1] + r[2:8] for r in a["code"]] == [r[:1] + r[2:8] for r in b["code"]]
        elif name != "occupancy.json":
            assert a == b, name
    (back,) = open_dispatches([str(theirs)])

    def rows(occ, res=1):
        cols = [occ[k] for k in ("se", "cu", "simd", "slot", "start")] + [occ["time"] // res * res]
        return sorted(map(tuple, np.stack(cols, 1).tolist()))

    assert rows(d.occupancy, 8) == rows(back.occupancy) and len(back.occupancy) > 1000


def _pairs_of_files(folder) -> dict[str, Counter]:
    return {
        n: Counter((ln, dep) for ln, deps in w["waitcnt"] for dep, _ in deps) for n, w in _wave_docs(folder).items()
    }


def test_export_of_a_capture_agrees_with_itself_and_with_waits(tmp_path):
    """A raw capture whose PC walk stops early (records without a PC): code.json's totals equal the wave
    files' sums and what attdec reads back equals the decode; each wave's waitcnt pairs are the memory
    pairs of `attdec waits`' attribution."""
    from attdec.analysis.hotspots import hotspots
    from attdec.analysis.waits import attribute
    from attdec.report.ui_output import WAITCNT_ORDER, wave_file_name
    from attdec.sources.pipeline import open_dispatches

    caps = [SYNTHETIC_CAPTURES["gfx942"]]
    caps += [SHARED / "captures" / c for c in ("gfx1201/ops_run0", "gfx1100/gemm_run0") if real_data("captures", c)]
    for n, capture in enumerate(caps):
        (d,) = open_dispatches([str(capture)])
        folder = write_ui_output(d, tmp_path / str(n), "ui_output_agent_0_dispatch_1")
        code = json.loads((folder / "code.json").read_text())["code"]
        docs = _wave_docs(folder)
        records = sum(len(w["instructions"]) for w in docs.values())
        stall = sum(i[2] for w in docs.values() for i in w["instructions"])
        assert (sum(r[6] for r in code), sum(r[8] for r in code)) == (records, stall)
        assert records == sum(len(w.insts) for w in d.waves)
        (back,) = open_dispatches([str(folder)])
        assert hotspots([back]).totals == hotspots([d]).totals
        a = attribute(d)
        listed = sum(1 << i for i, c in enumerate(a.counters) if c in WAITCNT_ORDER[d.target.generation])
        keep = (a.mask & listed) != 0
        want: dict[str, Counter] = {wave_file_name(w): Counter() for w in d.waves}
        for w_, p_ in zip(a.wait[keep].tolist(), a.producer[keep].tolist()):
            wave = d.waves[int(a.stream.wave[w_])]
            want[wave_file_name(wave)][(int(a.stream.lines[w_]), int(a.stream.lines[p_]))] += 1
        assert _pairs_of_files(folder) == want
    assert sum(sum(c.values()) for c in want.values()) > 0


def test_other_simd_and_shaderdata_lists_read_back(tmp_path):
    """Other-SIMD records of a real gfx11 capture and SHADERDATA records go to the newest writers' files,
    listed in filenames.json, and read back record for record (AMD's hidden latency, which counts
    other-SIMD work, gives the same on the folder as on the capture)."""
    from attdec.analysis.latency import amd_hidden_latency
    from attdec.model import SHADERDATA_DTYPE
    from attdec.sources.pipeline import open_dispatches

    (d,) = open_dispatches([str(shared_path("captures", "gfx1100", "gemm_run0"))])
    assert d.other_simd is not None and len(d.other_simd)
    d.shaderdata = np.array([(1, 900, 7, 3, 1, 2, 1), (0, 800, 1 << 40, 0, 0, 0, 0)], SHADERDATA_DTYPE)
    folder = write_ui_output(d, tmp_path, "ui_output_agent_0_dispatch_1")
    fn = json.loads((folder / "filenames.json").read_text())
    assert set(fn["other_simd_filenames"]) == {str(se) for se in set(d.other_simd["se"].tolist())}
    assert fn["shaderdata_filenames"] == {
        "0": [["shaderdata_0_0.json", 800, 800]],
        "1": [["shaderdata_1_0.json", 900, 900]],
    }
    (back,) = open_dispatches([str(folder)])
    order = np.lexsort((d.other_simd["time"], d.other_simd["wgp"], d.other_simd["se"]))
    assert back.other_simd.tolist() == d.other_simd[order].tolist()
    assert sorted(back.shaderdata.tolist()) == sorted(d.shaderdata.tolist())
    assert amd_hidden_latency(back).kernel == amd_hidden_latency(d).kernel


def test_sources_found_are_copied_with_snapshots(tmp_path):
    """Source files the listing names that exist here (at the written path, or under a --source-dir by the
    path's tail) are copied in as source_<n>_<name>, and snapshots.json maps each written path to its copy."""
    from attdec.model import CodeLine
    from attdec.report.source_files import find_sources

    here = tmp_path / "here.py"
    here.write_text("a = 1\nb = 2\n")
    (tmp_path / "src" / "kernels").mkdir(parents=True)
    (tmp_path / "src" / "kernels" / "k.py").write_text("x = 3\n")
    code = [
        CodeLine(0, "; k"),
        CodeLine(1, "s_nop 0", f"{here}:2", 1, 0x100),
        CodeLine(2, "s_endpgm", "/build/kernels/k.py:1 -> /nowhere/missing.py:4", 1, 0x104),
    ]
    d = Dispatch("k", "gfx1100", kernel="k", code=code)
    folder = write_ui_output(d, tmp_path / "out", "ui_output_x", find_sources([d], [str(tmp_path / "src")]))
    tree = json.loads((folder / "snapshots.json").read_text())

    def leaf(path: str):
        node = tree
        for part in ("/", *path.strip("/").split("/")):
            node = node[part]
        return node

    assert (folder / leaf("/build/kernels/k.py")).read_text() == "x = 3\n"
    assert (folder / leaf(str(here))).read_text() == "a = 1\nb = 2\n"
    assert sorted(p.name for p in folder.glob("source_*")) == sorted([leaf("/build/kernels/k.py"), leaf(str(here))])
    assert "missing.py" not in json.dumps(tree)
    bare = write_ui_output(Dispatch("k", "gfx1100", kernel="k", code=code[:1]), tmp_path / "o2", "ui_output_y", {})
    assert not (bare / "snapshots.json").exists()
