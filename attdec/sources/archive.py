"""Tar archives of ui_output folders, read as a stream and never extracted.

`members(path, keep)` walks the archive once, front to back, decompressing as it goes: it yields every
regular file's path and, when `keep(path)` says so, its bytes; the others (a big folder's thousands of
wave files) are decompressed and dropped, so memory holds only what the caller keeps. The caller may stop
early (the generator is closed and the file with it).

The walk reads tar headers itself (ustar, GNU long names, pax `path`/`size`): the `tarfile` module spends
~70 µs per member, a third of a second on a 4,000-file folder, where the walk needs a few µs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from attdec.errors import InputError

ARCHIVE_SUFFIXES = (".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar")

BLOCK = 512
CHUNK = 1 << 18  # bytes decompressed per read
REGULAR = (b"0", b"\0", b"7")  # regular file, old-style regular file, contiguous file
NOT_TAR = "not a tar file, or corrupt/unknown compression"
ZERO_BLOCK = bytes(BLOCK)


class _Corrupt(Exception):
    """A header that is not a tar header, or data cut short."""


def _safe_member(name: str) -> PurePosixPath | None:
    """Archive member path, or None for absolute paths, '..' components and other escapes."""
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        return None
    return p


def _open(path: Path) -> BinaryIO:
    """The archive's tar bytes: decompressed by what its first bytes say it is (xz, gzip, bzip2, plain)."""
    import bz2
    import gzip
    import lzma

    with open(path, "rb") as f:
        head = f.read(6)
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.open(path)  # type: ignore[return-value]
    if head.startswith(b"\x1f\x8b"):
        return gzip.open(path)  # type: ignore[return-value]
    if head.startswith(b"BZh"):
        return bz2.open(path)  # type: ignore[return-value]
    return open(path, "rb")


class _Stream:
    """Forward-only reads over a file, in CHUNK-sized pieces."""

    def __init__(self, f: BinaryIO):
        self.f, self.buf, self.pos = f, b"", 0

    def take(self, n: int, keep: bool = True) -> bytes:
        """The next `n` bytes (b"" when not kept); fewer only at the end of the file."""
        if keep and self.pos + n <= len(self.buf):  # the common case: a header, a small member
            self.pos += n
            return self.buf[self.pos - n : self.pos]
        parts = []
        while n > 0:
            if self.pos >= len(self.buf):
                self.buf, self.pos = self.f.read(CHUNK), 0
                if not self.buf:
                    break
            k = min(n, len(self.buf) - self.pos)
            if keep:
                parts.append(self.buf[self.pos : self.pos + k])
            self.pos += k
            n -= k
        if n > 0:
            raise _Corrupt("the archive ends inside a member")
        return b"".join(parts)


def _number(field: bytes) -> int:
    """A numeric header field: octal text, or GNU base-256 when its first byte has the high bit set."""
    if field[:1] and field[0] & 0x80:
        if field[0] == 0xFF:
            raise _Corrupt("negative size")
        return int.from_bytes(bytes([field[0] & 0x7F]) + field[1:], "big")
    text = field.split(b"\0", 1)[0].strip()
    try:
        return int(text, 8) if text else 0
    except ValueError:
        raise _Corrupt("a header field is not a number") from None


def _checksum_ok(h: bytes) -> bool:
    want = _number(h[148:156])
    unsigned = sum(h[:148]) + 8 * 32 + sum(h[156:])
    if want == unsigned:
        return True
    signed = unsigned - 256 * sum(1 for b in h[:148] + h[156:] if b > 127)  # some old tars sum signed bytes
    return want == signed


def _pax(data: bytes) -> dict[str, str]:
    """A pax extended header's records ("<len> <key>=<value>\\n")."""
    out, pos = {}, 0
    while pos < len(data):
        sp = data.find(b" ", pos)
        if sp < 0:
            break
        try:
            n = int(data[pos:sp])
        except ValueError:
            raise _Corrupt("malformed pax header") from None
        if n <= 0 or pos + n > len(data):
            raise _Corrupt("malformed pax header")
        key, _, value = data[sp + 1 : pos + n - 1].partition(b"=")
        out[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
        pos += n
    return out


def _walk(s: _Stream, keep: Callable[[PurePosixPath], bool]) -> Iterator[tuple[PurePosixPath, bytes | None]]:
    long_name: str | None = None
    pax: dict[str, str] = {}
    first = True
    while True:
        h = _header(s)
        if not h or h == ZERO_BLOCK:  # end of archive (a zero block, or a file without one)
            if first:
                raise _Corrupt(NOT_TAR)
            return
        if not _checksum_ok(h):
            raise _Corrupt(NOT_TAR if first else "a damaged tar header (bad checksum)")
        first = False
        kind = h[156:157]
        size = _number(h[124:136])
        if "size" in pax:
            size = int(pax["size"]) if pax["size"].isdigit() else size
        padded = -(-size // BLOCK) * BLOCK
        if kind in (b"L", b"K", b"x", b"g"):  # the next member's long name, long link, attributes; global ones
            data = s.take(padded, keep=kind in (b"L", b"x"))[:size]
            if kind == b"L":
                long_name = data.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            elif kind == b"x":
                pax = _pax(data)
            continue
        name = long_name or pax.get("path")
        if name is None:
            name = h[:100].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            prefix = h[345:500].split(b"\0", 1)[0] if h[257:265] == b"ustar\x0000" else b""
            if prefix:
                name = prefix.decode("utf-8", "surrogateescape") + "/" + name
        long_name, pax = None, {}
        p = _safe_member(name) if kind in REGULAR else None
        wanted = p is not None and keep(p)
        data = s.take(padded, keep=wanted)
        if p is not None:
            yield p, data[:size] if wanted else None


def _header(s: _Stream) -> bytes:
    """The next header block; b"" when the file ends right there (a tar without its closing zero blocks)."""
    if s.pos >= len(s.buf):
        s.buf, s.pos = s.f.read(CHUNK), 0
        if not s.buf:
            return b""
    try:
        return s.take(BLOCK)
    except _Corrupt:
        raise _Corrupt("the archive ends inside a tar header") from None


def members(path: Path, keep: Callable[[PurePosixPath], bool]) -> Iterator[tuple[PurePosixPath, bytes | None]]:
    """(path in the archive, bytes or None) of its regular files in archive order: bytes when `keep(path)`.
    Members with absolute paths or `..` are skipped, as are links and devices. Any failure to read is one
    InputError naming the archive."""
    try:
        with _open(path) as f:
            yield from _walk(_Stream(f), keep)
    except _Corrupt as e:
        raise InputError(f"unreadable archive: {e}", str(path)) from None
    except Exception as e:  # OSError, EOFError, lzma/zlib errors: several types, one line
        first = (str(e).splitlines() or [type(e).__name__])[0]
        raise InputError(f"unreadable archive: {first}", str(path)) from None
