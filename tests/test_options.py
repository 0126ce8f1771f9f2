"""The options records: made at the edge (API keywords, click options), checked there, and what reaches the
decoder is what the user asked for."""

from __future__ import annotations

import inspect

import pytest
from conftest import ROOT, invoke

import attdec
from attdec.model.options import DecodeOptions, InputOptions
from attdec.sources import pipeline

DEMO_RAW = ROOT / "attdec" / "data" / "demo_raw"


def test_a_misspelt_option_of_open_is_a_type_error(monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(TypeError, match="compta"):
        attdec.open("attdec/data/demo_raw", compta="rocm-7.13", jbos=8)
    with pytest.raises(TypeError, match="jbos"):
        attdec.open("attdec/data/demo_raw", compat="rocm-7.13", jbos=8)


@pytest.mark.parametrize(
    "call",
    [
        lambda: attdec.decode(b"\0" * 64, "gfx1100", compta="0.1.5"),
        lambda: attdec.open_raw(DEMO_RAW, jobs=2),  # nothing is decoded: no decode option
        lambda: DecodeOptions(jbos=8),
        lambda: InputOptions(input_fromat="rgp"),
        lambda: InputOptions().replace(decode=DecodeOptions().replace(windw=4096)),
        lambda: pipeline.open_dispatches([DEMO_RAW], jobs=1),  # no keyword plumbing below the edge
        lambda: InputOptions(code="k.co@0x1000"),  # one string is not a list of code objects
    ],
)
def test_unknown_options_are_type_errors_everywhere(call):
    with pytest.raises(TypeError):
        call()


def test_option_values_are_checked_when_the_record_is_made():
    with pytest.raises(ValueError, match="fold"):
        DecodeOptions(fold="total")
    with pytest.raises(ValueError, match="jobs"):
        attdec.open(DEMO_RAW, jobs=0)


def test_records_are_frozen_and_replace_makes_a_copy():
    d = DecodeOptions(compat="0.1.5")
    with pytest.raises(AttributeError):
        d.jobs = 3  # type: ignore[misc]
    e = d.replace(jobs=3)
    assert (d.jobs, e.jobs, e.compat) == (None, 3, "0.1.5")
    assert InputOptions(code=["a.co@0x1000"]).code == ("a.co@0x1000",)  # a list is kept as a tuple: hashable
    assert hash(InputOptions(code=["a.co@0x1000"])) == hash(InputOptions(code=("a.co@0x1000",)))


def test_the_api_and_the_command_line_take_their_defaults_from_the_records():
    params = inspect.signature(attdec.open).parameters
    for record in (DecodeOptions(), InputOptions()):
        for name in record.fields():
            if name in params:
                assert params[name].default == getattr(record, name), name
    assert set(DecodeOptions.fields()) <= set(params)  # every decode option can be given to open
    from attdec.commands.hotspots import hotspots

    cli = {p.name: p.default for p in hotspots.params}
    assert (cli["jobs"], cli["compat"]) == (DecodeOptions().jobs, DecodeOptions().compat)


def _spy_on_decode_blob(monkeypatch) -> list[dict]:
    """Record the keyword options each decode_blob call is given (the decoding still happens)."""
    import attdec.decoders

    seen: list[dict] = []
    real = attdec.decoders.decode_blob

    def spy(*args, **kw):
        seen.append(kw)
        return real(*args, **kw)

    monkeypatch.setattr(attdec.decoders, "decode_blob", spy)
    return seen


def test_what_open_is_given_reaches_the_decoder(monkeypatch):
    seen = _spy_on_decode_blob(monkeypatch)
    assert len(attdec.open(DEMO_RAW, compat="0.1.4", jobs=1, target_cu=1, fold=True, window=4096, occupancy=False)) == 1
    assert seen and all(kw["compat"] == "0.1.4" and kw["target_cu"] == 1 for kw in seen)
    assert all(kw["window"] == 4096 and kw["occupancy"] is False and callable(kw["fold"]) for kw in seen)
    seen.clear()
    attdec.open(DEMO_RAW, jobs=1)
    assert seen and all(kw["compat"] is None and kw["fold"] is None and kw["occupancy"] for kw in seen)


def test_what_the_command_line_is_given_reaches_the_decoder(monkeypatch):
    seen = _spy_on_decode_blob(monkeypatch)
    assert invoke(["waves", DEMO_RAW, "--compat", "0.1.5", "--jobs", "1"]).exit_code == 0
    # waves reads totals only: folded, no occupancy kept
    assert seen and all(kw["compat"] == "0.1.5" and callable(kw["fold"]) and not kw["occupancy"] for kw in seen)
    seen.clear()
    assert invoke(["decode", DEMO_RAW, "--target-cu", "2", "--jobs", "1"]).exit_code == 0
    assert seen and all(kw["target_cu"] == 2 and kw["compat"] is None and kw["fold"] is None for kw in seen)
