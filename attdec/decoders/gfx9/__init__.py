"""gfx9 (CDNA: gfx90a, gfx942, gfx950) raw SQTT decoder, bit-exact with AMD's rocprof-trace-decoder.

Rules and their provenance: docs/sqtt-gfx9.md; spec: sqtt-format.md §1.3, §3, §5, §7.2.

packets.py   the software header, token layouts, INST types, MISC subtypes
splitter.py  16-bit words -> token starts and values; time (+4 cycles a delta unit, re-anchored at every
             MISC TIME_RESET on the next TIMESTAMP), numpy with a short Python pass over the resets
wave.py      one traced wave's ISSUE/INST timing model
scalar.py    the reference pass over the tokens that matter (wave start/end, ISSUE, INST, INST_PC, CS
             registers): occupancy for every wave, the timing model for the target CU's waves, then the PC walk
vectorised.py the same results with numpy, for blobs without the rare tokens (traps, context saves, XNACK
             replays, INST_PC)
"""

from __future__ import annotations

import numpy as np

from attdec.decoders.common import BlobResult, CodeMap, NotVectorisable
from attdec.decoders.compat import DEFAULT, Rules
from attdec.decoders.gfx9.packets import GFX9, HEADER, HEADER_BYTES, TOKEN_NAMES, TOKEN_WORDS, is_gfx9_header
from attdec.decoders.gfx9.scalar import run
from attdec.decoders.gfx9.splitter import (
    TYPE_MASK,
    official_timestamps,
    split_tokens,
    token_starts,
    token_times,
    token_values,
)
from attdec.decoders.gfx9.vectorised import by_type, run_vectorised, vectorisable
from attdec.errors import FormatError
from attdec.model.target import Target

_FOUR = np.arange(4)
VECTORISE_FROM = 1500  # tokens the model looks at: in smaller blobs numpy's per-call costs outweigh the loop


def parse_header(data: bytes, where: str = "") -> dict[str, int]:
    """The 8-byte software header in front of every gfx9 buffer (sqtt-format.md §1.3), field by field."""
    if len(data) < HEADER_BYTES:
        raise FormatError(f"{len(data)} bytes: too short for a gfx9 SQTT header (8 bytes)", where or None)
    h = int.from_bytes(data[:HEADER_BYTES], "little")
    f = HEADER.decode(h)
    if not is_gfx9_header(h):
        raise FormatError(
            f"not a gfx9 SQTT stream (header 0x{h:016x}: legacy version 0x{f['legacy']:x}, "
            f"gfx9 version {f['version2']}; expected 0x0/0x11 and 4..6)",
            where or None,
        )
    return f


def decode(
    data: bytes,
    tgt: Target,
    code: CodeMap | None,
    se: int,
    target_cu: int | None = None,
    where: str = "",
    rules: Rules = DEFAULT,
    vectorised: bool = True,
) -> BlobResult:
    """Decode one SE's gfx9 SQTT buffer (header included).

    target_cu: the CU whose waves get wave records and instruction detail. None = the header's DCU field,
    as the official decoder does. tinygrad writes the SE index over those bits: odd SEs name CU 16, which
    does not exist, and (as the hardware was programmed the same way) carry no instruction tokens; see
    docs/sqtt-gfx9.md. Problems (truncation, lost sync, packet loss) go to `problems` with byte offsets.
    With `vectorised`, blobs without the rare tokens (traps, context saves, replays, INST_PC) and with
    VECTORISE_FROM tokens or more run the timing model in numpy; otherwise, and whenever that model
    declines, the scalar reference model runs.
    """
    hdr = parse_header(data, where)
    tcu = hdr["target_cu"] if target_cu is None else int(target_cu)
    res = BlobResult(se=se, target=tgt)
    nbody = len(data) - HEADER_BYTES
    words = np.frombuffer(data, "<u2", count=nbody // 2, offset=HEADER_BYTES)  # no copy of the blob
    starts, truncated = token_starts(words)
    cut = truncated is not None or nbody % 2
    if truncated is not None:
        res.problems.append(truncation(int(words[truncated]), truncated, nbody))
    if cut:
        # AMD's reader reads past the end of a cut blob as if zero bytes followed (zero words are MISC
        # TIME tokens of delta 0): the cut token is decoded, and a trailing odd byte is read too.
        words = np.frombuffer(data[HEADER_BYTES:] + bytes(8 + nbody % 2), "<u2")
        starts, _ = token_starts(words)

    at, times = token_times(words, starts, timestamps(words), bool(cut))
    res.bytes_decoded = len(data)
    del starts
    types = (words[at] & TYPE_MASK).astype(np.uint8)
    vals = token_values(words, at, types)
    offsets = 2 * at + HEADER_BYTES
    run_model(res, types, vals, times, offsets, tcu, code, rules, vectorised)
    return res


def timestamps(words: np.ndarray):
    """`token_times`'s reader of the TIMESTAMP tokens (4 words) at word positions `at` of `words`."""

    def ts_of(at):  # each word group read as one u64
        token = words[at[:, None] + _FOUR].view("<u8")[:, 0]
        return official_timestamps(GFX9["TIMESTAMP"]["timestamp"].column(token))

    return ts_of


def truncation(word: int, at: int, nbody: int) -> str:
    """The problem of a token (first word `word`) at body word `at` that runs past the body's end."""
    ty = word & TYPE_MASK
    return (
        f"truncated token at byte offset {HEADER_BYTES + 2 * at} ({TOKEN_NAMES[ty]}, "
        f"{nbody - 2 * at} of {2 * TOKEN_WORDS[ty]} bytes), read with its missing bytes 0"
    )


def run_model(res, types, vals, times, offsets, tcu, code, rules, vectorised=True, carried=None) -> None:
    """The timing model over the selected tokens: numpy when the tokens allow it, else the scalar pass."""
    of = by_type(types) if vectorised and len(types) >= VECTORISE_FROM else None
    if of is not None and vectorisable(types, vals, tcu, of):
        try:
            run_vectorised(res, types, vals, times, offsets, tcu, code, rules, of, carried)
            return
        except NotVectorisable:
            pass
    run(res, types, vals, times, offsets, tcu, code, rules, carried)


__all__ = ["TOKEN_WORDS", "decode", "parse_header", "split_tokens", "token_values"]
