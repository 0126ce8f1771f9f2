"""Shader cycles -> real time, from a dispatch's realtime samples (pairs of shader clock, reference clock).

Each shader engine counts its own cycles (SE clocks are not aligned), so the mapping is per SE:
piecewise linear through that SE's samples, extended past the first and last sample at the average
rate. SEs without samples use the dispatch's flat `realtime` list (the lowest SE's).
"""

from __future__ import annotations

import numpy as np

from attdec.model import REALTIME_HZ, Dispatch


def _clean(samples) -> np.ndarray | None:
    """Samples as float64 [n, 2], sorted by shader clock, with both clocks strictly increasing; None if < 2."""
    a = np.asarray(samples, np.float64).reshape(-1, 2)
    a = a[np.argsort(a[:, 0], kind="stable")]
    if len(a) >= 2 and (np.diff(a[:, 0]) > 0).all() and (np.diff(a[:, 1]) > 0).all():
        return a  # the usual case: the walk below would keep every sample
    keep = [0] if len(a) else []
    for i in range(1, len(a)):
        if a[i, 0] > a[keep[-1], 0] and a[i, 1] > a[keep[-1], 1]:
            keep.append(i)
    return a[keep] if len(keep) >= 2 else None


class Clock:
    """Per-SE mapping of shader cycles to seconds of the reference clock (as the reference clock reads them)."""

    def __init__(self, dispatch: Dispatch, hz: int | None = None):
        self.hz = hz or dispatch.rt_frequency or REALTIME_HZ  # the trace's RT_FREQUENCY when it says
        per_se = {se: _clean(s) for se, s in dispatch.realtime_se.items()}
        self.samples = {se: a for se, a in per_se.items() if a is not None}
        self.default = _clean(dispatch.realtime) if dispatch.realtime else None
        if self.default is None and self.samples:
            self.default = self.samples[min(self.samples)]

    def __bool__(self) -> bool:
        return self.default is not None

    def _of(self, se: int) -> np.ndarray:
        a = self.samples.get(se, self.default)
        if a is None:
            raise ValueError("no realtime samples")
        return a

    def seconds(self, se: int, cycles) -> np.ndarray:
        """Reference-clock seconds at shader clock `cycles` of shader engine `se`."""
        a = self._of(se)
        c = np.asarray(cycles, np.float64)
        rate = (a[-1, 1] - a[0, 1]) / (a[-1, 0] - a[0, 0])  # reference ticks per cycle
        ticks = np.interp(c, a[:, 0], a[:, 1])
        ticks = np.where(c < a[0, 0], a[0, 1] + (c - a[0, 0]) * rate, ticks)
        ticks = np.where(c > a[-1, 0], a[-1, 1] + (c - a[-1, 0]) * rate, ticks)
        return ticks / self.hz

    def ghz(self, se: int | None = None) -> float:
        """Average shader clock (GHz) over the samples of `se` (default: the dispatch's own list)."""
        a = self._of(-1 if se is None else se)  # -1: no such SE, so the default samples
        return float((a[-1, 0] - a[0, 0]) / ((a[-1, 1] - a[0, 1]) / self.hz) / 1e9)
