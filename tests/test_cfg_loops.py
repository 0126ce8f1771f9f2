"""Basic blocks, CFG and loops (attdec cfg, attdec loops): a synthetic nest with known answers, robust
iteration pairing, and real listings of both input kinds (block hits = instruction hits)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import FIXTURES, SHARED, SYNTHETIC_CAPTURES, cli, decoded, real_data, shared_path

from attdec.analysis.cfg import UNEVEN, block_stats, branch_target, build_cfgs
from attdec.analysis.loops import loop_timings
from attdec.isa.categories import mnemonic_of
from attdec.model import CodeLine, Dispatch, Wave, empty_insts

SAMPLES = "ui_output_samples/jhinpan__flydsl-kernel-profiling-lib/examples"

# An outer loop (B1-B3) around an inner one (B2), a conditional skip, a call, a jump and the end.
NEST = [
    (0x100, "s_mov_b32 s0, 0"),  # B0
    (0x104, "s_mov_b32 s1, 0"),  # B1 outer header
    (0x108, "v_add_f32_e32 v0, v0, v1"),  # B2 inner header
    (0x10C, "s_add_u32 s1, s1, 1"),
    (0x110, "s_cbranch_scc1 65533"),  # -3 -> 0x108
    (0x114, "s_add_u32 s0, s0, 1"),  # B3
    (0x118, "s_cbranch_scc0 65530"),  # -6 -> 0x104
    (0x11C, "s_cbranch_execz 2"),  # B4 -> 0x128
    (0x120, "s_swappc_b64 s[30:31], s[4:5]"),  # B5 call
    (0x124, "s_branch 1"),  # B6 -> 0x12c
    (0x128, "s_nop 0"),  # B7
    (0x12C, "s_endpgm"),  # B8
]
LINE = {addr: i for i, (addr, _t) in enumerate(NEST, 1)}


def nest_code() -> list[CodeLine]:
    return [CodeLine(0, "; nest", codeobj=1, vaddr=0x100)] + [
        CodeLine(i, t, f"n.py:{i}", codeobj=1, vaddr=a) for i, (a, t) in enumerate(NEST, 1)
    ]


def test_branch_targets_from_printed_simm16():
    code = {c.vaddr: c for c in nest_code()}
    assert branch_target(code[0x110]) == 0x108
    assert branch_target(code[0x118]) == 0x104
    assert branch_target(code[0x11C]) == 0x128
    assert branch_target(code[0x124]) == 0x12C


def test_blocks_edges_and_nested_loops():
    (cfg,) = build_cfgs(nest_code())
    assert cfg.kernel == "nest"
    assert [b.start for b in cfg.blocks] == [0x100, 0x104, 0x108, 0x114, 0x11C, 0x120, 0x124, 0x128, 0x12C]
    succ = {b.id: b.succ for b in cfg.blocks}
    assert succ[0] == [(1, "fallthrough")]
    assert succ[2] == [(2, "taken"), (3, "fallthrough")]
    assert succ[3] == [(1, "taken"), (4, "fallthrough")]
    assert succ[4] == [(7, "taken"), (5, "fallthrough")]
    assert succ[5] == [(6, "call")]
    assert succ[6] == [(8, "jump")]
    assert cfg.blocks[8].exit == "end" and not cfg.blocks[8].succ
    outer, inner = cfg.loops
    assert (outer.header, outer.blocks, outer.back_edges, outer.depth) == (1, [1, 2, 3], [(3, 1)], 1)
    assert (inner.header, inner.blocks, inner.back_edges, inner.depth, inner.parent) == (2, [2], [(2, 2)], 2, 0)
    assert [b.loop for b in cfg.blocks] == [None, 0, 1, 0, None, None, None, None, None]
    assert not cfg.irreducible


def test_exits_end_blocks():
    code = [CodeLine(0, "; k")] + [
        CodeLine(i, t, vaddr=a)
        for i, (a, t) in enumerate([(0, "s_setpc_b64 s[30:31]"), (4, "s_trap 2"), (8, "s_endpgm")], 1)
    ]
    (cfg,) = build_cfgs(code)
    assert [b.exit for b in cfg.blocks] == ["indirect", "trap", "end"]
    assert all(not b.succ for b in cfg.blocks)


def run_nest(trips: list[int], drop=(), extra=()) -> Dispatch:
    """One wave: B0, then per outer iteration B1, the inner loop `n` times, B3; then B4, B5, B6, B8.
    Every record takes 10 cycles. `drop` / `extra`: record indices to leave out / repeat."""
    a = LINE
    path = [a[0x100]]
    for n in trips:
        path.append(a[0x104])
        for _ in range(n):
            path += [a[0x108], a[0x10C], a[0x110]]
        path += [a[0x114], a[0x118]]
    path += [a[0x11C], a[0x120], a[0x124], a[0x12C]]
    times = 1000 + 10 * np.arange(len(path))
    keep = [
        (ln, t) for k, (ln, t) in enumerate(zip(path, times)) if k not in drop for _ in range(2 if k in extra else 1)
    ]
    ins = empty_insts(len(keep))
    for j, (ln, t) in enumerate(keep):
        ins[j] = (t, 0, 0, 4, 0, ln)
    wave = Wave(0, 0, 0, 0, 1000, int(times[-1]) + 10, ins)
    return Dispatch("nest", "gfx1100", "nest", nest_code(), [wave])


def test_iterations_first_and_steady():
    outer, inner = loop_timings(run_nest([3, 2]))
    assert outer.main and not inner.main
    (w,) = outer.waves
    assert w.iterations == 2 and w.trips == 1 and w.first.tolist() == [True, False]
    assert w.cycles.tolist() == [120, 90]  # B1 + 3 x 3 (inner) + 2 (B3) = 12 records; then 1 + 6 + 2
    (w,) = inner.waves
    assert w.iterations == 5 and w.trips == 2
    assert w.first.tolist() == [True, False, False, True, False]
    assert w.cycles.tolist() == [30] * 5
    assert inner.summary()["steady"]["p50"] == 30


def test_pairing_survives_dropped_and_repeated_branch_records():
    base = loop_timings(run_nest([4, 4]))[1].waves[0].cycles.tolist()
    # the inner back-edge branch of the second iteration is missing, then another is recorded twice
    latch = 1 + 1 + 3 * 1 + 2  # record index of the second iteration's s_cbranch_scc1
    assert loop_timings(run_nest([4, 4], drop={latch}))[1].waves[0].cycles.tolist() == base
    assert loop_timings(run_nest([4, 4], extra={latch}))[1].waves[0].cycles.tolist() == base
    # a missing header record merges two iterations into one; every other iteration keeps its time
    header = 1 + 1 + 3 * 2  # the third iteration's v_add
    got = loop_timings(run_nest([4, 4], drop={header}))[1].waves[0].cycles.tolist()
    assert got == [base[0], base[1] + base[2], *base[3:]]


def test_outliers_beyond_three_mads():
    d = run_nest([2] * 12)
    # stretch one outer iteration: shift every later record by 500 cycles
    ins = d.waves[0].insts
    k = int(np.flatnonzero(ins["line"] == LINE[0x104])[6])
    ins["time"][k + 3 :] += 500
    (w,) = loop_timings(d)[0].waves
    assert np.flatnonzero(w.outlier).tolist() == [6]


# ---- real listings --------------------------------------------------------------------------------


def _listings():
    """The synthetic captures, every ui_output sample and the first run of every raw capture (the second run
    repeats the first)."""
    paths = list(SYNTHETIC_CAPTURES.values())
    paths += sorted({p.parent for p in (SHARED / "ui_output_samples").rglob("filenames.json")})
    paths += sorted(p for p in (SHARED / "captures").glob("*/*_run0") if p.is_dir())
    for p in paths:
        for d in decoded(p):
            if not any(c.text.startswith(".long") for c in d.code):  # undecodable words: boundaries unknown
                yield d


def test_block_hits_and_loop_iterations_on_every_listing():
    """Every instruction of a block executes as often as the block (UNEVEN ones aside), and every execution
    of a loop header starts exactly one iteration."""
    blocks = loops = 0
    for d in _listings():
        cfgs = build_cfgs(d.code)
        for cfg in cfgs:
            block_stats(cfg, d.target)
            for b in cfg.blocks:
                for c in b.lines:
                    if not mnemonic_of(c.text).startswith(UNEVEN):
                        assert c.hit == b.hits, (d.name, cfg.kernel, b.id, c.text)
                blocks += 1
        for t in loop_timings(d, cfgs=cfgs):
            assert t.iterations == t.header.hit, (d.name, t.loop.id)
            for w in t.waves:
                assert (w.cycles > 0).all() and w.cycles.sum() <= w.wave.end - w.wave.begin + 64
            loops += 1
    assert blocks > 0
    if real_data("captures") and real_data("ui_output_samples"):  # the real listings have loops
        assert blocks > 200 and loops >= 5


@pytest.fixture(params=["nest", *(["flash_attn_func"] if real_data(SAMPLES, "flash_attn_func") else [])])
def looped(request, tmp_path):
    """A ui_output folder whose kernel has a main loop: the nest above as attdec writes it, and flydsl's
    flash attention sample where ../shared has it."""
    if request.param == "nest":
        from attdec.model.totals import aggregate_lines
        from attdec.report.ui_output import write_ui_output

        d = run_nest([3, 2])
        totals = aggregate_lines(d.waves).as_dict()  # code.json's figures, as a writer counts them
        for c in d.code:
            c.hit, c.latency, c.stall, c.idle = totals.get(c.line, (0, 0, 0, 0))
        return write_ui_output(d, tmp_path, "ui_output_agent_0_dispatch_1")
    return SHARED / SAMPLES / request.param


def test_main_loop_of_a_listing(looped):
    (d,) = decoded(looped)
    main_loops = [t for t in loop_timings(d) if t.main]
    assert len(main_loops) == 1
    (t,) = main_loops
    m = t.summary()
    assert m["waves"] == len(d.waves) and m["trips"] == len(d.waves)
    assert m["iterations"] == t.header.hit
    assert m["first"]["p50"] > m["steady"]["p50"] > 0  # the first iteration pays the pipeline fill


# ---- command line ---------------------------------------------------------------------------------


def run(*args):
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_cfg_cli_formats(looped):
    path = looped
    table = run("cfg", path)
    assert "loop L0" in table and "[main loop]" in table
    d = json.loads(run("cfg", path, "--format", "json"))
    (k,) = d["kernels"]
    assert k["loops"][0]["iterations"]["main"] is True
    assert all({"id", "start", "hits", "cycles", "stall", "dominant", "succ"} <= set(b) for b in k["blocks"])
    dot = run("cfg", path, "--format", "dot")
    assert dot.startswith("digraph") and dot.count("{") == dot.count("}") and "subgraph cluster_L0" in dot


def test_loops_cli():
    d = json.loads(run("loops", shared_path(SAMPLES, "flash_attn_func"), "--format", "json"))
    (lp,) = d["loops"]
    assert lp["main"] and len(lp["waves"]) == 4
    assert all(len(w["cycles"]) == w["iterations"] for w in lp["waves"])
    out = run("loops", FIXTURES / "tiny")
    assert "no loops" in out


def test_cfg_and_loops_show_what_the_source_noted(tmp_path):
    """A listed wave file that is missing is said under the dispatch's title and in the JSON, as in hotspots."""
    import shutil

    shutil.copytree(FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3", tmp_path / "d")
    (tmp_path / "d" / "se1_sm2_sl1_wv1.json").unlink()
    for command in ("cfg", "loops"):
        table = cli(command, tmp_path / "d")
        assert table.returncode == 0 and "note: " in table.stdout and "se1_sm2_sl1_wv1.json" in table.stdout
        doc = json.loads(cli(command, tmp_path / "d", "--format", "json").stdout)
        assert any("se1_sm2_sl1_wv1.json" in p for p in doc["problems"])
