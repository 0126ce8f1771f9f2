"""Guided findings: the patterns a kernel engineer looks for in a thread trace, found and measured.

Model in, findings out, no I/O. A rule is a small function of one dispatch's `Evidence` returning its
`Finding`s (none when the pattern is absent); a rule that cannot judge this input raises `NotApplicable`
with the reason, instead of guessing. Every finding's `cycles` is computed from the trace: for the
performance rules an upper bound of what fixing it could save (the stall it caused), for the trace-quality
rules (`source-mapping`, `truncated-trace`, `unrepresentative-cu`) the cycles whose reading it makes
unreliable. Thresholds and the reasoning behind each rule, with sources, are in docs/advise.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

from attdec.analysis.classify import StallType
from attdec.analysis.hotspots import InstStat, frame_of, instruction_stats
from attdec.isa import categories as C
from attdec.isa.categories import InstClass
from attdec.model import NO_PC, Dispatch
from attdec.model.record import Frozen, Record, field

if TYPE_CHECKING:
    import numpy as np

    from attdec.model.target import Target

# A performance finding must put at least this share of the kernel's cycles at stake: below it, fixing
# the pattern could not change the kernel's time by more than run-to-run noise does.
MIN_SHARE = 0.02
# source-mapping: one source line holding at least this share of the executed instructions ...
MAPPING_LINE_SHARE = 0.5
# ... of a kernel that executed at least this many distinct instructions (a tiny kernel may be one line)
MAPPING_MIN_INSTRUCTIONS = 50
# unrepresentative-cu: the traced CU's wave count differs from the median CU's by this much
CU_DEVIATION = 0.25
# lds-bank-conflict: the share of active LDS cycles spent on bank conflicts that makes them worth a look
BANK_CONFLICT_RATE = 0.1
# barrier-imbalance: the per-wave barrier stall spread, (max - min) / max, that marks waves arriving unevenly
BARRIER_SPREAD = 0.5


class Finding(Record):
    """One pattern found in one dispatch: where it is, the cycles at stake, the figures it rests on and
    what to try."""

    rule: str
    title: str
    where: dict  # kernel, dispatch, and when known source ("file:line"), address (ELF vaddr), instruction
    cycles: int
    share: float  # of the kernel's traced cycles (unrepresentative-cu: of the traced CU's wave-cycles)
    evidence: dict
    suggestion: str


class Skipped(Record):
    """A rule that could not judge this input, and why."""

    rule: str
    reason: str


class Advice(Record):
    """The findings of one dispatch, largest `cycles` first, and the rules that did not apply."""

    dispatch: str
    kernel: str
    arch: str
    cycles: int  # the kernel's traced cycles (summed instruction latency), what `share` is of
    findings: list[Finding] = field(default_factory=list)
    not_applicable: list[Skipped] = field(default_factory=list)


class NotApplicable(Exception):
    """Raised by a rule that cannot judge this input; the message says why."""


class Evidence:
    """What the rules read of one dispatch, each piece computed once and only when a rule asks for it (the
    listing totals are cheap; wait attribution replays every wave)."""

    def __init__(self, dispatch: Dispatch):
        self.dispatch = dispatch
        self.target = dispatch.target
        self._counters: dict[str, tuple] = {}

    @cached_property
    def executed(self) -> list[InstStat]:
        """Executed listing rows with their totals, the (no PC) row of records without an address included."""
        return [s for s in instruction_stats(self.dispatch, empty=False) if s.hit]

    @cached_property
    def stats(self) -> list[InstStat]:
        """Executed listing instructions with their totals."""
        return [s for s in self.executed if not s.code.is_no_pc]

    @cached_property
    def cycles(self) -> int:
        """The kernel's traced cycles: every record's latency, with or without an address."""
        return sum(s.latency for s in self.executed)

    @cached_property
    def stall(self) -> int:
        return sum(s.stall for s in self.stats)

    def by_type(self, kind: str) -> list[InstStat]:
        return [s for s in self.stats if s.type == kind]

    def share(self, cycles: int) -> float:
        return cycles / self.cycles if self.cycles else 0.0

    def where(self, code=None, source: str | None = None) -> dict:
        d = self.dispatch
        out: dict = {"kernel": d.kernel, "dispatch": d.name}
        if code is not None:
            out["source"] = frame_of(code.source) or None
            out["address"] = code.vaddr
            out["instruction"] = code.text
        elif source is not None:
            out["source"] = source
        return out

    def need_waves(self) -> None:
        if not self.dispatch.wave_count or not len(self.dispatch.waves):
            raise NotApplicable("no traced waves with instruction records")

    @cached_property
    def attribution(self):
        """Which operations each executed wait waited for (attdec.analysis.waits)."""
        from attdec.analysis.waits import attribute

        self.need_waves()
        return attribute(self.dispatch)

    @cached_property
    def sites(self):
        """Every executed wait with what it waited for, per wait instruction."""
        from attdec.analysis.waits import wait_sites

        return wait_sites(self.attribution)

    def counter_records(self, counter: str) -> tuple[dict, np.ndarray, np.ndarray]:
        """Per listing line (count it waits `counter` down to, kind it adds to `counter`), and the stream's
        records that wait on it and that add to it (ascending)."""
        import numpy as np

        if counter in self._counters:
            return self._counters[counter]

        from attdec.analysis.stream import line_table
        from attdec.isa import waitcnt as W

        code, tgt, st = self.dispatch.code, self.dispatch.target, self.attribution.stream
        info = {c.line: (W.waits_of(c.text, tgt).get(counter), W.events_of(c.text, tgt).get(counter)) for c in code}
        waits = line_table(code, lambda c: info[c.line][0] is not None, False, bool)
        ops = line_table(code, lambda c: info[c.line][1] is not None, False, bool)
        out = self._counters[counter] = (
            info,
            np.flatnonzero(st.by_line(waits, False)),
            np.flatnonzero(st.by_line(ops, False)),
        )
        return out


def short_location(loc: str) -> str:
    """'/a/b/k.py:12' -> 'k.py:12': titles name the file, `where` holds the whole path."""
    return loc.rsplit("/", 1)[-1]


def cross_lane_lgkm(ev: Evidence) -> list[Finding]:
    """LGKM waits whose stall was charged to DS cross-lane moves (ds_bpermute, ds_swizzle, ds_permute)."""
    by_line: dict[str, dict] = {}
    for site in ev.sites:
        for p in site.producers:
            if not C.is_cross_lane(p.code.text) or not p.stall:
                continue
            loc = frame_of(p.code.source) or f"0x{p.code.vaddr:x}"
            acc = by_line.setdefault(loc, {"stall": 0, "sites": set(), "ops": Counter(), "top": p, "dist": []})
            acc["stall"] += p.stall
            acc["sites"].add(site.code.line)
            acc["ops"][C.mnemonic_of(p.code.text)] += p.executions
            acc["dist"].append((p.distance_instructions, p.executions))
            if p.stall > acc["top"].stall:
                acc["top"] = p
    lds_data = sum(1 for s in ev.stats if s.code.text.startswith("ds_") and not C.is_cross_lane(s.code.text))
    waits = sum(1 for s in ev.sites if s.type == StallType.LGKM_WAIT)
    out = []
    for loc, acc in by_line.items():
        if ev.share(acc["stall"]) < MIN_SHARE:
            continue
        n = sum(e for _, e in acc["dist"])
        ops = ", ".join(m for m, _ in acc["ops"].most_common())
        out.append(
            Finding(
                "cross-lane-lgkm",
                f"LGKM waits on cross-lane moves ({ops}) at {short_location(loc)}",
                ev.where(acc["top"].code),
                acc["stall"],
                ev.share(acc["stall"]),
                {
                    "stall_charged": acc["stall"],
                    "wait_sites": len(acc["sites"]),
                    "lgkm_wait_sites": waits,
                    "cross_lane_executions": n,
                    "mean_distance_instructions": round(sum(d * e for d, e in acc["dist"]) / n, 1) if n else None,
                    "lds_data_instructions_executed": lds_data,
                },
                "These shuffles go through the LDS crossbar and each one costs an LGKM wait. Within 16 lanes use "
                "DPP (quad_perm, row_shr, row_xmask on gfx10+; row_bcast on gfx9) which is a VALU modifier with no "
                "wait; across rows use v_permlane* where the GPU has it; otherwise issue the independent shuffles "
                "back to back before a single wait instead of one wait per shuffle.",
            )
        )
    return out


def source_mapping(ev: Evidence) -> list[Finding]:
    """Most executed instructions carry one source location (or none): the per-line ranking says little."""
    stats = ev.stats
    if len(stats) < MAPPING_MIN_INSTRUCTIONS:
        raise NotApplicable(f"only {len(stats)} distinct instructions executed (< {MAPPING_MIN_INSTRUCTIONS})")
    hits = sum(s.hit for s in stats)
    by_loc: dict[str, list[int]] = {}
    for s in stats:
        acc = by_loc.setdefault(frame_of(s.code.source), [0, 0, 0, 0])
        acc[0] += s.hit
        acc[1] += s.stall
        acc[2] += s.latency
        acc[3] += 1
    if not any(by_loc):
        raise NotApplicable("no instruction has a source line (no line table): rank by instruction")
    loc, (h, stall, _latency, n) = max(by_loc.items(), key=lambda kv: (kv[1][0], kv[0]))
    share_hits = h / hits if hits else 0.0
    if share_hits < MAPPING_LINE_SHARE:
        return []
    lines = len([k for k in by_loc if k])
    evidence = {
        "executed_instructions": hits,
        "on_this_line": h,
        "share_of_executed": round(share_hits, 4),
        "share_of_stall": round(stall / ev.stall, 4) if ev.stall else 0.0,
        "distinct_instructions_on_line": n,
        "distinct_source_lines": lines,
    }
    if not loc:
        title = f"{share_hits:.0%} of the executed instructions have no source line"
        hint = "most of the code has no line-table entry: build it with line tables (-g or -gline-tables-only)"
    else:
        title = f"{share_hits:.0%} of the executed instructions map to one source line, {short_location(loc)}"
        hint = (
            "the compiler stamped one location (often the kernel's definition or decorator line) on most of "
            "the code: keep per-statement locations through lowering (MLIR/DSL front ends: the op's `loc`)"
        )
    return [
        Finding(
            "source-mapping",
            title,
            ev.where(source=loc or None),
            stall,
            ev.share(stall),
            evidence,
            f"The per-line ranking cannot tell this code apart: {hint}. Until then rank by instruction "
            "(`attdec hotspots --by instruction`).",
        )
    ]


def truncated_trace(ev: Evidence) -> list[Finding]:
    """Waves cut by the end of the trace buffer, or trace data lost, before the waves ended."""
    d = ev.dispatch
    lost = [i for i in d.info if i.kind in ("WAVE_INCOMPLETE", "DATA_LOST")]
    code = {c.line: c.text for c in d.code}
    cut, cycles = 0, 0
    waves = list(d.waves) if d.loaded("waves") or not lost else []
    for w in waves:
        if w.folded is not None or not len(w.insts):
            continue
        last = code.get(int(w.insts["line"][-1]), NO_PC)
        if last != NO_PC and not C.mnemonic_of(last).startswith("s_endpgm"):  # no PC: its walk stopped, not cut
            cut += 1
            cycles += int(w.insts["duration"].sum())
    cut_by_info = sum(i.count for i in lost if i.kind == "WAVE_INCOMPLETE")
    if not cut and not lost:
        if not waves:
            raise NotApplicable("no traced waves with instruction records")
        return []
    if not cycles:
        cycles = ev.cycles
    evidence = {
        "waves": d.wave_count,
        "waves_without_s_endpgm": cut,
        "waves_cut_by_decoder": cut_by_info,
        "data_lost_marks": sum(i.count for i in lost if i.kind == "DATA_LOST"),
        "shader_engines": sorted({i.se for i in lost}),
    }
    n = cut_by_info or cut
    return [
        Finding(
            "truncated-trace",
            f"The trace is cut short: {n} traced wave(s) end before their s_endpgm" if n else "The trace lost data",
            ev.where(),
            cycles,
            ev.share(cycles),
            evidence,
            "The trace buffer filled (or the stream lost packets) before the kernel ended, so the tail is "
            "missing and every total undercounts it: capture again with a larger buffer (rocprofv3 "
            "--att-buffer-size), fewer shader engines or a smaller dispatch.",
        )
    ]


def unrepresentative_cu(ev: Evidence) -> list[Finding]:
    """The traced CU ran noticeably more or fewer waves than the median CU (its wave-cycles are evidence only:
    tracing itself slows the traced CU's waves)."""
    import numpy as np

    from attdec.model.totals import median

    d = ev.dispatch
    if any(i.kind in ("WAVE_INCOMPLETE", "DATA_LOST") for i in d.info):
        raise NotApplicable("the trace is cut short or lost data: its wave start/end records are incomplete")
    occ = d.occupancy
    if not len(occ):
        raise NotApplicable("no wave start/end records (occupancy)")
    unit = occ["se"].astype(np.int64) * 4096 + occ["cu"].astype(np.int64)
    units, inv = np.unique(unit, return_inverse=True)
    if len(units) < 3:
        raise NotApplicable(f"wave start/end records cover {len(units)} CU(s): nothing to compare with")
    starts = np.bincount(inv, weights=occ["start"].astype(np.float64), minlength=len(units))
    sign = np.where(occ["start"] == 1, -1.0, 1.0)
    wave_cycles = np.bincount(inv, weights=sign * occ["time"].astype(np.float64), minlength=len(units))
    balanced = np.bincount(inv, weights=-sign, minlength=len(units)) == 0  # as many ends as starts
    traced = sorted({(w.se, w.cu) for w in d.waves})
    if not traced:
        raise NotApplicable("no traced waves: the traced CU is not known")
    med_waves = median(starts)
    med_cycles = median(wave_cycles[balanced]) if balanced.any() else 0.0
    out = []
    for se, cu in traced:
        k = int(np.searchsorted(units, se * 4096 + cu))
        if k >= len(units) or units[k] != se * 4096 + cu:
            continue
        dw = (starts[k] - med_waves) / med_waves if med_waves else 0.0
        if abs(dw) < CU_DEVIATION:
            continue
        cycles = int(abs(wave_cycles[k] - med_cycles)) if balanced[k] and med_cycles else 0
        own = float(wave_cycles[k]) if balanced[k] else 0.0
        out.append(
            Finding(
                "unrepresentative-cu",
                f"The traced CU (se {se} cu {cu}) ran {starts[k]:.0f} waves where the median CU ran {med_waves:.0f}",
                {**ev.where(), "se": se, "cu": cu},
                cycles,
                min(cycles, own) / own if own else 0.0,  # wave-cycles, not the traced instructions' cycles
                {
                    "traced_cu_waves": int(starts[k]),
                    "median_cu_waves": med_waves,
                    "traced_cu_wave_cycles": int(wave_cycles[k]) if balanced[k] else None,
                    "median_cu_wave_cycles": int(med_cycles),
                    "cus_compared": len(units),
                },
                "Work is unbalanced across CUs, so one traced CU may not show the kernel's typical behaviour: "
                "trace another CU (rocprofv3 --att-target-cu) and compare, or look at the grid's tail "
                "(a last partial wave of workgroups).",
            )
        )
    return out


def nop_padding(ev: Evidence) -> list[Finding]:
    """Cycles spent in s_nop wait states the compiler inserted for hazards."""
    nops = ev.by_type(StallType.NOP)
    stall = sum(s.stall for s in nops)
    if not nops or ev.share(stall) < MIN_SHARE:
        return []
    order = {c.line: i for i, c in enumerate(ev.dispatch.code)}
    code = ev.dispatch.code
    after: Counter[str] = Counter()  # the instruction each padding protects: the one it precedes
    for s in nops:
        i = order[s.code.line] + 1
        while i < len(code) and C.class_of(code[i].text, ev.target) == InstClass.NOP:
            i += 1
        if i < len(code):
            after[C.mnemonic_of(code[i].text)] += s.stall
    top = max(nops, key=lambda s: s.stall)
    by_line: Counter[str] = Counter()
    for s in nops:
        by_line[frame_of(s.code.source)] += s.stall
    return [
        Finding(
            "nop-padding",
            f"s_nop hazard padding costs {ev.share(stall):.1%} of the kernel's cycles",
            ev.where(top.code),
            stall,
            ev.share(stall),
            {
                "nop_stall": stall,
                "share_of_stall": round(stall / ev.stall, 4) if ev.stall else 0.0,
                "nop_instructions": len(nops),
                "nop_executions": sum(s.hit for s in nops),
                "padding_before": dict(after.most_common(5)),
                "by_source_line": {k or "(no source line)": v for k, v in by_line.most_common(5)},
            },
            "The ISA requires wait states between some dependent instructions (a VALU write then DPP, "
            "v_readlane or an MFMA reading it, s_setreg, ...), and the compiler fills them with s_nop when "
            "nothing independent is there: interleave independent work between the dependent pair (unroll, "
            "reorder), so the wait states are filled with useful instructions.",
        )
    ]


def _is_load(text: str, tgt: Target) -> bool:
    """A load whose latency a wait can expose: VMEM, FLAT and scalar loads, LDS reads (not cross-lane moves)."""
    m, cat = C.mnemonic_of(text), C.class_of(text, tgt)
    if cat == InstClass.LDS:
        return m.startswith(("ds_read", "ds_load"))
    if cat in (InstClass.SMEM, InstClass.FLAT):
        return "_load" in m
    return cat == InstClass.VMEM_LOAD


def exposed_load(ev: Evidence) -> list[Finding]:
    """A wait that stalls for loads issued only a few instructions before it: their latency is exposed."""
    out = []
    for site in ev.sites:
        loads = [p for p in site.producers if p.stall and _is_load(p.code.text, ev.target)]
        charged = sum(p.stall for p in loads)
        if ev.share(charged) < MIN_SHARE:
            continue
        top = max(loads, key=lambda p: p.stall)
        n = sum(p.executions for p in loads)
        out.append(
            Finding(
                "exposed-load",
                f"{site.code.text} at {short_location(frame_of(site.code.source)) or hex(site.code.vaddr)} waits "
                f"for {len(loads)} load(s) issued {top.distance_instructions:.0f} instructions before it",
                ev.where(top.code),
                charged,
                ev.share(charged),
                {
                    "wait": site.code.text,
                    "wait_address": site.code.vaddr,
                    "wait_hits": site.hits,
                    "stall_charged_to_loads": charged,
                    "mean_stall_per_load_execution": round(charged / n, 1) if n else None,
                    "loads": [
                        {
                            "instruction": p.code.text,
                            "address": p.code.vaddr,
                            "source": frame_of(p.code.source) or None,
                            "stall": p.stall,
                            "distance_instructions": round(p.distance_instructions, 1),
                            "distance_cycles": round(p.distance_cycles, 1),
                        }
                        for p in sorted(loads, key=lambda p: -p.stall)[:4]
                    ],
                },
                "The load's latency is not hidden: issue it earlier (hoist it above independent work, prefetch "
                "the next iteration's data into registers or LDS: software pipelining / double buffering), or "
                "move independent work between the load and its first use.",
            )
        )
    return out


# The counters of VMEM loads that retire in issue order: a wait down to N + k leaves the k youngest out.
IN_ORDER_LOAD_COUNTERS = ("vmcnt", "loadcnt")


def _relaxable(ev: Evidence, bit: int, counter: str, site_line: int) -> tuple[int, int]:
    """(k, executions): how many of the youngest loads every execution of the wait on `site_line` named
    could be left outstanding, because no instruction up to the next wait on `counter` touches their
    registers and that next wait retires them anyway. k = 0: none can."""
    import numpy as np

    attr = ev.attribution
    st, tgt = attr.stream, ev.dispatch.target
    info, waits, ops = ev.counter_records(counter)
    text = {c.line: c.text for c in ev.dispatch.code}
    lines = st.lines
    named = (attr.mask & (1 << bit)) != 0
    pw, pp = attr.wait[named], attr.producer[named]
    verdicts: dict[tuple, int] = {}
    best, runs = None, 0
    for w in np.flatnonzero(lines == site_line).tolist():
        runs += 1
        at = int(np.searchsorted(waits, w))
        nxt = int(waits[at + 1]) if at + 1 < len(waits) and st.wave[waits[at + 1]] == st.wave[w] else None
        producers = pp[np.searchsorted(pw, w, "left") : np.searchsorted(pw, w, "right")].tolist()
        if not producers:
            continue  # nothing outstanding: this execution does not constrain k
        if nxt is None:
            return 0, runs  # no later wait retires what this one would leave outstanding
        issued = ops[np.searchsorted(ops, producers[0]) : np.searchsorted(ops, nxt)].tolist()
        key = (tuple(lines[producers].tolist()), tuple(lines[w + 1 : nxt + 1].tolist()), tuple(lines[issued].tolist()))
        k = verdicts.get(key)
        if k is None:
            k = verdicts[key] = _verdict(key, len(producers), info, text, tgt)
        best = k if best is None else min(best, k)
        if not best:
            return 0, runs
    return best or 0, runs


def _verdict(key: tuple, named: int, info: dict, text: dict, tgt: Target) -> int:
    """k of one execution (`_relaxable`). `key`: the lines of the loads it named, oldest first; the lines
    from after it to the next wait on the counter, that wait included; the lines of every operation on the
    counter from the oldest named one up to that next wait."""
    from attdec.isa import waitcnt as W

    producers, segment, issued = key
    kinds = {info[ln][1] for ln in issued}
    if len(kinds) != 1 or kinds & W.OUT_OF_ORDER:
        return 0  # retirement order unknown: only the wait as written is safe
    younger = len(issued) - named  # operations issued after the named ones, before the next wait
    if info[segment[-1]][0] > younger:
        return 0  # the next wait would not retire a load left outstanding here
    touched: set = set()
    for ln in segment[:-1]:
        regs = W.vector_registers(text.get(ln, ""))
        if regs is None:
            return 0
        touched |= regs
    k = 0
    for ln in reversed(producers):
        dst = W.load_destination(text.get(ln, ""), tgt)
        if dst is None or dst & touched:
            break
        k += 1
    return k


def wait_too_strict(ev: Evidence) -> list[Finding]:
    """A wait down to fewer outstanding loads than the instructions after it need (vmcnt(0) where the
    youngest load's registers are not touched before the next wait)."""
    d = ev.dispatch
    counters = [c for c in IN_ORDER_LOAD_COUNTERS if c in d.target.counters]
    if not counters:
        raise NotApplicable(f"{d.arch} has no in-order VMEM load counter")
    attr = ev.attribution
    out = []
    for site in ev.sites:
        if ev.share(site.stall) < MIN_SHARE:
            continue
        for counter in counters:
            if counter not in site.counters or counter not in attr.counters:
                continue
            bit = attr.counters.index(counter)
            k, runs = _relaxable(ev, bit, counter, site.code.line)
            if not k:
                continue
            n = site.counters[counter]
            out.append(
                Finding(
                    "wait-too-strict",
                    f"{site.code.text} could wait for {counter}({n + k}): its {k} youngest load(s) are not used "
                    "before the next wait",
                    ev.where(site.code),
                    site.stall,
                    ev.share(site.stall),
                    {
                        "counter": counter,
                        "waits_down_to": n,
                        "could_wait_down_to": n + k,
                        "executions_checked": runs,
                        "wait_stall": site.stall,
                    },
                    "The wait retires loads whose registers nothing reads or writes before the next wait on the "
                    f"same counter: wait for {counter}({n + k}) here (the next wait retires them), or issue the "
                    "loads in the order they are used, since the counter retires them in issue order.",
                )
            )
    return out


def barrier_imbalance(ev: Evidence) -> list[Finding]:
    """Waves idling at s_barrier for the slower waves of their workgroup."""
    import numpy as np

    bars = ev.by_type(StallType.BARRIER)
    stall = sum(s.stall for s in bars)
    if not bars or ev.share(stall) < MIN_SHARE:
        return []
    lines = np.array(sorted(s.code.line for s in bars), np.int64)
    per_wave = [int(w.insts["stall"][np.isin(w.insts["line"], lines)].sum()) for w in ev.dispatch.waves]
    evidence: dict = {"barrier_stall": stall, "barrier_instructions": len(bars), "executions": sum(s.hit for s in bars)}
    if per_wave:
        hi, lo = max(per_wave), min(per_wave)
        spread = (hi - lo) / hi if hi else 0.0
        evidence.update(
            waves=len(per_wave),
            per_wave_min=lo,
            per_wave_mean=round(sum(per_wave) / len(per_wave), 1),
            per_wave_max=hi,
            spread=round(spread, 3),
        )
        if spread < BARRIER_SPREAD:
            return []
    top = max(bars, key=lambda s: s.stall)
    return [
        Finding(
            "barrier-imbalance",
            f"Waves wait {ev.share(stall):.1%} of the kernel's cycles at s_barrier for slower waves",
            ev.where(top.code),
            stall,
            ev.share(stall),
            evidence,
            "Some waves of a workgroup reach the barrier much later than others: even out their work "
            "(divergent loops, uneven tiles, one wave doing the extra loads), or split the phase so the early "
            "waves have independent work before the barrier.",
        )
    ]


def _reads_result(prev: str, cur: str) -> bool:
    """Whether MFMA `cur` names a register MFMA `prev` writes (its first operand)."""
    from attdec.isa import waitcnt as W

    regs = W.vector_registers(cur)
    return regs is None or bool(W.destination_registers(prev) & regs)


def mfma_chain(ev: Evidence) -> list[Finding]:
    """Back-to-back MFMAs where the second reads the first's result and stalls longer than independent
    back-to-back MFMAs of its kind do (those stall at the pipe's issue rate only)."""
    import numpy as np

    from attdec.analysis.stream import line_table, stream_of

    if not any(s.type == StallType.MFMA and s.stall for s in ev.stats):
        return []
    ev.need_waves()
    code = ev.dispatch.code
    is_mfma = line_table(code, lambda c: C.class_of(c.text, ev.target) == InstClass.MFMA, False, bool)
    st = stream_of(ev.dispatch.waves)
    rec = np.flatnonzero(st.by_line(is_mfma, False))
    cur = rec[1:][(rec[1:] == rec[:-1] + 1) & (st.wave[rec[1:]] == st.wave[rec[:-1]])]  # right after an MFMA
    if not len(cur):
        return []
    stall = st.col("stall")[cur].astype(np.int64)
    text = {c.line: c.text for c in code}
    pairs, inv = np.unique(np.stack([st.lines[cur - 1], st.lines[cur]], 1), axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    dependent = np.array([_reads_result(text[int(a)], text[int(b)]) for a, b in pairs.tolist()], bool)[inv]
    kind = np.array([C.mnemonic_of(text[int(b)]) for _, b in pairs.tolist()])[inv]
    excess = np.zeros(len(cur), np.int64)
    unjudged = 0
    for k in np.unique(kind[dependent]).tolist():
        free = stall[~dependent & (kind == k)]
        mine = dependent & (kind == k)
        if not len(free):
            unjudged += int(mine.sum())  # no independent pair of this kind: issue rate unknown
            continue
        excess[mine] = np.maximum(stall[mine] - int(free.min()), 0)
    cycles = int(excess.sum())
    if ev.share(cycles) < MIN_SHARE:
        return []
    per_line = np.bincount(st.lines[cur], weights=excess)
    top = next(c for c in code if c.line == int(per_line.argmax()))
    return [
        Finding(
            "mfma-chain",
            f"Dependent back-to-back MFMAs stall {ev.share(cycles):.1%} of the kernel's cycles beyond the issue rate",
            ev.where(top),
            cycles,
            ev.share(cycles),
            {
                "dependent_pairs": int(dependent.sum()),
                "independent_pairs": int((~dependent).sum()),
                "dependent_pairs_without_baseline": unjudged,
                "stall_beyond_independent": cycles,
                "mfma_stall": sum(s.stall for s in ev.stats if s.type == StallType.MFMA),
            },
            "Each of these MFMAs reads a result (usually the accumulator) of the MFMA just before it and waits "
            "for it longer than an independent MFMA would: interleave two or more independent accumulators "
            "(split the K loop, or compute several output tiles at once).",
        )
    ]


def _lds_counters(d: Dispatch) -> tuple[str, int, int] | None:
    """(source, bank-conflict cycles, active LDS cycles) from the first counter source that has both."""
    import numpy as np

    for cs in d.counters:
        idx = {n.split("_", 1)[-1]: i for i, n in enumerate(cs.names)}  # SQ_ (gfx9) or SQC_ (gfx10+) prefix
        if "LDS_BANK_CONFLICT" in idx and "LDS_IDX_ACTIVE" in idx:
            c, v = cs.samples["counter"], cs.samples["value"].astype(np.int64)
            return cs.source, int(v[c == idx["LDS_BANK_CONFLICT"]].sum()), int(v[c == idx["LDS_IDX_ACTIVE"]].sum())
    return None


def lds_bank_conflict(ev: Evidence) -> list[Finding]:
    """LDS accesses slowed by bank conflicts, where the performance counters measured them."""
    counts = _lds_counters(ev.dispatch)
    if counts is None:
        raise NotApplicable("no LDS bank-conflict counters (SQ_LDS_BANK_CONFLICT and SQ_LDS_IDX_ACTIVE) in this input")
    source, conflict, active = counts
    rate = conflict / active if active else 0.0
    if rate < BANK_CONFLICT_RATE:
        return []
    # what LDS costs the waves: the issue stall of LDS data instructions and the wait stall they caused
    lds = [s for s in ev.by_type(StallType.LDS) if not C.is_cross_lane(s.code.text)]
    by_code: Counter[int] = Counter({s.code.line: s.stall for s in lds})
    codes = {s.code.line: s.code for s in lds}
    for site in ev.sites:
        for p in site.producers:
            if p.code.text.startswith("ds_") and not C.is_cross_lane(p.code.text):
                by_code[p.code.line] += p.stall
                codes[p.code.line] = p.code
    cycles = sum(by_code.values())
    if ev.share(cycles) < MIN_SHARE:
        return []
    top = codes[max(by_code, key=lambda ln: by_code[ln])]
    return [
        Finding(
            "lds-bank-conflict",
            f"{rate:.0%} of the active LDS cycles served bank conflicts",
            ev.where(top),
            cycles,
            ev.share(cycles),
            {
                "counter_source": source,
                "bank_conflict_cycles": conflict,
                "lds_active_cycles": active,
                "conflict_rate": round(rate, 4),
                "lds_stall_in_trace": cycles,
            },
            "Lanes of one LDS access hit the same bank and are served one after another: pad the shared "
            "array's rows (one extra element per row), swizzle the index (XOR with the row), or read wider "
            "elements (ds_read_b64/b128) with a layout that spreads the lanes over the banks.",
        )
    ]


def occupancy_limit(ev: Evidence) -> list[Finding]:
    """Occupancy limited by a register or LDS budget while waits on memory dominate the stall."""
    from attdec.analysis.kernel import kernel_summary
    from attdec.analysis.occupancy import LDS, SGPR, SLOTS, VGPR

    d = ev.dispatch
    s = kernel_summary(d, achieved=False)
    th, res, cu = s.theoretical, s.resources, d.target.cu
    if res is None:
        raise NotApplicable("the kernel's resources are not known")
    if s.candidates and all(c.limited_by == SLOTS for c in s.candidates.values()):
        return []  # chip unknown, but on every possible chip the wave slots are the limit
    if th is None or th.waves_per_simd is None or cu is None:
        raise NotApplicable(
            "the GPU model is not known (its register file and LDS size decide the limit): `attdec kernel` "
            "shows the figure per possible chip"
        )
    if th.limited_by in (None, SLOTS) or not th.limited_by:
        return []
    wait = sum(st.stall for st in ev.stats if st.type in (StallType.VMEM_WAIT, StallType.LGKM_WAIT))
    if ev.share(wait) < MIN_SHARE:
        return []
    w = th.waves_per_simd + 1
    free: dict[str, int] = {}
    wave = res.wave_size or d.target.wave_size
    if VGPR in th.limited_by and res.vgpr:
        total, granule = cu.vgpr_file(wave)
        free["vgpr"] = res.vgpr - (total // w) // granule * granule
    if SGPR in th.limited_by and res.sgpr and cu.sgpr_waves:
        fits = [n for n, waves in cu.sgpr_waves if waves >= w]
        if fits:
            free["sgpr"] = res.sgpr - max(fits)
    if LDS in th.limited_by and res.lds_bytes:
        groups = cu.lds // res.lds_bytes + 1
        free["lds_bytes"] = res.lds_bytes - cu.lds // groups
    resources = {"vgpr": res.vgpr, "sgpr": res.sgpr, "lds_bytes": res.lds_bytes, "source": res.source}
    names = {"vgpr": "VGPRs", "sgpr": "SGPRs", "lds_bytes": "LDS bytes"}
    need = " or ".join(f"{v} {names[k]}" for k, v in free.items())
    return [
        Finding(
            "occupancy-limit",
            f"{th.limited_by} limits occupancy to {th.waves_per_simd} waves/SIMD while memory waits take "
            f"{ev.share(wait):.1%} of the cycles",
            ev.where(),
            wait,
            ev.share(wait),
            {
                "waves_per_simd": th.waves_per_simd,
                "limited_by": th.limited_by,
                "limits": dict(th.limits),
                "bound": th.bound,
                "resources": resources,
                "to_free_for_one_more_wave": free,
                "memory_wait_stall": wait,
            },
            f"More resident waves would hide more of the memory latency: free {need or 'the limiting resource'} "
            "for one more wave per SIMD (launch bounds / waves-per-eu hint, fewer live values, smaller tiles).",
        )
    ]


class Rule(Frozen):
    id: str
    check: Callable[[Evidence], list[Finding]]
    cheap: bool  # reads the listing totals only (no waves, no occupancy records): safe under `hotspots`


RULES = (
    Rule("cross-lane-lgkm", cross_lane_lgkm, False),
    Rule("source-mapping", source_mapping, True),
    Rule("truncated-trace", truncated_trace, False),
    Rule("unrepresentative-cu", unrepresentative_cu, False),
    Rule("nop-padding", nop_padding, True),
    Rule("exposed-load", exposed_load, False),
    Rule("wait-too-strict", wait_too_strict, False),
    Rule("barrier-imbalance", barrier_imbalance, False),
    Rule("occupancy-limit", occupancy_limit, True),
    Rule("lds-bank-conflict", lds_bank_conflict, False),
    Rule("mfma-chain", mfma_chain, False),
)
RULE_IDS = tuple(r.id for r in RULES)


def advise(
    dispatch: Dispatch, rules: tuple[str, ...] | None = None, cheap: bool = False, attribution=None, sites=None
) -> Advice:
    """The findings of one dispatch, largest cycles first. `rules` picks rules by id (default: all);
    `cheap` runs only those that read the listing totals (no waves, no occupancy records);
    `attribution`, `sites`: the dispatch's `attdec.analysis.waits.attribute` and `wait_sites` of it, when the
    caller has them already."""
    ev = Evidence(dispatch)
    if attribution is not None:
        ev.attribution = attribution
    if sites is not None:
        ev.sites = sites
    out = Advice(dispatch.name, dispatch.kernel, dispatch.arch, ev.cycles)
    for rule in RULES:
        if (rules is not None and rule.id not in rules) or (cheap and not rule.cheap):
            continue
        if not dispatch.stall_measured and rule.id != "source-mapping":
            out.not_applicable.append(Skipped(rule.id, "the input has no stall figures"))
            continue
        try:
            out.findings += rule.check(ev)
        except NotApplicable as e:
            out.not_applicable.append(Skipped(rule.id, str(e)))
    out.findings.sort(key=lambda f: (-f.cycles, f.rule))
    return out
