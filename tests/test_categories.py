"""ISA categories, counters and wait parsing per family (facts from isa-decoding.md §4-§6)."""

import pytest

from attdec.isa.categories import class_of, counters_incremented, mnemonic_of, parse_wait
from attdec.model.target import target


@pytest.mark.parametrize(
    "text,family,cat",
    [
        ("s_waitcnt lgkmcnt(0)", "gfx9", "WAITCNT"),
        ("s_wait_loadcnt 0x0", "gfx12", "WAITCNT"),
        ("s_waitcnt_vscnt null, 0x0", "gfx11", "WAITCNT"),
        ("s_nop 1", "gfx9", "NOP"),
        ("s_wait_alu 0xfffe", "gfx12", "NOP"),
        ("s_delay_alu instid0(VALU_DEP_1)", "gfx11", "NOP"),
        ("s_barrier", "gfx9", "BARRIER"),
        ("s_barrier_wait -1", "gfx12", "BARRIER"),
        ("s_cbranch_execz 12", "gfx9", "BRANCH"),
        ("s_endpgm", "gfx11", "BRANCH"),
        ("s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)", "gfx12", "MESSAGE"),
        ("s_load_dwordx2 s[4:5], s[0:1], 0x0", "gfx9", "SMEM"),
        ("s_load_b64 s[0:1], s[0:1], 0x0", "gfx12", "SMEM"),
        ("s_and_saveexec_b64 s[0:1], vcc", "gfx9", "SALU"),
        ("v_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], 0", "gfx9", "MFMA"),
        ("v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]", "gfx12", "MFMA"),
        ("v_fma_f32 v0, v1, v2, v3", "gfx9", "VALU"),
        ("v_exp_f32_e32 v8, v8", "gfx9", "VALU"),
        ("v_dual_mov_b32 v1, 0 :: v_dual_fmac_f32 v4, v2, v3", "gfx11", "VALU"),
        ("ds_swizzle_b32 v1, v2 offset:swizzle(SWAP,16)", "gfx9", "LDS"),
        ("ds_bpermute_b32 v1, v2, v3", "gfx9", "LDS"),
        ("ds_read_b128 v[0:3], v4", "gfx9", "LDS"),
        ("buffer_load_dword v1, v2, s[0:3], 0 offen", "gfx9", "VMEM_LOAD"),
        ("buffer_store_dword v1, v2, s[0:3], 0 offen", "gfx9", "VMEM_STORE"),
        ("global_load_b32 v1, v0, s[0:1]", "gfx12", "VMEM_LOAD"),
        ("scratch_store_dword off, v1, s0", "gfx9", "VMEM_STORE"),
        ("global_atomic_add v0, v1, s[0:1] glc", "gfx9", "VMEM_LOAD"),
        ("global_atomic_add v0, v1, s[0:1]", "gfx9", "VMEM_STORE"),
        ("flat_load_dword v0, v[0:1]", "gfx9", "FLAT"),
        ("exp mrt0 v0, v0, v0, v0", "gfx11", "EXPORT"),
        ("; my_kernel", "gfx9", "OTHER"),
    ],
)
def test_class_of(text, family, cat):
    assert class_of(text, target(family)) == cat


def test_mnemonic_strips_encoding_suffix():
    assert mnemonic_of("v_add_f32_e64 v0, v1, v2") == "v_add_f32"
    assert mnemonic_of("v_mov_b32_dpp v0, v1 quad_perm:[0,1,2,3]") == "v_mov_b32"


@pytest.mark.parametrize(
    "text,family,counters",
    [
        ("buffer_load_dword v1, v2, s[0:3], 0 offen", "gfx9", ("vmcnt",)),
        ("buffer_store_dword v1, v2, s[0:3], 0 offen", "gfx9", ("vmcnt",)),
        ("global_store_b32 v0, v1, s[0:1]", "gfx11", ("vscnt",)),
        ("global_store_b32 v0, v1, s[0:1]", "gfx12", ("storecnt",)),
        ("global_load_b32 v1, v0, s[0:1]", "gfx12", ("loadcnt",)),
        ("image_sample v[0:3], v[4:5], s[0:7], s[8:11]", "gfx12", ("samplecnt",)),
        ("flat_load_dword v0, v[0:1]", "gfx9", ("vmcnt", "lgkmcnt")),
        ("flat_store_b32 v[0:1], v2", "gfx12", ("storecnt", "dscnt")),
        ("ds_read_b32 v0, v1", "gfx9", ("lgkmcnt",)),
        ("ds_load_b32 v0, v1", "gfx12", ("dscnt",)),
        ("ds_gws_init v0 offset:0", "gfx9", ("lgkmcnt", "expcnt")),
        ("s_load_b64 s[0:1], s[0:1], 0x0", "gfx12", ("kmcnt",)),
        ("s_load_dwordx2 s[0:1], s[0:1], 0x0", "gfx9", ("lgkmcnt",)),
        ("s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)", "gfx12", ("kmcnt",)),
        ("ds_param_load v0, attr0.x", "gfx12", ("expcnt",)),
        ("v_add_f32 v0, v1, v2", "gfx9", ()),
    ],
)
def test_counters_incremented(text, family, counters):
    assert counters_incremented(text, target(family)) == counters


@pytest.mark.parametrize(
    "text,family,waits",
    [
        ("s_waitcnt vmcnt(0) lgkmcnt(0)", "gfx9", {"vmcnt": 0, "lgkmcnt": 0}),
        ("s_waitcnt vmcnt(0) & lgkmcnt(1)", "gfx9", {"vmcnt": 0, "lgkmcnt": 1}),
        ("s_waitcnt lgkmcnt(0)", "gfx9", {"lgkmcnt": 0}),
        ("s_waitcnt 0xc07f", "gfx9", {"lgkmcnt": 0}),  # gfx9 lgkmcnt(0) = 0xBF8CC07F
        ("s_waitcnt 0xfc07", "gfx11", {"lgkmcnt": 0}),  # gfx11 lgkmcnt(0) = 0xBF89FC07
        ("s_waitcnt 0x7f7", "gfx11", {"vmcnt": 1}),
        ("s_waitcnt 0x7", "gfx11", {"vmcnt": 0, "lgkmcnt": 0}),
        ("s_waitcnt_vscnt null, 0x0", "gfx11", {"vscnt": 0}),
        ("s_wait_loadcnt 0x0", "gfx12", {"loadcnt": 0}),
        ("s_wait_dscnt 0x1", "gfx12", {"dscnt": 1}),
        ("s_wait_kmcnt 0x0", "gfx12", {"kmcnt": 0}),
        ("s_wait_loadcnt_dscnt 0x102", "gfx12", {"loadcnt": 1, "dscnt": 2}),
        ("s_wait_storecnt_dscnt 0x3f00", "gfx12", {"dscnt": 0}),
        ("s_wait_alu 0xfffe", "gfx12", {}),
        ("v_add_f32 v0, v1, v2", "gfx9", {}),
    ],
)
def test_parse_wait(text, family, waits):
    assert parse_wait(text, target(family)) == waits


@pytest.mark.parametrize(
    "arch,fam",
    [
        ("gfx950", "gfx9"),
        ("gfx90a", "gfx9"),
        ("gfx1100", "gfx11"),
        ("gfx1030", "gfx11"),
        ("gfx1201", "gfx12"),
        ("gfx9 (chip unknown)", "gfx9"),
        ("gfx12", "gfx12"),
    ],
)
def test_rule_family_of_a_target(arch, fam):
    from attdec.isa.categories import _rules

    assert _rules(target(arch)) == fam


def test_chips_follow_their_familys_rules():
    assert counters_incremented("global_store_b32 v0, v1, s[0:1]", target("gfx1100")) == ("vscnt",)
    assert counters_incremented("global_store_b32 v0, v1, s[0:1]", target("gfx1201")) == ("storecnt",)
    assert class_of("s_wait_loadcnt 0x0", target("gfx1200")) == "WAITCNT"
    # gfx10 s_waitcnt: lgkmcnt is bits [13:8] (6 bits), vmcnt [3:0]+[15:14]
    assert parse_wait("s_waitcnt 0xf07f", target("gfx1030")) == {"lgkmcnt": 0x30}
    assert parse_wait("s_waitcnt 0xf07f", target("gfx9")) == {"lgkmcnt": 0}
    # gfx12 still decodes s_waitcnt (SOPP 9), with gfx11's layout
    assert (
        parse_wait("s_waitcnt 0xfc07", target("gfx1201"))
        == parse_wait("s_waitcnt 0xfc07", target("gfx11"))
        == {"lgkmcnt": 0}
    )
