"""The vectorised RDNA timing model against the scalar reference on random streams (tests/support/sqtt_encoder.py):
waves of several slots interleaved, every kind of instruction token, ready/immediate masks, same-cycle
tokens, tokens of slots without a wave or after a wave's end. The vectorised driver must give the scalar
model's waves, records, timelines and occupancy exactly (or decline the blob)."""

from __future__ import annotations

import random

import pytest

from attdec.decoders import rdna
from attdec.decoders.rdna.packets import FORMATS, OP_BARRIER, OP_JUMP, OP_RFE, OP_TRAP
from attdec.model.target import target
from tests.support.sqtt_encoder import RdnaEncoder

ARCH = {11: target("gfx1100"), 12: target("gfx1201")}


def random_stream(gen: int, rng: random.Random, branches: bool = False, barriers: bool = False) -> bytes:
    """Waves on slots 0-5 of the target SIMD 0 and on SIMD 1, random instruction-level tokens for the running
    waves and for slots 8-9 (never started); now and then one for a wave that has ended, or a second end (the
    vectorised driver declines those blobs). With `branches`, jumps and NEW_PC tokens too; with `barriers`,
    s_barrier issues (timed by build-specific rules)."""
    refused = {OP_TRAP, OP_RFE} | (set() if barriers else {OP_BARRIER}) | (set() if branches else {OP_JUMP})
    ops = [k for k in FORMATS[gen].ops if k not in refused]
    ops += [OP_JUMP] * (len(ops) // 4 if branches else 0)
    e = RdnaEncoder(gen).kernel_entry(0x7000_0100)
    running: set[int] = set()
    ended: set[int] = set()
    t = 10
    for _ in range(rng.randrange(20, 120)):
        t += rng.choice([0, 0, 0, 4, 5, 7, 12, 30])  # same-cycle tokens are common
        e.at(t)
        r = rng.random()
        if r < 0.12:
            slot = rng.randrange(6)
            if slot in ended and rng.random() < 0.1:  # a second end
                e.wave_end(simd=0, slot=slot)
            elif slot in running:
                e.wave_end(simd=0, slot=slot)
                running.discard(slot)
                ended.add(slot)
            else:
                e.wave_start(simd=0, slot=slot)
                running.add(slot)
                ended.discard(slot)
            continue
        if r < 0.16:
            slot = rng.randrange(6)
            e.wave_start(simd=1, slot=slot) if rng.random() < 0.5 else e.wave_end(simd=1, slot=slot)
            continue
        live = [*sorted(running), 8, 9]
        if ended and rng.random() < 0.01:
            live = sorted(ended)
        slot = rng.choice(live)
        mask = sum(1 << s for s in live if rng.random() < 0.5) or 1 << slot
        if branches and rng.random() < 0.08:
            e.new_pc(slot, rng.randrange(0, 1 << 20, 4))
        elif r < 0.45:
            e.inst(slot, rng.choice(ops))
        elif r < 0.65:
            e.valu(slot)
        elif r < 0.75:
            e.imm_one(slot)
        elif r < 0.83:
            e.immediate(mask)
        else:
            e.wave_ready(mask)
    for slot in sorted(running):
        if rng.random() < 0.8:  # some waves never end
            t += rng.choice([0, 4, 9])
            e.at(t).wave_end(simd=0, slot=slot)
    return e.data()


@pytest.mark.parametrize("gen", [11, 12])
def test_vectorised_equals_scalar_on_random_streams(gen):
    rng = random.Random(1200 + gen)
    compared = 0
    for _ in range(150):
        data = random_stream(gen, rng)
        a = rdna.decode(data, ARCH[gen], None, 0, vectorised=False)
        b = rdna.decode(data, ARCH[gen], None, 0, vectorised=True)
        assert a.occupancy.tobytes() == b.occupancy.tobytes()
        assert [(w.cu, w.simd, w.slot, w.begin, w.end) for w in a.waves] == [
            (w.cu, w.simd, w.slot, w.begin, w.end) for w in b.waves
        ]
        for x, y in zip(a.waves, b.waves):
            assert x.insts.tobytes() == y.insts.tobytes()
            assert [tuple(s) for s in x.timeline] == [tuple(s) for s in y.timeline]
        compared += sum(len(w.insts) for w in a.waves)
    assert compared > 1000


@pytest.mark.parametrize("gen", [11, 12])
def test_vectorised_wave_without_tokens_beside_a_slot_without_wave(gen):
    """A wave none of whose instruction tokens came (its slot has no event) while a slot without a wave has
    some: the events of that slot belong to no wave, and the wave has no records and ends at 0."""
    e = RdnaEncoder(gen).kernel_entry(0x7000_0100)
    e.at(10).wave_start(simd=0, slot=0)
    e.at(20).valu(8)
    e.at(30).wave_ready(1 << 9)
    data = e.data()
    a = rdna.decode(data, ARCH[gen], None, 0, vectorised=False)
    b = rdna.decode(data, ARCH[gen], None, 0, vectorised=True)
    assert [(w.slot, w.begin, w.end, len(w.insts)) for w in a.waves] == [(0, 10, 0, 0)]
    assert [(w.slot, w.begin, w.end, len(w.insts)) for w in b.waves] == [(0, 10, 0, 0)]
    assert [tuple(s) for s in a.waves[0].timeline] == [tuple(s) for s in b.waves[0].timeline]


@pytest.mark.parametrize("gen", [11, 12])
def test_vectorised_pc_slots_equal_scalar_on_random_streams_with_branches(gen):
    """Jumps and NEW_PCs: the PC slots the vectorised pass gives the traced waves are the scalar pass's."""
    from attdec.decoders.common import NotVectorisable
    from attdec.decoders.compat import DEFAULT
    from attdec.decoders.rdna.scalar import decode_scalar
    from attdec.decoders.rdna.vectorised import decode_vectorised, vectorisable

    rng = random.Random(300 + gen)
    fmt = FORMATS[gen]
    compared = slots = 0
    for _ in range(150):
        data = random_stream(gen, rng, branches=True)
        tk = rdna.split(data, fmt)
        if fmt.ready_early:
            rdna.splitter.ready_reorder(tk)
        assert vectorisable(tk, fmt, DEFAULT)
        got: tuple[list, list] = ([], [])
        args = (tk, fmt, data, ARCH[gen], None, 0, "", DEFAULT)
        try:
            decode_vectorised(*args, emit=lambda wv, _, out=got[0]: out.append(wv))
        except NotVectorisable:
            continue
        decode_scalar(*args, emit=lambda wv, _, out=got[1]: out.append(wv))
        assert [wv.pc_infos for wv in got[0]] == [wv.pc_infos for wv in got[1]]
        assert [len(wv.insts) for wv in got[0]] == [len(wv.t) for wv in got[1]]
        compared += 1
        slots += sum(len(wv.pc_infos) - 1 for wv in got[1])
    assert compared > 30 and slots > 100
