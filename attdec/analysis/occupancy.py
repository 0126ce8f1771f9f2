"""Occupancy over time: how many waves were resident, per shader engine, from the wave start/end events.

`Dispatch.occupancy` holds one row per wave start or end of every wave (traced or not). The live
count is their running sum. A wave already resident when tracing began shows up only as an end, so
a count that would go negative is lifted by that many waves (they were there from the start).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Occupancy:
    """Resident waves of one shader engine: `count[i]` holds from `time[i]` until `time[i + 1]`."""

    se: int
    time: np.ndarray
    count: np.ndarray  # float when resampled (mean over each cell)
    resolution: int = 1  # cycles per cell; 1 = every change kept

    @property
    def peak(self) -> float:
        return float(self.count.max()) if len(self.count) else 0.0


def live_waves(occ: np.ndarray) -> list[Occupancy]:
    """Step function of resident waves per SE (exact: one point per time at which the count changes)."""
    out = []
    for se in np.unique(occ["se"]).tolist():
        rows = occ[occ["se"] == se]
        delta = np.where(rows["start"] != 0, 1, -1)
        times, inv = np.unique(rows["time"], return_inverse=True)
        count = np.cumsum(np.bincount(inv, weights=delta).astype(np.int64))
        if len(count) and count.min() < 0:
            count -= count.min()
        out.append(Occupancy(int(se), times.astype(np.int64), count))
    return out


def resample(o: Occupancy, t0: int, t1: int, cells: int) -> Occupancy:
    """The mean count over each of `cells` equal cells of [t0, t1) (when the step has more points than that)."""
    if len(o.time) <= cells or t1 <= t0:
        return o
    q = max(1, -(-(t1 - t0) // cells))
    edges = np.arange(t0, t1 + q, q, dtype=np.int64)
    # Area under the step function up to each change point, then at each edge by linear interpolation.
    widths = np.diff(o.time)
    area = np.concatenate([[0.0], np.cumsum(o.count[:-1] * widths, dtype=np.float64)])
    at_edges = np.interp(edges, o.time, area, left=0.0)
    after = edges > o.time[-1]  # past the last change the count stays at its last value
    at_edges[after] = area[-1] + o.count[-1] * (edges[after] - o.time[-1])
    return Occupancy(o.se, edges[:-1], np.diff(at_edges) / q, q)
