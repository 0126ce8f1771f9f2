"""Tar and zip archives of ui_output folders, read as a stream and never extracted.

`members(path, keep)` walks the archive once, front to back, decompressing as it goes: it yields every
regular file's path and, when `keep(path)` says so, its bytes; the others (a big folder's thousands of
wave files) are decompressed and dropped, so memory holds only what the caller keeps. The caller may stop
early (the generator is closed and the file with it).

The walk reads tar headers itself (ustar, GNU long names, pax `path`/`size`): the `tarfile` module spends
~70 µs per member, a third of a second on a 4,000-file folder, where the walk needs a few µs.

A hostile archive is stopped by what its headers claim, before anything is decompressed (docs/reliability.md):
a member over the member cap, members over the total cap, or more members than the count cap is an error
naming the member (attdec.sources.limits; a 466 KB .tar.xz can hold 3 GiB of zeros). Symbolic and hard
links, devices, fifos and paths outside the archive's root are never read: the walk names each in `refused`.

A zip file (`_zip_members`) is read with `zipfile`, whose central directory lists every member's sizes up
front: the same caps, checked on the member count the end record gives before that directory is loaded,
then on each member; only the members kept are decompressed (never past their stated size), and one that
expands more than the ratio cap allows is refused (a zip bomb). Encrypted members are an error, links and
escaping paths are named in `refused` like a tar's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from attdec.errors import AttdecError, InputError
from attdec.sources.limits import ARCHIVE, MEMBER, MEMBERS, RATIO

ARCHIVE_SUFFIXES = (".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tbz", ".tar", ".zip")
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first member, or the end record of an empty one

BLOCK = 512
CHUNK = 1 << 16  # bytes decompressed per read (a walk that stops early has decompressed at most this much more)
REGULAR = (b"0", b"\0", b"7")  # regular file, old-style regular file, contiguous file
DIRECTORY = b"5"
REFUSED_KINDS = {
    b"1": "a hard link",
    b"2": "a symbolic link",
    b"3": "a character device",
    b"4": "a block device",
    b"6": "a fifo",
    b"S": "a sparse file",
}
HEADER_DATA = 1 << 20  # bytes: a long name or pax record set is held in memory, so it has its own small cap
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
    """The archive's tar bytes: decompressed by what its first bytes say it is (xz, gzip, bzip2, plain); only
    that decompressor's module is imported."""
    with open(path, "rb") as f:
        head = f.read(6)
    if head.startswith(b"\xfd7zXZ\x00"):
        import lzma

        return lzma.open(path)  # type: ignore[return-value]
    if head.startswith(b"\x1f\x8b"):
        import gzip

        return gzip.open(path)  # type: ignore[return-value]
    if head.startswith(b"BZh"):
        import bz2

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


class _Caps:
    """The caps of one walk (read once: a walk may see thousands of headers) and what it has seen so far."""

    def __init__(self, where: str):
        self.where, self.member, self.total, self.count = where, MEMBER.value, ARCHIVE.value, MEMBERS.value
        self.seen_bytes = self.seen_members = 0

    def check(self, name: str, size: int) -> None:
        self.seen_members += 1
        self.seen_bytes += size
        if size > self.member:
            MEMBER.check(size, f"archive member {name!r}", self.where)
        if self.seen_bytes > self.total:
            ARCHIVE.check(self.seen_bytes, f"members up to {name!r}", self.where)
        if self.seen_members > self.count:
            MEMBERS.check(self.seen_members, f"members up to {name!r}", self.where)


def _walk(
    s: _Stream, keep: Callable[[PurePosixPath], bool], caps: _Caps, refused: list[str] | None
) -> Iterator[tuple[PurePosixPath, bytes | None]]:
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
            size = int(pax["size"]) if pax["size"].isdigit() and len(pax["size"]) < 40 else size
        padded = -(-size // BLOCK) * BLOCK
        if kind in (b"L", b"K", b"x", b"g"):  # the next member's long name, long link, attributes; global ones
            caps.check("(a long name or pax header)", size)
            if size > HEADER_DATA:
                raise _Corrupt(f"a long-name or pax header of {size:,} bytes")
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
        caps.check(name, size)
        p = _safe_member(name) if kind in REGULAR else None
        if p is None and kind != DIRECTORY and refused is not None:
            why = REFUSED_KINDS.get(kind, f"of unknown type {kind!r}") if kind not in REGULAR else "outside the archive"
            refused.append(f"{name!r} ({why})")
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


def is_zip(path: Path) -> bool:
    """Whether the archive is a zip (its central directory lists every member; a tar has no index)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) in ZIP_MAGIC
    except OSError:
        return False  # `members` says why it cannot be read


def members(
    path: Path, keep: Callable[[PurePosixPath], bool], refused: list[str] | None = None
) -> Iterator[tuple[PurePosixPath, bytes | None]]:
    """(path in the archive, bytes or None) of its regular files in archive order: bytes when `keep(path)`.
    Members with absolute paths or `..`, links, devices and fifos are not read: each is named in `refused`.
    A member over a cap (attdec.sources.limits) is an InputError naming it, raised on its header; any other
    failure to read is one InputError naming the archive."""
    try:
        with open(path, "rb") as f:
            zipped = f.read(4) in ZIP_MAGIC
        if zipped:
            yield from _zip_members(path, keep, _Caps(str(path)), refused)
            return
        with _open(path) as f:
            yield from _walk(_Stream(f), keep, _Caps(str(path)), refused)
    except AttdecError:
        raise
    except _Corrupt as e:
        raise InputError(f"unreadable archive: {e}", str(path)) from None
    except Exception as e:  # OSError, EOFError, lzma/zlib errors: several types, one line
        first = (str(e).splitlines() or [type(e).__name__])[0]
        raise InputError(f"unreadable archive: {first}", str(path)) from None


# ---- zip ----------------------------------------------------------------------------------------------------
ZIP_END = b"PK\x05\x06"
ZIP64_LOCATOR = b"PK\x06\x07"
ZIP_TAIL = 22 + 0xFFFF  # the end record and its longest comment
RATIO_FROM = 16 << 20  # bytes: members smaller than this are not held to the ratio cap (JSON compresses well)


def _zip_count(f: BinaryIO) -> int:
    """How many members the zip's end record (or its zip64 end record) says its central directory lists."""
    import struct

    size = f.seek(0, 2)
    f.seek(max(0, size - ZIP_TAIL))
    tail = f.read()
    at = tail.rfind(ZIP_END)
    if at < 0 or len(tail) < at + 22:
        raise _Corrupt("not a zip file (no end of central directory record)")
    (count,) = struct.unpack_from("<H", tail, at + 10)
    if count == 0xFFFF and at >= 20 and tail[at - 20 : at - 16] == ZIP64_LOCATOR:
        (end64,) = struct.unpack_from("<Q", tail, at - 20 + 8)
        f.seek(end64)
        record = f.read(56)
        if len(record) < 40 or not record.startswith(b"PK\x06\x06"):
            raise _Corrupt("a damaged zip64 end of central directory record")
        (count,) = struct.unpack_from("<Q", record, 32)
    return count


def _zip_members(
    path: Path, keep: Callable[[PurePosixPath], bool], caps: _Caps, refused: list[str] | None
) -> Iterator[tuple[PurePosixPath, bytes | None]]:
    import stat
    import zipfile

    with open(path, "rb") as f:
        count = _zip_count(f)
        if count > caps.count:
            MEMBERS.check(count, "its central directory lists members", caps.where)
        ratio = RATIO.value
        with zipfile.ZipFile(f) as z:
            for info in z.infolist():
                name = info.filename
                caps.check(name, info.file_size)
                if info.is_dir():
                    continue
                mode = info.external_attr >> 16
                kind = stat.S_IFMT(mode) if info.create_system == 3 else 0  # 3: made on Unix, mode bits above
                p = _safe_member(name.replace("\\", "/"))
                if p is None or kind not in (0, stat.S_IFREG):
                    if refused is not None:
                        why = "outside the archive" if p is None else _ZIP_KINDS.get(kind, "not a regular file")
                        refused.append(f"{name!r} ({why})")
                    continue
                if not keep(p):
                    yield p, None
                    continue
                if info.flag_bits & 0x1:
                    raise InputError(f"archive member {name!r} is encrypted", caps.where)
                if info.file_size > RATIO_FROM and info.file_size > ratio * max(info.compress_size, 1):
                    RATIO.check(
                        info.file_size // max(info.compress_size, 1),
                        f"archive member {name!r} expands {info.compress_size:,} bytes to {info.file_size:,}",
                        caps.where,
                    )
                with z.open(info) as member:  # stops at the stated size; a wrong CRC is an error
                    yield p, member.read(info.file_size + 1)


_ZIP_KINDS = {
    0o120000: "a symbolic link",
    0o020000: "a character device",
    0o060000: "a block device",
    0o010000: "a fifo",
    0o140000: "a socket",
}
