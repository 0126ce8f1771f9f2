"""Theoretical occupancy against LLVM (llc-22's "; Occupancy"), hand-checked kernels of each family, and
achieved occupancy from wave start/end records."""

from __future__ import annotations

import json

import numpy as np
import pytest

import attdec
from attdec.analysis.kernel import kernel_summary
from attdec.analysis.occupancy import achieved_occupancy, theoretical_occupancy
from attdec.model import OCCUPANCY_DTYPE, KernelResources, target
from attdec.sources.pipeline import open_dispatches
from tests.conftest import FIXTURES, capture_sets, shared_path


def test_matches_llvm_on_every_modelled_target():
    """720 kernels compiled by llc-22 for 20 targets (wave32/64, CU/WGP mode, VGPR/AGPR/SGPR/LDS/workgroup
    sizes drawn from a grid by tools/makers/make_occupancy_fixtures.py): attdec computes LLVM's occupancy from
    the register counts LLVM put in the metadata note."""
    cases = json.loads((FIXTURES / "occupancy_llvm.json").read_text())["cases"]
    limited = set()
    for c in cases:
        res = KernelResources(
            "k",
            vgpr=c["vgpr"],
            agpr=c["agpr"],
            sgpr=c["sgpr"],
            lds_bytes=c["lds_bytes"],
            wave_size=c["wave_size"],
            workgroup_size=c["workgroup_size"],
            wgp_mode=c["wgp_mode"],
        )
        th = theoretical_occupancy(res, target(c["target"]))
        assert th.waves_per_simd == c["occupancy"], c
        limited.update(th.limited_by.split("+"))
    assert len(cases) >= 700 and len({c["target"] for c in cases}) >= 20
    assert limited == {"VGPR", "SGPR", "LDS", "workgroup", "wave slots"}  # every limit was exercised


def _dispatch(*parts):
    (d,) = [d for d in open_dispatches([shared_path("captures", *parts[:2])]) if d.kernel == parts[2]]
    return d


def test_hand_checked_cdna_gfx950():
    d = _dispatch("gfx950", "gemm_run0", "r_32_32_16_2")
    s = kernel_summary(d)
    r = s.resources
    assert (r.vgpr, r.sgpr, r.lds_bytes, r.wave_size, r.workgroup_size) == (17, 16, 64, 64, 16)
    th = s.theoretical
    # gfx950: 4 SIMDs per CU, 8 wave slots per SIMD, 512 VGPRs per SIMD in blocks of 8, 160 KiB LDS per CU.
    # VGPR:      17 -> 24 (blocks of 8); 512 // 24 = 21 -> capped at 8 slots           = 8
    # SGPR:      16 <= 80 -> 10 waves (LLVM's gfx9 steps), capped                        = 8
    # workgroup: 16 work-items = 1 wave64, no barrier; 4 x 8 slots = 32 WGs, 32 / 4     = 8
    # LDS:       163840 // 64 = 2560 workgroups of 1 wave, / 4 SIMDs = 640, capped     = 8
    # -> 8 waves/SIMD at the wave-slot limit, 8 x 4 = 32 per CU
    assert th.limits == {"VGPR": 8, "SGPR": 8, "LDS": 8, "workgroup": 8, "wave slots": 8}
    assert (th.waves_per_simd, th.waves_per_unit, th.unit, th.limited_by) == (8, 32, "CU", "wave slots")
    assert s.achieved.peak <= th.waves_per_simd


def test_hand_checked_rdna3_gfx1100():
    d = _dispatch("gfx1100", "gemm_run0", "r_32_32_16_2")
    s = kernel_summary(d)
    r = s.resources
    assert (r.vgpr, r.lds_bytes, r.wave_size, r.workgroup_size, r.wgp_mode) == (10, 64, 32, 16, False)
    th = s.theoretical
    # gfx1100, kernel built for CU mode: 2 SIMDs, 16 slots each, 1536 wave32 VGPRs per SIMD in blocks of 24,
    # 64 KiB LDS per CU; SGPRs do not limit gfx10+.
    # VGPR:      10 -> 24; 1536 // 24 = 64 -> capped                                     = 16
    # workgroup: 16 work-items = 1 wave32; 2 x 16 slots = 32 WGs, 32 / 2                = 16
    # LDS:       65536 // 64 = 1024 workgroups, / 2 SIMDs = 512, capped                 = 16
    # -> 16 waves/SIMD, 32 per CU
    assert th.limits == {"VGPR": 16, "LDS": 16, "workgroup": 16, "wave slots": 16}
    assert (th.waves_per_simd, th.waves_per_unit, th.unit, th.limited_by) == (16, 32, "CU", "wave slots")
    # achieved: 1024 waves over 192 SIMDs (all 48 WGPs) = 5.3 each at most
    a = s.achieved
    assert (a.waves, a.simds, a.units) == (1024, 192, 48) and 4.5 < a.mean < 5.34 and a.peak == 6


def test_hand_checked_rdna4_vgpr_limited():
    """gfx1201, tinygrad's hand-written kernel: a minimal container, resources from its descriptor only."""
    d = _dispatch("gfx1200", "handwritten_run0", "custom_handwritten")
    s = kernel_summary(d)
    r = s.resources
    assert d.arch == "gfx1201" and r.source == "kernel descriptor"
    # compute_pgm_rsrc1 0x400c001b: 0x1b + 1 = 28 blocks of 8 wave32 VGPRs = 224 (rounded up); bit 29 clear: CU mode
    assert (r.vgpr, r.wave_size, r.wgp_mode, r.lds_bytes, r.sgpr) == (224, 32, False, 512, None)
    th = s.theoretical
    # VGPR: 224 -> 240 (blocks of 24); 1536 // 240 = 6.4 -> 6 waves/SIMD; no workgroup size in a minimal
    # container, so no workgroup or LDS limit: 6, VGPR-limited, 12 per CU
    assert (th.waves_per_simd, th.waves_per_unit, th.limited_by) == (6, 12, "VGPR")
    assert th.limits == {"VGPR": 6, "wave slots": 16}
    assert any("workgroup size unknown" in n for n in th.notes)
    assert s.achieved.peak <= 6


def test_hand_checked_synthetic_limits():
    # gfx90a, 42 arch VGPRs + 84 AGPRs: unified count align(42, 4) + 84 = 128; 256 work-items (4 waves),
    # 32 KiB LDS, 90 SGPRs.
    # VGPR 512 // 128 = 4; SGPR 90 <= 100 -> 8; LDS 65536 // 32768 = 2 WGs x 4 waves / 4 SIMDs = 2;
    # workgroup min(4 x 8 // 4 = 8, 16 barriers) x 4 / 4 = 8  ->  2, LDS-limited, 8 per CU
    res = KernelResources("k", vgpr=128, agpr=84, sgpr=90, lds_bytes=32768, wave_size=64, workgroup_size=256)
    th = theoretical_occupancy(res, target("gfx90a"))
    assert th.limits == {"VGPR": 4, "SGPR": 8, "LDS": 2, "workgroup": 8, "wave slots": 8}
    assert (th.waves_per_simd, th.waves_per_unit, th.limited_by) == (2, 8, "LDS")
    # gfx908 keeps AGPRs in their own file: the larger of the two counts limits, named AGPR
    th = theoretical_occupancy(KernelResources("k", vgpr=40, agpr=130, sgpr=102, wave_size=64), target("gfx908"))
    assert (th.limits["AGPR"], th.limits["SGPR"], th.waves_per_simd, th.limited_by) == (1, 7, 1, "AGPR")
    # gfx1100 in WGP mode: 4 SIMDs and 128 KiB; 256 wave32 work-items = 8 waves, 48 KiB LDS:
    # 131072 // 49152 = 2 WGs x 8 = 16 waves / 4 SIMDs = 4, LDS-limited, 16 per WGP;
    # VGPR 32 -> 48: 1536 // 48 = 32 -> 16
    res = KernelResources("k", vgpr=32, lds_bytes=49152, wave_size=32, workgroup_size=256, wgp_mode=True)
    th = theoretical_occupancy(res, target("gfx1100"))
    assert (th.waves_per_simd, th.waves_per_unit, th.unit, th.limited_by) == (4, 16, "WGP", "LDS")
    # the same kernel in wave64: 768 VGPRs in blocks of 12: 32 -> 36, 768 // 36 = 21 -> 16; 4 waves per WG
    res.wave_size = 64
    assert theoretical_occupancy(res, target("gfx1100")).limits["LDS"] == 2


def test_unknown_figures_say_so():
    th = theoretical_occupancy(KernelResources("k", vgpr=64), target("gfx9"))
    assert th.waves_per_simd is None and "chip is not known" in th.notes[0]
    th = theoretical_occupancy(KernelResources("k", vgpr=64), target("gfx1250"))
    assert th.waves_per_simd is None and "gfx1250" in th.notes[0]
    th = theoretical_occupancy(KernelResources("k", lds_bytes=1 << 20, workgroup_size=64), target("gfx1100"))
    assert "LDS" not in th.limits and any("more than a workgroup may have" in n for n in th.notes)


def _occ(rows):
    a = np.zeros(len(rows), OCCUPANCY_DTYPE)
    for i, (se, cu, simd, slot, start, time) in enumerate(rows):
        a[i] = (se, cu, simd, slot, start, time, 0x1000)
    return a


def test_achieved_time_weighted():
    rows = [
        # SE 0, window 0..100. SIMD 0: one wave all the time, a second from 50: mean 1.5, peak 2
        (0, 0, 0, 0, 1, 0),
        (0, 0, 0, 0, 0, 100),
        (0, 0, 0, 1, 1, 50),
        (0, 0, 0, 1, 0, 100),
        # SIMD 1 of the same CU: one wave for 0..10, then idle: 0.1
        (0, 0, 1, 0, 1, 0),
        (0, 0, 1, 0, 0, 10),
        # SE 1 has its own clock: window 5000..5100. CU 3 SIMD 0: a wave that ended at 5040 with no start
        # recorded (resident from the window start): 0.4; another wave 5000..5100 on SIMD 2: 1.0
        (1, 3, 0, 0, 0, 5040),
        (1, 3, 2, 0, 1, 5000),
        (1, 3, 2, 0, 0, 5100),
    ]
    a = achieved_occupancy(_occ(rows))
    assert a.simds == 4 and a.units == 2 and a.waves == 4 and a.peak == 2 and a.cycles == 100
    assert a.mean == pytest.approx((1.5 + 0.1 + 0.4 + 1.0) / 4)
    assert a.mean_per_unit == pytest.approx(((1.5 + 0.1) + (0.4 + 1.0)) / 2)
    # SIMD-time at each count: 0 -> 90 + 60, 1 -> 50 + 10 + 40 + 100, 2 -> 50 (of 400)
    assert a.histogram == [(0, pytest.approx(150 / 400)), (1, pytest.approx(200 / 400)), (2, pytest.approx(50 / 400))]
    assert any("without a recorded start" in n for n in a.notes)
    assert achieved_occupancy(np.zeros(0, OCCUPANCY_DTYPE)) is None


@pytest.mark.parametrize("folders,least", capture_sets(5, "gfx*/*_run0", step=2))
def test_achieved_in_small_steps_equals_one_step(monkeypatch, folders, least):
    """Worked through a few SIMDs at a time (a big blob's millions of rows), every figure is the same, to the
    last bit: the SIMDs of all of each capture's dispatches in steps of 1 and 5 rows (whole SIMDs)."""
    from attdec.analysis import occupancy

    checked = 0
    for folder in folders:
        for d in attdec.open(folder, jobs=1):
            whole = achieved_occupancy(d.occupancy)
            for chunk in (1, 5):
                monkeypatch.setattr(occupancy, "ACHIEVED_CHUNK", chunk)
                assert achieved_occupancy(d.occupancy) == whole
            monkeypatch.undo()
            checked += whole is not None and whole.simds > 1
    assert checked >= least


@pytest.mark.parametrize("folders,least", capture_sets(30, "gfx*/*_run0"))
def test_achieved_never_exceeds_theoretical(folders, least):
    checked = 0
    for folder in folders:
        for d in open_dispatches([folder]):
            s = kernel_summary(d)
            if s.achieved is None or s.theoretical is None:
                continue
            assert s.achieved.peak <= s.theoretical.waves_per_simd, d.name
            assert 0 < s.achieved.mean <= s.achieved.peak
            assert s.achieved.waves == int(d.occupancy["start"].sum())
            checked += 1
    assert checked >= least


def test_ui_output_bounds_from_the_listing():
    root = shared_path("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "mla_decode")
    (d,) = open_dispatches([root])
    s = kernel_summary(d)
    r = s.resources
    assert r.source == "listing (lower bounds)" and r.vgpr >= 252 and r.wave_size == 64
    assert s.theoretical is None and s.candidates  # gfx9, chip unknown: one figure per possible chip
    assert all(t.bound == "at most" for t in s.candidates.values())
    best = max(t.waves_per_simd for t in s.candidates.values())
    assert s.achieved.peak <= best  # an upper bound the trace must respect
