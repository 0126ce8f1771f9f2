"""Each rule that differs between AMD decoder builds (`compat.Rules`) holds in both timing models: for every
rule and every value a build gives it, the vectorised model gives the scalar model's results on random
streams, or declines the blob. This is the check of docs/compat.md's checklist for adding a rule."""

from __future__ import annotations

import random
import zlib

import pytest
from test_gfx9_vectorised import any_code, assert_same
from test_gfx9_vectorised import random_stream as gfx9_stream
from test_rdna_vectorised_random import ARCH
from test_rdna_vectorised_random import random_stream as rdna_stream

from attdec.decoders import gfx9, rdna
from attdec.decoders.compat import COMPAT, DEFAULT, Rules

# (rule, value) for every value a build gives a rule other than the default build's
RULE_VALUES = sorted(
    {(f, getattr(r, f)) for r in COMPAT.values() for f in Rules.fields() if getattr(r, f) != getattr(DEFAULT, f)}
)


def with_rule(rule: str, value) -> Rules:
    return Rules(**{**{f: getattr(DEFAULT, f) for f in Rules.fields()}, rule: value})


def test_every_build_differs_from_the_default_by_listed_rules():
    assert RULE_VALUES  # the builds differ, so the checks below check something
    for r in COMPAT.values():
        assert {(f, getattr(r, f)) for f in Rules.fields() if getattr(r, f) != getattr(DEFAULT, f)} <= set(RULE_VALUES)


@pytest.mark.parametrize(("rule", "value"), RULE_VALUES)
@pytest.mark.parametrize("gen", [11, 12])
def test_rdna_models_agree_under_each_rule(rule, value, gen):
    rules = with_rule(rule, value)
    rng = random.Random(zlib.crc32(f"{rule}{value}{gen}".encode()))
    records = 0
    for _ in range(40):
        data = rdna_stream(gen, rng, barriers=True)
        a = rdna.decode(data, ARCH[gen], None, 0, vectorised=False, rules=rules)
        b = rdna.decode(data, ARCH[gen], None, 0, vectorised=True, rules=rules)
        assert a.occupancy.tobytes() == b.occupancy.tobytes()
        assert a.other_simd.tobytes() == b.other_simd.tobytes()
        assert [(w.cu, w.simd, w.slot, w.begin, w.end) for w in a.waves] == [
            (w.cu, w.simd, w.slot, w.begin, w.end) for w in b.waves
        ]
        for x, y in zip(a.waves, b.waves):
            assert x.insts.tobytes() == y.insts.tobytes()
            assert [tuple(s) for s in x.timeline] == [tuple(s) for s in y.timeline]
        records += sum(len(w.insts) for w in a.waves)
    assert records > 300


@pytest.mark.parametrize(("rule", "value"), RULE_VALUES)
def test_gfx9_models_agree_under_each_rule(rule, value, monkeypatch):
    monkeypatch.setattr(gfx9, "VECTORISE_FROM", 0)  # every blob is offered to the vectorised model
    rules = with_rule(rule, value)
    rng = random.Random(zlib.crc32(f"{rule}{value}".encode()))
    code = any_code()
    for _ in range(8):
        data = gfx9_stream(rng, rng.randint(1, 400))
        a = gfx9.decode(data, "gfx950", code, 0, vectorised=False, rules=rules)
        b = gfx9.decode(data, "gfx950", code, 0, rules=rules)
        assert_same(a, b)
