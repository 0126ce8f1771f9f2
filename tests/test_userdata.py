"""The register-write scanner: framing over every real capture, ROCm code-object markers on synthetic streams."""

from __future__ import annotations

import json

from conftest import SHARED, SYNTHETIC_CAPTURES, real_data

from attdec.decoders import stream_generation
from attdec.decoders.userdata import AGENT_RT_FREQUENCY_KHZ, OP_AGENT_INFO, PGM_HI, PGM_LO, ROC_MAGIC, scan_userdata
from tests.support.sqtt_encoder import Gfx9Encoder, RdnaEncoder, roc_marker_words


def test_framing_holds_on_every_capture_and_finds_the_kernel_entry():
    """No lost framing on any blob (the synthetic capture's, and every real one), and the last PGM write is the
    dispatch's kernel entry."""
    n = 0
    files = [SYNTHETIC_CAPTURES["gfx1100"] / "capture.json", *sorted(SHARED.glob("captures/*/*/capture.json"))]
    for cj in files:
        cap = json.loads(cj.read_text())
        entry = {k["name"]: k["code_start"] for k in cap["kernels"]}
        for b in cap["blobs"]:
            data = (cj.parent / b["file"]).read_bytes()
            s = scan_userdata(data, stream_generation(data))
            assert s.stopped_at is None, (cj.parent.name, b["file"])
            assert s.entry_pcs and s.entry_pcs[-1] == entry[b["kernel"]], (cj.parent.name, b["file"])
            assert not s.markers  # tinygrad writes RGP markers, never the ROCm protocol
            n += 1
    assert n == sum(len(json.loads(cj.read_text())["blobs"]) for cj in files)
    assert n >= 400 or not real_data("captures")


def test_rdna_code_object_markers():
    for gen in (11, 12, 10):
        st = RdnaEncoder(gen).nop().advance(6)
        st.reg(0x1234, 7)  # unrelated register write
        st.userdata(roc_marker_words(5, 0x7F00_1234_5000, 0x3000))
        st.nop().reg(PGM_LO, 0x1234_5060 >> 8 & 0xFFFFFFFF, cs=True).reg(PGM_HI, 0x7F00 >> 8 | 0, cs=True)
        st.userdata(roc_marker_words(5, 0x7F00_1234_5000, 0x3000, unload=True)[1:])
        s = scan_userdata(st.data(), gen)
        assert s.stopped_at is None
        assert [(m.id, m.addr, m.size, m.unload) for m in s.markers] == [
            (5, 0x7F00_1234_5000, 0x3000, False),
            (5, 0x7F00_1234_5000, 0x3000, True),
        ]
        assert len(s.entry_pcs) == 1


def test_gfx9_code_object_markers_and_entry():
    entry = 0x7F00_1234_6100
    st = Gfx9Encoder().misc().userdata(roc_marker_words(9, 0x7F00_1234_5000, 0x2000))
    st.reg_cs(PGM_LO, (entry >> 8) & 0xFFFFFFFF).misc().reg_cs(PGM_HI, entry >> 40)
    s = scan_userdata(st.data(), 9)
    assert [(m.id, m.addr, m.size) for m in s.markers] == [(9, 0x7F00_1234_5000, 0x2000)]
    assert s.entry_pcs == [entry]


def test_markers_need_activation():
    words = roc_marker_words(5, 0x1000, 0x100)[1:]  # no "\0ROC" first
    assert scan_userdata(Gfx9Encoder().userdata(words).data(), 9).markers == []


def test_unassigned_token_stops_with_offset():
    st = RdnaEncoder(11).nop().raw(0x7, 4)  # low nibble 0x7 is unassigned
    s = scan_userdata(st.data(), 11)
    assert s.stopped_at == 8


def test_agent_info_header_has_no_payload():
    """An agent-info word carries its value in the header itself: the next word is a header again (official
    UpdateRegNoCS), so the marker after it is read whole; the gfx9 decoder reads the same protocol."""
    info = OP_AGENT_INFO | AGENT_RT_FREQUENCY_KHZ << 8 | 100_000 << 12
    words = [ROC_MAGIC, info, *roc_marker_words(7, 0x7F00_0000_2000, 0x1000)[1:]]
    for blob, gen in ((RdnaEncoder(11).userdata(words).data(), 11), (Gfx9Encoder().userdata(words).data(), 9)):
        s = scan_userdata(blob, gen)
        assert s.realtime_khz == 100_000
        assert [(m.id, m.addr, m.size) for m in s.markers] == [(7, 0x7F00_0000_2000, 0x1000)]


def test_rgp_markers_from_userdata_2_and_3():
    """A pipeline bind and a dispatch EVENT with thread dims, written two dwords at a time to USERDATA_2/3
    (as Mesa and tinygrad do), then a word that starts no known marker: parsing stops there."""
    from attdec.decoders.userdata import RGP_BIND_PIPELINE, RGP_EVENT, USERDATA_2, USERDATA_3, rgp_markers

    words = [0x8C, 0x9ABC_DEF0, 0x1234_5678, 1 << 31, 0, 7, 64, 1, 1, 0xB]
    st = RdnaEncoder(11)
    for i, w in enumerate(words):
        st.reg(USERDATA_2 + (i & 1), w).token("TIME", delta=1)
    s = scan_userdata(st.data(), 11)
    assert [a for _, a, _ in s.userdata] == [USERDATA_2, USERDATA_3] * 5
    bind, event = rgp_markers(s.userdata)
    assert bind.kind == RGP_BIND_PIPELINE and (bind.dwords[2] << 32 | bind.dwords[1]) == 0x1234_5678_9ABC_DEF0
    assert event.kind == RGP_EVENT and event.dwords[2] == 7 and event.dwords[3:] == [64, 1, 1]
    assert not s.markers  # no "\0ROC": the ROCm protocol stays off
    roc = RdnaEncoder(11).userdata(roc_marker_words(5, 0x1000, 0x100))
    assert rgp_markers(scan_userdata(roc.data(), 11).userdata) == []
