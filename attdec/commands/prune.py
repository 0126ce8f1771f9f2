"""`attdec prune-empty ROOT...`: find rocprofv3 dispatch folders with zero waves and remove them.

An "empty shell" (ui-output-format.md §13) is a folder with a thread-trace `filenames.json`, no
`se*_sm*_sl*_wv*.json`, no wave listed, no subfolder and only files rocprofv3 writes there. Anything
else is kept: a folder with a wave file, a PC-sampling folder, a folder holding other files. Dry run by
default; `--yes` deletes, printing every deletion.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path

import click

from attdec.commands.common import attdec_command
from attdec.errors import AttdecError, InputError, read_json
from attdec.model.record import Record
from attdec.report.common import Col, common_dir, console, draw_table, strip_dir
from attdec.sources.ui_output import WAVE_FILE, read_folder

KNOWN_FILES = re.compile(
    r"^(filenames|code|occupancy|realtime|snapshots|graph_options|spm)\.json$"
    r"|^wstates\d+\.json$|^se\d+_perfcounter\.json$|^source_\d+_.*$|^att_output\.csv$"
)


class Verdict(Record):
    path: Path
    empty: bool
    reason: str
    size: int
    stats_csv: Path | None = None


def _size(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, f)).st_size
    return total


def judge(path: Path) -> Verdict:
    """Is this dispatch folder an empty shell that may be deleted, and why (not)?"""
    entries = list(path.iterdir())
    size = _size(path)
    if any(WAVE_FILE.match(e.name) for e in entries):
        return Verdict(path, False, "has wave files", size)
    if any(e.is_dir() or e.is_symlink() for e in entries):
        return Verdict(path, False, "holds a subfolder or link", size)
    others = [e.name for e in entries if not KNOWN_FILES.match(e.name)]
    if others:
        return Verdict(path, False, f"holds files rocprofv3 does not write ({others[0]})", size)
    try:
        fn = read_json(path / "filenames.json")
    except AttdecError:
        return Verdict(path, False, "filenames.json unreadable", size)
    if not isinstance(fn, dict):
        return Verdict(path, False, "filenames.json is not an object", size)
    if fn.get("thread_trace") is False or fn.get("pc_sampling"):
        return Verdict(path, False, "PC-sampling folder, not a thread trace", size)
    if fn.get("wave_filenames"):
        return Verdict(path, False, "waves are listed but their files are missing", size)
    stats = path.parent / f"stats_{path.name}.csv"
    if not stats.is_file():
        return Verdict(path, True, "zero waves", size)
    try:
        lines = [ln for ln in stats.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        lines = ["?", "?"]
    if len(lines) > 1:  # a stats CSV with rows is not an empty shell's: it stays
        return Verdict(path, True, "zero waves", size)
    return Verdict(path, True, "zero waves", size + stats.stat().st_size, stats)


def find_dispatch_folders(root: Path) -> list[Path]:
    """Every folder with a filenames.json at or below root (not following links)."""
    if (root / "filenames.json").is_file():
        return [root]
    out = []
    for dirpath, dirnames, files in os.walk(root):
        dirnames.sort()
        if "filenames.json" in files:
            out.append(Path(dirpath))
            dirnames[:] = []
    return out


def _kb(n: int) -> str:
    return f"{n / 1024:,.1f} KB"


@attdec_command(
    click.argument("roots", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="ROOTS..."),
    click.option("--yes", is_flag=True, help="Really delete (default: dry run, print what would go)."),
)
def prune_empty(a) -> None:
    """Remove dispatch folders with zero waves (dry run unless --yes).

    Prints what would go, with sizes, then the surviving dispatches ranked by (waves, instructions,
    source-mapped rows) with the best dispatch per kernel marked.
    """
    roots, yes = a.roots, a.yes
    con = console()

    def say(text: str, style: str | None = None) -> None:
        con.print(text, style=style)

    folders = []
    for root in roots:
        if not root.exists():
            raise InputError("no such folder", str(root))
        if not root.is_dir():
            raise InputError("is a file; prune-empty looks for dispatch folders below folders", str(root))
        found = find_dispatch_folders(root)
        if not found:
            raise InputError("no ui_output dispatch folder (filenames.json) below this folder", str(root))
        folders += found
    verdicts = [judge(p) for p in folders]
    empty = [v for v in verdicts if v.empty]
    kept = [v for v in verdicts if not v.empty]

    verb = "removed" if yes else "would remove"
    for v in empty:
        if yes:
            try:
                shutil.rmtree(v.path)
                if v.stats_csv:
                    v.stats_csv.unlink()
            except OSError as e:
                raise AttdecError(f"cannot delete: {e.strerror}", str(v.path)) from None
        say(f"{verb} {v.path}  ({_kb(v.size)}, {v.reason})")
        if v.stats_csv:
            say(f"{verb} {v.stats_csv}  (its header-only stats CSV)")
    total = sum(v.size for v in empty)
    say(
        f"{len(empty)} empty dispatch folder(s), {_kb(total)}"
        + ("" if yes or not empty else "; run again with --yes to delete them"),
        style="bold",
    )

    ranked = []
    for v in kept:
        if v.reason != "has wave files":
            say(f"kept {v.path} ({v.reason})")
            continue
        try:
            d = read_folder(v.path)
        except AttdecError as e:
            say(f"kept {v.path} (unreadable: {e})")
            continue
        mapped = sum(1 for c in d.code if not c.is_label and c.source)
        ranked.append((len(d.waves), sum(len(w.insts) for w in d.waves), mapped, d))
    if not ranked:
        return
    ranked.sort(key=lambda t: (-t[0], -t[1], -t[2], t[3].name))
    best: dict[str, object] = {}
    for t in ranked:
        best.setdefault(t[3].kernel, t[3])  # the dispatch itself: copies in two parents share a folder name
    prefix = common_dir([str(t[3].path) for t in ranked])
    cols = [
        Col("", justify="left"),
        Col("waves"),
        Col("instructions", short="instrs"),
        Col("mapped rows", short="mapped"),
        Col("kernel", "text", "left", min=12),
        Col("dispatch folder", "text", "left", min=16),
    ]
    rows = [
        ["*" if best[d.kernel] is d else "", str(n), f"{insts:,}", str(mapped), d.kernel or "?", where]
        for n, insts, mapped, d in ranked
        for where in [strip_dir(str(d.path), prefix) or "."]
    ]
    say(
        f"{len(ranked)} dispatch(es) with waves kept (* = best of its kernel)"
        + (f", under {prefix}/:" if prefix else ":"),
        style="bold",
    )
    draw_table(con, cols, rows)
