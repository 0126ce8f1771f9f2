"""Print guided findings (`attdec advise`): a table, JSON (docs/advise.md) or markdown."""

from __future__ import annotations

from attdec.analysis.advise import Advice, Finding
from attdec.report.base import Reporters, Writer
from attdec.report.common import Col, console, draw_table, human, md_code, pct, write_json, write_md_table

JSON_VERSION = 1


def where_text(f: Finding) -> str:
    """Where a finding is, in one cell: the source line, else the instruction's address, else the kernel."""
    w = f.where
    parts = [w["source"]] if w.get("source") else []
    if w.get("address") is not None:
        parts.append(f"0x{w['address']:x}")
    if "se" in w:
        parts.append(f"se {w['se']} cu {w['cu']}")
    return " ".join(parts) or w.get("kernel") or w.get("dispatch", "")


def to_json(a: Advice) -> dict:
    return {
        "dispatch": a.dispatch,
        "kernel": a.kernel,
        "arch": a.arch,
        "cycles": a.cycles,
        "findings": [{**vars(f), "share": round(f.share, 4)} for f in a.findings],
        "not_applicable": [vars(s) for s in a.not_applicable],
    }


def print_json(advice: list[Advice], out) -> None:
    write_json({"version": JSON_VERSION, "dispatches": [to_json(a) for a in advice]}, out)


def print_table(advice: list[Advice], out) -> None:
    con = console(out)
    for n, a in enumerate(advice):
        if n:
            con.print()
        con.print(f"{a.kernel or a.dispatch}  [{a.dispatch}]  {a.arch}  {human(a.cycles)} cycles", style="bold")
        if not a.findings:
            con.print("  no findings")
        else:
            cols = [
                Col("#"),
                Col("cycles"),
                Col("share"),
                Col("rule", justify="left"),
                Col("finding", kind="text", justify="left", min=24),
                Col("where", kind="path", justify="left", min=16),
            ]
            rows = [
                [str(i), human(f.cycles), pct(f.share), f.rule, f.title, where_text(f)]
                for i, f in enumerate(a.findings, 1)
            ]
            draw_table(con, cols, rows, indent=2)
            for i, f in enumerate(a.findings, 1):
                con.print(f"  {i}. {f.rule}: {f.suggestion}")
                con.print("     evidence: " + ", ".join(f"{k} {_short(v)}" for k, v in f.evidence.items()))
        for s in a.not_applicable:
            con.print(f"  not applicable: {s.rule}: {s.reason}", style="dim")


def _short(v) -> str:
    if isinstance(v, list):
        return "[" + "; ".join(_short(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} {_short(x)}" for k, x in v.items()) + "}"
    return str(v)


def print_md(advice: list[Advice], out) -> None:
    for a in advice:
        out.write(f"### {md_code(a.kernel or a.dispatch)} · {a.arch} · {human(a.cycles)} cycles\n\n")
        if a.findings:
            rows = [
                [i, human(f.cycles), pct(f.share), md_code(f.rule), f.title, md_code(where_text(f)), f.suggestion]
                for i, f in enumerate(a.findings, 1)
            ]
            write_md_table(out, ["#", "cycles", "share", "rule", "finding", "where", "what to try"], rows, (0, 1, 2))
        else:
            out.write("No findings.\n")
        if a.not_applicable:
            out.write("\nNot applicable: " + "; ".join(f"{md_code(s.rule)} ({s.reason})" for s in a.not_applicable))
            out.write("\n")
        out.write("\n")


def print_pointer(advice: list[Advice], out) -> None:
    """The last line under `hotspots`' table: how many findings the listing rules made (`advise(cheap=True)`),
    and where the rest are; nothing when there are none."""
    n = sum(len(a.findings) for a in advice)
    if n:
        s = "s" if n != 1 else ""
        console(out).print(f"{n} finding{s} from the listing alone: attdec advise on the same paths runs every rule")


def reporters() -> Reporters:
    """`attdec advise`'s formats (the result: an Advice per dispatch)."""
    return {"table": Writer(print_table), "json": Writer(print_json), "md": Writer(print_md)}
