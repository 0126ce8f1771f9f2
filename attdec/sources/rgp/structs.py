"""Little-endian C structs declared once, as tables: `Struct(name, [(field, code), ...], size)`.

A field's code is one `struct` format item: "I", "Q", "16s", "2Q" (a tuple of two), "4x" (padding, no
name). `read` checks that the bytes are there and returns a namedtuple; `pack` (for fixture writers)
is its inverse. So every layout of the RGP containers is one table that reads like its C header.
"""

from __future__ import annotations

import re
import struct
from collections import namedtuple

_ITEM = re.compile(r"^(\d*)([a-zA-Z?])$")


class Struct:
    def __init__(self, name: str, fields: list[tuple[str, str]], size: int | None = None):
        self.name = name
        self.layout = struct.Struct("<" + "".join(code for _, code in fields))
        if size is not None and self.layout.size != size:
            raise AssertionError(f"{name}: declared {size} bytes, the fields make {self.layout.size}")
        self.size = self.layout.size
        self._fields = []  # (name, count: 0 = one plain value, else a tuple of that many, is bytes)
        for fname, code in fields:
            m = _ITEM.match(code)
            if m is None:
                raise ValueError(f"{name}.{fname}: {code!r} is not one struct format item")
            count, kind = m.groups()
            if kind != "x":
                n = int(count or 1)
                self._fields.append((fname, 0 if kind == "s" or n == 1 else n, kind == "s"))
        self.record = namedtuple(name, [f for f, _, _ in self._fields])  # type: ignore[misc]

    def read(self, data, offset: int = 0):
        """The struct at `offset`; `EOFError` when `data` ends before it does."""
        if offset < 0 or offset + self.size > len(data):
            raise EOFError(f"{self.name} at byte {offset} needs {self.size} bytes, {max(len(data) - offset, 0)} left")
        flat = self.layout.unpack_from(data, offset)
        out, i = [], 0
        for _, n, _ in self._fields:
            out.append(flat[i : i + n] if n else flat[i])
            i += n or 1
        return self.record(*out)

    def pack(self, **values) -> bytes:
        """The struct's bytes; fields not given are zero."""
        flat: list = []
        for fname, n, is_bytes in self._fields:
            v = values.pop(fname, None)
            if n:
                flat.extend(v if v is not None else (0,) * n)
            else:
                flat.append(v if v is not None else (b"" if is_bytes else 0))
        if values:
            raise TypeError(f"{self.name} has no field(s) {', '.join(values)}")
        return self.layout.pack(*flat)
