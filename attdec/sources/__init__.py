"""Turn command-line paths into `Dispatch`es.

`open_inputs(paths)` expands globs, walks parent folders and opens archives, then asks each
registered input kind whether it recognises a path. Adding an input kind (raw .att folders,
tinygrad profiles, ...) is one `register(InputKind(name, detect, load))` call: `detect(path)` must be
cheap and side-effect free; `load(path, progress)` returns the path's dispatches.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attdec.errors import InputError
from attdec.model import Dispatch
from attdec.report.progress import NULL, progress


@dataclass(frozen=True)
class InputKind:
    name: str
    detect: Callable[[Path], bool]  # is `path` an input of this kind?
    load: Callable[[Path, object], list[Dispatch]]  # (path, progress with .advance()) -> dispatches
    weight: Callable[[Path], int] = lambda p: 1  # progress steps loading `path` takes


KINDS: list[InputKind] = []


def register(kind: InputKind, first: bool = False) -> None:
    """Add an input kind; `first=True` lets it claim paths before the kinds already registered."""
    KINDS.insert(0, kind) if first else KINDS.append(kind)


def kind_of(path: Path, only: str | None = None) -> InputKind | None:
    for kind in KINDS:
        if (only is None or kind.name.split()[0] == only) and kind.detect(path):
            return kind
    return None


def _expand_globs(paths) -> list[Path]:
    out = []
    for p in paths:
        p = os.path.expanduser(str(p))
        if glob.has_magic(p) and not os.path.exists(p):
            hits = sorted(glob.glob(p))
            if not hits:
                raise InputError("no file or folder matches this pattern", p)
            out.extend(Path(h) for h in hits)
        else:
            out.append(Path(p))
    return out


def _walk(root: Path, only: str | None = None) -> list[tuple[InputKind, Path]]:
    """Every recognised input below `root`, not descending into recognised folders."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        keep = []
        for d in dirnames:
            sub = Path(dirpath, d)
            k = kind_of(sub, only)
            if k:
                found.append((k, sub))
            else:
                keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            sub = Path(dirpath, f)
            k = kind_of(sub, only)
            if k:
                found.append((k, sub))
    return found


def resolve(paths, only: str | None = None) -> list[tuple[InputKind, Path]]:
    """(kind, path) for every input named by `paths`, in command-line then name order, no duplicates.
    `only` restricts recognition to the input kind of that name (--input-format)."""
    if only is not None and all(k.name.split()[0] != only for k in KINDS):
        raise InputError(f"unknown input format {only!r} (known: {', '.join(k.name for k in KINDS)})")
    out, seen = [], set()
    for p in _expand_globs(paths):
        if not p.exists():
            raise InputError("no such file or folder", str(p))
        if not os.access(p, os.R_OK):
            raise InputError("permission denied", str(p))
        k = kind_of(p, only)
        items = [(k, p)] if k else (_walk(p, only) if p.is_dir() else [])
        if not items:
            what = "folder" if p.is_dir() else "file"
            if only is not None:
                raise InputError(f"not a {only} input", str(p))
            raise InputError(
                f"not a ui_output {what} (no filenames.json; expected a rocprofv3 --att "
                "ui_output_agent_* folder, a parent of some, a .tar.xz of one, or a raw capture: "
                "rocprofv3 *_shader_engine_*.att files, a tinygrad profile.pkl, a capture folder)",
                str(p),
            )
        for k, q in items:
            key = os.path.realpath(q)
            if key not in seen:
                seen.add(key)
                out.append((k, q))
    return out


def open_inputs(paths, show_progress: bool = True, input_format: str | None = None) -> list[Dispatch]:
    """Load every dispatch the paths name; a progress bar on a terminal when there is much to read."""
    items = resolve(paths, input_format)
    total = sum(k.weight(p) for k, p in items)
    out: list[Dispatch] = []
    if not show_progress:
        for k, p in items:
            out.extend(k.load(p, NULL))
        return out
    with progress(total, "reading") as bar:
        for k, p in items:
            out.extend(k.load(p, bar))
    return out


# Built-in kinds. Imported last: they register themselves with this module.
from attdec.sources import (
    raw_inputs,  # noqa: F401  (tinygrad, rocprof-raw, capture; decoded on load)
    ui_output,  # noqa: F401
)
