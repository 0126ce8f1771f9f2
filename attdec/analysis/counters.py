"""Performance counters of a dispatch: per-counter totals, per shader engine, per CU/WGP, per block
instance, and over time.

Works on `Dispatch.counters`, a list of `CounterSamples` whatever their source: tinygrad's PMC buffers
(one whole-dispatch value per counter instance, so "over time" is across dispatches) and the SQTT
PERFEVENT records of raw traces (samples with a `time`: a per-dispatch time series). A
counter that two sources both give is kept apart by source, never summed.
"""

from __future__ import annotations

import numpy as np

from attdec.model import Dispatch
from attdec.model.record import Record, field


class CounterRow(Record):
    name: str
    block: str
    source: str
    total: int
    instances: int  # locations the counter was read at (per time step for time-resolved sources)
    min: int  # per location
    max: int
    per_se: list[tuple[int, int, int]] = field(default_factory=list)  # (xcc, se, value)
    per_cu: list[tuple[int, int, int, int, int]] = field(default_factory=list)  # (xcc, se, sa, cu, value)
    per_instance: list[tuple[int, int, int]] = field(default_factory=list)  # (xcc, instance, value)
    series: list[tuple[int, int]] = field(default_factory=list)  # (time, value summed over locations)


class CounterReport(Record):
    dispatch: str
    kernel: str
    arch: str
    rows: list[CounterRow]
    sources: list[str]
    time_resolved: bool
    notes: list[str] = field(default_factory=list)
    unit: str = "CU"  # what the `cu` column numbers (Target.traced_unit)


def _grouped(a: np.ndarray, cols: tuple[str, ...]) -> list[tuple]:
    """Sum `value` per distinct combination of `cols` (rows where any col is -1 left out), exactly."""
    keep = np.ones(len(a), bool)
    for c in cols:
        keep &= a[c] >= 0
    a = a[keep]
    if not len(a):
        return []
    keys, inv = np.unique(np.stack([a[c].astype(np.int64) for c in cols], axis=1), axis=0, return_inverse=True)
    sums = np.zeros(len(keys), np.uint64)
    np.add.at(sums, inv.reshape(-1), a["value"])
    return [(*map(int, k), int(v)) for k, v in zip(keys, sums)]


def counter_report(d: Dispatch) -> CounterReport:
    """Every counter of one dispatch, by source, in the order the source lists them."""
    rows, notes = [], []
    time_resolved = False
    for cs in d.counters:
        notes += [f"{cs.source}: {p}" for p in cs.problems]
        for i, (name, block) in enumerate(zip(cs.names, cs.blocks)):
            a = cs.samples[cs.samples["counter"] == i]
            timed = a[a["time"] >= 0]
            time_resolved |= len(timed) > 0
            values = a["value"]
            locations = np.stack([a[c].astype(np.int64) for c in ("xcc", "se", "sa", "cu", "inst")], axis=1)
            if len(timed) == 0 and len(a) >= 4 and values[0] and (values == values[0]).all():
                notes.append(
                    f"{name}: the same value at all {len(a)} locations - probably one counter read {len(a)} "
                    "times, which its total counts that often"
                )
            rows.append(
                CounterRow(
                    name=name,
                    block=block,
                    source=cs.source,
                    total=int(values.sum(dtype=np.uint64)),
                    instances=len(np.unique(locations, axis=0)) if len(a) else 0,
                    min=int(values.min()) if len(a) else 0,
                    max=int(values.max()) if len(a) else 0,
                    per_se=_grouped(a, ("xcc", "se")),
                    per_cu=_grouped(a, ("xcc", "se", "sa", "cu")),
                    per_instance=_grouped(a, ("xcc", "inst")),
                    series=[(t, v) for t, v in _grouped(timed, ("time",))],
                )
            )
    if not d.counters:
        notes.append(
            "no counter samples: they come from tinygrad PMC captures (PMC=1), or SQTT PERFEVENT "
            "records in raw traces captured with rocprofv3 --att-perfcounters"
        )
    elif not time_resolved:
        notes.append("one value per counter instance for the whole dispatch (no time resolution)")
    sources = [cs.source for cs in d.counters]
    return CounterReport(d.name, d.kernel, d.arch, rows, sources, time_resolved, notes, d.target.traced_unit)


def counters_across(reports: list[CounterReport]) -> dict[tuple[str, str], list[tuple[str, int]]]:
    """(source, counter) -> [(dispatch, total)] in input order: the counters over time when each
    dispatch is one sample (tinygrad PMC)."""
    out: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for r in reports:
        for row in r.rows:
            out.setdefault((row.source, row.name), []).append((r.dispatch, row.total))
    return out
