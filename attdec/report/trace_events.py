"""Chrome trace-event JSON of traced waves, for Perfetto UI and chrome://tracing.

Layout: a process per (dispatch, shader engine), a thread per CU / SIMD / wave slot, a slice per wave
with, below it, a slice per instruction (`inst`) or per wave-state run (`state`); a counter track of
resident waves per SE. Trace-event timestamps are microseconds: with `clock="cycles"` one shader cycle
is written as 1 µs (the figures stay the cycles attdec prints elsewhere); with `clock="realtime"` the
cycles of each SE are mapped to real microseconds through its realtime samples, which also puts the SEs
(and several dispatches) on one time axis. `max_events` caps the file: wave slices and counters come
first, then the detail of whole waves in the order they began, and the trace says what was left out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from attdec import __version__
from attdec.analysis.classify import stall_type
from attdec.analysis.clock import Clock
from attdec.analysis.occupancy import live_waves, resample
from attdec.analysis.timeline import assign_lanes, state_runs, value_names
from attdec.errors import InputError
from attdec.model import Dispatch, Wave, WaveState
from attdec.report import TRACE_GRANULARITIES


@dataclass
class TraceSummary:
    events: int = 0
    waves: int = 0
    detailed_waves: int = 0  # waves whose instructions / states were written
    total_waves: int = 0
    dropped_waves: int = 0  # waves without even their slice (cap smaller than the wave count)
    counter_resolution: dict[str, int] = field(default_factory=dict)  # dispatch -> cycles per counter point
    notes: list[str] = field(default_factory=list)


_TS = re.compile(r'"ts":(-?[0-9.]+)')


def _esc(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


class _Times:
    """Shader cycles of one SE -> trace timestamps (µs)."""

    def __init__(self, clock: Clock | None, origin: float):
        self.clock, self.origin = clock, origin

    def __call__(self, se: int, cycles) -> np.ndarray:
        if self.clock is None:
            return np.asarray(cycles, np.int64)
        return np.round((self.clock.seconds(se, cycles) - self.origin) * 1e6, 3)


def _fmt(x) -> str:
    return str(int(x)) if float(x).is_integer() else f"{float(x):.3f}"


def write_trace(
    out: TextIO,
    dispatches: list[Dispatch],
    granularity: str = "state",
    clock: str = "cycles",
    max_events: int = 500_000,
) -> TraceSummary:
    """Write one trace-event JSON object for `dispatches` to `out`; returns what went in."""
    if granularity not in TRACE_GRANULARITIES:
        raise ValueError(granularity)
    summary = TraceSummary(total_waves=sum(len(d.waves) for d in dispatches))
    times: list[_Times] = []
    if clock == "realtime":
        clocks = [Clock(d) for d in dispatches]
        for d, c in zip(dispatches, clocks):
            if not c:
                raise InputError("no realtime samples in this trace: use --clock cycles", d.name)
        origin = min(
            float(c.seconds(se, [t]).min()) for d, c in zip(dispatches, clocks) for se, t in _first_times(d).items()
        )
        times = [_Times(c, origin) for c in clocks]
    else:
        times = [_Times(None, 0.0) for _ in dispatches]

    meta: list[str] = []
    base: list[tuple[tuple, str]] = []  # (sort key, event) for wave slices and counters
    detail_jobs: list[tuple[int, int, int, int, int]] = []  # (begin, dispatch, wave, pid, tid)
    pid = 0
    for di, d in enumerate(dispatches):
        keys, lane_of = assign_lanes(d.waves)
        ses = sorted({k[0] for k in keys} | {int(x) for x in np.unique(d.occupancy["se"])})
        pids = {}
        label = d.kernel or d.name
        if len(dispatches) > 1:
            label = f"{label} [{d.name}]"
        for se in ses:
            pid += 1
            pids[se] = pid
            meta.append(_meta("process_name", pid, 0, {"name": f"{label} SE{se}"}))
            meta.append(_meta("process_sort_index", pid, 0, {"sort_index": pid}))
        tids: dict[tuple, int] = {}
        per_se: dict[int, int] = {}
        for k in keys:
            tid = per_se[k[0]] = per_se.get(k[0], 0) + 1
            tids[k] = tid
            name = f"CU{k[1]} SIMD{k[2]} slot{k[3]}" + (f" ({k[4] + 1})" if k[4] else "")
            meta.append(_meta("thread_name", pids[k[0]], tid, {"name": name}))
            meta.append(_meta("thread_sort_index", pids[k[0]], tid, {"sort_index": tid}))
        tm = times[di]
        for wi, w in enumerate(d.waves):
            k = keys[lane_of[wi]]
            p, t = pids[k[0]], tids[k]
            b, e = tm(w.se, [w.begin, w.end])
            ins = w.insts
            args = {"wave": w.seq, "instructions": len(ins), "stall": int(ins["stall"].sum()) if len(ins) else 0}
            ev = (
                f'{{"ph":"X","name":{_esc(d.kernel or "wave")},"cat":"wave","pid":{p},"tid":{t},'
                f'"ts":{_fmt(b)},"dur":{_fmt(e - b)},"args":{json.dumps(args)}}}'
            )
            base.append(((p, t, w.begin, 0), ev))
            detail_jobs.append((w.begin, di, wi, p, t))
        counters, res = _counters(d, pids, tm, max(1, max_events // 4 // max(1, len(dispatches))))
        if res > 1:
            summary.counter_resolution[d.name] = res
            summary.notes.append(f"{d.name}: resident-wave counters averaged over {res}-cycle steps")
        base += counters

    budget = max_events - len(meta)
    waves_ev = [b for b in base if b[1].startswith('{"ph":"X"')]
    if len(waves_ev) > budget:  # not even every wave fits: keep those that began first
        keep = set(sorted(range(len(waves_ev)), key=lambda i: waves_ev[i][0][2])[: max(budget, 0)])
        summary.dropped_waves = len(waves_ev) - len(keep)
        base = [b for i, b in enumerate(waves_ev) if i in keep]
        detail_jobs = []
    elif len(base) > budget:
        base = waves_ev  # counters do not fit next to the waves
        summary.notes.append("resident-wave counters left out (--max-events)")
    budget -= len(base)

    detail: list[tuple[tuple, str]] = []
    if granularity != "wave":
        codes = [_code_index(d) if granularity == "inst" else {} for d in dispatches]
        for begin, di, wi, p, t in sorted(detail_jobs):
            evs = _details(dispatches[di].waves[wi], granularity, codes[di], times[di], p, t)
            if len(evs) > budget:
                break
            budget -= len(evs)
            detail += [((p, t, begin, 1 + j), ev) for j, ev in enumerate(evs)]
            summary.detailed_waves += 1
        if summary.detailed_waves < len(detail_jobs):
            summary.notes.append(
                f"{granularity} slices for {summary.detailed_waves} of {len(detail_jobs)} waves (those that began "
                f"first); the cap is --max-events {max_events}"
            )
    if summary.dropped_waves:
        summary.notes.append(
            f"{summary.dropped_waves} of {summary.total_waves} waves left out (the cap is --max-events {max_events})"
        )

    events = meta + [ev for _, ev in sorted(base + detail, key=lambda x: x[0])]
    if summary.notes:  # visible in the viewer too, as a global marker where the trace starts
        first = min((float(m.group(1)) for ev in events[len(meta) :] if (m := _TS.search(ev))), default=0.0)
        note = _esc("attdec: " + "; ".join(summary.notes))
        events.insert(len(meta), f'{{"ph":"i","s":"g","name":{note},"pid":1,"tid":0,"ts":{_fmt(first)}}}')
    summary.events = len(events)
    summary.waves = sum(1 for _, ev in base if ev.startswith('{"ph":"X"'))
    other = {
        "producer": f"attdec {__version__}",
        "clock": clock,
        "time_unit": "1 us = 1 shader cycle" if clock == "cycles" else "us of the realtime reference clock",
        "granularity": granularity,
        "dispatches": [_dispatch_meta(d) for d in dispatches],
        "notes": summary.notes,
    }
    out.write('{"traceEvents":[\n')
    out.write(",\n".join(events))
    out.write(f'\n],"otherData":{json.dumps(other)}}}\n')
    return summary


def _first_times(d: Dispatch) -> dict[int, int]:
    first: dict[int, int] = {}
    for w in d.waves:
        first[w.se] = min(first.get(w.se, w.begin), w.begin)
    for o in live_waves(d.occupancy):
        if len(o.time):
            first[o.se] = min(first.get(o.se, int(o.time[0])), int(o.time[0]))
    return first or {0: 0}


def _meta(name: str, pid: int, tid: int, args: dict) -> str:
    return f'{{"ph":"M","name":"{name}","pid":{pid},"tid":{tid},"args":{json.dumps(args)}}}'


def _dispatch_meta(d: Dispatch) -> dict:
    m = {"name": d.name, "kernel": d.kernel, "arch": d.arch, "waves": len(d.waves)}
    c = Clock(d)
    if c:
        m["shader_ghz"] = round(c.ghz(), 4)
        rt = d.realtime_se or {0: d.realtime}
        m["realtime"] = {f"SE{se}": [list(map(int, p)) for p in s] for se, s in rt.items()}
    if d.problems:
        m["problems"] = d.problems
    return m


def _counters(d: Dispatch, pids: dict[int, int], tm: _Times, cap: int) -> tuple[list[tuple[tuple, str]], int]:
    """Resident-wave counter events per SE, averaged over steps when there are more than `cap` points."""
    series = live_waves(d.occupancy)
    if not series:
        return [], 1
    per = max(2, cap // len(series))
    out, res = [], 1
    for o in series:
        r = resample(o, int(o.time[0]), int(o.time[-1]) + 1, per)
        res = max(res, r.resolution)
        ts = tm(o.se, r.time)
        p = pids[o.se]
        for t, c, raw in zip(ts, r.count, r.time):
            ev = f'{{"ph":"C","name":"resident waves","pid":{p},"tid":0,"ts":{_fmt(t)},'
            ev += f'"args":{{"waves":{_fmt(round(c, 3))}}}}}'
            out.append(((p, 0, int(raw), 0), ev))
    return out, res


_STATE = value_names("state")
_CATEGORY = value_names("category")


def _details(w: Wave, granularity: str, code: dict, tm: _Times, p: int, t: int) -> list[str]:
    """The child slices of one wave, in time order, clipped into the wave (so that they nest)."""
    if granularity == "state":
        _, s, e, v = state_runs([w])
        keep = v != WaveState.EMPTY
        s, e, v = s[keep], e[keep], v[keep]
        ts, te = tm(w.se, s), tm(w.se, e)
        return [
            f'{{"ph":"X","name":"{_STATE[x]}","cat":"state","pid":{p},"tid":{t},"ts":{_fmt(a)},"dur":{_fmt(b - a)}}}'
            for a, b, x in zip(ts, te, v.tolist())
        ]
    ins = w.insts
    if not len(ins):
        return []
    start = np.clip(ins["time"], w.begin, w.end)
    nxt = np.append(start[1:], w.end)
    end = np.maximum(np.minimum(np.minimum(start + ins["duration"], nxt), w.end), start)
    ts, te = tm(w.se, start), tm(w.se, end)
    out = []
    for a, b, line, cat, stall, dur, pc in zip(
        ts,
        te,
        ins["line"].tolist(),
        ins["category"].tolist(),
        ins["stall"].tolist(),
        ins["duration"].tolist(),
        ins["pc"].tolist(),
    ):
        cname = _CATEGORY[cat] if cat < len(_CATEGORY) else str(cat)
        name, typ, src = code.get(line, (f'"{cname}"', "", ""))
        out.append(
            f'{{"ph":"X","name":{name},"cat":"{cname}","pid":{p},"tid":{t},'
            f'"ts":{_fmt(a)},"dur":{_fmt(b - a)},'
            f'"args":{{"stall":{stall},"duration":{dur},"pc":"0x{pc:x}"{typ}{src}}}}}'
        )
    return out


def _code_index(d: Dispatch) -> dict[int, tuple[str, str, str]]:
    """line id -> (JSON-escaped instruction text, ',"type":...', ',"source":...' or '')."""
    fam = d.target.family
    return {
        c.line: (
            _esc(c.text),
            f',"type":"{stall_type(c.text, fam)}"',
            f',"source":{_esc(c.source)}' if c.source else "",
        )
        for c in d.code
        if not c.is_label
    }
