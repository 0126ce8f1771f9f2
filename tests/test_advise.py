"""Guided findings (`attdec advise`): every rule on a synthetic dispatch where it must fire and one where it
must not, the rules that cannot apply saying why, and the findings the real samples show."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from conftest import SHARED, captures, cli, real_data, shared_path

import attdec
from attdec.analysis.advise import MIN_SHARE, RULE_IDS, advise
from attdec.commands.demo import demo_path
from attdec.model import (
    COUNTER_DTYPE,
    OCCUPANCY_DTYPE,
    CodeLine,
    CounterSamples,
    DecoderInfo,
    Dispatch,
    KernelResources,
    Wave,
    empty_insts,
)
from attdec.model.totals import aggregate_lines

SAMPLES = "ui_output_samples/jhinpan__flydsl-kernel-profiling-lib/examples"


def dispatch(texts, runs, arch="gfx942", sources=None, **kw) -> Dispatch:
    """A dispatch whose listing is `texts` (line ids 1..n, source k.py:<id> unless `sources` gives them) and
    whose waves execute `runs`: per wave a list of (line id, stall), a record every 10 cycles plus the stall.
    The listing's totals are the waves' (as code.json's are)."""
    sources = sources or [f"/src/k.py:{i}" for i in range(1, len(texts) + 1)]
    code = [CodeLine(0, "; k")] + [
        CodeLine(i, t, sources[i - 1], codeobj=1, vaddr=0x100 + 4 * i) for i, t in enumerate(texts, 1)
    ]
    waves = []
    for k, run in enumerate(runs):
        ins = empty_insts(len(run))
        t = 1000
        for j, (line, stall) in enumerate(run):
            ins[j] = (t, 0, stall, stall + 4, 0x100 + 4 * line, line)
            t += 10 + stall
        waves.append(Wave(0, 0, k % 4, k // 4, 1000, t, ins))
    totals = aggregate_lines(waves).as_dict()
    for c in code:
        c.hit, c.latency, c.stall, c.idle = totals.get(c.line, (0, 0, 0, 0))
    return Dispatch("synthetic", arch, "k", code, waves, **kw)


def rules_of(d: Dispatch, rule: str):
    a = advise(d, rules=(rule,))
    return [f for f in a.findings if f.rule == rule], {s.rule: s.reason for s in a.not_applicable}


def fires(d: Dispatch, rule: str):
    found, skipped = rules_of(d, rule)
    assert rule not in skipped, skipped
    assert found, f"{rule} did not fire"
    for f in found:
        assert f.cycles > 0 and 0 < f.share <= 1 and f.evidence and f.suggestion and f.title
    return found


def silent(d: Dispatch, rule: str) -> None:
    found, skipped = rules_of(d, rule)
    assert rule not in skipped, skipped
    assert not found, found


# ---- cross-lane-lgkm ------------------------------------------------------------------------------

SHUFFLE = ["ds_bpermute_b32 v1, v2, v3", "v_add_f32_e32 v4, v5, v6", "s_waitcnt lgkmcnt(0)", "v_max_f32 v1, v1, v4"]


def test_cross_lane_lgkm_fires_on_waits_for_a_bpermute():
    d = dispatch([*SHUFFLE, "s_endpgm"], [[(1, 0), (2, 0), (3, 300), (4, 0), (5, 0)]] * 4)
    (f,) = fires(d, "cross-lane-lgkm")
    assert f.cycles == 4 * 300 and f.where["source"] == "/src/k.py:1" and "ds_bpermute_b32" in f.title
    assert f.evidence["lds_data_instructions_executed"] == 0 and f.where["address"] == 0x104


def test_cross_lane_lgkm_silent_on_an_lds_read():
    texts = ["ds_read_b32 v1, v2", *SHUFFLE[1:], "s_endpgm"]
    silent(dispatch(texts, [[(1, 0), (2, 0), (3, 300), (4, 0), (5, 0)]] * 4), "cross-lane-lgkm")


def test_cross_lane_lgkm_silent_below_the_share():
    d = dispatch(
        [*SHUFFLE, "v_add_f32_e32 v0, v0, v0", "s_endpgm"], [[(1, 0), (2, 0), (3, 1), (4, 0)] + [(5, 50)] * 40]
    )
    silent(d, "cross-lane-lgkm")


# ---- source-mapping -------------------------------------------------------------------------------

BODY = [f"v_add_f32_e32 v{i}, v{i}, v{i}" for i in range(60)]


def test_source_mapping_fires_when_one_line_holds_most_instructions():
    sources = ["/src/k.py:7"] * 55 + [f"/src/k.py:{100 + i}" for i in range(5)]
    d = dispatch(BODY, [[(i, 5) for i in range(1, 61)]], sources=sources)
    (f,) = fires(d, "source-mapping")
    assert f.where["source"] == "/src/k.py:7" and "k.py:7" in f.title
    assert f.evidence["on_this_line"] == 55 and f.evidence["distinct_source_lines"] == 6


def test_source_mapping_silent_with_one_line_per_statement():
    silent(dispatch(BODY, [[(i, 5) for i in range(1, 61)]]), "source-mapping")


def test_source_mapping_not_applicable_without_line_table_or_on_a_tiny_kernel():
    _, skipped = rules_of(dispatch(BODY, [[(i, 5) for i in range(1, 61)]], sources=[""] * 60), "source-mapping")
    assert "no line table" in skipped["source-mapping"]
    _, skipped = rules_of(dispatch(BODY[:10], [[(i, 5) for i in range(1, 11)]]), "source-mapping")
    assert "distinct instructions" in skipped["source-mapping"]


# ---- truncated-trace ------------------------------------------------------------------------------


def test_truncated_trace_fires_on_a_wave_without_s_endpgm():
    d = dispatch(["v_add_f32_e32 v0, v0, v0", "s_endpgm"], [[(1, 5), (2, 0)], [(1, 5)]])
    (f,) = fires(d, "truncated-trace")
    assert f.evidence["waves_without_s_endpgm"] == 1


def test_truncated_trace_fires_on_the_decoders_incomplete_waves():
    info = [DecoderInfo("WAVE_INCOMPLETE", 0, 3, 2436)]
    d = dispatch(["v_add_f32_e32 v0, v0, v0", "s_endpgm"], [[(1, 5), (2, 0)]], info=info)
    (f,) = fires(d, "truncated-trace")
    assert f.evidence["waves_cut_by_decoder"] == 3 and "3 traced wave" in f.title


def test_truncated_trace_silent_when_every_wave_ends():
    silent(dispatch(["v_add_f32_e32 v0, v0, v0", "s_endpgm"], [[(1, 5), (2, 0)]] * 3), "truncated-trace")


# ---- unrepresentative-cu --------------------------------------------------------------------------


def occupancy(waves_per_cu: dict[int, int], length: int = 100) -> np.ndarray:
    rows = []
    for cu, n in waves_per_cu.items():
        for w in range(n):
            rows += [(0, cu, w % 4, w // 4, 1, 1000, 0), (0, cu, w % 4, w // 4, 0, 1000 + length, 0)]
    return np.array(rows, OCCUPANCY_DTYPE)


def test_unrepresentative_cu_fires_when_the_traced_cu_ran_more_waves():
    d = dispatch(["s_endpgm"], [[(1, 0)]], occupancy=occupancy({0: 8, 1: 2, 2: 2, 3: 2}))
    (f,) = fires(d, "unrepresentative-cu")
    assert f.evidence["traced_cu_waves"] == 8 and f.evidence["median_cu_waves"] == 2 and f.cycles == 600


def test_unrepresentative_cu_silent_when_balanced_and_not_applicable_on_one_cu():
    silent(dispatch(["s_endpgm"], [[(1, 0)]], occupancy=occupancy({0: 2, 1: 2, 2: 2, 3: 2})), "unrepresentative-cu")
    _, skipped = rules_of(dispatch(["s_endpgm"], [[(1, 0)]], occupancy=occupancy({0: 2})), "unrepresentative-cu")
    assert "nothing to compare" in skipped["unrepresentative-cu"]


# ---- nop-padding ----------------------------------------------------------------------------------

NOPS = ["v_add_f32_e32 v0, v1, v2", "s_nop 4", "v_mov_b32_dpp v3, v0 row_shr:1", "s_endpgm"]


def test_nop_padding_fires_and_names_what_it_pads():
    (f,) = fires(dispatch(NOPS, [[(1, 0), (2, 40), (3, 0), (4, 0)]] * 2), "nop-padding")
    assert f.cycles == 80 and f.evidence["padding_before"] == {"v_mov_b32": 80}


def test_nop_padding_silent_when_small():
    run = [(1, 0), (2, 1), (3, 0)] + [(1, 30)] * 20 + [(4, 0)]
    silent(dispatch(NOPS, [run]), "nop-padding")


# ---- exposed-load ---------------------------------------------------------------------------------

LOAD = ["global_load_dword v1, v[2:3], off", "s_waitcnt vmcnt(0)", "v_add_f32_e32 v1, v1, v1", "s_endpgm"]


def test_exposed_load_fires_on_a_load_waited_for_soon_after():
    (f,) = fires(dispatch(LOAD, [[(1, 0), (2, 500), (3, 0), (4, 0)]] * 2), "exposed-load")
    assert f.cycles == 1000 and f.where["address"] == 0x104
    assert f.evidence["loads"][0]["distance_instructions"] == 1


def test_exposed_load_silent_when_the_wait_does_not_stall():
    silent(dispatch(LOAD, [[(1, 0), (2, 0), (3, 0), (4, 0)]] * 2), "exposed-load")


def test_wait_rules_not_applicable_without_waves():
    d = dispatch(LOAD, [[(1, 0), (2, 500), (3, 0), (4, 0)]])
    d.waves = []
    _, skipped = rules_of(d, "exposed-load")
    assert "no traced waves" in skipped["exposed-load"]


# ---- wait-too-strict ------------------------------------------------------------------------------

TWO_LOADS = [
    "global_load_dword v1, v[2:3], off",
    "global_load_dword v4, v[5:6], off",
    "s_waitcnt vmcnt(0)",
    "v_add_f32_e32 v1, v1, v1",
    "s_waitcnt vmcnt(0)",
    "v_add_f32_e32 v4, v4, v4",
    "s_endpgm",
]
TWO_RUN = [(1, 0), (2, 0), (3, 400), (4, 0), (5, 0), (6, 0), (7, 0)]


def test_wait_too_strict_fires_when_the_youngest_load_is_not_used_before_the_next_wait():
    (f,) = fires(dispatch(TWO_LOADS, [TWO_RUN] * 2), "wait-too-strict")
    assert f.evidence["waits_down_to"] == 0 and f.evidence["could_wait_down_to"] == 1
    assert f.cycles == 800 and f.where["address"] == 0x10C and f.evidence["executions_checked"] == 2


def test_wait_too_strict_silent_when_the_youngest_load_is_used_or_not_retired_later():
    used = [*TWO_LOADS[:3], "v_add_f32_e32 v1, v1, v4", *TWO_LOADS[4:]]
    silent(dispatch(used, [TWO_RUN] * 2), "wait-too-strict")
    loose_next = [*TWO_LOADS[:4], "s_waitcnt vmcnt(1)", *TWO_LOADS[5:]]  # would not retire v4's load
    silent(dispatch(loose_next, [TWO_RUN] * 2), "wait-too-strict")
    into_lds = ["buffer_load_dword v1, s[8:11], 0 offen lds", *TWO_LOADS[1:]]
    into_lds[1] = "buffer_load_dword v4, s[8:11], 0 offen lds"
    silent(dispatch(into_lds, [TWO_RUN] * 2), "wait-too-strict")


def test_wait_too_strict_not_applicable_without_waves():
    d = dispatch(TWO_LOADS, [TWO_RUN])
    d.waves = []
    _, skipped = rules_of(d, "wait-too-strict")
    assert "no traced waves" in skipped["wait-too-strict"]


# ---- barrier-imbalance ----------------------------------------------------------------------------

BARRIER = ["v_add_f32_e32 v0, v0, v0", "s_barrier", "s_endpgm"]


def test_barrier_imbalance_fires_when_waves_wait_unevenly():
    (f,) = fires(dispatch(BARRIER, [[(1, 0), (2, 800), (3, 0)], [(1, 800), (2, 0), (3, 0)]]), "barrier-imbalance")
    assert f.cycles == 800 and f.evidence["per_wave_max"] == 800 and f.evidence["per_wave_min"] == 0


def test_barrier_imbalance_silent_when_every_wave_waits_alike():
    silent(dispatch(BARRIER, [[(1, 0), (2, 800), (3, 0)]] * 2), "barrier-imbalance")


# ---- occupancy-limit ------------------------------------------------------------------------------


def resources(vgpr: int) -> KernelResources:
    return KernelResources("k", "gfx942", vgpr=vgpr, sgpr=32, lds_bytes=0, wave_size=64, workgroup_size=256)


def test_occupancy_limit_fires_with_the_registers_to_free():
    (f,) = fires(dispatch(LOAD, [[(1, 0), (2, 500), (3, 0), (4, 0)]], resources=resources(128)), "occupancy-limit")
    assert f.evidence["waves_per_simd"] == 4 and f.evidence["limited_by"] == "VGPR"
    assert f.evidence["to_free_for_one_more_wave"] == {"vgpr": 128 - 96}  # 512 / 5 waves, granule 8


def test_occupancy_limit_silent_at_the_slot_limit_and_not_applicable_on_an_unknown_chip():
    silent(dispatch(LOAD, [[(1, 0), (2, 500), (3, 0), (4, 0)]], resources=resources(32)), "occupancy-limit")
    wide = [*LOAD[:2], "v_add_f32_e32 v200, v1, v1", LOAD[3]]  # 201 VGPRs: the limit differs by gfx9 chip
    d = dispatch(wide, [[(1, 0), (2, 500), (3, 0), (4, 0)]], arch="gfx9")
    _, skipped = rules_of(d, "occupancy-limit")
    assert "GPU model is not known" in skipped["occupancy-limit"]


def test_every_rule_is_run_or_said_not_applicable():
    a = advise(dispatch(LOAD, [[(1, 0), (2, 500), (3, 0), (4, 0)]]))
    assert {f.rule for f in a.findings} | {s.rule for s in a.not_applicable} <= set(RULE_IDS)
    assert [f.cycles for f in a.findings] == sorted((f.cycles for f in a.findings), reverse=True)
    assert MIN_SHARE > 0


# ---- lds-bank-conflict ----------------------------------------------------------------------------

LDS_READ = ["ds_read_b32 v1, v2", "s_waitcnt lgkmcnt(0)", "v_add_f32_e32 v1, v1, v1", "s_endpgm"]
LDS_RUN = [(1, 0), (2, 300), (3, 0), (4, 0)]


def lds_counters(conflict: int, active: int) -> list[CounterSamples]:
    rows = np.zeros(2, COUNTER_DTYPE)
    rows["counter"], rows["value"], rows["time"] = [0, 1], [conflict, active], -1
    names = ["SQ_LDS_BANK_CONFLICT", "SQ_LDS_IDX_ACTIVE"]
    return [CounterSamples("tinygrad PMC", names, ["SQ", "SQ"], rows)]


def test_lds_bank_conflict_fires_when_the_counters_show_conflicts():
    (f,) = fires(dispatch(LDS_READ, [LDS_RUN] * 2, counters=lds_counters(50, 100)), "lds-bank-conflict")
    assert f.evidence["conflict_rate"] == 0.5 and f.cycles == 600 and f.where["instruction"] == "ds_read_b32 v1, v2"


def test_lds_bank_conflict_silent_on_few_conflicts_and_not_applicable_without_counters():
    silent(dispatch(LDS_READ, [LDS_RUN] * 2, counters=lds_counters(1, 100)), "lds-bank-conflict")
    _, skipped = rules_of(dispatch(LDS_READ, [LDS_RUN] * 2), "lds-bank-conflict")
    assert "no LDS bank-conflict counters" in skipped["lds-bank-conflict"]


# ---- mfma-chain -----------------------------------------------------------------------------------

MFMA = "v_mfma_f32_16x16x16f16 a[{0}:{1}], v[0:1], v[2:3], a[{0}:{1}]"


CHAIN = [MFMA.format(0, 3), MFMA.format(0, 3), MFMA.format(4, 7), "s_endpgm"]


def test_mfma_chain_fires_when_a_dependent_mfma_stalls_beyond_an_independent_one():
    (f,) = fires(dispatch(CHAIN, [[(1, 0), (2, 60), (3, 8), (4, 0)]] * 2), "mfma-chain")
    assert f.cycles == 2 * (60 - 8) and f.evidence["dependent_pairs"] == 2 and f.where["address"] == 0x108


def test_mfma_chain_silent_at_the_issue_rate_or_without_a_baseline():
    silent(dispatch(CHAIN, [[(1, 0), (2, 8), (3, 8), (4, 0)]] * 2), "mfma-chain")  # forwarded: no extra wait
    only_dependent = [MFMA.format(0, 3), MFMA.format(0, 3), "s_endpgm"]  # issue rate unknown: not judged
    silent(dispatch(only_dependent, [[(1, 0), (2, 60), (3, 0)]] * 2), "mfma-chain")


def test_mfma_chain_silent_on_moe_gemm_whose_mfmas_stall_at_the_issue_rate():
    (d,) = advice_json(shared_path(SAMPLES, "moe_gemm"))["dispatches"]
    assert "mfma-chain" not in {f["rule"] for f in d["findings"]} | {s["rule"] for s in d["not_applicable"]}


# ---- real samples ---------------------------------------------------------------------------------


def advice_json(*args, status: int = 0) -> dict:
    r = cli("advise", *map(str, args), "--format", "json")
    assert r.returncode == status, r.stderr
    return json.loads(r.stdout)


def test_topk_cross_lane_lgkm_and_nop_padding():
    (d,) = advice_json(shared_path(SAMPLES, "topk_gating_softmax", "att_viewer"))["dispatches"]
    by_rule = {}
    for f in d["findings"]:
        by_rule.setdefault(f["rule"], []).append(f)
    (cross,) = by_rule["cross-lane-lgkm"]
    assert cross["where"]["source"].endswith("topk_gating_softmax_kernel.py:103") and cross["cycles"] >= 30_000
    assert cross["evidence"]["lds_data_instructions_executed"] == 0
    (nop,) = by_rule["nop-padding"]
    assert nop["cycles"] >= 40_000 and 0.3 < nop["evidence"]["share_of_stall"] < 0.4


def test_flash_attn_source_mapping_names_the_decorator_line():
    (d,) = advice_json(shared_path(SAMPLES, "flash_attn_func", "att_viewer"))["dispatches"]
    (f,) = [f for f in d["findings"] if f["rule"] == "source-mapping"]
    assert f["where"]["source"].endswith("flash_attn_func.py:257") and ":257" in f["title"]
    assert f["evidence"]["on_this_line"] == 23_124 and f["evidence"]["executed_instructions"] == 26_412


@pytest.mark.parametrize("src", captures("gfx950/gemm_run0", synthetic=("gfx1100",)))
def test_a_capture_cut_in_half_is_a_truncated_trace(tmp_path, src):
    whole = advice_json(src)["dispatches"]
    assert not [f for d in whole for f in d["findings"] if f["rule"] == "truncated-trace"]
    cut = tmp_path / "cut"
    shutil.copytree(src, cut)
    for blob in cut.glob("*.att"):
        blob.chmod(0o644)
        data = blob.read_bytes()
        blob.write_bytes(data[: len(data) // 2])
    ds = advice_json(cut, status=3)["dispatches"]  # capture.json's sizes say so too: exit 3
    for d in ds:
        (f,) = [f for f in d["findings"] if f["rule"] == "truncated-trace"]
        assert f["evidence"]["waves_cut_by_decoder"] > 0 and 0 < f["share"] <= 1
    assert ds


def _listings() -> list:
    """ui_output samples: the demo always, the real topk one where ../shared has it."""
    topk = (SAMPLES, "topk_gating_softmax", "att_viewer")
    real = [pytest.param(SHARED.joinpath(*topk), id="topk")] if real_data(*topk) else []
    return [pytest.param(demo_path(), id="demo"), *real]


@pytest.mark.parametrize("fmt", ["table", "md"])
@pytest.mark.parametrize("src", _listings())
def test_table_and_markdown_name_the_rules(fmt, src):
    """Every rule the JSON names, as a finding or as not applicable, is named in the table and markdown too."""
    (d,) = advice_json(src)["dispatches"]
    rules = {f["rule"] for f in d["findings"]} | {s["rule"] for s in d["not_applicable"]}
    r = cli("advise", str(src), "--format", fmt)
    assert r.returncode == 0, r.stderr
    assert len(rules) >= 3 and [rule for rule in sorted(rules) if rule not in r.stdout] == []


def test_bad_input_is_one_error_line(tmp_path):
    r = cli("advise", str(tmp_path / "missing"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and r.stderr.startswith("attdec: error:")


def test_the_html_report_carries_the_findings():
    from attdec.report.html import build

    d = dispatch([*SHUFFLE, "s_endpgm"], [[(1, 0), (2, 0), (3, 300), (4, 0), (5, 0)]] * 4)
    (page,) = build([d])["dispatches"]
    assert [(f["rule"], f["cycles"]) for f in page["findings"]] == [(f.rule, f.cycles) for f in advise(d).findings]
    assert "cross-lane-lgkm" in [f["rule"] for f in page["findings"]]


def test_hotspots_table_points_to_advise_and_json_does_not():
    path = str(shared_path(SAMPLES, "topk_gating_softmax", "att_viewer"))
    table = cli("hotspots", path)
    assert table.returncode == 0, table.stderr
    last = table.stdout.rstrip("\n").splitlines()[-1]
    n = sum(len(advise(d, cheap=True).findings) for d in attdec.open(path))
    assert n >= 2 and last == f"{n} findings from the listing alone: attdec advise on the same paths runs every rule"
    for fmt in ("json", "csv", "md"):
        r = cli("hotspots", path, "--format", fmt)
        assert r.returncode == 0 and "attdec advise" not in r.stdout and "attdec advise" not in r.stderr


def test_occupancy_limit_silent_on_an_unknown_chip_when_every_candidate_is_at_the_slot_limit():
    silent(dispatch(LOAD, [[(1, 0), (2, 500), (3, 0), (4, 0)]], arch="gfx9"), "occupancy-limit")
