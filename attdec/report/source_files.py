"""The text of the source files a listing names, found on this machine: what the HTML report embeds and what
export-ui copies beside snapshots.json, as rocprofv3 does."""

from __future__ import annotations

from pathlib import Path

MAX_SOURCE_BYTES = 2_000_000  # a source file larger than this is not embedded


def find_sources(dispatches, source_dirs=()) -> dict[str, list[str]]:
    """Text of the source files the listings name that exist on this machine: at the path as written, or
    under a --source-dir by the path's longest tail that exists there (build trees move between machines)."""
    from attdec.analysis.hotspots import file_of, frames

    wanted = {file_of(f) for d in dispatches for c in d.code for f in frames(c.source)}
    out = {}
    for name in sorted(wanted):
        parts = Path(name).parts
        candidates = [Path(name)] if Path(name).is_absolute() else []
        for root in source_dirs:
            candidates += [Path(root).joinpath(*parts[i:]) for i in range(len(parts)) if parts[i:] != ("/",)]
        for c in candidates:
            try:
                if c.is_file() and c.stat().st_size <= MAX_SOURCE_BYTES:
                    out[name] = c.read_text(encoding="utf-8", errors="replace").splitlines()
                    break
            except OSError:
                continue
    return out
