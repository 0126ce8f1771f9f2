"""RDNA3 / RDNA4 (gfx11, gfx12) raw SQTT decoder (docs/sqtt-rdna.md has the facts and where they come from).

packets.py           the token layouts (gfx10, gfx11 = gfx10 + overrides, gfx12 = gfx11 + overrides), INST
                     opcodes, the HEADER
splitter.py          the token stream as numpy arrays, with every token's time
wave.py              one traced wave's timing model, and what both passes below share
scalar.py            the reference pass over the tokens, one at a time (every token the format has)
vectorised.py        the same results with numpy, for blobs without the rare tokens (traps, context
vectorised_timing.py switches); its per-wave timing model as prefix operations
"""

from __future__ import annotations

from attdec.decoders.common import BlobResult, CodeMap, NotVectorisable
from attdec.decoders.compat import DEFAULT, Rules
from attdec.decoders.rdna.packets import FORMATS
from attdec.decoders.rdna.scalar import decode_scalar
from attdec.decoders.rdna.splitter import ready_reorder, split
from attdec.decoders.rdna.vectorised import decode_vectorised, vectorisable
from attdec.decoders.rdna.wave import as_reported
from attdec.model.target import Target


def decode(
    data: bytes,
    tgt: Target,
    code: CodeMap | None,
    se: int,
    where: str = "",
    vectorised: bool = True,
    rules: Rules = DEFAULT,
    **_opts,
) -> BlobResult:
    """Decode one RDNA SE blob into waves (stitched to PCs when `code` is given), occupancy, realtime.

    With `vectorised`, blobs without traps or context switches run the timing model in numpy; otherwise,
    and whenever that model declines, the scalar reference model runs.
    """
    fmt = FORMATS[tgt.generation]
    tk = split(
        data, fmt, whole_window=fmt.whole_window and rules.gfx12_end_window, time_extra=rules.rdna_time_token_extra
    )
    if fmt.ready_early:
        ready_reorder(tk)
    if vectorised and (insts := vectorisable(tk, fmt, rules)):
        try:
            return as_reported(decode_vectorised(tk, fmt, data, tgt, code, se, where, rules, insts=insts), rules)
        except NotVectorisable:
            pass
    return as_reported(decode_scalar(tk, fmt, data, tgt, code, se, where, rules), rules)


__all__ = ["FORMATS", "decode", "split"]
