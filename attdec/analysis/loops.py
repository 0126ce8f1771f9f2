"""Loop iterations per wave: how many, how long, first iteration versus steady state, outliers.

An iteration of a loop starts at an execution of the header block's first traced instruction and ends
at the next record that is either another start (the back edge was taken) or outside the loop body
(the loop was left), or at the wave's end. Each start is paired with the boundary that follows it,
independently of every other start, so a missing or extra back-edge record (a branch the trace dropped
or repeated) changes at most the iteration it falls in instead of shifting every later one. An
iteration whose previous record is outside the body (or that opens the wave) is the first of a "trip"
through the loop; inner loops have one trip per outer iteration.

Per wave: iterations, trips, the first iterations' cycles, the steady state (every other iteration):
median, p95, mean, and outliers, the steady iterations further than 3 MADs (median absolute
deviation, unscaled, at least 1% of the median) from the steady median. Whole-array numpy over all waves at once.
"""

from __future__ import annotations

import numpy as np

from attdec.analysis.cfg import UNEVEN, Cfg, Loop, build_cfgs
from attdec.analysis.stream import Stream, group_quantiles, line_table, stream_of
from attdec.isa.categories import mnemonic_of
from attdec.model import CodeLine, Dispatch, Wave
from attdec.model.record import Record, field
from attdec.model.totals import distinct

MADS = 3.0
MAD_FLOOR = 0.01  # a MAD below 1% of the median counts as 1%: a regular loop's one-cycle jitter is no outlier


class WaveLoop(Record):
    """One wave's iterations of one loop."""

    wave: Wave
    cycles: np.ndarray  # per iteration, in time order
    first: np.ndarray  # bool per iteration: first of its trip
    back: np.ndarray  # bool per iteration: ended by taking the back edge (else by leaving the loop or the wave)
    outlier: np.ndarray  # bool per iteration: a steady iteration beyond MADS MADs of the steady median
    start: np.ndarray | None = None  # per iteration: its first record, as an index into the wave's `insts`

    @property
    def iterations(self) -> int:
        return len(self.cycles)

    @property
    def trips(self) -> int:
        return int(self.first.sum())

    def steady(self) -> np.ndarray:
        return self.cycles[~self.first]


class LoopTiming(Record):
    """One loop of one kernel with its iterations in every wave that ran it."""

    cfg: Cfg
    loop: Loop
    header: CodeLine  # the instruction whose executions start iterations
    waves: list[WaveLoop] = field(default_factory=list)
    main: bool = False  # the outermost loop with the most cycles in its kernel

    @property
    def iterations(self) -> int:
        return sum(w.iterations for w in self.waves)

    @property
    def cycles(self) -> int:
        return int(sum(int(w.cycles.sum()) for w in self.waves))

    def summary(self) -> dict:
        """Over all waves: iterations per wave, first iteration and steady-state cycles, outliers."""
        per_wave = np.array([w.iterations for w in self.waves]) if self.waves else np.zeros(0)
        first = np.concatenate([w.cycles[w.first] for w in self.waves]) if self.waves else np.zeros(0)
        steady = np.concatenate([w.steady() for w in self.waves]) if self.waves else np.zeros(0)

        def q(a, p):
            return float(np.percentile(a, p)) if len(a) else None

        return {
            "waves": len(self.waves),
            "iterations": int(per_wave.sum()),
            "iterations_per_wave": {"min": q(per_wave, 0), "p50": q(per_wave, 50), "max": q(per_wave, 100)},
            "trips": int(sum(w.trips for w in self.waves)),
            "first": {"p50": q(first, 50), "mean": float(first.mean()) if len(first) else None},
            "steady": {
                "p50": q(steady, 50),
                "p95": q(steady, 95),
                "mean": float(steady.mean()) if len(steady) else None,
            },
            "outliers": int(sum(int(w.outlier.sum()) for w in self.waves)),
            "cycles": self.cycles,
        }


def header_line(cfg: Cfg, loop: Loop) -> CodeLine:
    """First instruction of the loop header that the trace records once per execution."""
    lines = cfg.blocks[loop.header].lines
    return next((c for c in lines if not mnemonic_of(c.text).startswith(UNEVEN)), lines[0])


def _iterations(st: Stream, start_line: int, in_body: np.ndarray):
    """(start record, end record or -1 for the wave's end, cycles, first, back) of every iteration."""
    is_start = st.lines == start_line
    starts = np.flatnonzero(is_start)
    if not len(starts):
        z = np.zeros(0, np.int64)
        return z, z, z, np.zeros(0, bool), np.zeros(0, bool)
    bounds = np.flatnonzero(is_start | ~in_body)
    k = np.searchsorted(bounds, starts, side="right")
    nxt = np.where(k < len(bounds), bounds[np.minimum(k, len(bounds) - 1)], len(st))
    wave_end = st.starts[st.wave[starts] + 1]
    inside = nxt < wave_end
    end = np.where(inside, nxt, wave_end - 1)
    t = st.col("time")
    t_end = np.where(inside, t[end], t[end] + st.col("duration")[end])
    cycles = (t_end - t[starts]).astype(np.int64)
    wave_start = st.starts[st.wave[starts]]
    prev = np.maximum(starts - 1, 0)
    first = (starts == wave_start) | ~in_body[prev]
    back = inside & is_start[np.minimum(nxt, len(st) - 1)]
    return starts, np.where(inside, end, -1), cycles, first, back


def _outliers(cycles: np.ndarray, group: np.ndarray, steady: np.ndarray, ngroups: int) -> np.ndarray:
    """Steady iterations further than MADS median absolute deviations from their group's steady median."""
    out = np.zeros(len(cycles), bool)
    if not steady.any():
        return out
    idx = np.flatnonzero(steady)
    g, x = group[idx], cycles[idx].astype(np.float64)
    sizes = np.bincount(g, minlength=ngroups)
    order = np.lexsort((x, g))
    (med,) = group_quantiles(x[order], sizes, (0.5,))
    dev = np.abs(x - med[g])
    order = np.lexsort((dev, g))
    (mad,) = group_quantiles(dev[order], sizes, (0.5,))
    out[idx] = dev > MADS * np.maximum(mad, MAD_FLOOR * med)[g]
    return out


def loop_timings(
    dispatch: Dispatch, waves: list[Wave] | None = None, cfgs: list[Cfg] | None = None, stream: Stream | None = None
) -> list[LoopTiming]:
    """Every loop of every kernel of `dispatch`, with its iterations in each of `waves` (default: all);
    `stream`: the records of those waves when the caller has them already (columns it gathered are shared)."""
    waves = dispatch.waves if waves is None else waves
    cfgs = build_cfgs(dispatch.code) if cfgs is None else cfgs
    st = stream_of(waves) if stream is None else stream
    out = []
    for cfg in cfgs:
        timings = []
        for loop in cfg.loops:
            body = {c.line for b in loop.blocks for c in cfg.blocks[b].lines}
            in_body = st.by_line(line_table(dispatch.code, lambda c, body=body: c.line in body, False, bool), False)
            head = header_line(cfg, loop)
            starts, _end, cycles, first, back = _iterations(st, head.line, in_body)
            wave = st.wave[starts]
            outlier = _outliers(cycles, wave, ~first, len(waves))
            lt = LoopTiming(cfg, loop, head)
            cuts = np.searchsorted(wave, np.arange(len(waves) + 1))
            offset = starts - st.starts[wave]
            for k in distinct(wave).tolist():
                s = slice(cuts[k], cuts[k + 1])
                lt.waves.append(WaveLoop(waves[k], cycles[s], first[s], back[s], outlier[s], offset[s]))
            timings.append(lt)
        top = [t for t in timings if t.loop.parent is None and t.waves]
        if top:
            max(top, key=lambda t: t.cycles).main = True
        out += timings
    return out
