"""`attdec decode --tokens`: the token stream of a blob, laid out by the packet tables (every family, text
and JSON, bad input). Synthetic streams come from tests/support/sqtt_encoder.py; real ones from ../shared."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, captures, invoke

from attdec.decoders import decode_blob
from tests.support import sqtt_encoder as enc


def tokens(*args):
    return invoke(["decode", "--tokens", *map(str, args)])


def rows(out: str) -> list[list[str]]:
    """The token lines of a text listing, split into offset, time, type and the fields."""
    return [line.split(None, 3) for line in out.splitlines() if line and not line.startswith("#")][1:]


def test_rdna_listing_reads_like_the_stream_it_was_built_from():
    # tools/makers/make_rdna_fixture.py: HEADER, PGM_LO/HI, wave 0 of SIMD 0 at 10, SMEM at 20, VALU at 22, ...
    r = tokens(FIXTURES / "rdna_gfx11_tiny.att")
    assert r.exit_code == 0, r.output
    lines = rows(r.output)
    assert [x[2] for x in lines] == [
        "HEADER", "REG", "REG", "TIME", "WAVE_START", "WAVE_START", "TIME", "INST", "VALU_INST", "TIME",
        "WAVE_READY", "TIME", "VALU_INST", "TIME", "IMM_ONE", "TIME", "WAVE_END", "WAVE_END",
    ]  # fmt: skip
    assert lines[1][3] == "pipe=0 me=0 context=0 cs addr=COMPUTE_PGM_LO data=0x00010061"
    assert lines[7] == ["34", "20", "INST", "slot=0 op=smem_rd"]
    assert lines[8][:3] == ["36.5", "22", "VALU_INST"]  # a token starting in a byte's high nibble
    assert lines[10][1:] == ["26", "WAVE_READY", "mask=0x0001"]  # stream time (the decoder uses 25)
    assert lines[-1][1:] == ["53", "WAVE_END", "sa=0 simd=1 wgp=0 slot=3"]
    assert "# 18 tokens" in r.output and "gfx11 stream, 96 bytes" in r.output


def test_gfx10_stream_is_listed_with_its_own_table(tmp_path):
    # gfx10's TIMESTAMP is 64 bits with a kind field (gfx11: 48 bits, rt/pl flags)
    e = enc.RdnaEncoder(10).token("TIMESTAMP", kind=1, value=100).token("TIME", delta=2).wave_start(simd=1, slot=2)
    f = tmp_path / "g10_se0.att"
    f.write_bytes(e.data())
    r = tokens(f)
    assert r.exit_code == 0, r.output
    assert "gfx10 stream" in r.output
    assert [x[:3] for x in rows(r.output)] == [["0", "0", "HEADER"], ["8", "100", "TIMESTAMP"], ["16", "106", "TIME"],
                                               ["17", "106", "WAVE_START"]]  # fmt: skip


def test_gfx12_listing_in_json():
    r = tokens(FIXTURES / "rdna_gfx12_tiny.att", "--format", "json", "--arch", "gfx1201")
    assert r.exit_code == 0, r.output
    (blob,) = json.loads(r.output)["blobs"]
    assert blob["format"] == "gfx12" and blob["problems"] == []
    inst = [t for t in blob["tokens"] if t["type"] == "INST"]
    assert inst == [
        {"byte": 34, "type": "INST", "time": 20,
         "fields": {"delta": 0, "wave64_hi": 0, "slot": 0, "op": 1, "op_name": "smem_rd"}}
    ]  # fmt: skip
    assert [t["time"] for t in blob["tokens"]] == sorted(t["time"] for t in blob["tokens"])


def test_gfx9_listing_names_subtypes_and_issue_slots(tmp_path):
    f = tmp_path / "demo_se0.att"
    f.write_bytes(enc.demo().data())
    r = tokens(f)
    assert r.exit_code == 0, r.output
    lines = rows(r.output)
    assert lines[0][:3] == ["0", "-", "HEADER"] and "version2=6" in lines[0][3]
    assert ["72", "28", "ISSUE", "simd=0 slot0=INST"] in lines
    assert ["76", "28", "INST", "slot=0 simd=0 kind=SALU_32"] in lines
    assert ["112", "60", "INST_PC", "slot=3 simd=1 pc=0x1100"] in lines
    # TIME_RESET and its TIMESTAMP are never delivered: no time
    assert ["122", "-", "MISC", "sh=0 kind=TIME_RESET"] in lines
    assert ["124", "-", "TIMESTAMP", "timestamp=1000000"] in lines


@pytest.mark.parametrize(
    "p",
    captures(
        "gfx1100/gemm_run0/r_32_32_16_2_1_se0.att", "gfx1201/gemm_run0", "gfx950/gemm_run0/r_32_32_16_2_1_se0.att"
    ),
)
def test_capture_listing_agrees_with_the_decoder(p):
    """Without --arch: every wave start and end the decoder counts is a listed token, at its time."""
    if p.is_dir():
        p = max(p.glob("*.att"), key=lambda f: f.stat().st_size)
    r = tokens(p, "--format", "json")
    assert r.exit_code == 0, r.output
    (blob,) = json.loads(r.output)["blobs"]
    cap = json.loads((p.parent / "capture.json").read_text())
    res = decode_blob(p.read_bytes(), cap["gfx_arch"], None, 0)
    occ = res.occupancy[res.occupancy["time"] > 0]  # time 0: starts the decoder adds for ends without one
    listed = [(t["time"], t["type"] == "WAVE_END") for t in blob["tokens"] if t["type"] in ("WAVE_START", "WAVE_END")]
    if blob["format"] != "gfx9":  # gfx9 lists the starts of waves already running, which occupancy skips
        assert sorted(listed) == sorted((int(t), not s) for t, s in zip(occ["time"], occ["start"]))
    assert len(listed) >= len(occ) > 0
    offsets = [2 * t["byte"] + t.get("nibble", 0) for t in blob["tokens"]]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)


def test_lost_sync_is_listed_where_it_happens(tmp_path):
    e = enc.RdnaEncoder(11).kernel_entry(0x7000_0100).at(10).wave_start(simd=0, slot=0)
    e.raw(0x7777_7777, 32).at(30).wave_end(simd=0, slot=0)  # at byte 29 (8 + 16 + 1 + 4); nibble 7 is unassigned
    f = tmp_path / "bad_se0.att"
    f.write_bytes(e.data())
    r = tokens(f)
    assert r.exit_code == 3 and "Traceback" not in r.output
    lines = rows(r.stdout)
    unknown = [x for x in lines if x[2] == "UNKNOWN"]
    assert unknown == [["29", "10", "UNKNOWN", "4 unassigned token ids: lost sync here, each read as an 8-bit token"]]
    assert lines[-1][2] == "WAVE_END"  # it picks up the stream after the garbage
    assert "lost sync: 4 unknown token ids, first at byte 29" in r.stderr


def test_truncated_gfx9_blob_lists_what_comes_before(tmp_path):
    data = enc.demo().data()
    f = tmp_path / "cut_se0.att"
    f.write_bytes(data[:146])  # inside the ISSUE at byte 144
    r = tokens(f)
    assert r.exit_code == 3
    assert rows(r.stdout)[-1][:3] == ["142", "68", "WAVE_END"]
    assert "truncated token at byte offset 144" in r.stderr


def test_bad_input_is_one_error_line(tmp_path):
    f = tmp_path / "x.att"
    f.write_bytes(b"\0" * 64)
    r = tokens(f)
    assert r.exit_code == 1 and r.output.strip().startswith("attdec: error:") and "not an SQTT stream" in r.output
    r = tokens(FIXTURES / "rdna_gfx11_tiny.att", "--arch", "gfx950")
    assert r.exit_code == 1 and "the trace is gfx11, not gfx950" in r.output
    r = tokens(FIXTURES)
    assert r.exit_code == 1 and "--tokens lists .att blobs, not folders" in r.output
