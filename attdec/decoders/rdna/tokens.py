"""What an RDNA blob's tokens say outside a decode, split by the decoders' own splitter: the listing of
`decode --tokens` and the register writes of the userdata scan."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from attdec.decoders.rdna.packets import FORMATS, TOKEN_NAMES, T
from attdec.decoders.rdna.splitter import split
from attdec.decoders.tokens import TokenListing, TokenRow
from attdec.decoders.userdata import RegisterWrites


def _token_at(data: bytes, nibble: int, bits: int) -> int:
    """The token of `bits` bits starting at `nibble`, as an int (zeros past the end)."""
    b = nibble >> 1
    raw = int.from_bytes(data[b : b + (bits + 11) // 8], "little") >> (4 * (nibble & 1))
    return raw & ((1 << bits) - 1)


def list_tokens(data: bytes, generation: int) -> TokenListing:
    """The tokens of one RDNA SE blob of SQTT generation `generation` (10, 11, 12), in stream order."""
    fmt = FORMATS[generation]
    tk = split(data, fmt, keep=None)

    def rows() -> Iterator[TokenRow]:
        unknown = TOKEN_NAMES.index("UNKNOWN")
        pos, types, times, words = tk.pos.tolist(), tk.type.tolist(), tk.time.tolist(), tk.word.tolist()
        at = fmt.table.at
        i, n = 0, len(pos)
        while i < n:
            if types[i] == unknown:  # a run of unassigned ids: one row
                j = i
                while j + 1 < n and types[j + 1] == unknown:
                    j += 1
                yield TokenRow(pos[i], "UNKNOWN", {"ids": j - i + 1}, times[i])
                i = j + 1
                continue
            p = at(_token_at(data, pos[i], 8))
            assert p is not None
            # the decoders' 64-bit word holds the whole token unless it is longer or read from further in
            value = words[i] & ((1 << p.bits) - 1) if p.bits <= 64 and not p.window else _token_at(data, pos[i], p.bits)
            yield TokenRow(pos[i], p.name, p.decode(value), times[i], p)
            i += 1

    return TokenListing(fmt.name, len(data), rows(), list(tk.problems))


def register_writes(data: bytes, generation: int) -> RegisterWrites:
    """The register writes of one RDNA SE blob (`userdata.register_writes`)."""
    fmt = FORMATS[generation]
    tk = split(data, fmt, keep=("REG", "UNKNOWN"))
    unknown = np.flatnonzero(tk.type == T["UNKNOWN"])
    n, stopped = len(tk.type), None
    if len(unknown):
        n, stopped = int(unknown[0]), int(tk.pos[unknown[0]]) // 2
    w, reg = tk.word[:n], fmt.table["REG"]
    return RegisterWrites(
        tk.pos[:n] // 2,
        reg["cs"].column(w).astype(bool),
        reg["me"].column(w).astype(np.int64),
        reg["pipe"].column(w).astype(np.int64),
        reg["addr"].column(w).astype(np.int64),
        reg["data"].column(w).astype(np.int64),
        stopped,
    )
