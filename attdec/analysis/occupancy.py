"""Occupancy: how many waves a SIMD can hold with a kernel's resources (theoretical), and how many it
held while the kernel ran (achieved, from the trace's wave start/end records).

Theoretical follows LLVM's AMDGPU backend (what the compiler prints as "; Occupancy"): each resource
gives a wave count per SIMD and the smallest wins; the arithmetic and its sources are in
docs/occupancy.md, and tests/fixtures/occupancy_llvm.json holds llc-22's answers it is checked against.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from attdec.model import KernelResources, Target
from attdec.model.record import Record, field

if TYPE_CHECKING:  # numpy is imported by the functions that take arrays: theoretical occupancy needs none
    import numpy as np

# resource names, in the order a tie is reported
VGPR, AGPR, SGPR, LDS, WORKGROUP, SLOTS = "VGPR", "AGPR", "SGPR", "LDS", "workgroup", "wave slots"


class Theoretical(Record):
    """Waves per SIMD the kernel's resources allow (None when they cannot be worked out)."""

    waves_per_simd: int | None
    waves_per_unit: int | None = None  # per CU (gfx9, gfx10+ CU mode) or per WGP (gfx10+ WGP mode)
    unit: str = "CU"
    simds_per_unit: int | None = None
    limited_by: str | None = None  # "VGPR", "LDS+workgroup", "wave slots" (nothing below the hardware limit)
    limits: dict[str, int] = field(default_factory=dict)  # waves per SIMD each resource allows
    bound: str = "exact"  # "exact", or "at most" when the resources are lower bounds (inferred)
    notes: list[str] = field(default_factory=list)


def _limited_by(limits: dict[str, int], waves: int, slots: int) -> str:
    if waves >= slots:
        return SLOTS
    return "+".join(name for name in limits if name != SLOTS and limits[name] == waves)


def theoretical_occupancy(res: KernelResources, tgt: Target, bound: str = "exact") -> Theoretical:
    """Waves per SIMD and per CU/WGP, each resource's limit, and which one binds (LLVM's model)."""
    cu = tgt.cu
    if cu is None:
        why = "the chip is not known" if not tgt.chip_known else f"attdec has no occupancy figures for {tgt.name}"
        return Theoretical(None, bound=bound, notes=[f"theoretical occupancy unknown: {why}"])
    notes = []
    wave = res.wave_size or tgt.wave_size
    if wave not in (size for size, _, _ in cu.vgpr_files):  # e.g. a wave32 kernel read with --arch gfx942
        why = f"theoretical occupancy unknown: wave{wave} kernels do not run on {tgt.name}"
        return Theoretical(None, bound=bound, notes=[why])
    if res.wave_size is None:
        notes.append(f"wave size not given: wave{wave} assumed")
    wgp = cu.cus_per_wgp > 1 and res.wgp_mode is not False
    if cu.cus_per_wgp > 1 and res.wgp_mode is None:
        notes.append("CU/WGP mode not given: WGP mode (the compiler's default) assumed")
    per = cu.cus_per_wgp if wgp else 1
    simds, unit = cu.simds * per, "WGP" if wgp else "CU"
    slots = cu.wave_slots
    limits: dict[str, int] = {}

    if res.vgpr is not None:
        regs, name = res.vgpr, VGPR
        if not cu.unified_agprs and res.agpr is not None and res.agpr > regs:  # gfx908: own AGPR file, same size
            regs, name = res.agpr, AGPR
        total, granule = cu.vgpr_file(wave)
        limits[name] = min(max(total // (-(-max(regs, 1) // granule) * granule), 1), slots)  # integer ceil: any size
    else:
        notes.append("VGPR count unknown: VGPR limit not applied")
    if cu.sgpr_waves:
        if res.sgpr is not None:
            limits[SGPR] = min(next((w for n, w in cu.sgpr_waves if res.sgpr <= n), cu.sgpr_waves[-1][1]), slots)
        else:
            notes.append("SGPR count unknown: SGPR limit not applied")

    lds_per_unit = cu.lds * per
    lds = res.lds_bytes
    if lds is None:
        notes.append("LDS size unknown: LDS limit not applied")
    elif lds > cu.lds:
        notes.append(
            f"LDS {lds} B is more than a workgroup may have ({cu.lds} B): not what the hardware "
            "allocated; LDS limit not applied"
        )
        lds = None
    wg_fit = None  # whole workgroups a CU/WGP holds
    if res.workgroup_size:
        waves_per_wg = math.ceil(res.workgroup_size / wave)
        if not res.workgroup_size_exact:
            notes.append(f"workgroup size taken as its maximum, {res.workgroup_size}")
        wg_fit = simds * slots // waves_per_wg  # whole workgroups that fit the wave slots
        if waves_per_wg > 1:
            wg_fit = min(wg_fit, cu.workgroups * per)  # barrier slots
        limits[WORKGROUP] = min(max(math.ceil(wg_fit * waves_per_wg / simds), 1), slots)
        if lds:
            lds_wgs = lds_per_unit // lds
            limits[LDS] = min(max(math.ceil(lds_wgs * waves_per_wg / simds), 1), slots)
            wg_fit = min(wg_fit, lds_wgs)
    else:
        notes.append("workgroup size unknown: workgroup and LDS limits not applied")
        if lds:
            notes.append(f"LDS lets {lds_per_unit // lds} workgroups share a {unit}")

    waves = min([slots, *limits.values()])
    per_unit = waves * simds
    if wg_fit is not None:  # whole workgroups: fewer waves than the SIMDs could hold when they do not divide
        per_unit = min(per_unit, wg_fit * waves_per_wg)
    ordered = {k: limits[k] for k in (VGPR, AGPR, SGPR, LDS, WORKGROUP) if k in limits}
    return Theoretical(
        waves,
        per_unit,
        unit,
        simds,
        _limited_by(ordered, waves, slots),
        {**ordered, SLOTS: slots},
        bound,
        notes,
    )


class Achieved(Record):
    """Waves resident per SIMD over the kernel's time, from wave start/end records."""

    mean: float  # time-weighted, averaged over the SIMDs that ran at least one wave
    peak: int
    histogram: list[tuple[int, float]]  # (resident waves, share of SIMD-time), over those SIMDs
    simds: int  # SIMDs that ran waves
    units: int  # CUs (gfx9) / WGPs (gfx10+) that ran waves
    mean_per_unit: float  # resident waves per CU/WGP (sum over its SIMDs), averaged over those units
    waves: int  # waves started
    cycles: int  # the longest shader engine's window, first record to last
    notes: list[str] = field(default_factory=list)
    # The most waves a SIMD of the GPU holds, set when the peak is above it: the figures then measure damaged or
    # repeated start/end records, not the GPU, and are shown flagged as such (None: within the limit, or unknown).
    over_limit: int | None = None


# Rows per step of `achieved_occupancy` (whole SIMDs): its temporaries follow this, not the records (14 million
# rows of a 1 GB gfx9 blob would otherwise take ~160 bytes each).
ACHIEVED_CHUNK = 1 << 20


def achieved_occupancy(occ: np.ndarray) -> Achieved | None:
    """Time-weighted resident waves per SIMD over each shader engine's window (its first to last record:
    SE clocks are not aligned). A wave that ends without a start was resident from the window's start,
    one that never ends until its end. None without records. The SIMDs are worked through a few at a time
    (`ACHIEVED_CHUNK` rows): the figures do not depend on it (sums of whole cycles, per SIMD in order)."""
    if not len(occ):
        return None
    import numpy as np

    from attdec.model.totals import distinct

    ses = distinct(occ["se"]).astype(np.int64)
    times = [occ["time"]] if len(ses) == 1 else [occ["time"][occ["se"] == s] for s in ses.tolist()]
    t0 = np.array([t.min() for t in times], np.int64)
    t1 = np.array([t.max() for t in times], np.int64)
    del times
    all_keys = simd_key_of(occ)
    simd_keys = distinct(all_keys)
    step = max(1, len(simd_keys) * ACHIEVED_CHUNK // len(occ))  # SIMDs per step
    hists, busy_parts, carried_parts, heads = [], [], [], []
    peak = 0
    for g in range(0, len(simd_keys), step):
        lo, hi = simd_keys[g], simd_keys[min(g + step, len(simd_keys)) - 1]
        rows = occ[np.flatnonzero((all_keys >= lo) & (all_keys <= hi))]
        rows = rows[np.lexsort((rows["start"], rows["time"], simd_key_of(rows)))]  # per SIMD, in time; an end
        # before a start at the same time (stable: as one sort of all rows would order them)
        key = simd_key_of(rows)
        t = rows["time"].astype(np.int64)
        delta = 2 * rows["start"].astype(np.int64) - 1
        se_idx = np.searchsorted(ses, rows["se"].astype(np.int64))
        first = np.r_[True, key[1:] != key[:-1]]
        group = np.cumsum(first) - 1
        starts_at = np.flatnonzero(first)
        level = np.cumsum(delta)
        level -= np.r_[0, level[starts_at[1:] - 1]][group]  # running count within the SIMD
        lowest = np.minimum.reduceat(level, starts_at)
        carried = np.maximum(0, -lowest)  # waves already resident when the window opened
        level += carried[group]
        last = np.r_[first[1:], True]
        nxt = np.r_[t[1:], 0]
        dur = np.where(last, t1[se_idx] - t, nxt - t)
        head = t[starts_at] - t0[se_idx[starts_at]]  # from the window's start to the SIMD's first record
        peak = max(peak, int(level.max()), int(carried.max()))
        hists.append((np.bincount(level, weights=dur), np.bincount(carried, weights=head)))
        busy_parts.append(np.bincount(group, weights=level * dur) + carried * head)
        carried_parts.append(carried)
        heads.append(se_idx[starts_at])
    del all_keys
    hist = np.zeros(peak + 1)
    for by_level, by_carried in hists:
        hist[: len(by_level)] += by_level
        hist[: len(by_carried)] += by_carried
    busy = np.concatenate(busy_parts)
    carried = np.concatenate(carried_parts)
    window = (t1 - t0)[np.concatenate(heads)]
    notes = []
    if (window <= 0).any():
        notes.append("a shader engine's records all share one timestamp: its SIMDs are left out of the mean")
    ok = window > 0
    per_simd = busy[ok] / window[ok]
    unit_key = simd_keys[ok] >> 8
    units, unit_idx = np.unique(unit_key, return_inverse=True)
    per_unit = np.bincount(unit_idx, weights=per_simd)
    total = hist.sum()
    if (carried > 0).any():
        notes.append(f"{int(carried.sum())} wave(s) ended without a recorded start: counted from the window start")
    return Achieved(
        mean=float(per_simd.mean()) if len(per_simd) else 0.0,
        peak=peak,
        histogram=[(i, float(v / total)) for i, v in enumerate(hist) if v] if total else [],
        simds=len(simd_keys),
        units=len(units),
        mean_per_unit=float(per_unit.mean()) if len(per_unit) else 0.0,
        waves=int(occ["start"].sum()),
        cycles=int((t1 - t0).max()),
        notes=notes,
    )


def simd_key_of(occ: np.ndarray) -> np.ndarray:
    """(se << 40) | (cu << 8) | simd of each occupancy row: one number per SIMD."""
    import numpy as np

    key = occ["se"].astype(np.int64)
    key <<= 40
    cu = occ["cu"].astype(np.int64)
    cu <<= 8
    key |= cu
    del cu
    key |= occ["simd"]
    return key


class Resident(Record):
    """Resident waves of one shader engine over time: `count[i]` holds from `time[i]` until `time[i + 1]`."""

    se: int
    time: np.ndarray
    count: np.ndarray  # float when resampled (mean over each cell)
    resolution: int = 1  # cycles per cell; 1 = every change kept

    @property
    def peak(self) -> float:
        return float(self.count.max()) if len(self.count) else 0.0


def resident_waves(occ: np.ndarray) -> list[Resident]:
    """Step function of resident waves per SE, one point per time the count changes (what a timeline draws).

    As in `achieved_occupancy`, a SIMD whose count would go negative had that many waves resident when the
    SE's window opened: they are counted from its first record.
    """
    import numpy as np

    from attdec.model.totals import distinct

    out = []
    for se in distinct(occ["se"]).tolist():
        rows = occ[occ["se"] == se]
        simd = (rows["cu"].astype(np.int64) << 8) | rows["simd"].astype(np.int64)
        order = np.lexsort((rows["start"], rows["time"], simd))
        delta = np.where(rows["start"][order] != 0, 1, -1)
        key = simd[order]
        first = np.r_[True, key[1:] != key[:-1]]
        starts = np.flatnonzero(first)
        level = np.cumsum(delta)
        level -= np.r_[0, level[starts[1:] - 1]][np.cumsum(first) - 1]
        carried = int(np.maximum(0, -np.minimum.reduceat(level, starts)).sum())
        times, inv = np.unique(rows["time"], return_inverse=True)
        count = carried + np.cumsum(np.bincount(inv, weights=np.where(rows["start"] != 0, 1, -1)).astype(np.int64))
        out.append(Resident(int(se), times.astype(np.int64), count))
    return out


def resample(o: Resident, t0: int, t1: int, cells: int) -> Resident:
    """The mean count over each of `cells` equal cells of [t0, t1) (when the step has more points than that)."""
    if len(o.time) <= cells or t1 <= t0:
        return o
    import numpy as np

    q = max(1, -(-(t1 - t0) // cells))
    edges = np.arange(t0, t1 + q, q, dtype=np.int64)
    # Area under the step function up to each change point, then at each edge by linear interpolation.
    area = np.concatenate([[0.0], np.cumsum(o.count[:-1] * np.diff(o.time), dtype=np.float64)])
    at_edges = np.interp(edges, o.time, area, left=0.0)
    after = edges > o.time[-1]  # past the last change the count stays at its last value
    at_edges[after] = area[-1] + o.count[-1] * (edges[after] - o.time[-1])
    return Resident(o.se, edges[:-1], np.diff(at_edges) / q, q)
