"""The PC walk's state shared between blobs (stitch._Shared) changes no result: every blob of real captures,
decoded in one process after others of the same kernels (twice, and in reverse order), gives exactly what
it gives with nothing shared."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import SHARED, SYNTHETIC_CAPTURES, SYNTHETIC_MORE, real_data

from attdec.decoders import stitch
from attdec.decoders.gfx9.stitch import Gfx9Walker
from attdec.decoders.rdna.stitch import Gfx12Walker
from attdec.sources.pipeline import open_raw
from attdec.sources.raw import decode_blobs

# gfx12 barrier waits that leave no token (per-blob line state), a walk that gives up (the scalar path),
# the gfx9 walk with its swaps and barriers
CAPTURES = ["gfx1201/handwritten_run0", "gfx1201/handwritten_run1", "gfx1201/ops_run0", "gfx1201/ops_run1",
            "gfx950/gemm_run0", "gfx950/gemm_run1"]  # fmt: skip


def _summary(res) -> tuple:
    waves = [
        (w.se, w.cu, w.simd, w.slot, w.begin, w.end, w.insts.tobytes(), [tuple(map(int, x)) for x in w.timeline])
        for w in res.waves
    ]
    return waves, res.info, res.warnings, res.problems, res.walks, res.walks_stopped


def _capture_sets() -> list:
    """(capture folders, fewest waves they hold): the synthetic ones (two kernels' code), then the real ones."""
    sets = [pytest.param([*SYNTHETIC_CAPTURES.values(), SYNTHETIC_MORE], 40, id="synthetic")]
    if all(real_data("captures", *c.split("/")) for c in CAPTURES):
        sets.append(pytest.param([SHARED / "captures" / c for c in CAPTURES], 50, id="real"))
    return sets


@pytest.mark.parametrize("folders,least", _capture_sets())
def test_shared_walk_state_changes_nothing(monkeypatch, folders, least):
    raws = open_raw(folders)
    monkeypatch.setattr(stitch, "_SHARED", {})
    alone = []
    for raw in raws:
        for _blob, res, _dt in decode_blobs(raw):
            stitch._SHARED.clear()  # nothing learnt from another blob
            alone.append(_summary(res))
    assert sum(len(w[0]) for w in alone) > least and any(s[4] for s in alone)  # waves, and PC walks
    for order in (raws, raws, raws[::-1]):
        got = {id(raw): [_summary(res) for _blob, res, _dt in decode_blobs(raw)] for raw in order}
        assert [x for raw in raws for x in got[id(raw)]] == alone
    assert stitch._SHARED  # the state was shared


@pytest.mark.parametrize("family", [Gfx9Walker, Gfx12Walker])
def test_walkers_of_one_code_map_share_lines_and_memos(family):
    from attdec.decoders.common import CodeMap

    code = CodeMap()
    code.add([SimpleNamespace(address=0, text="s_endpgm", mnemonic="s_endpgm", size=4)], 0x1000)
    a, b = family.for_code(code), family.for_code(code)
    assert a is not None and b is not None
    assert a.view is b.view and a.memo is b.memo and a.parsed is not b.parsed
    c = family.for_code(code, shared=False)
    assert c is not None and c.view is not a.view


def test_shared_state_is_bounded(monkeypatch):
    """The shared states keep code objects alive and memos growing: both stay within their bounds."""
    from attdec.decoders.common import CodeMap

    monkeypatch.setattr(stitch, "_SHARED", {})
    monkeypatch.setattr(stitch, "MAX_SHARED_INSTRUCTIONS", 5)
    monkeypatch.setattr(stitch, "_MEMO_RECORDS", 0)
    line = SimpleNamespace(address=0, text="s_endpgm", mnemonic="s_endpgm", size=4)
    maps = []
    for _ in range(4):
        code = CodeMap()
        code.add([line, SimpleNamespace(**{**vars(line), "address": 4})], 0x1000)  # a new list: a new key
        maps.append(code)
        w = Gfx12Walker.for_code(code)
        assert w is not None
        w.state.grow(stitch.MAX_MEMO_RECORDS)  # as if its memos were full
        w.memo["x"] = 1
    assert len(stitch._SHARED) == 2  # 2 instructions each, at most 5 kept
    Gfx12Walker.for_code(maps[-1])
    assert all(not s.memo and s.size == 0 for s in stitch._SHARED.values())  # past the bound: cleared
    assert stitch._MEMO_RECORDS == 0


def test_barrier_wait_walks_replay_with_the_line_state_they_met(monkeypatch):
    """gfx12 walks over s_barrier_wait lines depend on what the blob's earlier waves left (excluded and
    matched lines): a memoised walk is replayed only from the same state, and leaves the state it left."""
    import numpy as np

    from attdec.decoders.common import CodeMap
    from attdec.model import Category, empty_insts

    texts = ["s_nop 0", "s_barrier_wait 0xffff", "v_add_f32 v0, v1, v2", "s_barrier_wait 0xffff", "s_endpgm"]
    code = CodeMap()
    code.add(
        [SimpleNamespace(address=4 * i, text=t, mnemonic=t.split()[0], size=4) for i, t in enumerate(texts)], 0x1000
    )
    monkeypatch.setattr(stitch, "_SHARED", {})
    s, i = Category.SALU, Category.IMMED
    first, second = [s, s, s, s], [s, i, s, s]

    def walk(w, cats):
        insts = empty_insts(len(cats))
        insts["category"], insts["time"], insts["duration"] = cats, np.arange(len(cats)) * 10, 4
        got, _, k = w.stitch(insts, [(0, 0x1000)], [], 0, exclude_barrier_wait=True)
        return got["pc"].tolist(), got["category"].tolist(), k.walked

    alone = walk(Gfx12Walker.for_code(code, shared=False), second)
    w = Gfx12Walker.for_code(code, shared=False)
    walk(w, first)
    after_first = walk(w, second)
    assert after_first != alone  # the state matters here
    for _ in range(2):  # blobs walking against the shared state: each starts from nothing
        w = Gfx12Walker.for_code(code)
        assert walk(w, second) == alone
        w = Gfx12Walker.for_code(code)
        walk(w, first)
        assert walk(w, second) == after_first


def test_code_maps_share_address_tables_and_stay_bounded(monkeypatch):
    """Code maps of one disassembly share its address table; overlapping parts: the latest wins; the tables
    kept stay within their bounds."""
    from attdec.decoders import common

    monkeypatch.setattr(common, "_BY_ADDRESS", {})
    monkeypatch.setattr(common, "MAX_BY_ADDRESS_INSTRUCTIONS", 5)
    a = [SimpleNamespace(address=4 * i, text=f"a{i}") for i in range(3)]
    b = [SimpleNamespace(address=4 * i, text=f"b{i}") for i in range(3)]
    one, two = common.CodeMap(), common.CodeMap()
    one.add(a, 0x1000)
    two.add(a, 0x2000)
    two.add(b, 0x2004)  # overlaps a's last two instructions
    assert one.get(0x1008).text == "a2" and one.get(0x2000) is None and len(one) == 3
    assert [two.get(0x2000 + 4 * i).text for i in range(4)] == ["a0", "b0", "b1", "b2"] and len(two) == 4
    assert common._by_address(a) is common._by_address(a)  # made once
    assert list(common._BY_ADDRESS) == [id(a)]  # b pushed a out (5 instructions at most), then a came back
