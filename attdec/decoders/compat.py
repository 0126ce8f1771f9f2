"""The decoding rules that differ between versions of AMD's decoder, gathered in one object.

attdec reproduces one build of rocprof-trace-decoder exactly: 0.1.6, the build that made the captures'
oracle.json. Newer AMD sources change a few rules (docs/sqtt-rdna.md §1 lists them with the evidence).
Each such rule is a field of `Rules`; the decoders read these fields instead of hard-coding either
answer, so another decoder version is another `Rules` value (`COMPAT`), not a code change.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rules:
    """One decoder version's answers where versions disagree. The defaults are 0.1.6's."""

    # gfx11 s_barrier (INST opcode 19, header version 3): the newer source's `update_barrier_gfx11` turns
    # the 1-cycle IMMED record into a MESSAGE covering the whole wait, up to the wave's next event.
    gfx11_barrier_extension: bool = False
    # gfx11 INST opcode 15 (valub_16): 16 cycles, or the header's dprate as the newer source maps it.
    gfx11_valub_16_dprate: bool = False
    # code lines `s_prefetch*`: no trie prefix in 0.1.6, so SALU by the `s_` fallback; SMEM in newer tries.
    prefetch_is_smem: bool = False
    # gfx12 code lines `ds_bvh*`: BVH rather than LDS for the PC walk.
    gfx12_ds_bvh_is_bvh: bool = True
    # gfx12 end of blob: the newest reader decodes a token only if its whole 64-bit word lies in the blob;
    # 0.1.6 reads past the end as if zero bytes followed (every family), so a cut token is decoded.
    gfx12_end_window: bool = False
    # gfx9 INST type 15 (OTHER_MSG: s_endpgm, s_sendmsg): 0.1.6 times it like an immediate that waited since
    # the previous record, leaves the wave IDLE, and makes no record when there is no earlier record or
    # the earlier one ends after the issue; the newest source times it like any INST type.
    gfx9_message_as_immediate: bool = True
    # gfx9 WAVE_END: 0.1.6 ends the wave at the token's time and closes its last state run; the newest
    # source ends it 4 cycles later and closes the run only for waves with records.
    gfx9_end_at_token: bool = True


DEFAULT = Rules()

# Decoder versions by the name a user would give them (issue 11 adds the newer ones and `--compat`).
COMPAT: dict[str, Rules] = {"0.1.6": DEFAULT}
