"""What a gfx9 blob's tokens say outside a decode, split by the decoders' own splitter: the listing of
`decode --tokens` and the register writes of the userdata scan."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from attdec.decoders.gfx9.packets import GFX9, HEADER, HEADER_BYTES, TOKEN_NAMES
from attdec.decoders.gfx9.splitter import ALL_SELECTION, official_timestamps, split_tokens, token_times, token_values
from attdec.decoders.tokens import TokenListing, TokenRow
from attdec.decoders.userdata import RegisterWrites


def list_tokens(data: bytes, generation: int = 9) -> TokenListing:
    """The tokens of one gfx9 SE blob after its software header, in stream order."""
    words = np.frombuffer(data, "<u2", count=(len(data) - HEADER_BYTES) // 2, offset=HEADER_BYTES)
    starts, types, truncated = split_tokens(words)
    values = token_values(words, starts, types)
    ts_field = GFX9["TIMESTAMP"]["timestamp"]
    problems = []
    if truncated is not None:
        problems.append(f"truncated token at byte offset {HEADER_BYTES + 2 * truncated}: listed what comes before")

    def ts_of(at: np.ndarray) -> np.ndarray:  # word positions
        return official_timestamps(ts_field.column(values[np.searchsorted(starts, at)]))

    mask = np.zeros(len(words), bool)
    mask[starts] = True
    at, t_sel = token_times(words, mask, ts_of, truncated is not None, ALL_SELECTION)
    sel = np.searchsorted(starts, at)
    time = np.full(len(starts), -1, np.int64)
    time[sel] = t_sel
    delivered = np.zeros(len(starts), bool)
    delivered[sel] = True

    def rows() -> Iterator[TokenRow]:
        yield TokenRow(0, "HEADER", HEADER.decode(int.from_bytes(data[:HEADER_BYTES], "little")), None, HEADER)
        for s, ty, v, t, d in zip(starts.tolist(), types.tolist(), values.tolist(), time.tolist(), delivered.tolist()):
            p = GFX9.at(ty)
            assert p is not None
            yield TokenRow(2 * (HEADER_BYTES + 2 * s), p.name, p.decode(v), t if d else None, p)

    return TokenListing("gfx9", len(data), rows(), problems)


def register_writes(data: bytes, generation: int = 9) -> RegisterWrites:
    """The register writes of one gfx9 SE blob (`userdata.register_writes`)."""
    words = np.frombuffer(data, "<u2", count=max(len(data) - HEADER_BYTES, 0) // 2, offset=HEADER_BYTES)
    starts, types, _cut = split_tokens(words)
    t_reg, t_cs, t_priv = (TOKEN_NAMES.index(k) for k in ("REG", "REG_CS", "REG_CS_PRIV"))
    is_cs = (types == t_cs) | (types == t_priv)
    sel = np.flatnonzero((types == t_reg) | is_cs)
    v, is_cs = token_values(words, starts[sel], types[sel]), is_cs[sel]
    reg, reg_cs = GFX9["REG"], GFX9["REG_CS"]  # REG_CS_PRIV has REG_CS's layout
    keep = is_cs | reg["enable"].column(v).astype(bool)  # a REG write with enable clear is not a write
    v, is_cs, sel = v[keep], is_cs[keep], sel[keep]

    def pick(name: str) -> np.ndarray:
        return np.where(is_cs, reg_cs[name].column(v), reg[name].column(v)).astype(np.int64)

    return RegisterWrites(
        HEADER_BYTES + 2 * starts[sel].astype(np.int64),
        is_cs,
        (pick("me") + 1) & 1,  # the official decoder reads ME as (field + 1) & 1
        pick("pipe"),
        pick("addr"),
        pick("data"),
    )
