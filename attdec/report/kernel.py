"""Print `KernelSummary`s: the `attdec kernel` table and JSON, and the one line `hotspots` shows."""

from __future__ import annotations

from attdec.analysis.kernel import LISTING, KernelSummary
from attdec.analysis.occupancy import SLOTS, Theoretical
from attdec.model import KernelResources
from attdec.report.base import Reporters, Writer
from attdec.report.common import Col, console, draw_table, human, pct, write_csv, write_json


def _at_least(s: KernelSummary) -> str:
    return "≥ " if s.resources is not None and s.resources.source == LISTING else ""


def _waves(th: Theoretical) -> str:
    return f"{'≤ ' if th.bound == 'at most' else ''}{th.waves_per_simd}"


def _limit(th: Theoretical) -> str:
    return f"at the {SLOTS} limit" if th.limited_by == SLOTS else f"{th.limited_by}-limited"


def theoretical_text(s: KernelSummary) -> str:
    """'4 waves/SIMD (VGPR-limited)', '≤ 8 on gfx90a, …; ≤ 10 on gfx908', or 'unknown'."""
    th = s.theoretical
    if th is not None and th.waves_per_simd is not None:
        return f"{_waves(th)} waves/SIMD ({_limit(th)})"
    if s.candidates:
        ranked = sorted(s.candidates.items(), key=lambda kv: -kv[0].count(","))  # the larger group first
        same = len({t.limited_by for _, t in ranked}) == 1
        parts = [f"{_waves(t)} on {n.replace(', ', '/')}" + ("" if same else f" ({_limit(t)})") for n, t in ranked]
        parts[0] = parts[0].replace(" on ", " waves/SIMD on ", 1)
        return ", ".join(parts) + (f" ({_limit(ranked[0][1])})" if same else "")
    return "theoretical occupancy unknown"


def occupancy_line(s: KernelSummary) -> str:
    """The hotspots header line: 'VGPR 128, SGPR 24, LDS 16.0K B, wave64 → 4 waves/SIMD (VGPR-limited),
    achieved 3.2 mean'."""
    r, ge = s.resources, _at_least(s)
    parts = []
    if r is not None:
        if r.vgpr is not None:
            parts.append(f"VGPR {ge}{r.vgpr}" + (f" (AGPR {r.agpr})" if r.agpr else ""))
        if r.sgpr is not None:
            parts.append(f"SGPR {ge}{r.sgpr}")
        if r.lds_bytes is not None:
            parts.append("no LDS instructions" if ge and not r.lds_bytes else f"LDS {human(r.lds_bytes)} B")
        if r.scratch_bytes:
            parts.append(f"scratch {human(r.scratch_bytes)} B")
        if r.wave_size:
            parts.append(f"wave{r.wave_size}")
    text = (", ".join(parts) + " → " if parts else "resources unknown → ") + theoretical_text(s)
    a = s.achieved
    if a is not None:
        text += f", achieved {a.mean:,.2f} mean, peak {a.peak:,}{impossible(a)}"
    return text


def impossible(a) -> str:
    """The flag an achieved figure past the GPU's wave limit carries wherever it is printed."""
    return f" (IMPOSSIBLE: a SIMD holds at most {a.over_limit}: damaged records)" if a.over_limit else ""


def _flags(r) -> str:
    out = []
    if r.dynamic_stack is not None:
        out.append("dynamic stack" if r.dynamic_stack else "no dynamic stack")
    if r.wgp_mode is not None:
        out.append("WGP mode" if r.wgp_mode else "CU mode")
    if r.xnack:
        out.append(f"xnack {r.xnack}")
    if r.sramecc:
        out.append(f"sramecc {r.sramecc}")
    return ", ".join(out) or "-"


def _val(v, unit: str = "", prefix: str = "") -> str:
    return "unknown" if v is None else f"{prefix}{v:,}{unit}"


def _resource_rows(r: KernelResources, ge: str) -> list[tuple[str, str]]:
    vgpr = _val(r.vgpr, prefix=ge)
    if r.agpr:
        vgpr += f"  ({r.arch_vgpr} arch + {r.agpr} AGPR)"
    wg = "unknown"
    if r.workgroup_size:
        wg = f"{r.workgroup_size:,} work-items" + ("" if r.workgroup_size_exact else " at most (max flat size)")
    rounded = f"  (rounded up: {', '.join(r.rounded)})" if r.rounded else ""
    return [
        ("VGPR", vgpr + rounded),
        ("SGPR", _val(r.sgpr, prefix=ge)),
        ("LDS", _val(r.lds_bytes, " B static") + ("; dynamic LDS is added at launch" if r.lds_bytes else "")),
        ("scratch", _val(r.scratch_bytes, " B per work-item")),
        ("wave size", _val(r.wave_size)),
        ("workgroup", wg),
        ("kernarg", _val(r.kernarg_bytes, " B")),
        ("spills", f"{r.sgpr_spill} SGPR, {r.vgpr_spill} VGPR" if r.sgpr_spill is not None else "unknown"),
        ("flags", _flags(r)),
    ]


def _kv_table(con, rows: list[tuple[str, str]]) -> None:
    """Key and value per line, the keys indented under a section heading; long values fold."""
    draw_table(con, [Col("", justify="left"), Col("", "text", "left", min=20)], rows, indent=4, header=False)


def _theoretical_rows(th: Theoretical, label: str = "") -> list[tuple[str, str]]:
    if th.waves_per_simd is None:
        return []
    per = f", {'≤ ' if th.bound == 'at most' else ''}{th.waves_per_unit} per {th.unit}" if th.waves_per_unit else ""
    head = f"{_waves(th)} waves/SIMD{per} ({_limit(th)})"
    limits = "   ".join(f"{k} {v}" for k, v in th.limits.items())
    return [(f"waves{label}", head), ("limits", f"{limits}  (waves/SIMD each allows)")]


def _section(con, s: KernelSummary) -> None:
    title = f"{s.kernel or '(kernel unknown)'}" + (f"  [{s.dispatch}]" if s.dispatch else "")
    con.print(f"{title}  {s.arch}", style="bold")
    if s.resources is not None:
        src = s.resources.source
        con.print(f"  resources ({'lower bounds, read off the listing' if src == LISTING else 'from the ' + src})")
        _kv_table(con, _resource_rows(s.resources, _at_least(s)))
    else:
        con.print("  resources unknown")
    con.print("  theoretical occupancy")
    rows = []
    if s.theoretical is not None:
        rows = _theoretical_rows(s.theoretical)
    for names, th in sorted(s.candidates.items(), key=lambda kv: -kv[0].count(",")):
        rows += _theoretical_rows(th, f" on {names}")
    _kv_table(con, rows or [("waves", "unknown")])
    if s.dispatch is not None:
        a = s.achieved
        con.print("  achieved occupancy")
        if a is None:
            _kv_table(con, [("waves", "unknown (no wave start/end records)")])
        else:
            hist, unit = "  ".join(f"{w}: {pct(f)}" for w, f in a.histogram), s.achieved_unit
            units = unit + "s" * (a.units != 1)
            _kv_table(
                con,
                [
                    (
                        "waves",
                        f"{a.mean:,.2f}/SIMD mean, peak {a.peak:,}; {a.mean_per_unit:,.2f} per {unit}{impossible(a)}",
                    ),
                    (
                        "over",
                        f"{a.waves:,} waves on {a.simds:,} SIMDs of {a.units:,} {units}, {human(a.cycles)} cycles",
                    ),
                    ("time share", hist),
                ],
            )
    notes = list(s.notes)
    if s.theoretical is not None:
        notes += s.theoretical.notes
    elif s.candidates:
        notes += next(iter(s.candidates.values())).notes
    if s.achieved is not None:
        notes += s.achieved.notes
    for n in dict.fromkeys(notes):
        con.print(f"  note: {n}", style="yellow")


def print_table(summaries: list[KernelSummary], out) -> None:
    con = console(out)
    for i, s in enumerate(summaries):
        if i:
            con.print()
        _section(con, s)


def _theoretical_json(th: Theoretical) -> dict:
    return {
        "waves_per_simd": th.waves_per_simd,
        "limited_by": th.limited_by,
        "bound": th.bound,
        "per_unit": th.waves_per_unit,
        "unit": th.unit,
        "limits": th.limits,
        "notes": th.notes,
    }


def to_json(s: KernelSummary) -> dict:
    r = s.resources
    th, a = s.theoretical, s.achieved
    occ: dict[str, object] = {
        "theoretical": th.waves_per_simd if th else None,
        "limited_by": th.limited_by if th else None,
        "achieved_mean": round(a.mean, 4) if a else None,
        "bound": th.bound if th else None,
        "per_unit": th.waves_per_unit if th else None,
        "unit": th.unit if th else None,
        "limits": th.limits if th else None,
        "candidates": {names: _theoretical_json(t) for names, t in s.candidates.items()} or None,
        "achieved_peak": a.peak if a else None,
        "achieved_histogram": [[w, round(f, 6)] for w, f in a.histogram] if a else None,
        "achieved_per_unit_mean": round(a.mean_per_unit, 4) if a else None,
        "achieved_unit": s.achieved_unit if a else None,
        "achieved_simds": a.simds if a else None,
        "achieved_waves": a.waves if a else None,
        "achieved_over_limit": a.over_limit if a else None,
        "notes": (th.notes if th else []) + (a.notes if a else []),
    }
    out: dict[str, object] = {"name": s.kernel, "arch": s.arch}
    if s.dispatch is not None:
        out["dispatch"] = s.dispatch
    keys = ("vgpr", "agpr", "sgpr", "lds_bytes", "scratch_bytes", "wave_size", "workgroup_size")
    out.update({k: getattr(r, k) if r else None for k in keys})
    if r is not None:
        out.update(
            {
                "arch_vgpr": r.arch_vgpr,
                "workgroup_size_exact": r.workgroup_size_exact,
                "kernarg_bytes": r.kernarg_bytes,
                "sgpr_spill": r.sgpr_spill,
                "vgpr_spill": r.vgpr_spill,
                "flags": {
                    "dynamic_stack": r.dynamic_stack,
                    "wgp_mode": r.wgp_mode,
                    "wave32": None if r.wave_size is None else r.wave_size == 32,
                    "xnack": r.xnack,
                    "sramecc": r.sramecc,
                },
                "source": r.source,
                "lower_bounds": r.source == LISTING,
                "rounded": list(r.rounded),
            }
        )
    out["occupancy"] = occ
    out["notes"] = s.notes
    return out


def print_json(summaries: list[KernelSummary], out) -> None:
    write_json({"kernels": [to_json(s) for s in summaries]}, out)


CSV_HEADER = [
    "dispatch",
    "name",
    "arch",
    "vgpr",
    "agpr",
    "sgpr",
    "lds_bytes",
    "scratch_bytes",
    "wave_size",
    "workgroup_size",
    "theoretical",
    "limited_by",
    "achieved_mean",
    "achieved_peak",
    "source",
]


def print_csv(summaries: list[KernelSummary], out) -> None:
    rows = []
    for s in summaries:
        j = to_json(s)
        o = j["occupancy"]
        occ = (o["theoretical"], o["limited_by"], o["achieved_mean"], o["achieved_peak"])
        rows.append([j.get("dispatch", ""), *(j[k] for k in CSV_HEADER[1:10]), *occ, j.get("source", "")])
    write_csv(CSV_HEADER, [["" if v is None else v for v in r] for r in rows], out)


def reporters() -> Reporters:
    """`attdec kernel`'s formats (the result: a KernelSummary per dispatch or code-object kernel)."""
    return {"table": Writer(print_table), "json": Writer(print_json), "csv": Writer(print_csv)}
