"""Tar archives of ui_output folders, read in memory and never extracted."""

from __future__ import annotations

import tarfile
from pathlib import Path, PurePosixPath

from attdec.errors import InputError

ARCHIVE_SUFFIXES = (".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar")


def _safe_member(name: str) -> PurePosixPath | None:
    """Archive member path, or None for absolute paths, '..' components and other escapes."""
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        return None
    return p


def read_archive(path: Path) -> dict[str, dict[str, bytes]]:
    """{folder: {file name: bytes}} of the regular files of a tar archive, in one sequential pass.
    Members with absolute paths or `..` are skipped, as are links and devices."""
    folders: dict[str, dict[str, bytes]] = {}
    try:
        with tarfile.open(path, "r:*") as tar:
            for m in tar:
                p = _safe_member(m.name)
                if p is None or not m.isfile() or len(p.parts) < 1:
                    continue
                parent = str(p.parent)
                f = tar.extractfile(m)
                folders.setdefault(parent, {})[p.name] = f.read() if f else b""
    except tarfile.ReadError:
        raise InputError("unreadable archive: not a tar file, or corrupt/unknown compression", str(path)) from None
    except Exception as e:  # OSError, EOFError, lzma/zlib errors: several types, one line
        first = (str(e).splitlines() or [type(e).__name__])[0]
        raise InputError(f"unreadable archive: {first}", str(path)) from None
    return folders
