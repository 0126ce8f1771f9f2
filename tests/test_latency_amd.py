"""`attdec latency --definition amd`: AMD's hidden latency (its decoder package's analysis, what
rocprof-compute-viewer shows). A case worked out by hand, a plain sequential model of the definition
against the vectorised one on real captures (record for record), and the kernel shares of real samples."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import captures, cli, shared_path

from attdec.analysis import latency
from attdec.analysis.latency import MATRIX_PREFIXES, amd_hidden_latency
from attdec.model import OTHER_SIMD_DTYPE, Category, CodeLine, Dispatch, Wave, empty_insts
from attdec.model.totals import fill_code_totals
from attdec.sources.pipeline import open_dispatches

PA = (
    "ui_output_samples/jhinpan__flydsl-kernel-profiling-lib/examples/pa/att_viewer/big/"
    "ui_output_agent_10886_dispatch_209"
)


def _wave(begin: int, rows: list[tuple[int, Category, int, int, int]]) -> Wave:
    """A wave on se 0, simd 0 executing rows of (line, category, time, stall, duration)."""
    ins = empty_insts(len(rows))
    for i, (line, cat, time, stall, duration) in enumerate(rows):
        ins[i] = (time, int(cat), stall, duration, 0x100 + 4 * line, line)
    return Wave(0, 0, 0, 0, begin, 100, ins)


def test_hand_worked_case():
    """Two waves on one SIMD. Busy: VALU [0,4) and [7,11), VMEM [8,11), SALU [2,4).
    a1 VALU at 0 (no idle or stall; its own pipe's issue does not count): 0.
    a2 VMEM at 6, stall 2, cycles 5, last end 4: the math pipes cover idle [4,6) 0, stall [6,8) 1,
       issue [8,11) 3 - more than its own pipe's idle + stall (0): 0, 1, 3.
    b1 SALU at 1, stall 1, cycles 3, begin 0: the vector pipes (VALU [0,4)) cover idle [0,1) 1,
       stall [1,2) 1, issue [2,4) 2: 1, 1, 2.
    b2 VALU at 7, cycles 4, last end 4: VALU covers nothing of idle [4,7): 0.
    Listing idle (furthest end reached): a1 0, a2 2, b1 1, b2 3; latency 4, 5, 3, 4: total 22.
    Hidden = stall + issue + min(hidden idle, idle): 0 + 4 + 4 + 0 = 8."""
    a = _wave(0, [(1, Category.VALU, 0, 0, 4), (2, Category.VMEM, 6, 2, 5)])
    b = _wave(0, [(3, Category.SALU, 1, 1, 3), (4, Category.VALU, 7, 0, 4)])
    texts = ["v_add_f32 v0, v1, v2", "global_load_b32 v3, v[0:1], off", "s_add_u32 s0, s1, s2", "v_mul_f32 v4, v5, v6"]
    code = [CodeLine(i, t, f"k.py:{i}") for i, t in enumerate(texts, 1)]
    d = Dispatch("k", "gfx1100", code=code, waves=[a, b])
    fill_code_totals(d)
    r = amd_hidden_latency(d)
    got = {x.code.line: (x.hidden_idle, x.hidden_stall, x.hidden_issue, x.hidden, x.total) for x in r.by_instruction}
    assert got == {1: (0, 0, 0, 0, 4), 2: (0, 1, 3, 4, 7), 3: (1, 1, 2, 4, 4), 4: (0, 0, 0, 0, 7)}
    assert (r.kernel.hidden, r.kernel.total) == (8, 22)
    # other-SIMD work is memory-pipe work of its SE: busy [4,8) joins a2's [8,11), so a2's own pipe covers
    # idle [4,6) 2 and stall [6,8) 2 - as much as the math pipes (4), and a tie goes to its own pipe
    d.other_simd = np.array([(0, 4, 4, 0, int(Category.VALU))], OTHER_SIMD_DTYPE)
    r = amd_hidden_latency(d)
    got = {x.code.line: (x.hidden_idle, x.hidden_stall, x.hidden_issue) for x in r.by_instruction}
    assert got == {1: (0, 0, 0), 2: (2, 2, 0), 3: (1, 1, 2), 4: (0, 0, 0)}
    d.other_simd["se"] = 1  # another SE's: not this SIMD's scope
    assert {x.code.line: x.hidden_stall for x in amd_hidden_latency(d).by_instruction}[2] == 1


# ---- a plain sequential model of the definition, record by record ------------------------------------


def _coalesce(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(start, cycles) -> (start, end): an interval starting at or before the group's start + the cycles
    summed so far joins it with all its cycles."""
    groups: list[list[int]] = []
    for start, cycles in sorted(pairs):
        if groups and start <= groups[-1][0] + groups[-1][1]:
            groups[-1][1] += cycles
        else:
            groups.append([start, cycles])
    return [(s, s + c) for s, c in groups]


def _merge(*lists: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(iv for xs in lists for iv in xs if iv[1] > iv[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _covered(pipe: list[tuple[int, int]], a: int, b: int) -> int:
    """Busy cycles of `pipe` in [a, b)."""
    return sum(max(0, min(b, e) - max(a, s)) for s, e in pipe)


def _windows(pipe, last, clock, stall, cycles, issue=True):
    idle = _covered(pipe, last, clock) if clock > last else 0
    st = _covered(pipe, clock, clock + stall) if stall > 0 else 0
    iss = _covered(pipe, clock + stall, clock + cycles) if issue and cycles > stall else 0
    return idle, st, iss


def _reference(d: Dispatch) -> dict[int, list[int]]:
    """Per listing line: hidden idle, stall and issue summed over every record, computed one at a time."""
    matrix = {c.line for c in d.code if c.text.startswith(MATRIX_PREFIXES)}
    no_pc = {c.line for c in d.code if c.is_no_pc}  # AMD's package counts records without a PC nowhere
    other = d.other_simd if d.other_simd is not None else np.zeros(0, OTHER_SIMD_DTYPE)
    scopes: dict[tuple[int, int], list[Wave]] = {}
    for w in d.waves:
        scopes.setdefault((w.se, w.simd), []).append(w)
    out: dict[int, list[int]] = {}
    vmem_cats = {int(Category.LDS), int(Category.VMEM), int(Category.FLAT)}
    scalar_cats = {int(Category.SALU), int(Category.SMEM)}
    for (se, _), waves in scopes.items():
        pipes: dict[str, list[tuple[int, int]]] = {"wmma": [], "valu": [], "vmem": [], "scal": []}
        for w in waves:
            for r in w.insts.tolist():
                time, cat, stall, duration, _, line = r
                start, busy = time + stall, max(stall, duration) - stall
                if line in matrix:
                    pipes["wmma"].append((start, busy))
                    pipes["valu"].append((start, 3 * busy // 4))
                elif cat == int(Category.VALU):
                    pipes["valu"].append((start, busy))
                elif cat in vmem_cats:
                    pipes["vmem"].append((start, busy))
                elif cat in scalar_cats:
                    pipes["scal"].append((start, busy))
        for o in other.tolist():
            if o[0] == se and o[2] > 0:
                pipes["vmem"].append((o[1], o[2]))
        p = {k: _coalesce(v) for k, v in pipes.items()}
        p["math"] = _merge(p["valu"], p["wmma"])
        p["vector"] = _merge(p["math"], p["vmem"])
        p["all"] = _merge(p["vector"], p["scal"])
        for w in waves:
            last = w.begin
            for r in w.insts.tolist():
                time, cat, stall, duration, _, line = r
                cycles = max(stall, duration)
                args = (last, time, stall, cycles)
                if line in matrix:
                    a, b = _windows(p["valu"], *args, issue=False), _windows(p["wmma"], *args, issue=False)
                    h = a if sum(a) > sum(b) else b
                elif cat == int(Category.VALU):
                    a, b = _windows(p["valu"], *args, issue=False), _windows(p["wmma"], *args)
                    h = a if sum(a) > sum(b) else b
                elif cat in vmem_cats:
                    a, b = _windows(p["math"], *args), _windows(p["vmem"], *args, issue=False)
                    h = a if sum(a) > sum(b) else b
                elif cat in scalar_cats:
                    a, b = _windows(p["vector"], *args), _windows(p["scal"], *args, issue=False)
                    h = a if sum(a) > sum(b) else b
                else:
                    h = _windows(p["all"], *args)
                if line >= 0 and line not in no_pc:
                    acc = out.setdefault(line, [0, 0, 0])
                    for k in range(3):
                        acc[k] += h[k]
                last = time + cycles
    return out


@pytest.mark.parametrize("counting", ["table", "search"])
@pytest.mark.parametrize(
    "capture", captures("gfx1100/gemm_run0", "gfx1200/wmma_run0", "gfx1201/ops_run0", synthetic=("gfx942",))
)
def test_matches_sequential_model_on_captures(capture, counting, monkeypatch):
    """Both ways of counting a pipe's busy cycles (a table per cycle, a binary search per clock) and both
    ways of ordering its instructions (one packed sort, a two-key sort) give the sequential model's figures."""
    if counting == "table":  # whatever the span of the clocks
        monkeypatch.setattr(latency, "TABLE_CYCLES_PER_RECORD", 1 << 40)
    else:
        monkeypatch.setattr(latency, "TABLE_CYCLES_PER_RECORD", 0)
        monkeypatch.setattr(latency, "CYCLE_BITS", 0)  # no cycles fit: the two-key sort
    (d,) = open_dispatches([str(capture)], need=("waves",))
    want = {ln: h for ln, h in _reference(d).items() if any(h)}
    got = {x.code.line: [x.hidden_idle, x.hidden_stall, x.hidden_issue] for x in amd_hidden_latency(d).by_instruction}
    got = {ln: h for ln, h in got.items() if any(h)}
    assert want and got == want


@pytest.mark.parametrize(("sample", "share"), [(PA, 0.201), ("captures/gfx1100/gemm_run0", 0.060)])
def test_real_shares_are_amds(sample, share):
    """The kernel shares AMD's package gives on these samples (pa 20.1%, gfx1100 gemm 6.0%), far below the
    issue-to-wait shares of the same samples."""
    path = str(shared_path(*sample.split("/")))
    amd = cli("latency", path, "--format", "json")
    assert amd.returncode == 0, amd.stderr
    obj = json.loads(amd.stdout)
    assert obj["definition"] == "amd" and round(obj["hidden_share"], 3) == share
    t = obj["totals"]
    stall_issue = t["hidden_stall"] + t["hidden_issue"]
    assert stall_issue <= t["hidden"] <= stall_issue + t["hidden_idle"]
    assert t["hidden"] + t["exposed"] == t["latency"] + t["idle"]
    old = json.loads(cli("latency", path, "--definition", "issue-to-wait", "--format", "json").stdout)
    assert old["hidden_share"] > 2 * obj["hidden_share"]
