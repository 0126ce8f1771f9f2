"""Print `attdec diff` and `attdec noise` results as a terminal table, markdown, JSON or CSV.

The table and markdown forms are built once as a list of blocks (title, text lines, tables) and then
rendered either as text tables or as GitHub markdown, so both say the same thing.
"""

from __future__ import annotations

import numpy as np

from attdec.analysis.compare import FIELDS, METRICS, NOISE_RULE, Diff, DiffRow, KernelDiff, KernelNoise, Spread
from attdec.analysis.stats import FDR, t_critical
from attdec.model.record import Record, field
from attdec.report import COMPARE_FORMATS
from attdec.report.base import Reporters, Writer
from attdec.report.common import (
    Col,
    common_dir,
    console,
    draw_table,
    human,
    strip_dir,
    write_csv,
    write_json,
    write_md_table,
)

LEGEND = (
    "noise: standard error of Δ from the runs' spread, each row's pooled with its table's rows (moderated t); "
    f"mark: sig = the runs' means differ by that t-test, false discovery rate {FDR:g} over the table "
    "(Benjamini–Hochberg); noise = not that; ? = one run per side, no estimate (docs/diff.md)"
)


def num(x: float | None):
    """JSON number: an int when integral (medians of two runs can end in .5)."""
    if x is None:
        return None
    return int(x) if float(x).is_integer() else round(float(x), 3)


def signed(x: float) -> str:
    return "0" if x == 0 else ("+" if x > 0 else "-") + human(abs(x))


def pct_text(row: DiffRow, f: str) -> str:
    p = row.pct(f)
    if p is None:
        return "new" if row.after[f].median else ""
    return f"{p:+.1f}%"


def mark(sig: bool | None) -> str:
    return "?" if sig is None else "sig" if sig else "noise"


def verdict(sig: bool | None) -> str:
    return "no noise estimate (one run per side)" if sig is None else "significant" if sig else "within noise"


# --------------------------------------------------------------------------------------------- blocks


class Block(Record):
    kind: str  # "title", "line", "note", "caption", "table"
    text: str = ""
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    right: set[int] = field(default_factory=set)
    wide: int | None = None  # column that may wrap (the key), if any


def render_text(blocks: list[Block], out) -> None:
    con = console(out)
    for b in blocks:
        if b.kind == "title" or b.kind == "caption":
            con.print(b.text, style="bold")
        elif b.kind == "note":
            con.print(f"  note: {b.text}", style="yellow")
        elif b.kind == "line":
            con.print(b.text)
        else:
            cols = [
                Col(h, "text" if i == b.wide else "whole", "right" if i in b.right else "left", min=12)
                for i, h in enumerate(b.header)
            ]
            draw_table(con, cols, b.rows)


def render_md(blocks: list[Block], out) -> None:
    for b in blocks:
        if b.kind == "title":
            out.write(f"\n### {b.text}\n\n")
        elif b.kind == "caption":
            out.write(f"\n**{b.text}**\n\n")
        elif b.kind == "note":
            out.write(f"> note: {b.text}\n\n")
        elif b.kind == "line":
            out.write(b.text.strip() + "  \n" if b.text.strip() else "\n")
        else:
            write_md_table(out, [h.strip() for h in b.header], [[c.strip() for c in r] for r in b.rows], b.right)
            out.write("\n")


# ----------------------------------------------------------------------------------------------- diff


def _runs_lines(sides: dict[str, list[str]]) -> list[Block]:
    """'before  2 runs: a, b' per side, with the runs' common folder said once."""
    prefix = common_dir([r for runs in sides.values() for r in runs])
    out = [Block("line", f"  runs under {prefix}/")] if prefix else []
    for side, runs in sides.items():
        names = ", ".join(strip_dir(r, prefix) for r in runs)
        out.append(Block("line", f"  {side:<7} {len(runs)} run{'s' if len(runs) != 1 else ''}: {names}"))
    return out


def _total_line(row: DiffRow, f: str) -> str:
    se = row.noise(f)
    noise = f"noise ±{human(se)}" if se is not None else "noise ?"
    return (
        f"  {f:<7} {human(row.before[f].median)} → {human(row.after[f].median)}   "
        f"{signed(row.delta(f))} ({pct_text(row, f) or '0%'})   {noise}   {verdict(row.significant(f))}"
    )


def _delta_cells(row: DiffRow, f: str) -> list[str]:
    se = row.noise(f)
    return [
        human(row.before[f].median),
        human(row.after[f].median),
        signed(row.delta(f)),
        pct_text(row, f),
        "-" if se is None else f"±{human(se)}",
        mark(row.significant(f)),
    ]


def diff_blocks(d: Diff, top: int) -> list[Block]:
    m = d.metric
    out: list[Block] = []
    for n, kd in enumerate(d.kernels):
        if n:
            out.append(Block("line", ""))
        out += _kernel_blocks(kd, top, m)
    if d.unmatched:
        out.append(Block("line", ""))
        out.append(Block("caption", "unmatched kernels (no kernel of that name on the other side)"))
        for u in d.unmatched:
            out.append(Block("line", f"  {u.side} only: {u.kernel}  ({', '.join(u.runs)})"))
    if not d.kernels:
        out.append(Block("note", "no kernel name appears on both sides: nothing to compare"))
    elif any(kd.rows or kd.types for kd in d.kernels):
        out.append(Block("line", ""))
        out.append(Block("line", LEGEND))
    return out


def _kernel_blocks(kd: KernelDiff, top: int, m: str) -> list[Block]:
    archs = sorted({*kd.before.archs, *kd.after.archs})
    out = [Block("title", f"{kd.kernel}  [{', '.join(archs)}]")]
    out += _runs_lines({"before": kd.before.runs, "after": kd.after.runs})
    for f in METRICS:
        out.append(Block("line", _total_line(kd.total, f)))
    al = kd.alignment
    out.append(
        Block(
            "line",
            f"  waves {', '.join(map(str, kd.before.waves))} → {', '.join(map(str, kd.after.waves))}   "
            f"instructions {al['same']} same, {al['changed']} changed, {al['added']} added, {al['removed']} removed",
        )
    )
    out += [Block("note", p) for p in kd.problems]
    if kd.types:
        out.append(Block("caption", "stall by type"))
        out.append(
            Block(
                "table",
                header=["  type", "before", "after", "Δ stall", "Δ%", "noise", "mark"],
                rows=[[f"  {r.key}", *_delta_cells(r, "stall")] for r in kd.types],
                right={1, 2, 3, 4, 5},
            )
        )
    rows = kd.rows[:top] if top else kd.rows
    if not rows:
        out.append(Block("line", "  (no executed instructions)"))
        return out
    what, inst, prefix = _rows_caption(out, kd.by, rows, len(kd.rows), f"|Δ {m}|")
    header = ["#", "before", "after", f"Δ {m}", "Δ%", "noise", "mark", "status"]
    header += ["instruction", "source"] if inst else [what]
    table = []
    for i, r in enumerate(rows, 1):
        cells = [str(i), *_delta_cells(r, m)]
        if inst:
            text = f"{r.extra['before_text']} → {r.key}" if "before_text" in r.extra else r.key
            where = strip_dir(r.extra.get("source", ""), prefix) or f"0x{r.extra.get('vaddr', 0):x}"
            if "before_source" in r.extra:
                where += f" (was {strip_dir(r.extra['before_source'], prefix)})"
            cells += [r.status, text, where]
        else:
            status = r.status
            if "before_key" in r.extra:
                status = f"was {strip_dir(r.extra['before_key'], prefix)}"
            cells += [status, strip_dir(r.key, prefix)]
        table.append(cells)
    out.append(Block("table", header=header, rows=table, right={0, 1, 2, 3, 4, 5}, wide=len(header) - 1 - inst))
    return out


WHAT = {"line": "source line", "instruction": "instruction", "file": "source file", "type": "stall type"}


def _rows_caption(out: list[Block], by: str, rows: list, total: int, ranked: str) -> tuple[str, bool, str]:
    """Append 'top N of M by <what>, ranked by <ranked> (paths under P/)'; return (what, by instruction, P)."""
    inst = by == "instruction"
    prefix = "" if by == "type" else common_dir([r.extra.get("source", "") if inst else r.key for r in rows])
    caption = f"top {len(rows)} of {total} by {WHAT[by]}, ranked by {ranked}"
    out.append(Block("caption", caption + (f" (paths under {prefix}/)" if prefix else "")))
    return WHAT[by], inst, prefix


def _spread_json(s: Spread) -> dict:
    return {
        "median": num(s.median),
        "mad": num(s.mad),
        "noise": num(s.noise),
        "min": s.lo,
        "max": s.hi,
        "values": list(s.values),
    }


def row_json(r: DiffRow, metric: str) -> dict:
    out = {
        "key": r.key,
        "status": r.status,
        "before": {f: num(r.before[f].median) for f in FIELDS},
        "after": {f: num(r.after[f].median) for f in FIELDS},
        "delta": {f: num(r.delta(f)) for f in FIELDS},
        "delta_pct": {f: num(r.pct(f)) for f in FIELDS},
        "significant": r.significant(metric),
        "noise": {
            f: {"se": num(r.noise(f)), "threshold": num(r.threshold(f)), "significant": r.significant(f)}
            for f in METRICS
        },
        "values": {  # per run
            "before": {f: list(r.before[f].values) for f in FIELDS},
            "after": {f: list(r.after[f].values) for f in FIELDS},
        },
    }
    out.update(r.extra)
    return out


def diff_json(d: Diff, top: int) -> dict:
    kernels = []
    for kd in d.kernels:
        rows = kd.rows[:top] if top else kd.rows
        k: dict = {"name": kd.kernel}
        t = row_json(kd.total, d.metric)
        k.update({x: t[x] for x in ("before", "after", "delta", "delta_pct", "significant", "noise", "values")})
        k["spread"] = {
            side: {f: _spread_json(getattr(kd.total, side)[f]) for f in METRICS} for side in ("before", "after")
        }
        k["arch"] = {"before": kd.before.archs[0], "after": kd.after.archs[0]}
        k["runs"] = {"before": kd.before.runs, "after": kd.after.runs}
        k["waves"] = {"before": kd.before.waves, "after": kd.after.waves}
        k["alignment"] = kd.alignment
        k["by_type"] = [row_json(r, "stall") for r in kd.types]
        k["by"] = kd.by
        k["rows_total"] = len(kd.rows)
        k["rows"] = [row_json(r, d.metric) for r in rows]
        if kd.problems:
            k["problems"] = kd.problems
        kernels.append(k)
    return {
        "metric": d.metric,
        "noise_rule": NOISE_RULE,
        "kernels": kernels,
        "unmatched": [{"kernel": u.kernel, "side": u.side, "runs": u.runs} for u in d.unmatched],
    }


DIFF_CSV = ["kernel", "kind", "key", "status"]
for _f in FIELDS:
    DIFF_CSV += [f"before_{_f}", f"after_{_f}", f"delta_{_f}", f"delta_pct_{_f}"]
for _f in METRICS:
    DIFF_CSV += [f"noise_{_f}", f"significant_{_f}"]
DIFF_CSV += ["source", "vaddr", "before_key"]


def _csv_bool(x: bool | None) -> str:
    return "" if x is None else str(bool(x)).lower()


def _csv_row(kernel: str, kind: str, r: DiffRow) -> list:
    cells = [kernel, kind, r.key, r.status]
    for f in FIELDS:
        p = r.pct(f)
        cells += [num(r.before[f].median), num(r.after[f].median), num(r.delta(f)), "" if p is None else f"{p:.4f}"]
    for f in METRICS:
        se = r.noise(f)
        cells += ["" if se is None else num(se), _csv_bool(r.significant(f))]
    before_key = r.extra.get("before_key", r.extra.get("before_text", ""))
    return [*cells, r.extra.get("source", ""), r.extra.get("vaddr", ""), before_key]


def diff_csv(d: Diff, top: int) -> list[list]:
    rows = []
    for kd in d.kernels:
        rows.append(_csv_row(kd.kernel, "total", kd.total))
        rows += [_csv_row(kd.kernel, "type", r) for r in kd.types]
        rows += [_csv_row(kd.kernel, kd.by, r) for r in (kd.rows[:top] if top else kd.rows)]
    for u in d.unmatched:
        rows.append([u.kernel, "unmatched", "", u.side] + [""] * (len(DIFF_CSV) - 4))
    return rows


def _print(fmt: str, out, as_json, csv_header: list[str], as_csv, as_blocks) -> None:
    if fmt == "json":
        write_json(as_json(), out)
    elif fmt == "csv":
        write_csv(csv_header, as_csv(), out)
    else:
        (render_md if fmt == "md" else render_text)(as_blocks(), out)


def print_diff(d: Diff, fmt: str, top: int, out) -> None:
    _print(fmt, out, lambda: diff_json(d, top), DIFF_CSV, lambda: diff_csv(d, top), lambda: diff_blocks(d, top))


# ---------------------------------------------------------------------------------------------- noise


def floor(s: Spread) -> float | None:
    """The smallest change a diff of two sides as noisy as `s`, tested alone (the kernel total), calls
    significant: the t-test's critical value at the false discovery rate x the delta's standard error."""
    if s.sd is None:
        return None
    n = len(s.values)
    return float(t_critical(FDR, np.array([2 * n - 2]))[0]) * s.sd * (2 / n) ** 0.5


def _spread_cells(s: Spread) -> list[str]:
    rel = s.relative
    return [
        human(s.median),
        "-" if s.mad is None else human(s.mad),
        "" if rel is None else f"{100 * rel:.1f}%",
        f"{human(s.lo)}–{human(s.hi)}",
    ]


def noise_blocks(kernels: list[KernelNoise], top: int) -> list[Block]:
    out: list[Block] = []
    for n, kn in enumerate(kernels):
        if n:
            out.append(Block("line", ""))
        out += _noise_kernel_blocks(kn, top)
    return out


def _noise_kernel_blocks(kn: KernelNoise, top: int) -> list[Block]:
    rs, m = kn.runs, kn.metric
    out = [Block("title", f"{kn.kernel}  [{', '.join(sorted(set(rs.archs)))}]")]
    out += _runs_lines({"runs": rs.runs})
    for f in METRICS:
        s = kn.total.values[f]
        rel = "" if s.relative is None else f" ({100 * s.relative:.2f}%)"
        out.append(
            Block(
                "line",
                f"  {f:<7} median {human(s.median)}   MAD {'-' if s.mad is None else human(s.mad)}{rel}   "
                f"range {human(s.lo)}–{human(s.hi)}",
            )
        )
    out.append(Block("line", f"  waves {', '.join(map(str, rs.waves))}"))
    out += [Block("note", p) for p in kn.problems]
    fl = floor(kn.total.values[m])
    if fl is None:
        out.append(Block("line", "  one run: no spread to measure (give at least 2 runs of this kernel)"))
        return out
    med = kn.total.values[m].median
    out.append(
        Block(
            "line",
            f"  a diff against runs as noisy as these calls a change of the total {m} significant above "
            f"±{human(fl)}" + (f" ({100 * fl / med:.1f}%)" if med else ""),
        )
    )
    if kn.types:
        out.append(Block("caption", "stall by type"))
        out.append(
            Block(
                "table",
                header=["  type", "median", "MAD", "MAD%", "min–max"],
                rows=[[f"  {r.key}", *_spread_cells(r.values["stall"])] for r in kn.types if r.values["stall"].hi],
                right={1, 2, 3, 4},
            )
        )
    rows = kn.rows[:top] if top else kn.rows
    what, inst, prefix = _rows_caption(out, kn.by, rows, len(kn.rows), f"median {m}")
    header = ["#", f"median {m}", "MAD", "MAD%", "min–max"] + (["instruction", "source"] if inst else [what])
    table = []
    for i, r in enumerate(rows, 1):
        cells = [str(i), *_spread_cells(r.values[m])]
        if inst:
            cells += [r.key, strip_dir(r.extra.get("source", ""), prefix) or f"0x{r.extra.get('vaddr', 0):x}"]
        else:
            cells.append(strip_dir(r.key, prefix))
        table.append(cells)
    out.append(Block("table", header=header, rows=table, right={0, 1, 2, 3, 4}, wide=len(header) - 1 - inst))
    return out


def noise_json(kernels: list[KernelNoise], top: int) -> dict:
    out = []
    for kn in kernels:
        rows = kn.rows[:top] if top else kn.rows
        out.append(
            {
                "name": kn.kernel,
                "runs": kn.runs.runs,
                "arch": kn.runs.archs[0],
                "waves": kn.runs.waves,
                "total": {f: _spread_json(kn.total.values[f]) for f in FIELDS},
                "floor": {f: num(floor(kn.total.values[f])) for f in METRICS},
                "by_type": [{"key": r.key, **{f: _spread_json(r.values[f]) for f in FIELDS}} for r in kn.types],
                "by": kn.by,
                "metric": kn.metric,
                "rows_total": len(kn.rows),
                "rows": [{"key": r.key, **{f: _spread_json(r.values[f]) for f in FIELDS}, **r.extra} for r in rows],
                **({"problems": kn.problems} if kn.problems else {}),
            }
        )
    return {"noise_rule": NOISE_RULE, "kernels": out}


NOISE_CSV = ["kernel", "runs", "kind", "key"]
for _f in FIELDS:
    NOISE_CSV += [f"median_{_f}", f"mad_{_f}", f"min_{_f}", f"max_{_f}"]
NOISE_CSV += ["source", "vaddr"]


def noise_csv(kernels: list[KernelNoise], top: int) -> list[list]:
    rows = []
    for kn in kernels:
        items = [("total", kn.total)] + [("type", r) for r in kn.types]
        items += [(kn.by, r) for r in (kn.rows[:top] if top else kn.rows)]
        for kind, r in items:
            cells = [kn.kernel, len(kn.runs.runs), kind, r.key]
            for f in FIELDS:
                s = r.values[f]
                cells += [num(s.median), num(s.mad) if s.mad is not None else "", s.lo, s.hi]
            rows.append([*cells, r.extra.get("source", ""), r.extra.get("vaddr", "")])
    return rows


def print_noise(kernels: list[KernelNoise], fmt: str, top: int, out) -> None:
    _print(
        fmt,
        out,
        lambda: noise_json(kernels, top),
        NOISE_CSV,
        lambda: noise_csv(kernels, top),
        lambda: noise_blocks(kernels, top),
    )


def diff_reporters(top: int) -> Reporters:
    """`attdec diff`'s formats (the result: a Diff), `top` rows per kernel."""
    return {fmt: Writer(print_diff, fmt=fmt, top=top) for fmt in COMPARE_FORMATS}


def noise_reporters(top: int) -> Reporters:
    """`attdec noise`'s formats (the result: a KernelNoise per kernel), `top` rows per kernel."""
    return {fmt: Writer(print_noise, fmt=fmt, top=top) for fmt in COMPARE_FORMATS}
