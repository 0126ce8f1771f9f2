"""One self-contained HTML report of one or more dispatches: findings, summary, stall types, hotspot tables,
flamegraph, source and ISA views, wave timeline and occupancy.

The page needs nothing but a browser: the data, the script and the style sheet (package files in
attdec/report/assets/, hand-written, no library) are inlined, and a Content-Security-Policy forbids
any fetch. Big traces do not fit a page as they are, so the timeline is coarsened to a run budget
(`attdec.analysis.timeline.tracks`), instructions (what hovering shows) are embedded for an even spread
of whole waves up to a budget, occupancy is averaged over cells, and every such cut is said on the page.
Numeric columns travel as base64 little-endian typed arrays (`_pack`), a fraction of their JSON size.

Analyses plug in without touching the page's code: `links` (per dispatch, (from line, to line, label)
links shown in the ISA view; by default each wait to the operations it waited for, attdec.analysis.waits)
and `tables` (per dispatch, extra sortable tables, each a tab).
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterable, Mapping
from importlib.resources import files
from typing import TextIO

import numpy as np

from attdec import __version__
from attdec.analysis import BY
from attdec.analysis.advise import advise
from attdec.analysis.classify import STALL_TYPES
from attdec.analysis.clock import Clock
from attdec.analysis.flame import stall_stacks
from attdec.analysis.hotspots import Hotspots, frames, hotspots, instruction_stats, rank, resolve_by
from attdec.analysis.loops import loop_timings
from attdec.analysis.occupancy import resample, resident_waves
from attdec.analysis.source import source_lines
from attdec.analysis.timeline import KINDS, assign_lanes, split_budget, spread_sample, tracks, value_names
from attdec.analysis.waits import Attribution, WaitSite, attribute, wait_pairs_by_wave, wait_sites
from attdec.model import Dispatch
from attdec.model.record import Record
from attdec.report import Limits
from attdec.report.advise import where_text
from attdec.report.common import common_dir, human, pct
from attdec.report.views import views

_ASSETS = files("attdec.report") / "assets"


class Table(Record):
    """An extra view: a titled sortable table (what a later analysis hands the report)."""

    title: str
    columns: list[str]
    rows: list[list]
    note: str = ""


def _pack(a) -> dict:
    """A numeric column as {"d": typed-array kind, "b": base64 of its little-endian bytes}; the smallest kind."""
    a = np.asarray(a)
    if a.size and a.dtype.kind in "iub":
        lo, hi = int(a.min()), int(a.max())
        for code in ("u1", "u2", "u4", "i4"):
            info = np.iinfo(np.dtype(code))
            if info.min <= lo and hi <= info.max:
                return {"d": code, "b": base64.b64encode(a.astype("<" + code).tobytes()).decode()}
    if not a.size:
        return {"d": "u1", "b": ""}
    return {"d": "f8", "b": base64.b64encode(a.astype("<f8").tobytes()).decode()}


def _deltas(wave: np.ndarray, values: np.ndarray, base: np.ndarray) -> np.ndarray:
    """values - the previous value of the same wave (the wave's `base` for its first): small numbers pack small."""
    prev = np.empty_like(values)
    if len(values):
        prev[0] = base[wave[0]]
        prev[1:] = values[:-1]
        first = np.ones(len(values), bool)
        first[1:] = wave[1:] != wave[:-1]
        prev[first] = base[wave[first]]
    return values - prev


def _counts(wave: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(wave, minlength=n) if len(wave) else np.zeros(n, np.int64)


def _timeline(d: Dispatch, run_budgets: dict[str, int], inst_budget: int, notes: list[str]) -> dict | None:
    if not d.waves:
        return None
    waves = d.waves
    keys, lane_of = assign_lanes(waves)
    begins = np.array([w.begin for w in waves], np.int64)
    out: dict = {
        "lanes": [list(k) for k in keys],
        "waves": {
            "lane": _pack(lane_of),
            "seq": _pack([w.seq for w in waves]),
            "begin": _pack(begins - begins.min()),
            "dur": _pack([w.duration for w in waves]),
            "insts": _pack([len(w.insts) for w in waves]),
            "stall": _pack([int(w.insts["stall"].sum()) if len(w.insts) else 0 for w in waves]),
        },
        "t0": int(begins.min()),  # wave begins are packed relative to it
        "end": int(max(w.end for w in waves)),
        "tracks": {},
    }
    for kind in KINDS:
        tr = tracks(waves, kind, run_budgets[kind])
        out["tracks"][kind] = {
            "q": tr.resolution,
            "exact": tr.exact_runs,
            "n": _pack(_counts(tr.wave, len(waves))),
            "dt": _pack(_deltas(tr.wave, tr.start, begins)),
            "v": _pack(tr.value),
            "names": value_names(kind),
        }
        if tr.resolution > 1:
            notes.append(
                f"timeline ({kind}): {tr.exact_runs:,} runs aggregated to {len(tr.start):,} on a "
                f"{tr.resolution}-cycle grid (each cell shows the {kind} covering most of it)"
            )
    sizes = [len(w.insts) for w in waves]
    pick = spread_sample(sizes, inst_budget)
    if pick:
        # Field by field: joining the packed records whole is several times slower.
        fields = ("time", "duration", "stall", "line", "category")
        ins = {f: np.concatenate([waves[i].insts[f] for i in pick]) for f in fields}
        wv = np.repeat(np.arange(len(pick)), [sizes[i] for i in pick])
        if sum(sizes[i] for i in pick):
            out["insts"] = {
                "waves": _pack(pick),
                "n": _pack([sizes[i] for i in pick]),
                "dt": _pack(_deltas(wv, ins["time"], begins[pick])),
                "dur": _pack(ins["duration"]),
                "stall": _pack(ins["stall"]),
                "line": _pack(ins["line"] + 1),  # -1 (unknown) becomes 0
                "cat": _pack(ins["category"]),
            }
    if len(pick) < len(waves):
        notes.append(
            f"timeline: instructions embedded for {len(pick)} of {len(waves)} waves ({sum(sizes[i] for i in pick):,} "
            f"of {sum(sizes):,}, an even spread; hovering the others shows their state only)"
        )
    return out


def _occupancy(d: Dispatch, limits: Limits, notes: list[str]) -> dict | None:
    series = resident_waves(d.occupancy)
    if not series:
        return None
    out, res = [], 1
    for o in series:
        r = resample(o, int(o.time[0]), int(o.time[-1]) + 1, limits.occupancy_points)
        res = max(res, r.resolution)
        t = np.asarray(r.time, np.int64)
        out.append(
            {
                "se": o.se,
                "t": _pack(np.diff(t, prepend=t[0]) if len(t) else t),
                "t0": int(t[0]) if len(t) else 0,
                "c": [round(float(c), 2) for c in r.count],
                "peak": o.peak,
            }
        )
    if res > 1:
        notes.append(f"occupancy: resident waves averaged over {res}-cycle cells (peaks in the hover are exact)")
    return {"q": res, "series": out, "what": OCCUPANCY_SCOPE}


# Occupancy records come from every CU of a shader engine, instruction tracing only from the target CU:
# said beside the chart so that its counts are not read as those of the timeline's waves.
OCCUPANCY_SCOPE = "resident waves per SE, on all its CUs (untraced ones too; the timeline shows the traced CU's)"


def _hotspot_tables(d: Dispatch, frame: str, ranked: str, limits: Limits, notes: list[str]) -> tuple[dict, Hotspots]:
    """The hotspot table of each ranking, and the `ranked` one's Hotspots (what the page's summary reads).
    The other rankings group the same instruction stats (`rank`, as `hotspots` does), without its header."""
    summary = hotspots([d], by=ranked, frame=frame)
    stats = instruction_stats(d, empty=False)
    measure = "stall" if summary.stall_measured else "latency"
    out = {}
    for by in BY:
        ranked_rows = summary.rows if by == ranked else rank(stats, by, frame, measure=measure)
        rows = ranked_rows[: limits.rows]
        if len(ranked_rows) > limits.rows:
            notes.append(f"hotspots by {by}: the top {limits.rows:,} of {len(ranked_rows):,} rows")
        out[by] = [
            [
                r.key,
                r.stall,
                round(r.share, 6),
                r.hits,
                r.latency,
                r.idle,
                r.dominant_type or "",
                r.extra.get("source", "") if by == "instruction" else r.extra.get("instructions", 0),
                r.extra.get("vaddr", 0),
                r.extra.get("line", -1),
            ]
            for r in rows
        ]
    return out, summary


def _source(stats, sources: Mapping[str, list[str]], limits: Limits) -> list[dict]:
    by_file: dict[str, list] = {}
    for s in source_lines(stats):
        chains = sorted(s.chains.items(), key=lambda kv: -kv[1])
        by_file.setdefault(s.file, []).append(
            [
                s.line if s.line is not None else -1,
                s.location,
                s.hits,
                s.latency,
                s.stall,
                s.idle,
                s.dominant_type or "",
                s.total_stall,
                s.total_latency,
                chains,
            ]
        )
    out = []
    for f, rows in by_file.items():
        entry = {"file": f, "stall": sum(r[4] for r in rows), "hits": sum(r[2] for r in rows), "lines": rows}
        text = sources.get(f)
        nums = [r[0] for r in rows if r[0] > 0]
        if text and nums:
            lo = max(1, min(nums) - limits.source_context)
            hi = min(len(text), max(nums) + limits.source_context)
            entry["text_from"] = lo
            entry["text"] = text[lo - 1 : hi]
        out.append(entry)
    out.sort(key=lambda e: (-e["stall"], -e["hits"], e["file"]))
    return out


def _flame(d: Dispatch, by: str) -> dict:
    names: dict[str, int] = {}
    stacks = []
    for st in stall_stacks([d], by=by):
        idx = [names.setdefault(f, len(names)) for f in st.frames]
        stacks.append([idx, STALL_TYPES.index(st.type), st.stall])
    return {"frames": list(names), "stacks": stacks}


def wait_links(
    d: Dispatch, attr: Attribution | None = None, sites: list[WaitSite] | None = None
) -> list[tuple[int, int, str]]:
    """attdec's own links for the ISA view: each executed wait to the operations it waited for
    (attdec.analysis.waits), labelled with their share of the wait's stall. `attr`, `sites`: the dispatch's
    attribution and its `wait_sites`, when the caller has them already."""
    if sites is None:
        sites = wait_sites(attribute(d) if attr is None else attr)
    return [
        (site.code.line, p.code.line, f"{pct(p.share)}, {human(p.stall)} stall")
        for site in sites
        for p in site.producers
    ]


def _per_wave(d: Dispatch, attr: Attribution, limits: Limits, notes: list[str]) -> dict:
    """What the ISA view shows for one selected wave: its wait arrows (the pairs `attdec waits` gives for
    that wave alone) and its loop iterations (`attdec loops`). Waves index `d.waves`, as in the timeline."""
    pairs = wait_pairs_by_wave(attr)
    per_wave = _counts(pairs["wave"], len(d.waves))
    pick = spread_sample(per_wave.tolist(), limits.insts)
    if len(pick) < len(d.waves):
        keep = np.isin(pairs["wave"], pick)
        pairs = {k: v[keep] for k, v in pairs.items()}
        per_wave = _counts(pairs["wave"], len(d.waves))
        notes.append(f"ISA view: wait arrows embedded for {len(pick)} of {len(d.waves)} waves (an even spread)")
    links = {"n": _pack(per_wave), **{k: _pack(pairs[k]) for k in ("wait", "producer", "executions", "stall")}}
    timings = loop_timings(d, stream=attr.stream)
    index = {id(w): i for i, w in enumerate(d.waves)}
    sizes: list[int] = [0] * len(d.waves)
    for t in timings:
        for wl in t.waves:
            sizes[index[id(wl.wave)]] += wl.iterations
    keep_waves = set(spread_sample(sizes, limits.insts))
    if len(keep_waves) < len(d.waves) and any(sizes):
        notes.append(
            f"ISA view: loop iterations embedded for {len(keep_waves)} of {len(d.waves)} waves (an even spread)"
        )
    loops = []
    for t in timings:
        kept = [wl for wl in t.waves if index[id(wl.wave)] in keep_waves]
        n = np.zeros(len(d.waves), np.int64)
        for wl in kept:
            n[index[id(wl.wave)]] = wl.iterations
        kept.sort(key=lambda wl: index[id(wl.wave)])

        def cat(f, kept=kept):
            return np.concatenate([f(wl) for wl in kept]) if kept else np.zeros(0, np.int64)

        flags = cat(lambda wl: wl.first.astype(np.int64) | (wl.outlier.astype(np.int64) << 1) | (wl.back << 2))
        loops.append(
            {
                "kernel": t.cfg.kernel,
                "id": t.loop.id,
                "main": t.main,
                "depth": t.loop.depth,
                "parent": t.loop.parent,
                "header": t.header.line,
                "body": [c.line for b in t.loop.blocks for c in t.cfg.blocks[b].lines],
                "n": _pack(n),
                "cycles": _pack(cat(lambda wl: wl.cycles)),
                "flags": _pack(flags),  # bit 0: first of its trip, 1: outlier, 2: ended by the back edge
                "start": _pack(cat(lambda wl: wl.start)),  # first record, index into the wave's instructions
            }
        )
    return {"links": links, "loops": loops}


def _dispatch(
    d: Dispatch,
    frame: str,
    sources: Mapping[str, list[str]],
    links: Iterable[tuple[int, int, str]] | None,
    tables: Iterable[Table],
    run_budgets: dict[str, int],
    inst_budget: int,
    limits: Limits,
) -> dict:
    notes: list[str] = list(d.problems)
    attr = attribute(d)
    sites = None
    if links is None:
        sites = wait_sites(attr)
        links = wait_links(d, attr, sites)
    by, why = resolve_by([d], None)
    if why:
        notes.append(why)
    tables_payload, h = _hotspot_tables(d, frame, by, limits, notes)
    stats = instruction_stats(d)
    by_line = {st.code.line: st for st in stats}
    isa = []
    for c in d.code:
        st = by_line.get(c.line)
        counters = " ".join(f"{k}={v}" for k, v in st.counters.items()) if st and st.counters else ""
        if st is None:
            isa.append([c.line, c.vaddr, c.text, c.source, 0, 0, 0, 0, "", ""])
        else:
            isa.append([c.line, c.vaddr, c.text, c.source, st.hit, st.latency, st.stall, st.idle, st.type, counters])
    clock = Clock(d)
    ends = [w.end for w in d.waves]
    summary = {
        "waves": h.waves,
        "listing": h.listing,
        **h.totals,
        "span": (max(ends) - min(w.begin for w in d.waves)) if d.waves else 0,
        "ghz": round(clock.ghz(), 4) if clock else None,
    }
    locations = {f for c in d.code for f in frames(c.source)}
    findings = [
        {
            "rule": f.rule,
            "title": f.title,
            "where": where_text(f),
            "address": f.where.get("address"),  # what the finding links to: the ISA row, else the source line
            "source": f.where.get("source"),
            "cycles": f.cycles,
            "share": round(f.share, 6),
            "suggestion": f.suggestion,
        }
        for f in advise(d, attribution=attr, sites=sites).findings
    ]
    # The views and the ISA view's loops read the records the attribution gathered; then it is let go, so
    # that the timeline's temporaries reuse its memory.
    view_notes: list[str] = []
    achieved = h.kernel_summary.achieved if h.kernel_summary else None
    view_data = views(d, _pack, view_notes, clock, attr.stream, achieved)
    per_wave = _per_wave(d, attr, limits, notes)
    del attr
    source = _source(stats, sources, limits)
    flame = _flame(d, by)
    timeline = _timeline(d, run_budgets, inst_budget, notes)
    occupancy = _occupancy(d, limits, notes)
    notes += view_notes
    return {
        "prefix": common_dir(sorted(locations)),  # the page shows paths below it
        "name": d.name,
        "kernel": d.kernel,
        "arch": d.arch,
        "path": d.path or "",
        "by": by,
        "frame": frame,
        "summary": summary,
        "findings": findings,  # attdec.analysis.advise, largest cycles first
        "by_type": [[t, s, round(f, 6)] for t, s, f in h.by_type],
        "tables": tables_payload,
        "isa": isa,
        "links": [[int(a), int(b), str(label)] for a, b, label in links],
        "wave": per_wave,
        "source": source,
        "flame": flame,
        "timeline": timeline,
        "occupancy": occupancy,
        "views": view_data,  # assets/views.js
        "extra": [{"title": t.title, "columns": t.columns, "rows": t.rows, "note": t.note} for t in tables],
        "notes": notes,
    }


def build(
    dispatches: list[Dispatch],
    *,
    frame: str = "inner",
    sources: Mapping[str, list[str]] | None = None,
    links: Mapping[str, Iterable[tuple[int, int, str]]] | None = None,
    tables: Mapping[str, Iterable[Table]] | None = None,
    limits: Limits | None = None,
    title: str | None = None,
) -> dict:
    """The report's data: one entry per dispatch, plus the names the page needs (stall types, states, categories).

    `sources`: source file path (as the listing names it) -> its lines, for the files found on this machine.
    `links`, `tables`: per dispatch name, see the module docstring; `links=None` gives `wait_links`.
    """
    limits = limits or Limits()
    inst_shares = split_budget([sum(len(w.insts) for w in d.waves) for d in dispatches], limits.insts)
    run_shares = {
        "state": split_budget([sum(len(w.timeline) for w in d.waves) for d in dispatches], limits.runs),
        "category": split_budget([sum(2 * len(w.insts) + 1 for w in d.waves) for d in dispatches], limits.runs),
    }
    out = []
    for i, d in enumerate(dispatches):
        budgets = {k: max(1, run_shares[k][i]) for k in KINDS}
        out.append(
            _dispatch(
                d,
                frame,
                sources or {},
                None if links is None else links.get(d.name, ()),
                (tables or {}).get(d.name, ()),
                budgets,
                inst_shares[i],
                limits,
            )
        )
    return {
        "title": title or _title(dispatches),
        "generator": f"attdec {__version__}",
        "generated": time.strftime("%Y-%m-%d %H:%M"),
        "stall_types": list(STALL_TYPES),
        "dispatches": out,
    }


def _title(dispatches: list[Dispatch]) -> str:
    kernels = list(dict.fromkeys(d.kernel or d.name for d in dispatches))
    more = f" and {len(kernels) - 2} more" if len(kernels) > 2 else ""
    return "attdec report: " + ", ".join(kernels[:2]) + more


def render(data: dict) -> str:
    """The HTML page holding `data` (the JSON is escaped so that no `</script>` can end its element)."""
    page = (_ASSETS / "report.html").read_text(encoding="utf-8")
    blob = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    # Other scripts (extra tabs, registered in window.attdecTabs) run first, report.js last, in one
    # element (each file starts "use strict": the first one's directive holds for all).
    scripts = sorted(f.name for f in _ASSETS.iterdir() if f.name.endswith(".js") and f.name != "report.js")
    parts = {
        "/*@CSS@*/": (_ASSETS / "report.css").read_text(encoding="utf-8"),
        "/*@JS@*/": "\n".join((_ASSETS / n).read_text(encoding="utf-8") for n in [*scripts, "report.js"]),
        "@TITLE@": _html_escape(data["title"]),
        "@DATA@": blob,
    }
    # One pass over the template: nothing inserted is searched again.
    return _SLOTS.sub(lambda m: parts[m.group(0)], page)


_SLOTS = re.compile(r"/\*@CSS@\*/|/\*@JS@\*/|@TITLE@|@DATA@")


def _html_escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def write_report(out: TextIO, dispatches: list[Dispatch], **kw) -> dict:
    """Build the report of `dispatches` (keywords as `build`) and write the page to `out`; returns the data."""
    data = build(dispatches, **kw)
    out.write(render(data))
    return data
