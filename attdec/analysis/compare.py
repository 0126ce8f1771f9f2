"""Compare runs of the same kernels: before/after deltas per row, and the run-to-run noise floor.

Each side of a comparison is a set of dispatches; those with the same kernel name are repeated runs of
that kernel. A row (source line, instruction, source file, stall type, or the kernel total) gets, per side,
its value in every run, their median, MAD and min-max (what is shown), and the delta of the medians.
Whether a delta is more than run-to-run noise is decided on the runs themselves by attdec.analysis.stats:
a t-test on the means whose variance is each row's own pooled with all rows of its table (few runs give
each row too weak an estimate alone), and Benjamini-Hochberg control of false discoveries over the
table's rows; the kernel total is tested alone. `noise` is the standard error of the delta so found.
With one run on both sides and nothing to pool there is no estimate (`None`), except that a zero delta is
never significant. docs/diff.md gives the rule's false-alarm and detection rates (tools/figures/noise_report.py --rule).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

import numpy as np

from attdec.analysis import COMPARE_BY, METRICS
from attdec.analysis.align import ADDED, REMOVED, Alignment, align
from attdec.analysis.classify import STALL_TYPES
from attdec.analysis.hotspots import NO_FILE, NO_SOURCE, file_of, frame_of, instruction_stats
from attdec.analysis.stats import FDR, Verdict, judge_rows
from attdec.analysis.table import Table
from attdec.model import CodeLine, Dispatch, Target
from attdec.model.record import Frozen, Record, field

FIELDS = ("cycles", "stall", "hits")  # cycles = Latency, as `hotspots` counts total cycles
NOISE_RULE = (
    "significant: the runs' means differ by a t-test whose variance is each row's pooled with its table's rows "
    f"(moderated t), with Benjamini-Hochberg false discovery rate {FDR:g} over the table's rows (the total alone); "
    "noise = standard error of the delta"
)


class Spread(Frozen):
    """One quantity measured once per run: the values, their median and MAD (None for a single run)."""

    values: tuple[int, ...]
    median: float
    mad: float | None

    @classmethod
    def of(cls, values) -> Spread:
        vs = tuple(int(v) for v in values)
        med = statistics.median(vs) if vs else 0.0
        mad = statistics.median(abs(v - med) for v in vs) if len(vs) > 1 else None
        return cls(vs, float(med), None if mad is None else float(mad))

    @property
    def lo(self) -> int:
        return min(self.values, default=0)

    @property
    def hi(self) -> int:
        return max(self.values, default=0)

    @property
    def sd(self) -> float | None:
        """Sample standard deviation (None for a single run)."""
        return statistics.stdev(self.values) if len(self.values) > 1 else None

    @property
    def noise(self) -> float | None:
        """Standard error of the mean: sd / sqrt(runs)."""
        sd = self.sd
        return None if sd is None else sd / math.sqrt(len(self.values))

    @property
    def relative(self) -> float | None:
        """MAD / median: the run-to-run spread as a fraction of the value."""
        return None if self.mad is None or not self.median else self.mad / abs(self.median)


def spreads(values: np.ndarray) -> dict[str, Spread]:
    """(runs, FIELDS) array -> a Spread per field."""
    return {f: Spread.of(values[:, k]) for k, f in enumerate(FIELDS)}


class DiffRow(Record):
    key: str
    before: dict[str, Spread]
    after: dict[str, Spread]
    status: str = ""  # "added" / "removed" (only on one side); instructions: also "same" / "changed"
    extra: dict = field(default_factory=dict)
    tests: dict[str, Verdict] = field(default_factory=dict)  # per field, set by `mark` over the row's table

    def delta(self, f: str) -> float:
        return self.after[f].median - self.before[f].median

    def pct(self, f: str) -> float | None:
        """Delta in percent of before; None when before is 0."""
        b = self.before[f].median
        return 100.0 * self.delta(f) / b if b else None

    def noise(self, f: str) -> float | None:
        """Standard error of the delta (pooled with the row's table)."""
        return self.tests[f].noise if f in self.tests else None

    def threshold(self, f: str) -> float | None:
        """The |delta of means| the table's false-discovery cutoff asks of this row."""
        return self.tests[f].threshold if f in self.tests else None

    def significant(self, f: str) -> bool | None:
        return self.tests[f].significant if f in self.tests else None


def mark(rows: list[DiffRow]) -> None:
    """Verdict every row of one table against the others' noise (attdec.analysis.stats), per field."""
    for f in FIELDS:
        before = [np.array(r.before[f].values, float) for r in rows]
        after = [np.array(r.after[f].values, float) for r in rows]
        for r, t in zip(rows, judge_rows(before, after)):
            r.tests[f] = t


class RunSet(Record):
    """One kernel's repeated runs on one side: per-run totals of each instruction of the first run's listing."""

    kernel: str
    runs: list[str]  # dispatch paths (or names)
    targets: list[Target]
    waves: list[int]  # traced waves per run
    insts: list[CodeLine]  # the first run's instructions (labels left out)
    types: list[str]  # stall type of each
    values: np.ndarray  # (runs, insts, FIELDS)
    problems: list[str] = field(default_factory=list)

    @property
    def archs(self) -> list[str]:
        return [t.display for t in self.targets]

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(c.text, c.source) for c in self.insts]

    def total(self) -> np.ndarray:
        return self.values.sum(axis=1)


def same_gpu(a: Target, b: Target) -> bool:
    """Same family, and the same chip unless one side does not know its chip."""
    return a.family == b.family and (a.name == b.name or not (a.chip_known and b.chip_known))


def kernel_of(d: Dispatch) -> str:
    return d.kernel or d.name


def group_runs(dispatches: list[Dispatch]) -> dict[str, list[Dispatch]]:
    """Dispatches by kernel name, in first-seen order: each kernel's list holds its repeated runs."""
    out: dict[str, list[Dispatch]] = {}
    for d in dispatches:
        out.setdefault(kernel_of(d), []).append(d)
    return out


def _labels(dispatches: list[Dispatch]) -> list[str]:
    """How runs are named: their path, with the dispatch name when one path holds several of them."""
    paths = [d.path or d.name for d in dispatches]
    return [f"{p} [{d.name}]" if paths.count(p) > 1 and p != d.name else p for p, d in zip(paths, dispatches)]


def run_set(dispatches: list[Dispatch]) -> RunSet:
    """The runs of one kernel over the first run's listing; runs whose listing differs are aligned to it.

    A run in which no instruction was traced (a failed capture, not a fast run) is left out, with a note,
    unless no run has any.
    """
    labels = _labels(dispatches)
    traced = [any(c.hit for c in d.code) for d in dispatches]
    problems = []
    if any(traced) and not all(traced):
        problems += [f"{lb}: no instruction traced in this run: left out" for lb, t in zip(labels, traced) if not t]
        labels = [lb for lb, t in zip(labels, traced) if t]
        dispatches = [d for d, t in zip(dispatches, traced) if t]
    ref = dispatches[0]
    stats = instruction_stats(ref)
    insts = [s.code for s in stats]
    ref_pairs = [(c.text, c.source) for c in insts]
    values = np.zeros((len(dispatches), len(insts), len(FIELDS)), np.int64)
    for r, d in enumerate(dispatches):
        code = [c for c in d.code if not c.is_label]
        cols = list(zip(range(len(code)), range(len(code))))
        if r and [(c.text, c.source) for c in code] != ref_pairs:
            al = align(ref_pairs, [(c.text, c.source) for c in code])
            cols = [(i, j) for i, j, _ in al.pairs if i is not None and j is not None]
            lost = len(code) - len(cols)
            problems.append(
                f"{labels[r]}: code differs from {labels[0]} (same kernel name); aligned to it"
                + (f", {lost} instructions not in it left out" if lost else "")
            )
        for i, j in cols:
            c = code[j]
            values[r, i] = (c.latency, c.stall, c.hit)
    targets = [d.target for d in dispatches]
    if any(not same_gpu(targets[0], t) for t in targets):
        problems.append(f"runs on different GPUs: {', '.join(sorted({t.display for t in targets}))}")
    for label, d in zip(labels, dispatches):
        problems += [f"{label}: {p}" for p in d.problems]
    return RunSet(
        kernel_of(ref),
        labels,
        targets,
        [len(d.waves) for d in dispatches],
        insts,
        [s.type for s in stats],
        values,
        problems,
    )


def _has_source(*sets: RunSet) -> bool:
    return any(c.source for rs in sets for c in rs.insts)


def _keys(rs: RunSet, by: str, frame: str, rename=None) -> list[str]:
    """The row key of each instruction of `rs` (line, file or type; rename maps before-side locations)."""
    if by == "type":
        return list(rs.types)
    out = []
    for c in rs.insts:
        loc = frame_of(c.source, frame)
        if loc and rename:
            loc = rename(loc)
        if by == "file":
            out.append(file_of(loc) if loc else NO_FILE)
        else:
            out.append(loc or NO_SOURCE)
    return out


def _group(values: np.ndarray, keys: list[str]) -> dict[str, np.ndarray]:
    """(runs, insts, FIELDS) summed over the instructions of each key -> {key: (runs, FIELDS)}."""
    idx: dict[str, list[int]] = defaultdict(list)
    for j, k in enumerate(keys):
        idx[k].append(j)
    return {k: values[:, js, :].sum(axis=1) for k, js in idx.items()}


def _executed(v: np.ndarray) -> bool:
    return bool(v[:, FIELDS.index("hits")].any())


def resolve_by(by: str | None, *sets: RunSet) -> tuple[str, list[str]]:
    """`by=None`: source lines, or instructions when a side has none (as `hotspots` does)."""
    if by is not None:
        return by, []
    if all(_has_source(rs) for rs in sets):
        return "line", []
    if _has_source(*sets):
        return "instruction", ["one side has no source lines: compared by instruction"]
    return "instruction", ["no source lines (the code object has no DWARF line table): compared by instruction"]


# ----------------------------------------------------------------------------------------------- diff


class KernelDiff(Record):
    kernel: str
    before: RunSet
    after: RunSet
    total: DiffRow
    types: list[DiffRow]  # per stall type, largest |stall delta| first
    rows: list[DiffRow]  # per `by`, largest |metric delta| first
    by: str
    metric: str
    alignment: dict[str, int]  # instructions same / changed / added / removed
    problems: list[str] = field(default_factory=list)

    def grew(self, metric: str | None = None) -> float | None:
        """Growth of the kernel total in percent (None when before is 0)."""
        return self.total.pct(metric or self.metric)

    @property
    def table(self) -> Table:
        """The rows as numpy columns: key, status, before_/after_/delta_ cycles, stall, hits (medians over
        runs), threshold and significant (for `metric`; None without a noise estimate)."""
        m = self.metric
        return Table.from_rows(
            [
                {
                    "key": r.key,
                    "status": r.status,
                    **{f"{side}_{f}": getattr(r, side)[f].median for side in ("before", "after") for f in FIELDS},
                    **{f"delta_{f}": r.delta(f) for f in FIELDS},
                    "threshold": r.threshold(m),
                    "significant": r.significant(m),
                }
                for r in self.rows
            ],
            ["key", "status"]
            + [f"{p}_{f}" for f in FIELDS for p in ("before", "after", "delta")]
            + ["threshold", "significant"],
        )


class Unmatched(Record):
    kernel: str
    side: str  # "before" or "after"
    runs: list[str]


class Diff(Record):
    kernels: list[KernelDiff]
    unmatched: list[Unmatched]
    metric: str


def _rows(b: dict[str, np.ndarray], a: dict[str, np.ndarray], nb: int, na: int) -> list[DiffRow]:
    out = []
    for key in list(b) + [k for k in a if k not in b]:
        vb, va = b.get(key), a.get(key)
        if (vb is None or not _executed(vb)) and (va is None or not _executed(va)):
            continue
        status = ADDED if vb is None else REMOVED if va is None else ""
        vb = np.zeros((nb, len(FIELDS)), np.int64) if vb is None else vb
        va = np.zeros((na, len(FIELDS)), np.int64) if va is None else va
        out.append(DiffRow(key, spreads(vb), spreads(va), status))
    return out


def _instruction_rows(before: RunSet, after: RunSet, al: Alignment, frame: str) -> list[DiffRow]:
    nb, na = len(before.runs), len(after.runs)
    rows = []
    for i, j, status in al.pairs:
        vb = before.values[:, i, :] if i is not None else np.zeros((nb, len(FIELDS)), np.int64)
        va = after.values[:, j, :] if j is not None else np.zeros((na, len(FIELDS)), np.int64)
        if not (_executed(vb) or _executed(va)):
            continue
        cb = before.insts[i] if i is not None else None
        ca = after.insts[j] if j is not None else None
        c = ca if ca is not None else cb
        assert c is not None  # align never pairs nothing with nothing
        extra: dict = {"source": frame_of(c.source, frame), "vaddr": c.vaddr, "line": c.line}
        extra["type"] = after.types[j] if j is not None else before.types[i or 0]
        if cb is not None and ca is not None:
            if cb.text != ca.text:
                extra["before_text"] = cb.text
            if cb.vaddr != ca.vaddr:
                extra["before_vaddr"] = cb.vaddr
            src_b = frame_of(cb.source, frame)
            if src_b != extra["source"]:
                extra["before_source"] = src_b
        rows.append(DiffRow(c.text, spreads(vb), spreads(va), status, extra))
    return rows


def diff_kernel(
    before: RunSet, after: RunSet, by: str | None = None, frame: str = "inner", metric: str = "cycles"
) -> KernelDiff:
    """Before/after rows of one kernel; instructions are paired by `align` when the code changed."""
    by, problems = resolve_by(by, before, after)
    al = align(before.pairs, after.pairs)
    nb, na = len(before.runs), len(after.runs)
    total = DiffRow("total", spreads(before.total()), spreads(after.total()))
    by_type = _rows(_group(before.values, before.types), _group(after.values, after.types), nb, na)
    by_type.sort(
        key=lambda r: (
            -abs(r.delta("stall")),
            -max(r.before["stall"].median, r.after["stall"].median),
            STALL_TYPES.index(r.key),
        )
    )
    types = [r for r in by_type if any(r.before["stall"].values) or any(r.after["stall"].values)]
    mark([total])
    mark(by_type)
    if by == "instruction":
        rows = _instruction_rows(before, after, al, frame)
    elif by == "type":
        rows = by_type
    else:
        rename = al.location if al.lines else None
        kb = _keys(before, by, frame, rename)
        rows = _rows(_group(before.values, kb), _group(after.values, _keys(after, by, frame)), nb, na)
        if rename:
            was = dict(zip(kb, _keys(before, by, frame)))
            for r in rows:
                if r.key in was and was[r.key] != r.key:
                    r.extra["before_key"] = was[r.key]
    if by != "type":
        mark(rows)
    rows = sorted(
        rows, key=lambda r: (-abs(r.delta(metric)), -max(r.before[metric].median, r.after[metric].median), r.key)
    )
    wb, wa = statistics.median(before.waves), statistics.median(after.waves)
    if wb != wa:
        problems.append(f"traced waves differ ({wb:g} before, {wa:g} after): totals are sums over traced waves")
    if not same_gpu(before.targets[0], after.targets[0]):
        problems.append(f"different GPUs: {before.archs[0]} before, {after.archs[0]} after")
    problems += [f"before: {p}" for p in before.problems] + [f"after: {p}" for p in after.problems]
    return KernelDiff(before.kernel, before, after, total, types, rows, by, metric, al.counts(), problems)


def diff(
    before: list[Dispatch],
    after: list[Dispatch],
    by: str | None = None,
    frame: str = "inner",
    metric: str = "cycles",
) -> Diff:
    """Compare two sets of dispatches kernel by kernel (matched by name; the rest listed as unmatched)."""
    if by is not None and by not in COMPARE_BY:
        raise ValueError(by)
    if metric not in METRICS:
        raise ValueError(metric)
    gb, ga = group_runs(before), group_runs(after)
    kernels = [diff_kernel(run_set(gb[k]), run_set(ga[k]), by, frame, metric) for k in gb if k in ga]
    unmatched = [Unmatched(k, "before", _labels(ds)) for k, ds in gb.items() if k not in ga]
    unmatched += [Unmatched(k, "after", _labels(ds)) for k, ds in ga.items() if k not in gb]
    return Diff(kernels, unmatched, metric)


# ---------------------------------------------------------------------------------------------- noise


def regressions(result: Diff, pct: float, metric: str) -> list[str]:
    """Why a CI gate fails: one line per kernel whose total `metric` grew by more than `pct` percent."""
    out = []
    for kd in result.kernels:
        grew, after = kd.grew(metric), kd.total.after[metric].median
        if (grew is None and after > 0) or (grew is not None and grew > pct):
            how = "from 0" if grew is None else f"{grew:+.1f}%"
            sig = kd.total.significant(metric)
            note = "" if sig is None else " (significant)" if sig else " (within run-to-run noise)"
            out.append(f"{kd.kernel}: total {metric} grew {how} > {pct:g}%{note}")
    return out


class NoiseRow(Record):
    key: str
    values: dict[str, Spread]
    extra: dict = field(default_factory=dict)


class KernelNoise(Record):
    kernel: str
    runs: RunSet
    total: NoiseRow
    types: list[NoiseRow]
    rows: list[NoiseRow]  # largest median `metric` first
    by: str
    metric: str
    problems: list[str] = field(default_factory=list)

    @property
    def table(self) -> Table:
        """The rows as numpy columns: key, then median_, mad_, min_, max_ of cycles, stall and hits."""
        return Table.from_rows(
            [
                {"key": r.key}
                | {
                    f"{k}_{f}": v
                    for f in FIELDS
                    for k, v in (
                        ("median", r.values[f].median),
                        ("mad", r.values[f].mad),
                        ("min", r.values[f].lo),
                        ("max", r.values[f].hi),
                    )
                }
                for r in self.rows
            ],
            ["key"] + [f"{k}_{f}" for f in FIELDS for k in ("median", "mad", "min", "max")],
        )


def noise_kernel(rs: RunSet, by: str | None = None, frame: str = "inner", metric: str = "cycles") -> KernelNoise:
    """Run-to-run spread of one kernel's total, stall types and rows."""
    by, problems = resolve_by(by, rs)
    if by == "instruction":
        keys = [str(j) for j in range(len(rs.insts))]
    else:
        keys = _keys(rs, by, frame)
    grouped = _group(rs.values, keys)
    rows = []
    for key, v in grouped.items():
        if not _executed(v):
            continue
        if by == "instruction":
            c = rs.insts[int(key)]
            extra = {"source": frame_of(c.source, frame), "vaddr": c.vaddr, "line": c.line, "type": rs.types[int(key)]}
            rows.append(NoiseRow(c.text, spreads(v), extra))
        else:
            rows.append(NoiseRow(key, spreads(v)))
    types = [NoiseRow(k, spreads(v)) for k, v in _group(rs.values, rs.types).items() if _executed(v)]
    return KernelNoise(
        rs.kernel,
        rs,
        NoiseRow("total", spreads(rs.total())),
        sorted(types, key=lambda r: (-r.values["stall"].median, r.key)),
        sorted(rows, key=lambda r: (-r.values[metric].median, r.key)),
        by,
        metric,
        problems + rs.problems,
    )


def noise(
    dispatches: list[Dispatch], by: str | None = None, frame: str = "inner", metric: str = "cycles"
) -> list[KernelNoise]:
    """Run-to-run spread per kernel (dispatches of one kernel name are its runs)."""
    if by is not None and by not in COMPARE_BY:
        raise ValueError(by)
    if metric not in METRICS:
        raise ValueError(metric)
    return [noise_kernel(run_set(ds), by, frame, metric) for ds in group_runs(dispatches).values()]
