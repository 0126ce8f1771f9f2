"""Every opcode of every table: synthesized words vs llvm-objdump 22 (fixture from
tools/makers/make_opcode_corpus.py), plus the wait-counter decoding and a live LLVM re-check when installed."""

from __future__ import annotations

import collections
import gzip
import json
import random
import shutil

import pytest

from attdec.isa import disassemble, waitcnt_fields
from attdec.isa.decoder import ENCODING_OF, decode_one, table_for
from attdec.model.target import target
from tests.conftest import FIXTURES, SHARED

# Measured agreement at the time of writing (see docs/isa.md); the test guards against regressions.
MIN_SIZE, MIN_MNEMONIC, MIN_TEXT = 0.995, 0.995, 0.975


def _agreement():
    rows = json.loads(gzip.open(FIXTURES / "isa" / "opcodes_llvm.json.gz", "rt").read())
    per = collections.defaultdict(lambda: [0, 0, 0, 0])
    for arch, hexw, size, text in rows:
        words = [int(x, 16) for x in hexw.split()]
        ins = decode_one(words, 0, len(words), 0, table_for(arch))
        p = per[arch]
        p[0] += 1
        p[1] += ins.size == size
        p[2] += ins.mnemonic == text.split()[0]
        p[3] += ins.text == text
    return per


def test_every_opcode_agrees_with_llvm():
    per = _agreement()
    assert set(per) == {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1150", "gfx1200"}
    for arch, (n, size, mn, text) in per.items():
        assert size / n >= MIN_SIZE and mn / n >= MIN_MNEMONIC and text / n >= MIN_TEXT, (arch, n, size, mn, text)


def test_bad_words_never_raise_and_keep_walking():
    junk = bytes(range(256)) * 8 + b"\xff\xff"
    for arch in ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201"):
        out = disassemble(junk, arch, 0x1000)
        assert sum(i.size for i in out) == len(junk) // 4 * 4
        assert all(i.size in (4, 8, 12, 16) for i in out)
        assert all(i.text == f".long 0x{i.words[0]:08x}" for i in out if i.mnemonic == ".long")


def test_random_operand_fields_on_every_opcode_never_raise():
    """Renderer errors are not swallowed, so every opcode with random operand/modifier bits (opcode and
    encoding kept) must decode without raising, strictly and leniently."""
    rows = json.loads(gzip.open(FIXTURES / "isa" / "opcodes_llvm.json.gz", "rt").read())
    rng = random.Random(10)
    for arch, hexw, _size, _text in rows:
        tab = table_for(arch)
        base = [int(x, 16) for x in hexw.split()]
        words = base + [rng.getrandbits(32) for _ in range(4 - len(base))]
        enc = ENCODING_OF[tab.family](base[0])
        if enc in tab.enc and enc != "VOPD":
            lsb, mask, _ = tab.enc[enc]
            keep = (mask << lsb) | 0xFC000000
            w0 = (base[0] & keep) | (rng.getrandbits(32) & ~keep & 0xFFFFFFFF)
            words[0] = w0 if ENCODING_OF[tab.family](w0) == enc else base[0]
        for lenient in (False, True):
            ins = decode_one(words, 0, 4, 0, tab, lenient=lenient)
            assert ins.size in (4, 8, 12, 16) and ins.text


@pytest.mark.parametrize(
    "arch,hexw,size,text",
    [  # expected texts are llvm-objdump 22's
        ("gfx942", "7d8416f9 038e2dc7", 8, "v_cmp_eq_i32_sdwa vcc, sext(-7), v11 src0_sel:DWORD src1_sel:BYTE_3"),
        ("gfx942", "7ca216f9 069600f0", 8, "v_cmpx_lt_f32_sdwa vcc, neg(0.5), v11 src0_sel:DWORD src1_sel:DWORD"),
        ("gfx942", "7d85f6f9 83062d01", 8, "v_cmp_eq_i32_sdwa vcc, v1, src_vccz src0_sel:DWORD src1_sel:BYTE_3"),
        ("gfx942", "7d8416f9 038e2dd5", 4, ".long 0x7d8416f9"),  # an SGPR-side SDWA source that does not decode
        ("gfx1100", "be8000e6", 4, "s_mov_b32 s0, src_flat_scratch_base_lo"),
        ("gfx950", "d3ad0000 44020100", 8, "v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[0:7], v[0:5], v[0:3] blgp:2"),
        ("gfx950", "d3ac1000 00021308", 8, "v_mfma_ld_scale_b32 v8, v9 op_sel:[0,1] op_sel_hi:[0,0]"),
        (
            "gfx950",
            "d3ac1000 00021308 d3ad0900 04020100",
            16,
            "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[0:7], v[0:7], v[0:3], v8, v9 op_sel:[0,1,0] "
            "op_sel_hi:[0,0,0] cbsz:1",
        ),
        ("gfx950", "d3ac0000 00021308 d3ad0000 04020100", 8, "v_mfma_ld_scale_b32 v8, v9 op_sel_hi:[0,0]"),
    ],
)
def test_words_that_took_special_handling(arch, hexw, size, text):
    words = [int(x, 16) for x in hexw.split()]
    ins = decode_one(words, 0, len(words), 0, table_for(arch))
    assert (ins.size, ins.text) == (size, text)


def test_branch_target_and_waitcnt_fields():
    # gfx1201 `s_cbranch_scc0 65443` at 0x274 jumps back to 0x104 (shared/docs/isa-decoding.md)
    ins = disassemble(bytes.fromhex("a3ffa1bf"), "gfx1201", 0x274)[0]
    assert (ins.mnemonic, ins.target, ins.text) == ("s_cbranch_scc0", 0x104, "s_cbranch_scc0 65443")
    assert ins.flow == "branch"
    end, setpc = disassemble(bytes.fromhex("0000b0bf004880be"), "gfx1100", 0)  # s_endpgm; s_setpc_b64 s[0:1]
    assert (end.flow, setpc.text, setpc.flow, setpc.target) == ("end", "s_setpc_b64 s[0:1]", "indirect", None)
    assert waitcnt_fields(0xC07F, target("gfx9")) == {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 0}
    assert waitcnt_fields(0x0007, target("gfx11")) == {"vmcnt": 0, "expcnt": 7, "lgkmcnt": 0}
    assert disassemble(bytes.fromhex("7fc08cbf"), "gfx942", 0)[0].text == "s_waitcnt lgkmcnt(0)"
    split = disassemble(bytes.fromhex("0102c8bf"), "gfx1201", 0)[0]
    assert (split.text, waitcnt_fields(split, target("gfx12"))) == (
        "s_wait_loadcnt_dscnt 0x201",
        {"loadcnt": 2, "dscnt": 1},
    )
    vs = disassemble(bytes.fromhex("03007cbc"), "gfx1100", 0)[0]
    assert (vs.text, waitcnt_fields(vs, target("gfx11"))) == ("s_waitcnt_vscnt null, 0x3", {"vscnt": 3})
    assert disassemble(bytes.fromhex("f70389bf"), "gfx1100", 0)[0].text == "s_waitcnt vmcnt(0)"


@pytest.mark.skipif(not shutil.which("llvm-objdump-22"), reason="llvm-objdump-22 not installed")
def test_live_llvm_recheck_on_a_fresh_sample(tmp_path):
    """Re-ask LLVM about a slice of the corpus words, so a stale fixture cannot hide a regression."""
    from tools.oracles import probe_isa as P

    P.SHARED = SHARED
    if not (P.SHARED / "tools/isa_oracle/enumerate_opcodes.py").exists():
        pytest.skip("shared/tools/isa_oracle not present")
    rows = json.loads(gzip.open(FIXTURES / "isa" / "opcodes_llvm.json.gz", "rt").read())
    sample = [r for r in rows if r[0] == "gfx1100"][::25]
    words = [[int(x, 16) for x in r[1].split()] for r in sample]
    live = P.run("llvm-objdump-22", "gfx1100", 0x41, words)
    same = sum(decode_one(w, 0, len(w), 0, table_for("gfx1100")).text == t for w, (t, _) in zip(words, live))
    assert same / len(words) >= MIN_TEXT
