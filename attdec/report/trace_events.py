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
from typing import TextIO

import numpy as np

from attdec import __version__
from attdec.analysis.classify import stall_type
from attdec.analysis.clock import Clock
from attdec.analysis.occupancy import resample, resident_waves
from attdec.analysis.timeline import assign_lanes, state_runs, value_names
from attdec.errors import InputError
from attdec.model import Dispatch, Wave, WaveState
from attdec.model.record import Record, field
from attdec.model.totals import distinct
from attdec.report import TRACE_GRANULARITIES


class TraceSummary(Record):
    events: int = 0
    waves: int = 0
    detailed_waves: int = 0  # waves whose instructions / states were written
    total_waves: int = 0
    dropped_waves: int = 0  # waves without even their slice (cap smaller than the wave count)
    counter_resolution: dict[str, int] = field(default_factory=dict)  # dispatch -> cycles per counter point
    notes: list[str] = field(default_factory=list)


def _esc(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


class _Times:
    """Shader cycles of one SE -> trace timestamps (µs) as JSON numbers: ints for cycles, µs to the ns."""

    def __init__(self, clock: Clock | None, origin: float):
        self.clock, self.origin = clock, origin

    def __call__(self, se: int, cycles) -> np.ndarray:
        if self.clock is None:
            return np.asarray(cycles, np.int64)
        return np.round((self.clock.seconds(se, cycles) - self.origin) * 1e6, 3)

    def pair(self, se: int, start, end) -> tuple[list, list]:
        """(ts, dur) lists for slices [start, end) (dur from the rounded ends, so children never outgrow parents)."""
        a, b = self(se, start), self(se, end)
        dur = b - a if self.clock is None else np.round(b - a, 3)
        return a.tolist(), dur.tolist()


def write_trace(
    out: TextIO,
    dispatches: list[Dispatch],
    granularity: str = "state",
    clock: str = "cycles",
    max_events: int = 500_000,
) -> TraceSummary:
    """Write one trace-event JSON object for `dispatches` to `out`; returns what went in.

    Events are written track by track (a track's slices in time order, a wave's children after it), so
    nothing is sorted; what fits is decided first: waves, then counters, then the detail of whole waves.
    """
    if granularity not in TRACE_GRANULARITIES:
        raise ValueError(granularity)
    summary = TraceSummary(total_waves=sum(len(d.waves) for d in dispatches))
    times = _clocks(dispatches, clock)
    meta, tracks, pids = _tracks(dispatches)
    fit = _Fit(dispatches, tracks, max_events - len(meta), max_events, summary)
    counters = fit.counters(pids, times)
    detailed = fit.detailed(granularity) if granularity != "wave" else set()
    body, events, first_ts = _wave_events(dispatches, tracks, times, fit.keep_waves, detailed, granularity)
    for evs in counters:
        body += evs
        events += len(evs)
    summary.waves = len(fit.keep_waves)
    if summary.notes:  # visible in the viewer too, as a global marker where the trace starts
        note = _esc("attdec: " + "; ".join(summary.notes))
        meta.append(f'{{"ph":"i","s":"g","name":{note},"pid":1,"tid":0,"ts":{first_ts or 0}}}')
    summary.events = len(meta) + events
    other = {
        "producer": f"attdec {__version__}",
        "clock": clock,
        "time_unit": "1 us = 1 shader cycle" if clock == "cycles" else "us of the realtime reference clock",
        "granularity": granularity,
        "dispatches": [_dispatch_meta(d) for d in dispatches],
        "notes": summary.notes,
    }
    out.write('{"traceEvents":[\n')
    out.write(",\n".join(meta + body))
    out.write(f'\n],"otherData":{json.dumps(other)}}}\n')
    return summary


# A thread track: (dispatch index, pid, tid, the indices of its waves in time order)
Track = tuple[int, int, int, list[int]]


def _tracks(dispatches: list[Dispatch]) -> tuple[list[str], list[Track], list[dict[int, int]]]:
    """The process (dispatch, SE) and thread (wave lane) tracks with their name and order events (processes
    first), and each dispatch's pid per SE."""
    meta: list[str] = []
    tracks: list[Track] = []
    pids: list[dict[int, int]] = []
    for di, d in enumerate(dispatches):
        keys, lane_of = assign_lanes(d.waves)
        ses = sorted({k[0] for k in keys} | {int(x) for x in distinct(d.occupancy["se"])})
        label = d.kernel or d.name
        if len(dispatches) > 1:
            label = f"{label} [{d.name}]"
        pid_of = {se: sum(len(x) for x in pids) + 1 + i for i, se in enumerate(ses)}
        for se, pid in pid_of.items():
            meta.append(_meta("process_name", pid, 0, {"name": f"{label} SE{se}"}))
            meta.append(_meta("process_sort_index", pid, 0, {"sort_index": pid}))
        pids.append(pid_of)
        lanes: list[list[int]] = [[] for _ in keys]
        for wi in sorted(range(len(d.waves)), key=lambda i: d.waves[i].begin):
            lanes[lane_of[wi]].append(wi)
        per_se: dict[int, int] = {}
        for k, ws in zip(keys, lanes):
            tid = per_se[k[0]] = per_se.get(k[0], 0) + 1
            name = f"CU{k[1]} SIMD{k[2]} slot{k[3]}" + (f" ({k[4] + 1})" if k[4] else "")
            meta.append(_meta("thread_name", pid_of[k[0]], tid, {"name": name}))
            meta.append(_meta("thread_sort_index", pid_of[k[0]], tid, {"sort_index": tid}))
            tracks.append((di, pid_of[k[0]], tid, ws))
    meta = [m for m in meta if '"process_' in m] + [m for m in meta if '"thread_' in m]
    return meta, tracks, pids


class _Fit:
    """What fits under the cap, in turn: every wave slice (or the waves that began first), the counters,
    then whole waves' detail; each step spends `budget` (events) and notes in `summary` what it left out."""

    def __init__(self, dispatches: list[Dispatch], tracks: list[Track], budget: int, cap: int, summary: TraceSummary):
        self.dispatches, self.budget, self.cap, self.summary = dispatches, budget, cap, summary
        self.begun = sorted((dispatches[di].waves[wi].begin, di, wi) for di, _, _, ws in tracks for wi in ws)
        if len(self.begun) > budget:
            self.keep_waves = {(di, wi) for _, di, wi in self.begun[: max(budget, 0)]}
            summary.dropped_waves = len(self.begun) - len(self.keep_waves)
            summary.notes.append(
                f"{summary.dropped_waves} of {summary.total_waves} waves left out (the cap is --max-events {cap})"
            )
        else:
            self.keep_waves = {(di, wi) for _, di, wi in self.begun}
        self.budget -= len(self.keep_waves)

    def counters(self, pids: list[dict[int, int]], times: list[_Times]) -> list[list[str]]:
        """Each dispatch's resident-wave counter events, or none if they do not all fit."""
        if self.budget <= 0:
            return []
        counters: list[list[str]] = []
        per = max(1, min(self.budget, self.cap // 4) // max(1, len(self.dispatches)))
        for di, d in enumerate(self.dispatches):
            evs, res = _counters(d, pids[di], times[di], per)
            counters.append(evs)
            if res > 1:
                self.summary.notes.append(f"{d.name}: resident-wave counters averaged over {res}-cycle steps")
        if sum(len(c) for c in counters) > self.budget:
            counters = []
            self.summary.notes.append("resident-wave counters left out (the cap is --max-events)")
        self.budget -= sum(len(c) for c in counters)
        return counters

    def detailed(self, granularity: str) -> set[tuple[int, int]]:
        """The kept waves whose instruction or state slices fit, those that began first."""
        detailed: set[tuple[int, int]] = set()
        for _, di, wi in self.begun:
            if (di, wi) not in self.keep_waves:
                continue
            w = self.dispatches[di].waves[wi]
            n = len(w.insts) if granularity == "inst" else sum(1 for st, _ in w.timeline if st != WaveState.EMPTY)
            if n > self.budget:
                break
            self.budget -= n
            detailed.add((di, wi))
        self.summary.detailed_waves = len(detailed)
        if len(detailed) < len(self.keep_waves):
            self.summary.notes.append(
                f"{granularity} slices for {len(detailed)} of {len(self.keep_waves)} waves (those that began "
                f"first); the cap is --max-events {self.cap}"
            )
        return detailed


def _wave_events(dispatches, tracks, times, keep_waves, detailed, granularity) -> tuple[list[str], int, float | None]:
    """The kept waves' slices, track by track, each followed by its detail slices (a wave's joined in one
    entry); how many events they are; and the earliest timestamp written."""
    codes = [_code_index(d) if granularity == "inst" else {} for d in dispatches]
    body: list[str] = []
    events = 0
    first_ts = None
    for di, pid, tid, ws in tracks:
        d, tm = dispatches[di], times[di]
        for wi in ws:
            if (di, wi) not in keep_waves:
                continue
            w = d.waves[wi]
            (b,), (dur,) = tm.pair(w.se, [w.begin], [w.end])
            first_ts = b if first_ts is None else min(first_ts, b)
            ins = w.insts
            events += 1
            args = {"wave": w.seq, "instructions": len(ins), "stall": int(ins["stall"].sum()) if len(ins) else 0}
            body.append(
                f'{{"ph":"X","name":{_esc(d.kernel or "wave")},"cat":"wave","pid":{pid},"tid":{tid},'
                f'"ts":{b},"dur":{dur},"args":{json.dumps(args)}}}'
            )
            if (di, wi) in detailed:
                slices, n = _details(w, granularity, codes[di], tm, pid, tid)
                if n:
                    body.append(slices)
                    events += n
    return body, events, first_ts


def _clocks(dispatches: list[Dispatch], clock: str) -> list[_Times]:
    """Per dispatch, its cycles -> timestamps; on the realtime clock all share one origin (the earliest event)."""
    if clock != "realtime":
        return [_Times(None, 0.0) for _ in dispatches]
    clocks = [Clock(d) for d in dispatches]
    for d, c in zip(dispatches, clocks):
        if not c:
            raise InputError("no realtime samples in this trace: use --clock cycles", d.name)
    origin = min(
        float(c.seconds(se, [t]).min()) for d, c in zip(dispatches, clocks) for se, t in _first_times(d).items()
    )
    return [_Times(c, origin) for c in clocks]


def _first_times(d: Dispatch) -> dict[int, int]:
    first: dict[int, int] = {}
    for w in d.waves:
        first[w.se] = min(first.get(w.se, w.begin), w.begin)
    for o in resident_waves(d.occupancy):
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


def _counters(d: Dispatch, pids: dict[int, int], tm: _Times, cap: int) -> tuple[list[str], int]:
    """Resident-wave counter events per SE, averaged over steps when there are more than `cap` points."""
    series = resident_waves(d.occupancy)
    if not series:
        return [], 1
    per = max(2, cap // len(series))
    out, res = [], 1
    for o in series:
        r = resample(o, int(o.time[0]), int(o.time[-1]) + 1, per)
        res = max(res, r.resolution)
        p = pids[o.se]
        for t, c in zip(tm(o.se, r.time).tolist(), np.round(r.count, 3).tolist()):
            out.append(f'{{"ph":"C","name":"resident waves","pid":{p},"tid":0,"ts":{t},"args":{{"waves":{c}}}}}')
    return out, res


_STATE = value_names("state")
_CATEGORY = value_names("category")


def _details(w: Wave, granularity: str, code: dict, tm: _Times, p: int, t: int) -> tuple[str, int]:
    """The child slices of one wave, in time order, clipped into the wave (so that they nest): their events
    joined by ",\n", and how many. Each is formatted by one %-operation over all of the wave's values (an
    f-string per slice is most of a trace's cost)."""
    if granularity == "state":
        _, s, e, v = state_runs([w])
        keep = v != WaveState.EMPTY
        ts, dur = tm.pair(w.se, s[keep], e[keep])
        names = [_STATE[x] for x in v[keep].tolist()]
        row = f'{{"ph":"X","name":"%s","cat":"state","pid":{p},"tid":{t},"ts":%s,"dur":%s}}'
        return _joined(row, [names, ts, dur]), len(ts)
    ins = w.insts
    if not len(ins):
        return "", 0
    start = np.clip(ins["time"], w.begin, w.end)
    nxt = np.append(start[1:], w.end)
    end = np.maximum(np.minimum(np.minimum(start + ins["duration"], nxt), w.end), start)
    ts, dur = tm.pair(w.se, start, end)
    keys = list(zip(ins["line"].tolist(), ins["category"].tolist()))
    around = {}  # (line, category) -> the slice's text before its time, and its args after the pc
    for line, cat in set(keys):
        cname = _CATEGORY[cat] if cat < len(_CATEGORY) else str(cat)
        name, typ, src = code.get(line, (f'"{cname}"', "", ""))
        around[line, cat] = (f'{{"ph":"X","name":{name},"cat":"{cname}","pid":{p},"tid":{t},', typ + src)
    head, tail = zip(*[around[k] for k in keys])
    cols = [list(head), ts, dur, ins["stall"].tolist(), ins["duration"].tolist(), ins["pc"].tolist(), list(tail)]
    row = '%s"ts":%s,"dur":%s,"args":{"stall":%s,"duration":%s,"pc":"0x%x"%s}}'
    return _joined(row, cols), len(ts)


def _joined(row: str, cols: list[list]) -> str:
    """`row` %-formatted with each row of `cols` (equal-length columns), the rows joined by ",\n"."""
    n, k = len(cols[0]), len(cols)
    flat: list = [None] * (n * k)
    for i, c in enumerate(cols):
        flat[i::k] = c
    return ",\n".join([row] * n) % tuple(flat)


def _code_index(d: Dispatch) -> dict[int, tuple[str, str, str]]:
    """line id -> (JSON-escaped instruction text, ',"type":...', ',"source":...' or '')."""
    tgt = d.target
    return {
        c.line: (
            _esc(c.text),
            f',"type":"{stall_type(c.text, tgt)}"',
            f',"source":{_esc(c.source)}' if c.source else "",
        )
        for c in d.code
        if not c.is_label
    }
