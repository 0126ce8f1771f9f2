"""RDNA decoder: timing model on synthetic streams, the PC walk, the splitter against a scalar reader."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import (
    FIXTURES,
    SHARED,
    SYNTHETIC_CAPTURES,
    SYNTHETIC_MORE,
    capture_sets,
    captures,
    codemap,
    oracle_captures,
    real_data,
    shared_path,
)

from attdec.decoders import decode_blob, detect_format, rdna
from attdec.decoders.gfx9.stitch import Gfx9Walker
from attdec.decoders.rdna import splitter
from attdec.decoders.rdna.packets import FORMATS, Header, T
from attdec.decoders.rdna.splitter import lookup
from attdec.decoders.rdna.stitch import Gfx11Walker, Gfx12Walker
from attdec.decoders.stitch import LineKind
from attdec.model import Category
from attdec.model.target import target

ENTRY = 0x200001006100


def _tiny(arch):
    name = "rdna_gfx11_tiny.att" if arch.startswith("gfx11") else "rdna_gfx12_tiny.att"
    return (FIXTURES / name).read_bytes()


def _rows(wave):
    return [(int(r["time"]), int(r["duration"]), int(r["stall"]), int(r["category"])) for r in wave.insts]


@pytest.mark.parametrize("arch,ready", [("gfx1100", 25), ("gfx1201", 26)])
def test_timing_model_on_synthetic_stream(arch, ready):
    # tools/makers/make_rdna_fixture.py: wave 0 of SIMD 0 starts at 10, SMEM at 20, VALU at 22, WAVE_READY at 26
    # (gfx11 stamps it one cycle early), VALU at 30, immediate at 40, WAVE_END at 50.
    res = decode_blob(_tiny(arch), arch, None, 0)
    assert res.problems == []
    assert len(res.waves) == 1  # only the target SIMD gets a wave record
    w = res.waves[0]
    assert (w.cu, w.simd, w.slot, w.begin, w.end) == (0, 0, 0, 10, 50)
    stall = 30 - ready
    c = Category.__members__
    assert _rows(w) == [
        (20, 1, 0, c["SMEM"]),
        (22, 1, 0, c["VALU"]),
        (ready, 1 + stall, stall, c["VALU"]),  # issued at 30 after stalling since the ready
        (31, 10, 9, c["IMMED"]),  # an immediate waits from the previous end (31)
        (41, 9, 0, c["MESSAGE"]),  # synthetic s_endpgm record up to WAVE_END
    ]
    # the state timeline covers the wave from begin to end
    assert sum(d for _s, d in w.timeline) == w.end - w.begin
    occ = sorted(tuple(int(x) for x in r) for r in res.occupancy.tolist())
    assert occ == sorted(
        [(0, 0, 0, 0, 1, 10, ENTRY), (0, 0, 1, 3, 1, 10, ENTRY), (0, 0, 0, 0, 0, 50, ENTRY), (0, 0, 1, 3, 0, 53, ENTRY)]
    )


def _code(lines, base=0x200001006000, vaddr=0x100):
    return codemap(lines, base, vaddr)


def test_pc_walk_skips_delay_alu_and_matches_endpgm():
    code = _code(
        [
            ("s_load_b64 s[0:1], s[0:1], 0x0", 8),
            ("v_mov_b32_e32 v0, 0", 4),
            ("s_delay_alu instid0(VALU_DEP_1)", 4),
            ("v_add_f32_e32 v0, v0, v0", 4),
            ("s_waitcnt lgkmcnt(0)", 4),
            ("s_endpgm", 4),
        ]
    )
    w = decode_blob(_tiny("gfx1100"), "gfx1100", code, 0).waves[0]
    assert [int(p) - ENTRY for p in w.insts["pc"]] == [0x0, 0x8, 0x10, 0x14, 0x18]


def test_pc_walk_stops_when_code_does_not_fit():
    # a branch line that the trace says was not a branch stops the walk: later records keep pc 0
    code = _code([("s_load_b64 s[0:1], s[0:1], 0x0", 8), ("s_cbranch_scc0 3", 4), ("s_endpgm", 4)])
    w = decode_blob(_tiny("gfx1201"), "gfx1201", code, 0).waves[0]
    assert int(w.insts["pc"][0]) == ENTRY and int(w.insts["pc"][1]) == 0


@pytest.mark.parametrize(
    "text,family,cat",
    [
        ("s_dcache_inv", 11, LineKind.SMEM),  # shortest registered prefix (s_dcache) wins
        ("s_setprio 2", 11, LineKind.IMMED),
        ("s_setprio_inc_wg 1", 12, LineKind.SALU),
        ("s_prefetch_data s[0:1], 0x0, null, 8", 12, LineKind.SALU),  # what the official build answers
        ("v_mov_b64 v[0:1], v[2:3]", 12, LineKind.V_MOV_B64),
        ("v_mov_b64 v[0:1], v[2:3]", 11, LineKind.VALU),
        ("s_cbranch_execz 46", 11, LineKind.BRANCH),
        ("s_delay_alu instid0(VALU_DEP_1)", 11, LineKind.SKIP),
        ("s_alloc_vgpr 8", 12, LineKind.SALU),
        (".long 0xd8540000", 12, LineKind.DONT_KNOW),
        ("s_wait_alu 0xfffe", 12, LineKind.SKIP),
    ],
)
def test_line_category(text, family, cat):
    walker = {9: Gfx9Walker, 11: Gfx11Walker, 12: Gfx12Walker}[family]
    assert walker.line_kind(text) == cat


def test_format_detection():
    assert detect_format(_tiny("gfx1100")).name == "gfx11"  # type: ignore[union-attr]
    assert detect_format(_tiny("gfx1201")).name == "gfx12"  # type: ignore[union-attr]
    assert detect_format(b"\0" * 16) is None


def _reference_split(data: bytes, fmt) -> list[int]:
    """Token start nibbles, read one token at a time (the obvious scalar reader)."""
    nib = []
    for b in data:
        nib += [b & 15, b >> 4]
    nib += [0] * 32
    n = 2 * len(data)
    out, p, ext = [], 0, False
    while p < n:
        if ext and nib[p] & 1:
            p += 2
            continue
        packet = fmt.table.at(nib[p] | (nib[p + 1] << 4))
        if packet is not None and packet.name == "NOP":
            p += 1
            continue
        ext = packet is not None and packet.name == "WAVE_START_EXT" and fmt.ext_bytes
        out.append(p)
        p += packet.bits // 4 if packet is not None else 2  # an unassigned id: an 8-bit token, as 0.1.6 reads it
    return out


def _splitter_blobs() -> list:
    """(blob file, its repeat count, family): synthetic gfx11 and gfx12 streams repeated past 500 tokens
    (the header line once, as tools/makers/make_repeated_blob.py writes them), then real blobs where ../shared
    has them."""
    synth = SYNTHETIC_CAPTURES["gfx1100"]
    params = [
        pytest.param(synth / "kern_1_se0.att", 12, 11, id="synthetic-gfx1100"),
        pytest.param(FIXTURES / "rdna_gfx12_tiny.att", 120, 12, id="synthetic-gfx12-tiny"),
    ]
    for rel, fam in (
        ("gfx1100/gemm_run0/r_32_32_16_2_1_se0.att", 11),
        ("gfx1201/sync_run0/custom_wave_sync_1_se1.att", 12),
    ):
        if real_data("captures", *rel.split("/")):
            params.append(pytest.param(SHARED / "captures" / rel, 1, fam, id=rel))
    return params


def _repeated(blob, copies: int) -> bytes:
    """The blob's first 32-byte trace line (its HEADER) once, the rest `copies` times."""
    data = blob.read_bytes()
    return data[:32] + data[32:] * copies


@pytest.mark.parametrize("blob,copies,fam", _splitter_blobs())
@pytest.mark.parametrize("walk_below", [0, 1 << 40])  # the lock-step walk, the one-token-at-a-time walk
def test_vectorised_splitter_matches_scalar_reader(blob, copies, fam, walk_below, monkeypatch):
    monkeypatch.setattr(splitter, "SCALAR_WALK_NIBBLES", walk_below)
    data = _repeated(blob, copies)
    f = FORMATS[fam]
    tk = rdna.split(data, f)
    ref = _reference_split(data, f)
    lk = lookup(f)
    padded = data + b"\0\0"

    def low8(p):
        b = padded[p // 2] | (padded[p // 2 + 1] << 8)
        return (b >> (4 * (p & 1))) & 0xFF

    wanted = {
        T[n]
        for n in (
            "INST",
            "VALU_INST",
            "IMM_ONE",
            "IMMEDIATE",
            "WAVE_READY",
            "WAVE_START",
            "WAVE_START_EXT",
            "WAVE_END",
            "REG",
            "NEW_PC",
            "HEADER",
        )
    }
    nbits = 8 * len(data)
    exp = [
        p
        for p in ref
        if int(lk.type[low8(p)]) in wanted and 4 * p + (64 if f.whole_window else 4 * int(lk.nibbles[low8(p)])) <= nbits
    ]
    got = [p for p, t in zip(tk.pos.tolist(), tk.type.tolist()) if t in wanted]
    assert len(exp) > 500 and sorted(got) == exp  # gfx11 moves WAVE_READY tokens, so compare sets


@pytest.mark.parametrize("fam", [10, 11, 12])
def test_splitter_walks_match_reader_on_random_tokens(fam, monkeypatch):
    # Random tokens with NOPs after a third of them (the walks step over a NOP and the next token at once
    # where they can), a stray nibble now and then (lost sync), and, on gfx12, which no capture has, a tenth
    # WAVE_START_EXT with extension bytes (odd low nibble; NOPs between them): both walks against the
    # scalar reader.
    rng = np.random.default_rng(fam)
    f = FORMATS[fam]
    lk = lookup(f)
    ids = [low for low in range(256) if lk.type[low] not in (T["NOP"], T["UNKNOWN"], T["WAVE_START_EXT"])]
    nibbles: list[int] = []
    while len(nibbles) < 40_000:
        if f.ext_bytes and rng.random() < 0.1:  # WAVE_START_EXT (id 0x1C), then 0 to 3 extension bytes
            nibbles += [0xC, 0x1, *rng.integers(0, 16, 8).tolist()]
            for _ in range(rng.integers(0, 4)):
                nibbles += [int(rng.integers(0, 8)) * 2 + 1, int(rng.integers(0, 16))]
                nibbles += [0] * int(rng.integers(0, 2))
        low = int(rng.choice(ids))
        nibbles += [low & 15, low >> 4, *rng.integers(0, 16, int(lk.nibbles[low]) - 2).tolist()]
        if rng.random() < 0.3:
            nibbles += [0] * int(rng.integers(1, 4))
        if rng.random() < 0.02:
            nibbles.append(int(rng.integers(1, 16)))
    nibbles += [0] * (-len(nibbles) % 64)
    data = bytes(a | b << 4 for a, b in zip(nibbles[::2], nibbles[1::2]))
    ref = _reference_split(data, f)
    assert not f.ext_bytes or sum(lk.type[nibbles[p] | nibbles[p + 1] << 4] == T["WAVE_START_EXT"] for p in ref) > 100
    for walk_below in (0, 1 << 40):  # the lock-step walk, the one-token-at-a-time walk
        monkeypatch.setattr(splitter, "SCALAR_WALK_NIBBLES", walk_below)
        assert rdna.split(data, f, None).pos.tolist() == ref


def test_truncated_stream_reports_offset():
    data = _tiny("gfx1100")
    cut = data[:40]
    res = decode_blob(cut, "gfx1100", None, 0)
    assert any("truncated" in p and "byte" in p for p in res.problems)
    assert len(res.occupancy) >= 2  # kept what it had before the cut


def test_garbage_after_header_reports_lost_sync():
    rng = np.random.default_rng(1)
    data = _tiny("gfx1100")[:8] + rng.integers(0, 256, 4000, dtype=np.uint8).tobytes()
    res = decode_blob(data, "gfx1100", None, 0)
    assert any("lost sync" in p for p in res.problems)


def _arch(cap) -> str:
    return json.loads((cap / "capture.json").read_text())["gfx_arch"]


@pytest.mark.parametrize(
    "cap",
    captures(
        "gfx1100/gemm_run0",
        "gfx1100/ops_run0",
        "gfx1201/sync_run0",
        "gfx1201/handwritten_run0",
        "gfx1200/wmma_run0",
        synthetic=("gfx1100",),
    ),
)
@pytest.mark.parametrize("replay_events", [0, None])  # the numpy timing model for every blob, or as set
def test_vectorised_model_equals_scalar_model(cap, replay_events, monkeypatch):
    """rdna_vec must give exactly the scalar reference model's waves, timelines and occupancy."""
    from attdec.decoders.rdna import vectorised

    if replay_events is not None:
        monkeypatch.setattr(vectorised, "REPLAY_EVENTS", replay_events)
    arch = _arch(cap)
    n = 0
    for f in sorted(cap.glob("*.att")):
        data = f.read_bytes()
        a = rdna.decode(data, target(arch), None, 0, vectorised=False)
        b = rdna.decode(data, target(arch), None, 0, vectorised=True)
        assert a.occupancy.tobytes() == b.occupancy.tobytes()
        assert len(a.waves) == len(b.waves)
        for x, y in zip(a.waves, b.waves):
            assert (x.cu, x.simd, x.slot, x.begin, x.end) == (y.cu, y.simd, y.slot, y.begin, y.end)
            assert x.insts.tobytes() == y.insts.tobytes()
            assert [tuple(t) for t in x.timeline] == [tuple(t) for t in y.timeline]
            n += len(x.insts)
    assert n > 0


@pytest.mark.parametrize("folders,least", capture_sets(20, "gfx1*/*"))
def test_event_replay_equals_numpy_timing_model(folders, least, monkeypatch):
    """The vectorised decode's two timing models (each wave's events played one at a time for a few
    events, `vectorised_timing.compute` for many) give the same waves with PCs, for every RDNA capture's
    blobs (the big one left out: its replay alone takes seconds), also under every decoder version."""
    from attdec.decoders import COMPAT
    from attdec.decoders.rdna import vectorised
    from attdec.sources.explicit import codemap as load_code

    compared = replayed = 0
    for cap_dir in folders:
        cap = json.loads((cap_dir / "capture.json").read_text())
        arch = cap["gfx_arch"]
        for d in cap["dispatches"]:
            code = load_code([f"{cap_dir / k['code_object']}@{k['base_hex']}" for k in cap["kernels"]], arch)
            for b in d["blobs"]:
                data = (cap_dir / b).read_bytes()
                if len(data) > 1 << 18:
                    continue
                for compat in COMPAT:
                    got = []
                    for replay in (0, 1 << 40):
                        monkeypatch.setattr(vectorised, "REPLAY_EVENTS", replay)
                        r = decode_blob(data, arch, code, 1, b, compat)
                        got.append([(w.begin, w.end, w.insts.tobytes(), list(w.timeline)) for w in r.waves])
                        got[-1].append(r.problems)
                    assert got[0] == got[1], (cap_dir.name, b, compat)
                    compared += 1
                    replayed += len(got[0]) > 1
    assert compared >= least and replayed > 0


@pytest.mark.parametrize(
    "cap_dir,oracle_file",
    oracle_captures(
        "gfx1100/gemm_run0",
        "gfx1200/py_run0",
        "gfx1201/handwritten_run0",
        "gfx1200/test_gemm_run0",
        synthetic=(SYNTHETIC_CAPTURES["gfx1100"], SYNTHETIC_MORE),
    ),
)
@pytest.mark.parametrize("vectorised", [True, False])
def test_realtime_and_other_simd_records_match_oracle(cap_dir, oracle_file, vectorised):
    import json
    import re

    from attdec.model import Category

    cap = json.loads((cap_dir / "capture.json").read_text())
    oracle = {(d["kernel"], d["exec_tag"]): d for d in json.loads(oracle_file.read_text())["dispatches"]}
    seen = 0
    for disp in cap["dispatches"]:
        exp = oracle[(disp["kernel"], disp["exec_tag"])]
        rt, other = [], []
        for b in disp["blobs"]:
            se = int(re.search(r"se(\d+)", b).group(1))
            r = rdna.decode((cap_dir / b).read_bytes(), target(cap["gfx_arch"]), None, se, vectorised=vectorised)
            rt += [[se, a, c] for a, c in r.realtime]
            o = r.other_simd
            other += [
                [se, t, c, g, Category(k).name] for t, c, g, k in zip(*(o[f].tolist() for f in o.dtype.names[1:]))
            ]
        assert sorted(rt) == sorted(x[:3] for x in exp["realtime"])
        assert sorted(other) == sorted(x[:5] for x in exp["inst_other_simd"])  # with the traced WGP
        seen += len(rt) + len(other)
    assert seen > 0


@pytest.mark.parametrize(
    "cap",
    captures(
        "gfx1100/gemm_run0",
        "gfx1151/gemm_run0",
        "gfx1200/gemm_run0",
        "gfx1201/handwritten_run0",
        synthetic=("gfx1100",),
    ),
)
def test_lifecycle_one_at_a_time_equals_numpy(cap):
    """The vectorised decode's two lifecycle passes (Python for a few tokens, numpy for many) agree on real
    blobs, also with lifecycle tokens dropped or repeated and packets-lost flags set."""
    from attdec.decoders.rdna import vectorised

    fmt = FORMATS[11 if _arch(cap).startswith("gfx11") else 12]
    rng = np.random.default_rng(5)
    seen = traced = 0
    for f in sorted(cap.glob("*.att")):
        tk = rdna.split(f.read_bytes(), fmt)
        life = vectorised._of_types(tk.type, vectorised._LIFE)
        at_hdr = np.flatnonzero(tk.type == T["HEADER"])
        hdr = Header.read(int(tk.words(at_hdr[:1])[0]), fmt.table)
        # a second stream: a third of the lifecycle tokens dropped (ends without starts), a third repeated
        # (starts at running locations), a third of those in it after lost packets
        reps = np.ones(len(tk.type), np.intp)
        reps[life] = rng.integers(0, 3, len(life))
        idx = np.repeat(np.arange(len(tk.type)), reps)
        mangled = splitter.Tokens()
        for name in ("pos", "type", "time", "lost"):
            setattr(mangled, name, getattr(tk, name).take(idx))
        mangled.buf, mangled.at_nibble, mangled.windowed = tk.buf, tk.at_nibble, tk.windowed
        mangled.lost |= np.isin(mangled.type, vectorised._LIFE) & (rng.random(len(mangled.type)) < 1 / 3)
        for t in (tk, mangled):
            lf = vectorised._of_types(t.type, vectorised._LIFE)
            # the header's target, or (the mangled stream) another, from the first token on
            cu, simd, first = (hdr.target_cu, hdr.target_simd, int(at_hdr[0])) if t is tk else (1, 0, 0)
            args = (t, fmt.table, 2, lf, cu, simd, first)
            occ_np, tr_np = vectorised._lifecycle_np(*args)
            occ_py, tr_py = vectorised._lifecycle_py(*args)
            assert occ_py.dtype == occ_np.dtype and occ_py.tobytes() == occ_np.tobytes()
            assert tr_py == tr_np
            seen += len(lf)
            traced += len(tr_np)
    assert seen > 16 and traced > 2


@pytest.mark.parametrize("rel", ["gfx1100/ops_run0", "gfx1201/ops_run0"])
@pytest.mark.parametrize("replay_events", [0, None])
def test_vectorised_model_takes_jumps_and_new_pc(rel, replay_events, monkeypatch):
    """Blobs with jumps and NEW_PC tokens go through the vectorised model (no fallback) and stitch to the
    same PCs and lines as the scalar model (the PC slots they open and fill: `_branch_pcs`)."""
    import json

    from attdec.decoders.compat import DEFAULT
    from attdec.decoders.rdna import vectorised
    from attdec.decoders.rdna.scalar import decode_scalar
    from attdec.decoders.rdna.vectorised import decode_vectorised, vectorisable

    if replay_events is not None:
        monkeypatch.setattr(vectorised, "REPLAY_EVENTS", replay_events)
    from attdec.sources.explicit import codemap as load_code

    cap_dir = shared_path("captures", *rel.split("/"))
    cap = json.loads((cap_dir / "capture.json").read_text())
    arch, branched = cap["gfx_arch"], 0
    fmt = FORMATS[11 if arch.startswith("gfx11") else 12]
    for d in cap["dispatches"]:
        code = load_code([f"{cap_dir / k['code_object']}@{k['base_hex']}" for k in cap["kernels"]], arch)
        for b in d["blobs"]:
            data = (cap_dir / b).read_bytes()
            tk = rdna.split(data, fmt)
            if fmt.ready_early:
                splitter.ready_reorder(tk)
            if not (tk.type == T["NEW_PC"]).any():
                continue
            assert vectorisable(tk, fmt, DEFAULT)
            v = decode_vectorised(tk, fmt, data, target(arch), code, 1, b, DEFAULT)
            s = rdna.decode(data, target(arch), code, 1, b, vectorised=False)
            assert len(v.waves) == len(s.waves) > 0
            for x, y in zip(v.waves, s.waves):
                assert x.insts.tobytes() == y.insts.tobytes()
                assert [tuple(t) for t in x.timeline] == [tuple(t) for t in y.timeline]
            assert (v.waves[0].insts["pc"] != 0).sum() > 100
            assert v.problems == s.problems
            # the PC slots themselves (the walk may find the same PCs without them)
            slots: tuple[list, list] = ([], [])
            decode_vectorised(
                tk, fmt, data, target(arch), code, 1, b, DEFAULT, emit=lambda wv, _, out=slots[0]: out.append(wv)
            )
            decode_scalar(
                tk, fmt, data, target(arch), code, 1, b, DEFAULT, emit=lambda wv, _, out=slots[1]: out.append(wv)
            )
            assert [wv.pc_infos for wv in slots[0]] == [wv.pc_infos for wv in slots[1]]
            assert any(len(wv.pc_infos) > 1 for wv in slots[0])
            branched += 1
    assert branched > 0


def test_realtime_pairs_average_the_samples_that_do_not_increase():
    """`realtime_pairs` (numpy finds the rows to compare) against the official helper's loop over every row."""
    from attdec.decoders.rdna.wave import realtime_pairs

    def reference(samples):
        out = []
        for sc, rc in samples.tolist():
            if out and (sc <= out[-1][0] or rc <= out[-1][1]):
                out[-1] = ((out[-1][0] + sc) // 2, (out[-1][1] + rc) // 2)
            else:
                out.append((sc, rc))
        return out

    rng = np.random.default_rng(7)
    averaged = 0
    for n in (0, 1, 2, 5, 40, 300):
        for flat in (0.0, 0.1, 0.5):
            steps = rng.integers(1, 100, (n, 2)) * (rng.random((n, 2)) >= flat)  # 0: a clock that did not move
            samples = np.cumsum(steps, axis=0)
            got = realtime_pairs(samples)
            assert got == reference(samples)
            averaged += n - len(got)
    assert averaged > 50


@pytest.mark.parametrize("gen,arch", [(11, "gfx1100"), (12, "gfx1201")])
@pytest.mark.parametrize("replay_events", [0, None])
def test_vectorised_model_after_an_immediate_at_the_same_time(gen, arch, replay_events, monkeypatch):
    """Events of a wave at an immediate's own time after it (no real capture has them) come after its
    second state change at T + 1, chained over several such events (a READY among them: the next issue,
    at T + 1, has not stalled on gfx12) up to a second immediate: the vectorised model agrees with the
    scalar one there."""
    from attdec.decoders.rdna import vectorised
    from tests.support.sqtt_encoder import RdnaEncoder

    if replay_events is not None:
        monkeypatch.setattr(vectorised, "REPLAY_EVENTS", replay_events)
    e = RdnaEncoder(gen, dp_rate=1)
    e.kernel_entry(ENTRY)
    e.advance(10)
    e.wave_start(simd=0, slot=0)
    e.advance(10)
    e.imm_one(0)
    e.valu(0)  # at the immediate's time
    e.inst(0, "smem_rd")  # still at it: late too
    e.imm_one(0)  # an other immediate at the same time starts its own chain
    e.valu(0)
    e.wave_ready(0b1)  # late: the wave stalls from the immediate's second change (T + 1)
    e.valu(0, delta=1)  # so it has not stalled at T + 1
    e.advance(4)
    e.wave_ready(0b1)
    e.imm_one(0)  # after a READY
    e.valu(0)
    e.advance(6)
    e.valu(0)
    e.advance(10)
    e.wave_end(simd=0, slot=0)
    data = e.data()
    a = rdna.decode(data, target(arch), None, 0, vectorised=False)
    b = rdna.decode(data, target(arch), None, 0, vectorised=True)
    assert a.problems == b.problems == []
    assert len(a.waves) == len(b.waves) == 1
    x, y = a.waves[0], b.waves[0]
    assert len(x.insts) == 10  # every instruction and the MESSAGE
    assert x.insts.tobytes() == y.insts.tobytes()
    assert [tuple(t) for t in x.timeline] == [tuple(t) for t in y.timeline]
