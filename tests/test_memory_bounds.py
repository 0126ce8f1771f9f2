"""Memory stays bounded, or the input is refused up front in one line naming the limit and how to raise it:
a blob named many times through a pickle's memo is decoded once, a code.json past the row limit is refused,
a raw blob too big to hold decoded whole is refused by the commands that keep every record."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, SHARED, captures, cli, one_line_error, real_data, repeated_capture
from test_sources_tinygrad import ProfileDeviceEvent, ProfileProgramEvent, ProfileSQTTEvent, _pickle_as_tinygrad

from attdec.sources import tinygrad

# gfx1100 captures of one kernel
CAPTURES = captures("gfx1100/gemm_run0", synthetic=("gfx1100",))


def _memo_profile(folder, copies: int) -> tuple[bytes, int, str]:
    """A profile whose `copies` SQTT events, each of its own dispatch, all name one blob object of a capture:
    the pickle holds the blob once (its memo). Returns (pickle, blob size, kernel name)."""
    cap = json.loads((folder / "capture.json").read_text())
    (k,) = cap["kernels"]
    blob = (folder / cap["blobs"][0]["file"]).read_bytes()
    lib = (folder / k["code_object"]).read_bytes()
    ev = [
        ProfileDeviceEvent("AMD", 0, {"gfx_target_version": 110000}),
        ProfileProgramEvent("AMD", k["name"], lib, k["base"], 0),
        *(ProfileSQTTEvent("AMD", 0, 0, blob, True, tag) for tag in range(copies)),
    ]
    return _pickle_as_tinygrad(ev), len(blob), k["name"]


@pytest.mark.parametrize("folder", CAPTURES)
def test_a_blob_named_many_times_is_read_once(folder):
    data, size, _ = _memo_profile(folder, 2_000)
    assert len(data) < size + 2_000 * 64  # the pickle holds the blob once
    (d,) = tinygrad.dispatches_from_events(tinygrad.load_events(data, "m.pkl"), "m.pkl")
    assert len(d.blobs) == 1
    assert len(d.damage) == 1 and "1,999 more SQTT event(s)" in d.damage[0]


def test_distinct_blobs_are_all_kept():
    ev = [
        ProfileDeviceEvent("AMD", 0, {"gfx_target_version": 110000}),
        ProfileProgramEvent("AMD", "k", b"\x7fELF", 0x1000, 0),
        *(ProfileSQTTEvent("AMD", 0, se, bytes([se]) * 40, True, 1) for se in range(4)),
        ProfileSQTTEvent("AMD", 0, 0, b"x", True, 2),  # one-byte objects are shared by Python itself
        ProfileSQTTEvent("AMD", 0, 0, b"x", True, 3),
    ]
    ds = tinygrad.dispatches_from_events(tinygrad.load_events(_pickle_as_tinygrad(ev), "d.pkl"), "d.pkl")
    assert [len(d.blobs) for d in ds] == [4, 1, 1]
    assert not any(d.damage for d in ds)


@pytest.mark.parametrize("folder", CAPTURES)
def test_memo_amplification_decodes_once_and_says_so(tmp_path, folder):
    data, _, kernel = _memo_profile(folder, 1_000)
    p = tmp_path / "memo.pkl"
    p.write_bytes(data)
    r = cli("waves", p, "--format", "json", "--jobs", "1")
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr
    assert {w["dispatch"] for w in json.loads(r.stdout)["waves"]} == {f"{kernel}#0"}
    assert "999 more SQTT event(s)" in r.stderr


def _big_synthetic(tmp_path):
    """The synthetic gfx1100 capture with one SE blob's body repeated to ~1.1 MiB of SQTT."""
    return repeated_capture(tmp_path / "big", 4000)


def _big_captures() -> list:
    """(how to get a capture, a cap below its SQTT, a cap above it) in MiB."""
    params = [pytest.param(_big_synthetic, 1, 2, id="synthetic")]
    if real_data("captures", "gfx1200", "gemm_gfx1200_run0"):  # ~3.7 MiB of SQTT
        real = SHARED / "captures/gfx1200/gemm_gfx1200_run0"
        params.append(pytest.param(lambda _: real, 2, 4, id="gemm_gfx1200"))
    return params


@pytest.mark.parametrize("make,below,above", _big_captures())
def test_whole_decode_past_the_cap_is_refused_up_front(tmp_path, monkeypatch, make, below, above):
    """report, timeline, waits and decode keep every record of what they decode: SQTT past the cap is refused
    before any decoding, in one line naming the variable that raises it; hotspots decodes it regardless."""
    cap = make(tmp_path)
    monkeypatch.setenv("ATTDEC_MAX_WHOLE_DECODE_MB", str(below))
    out = tmp_path / "out"
    for args in (
        ("report", "-o", out),
        ("timeline", "-o", out),
        ("waits",),
        ("decode", "--format", "json", "-o", out),
    ):
        one_line_error(cli(*args, cap, "--jobs", "1"), "ATTDEC_MAX_WHOLE_DECODE_MB", "MiB")
        assert not out.exists()
    assert cli("hotspots", cap, "--top", "1", "--jobs", "1").returncode == 0
    monkeypatch.setenv("ATTDEC_MAX_WHOLE_DECODE_MB", str(above))
    assert cli("timeline", "-o", out, cap, "--jobs", "1").returncode == 0


def _listing_folder(tmp_path, rows: int):
    """A ui_output folder of the demo sample whose code.json repeats its instruction rows to `rows` rows."""
    sample = ROOT / "attdec" / "data" / "demo" / "ui_output_agent_4242_dispatch_7"
    out = tmp_path / "ui_output_agent_1_dispatch_1"
    out.mkdir()
    for name in ("filenames.json", "occupancy.json", "realtime.json"):
        (out / name).write_bytes((sample / name).read_bytes())
    doc = json.loads((sample / "code.json").read_text())
    first, *body = doc["code"]
    doc["code"] = [first] + [[*body[i % len(body)][:2], i + 1, *body[i % len(body)][3:]] for i in range(rows)]
    (out / "code.json").write_text(json.dumps(doc))
    return out


def test_a_listing_past_the_cap_is_refused_before_it_is_read(tmp_path, monkeypatch):
    folder = _listing_folder(tmp_path, 20_000)  # ~2.1 MB
    monkeypatch.setenv("ATTDEC_MAX_LISTING_MB", "1")
    for cmd in ("hotspots", "kernel", "loops"):
        one_line_error(cli(cmd, folder), "code.json", "ATTDEC_MAX_LISTING_MB")
    monkeypatch.setenv("ATTDEC_MAX_LISTING_MB", "4")
    assert cli("hotspots", folder, "--top", "1").returncode == 0


def test_memory_running_out_anyway_is_one_line(tmp_path, monkeypatch):
    folder = _listing_folder(tmp_path, 100)

    def exhausted(*a, **k):
        raise MemoryError

    monkeypatch.setattr("attdec.sources.ui_output.parse_code", exhausted)
    one_line_error(cli("hotspots", folder), "out of memory")
