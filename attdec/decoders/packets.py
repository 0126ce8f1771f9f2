"""Token layouts as data: each family's packets with their id pattern, length and named bit fields.

Every SQTT token type is a `Packet`: the bit pattern its first bits carry (its id), its length, and its
fields, each a `Field` of bit positions within the token as the format spec writes them (first and last
bit, inclusive). A family is a `PacketTable`; a later family is an earlier one plus overrides
(`PacketTable.derive`), the way AMD's table builder applies its encodings in order, later rows winning.

The same declaration serves every reader and writer of the format, so a layout is written once:

- the decoders read fields with `Field.column` on numpy arrays of token words where they are vectorised,
  and with a field's `lo` / `mask` (precomputed) on scalar hot paths;
- `Packet.encode` builds tokens for the synthetic streams of the tests (tests/support/sqtt_encoder.py);
- `Packet.decode` gives every field of one token for `attdec decode --tokens`.

The tables themselves are in `attdec.decoders.rdna.packets` (gfx10, gfx11, gfx12) and
`attdec.decoders.gfx9.packets` (CDNA).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import numpy as np

_U64 = np.dtype(np.uint64)


class Field:
    """Bits `lo`..`hi` (inclusive) of a token. How the value reads best, for listings: `names` gives
    symbolic values (opcodes, subtypes), `hex` marks addresses, register data and masks, `flag` a yes/no bit
    (as opposed to a one-bit index such as a shader array)."""

    __slots__ = ("flag", "hex", "lo", "lo64", "mask", "mask64", "names", "width")

    def __init__(
        self,
        lo: int,
        hi: int | None = None,
        *,
        names: Mapping[int, str] | None = None,
        hex: bool = False,
        flag: bool = False,
    ):
        hi = lo if hi is None else hi
        if hi < lo:
            raise ValueError(f"field [{lo}..{hi}]: last bit before first")
        self.lo, self.width = lo, hi - lo + 1
        self.mask = (1 << self.width) - 1
        # as numpy scalars for `column` on uint64 words: converting Python ints costs most of a small column
        self.lo64, self.mask64 = (np.uint64(x) if lo < 64 and self.mask < 1 << 64 else None for x in (lo, self.mask))
        self.names = names
        self.hex = hex
        self.flag = flag

    def get(self, word: int) -> int:
        """The field of one token (a Python int holding at least the bits up to this field)."""
        return (word >> self.lo) & self.mask

    def column(self, words: np.ndarray) -> np.ndarray:
        """The field of every token of an unsigned array, in that array's dtype (gfx9 first words stay
        uint16: no 64-bit copy of a whole stream)."""
        if words.dtype == _U64 and self.lo64 is not None:
            return (words >> self.lo64) & self.mask64
        return (words >> self.lo) & self.mask

    def put(self, value: int) -> int:
        """`value` in place, for encoders; refuses values the field cannot hold."""
        if not 0 <= value <= self.mask:
            raise ValueError(f"{value} does not fit in {self.width} bits")
        return value << self.lo

    def shifted(self, bits: int) -> Field:
        """The same bits seen from a word that starts `bits` into the token."""
        lo = self.lo - bits
        return Field(lo, lo + self.width - 1, names=self.names, hex=self.hex, flag=self.flag)

    def __repr__(self) -> str:
        return f"[{self.lo}..{self.lo + self.width - 1}]"


class Packet:
    """One token type of one family.

    `id` is matched against the token's low `id_bits` bits; `bits` is the length (a multiple of 4 on
    RDNA, of 16 on gfx9). `fields` are the named fields in bit order; a field called `delta` is the time
    delta, to which `delta_bias` is added (TIME advances its field + 4). `window` is where the 64-bit word
    the decoders read starts (gfx12 NEW_PC is read 8 bits in, past its id); `word_field` gives a field's
    position in that word.
    """

    __slots__ = ("bits", "delta_bias", "fields", "id", "id_bits", "name", "window")

    def __init__(
        self,
        name: str,
        id: int,
        id_bits: int,
        bits: int,
        *,
        delta_bias: int = 0,
        window: int = 0,
        **fields: Field | int | tuple[int, int],
    ):
        self.name, self.id, self.id_bits, self.bits = name, id, id_bits, bits
        self.delta_bias, self.window = delta_bias, window
        self.fields: dict[str, Field] = {k: _field(v) for k, v in fields.items()}
        for k, f in self.fields.items():
            if (f.lo < id_bits and k != "id") or f.lo + f.width > bits:
                raise ValueError(f"{name}.{k} {f} is outside the {bits}-bit token or over its id")

    def __getitem__(self, name: str) -> Field:
        return self.fields[name]

    def __contains__(self, name: str) -> bool:
        return name in self.fields

    def matches(self, low: int) -> bool:
        return low & ((1 << self.id_bits) - 1) == self.id

    @property
    def delta(self) -> Field | None:
        return self.fields.get("delta")

    def word_field(self, name: str) -> Field:
        """Field `name` as the decoders read it, from the word that starts `window` bits into the token."""
        f = self.fields[name]
        return f.shifted(self.window) if self.window else f

    def encode(self, **values: int) -> int:
        """The token with these field values (others 0) and its id."""
        word = self.id
        for k, v in values.items():
            if k not in self.fields:
                raise KeyError(f"{self.name} has no field {k!r} (fields: {', '.join(self.fields)})")
            word |= self.fields[k].put(v)
        return word

    def decode(self, word: int) -> dict[str, int]:
        """Every field of one token (`word` holds the whole token, low bits first)."""
        return {k: (word >> f.lo) & f.mask for k, f in self.fields.items()}

    def __repr__(self) -> str:
        return f"Packet({self.name}, id {self.id:#x}/{self.id_bits}, {self.bits} bits)"


def flag(bit: int) -> Field:
    """A one-bit yes/no field."""
    return Field(bit, flag=True)


def _field(spec: Field | int | tuple[int, int]) -> Field:
    if isinstance(spec, Field):
        return spec
    if isinstance(spec, int):
        return Field(spec)
    return Field(*spec)


class PacketTable:
    """A family's token types, identified by the low `id_window` bits of a token.

    Rows apply in order and a later row overwrites every id it matches (and the name it has): that is how
    the official table builder resolves overlapping patterns, and how `derive` states a family as another
    plus overrides. A row that restates a name also takes over the ids still left to that name's earlier
    row, as AMD's decoder's table does (gfx12 reads the ids only gfx11's SHADER_DATA_SHORT and SHADER_DATA
    patterns still match, e.g. 0x76 and 0x26, in gfx12's layouts). `at(low)` is the packet a token with
    those low bits is (None: unassigned).
    """

    def __init__(self, name: str, packets: Iterable[Packet], id_window: int):
        self.name, self.id_window = name, id_window
        self.rows: list[Packet] = list(packets)
        self.slots: list[Packet | None] = [None] * (1 << id_window)
        named: dict[str, Packet] = {}
        for p in self.rows:
            if p.id_bits > id_window:
                raise ValueError(f"{name}: {p} has a longer id than the {id_window} bits looked at")
            earlier = named.get(p.name)
            if earlier is not None:
                self.slots = [p if s is earlier else s for s in self.slots]
            named[p.name] = p
            step = 1 << p.id_bits
            for low in range(p.id, 1 << id_window, step):
                self.slots[low] = p
        self.by_name: dict[str, Packet] = {p.name: p for p in self.rows}

    def derive(self, name: str, overrides: Iterable[Packet]) -> PacketTable:
        """This table with `overrides` applied after its own rows."""
        return PacketTable(name, [*self.rows, *overrides], self.id_window)

    def __getitem__(self, name: str) -> Packet:
        return self.by_name[name]

    def __contains__(self, name: str) -> bool:
        return name in self.by_name

    def __iter__(self) -> Iterator[Packet]:
        return iter(self.by_name.values())

    def at(self, low: int) -> Packet | None:
        return self.slots[low]

    def __repr__(self) -> str:
        return f"PacketTable({self.name}, {len(self.by_name)} packets)"
