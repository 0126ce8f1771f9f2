"""Producer attribution (attdec waits, hotspots --charge producer) and hidden latency.

Synthetic wave streams with known answers for every counter rule of every family, the vectorised
replay against a plain sequential model on random streams, conservation of stall under --charge
producer, and real samples: the attribution equals the waitcnt dependency lists rocprofv3's writer put in
every ui_output wave file.
"""

from __future__ import annotations

import collections
import json
import random

import numpy as np
import pytest
from conftest import FIXTURES, SHARED, captures, cli, decoded, real_data, shared_path

from attdec.analysis.hotspots import hotspots
from attdec.analysis.latency import hidden_latency
from attdec.analysis.stream import stream_of
from attdec.analysis.waits import _retire, attribute, wait_sites
from attdec.commands.demo import demo_path
from attdec.isa import waitcnt as W
from attdec.model import CodeLine, Dispatch, Wave, empty_insts
from attdec.model.target import target
from attdec.sources.pipeline import open_dispatches as open_inputs

SAMPLES = "ui_output_samples"


def dispatch(arch: str, texts: list[str], runs: list[list[tuple[int, int]]]) -> Dispatch:
    """A dispatch whose listing is `texts` (line ids 1..n) and whose waves execute `runs`: per wave a list
    of (line id, stall), one record every 10 cycles plus the stall."""
    code = [CodeLine(0, "; k")] + [
        CodeLine(i, t, f"k.py:{i}", codeobj=1, vaddr=0x100 + 4 * i) for i, t in enumerate(texts, 1)
    ]
    waves = []
    for k, run in enumerate(runs):
        ins = empty_insts(len(run))
        t = 1000
        for j, (line, stall) in enumerate(run):
            ins[j] = (t, 0, stall, stall + 4, 0, line)
            t += 10 + stall
        waves.append(Wave(0, 0, 0, k, 1000, t, ins))
    return Dispatch("synthetic", arch, "k", code, waves)


def named(d: Dispatch) -> dict[int, list[int]]:
    """Record index of each wait -> record indices of the producers it names (wave 0)."""
    a = attribute(d)
    out = collections.defaultdict(list)
    for w, p in zip(a.wait.tolist(), a.producer.tolist()):
        out[w].append(p)
    return dict(out)


def seq(*lines, stall=0):
    return [(ln, stall) for ln in lines]


# ---- counter rules, per family --------------------------------------------------------------------

GFX9 = [
    "global_load_dword v1, v[2:3], off",  # 1
    "global_store_dword v[2:3], v1, off",  # 2
    "s_waitcnt vmcnt(1)",  # 3
    "s_waitcnt vmcnt(0)",  # 4
    "s_load_dword s4, s[0:1], 0x10",  # 5
    "ds_read_b32 v1, v2",  # 6
    "s_waitcnt lgkmcnt(1)",  # 7
    "s_waitcnt lgkmcnt(0)",  # 8
    "flat_load_dword v1, v[2:3]",  # 9
    "exp mrt0 v0, v0, v0, v0",  # 10
    "s_waitcnt expcnt(0)",  # 11
    "s_sendmsg sendmsg(MSG_INTERRUPT)",  # 12
    "s_waitcnt vmcnt(0) lgkmcnt(0)",  # 13
    "s_waitcnt 0x70",  # 14: raw gfx9 simm16 = vmcnt(0) lgkmcnt(0), expcnt at its maximum 7
]


def test_gfx9_vmcnt_in_order_loads_and_stores_share_it():
    # load, store, load, vmcnt(1): the two oldest (load, store) retire; vmcnt(0) the last load
    d = dispatch("gfx950", GFX9, [seq(1, 2, 1, 3, 4)])
    assert named(d) == {3: [0, 1], 4: [2]}


def test_gfx9_lgkmcnt_lds_in_order_smem_out_of_order():
    # LDS only: in order, lgkmcnt(1) names the older one
    assert named(dispatch("gfx950", GFX9, [seq(6, 6, 7, 8)])) == {2: [0], 3: [1]}
    # SMEM pending: lgkmcnt(1) names nothing (out of order), lgkmcnt(0) names all three
    assert named(dispatch("gfx950", GFX9, [seq(5, 6, 6, 7, 8)])) == {4: [0, 1, 2]}
    # two SMEM alone are out of order too
    assert named(dispatch("gfx950", GFX9, [seq(5, 5, 7, 8)])) == {3: [0, 1]}
    # LDS and a message mixed: out of order, only the wait to 0 names them
    assert named(dispatch("gfx950", GFX9, [seq(6, 12, 6, 7, 8)])) == {4: [0, 1, 2]}


def test_gfx9_flat_counts_on_both_and_makes_them_out_of_order():
    # flat + load on vmcnt, vmcnt(1): out of order (flat), nothing; vmcnt(0) lgkmcnt(0) names both once
    d = dispatch("gfx950", GFX9, [seq(9, 1, 3, 13)])
    assert named(d) == {3: [0, 1]}
    a = attribute(d)
    bits = dict(zip(a.producer.tolist(), a.mask.tolist()))
    vm, lgkm = 1 << a.counters.index("vmcnt"), 1 << a.counters.index("lgkmcnt")
    assert bits == {0: vm | lgkm, 1: vm}


def test_gfx9_expcnt_and_raw_immediate():
    assert named(dispatch("gfx950", GFX9, [seq(10, 10, 11)])) == {2: [0, 1]}
    assert W.waits_of("s_waitcnt 0x70", target("gfx950")) == {"vmcnt": 0, "lgkmcnt": 0}
    assert named(dispatch("gfx950", GFX9, [seq(1, 6, 14)])) == {2: [0, 1]}


def test_expcnt_capacity_bounds_what_a_wait_names():
    # 9 exports in flight cannot be: expcnt holds 7, so expcnt(0) names the 7 youngest
    d = dispatch("gfx950", GFX9, [seq(*[10] * 9, 11)])
    assert named(d) == {9: list(range(2, 9))}


def test_waves_are_separate():
    # wave 1's wait names only wave 1's load (record 3 of the stream)
    d = dispatch("gfx950", GFX9, [seq(1, 1), seq(1, 4)])
    assert named(d) == {3: [2]}


GFX11 = [
    "global_load_b32 v1, v[2:3], off",  # 1
    "global_store_b32 v[2:3], v1, off",  # 2
    "s_waitcnt vmcnt(0)",  # 3
    "s_waitcnt_vscnt null, 0x0",  # 4
    "s_waitcnt_vscnt null, 0x1",  # 5
    "ds_load_b32 v1, v2",  # 6
    "s_waitcnt lgkmcnt(1)",  # 7
    "s_load_b64 s[0:1], s[0:1], 0x0",  # 8
    "s_waitcnt lgkmcnt(0)",  # 9
    "v_cmp_gt_i32_e32 vcc_lo, s0, v1",  # 10
    "v_add_f32_e32 v1, v2, v3",  # 11
    "s_waitcnt_depctr 0xfffd",  # 12: va_vcc(0)
    "s_waitcnt_depctr depctr_va_vdst(1)",  # 13
    "s_mov_b32 s1, s2",  # 14
    "s_waitcnt_depctr 0xfffe",  # 15: sa_sdst(0)
    "s_waitcnt 0x3f7",  # 16: raw gfx11 simm16 = vmcnt(0) only
    "lds_param_load v1, attr0.x",  # 17
    "s_waitcnt expcnt(0)",  # 18
]


@pytest.mark.parametrize("arch", ["gfx1030", "gfx1100", "gfx1151"])
def test_gfx10_gfx11_stores_on_vscnt(arch):
    # load, store, store: vmcnt(0) names the load only; vscnt(1) the older store; vscnt(0) the younger
    d = dispatch(arch, GFX11, [seq(1, 2, 2, 3, 5, 4)])
    assert named(d) == {3: [0], 4: [1], 5: [2]}


def test_gfx11_lgkmcnt():
    assert named(dispatch("gfx1100", GFX11, [seq(6, 6, 7, 9)])) == {2: [0], 3: [1]}
    assert named(dispatch("gfx1100", GFX11, [seq(8, 6, 7, 9)])) == {3: [0, 1]}


def test_gfx11_raw_waitcnt_and_param_loads():
    assert W.waits_of("s_waitcnt 0x3f7", target("gfx1100")) == {"vmcnt": 0}
    assert named(dispatch("gfx1100", GFX11, [seq(1, 6, 16)])) == {2: [0]}
    assert named(dispatch("gfx1100", GFX11, [seq(17, 17, 18)])) == {2: [0, 1]}


def test_gfx11_depctr_waits_for_alu_results():
    assert W.waits_of("s_waitcnt_depctr 0xfffd", target("gfx1100")) == {"va_vcc": 0}
    assert W.waits_of("s_waitcnt_depctr 0xfffe", target("gfx1100")) == {"sa_sdst": 0}
    # va_vcc(0): the VCC writer (v_cmp), not the VGPR-only add
    assert named(dispatch("gfx1100", GFX11, [seq(10, 11, 12)])) == {2: [0]}
    # va_vdst(1): all VGPR writers but the youngest: the first add only
    assert named(dispatch("gfx1100", GFX11, [seq(11, 11, 13)])) == {2: [0]}
    # sa_sdst(0): the SALU that wrote an SGPR
    assert named(dispatch("gfx1100", GFX11, [seq(14, 11, 15)])) == {2: [0]}
    # va_vcc holds one: of two v_cmp, a va_vcc(0) names the younger
    assert named(dispatch("gfx1100", GFX11, [seq(10, 10, 12)])) == {2: [1]}


GFX12 = [
    "global_load_b32 v1, v[2:3], off",  # 1
    "global_store_b32 v[2:3], v1, off",  # 2
    "image_sample v[0:3], v[4:5], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_2D",  # 3
    "image_bvh_intersect_ray v[0:3], v[4:14], s[0:3]",  # 4
    "ds_load_b32 v1, v2",  # 5
    "s_load_b64 s[0:1], s[0:1], 0x0",  # 6
    "s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)",  # 7
    "export mrt0 v0, v0, v0, v0",  # 8
    "s_wait_loadcnt 0x0",  # 9
    "s_wait_storecnt 0x0",  # 10
    "s_wait_samplecnt 0x0",  # 11
    "s_wait_bvhcnt 0x0",  # 12
    "s_wait_dscnt 0x1",  # 13
    "s_wait_kmcnt 0x1",  # 14
    "s_wait_kmcnt 0x0",  # 15
    "s_wait_expcnt 0x0",  # 16
    "s_wait_loadcnt_dscnt 0x0",  # 17
    "s_wait_storecnt_dscnt 0x100",  # 18: storecnt(1) dscnt(0)
    "s_wait_idle",  # 19
    "s_wait_alu 0xfffd",  # 20: va_vcc(0)
    "v_cmp_gt_i32_e32 vcc_lo, s0, v1",  # 21
    "s_wait_loadcnt 0x1",  # 22
]


def test_gfx12_split_counters():
    # one op per counter, each wait names exactly its own counter's op
    d = dispatch("gfx1200", GFX12, [seq(1, 2, 3, 4, 8, 9, 10, 11, 12, 16)])
    assert named(d) == {5: [0], 6: [1], 7: [2], 8: [3], 9: [4]}


def test_gfx12_loadcnt_in_order_and_combined_forms():
    assert named(dispatch("gfx1200", GFX12, [seq(1, 1, 1, 22, 9)])) == {3: [0, 1], 4: [2]}
    # loadcnt_dscnt 0: both the load and the LDS op
    assert named(dispatch("gfx1200", GFX12, [seq(1, 5, 17)])) == {2: [0, 1]}
    # storecnt_dscnt 0x100: storecnt(1) keeps the younger store, dscnt(0) names the LDS op
    assert W.waits_of("s_wait_storecnt_dscnt 0x100", target("gfx1200")) == {"storecnt": 1, "dscnt": 0}
    assert named(dispatch("gfx1200", GFX12, [seq(2, 2, 5, 18)])) == {3: [0, 2]}


def test_gfx12_dscnt_in_order_kmcnt_smem_out_of_order_messages_in_order():
    assert named(dispatch("gfx1200", GFX12, [seq(5, 5, 13)])) == {2: [0]}
    assert named(dispatch("gfx1200", GFX12, [seq(6, 6, 14, 15)])) == {3: [0, 1]}
    assert named(dispatch("gfx1200", GFX12, [seq(7, 7, 14)])) == {2: [0]}


def test_gfx12_wait_idle_and_wait_alu():
    d = dispatch("gfx1200", GFX12, [seq(1, 2, 5, 6, 19)])
    assert named(d) == {4: [0, 1, 2, 3]}
    assert named(dispatch("gfx1200", GFX12, [seq(21, 20)])) == {1: [0]}


# ---- the vectorised replay is the sequential definition ------------------------------------------


def _reference(stream, kind, count, cap, ooo):
    """Plain per-wave simulation of one counter: wait record -> producer records."""
    out = {}
    for k in range(len(stream.waves)):
        pending = []
        for r in range(stream.starts[k], stream.starts[k + 1]):
            if count[r] >= 0:
                if cap is not None:
                    pending = pending[-cap:] if cap else []
                n = count[r]
                kinds = {kd for _, kd in pending}
                ordered = len(kinds) <= 1 and not (kinds & set(ooo.tolist()))
                if n == 0:
                    retire, pending = pending, []
                elif len(pending) > n and ordered:
                    retire, pending = pending[: len(pending) - n], pending[len(pending) - n :]
                else:
                    retire = []
                if retire:
                    out[r] = [p for p, _ in retire]
            if kind[r] >= 0:
                pending.append((r, int(kind[r])))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_vectorised_replay_equals_sequential(seed):
    rng = random.Random(seed)
    waves = []
    for _ in range(rng.randint(1, 4)):
        n = rng.randint(0, 60)
        ins = empty_insts(n)
        ins["line"] = np.arange(n)
        waves.append(Wave(0, 0, 0, 0, 0, 0, ins))
    st = stream_of(waves)
    n = len(st)
    kinds = [rng.choice([-1, -1, 0, 0, 1, 2]) for _ in range(n)]
    counts = [rng.choice([-1, -1, -1, 0, 1, 2, 3]) if kinds[i] < 0 else -1 for i in range(n)]
    kind, count = np.array(kinds, np.int64), np.array(counts, np.int64)
    ooo = np.array([2] if seed % 2 else [], np.int64)
    cap = [None, 3, 1][seed % 3]
    ops, waits = np.flatnonzero(kind >= 0), np.flatnonzero(count >= 0)
    before, after = _retire(st, ops, kind[ops], waits, count[waits], cap, ooo)
    got = {int(w): ops[b:e].tolist() for w, b, e in zip(waits, before, after) if e > b}
    assert got == _reference(st, kind, count, cap, ooo)


# ---- conservation ---------------------------------------------------------------------------------


def test_charge_splits_each_wait_exactly():
    # three loads, one wait stalling 100: 34 + 33 + 33
    d = dispatch("gfx950", GFX9, [[(5, 0), (5, 0), (5, 0), (8, 100)]])
    a = attribute(d)
    assert a.charge.tolist() == [34, 33, 33] and a.charge.sum() == 100
    (site,) = wait_sites(a)
    assert (site.hits, site.stall, site.attributed) == (1, 100, 100)
    assert [p.code.line for p in site.producers] == [5]  # one listing line, three executions
    assert site.producers[0].executions == 3 and site.producers[0].share == 1.0


def _same_totals(h_wait, h_prod):
    assert h_prod.totals == h_wait.totals
    assert {t: s for t, s, _ in h_prod.by_type} == {t: s for t, s, _ in h_wait.by_type}
    assert sum(r.stall for r in h_prod.rows) == sum(r.stall for r in h_wait.rows)


def test_charge_producer_conserves_totals_on_the_fixture():
    d = open_inputs([FIXTURES / "tiny"])
    for by in ("line", "instruction", "file"):
        _same_totals(hotspots(d, by=by), hotspots(d, by=by, charge="producer"))


def _samples(name: str) -> list:
    """A ui_output listing with waits on loads: the demo always, flydsl's sample NAME where ../shared has it."""
    rel = (SAMPLES, "jhinpan__flydsl-kernel-profiling-lib/examples", name)
    real = [pytest.param(SHARED.joinpath(*rel), id=name)] if real_data(*rel) else []
    return [pytest.param(demo_path(), id="demo"), *real]


@pytest.mark.parametrize("sample", _samples("topk_gating_softmax"))
def test_charge_producer_moves_the_wait_stall_to_the_loads(sample):
    d = open_inputs([sample])
    wait, prod = hotspots(d, by="instruction"), hotspots(d, by="instruction", charge="producer")
    _same_totals(wait, prod)
    top_wait = wait.rows[0]
    assert top_wait.key.startswith("s_waitcnt")
    # with producer charging no wait instruction tops the list any more, and every row that gained
    # stall is a memory instruction the waits named
    assert not prod.rows[0].key.startswith("s_waitcnt")
    a = attribute(d[0])
    named_lines = {int(x) for x in a.stream.lines[a.producer]}
    gained = [r for r in prod.rows if any(t.endswith("-wait") for t in r.by_type) and not r.key.startswith("s_wait")]
    assert gained and all(r.extra["line"] in named_lines for r in gained)


@pytest.mark.parametrize("capture", captures("gfx1100/gemm_run0", "gfx1200/gemm_gfx1200_run0", "gfx950/gemm_run0"))
def test_charge_producer_conserves_totals_on_raw_decodes(capture):
    for d in decoded(capture):
        _same_totals(hotspots([d], by="line"), hotspots([d], by="line", charge="producer"))
        a = attribute(d)
        stall = a.stream.col("stall")
        waits = np.unique(a.wait)
        assert a.charge.sum() == stall[waits].sum()


# ---- real samples ---------------------------------------------------------------------------------


def _writer_pairs(path) -> collections.Counter:
    doc = json.loads(open(path).read())
    return collections.Counter((line, dep) for line, deps in doc["wave"].get("waitcnt", []) for dep, _ in deps)


def test_attribution_equals_the_writers_waitcnt_lists_on_every_sample():
    """rocprofv3's writer (att-tool waitcnt/gfx9.cpp) lists, per wave, the lines each executed wait depended
    on; on gfx9 its rules and ours coincide, so the pairs must be the same, wave by wave."""
    root = shared_path(SAMPLES)
    folders = sorted({p.parent for p in root.rglob("filenames.json")})
    checked = 0
    for folder in folders:
        for d in decoded(folder):
            a = attribute(d)
            st = a.stream
            mine = collections.defaultdict(collections.Counter)
            for w, p in zip(a.wait.tolist(), a.producer.tolist()):
                mine[int(st.wave[w])][(int(st.lines[w]), int(st.lines[p]))] += 1
            for k, wave in enumerate(st.waves):
                writer = _writer_pairs(wave.path)
                assert mine[k] == writer, (folder, wave.path)
                checked += sum(writer.values())
    assert checked > 30_000


def test_topk_lgkm_waits_on_line_103_wait_for_scalar_and_lds_loads():
    (d,) = open_inputs([shared_path(SAMPLES, "jhinpan__flydsl-kernel-profiling-lib/examples/topk_gating_softmax")])
    sites = [s for s in wait_sites(attribute(d)) if s.type == "LGKM-wait" and s.code.source.endswith(":103")]
    assert sites and sum(s.stall for s in sites) == sum(s.attributed for s in sites)
    top = sites[0]
    assert top.code.text == "s_waitcnt lgkmcnt(0)" and {p.code.text.split()[0] for p in top.producers} <= {
        "s_load_dword",
        "s_load_dwordx2",
    }
    assert abs(sum(p.share for p in top.producers) - 1) < 1e-9
    kinds = {p.code.text.split()[0][:2] for s in sites for p in s.producers}
    assert kinds == {"s_", "ds"}


@pytest.mark.parametrize("sample", _samples("flash_attn_func"))
def test_hidden_latency_is_consistent(sample):
    (d,) = open_inputs([sample])
    a = attribute(d)
    hl = hidden_latency(a)
    k = hl.kernel
    assert 0 < k.share < 1 and k.retired <= k.executions
    assert sum(u.hidden for u in hl.by_unit) == k.hidden == sum(r.hidden for r in hl.by_instruction)
    assert sum(r.exposed for r in hl.by_line) == k.exposed
    # every retired operation is one a wait named through a memory counter, each counted once
    assert k.retired == len(np.unique(a.producer[(a.mask & a.memory_mask) != 0]))
    assert k.stalled_elsewhere <= k.hidden


# ---- command line ---------------------------------------------------------------------------------


def run(*args):
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_waits_json_shape():
    d = json.loads(run("waits", FIXTURES / "tiny", "--format", "json", "--top", "0"))
    assert {"waits", "kernel", "arch"} <= set(d)
    for w in d["waits"]:
        assert {"pc", "text", "source", "counters", "hits", "stall", "producers"} <= set(w)
        for p in w["producers"]:
            assert {"pc", "text", "source", "share"} <= set(p)
        if w["stall"]:
            assert sum(p["stall"] for p in w["producers"]) == w["attributed"] <= w["stall"]


def _two_listings() -> list:
    """Two single-dispatch ui_output inputs: the tiny fixture and the demo, and two flydsl samples where
    ../shared has them."""
    pairs = [pytest.param((FIXTURES / "tiny", demo_path()), id="tiny+demo")]
    root = SHARED / SAMPLES / "jhinpan__flydsl-kernel-profiling-lib/examples"
    if real_data(SAMPLES, "jhinpan__flydsl-kernel-profiling-lib/examples"):
        pairs.append(pytest.param((root / "vec_add", root / "rmsnorm"), id="vec_add+rmsnorm"))
    return pairs


@pytest.mark.parametrize("pair", _two_listings())
def test_waits_several_dispatches_and_csv(pair):
    first, second = pair
    d = json.loads(run("waits", first, second, "--format", "json", "--top", "2"))
    assert len(d["dispatches"]) == 2 and all(len(x["waits"]) <= 2 for x in d["dispatches"])
    csv = run("waits", first, "--format", "csv").splitlines()
    assert csv[0].startswith("dispatch,pc,wait") and len(csv) > 1


def test_hotspots_charge_producer_json_keeps_its_shape():
    d = json.loads(run("hotspots", FIXTURES / "tiny", "--charge", "producer", "--format", "json"))
    assert {"totals", "by_type", "rows"} <= set(d) and d["charge"] == "producer"
    w = json.loads(run("hotspots", FIXTURES / "tiny", "--format", "json"))
    assert d["totals"] == w["totals"] and "charge" not in w


def test_latency_cli():
    d = json.loads(run("latency", FIXTURES / "tiny", "--format", "json", "--definition", "issue-to-wait"))
    assert {"hidden_share", "totals", "by_unit", "rows"} <= set(d)
    out = run("latency", FIXTURES / "tiny", "--by", "instruction", "--definition", "issue-to-wait")
    assert "of memory latency hidden" in out
    amd = json.loads(run("latency", FIXTURES / "tiny", "--format", "json"))
    assert amd["definition"] == "amd" and "hidden" in amd["totals"] and "by_unit" not in amd
