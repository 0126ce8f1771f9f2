"""The decoding rules that differ between versions of AMD's decoder, gathered in one object.

AMD released three builds of rocprof-trace-decoder that users meet in the field: 0.1.4 (ROCm 7.0),
0.1.5 (ROCm 7.1) and 0.1.6 (ROCm 7.2; the default). Each is checked row for row against its own oracle
(the captures' oracle-0.1.4.json, oracle-0.1.5.json, oracle.json). A fourth, `rocm-7.13`, is the decoder
built from the newest public source (ROCm/rocm-systems `projects/rocprof-trace-decoder`): read, never run.
Each rule on which they differ is a field of `Rules`; the decoders read these fields instead of
hard-coding either answer, so a decoder version is a `Rules` value (`COMPAT`, chosen with `--compat` /
`compat=`), not a code change. docs/compat.md is the table of every rule with its evidence.
"""

from __future__ import annotations

from attdec.model.record import Frozen


class Rules(Frozen):
    """One decoder version's answers where versions disagree. The defaults are 0.1.6's."""

    # gfx11 s_barrier (INST opcode 19, header version 3): the newer source's `update_barrier_gfx11` turns
    # the 1-cycle IMMED record into a MESSAGE covering the whole wait, up to the wave's next event.
    gfx11_barrier_extension: bool = False
    # gfx11 INST opcode 15 (valub_16): 16 cycles, or the header's dprate as the newer source maps it.
    gfx11_valub_16_dprate: bool = False
    # code lines `s_prefetch*`: no trie prefix in 0.1.6, so SALU by the `s_` fallback; SMEM in newer tries.
    prefetch_is_smem: bool = False
    # gfx12 code lines `ds_bvh*`: LDS by the `ds_` prefix in 0.1.6, so a BVH record (INST 118, 121) does
    # not match them and the PC walk stops there; the newer `Trie::inst_type` makes them BVH.
    gfx12_ds_bvh_is_bvh: bool = False
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
    # gfx9 s_barrier: 0.1.6 reports its entry (MESSAGE) and exit (IMMED) records as one IMMED record from the
    # entry to the exit's end (a rocprofv3 session's wave files); the newest source keeps both records.
    gfx9_barrier_one_record: bool = True
    # Order of a blob's waves: 0.1.6 reports the waves that ended by end time, then the ones the blob cut;
    # the newest source reports them as it stitches them (RDNA: when the slot starts its next wave).
    end_time_order: bool = True
    # gfx11 s_barrier (INST opcode 19, header version 3): 0.1.6 starts its IMMED record when the previous
    # instruction ended, the wait since then a stall; 0.1.4 and 0.1.5 record it at its token, 1 cycle.
    gfx11_barrier_from_last_instruction: bool = True
    # RDNA TIME token: 0.1.5 on advances time by its field + 4; 0.1.4 adds this many cycles more, so every
    # later time of the blob drifts (idle and stall runs 4 cycles longer per TIME token in them).
    rdna_time_token_extra: int = 0
    # RDNA `cu` of occupancy, wave and SHADERDATA records: the WGP plus the shader array shifted left this
    # much (0.1.5 on: bit 7, the header's CU_SA_SHIFT); 0.1.4 adds sa * 8 (gfx12's WGP 9 of SA 1: 17).
    rdna_cu_sa_shift: int = 7
    # RDNA INST_OTHER_SIMD records (VMEM/LDS/FLAT issued on the traced WGP's other SIMD): new in 0.1.5.
    other_simd_records: bool = True
    # gfx10/11 end of blob: 0.1.6's reader reads the last 32 nibbles in a loop that starts with its WAVE_READY
    # queue emptied, so a WAVE_READY read there moves ahead of no token read before it; 0.1.5 and 0.1.4
    # release that queue otherwise (`splitter.ready_reorder`: a stable sort of the whole blob).
    ready_queue_end_reads: bool = True
    # gfx10/11 end of blob: 0.1.5 on stop reading when that loop's queue is next empty and the 16 nibbles the
    # reader last looked at are zero (a NOP starting the loop and 15 more); 0.1.4 reads on to the end.
    rdna_end_zero_window_stops: bool = True
    # INFO STITCH_INCOMPLETE (a wave's records did not all get a PC): 0.1.5 on raise it only for a wave whose
    # entry lies in a code object the trace's markers announced; 0.1.4 for any such wave.
    stitch_incomplete_without_marker: bool = False


DEFAULT = Rules()
V0_1_5 = Rules(gfx11_barrier_from_last_instruction=False, ready_queue_end_reads=False)
V0_1_4 = Rules(
    gfx11_barrier_from_last_instruction=False,
    ready_queue_end_reads=False,
    rdna_end_zero_window_stops=False,
    rdna_time_token_extra=4,
    rdna_cu_sa_shift=3,
    other_simd_records=False,
    stitch_incomplete_without_marker=True,
)
NEWEST = Rules(
    gfx11_barrier_extension=True,
    gfx11_valub_16_dprate=True,
    prefetch_is_smem=True,
    gfx12_ds_bvh_is_bvh=True,
    gfx12_end_window=True,
    gfx9_message_as_immediate=False,
    gfx9_end_at_token=False,
    gfx9_barrier_one_record=False,
    end_time_order=False,
)

# Decoder versions by the name a user gives them (`--compat`); the first is the default.
COMPAT: dict[str, Rules] = {"0.1.6": DEFAULT, "0.1.5": V0_1_5, "0.1.4": V0_1_4, "rocm-7.13": NEWEST}


def rules_for(name: str | Rules | None) -> Rules:
    """The rules of a decoder version named as `--compat` takes it (None: the default, 0.1.6)."""
    if name is None:
        return DEFAULT
    if isinstance(name, Rules):
        return name
    try:
        return COMPAT[name]
    except KeyError:
        from attdec.errors import InputError

        raise InputError(f"unknown decoder version {name!r} (known: {', '.join(COMPAT)})", "--compat") from None
