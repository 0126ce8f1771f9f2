"""Caps on what an input can make attdec decompress or hold (docs/reliability.md).

A compressed container can claim, or really hold, far more than it weighs (466 KB of .tar.xz can be 3 GiB of
zeros); SQTT decoded whole, every record kept, takes tens of times its size in memory; a listing's rows each
become several objects. Each cap is above what real captures need; each can be raised with its environment
variable. Going over one is a clear error, before the work starts, naming the input and the variable.
"""

from __future__ import annotations

import os

from attdec.errors import InputError
from attdec.model.record import Frozen


class Cap(Frozen):
    env: str  # the environment variable that overrides it
    default: int
    unit: int  # what one unit of the variable is (bytes per MiB for sizes, 1 for counts)
    what: str

    @property
    def value(self) -> int:
        raw = os.environ.get(self.env)
        if raw is None:
            return self.default * self.unit
        try:
            n = int(raw)
        except ValueError:
            raise InputError(f"{self.env}={raw!r} is not a whole number") from None
        if n <= 0:
            raise InputError(f"{self.env}={raw!r}: a cap must be positive")
        return n * self.unit

    def check(self, n: int, name: str, where: str) -> None:
        """An InputError naming `name` when `n` is over the cap."""
        cap = self.value
        if n > cap:
            shown, limit = _sizes(n, cap) if self.unit > 1 else (f"{n:,}", f"{cap:,}")
            raise InputError(
                f"{name}: {shown}, more than the {limit} attdec reads of {self.what} (raise {self.env} to read it)",
                where,
            )


MIB = 1 << 20


def _sizes(n: int, cap: int) -> tuple[str, str]:
    """Two sizes in MiB to a tenth, or in bytes when that would print the same figure twice."""
    shown, limit = (f"{v / MIB:,.1f}".removesuffix(".0") + " MiB" for v in (n, cap))
    return (shown, limit) if shown != limit else (f"{n:,} bytes", f"{cap:,} bytes")


MEMBER = Cap("ATTDEC_MAX_MEMBER_MB", 1024, MIB, "one archive member or compressed chunk")
ARCHIVE = Cap("ATTDEC_MAX_ARCHIVE_MB", 16384, MIB, "an archive's members in all")
MEMBERS = Cap("ATTDEC_MAX_MEMBERS", 1_000_000, 1, "archive members")
# A command that keeps every decoded record (report, timeline, waits, ...) holds ~60 bytes of memory per byte of
# SQTT (RDNA gemm); hotspots and waves decode a big blob in windows and are not capped.
WHOLE_DECODE = Cap(
    "ATTDEC_MAX_WHOLE_DECODE_MB",
    16,
    MIB,
    "SQTT decoded whole with every record kept; hotspots and waves read any size, a window at a time",
)
# A code.json row becomes ~20 Python objects (~1 KB) once parsed: past this, the file is refused before it is read.
LISTING = Cap("ATTDEC_MAX_LISTING_MB", 32, MIB, "a code.json listing")
RATIO = Cap("ATTDEC_MAX_RATIO", 250, 1, "expansion (size / compressed size) of a zip member over 16 MiB")
CAPS = (MEMBER, ARCHIVE, MEMBERS, RATIO, WHOLE_DECODE, LISTING)


def check_whole_decode(raws, together: bool = True) -> None:
    """Refuse, before decoding, raw dispatches (RawDispatch) whose SQTT is more than WHOLE_DECODE: all of
    them (`together`: the command keeps every dispatch) or the largest one (decoded and written one by one)."""
    sizes = [(sum(len(b.data) for b in r.blobs), r) for r in raws]
    if not sizes:
        return
    n, biggest = max(sizes, key=lambda s: s[0])
    total = sum(s[0] for s in sizes) if together else n
    where = biggest.blobs[0].label if len(biggest.blobs) == 1 else biggest.path or biggest.name
    WHOLE_DECODE.check(total, "SQTT to decode", where)
