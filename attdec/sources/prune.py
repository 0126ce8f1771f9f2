"""Which rocprofv3 dispatch folders are empty shells, and removing those (`attdec prune-empty`).

An empty shell (ui-output-format.md §13) is a thread-trace dispatch folder in which nothing ran: no wave
file, no wave listed in filenames.json, no code.json row with a hit, and no file but those rocprofv3
writes there that then hold nothing of the dispatch (the manifest, the hit-less listing, occupancy and
clock samples, an empty source-snapshot tree, a header-only or hit-less CSV). Anything else keeps the
folder, with the reason: a wave or wstates file, a hit, copies of source files (`source_<n>_*`), a file
rocprofv3 does not write, a subfolder or link, a file that cannot be read.

A verdict records each file's name, size and modification time. `remove` checks them again right before
the folder goes and deletes only those named files, one by one, then the emptied folder (`os.rmdir`, never
a tree walk): a file added or changed since the verdict keeps the folder.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from attdec.errors import AttdecError, InputError, read_json
from attdec.model.record import Record
from attdec.sources.ui_output import WAVE_FILE, listed_waves, parse_code

# Files rocprofv3 writes in a dispatch folder that may hold nothing of the dispatch; whether each does is
# checked by `_holds`. Every other file keeps its folder.
SHELL_FILES = re.compile(r"^(filenames|code|occupancy|realtime|snapshots|graph_options)\.json$|^att_output\.csv$")

Stamp = tuple[str, int, int]  # (name, size, modification time in ns) of a file as judged


class Verdict(Record):
    path: Path
    empty: bool
    reason: str
    size: int
    files: tuple[Stamp, ...] = ()  # the folder's files when judged (an empty shell's: all to remove)
    stats_csv: Path | None = None  # the header-only or hit-less stats CSV beside the folder, removed with it
    stats_stamp: Stamp | None = None


def _stamp(path: Path) -> Stamp:
    st = os.lstat(path)
    return (path.name, st.st_size, st.st_mtime_ns)


def judge(path: Path) -> Verdict:
    """Is this dispatch folder an empty shell that may be deleted, and why (not)?"""
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
        stamps = tuple(_stamp(Path(e.path)) for e in entries)
    except OSError as e:
        return Verdict(path, False, f"cannot be listed: {e.strerror}", 0)
    size = sum(s[1] for s in stamps)
    names = [e.name for e in entries]

    def keep(reason: str) -> Verdict:
        return Verdict(path, False, reason, size, stamps)

    if any(WAVE_FILE.match(n) for n in names):
        return keep("has wave files")
    if any(e.is_dir(follow_symlinks=False) or e.is_symlink() for e in entries):
        return keep("holds a subfolder or link")
    others = [n for n in names if not SHELL_FILES.match(n)]
    if others:
        return keep(f"holds files that are not an empty shell's ({others[0]})")
    if "filenames.json" not in names:
        return keep("no filenames.json")
    for name in sorted(names, key=lambda n: n != "filenames.json"):  # a PC-sampling folder says so first
        held = _holds(path / name)
        if held:
            return keep(held)
    stats = path.parent / f"stats_{path.name}.csv"
    if not stats.is_file() or stats.is_symlink():
        return Verdict(path, True, "zero waves", size, stamps)
    held = _csv_holds(stats)
    if held:  # a stats CSV that says something: the folder is not empty after all
        return keep(f"{stats.name} {held}")
    stamp = _stamp(stats)
    return Verdict(path, True, "zero waves", size + stamp[1], stamps, stats, stamp)


def _holds(path: Path) -> str | None:
    """What a file rocprofv3 writes holds of the dispatch (a reason to keep its folder), or None."""
    name = path.name
    if name == "att_output.csv":
        return _csv_holds(path)
    try:
        doc = read_json(path)
    except AttdecError as e:
        return f"{name} unreadable ({e.message})"
    if not isinstance(doc, dict):
        return f"{name} is not a JSON object"
    if name == "filenames.json":
        if doc.get("thread_trace") is False or doc.get("pc_sampling"):
            return "PC-sampling folder, not a thread trace"
        try:
            listed = listed_waves(doc, str(path))
        except AttdecError:
            listed = {"?": []}
        if listed or any(doc.get(k) for k in ("other_simd_filenames", "shaderdata_filenames")):
            return "waves are listed but their files are missing"
    elif name == "code.json":
        try:
            hits = sum(row.hit for row in parse_code(doc, str(path)).rows)
        except AttdecError as e:
            return f"code.json unreadable ({e.message})"
        if hits:
            return f"code.json has {hits:,} executed instructions"
    elif name == "snapshots.json" and doc:
        return "snapshots.json lists copies of source files"
    return None


def _csv_holds(path: Path) -> str | None:
    """What a stats CSV holds (rows with a Hitcount), or None when it is header-only or every hit is 0."""
    import csv

    try:
        with open(path, newline="", errors="replace") as f:
            rows = csv.reader(f)
            header = [h.strip() for h in next(rows, [])]
            if "Hitcount" not in header:
                return "is not a stats CSV (no Hitcount column)" if header else None
            col = header.index("Hitcount")
            hits = 0
            for row in rows:
                if row:
                    value = row[col].strip() if col < len(row) else ""
                    if not value.isdigit():
                        return "has a row without a hit count"
                    hits += int(value)
    except (OSError, csv.Error) as e:
        return f"unreadable ({e})"
    return f"has {hits:,} executed instructions" if hits else None


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


def judge_roots(roots: list[Path]) -> list[Verdict]:
    """The verdict on every dispatch folder below `roots`; a root that is missing, a file, or holds no
    dispatch folder is an InputError."""
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
    return [judge(p) for p in folders]


def remove(v: Verdict) -> str | None:
    """Delete an empty shell as judged: None when it is gone, else what was kept and why (it changed since
    the verdict). Its files are checked and deleted one by one, then the folder itself if nothing else is in
    it. A file that cannot be deleted is an AttdecError."""
    if not v.empty:
        raise ValueError(f"{v.path} was not judged empty")
    try:
        now = tuple(_stamp(Path(e.path)) for e in sorted(os.scandir(v.path), key=lambda e: e.name))
    except OSError as e:
        return f"kept: cannot be listed now ({e.strerror})"
    if now != v.files:
        return "kept: changed since it was judged (a file added, changed or removed)"
    if v.stats_csv is not None and _restamp(v.stats_csv) != v.stats_stamp:
        return f"kept: {v.stats_csv.name} changed since it was judged"
    try:
        for stamp in v.files:
            f = v.path / stamp[0]
            if _restamp(f) != stamp:
                return f"kept: {stamp[0]} changed while the folder was being removed (the files before it went)"
            os.unlink(f)
        os.rmdir(v.path)  # fails, keeping it, if anything was added meanwhile
    except OSError as e:
        if e.errno == errno.ENOTEMPTY:
            return "kept: a file was added while its shell files were removed (the folder holds only that file now)"
        raise AttdecError(f"cannot delete: {e.strerror}", str(v.path)) from None
    if v.stats_csv is not None:
        if _restamp(v.stats_csv) != v.stats_stamp:
            return f"removed, but {v.stats_csv.name} changed while the folder was being removed: that file is kept"
        try:
            os.unlink(v.stats_csv)
        except OSError as e:
            raise AttdecError(f"cannot delete: {e.strerror}", str(v.stats_csv)) from None
    return None


def _restamp(path: Path) -> Stamp | None:
    try:
        return _stamp(path)
    except OSError:
        return None
