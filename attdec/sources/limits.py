"""Caps on what a hostile input can make attdec decompress or hold (docs/reliability.md).

A compressed container can claim, or really hold, far more than it weighs (466 KB of .tar.xz can be 3 GiB of
zeros). Each cap is far above what real captures need; each can be raised with its environment variable.
Going over one is a clear error naming the member or chunk and the variable, never an attempt.
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
            shown = f"{n / (1 << 20):,.0f} MiB" if self.unit > 1 else f"{n:,}"
            limit = f"{cap / (1 << 20):,.0f} MiB" if self.unit > 1 else f"{cap:,}"
            raise InputError(
                f"{name}: {shown}, more than the {limit} attdec reads of {self.what} (raise {self.env} to read it)",
                where,
            )


MIB = 1 << 20
MEMBER = Cap("ATTDEC_MAX_MEMBER_MB", 1024, MIB, "one archive member or compressed chunk")
ARCHIVE = Cap("ATTDEC_MAX_ARCHIVE_MB", 16384, MIB, "an archive's members in all")
MEMBERS = Cap("ATTDEC_MAX_MEMBERS", 1_000_000, 1, "archive members")
RATIO = Cap("ATTDEC_MAX_RATIO", 250, 1, "expansion (size / compressed size) of a zip member over 16 MiB")
CAPS = (MEMBER, ARCHIVE, MEMBERS, RATIO)
