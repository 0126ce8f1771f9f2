"""build_listing on a tiny fake code object (the attdec.isa contract: text, text_vaddr, kernels, source_of)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from attdec.model import Dispatch, Wave, empty_insts, lines_of_pcs
from attdec.sources import listing
from attdec.sources.listing import LoadedCode, build_listing


@dataclass
class FakeInstruction:
    address: int
    size: int
    text: str


@dataclass
class FakeKernel:
    name: str
    entry: int


@dataclass
class FakeCodeObject:
    arch: str
    text: bytes
    text_vaddr: int
    kernels: list = field(default_factory=list)

    def source_of(self, vaddr):
        return f"k.py:{vaddr - self.text_vaddr}" if vaddr % 8 == 0 else ""


BASE = 0x7000_0000


def _code():
    # .text 0x100..0x130: kernel "a" at 0x100 (4 insts), kernel "b" at 0x110 (8 insts)
    co = FakeCodeObject("gfx1100", bytes(0x30), 0x100, [FakeKernel("b", 0x110), FakeKernel("a", 0x100)])
    insts = [FakeInstruction(0x100 + 4 * i, 4, f"op{i}") for i in range(12)]
    other = FakeCodeObject("gfx1100", bytes(8), 0x100, [])
    return [
        LoadedCode(3, BASE, "x.co", co, insts),
        LoadedCode(4, 0x9000_0000, "y.co", other, [FakeInstruction(0x100, 4, "o0"), FakeInstruction(0x104, 4, "o1")]),
    ]


def _wave(begin, rows):
    a = empty_insts(len(rows))
    for i, (t, c, s, d, pc) in enumerate(rows):
        a[i] = (t, c, s, d, pc, -1)
    return Wave(se=0, cu=0, simd=0, slot=0, begin=begin, end=begin + 1000, insts=a)


def _expected(waves):
    """Straight from ui-output-format.md §5.1, one instruction at a time."""
    tot = {}
    for w in waves:
        prev_end = w.begin
        for t, _c, s, d, pc, _ in w.insts.tolist():
            if pc == 0:
                continue
            r = tot.setdefault(pc, [0, 0, 0, 0])
            r[0] += 1
            r[1] += d
            r[2] += s
            r[3] += max(0, t - prev_end)
            prev_end = max(prev_end, t + d)
    return tot


def test_listing_rows_lines_and_totals():
    w1 = _wave(
        100,
        [
            (110, 2, 0, 4, BASE + 0x110),
            (120, 9, 30, 34, BASE + 0x114),
            (130, 6, 0, 8, 0),
            (200, 6, 2, 8, BASE + 0x118),
            (205, 7, 0, 4, BASE + 0x114),
            (300, 11, 0, 4, BASE + 0x12C),
        ],
    )
    w2 = _wave(50, [(60, 2, 0, 4, BASE + 0x110), (90, 1, 5, 20, BASE + 0x114), (95, 6, 1, 2, 0xDEAD0)])
    d = Dispatch(name="t", target="gfx1100", waves=[w1, w2])
    rows = build_listing(d, _code())

    # only kernel "b" is touched: label + its 8 instructions, one row for the stray PC, then the (no PC) row
    assert [r.text for r in rows[:3]] == ["; b", "op4", "op5"]
    assert len(rows) == 1 + 8 + 1 + 1
    assert [r.line for r in rows] == list(range(len(rows)))
    assert rows[0].line == rows[1].line - 1 and rows[0].codeobj == 3 and rows[0].vaddr == 0x110
    assert rows[-2].codeobj == 0 and rows[-2].vaddr == 0xDEAD0
    # the record without a PC: its own row, idle counted from the wave's previous record (ends 154)
    assert rows[-1].is_no_pc and (rows[-1].hit, rows[-1].latency, rows[-1].stall, rows[-1].idle) == (1, 8, 0, 0)
    assert any("1 of 9 instruction records have no PC" in p for p in d.problems)
    assert rows[1].source == "k.py:16" and rows[2].source == ""

    exp = _expected([w1, w2])
    by_pc = {(BASE + r.vaddr if r.codeobj else r.vaddr): r for r in rows if not r.is_label and not r.is_no_pc}
    for pc, (hit, lat, stall, idle) in exp.items():
        r = by_pc[pc]
        assert (r.hit, r.latency, r.stall, r.idle) == (hit, lat, stall, idle), hex(pc)
    assert by_pc[BASE + 0x114].hit == 3 and by_pc[BASE + 0x11C].hit == 0
    assert sum(r.stall for r in rows) == sum(int(w.insts["stall"].sum()) for w in (w1, w2))  # every record

    # waves point at the rows; pc 0 at the (no PC) row
    line_by_pc = {pc: r.line for pc, r in by_pc.items()}
    for w in (w1, w2):
        for pc, line in zip(w.insts["pc"].tolist(), w.insts["line"].tolist()):
            assert line == (line_by_pc[pc] if pc else rows[-1].line)
    assert any("outside" in p for p in d.problems)


def test_symbolless_object_is_one_kernel_named_after_it():
    lc = _code()[1]
    w = _wave(0, [(10, 2, 0, 4, 0x9000_0104)])
    rows = build_listing(Dispatch(name="t", target="gfx1100", waves=[w]), [lc])
    assert [r.text for r in rows] == ["; y.co", "o0", "o1"]
    assert [r.hit for r in rows] == [0, 0, 1] and w.insts["line"][0] == 2


def test_no_waves_no_rows():
    assert build_listing(Dispatch(name="t", target="gfx1100"), _code()) == []


@pytest.mark.parametrize("group", [1, 7, 1 << 16])
def test_sums_a_group_of_waves_at_a_time_are_the_sums_at_once(monkeypatch, group):
    """Whole decodes are summed a few waves at a time (records without a PC among them): the totals per PC
    and every record's line are those of all records at once."""
    rng = np.random.default_rng(group)
    waves = []
    for k in range(40):
        n = int(rng.integers(0, 30))
        t = np.cumsum(rng.integers(0, 9, n)) + 100 * k
        pc = BASE + 4 * rng.integers(0, 50, n)
        pc[rng.random(n) < 0.1] = 0
        waves.append(
            _wave(100 * k, list(zip(t, rng.integers(0, 12, n), rng.integers(0, 5, n), rng.integers(1, 9, n), pc)))
        )
    monkeypatch.setattr(listing, "GROUP_RECORDS", group)
    sums = listing._PcSums(waves)
    assert sums.groups and (group > 1000 or len(sums.groups) > 5)
    pcs, at_once = listing._sums_at_once(waves)
    assert sums.pcs.tolist() == pcs.tolist() and sums.sums.tolist() == at_once.tolist()
    assert sums.without_pc == sum(int((w.insts["pc"] == 0).sum()) for w in waves) > 0
    lines = np.arange(len(pcs) - 1) * 3  # one PC listed nowhere: -1
    sums.set_lines(pcs[1:], lines, 999)
    for w in waves:
        want = lines_of_pcs(w.insts["pc"], pcs[1:], lines, 999)
        assert w.insts["line"].tolist() == want.tolist()
