"""gfx9 (CDNA: gfx90a, gfx942, gfx950) raw SQTT decoder, bit-exact with AMD's rocprof-trace-decoder.

Layers (rules and their provenance: docs/sqtt-gfx9.md, spec: sqtt-format.md §1.3, §3, §5, §7.2):
  1. the 8-byte software header (target CU, format check);
  2. token splitting: 16-bit little-endian words, type = low nibble, fixed length per type (numpy);
  3. time: +4 cycles per delta unit, re-anchored at every MISC TIME_RESET on the next TIMESTAMP (numpy,
     with a short Python pass over the resets only);
  4. a state machine over the few token kinds that matter (wave start/end, ISSUE, INST, INST_PC, CS
     registers): occupancy for every wave, the ISSUE/INST timing model for the target CU's waves;
  5. the PC walk (stitching) of each finished wave against the code map, with the gfx9 tweaks.
"""

from __future__ import annotations

import gc
from array import array
from collections import deque

import numpy as np

from attdec.decoders.common import BlobResult, CodeMap
from attdec.errors import FormatError
from attdec.model import OCCUPANCY_DTYPE, Wave, empty_insts

HEADER_BYTES = 8

# Token types (low nibble of the first word) and their length in 16-bit words (official token_len_dict).
(
    MISC,
    TIMESTAMP,
    REG,
    WAVE_START,
    WAVE_ALLOC,
    REG_CS,
    WAVE_END,
    EVENT,
    EVENT_CS,
    EVENT_GFX1,
    INST,
    INST_PC,
    SHADERDATA,
    ISSUE,
    PERF,
    REG_CS_PRIV,
) = range(16)
TOKEN_WORDS = np.array([1, 4, 4, 2, 1, 3, 1, 1, 1, 1, 1, 4, 3, 2, 4, 3], np.int64)
TOKEN_NAMES = (
    "MISC",
    "TIMESTAMP",
    "REG",
    "WAVE_START",
    "WAVE_ALLOC",
    "REG_CS",
    "WAVE_END",
    "EVENT",
    "EVENT_CS",
    "EVENT_GFX1",
    "INST",
    "INST_PC",
    "SHADERDATA",
    "ISSUE",
    "PERF",
    "REG_CS_PRIV",
)

# MISC subtypes (bits [13..15]).
(
    MISC_TIME,
    MISC_TIME_RESET,
    MISC_PACKET_LOST,
    MISC_SURF_SYNC,
    MISC_TT_STALL_BEGIN,
    MISC_TT_STALL_END,
    MISC_SAVE_CONTEXT,
) = range(7)

# Instruction record categories: the official inst_category_t values, plus the internal placeholder for an
# ISSUE that its INST token has not (yet) described.
C_NONE, C_SMEM, C_SALU, C_VMEM, C_FLAT, C_LDS, C_VALU, C_JUMP, C_NEXT, C_IMMED, C_CONTEXT, C_MESSAGE = range(12)
C_NOT_FINISHED = 14

# Wave states (wave_state_t).
S_EMPTY, S_IDLE, S_EXEC, S_WAIT, S_STALL = range(5)

# Trap status of a wave (WaveTrapStatus).
TRAP_RESTORED, TRAP_REQUEST, TRAP_STANDBY, TRAP_WAIT_FOR_NEW_PC = range(4)

# INST token types (bits [11..15]) -> (category, phase offset); §3.4. Absent = placeholder deleted.
INST_PC_TYPE, INST_GO_TO_TRAP = 7, 29
SALU_PHASE, VALU_PHASE, MISC_PHASE = 5, 2, 1
INST_TYPES = {
    0: (C_SMEM, SALU_PHASE),
    16: (C_SMEM, SALU_PHASE),  # SMEM_RD, SMEM_WR
    1: (C_SALU, SALU_PHASE),
    17: (C_SALU, SALU_PHASE),  # SALU_32, SALU_64
    2: (C_VMEM, 0),
    3: (C_VMEM, 0),  # VMEM_RD, VMEM_WR
    4: (C_FLAT, 0),
    14: (C_FLAT, 0),  # FLAT_WR, FLAT_RD
    5: (C_VALU, VALU_PHASE),
    18: (C_VALU, VALU_PHASE),
    28: (C_VALU, VALU_PHASE),  # VALU_32/64, MAI
    6: (C_LDS, MISC_PHASE),
    12: (C_JUMP, MISC_PHASE),
    13: (C_NEXT, MISC_PHASE),
    15: (C_MESSAGE, MISC_PHASE),  # OTHER_MSG
    INST_PC_TYPE: (C_SALU, 0),
    INST_GO_TO_TRAP: (C_CONTEXT, 0),
}
# XNACK replays (type -> the type whose last instruction they extend).
REPLAY_OF = {19: 0, 20: 16, 21: 2, 22: 3, 23: 4, 24: 14}
N_XNACK = 17  # size of the official last_inst_for_xnack table

# Token types the state machine looks at (MISC only for packet loss and context save).
RELEVANT = np.zeros(16, bool)
RELEVANT[[MISC, WAVE_START, WAVE_ALLOC, WAVE_END, INST, INST_PC, ISSUE, REG, REG_CS, REG_CS_PRIV, SHADERDATA]] = True

# Compute register offsets (REG_CS regaddr) the decoder latches.
COMPUTE_PGM_LO, COMPUTE_PGM_HI = 0x0C, 0x0D
ADDR_MASK = (1 << 48) - 1
USERDATA_2, USERDATA_3 = 0xC342, 0xC343


def parse_header(data: bytes, where: str = "") -> dict:
    """The 8-byte software header in front of every gfx9 buffer (sqtt-format.md §1.3)."""
    if len(data) < HEADER_BYTES:
        raise FormatError(f"{len(data)} bytes: too short for a gfx9 SQTT header (8 bytes)", where or None)
    h = int.from_bytes(data[:HEADER_BYTES], "little")
    legacy, version2 = h & 0x1FFF, (h >> 13) & 7
    if legacy not in (0, 0x11) or not 4 <= version2 <= 6:
        raise FormatError(
            f"not a gfx9 SQTT stream (header 0x{h:016x}: legacy version 0x{legacy:x}, "
            f"gfx9 version {version2}; expected 0x0/0x11 and 4..6)",
            where or None,
        )
    return {
        "version2": version2,
        "simd_mask": (h >> 16) & 0xF,
        "target_cu": (h >> 20) & 0x1F,
        "dsa": (h >> 25) & 1,
        "seid": (h >> 26) & 0x3F,
        "double_buffer": (h >> 32) & 1,
    }


SPLIT_BLOCK = 512  # words per block of the vectorized split
SPLIT_CHUNK = 1 << 20  # words (or tokens) per numpy pass: bounds the scratch arrays


def split_tokens(words: np.ndarray):
    """Token start positions (word index) and types; the index where a token ran past the end, or None.

    Lengths depend only on the type nibble, so finding the starts is a chain of hops. It is vectorized by
    blocks of SPLIT_BLOCK words (see _split_chunk); the result equals the hop-by-hop walk (tested).
    """
    n = len(words)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.uint8), None
    lens = TOKEN_WORDS.astype(np.uint8)[words & 15]
    idx_type = np.int32 if n < (1 << 31) - 8 else np.int64  # 4 bytes a token where it fits
    starts = []
    entry = 0
    for lo in range(0, n, SPLIT_CHUNK):
        hi = min(n, lo + SPLIT_CHUNK)
        if entry >= hi - lo:  # a long token crossed the whole (tiny) remainder
            entry -= hi - lo
            continue
        part, entry = _split_chunk(lens[lo:hi], entry)
        starts.append((part + lo).astype(idx_type))
    s = np.concatenate(starts) if starts else np.zeros(0, idx_type)
    truncated = None
    if len(s) and s[-1] + lens[s[-1]] > n:  # the last token runs past the end: the official reader drops it
        truncated = int(s[-1])
        s = s[:-1]
    return s, (words[s] & 15).astype(np.uint8), truncated


def _split_chunk(lens: np.ndarray, entry: int):
    """Token starts in one chunk entered at word `entry` (< 4), and the entry offset into the next chunk.

    Every block is walked from its first word, all blocks at once. The real chain enters a block at one of
    its first 4 words and almost always lands on that walk within a token or two; the few words before it
    merges are walked in Python.
    """
    n = len(lens)
    B = SPLIT_BLOCK
    nb = (n + B - 1) // B
    idx = np.arange(n, dtype=np.int64)
    hop = idx + lens.astype(np.int64)
    block_end = np.minimum((idx // B + 1) * B, n)
    out = hop >= block_end
    hop[out] = n + (hop[out] - block_end[out])  # leaving the block: park at sink n + exit offset
    hop = np.concatenate([hop, np.arange(n, n + 4, dtype=np.int64)])  # sinks stay put
    visit = np.zeros(n + 4, bool)
    pos = np.arange(nb, dtype=np.int64) * B
    while True:
        visit[pos] = True
        new = hop[pos]
        if np.array_equal(new, pos):
            break
        pos = new
    exits = (pos - n).tolist()  # exit offset of each block's own walk
    seen = visit
    merge = np.empty(nb, np.int64)  # from here on, the block's own walk is the chain
    extra = []  # chain words before it merges
    e = entry
    for k in range(nb):
        p = k * B + e
        end = min(p - e + B, n)
        while p < end and not seen[p]:
            extra.append(p)
            p += int(lens[p])
        merge[k] = p
        e = exits[k] if p < end else p - end
    on = seen[:n] & (idx >= np.repeat(merge, B)[:n])
    if extra:
        on[np.asarray(extra, np.int64)] = True
    return np.flatnonzero(on), e


def token_values(words: np.ndarray, starts: np.ndarray, types: np.ndarray) -> np.ndarray:
    """Full little-endian values (up to 64 bits, uint64) of the tokens at `starts`."""
    padded = np.concatenate([words, np.zeros(3, words.dtype)])
    nw = TOKEN_WORDS[types]
    val = padded[starts].astype(np.uint64)
    for k in (1, 2, 3):
        part = padded[starts + k].astype(np.uint64) << np.uint64(16 * k)
        val |= np.where(nw > k, part, np.uint64(0))
    return val


def _relevant(f: np.ndarray) -> np.ndarray:
    """Tokens (by first word) the state machine looks at; MISC only for packet loss and context save."""
    ty = f & 15
    sub = (f >> 13) & 7
    return RELEVANT[ty] & ((ty != MISC) | (sub == MISC_PACKET_LOST) | (sub == MISC_SAVE_CONTEXT))


def token_times(first: np.ndarray, ts_of, ended_partial: bool, select=_relevant):
    """Indices of the selected tokens and their times (int64), from the tokens' first words.

    Mirrors MITokenGenerator::next/patch_time: each token adds 4*delta (MISC: bits [4..11], others: bit 4).
    A TIME_RESET scans ahead for the next TIMESTAMP (consumed, its own delta never added) and re-anchors the
    time on it; a second TIME_RESET met during that scan stops it and is dropped unseen. When the scan runs
    into a truncated last token, the official reader hands it a zero timestamp. TIMESTAMP and TIME_RESET
    are never delivered, so never selected. `ts_of(i)` gives the (46-bit signed, as in the official token)
    timestamp of TIMESTAMP token i; only those few are read.

    Two chunked passes (specials and selection, then running sums) keep memory to the selected tokens.
    """
    n = len(first)
    C = SPLIT_CHUNK
    resets, specials, sels = [], [], []
    for lo in range(0, n, C):
        f = first[lo : lo + C]
        ty = f & 15
        is_reset = (ty == MISC) & (((f >> 13) & 7) == MISC_TIME_RESET)
        is_special = is_reset | (ty == TIMESTAMP)
        resets.append(np.flatnonzero(is_reset) + lo)
        specials.append(np.flatnonzero(is_special) + lo)
        sels.append(np.flatnonzero(select(f) & ~is_special) + lo)
    reset_at = set(np.concatenate(resets).tolist()) if n else set()
    sp = np.concatenate(specials).tolist() if n else []
    sel = np.concatenate(sels) if n else np.zeros(0, np.int64)

    resyncs = []  # (reset index, timestamp value)
    silenced = []  # tokens whose delta is never added
    k = 0
    while k < len(sp):
        r = sp[k]
        k += 1
        if r not in reset_at:
            continue  # a TIMESTAMP in normal flow: only its delta counts
        if k < len(sp):
            s = sp[k]
            k += 1
            silenced.append(s)  # consumed by the scan (TIMESTAMP) or dropped unseen (TIME_RESET)
            if s not in reset_at:
                resyncs.append((r, ts_of(s)))
        elif ended_partial:
            resyncs.append((r, 0))
    silenced = np.asarray(silenced, np.int64)
    at_reset = np.asarray([r for r, _ in resyncs], np.int64)

    # running time (before resync offsets) at the selected tokens and at the resync resets
    t_sel = np.empty(len(sel), np.int64)
    t_reset = np.empty(len(at_reset), np.int64)
    carry = 0
    for lo in range(0, n, C):
        f = first[lo : lo + C]
        inc = ((f >> 4) & np.where((f & 15) == MISC, 0xFF, 1).astype(f.dtype)).astype(np.int64)
        a, b = np.searchsorted(silenced, [lo, lo + len(f)])
        inc[silenced[a:b] - lo] = 0
        cs = np.cumsum(inc, out=inc)
        cs *= 4
        cs += carry
        carry = int(cs[-1])
        a, b = np.searchsorted(sel, [lo, lo + len(f)])
        t_sel[a:b] = cs[sel[a:b] - lo]
        a, b = np.searchsorted(at_reset, [lo, lo + len(f)])
        t_reset[a:b] = cs[at_reset[a:b] - lo]

    offs = [0]  # offset in force after each resync, from the running times
    off, base = 0, 0
    for (_r, t), g0 in zip(resyncs, t_reset.tolist()):
        g = g0 + off
        if base == 0:
            base = t - g + 4
        if t > base:
            g = (t - base) & ~3
        off = g - g0
        offs.append(off)
    if resyncs:
        t_sel += np.asarray(offs, np.int64)[np.searchsorted(at_reset, sel, side="left")]
    return sel, t_sel


class _Wave:
    """One traced wave while it is being decoded (the official gfx9 wave_t)."""

    __slots__ = (
        "begin",
        "complete",
        "contexts",
        "cu",
        "end",
        "insts",
        "issued",
        "pc_infos",
        "pc_tail",
        "simd",
        "slot",
        "stall_starts",
        "state",
        "state_start",
        "timeline",
        "trap",
        "trapping",
        "xnack",
    )

    def __init__(self, cu, simd, slot, begin, entry_pc):
        self.cu, self.simd, self.slot, self.begin, self.end = cu, simd, slot, begin, 0
        self.insts = []  # [time, category, duration, stall, pc]
        self.pc_infos = [[0, entry_pc]] if entry_pc else []  # [record index, pc]
        self.pc_tail = len(self.pc_infos)  # start of the trailing run of still-unknown PCs
        self.trap = TRAP_RESTORED
        self.state, self.state_start = S_IDLE, begin
        self.timeline = []  # [state, duration]
        self.stall_starts = deque()  # deques: adversarial streams must not make the pops quadratic
        self.issued = deque()
        self.xnack = [0] * N_XNACK
        self.contexts = 0
        self.complete = self.trapping = False

    def _add_state(self, state, duration):
        if self.timeline and self.timeline[-1][0] == state:
            self.timeline[-1][1] += duration
        else:
            self.timeline.append([state, duration])

    def issue(self, status: int, t: int) -> None:
        """ISSUE status for this wave at time t: 1 stall, 2 instruction issued, 3 immediate issued."""
        if self.trap != TRAP_RESTORED:
            return
        prev_state = self.state
        insts = self.insts
        tl = self.timeline
        if status == 2:
            self.state = S_EXEC
            self.issued.append(len(insts))
            insts.append([t, C_NOT_FINISHED, 0, 0, 0])
        elif status == 1:
            self.state = S_STALL
            self.stall_starts.append(t)
        else:
            start = t
            if insts and insts[-1][1] != C_NOT_FINISHED:
                last = insts[-1]
                _mend(last, t)
                start = min(last[0] + last[2], t)
            cycles = 4 + max(0, t - start)
            insts.append([start, C_IMMED, cycles, cycles, 0])
            if self.state_start < start:
                self._add_state(prev_state, start - self.state_start)
            self.state = S_EXEC
            tl.append([S_WAIT, cycles])
            self.state_start = start + cycles
        d = t - self.state_start
        if d > 0:
            if tl and tl[-1][0] == prev_state:
                tl[-1][1] += d
            else:
                tl.append([prev_state, d])
            self.state_start = t

    def inst(self, itype: int, t: int, simd: int, phase_box: list) -> str | None:
        """INST token of type `itype` at time t: describes the oldest issued placeholder."""
        insts = self.insts
        if self.trap == TRAP_WAIT_FOR_NEW_PC and itype == INST_PC_TYPE:
            self.pc_infos.append([len(insts), 0])
            self.trap = TRAP_RESTORED
            if insts and insts[-1][1] == C_CONTEXT:
                insts[-1][2] = t + 4 - insts[-1][0]
            return None
        if self.trap != TRAP_RESTORED or not self.issued:
            return None
        idx = self.issued.popleft()
        if idx >= len(insts):  # the official .at() would throw here (after a replay erase)
            return f"INST for a record that no longer exists (wave {simd}/{self.slot})"
        p = insts[idx]
        if len(insts) >= 2:
            q = insts[-2]
            if p[0] < q[0] + q[2]:
                phase_box[0] += 1
        if idx > 0:
            _mend(insts[idx - 1], p[0])
        phase = (phase_box[0] + simd) % 4
        if itype < N_XNACK:
            self.xnack[itype] = idx + 1
        kind = INST_TYPES.get(itype)
        if kind is None:
            entry = REPLAY_OF.get(itype, -1)
            if 0 <= entry < N_XNACK:
                j = self.xnack[entry]
                self.xnack[entry] = 0
                if 0 < j < len(insts) and j < idx:
                    x = insts[j - 1]
                    old = x[2]
                    x[2] = max(x[2], t + 4 - x[0])
                    x[3] += x[2] - old
            del insts[idx]
            return None
        cat, offset = kind
        p[1] = cat
        phase += offset
        if cat == C_MESSAGE:
            self._as_message(idx)
            return None
        if itype == INST_PC_TYPE:
            self.pc_infos.append([idx + 1, 0])
        elif itype == INST_GO_TO_TRAP:
            self.trap = TRAP_WAIT_FOR_NEW_PC
            self.trapping = True
            last = len(insts) - 1
            for info in self.pc_infos:
                if info[0] == last:
                    info[0] += 1
        p[2] = 4 + max(t - p[0] - 4 * (phase // 4), 0)
        ss = self.stall_starts
        if ss and p[0] > ss[0]:
            prev_end = insts[idx - 1][0] + insts[idx - 1][2] if idx > 0 else 0
            stall_start = p[0]
            while ss and p[0] > ss[0]:
                stall_start = max(ss.popleft(), prev_end)
            p[3] = max(p[0] - stall_start, 0)
            p[2] = max(p[0] + p[2] - stall_start, 4)
            p[0] = stall_start
        return None

    def _as_message(self, idx: int) -> None:
        """OTHER_MSG (s_endpgm, s_sendmsg...): timed like an immediate that waited since the previous record.

        Not in the published source: inferred from the official decoder's output on the gfx950 captures
        (time = previous record's end, duration = 4 + issue time - that, stall 0, a WAIT run in the
        timeline). See docs/sqtt-gfx9.md.
        """
        p = self.insts[idx]
        t = p[0]
        start = t
        if idx > 0 and self.insts[idx - 1][1] != C_NOT_FINISHED:
            q = self.insts[idx - 1]
            start = min(q[0] + q[2], t)
        cycles = 4 + max(0, t - start)
        p[0], p[2], p[3] = start, cycles, 0
        back = t - start
        if back > 0 and self.timeline and self.timeline[-1][1] >= back:
            self.timeline[-1][1] -= back
            if not self.timeline[-1][1]:
                self.timeline.pop()
        self.timeline.append([S_WAIT, cycles])
        self.state = S_EXEC
        self.state_start = max(self.state_start, start + cycles)

    def new_pc(self, pc: int) -> None:
        """INST_PC: fill the oldest slot of the trailing run of still-unknown PCs (or open one)."""
        if not self.pc_infos or self.trap != TRAP_RESTORED:
            return
        i = self.pc_tail
        if i == len(self.pc_infos):
            self.pc_infos.append([len(self.insts), 0])
        self.pc_infos[i][1] = pc
        if pc:
            self.pc_tail = i + 1

    def finish(self, t: int) -> None:
        """WAVE_END at t: close the last state run.

        The published source ends the wave at t + 4 and closes the run only for waves with records; the
        official output (gfx950 captures) ends it at t and closes the run for every wave.
        """
        if t > self.state_start:
            self.timeline.append([self.state, t - self.state_start])
        self.state, self.state_start, self.end = S_EMPTY, t, t
        self.complete = True


class _Instrumentation:
    """The ROCm instrumentation protocol on SQ_THREAD_TRACE_USERDATA_2/3 (sqtt-format.md §4, §9.1).

    USERDATA_2 carries a "\\0ROC" activation word then 32-bit packet headers (opcode [0..7], type [8..11],
    data20 [12..31]); agent info and code-object markers live there. USERDATA_3 carries realtime samples:
    opcode 5 (RT_TIMESTAMP, 3 words) or 7 (RT_TIMESTAMP_LO32, 1 word), delivered when the last word arrives.
    Code-object markers are only tracked to stay in step: attdec reports absolute PCs.
    """

    WAIT_FOR_HEADER = -1
    RT_DELTA, RT_HI, RT_LOW = 0, 1, 2

    def __init__(self):
        self.active = False
        self.state = self.WAIT_FOR_HEADER
        self.rt_frequency = 0
        self.count = 0
        self.known = False
        self.values = [0, 0, 0]

    def userdata2(self, data: int) -> None:
        if not self.active:
            if data == 0x434F5200:  # bytes 00 'R' 'O' 'C'
                self.active = True
                self.state = self.WAIT_FOR_HEADER
            return
        if self.state == self.WAIT_FOR_HEADER:
            opcode, typ, data20 = data & 0xFF, (data >> 8) & 0xF, data >> 12
            if opcode == 6 and typ == 0:
                self.rt_frequency = data20 * 1000
            elif opcode == 4 and data20 == 0:
                self.state = typ
            return
        self.state = self.WAIT_FOR_HEADER  # one payload word per marker header

    def realtime_word(self, t: int, data: int):
        if not self.active:
            return None
        if self.count == 0:
            opcode, data20 = data & 0xFF, data >> 12
            if opcode == 5:
                self.count, self.known = data20 or 3, True
            elif opcode == 7:
                self.count, self.known = data20 or 1, True
                self.values[self.RT_LOW] = self.values[self.RT_DELTA]
            else:
                self.count, self.known = data20, False
            return None
        self.count -= 1
        if not self.known or self.count < 0:
            return None
        if self.count < 3:
            self.values[self.count] = data
        if self.count > 0:
            return None
        if self.values[self.RT_DELTA] < self.values[self.RT_LOW]:
            self.values[self.RT_HI] += 1
        return (t, self.values[self.RT_DELTA] | self.values[self.RT_HI] << 32)


def _mend(prev: list, t: int) -> None:
    """Trim a record so that it ends no later than t (never below 4 cycles)."""
    if t < prev[0] + prev[2]:
        prev[2] = max(t - prev[0], 4)
        prev[3] = min(prev[3], prev[2])


def decode(data: bytes, arch: str, code: CodeMap, se: int, target_cu: int | None = None, where: str = "") -> BlobResult:
    """Decode one SE's gfx9 SQTT buffer (header included).

    target_cu: the CU whose waves get wave records and instruction detail. None = the header's DCU field,
    as the official decoder does. tinygrad writes the SE index over those bits: odd SEs name CU 16, which
    does not exist, and (as the hardware was programmed the same way) carry no instruction tokens; see
    docs/sqtt-gfx9.md. Problems (truncation, lost sync, packet loss) go to `problems` with byte offsets.
    """
    hdr = parse_header(data, where)
    was_enabled = gc.isenabled()
    gc.disable()  # millions of small records: the cyclic GC would rescan them over and over
    try:
        return _decode(data, arch, code, se, hdr, target_cu, where)
    finally:
        if was_enabled:
            gc.enable()


def _decode(data, arch, code, se, hdr, target_cu, where) -> BlobResult:
    tcu = hdr["target_cu"] if target_cu is None else int(target_cu)
    res = BlobResult(se=se, arch=arch)
    nbody = len(data) - HEADER_BYTES
    words = np.frombuffer(data, "<u2", count=nbody // 2, offset=HEADER_BYTES)  # no copy of the blob
    starts, _, truncated = split_tokens(words)
    if truncated is not None:
        res.problems.append(
            f"truncated token at byte offset "
            f"{HEADER_BYTES + 2 * truncated} ({TOKEN_NAMES[int(words[truncated]) & 15]}, "
            f"{nbody - 2 * truncated} of {2 * TOKEN_WORDS[int(words[truncated]) & 15]} bytes)"
        )
    first = words[starts]

    def ts_of(i):
        w = int(starts[i])  # noqa: F821 - called before `del starts`; a TIMESTAMP is 4 words; bits [16..63] are words 1..3
        raw = (int(words[w + 1]) | int(words[w + 2]) << 16 | int(words[w + 3]) << 32) & ((1 << 46) - 1)
        return raw - (1 << 46) if raw >= 1 << 45 else raw  # the official 46-bit signed time field

    sel, times = token_times(first, ts_of, truncated is not None)
    res.bytes_decoded = HEADER_BYTES + (2 * truncated if truncated is not None else 2 * len(words))
    del first
    at = starts[sel]
    del starts
    types = (words[at] & 15).astype(np.uint8)
    _run(res, types, token_values(words, at, types), times, 2 * at.astype(np.int64) + HEADER_BYTES, tcu, code)
    return res


def _slices(*arrays, size: int = 1 << 18):
    """Rows of parallel numpy arrays as Python ints, a slice at a time (bounded list memory)."""
    n = len(arrays[0])
    for lo in range(0, n, size):
        yield from zip(*(a[lo : lo + size].tolist() for a in arrays))


def _run(res: BlobResult, types, vals, times, offsets, tcu: int, code: CodeMap | None) -> None:
    """The official MISQTTParser::sqtt_simd_analysis over the tokens that matter (numpy arrays in)."""
    slots = [[[] for _ in range(10)] for _ in range(4)]  # per (simd, slot): waves, newest last
    running = {}  # location -> entry pc (occupancy)
    occ = array("q")  # flat (cu, simd, slot, start, time, pc) rows: 48 bytes a row
    occ_front = array("q")  # synthetic starts for ends without a start, placed first
    pgm = {}  # (me & 1, pipe) -> PGM address register (>> 8)
    phase_box = [15]  # the SE-wide CYCLE_START_PHASE
    packet_lost = False
    done = []  # finished _Wave objects, in emission order
    seq = {}
    issue_pairs = {}  # ISSUE status field -> [(slot, status)] for the non-zero slots
    instr = _Instrumentation()
    entry_checked = False

    def emit(w):
        done.append(w)

    for ty, v, t, off in _slices(types, vals, times, offsets):
        if ty == ISSUE:
            row = slots[(v >> 5) & 3]
            field = (v >> 8) & 0xFFFFF
            pairs = issue_pairs.get(field)
            if pairs is None:
                pairs = issue_pairs[field] = [(i, (field >> 2 * i) & 3) for i in range(10) if (field >> 2 * i) & 3]
            for i, st in pairs:
                if row[i]:
                    row[i][-1].issue(st, t)
        elif ty == INST:
            slot, simd, itype = (v >> 5) & 0xF, (v >> 9) & 3, (v >> 11) & 0x1F
            if slot > 9:
                res.problems.append(
                    f"INST for wave slot {slot} at byte offset {off}; "
                    "the official decoder aborts here, decoding stopped"
                )
                break
            ws = slots[simd][slot]
            if not ws or ws[-1].end:
                ws.append(_Wave(tcu, simd, slot, t, 0))
            err = ws[-1].inst(itype, t, simd, phase_box)
            if err:
                res.problems.append(f"{err} at byte offset {off}")
        elif ty in (WAVE_START, WAVE_END):
            sh, cu, slot, simd = (v >> 5) & 1, (v >> 6) & 0xF, (v >> 10) & 0xF, (v >> 14) & 3
            if slot > 9:
                res.problems.append(
                    f"wave slot {slot} at byte offset {off}; the official decoder aborts here, decoding stopped"
                )
                break
            me, pipe = (v >> 18) & 3, (v >> 16) & 3
            loc = slot | simd << 5 | cu << 7
            if ty == WAVE_START:
                pc = (pgm.get((me & 1, pipe), 0) << 8) & ADDR_MASK
                if cu == tcu and sh == 0:
                    count = (v >> 22) & 0x7F
                    ws = slots[simd][slot]
                    if count > 64:  # context save/restore marker, not a new wave
                        if ws:
                            w = ws[-1]
                            if w.trap == TRAP_REQUEST:
                                w.contexts = min(w.contexts + 1, 255)
                                w.trap = TRAP_STANDBY
                                w.insts.append([t, C_CONTEXT, 4, 0, 0])
                                w.trapping = True
                            elif w.trap == TRAP_STANDBY:
                                w.trap = TRAP_WAIT_FOR_NEW_PC
                        continue
                    if not ws or ws[-1].end:
                        ws.append(_Wave(tcu, simd, slot, t, pc))
                        if not entry_checked and code is not None and len(code):
                            entry_checked = True
                            if code.get(pc) is None:
                                res.problems.append(
                                    f"kernel entry pc {pc:#x} (byte offset {off}) is not in any "
                                    "loaded code object: wrong --code or load base? PCs stay 0"
                                )
                if loc not in running:
                    occ.extend((cu, simd, slot, 1, t, pc))
                running[loc] = pc
            else:
                if cu == tcu and sh == 0:
                    ws = slots[simd][slot]
                    if not ws or ws[-1].trap != TRAP_RESTORED:
                        continue  # official: skips the occupancy record too
                    w = ws.pop()
                    w.finish(t)
                    emit(w)
                if loc in running:
                    occ.extend((cu, simd, slot, 0, t, running.pop(loc)))
                elif not packet_lost:
                    occ_front.extend((cu, simd, slot, 1, 0, 0))
                    occ.extend((cu, simd, slot, 0, 0, 0))
        elif ty == INST_PC:
            slot, simd = (v >> 5) & 0xF, (v >> 9) & 3
            if slot > 9:
                res.problems.append(
                    f"INST_PC for wave slot {slot} at byte offset {off}; "
                    "the official decoder aborts here, decoding stopped"
                )
                break
            ws = slots[simd][slot]
            if ws:
                ws[-1].new_pc(((v >> 16) & ADDR_MASK) << 2)
        elif ty in (REG_CS, REG_CS_PRIV):
            addr, data = (v >> 9) & 0x7F, (v >> 16) & 0xFFFFFFFF
            key = ((((v >> 7) & 3) + 1) & 1, (v >> 5) & 3)
            if addr == COMPUTE_PGM_LO:
                pgm[key] = (pgm.get(key, 0) & ~0xFFFFFFFF) | data
            elif addr == COMPUTE_PGM_HI:
                pgm[key] = (pgm.get(key, 0) & 0xFFFFFFFF) | data << 32
        elif ty == MISC:
            sub = (v >> 13) & 7
            if sub == MISC_PACKET_LOST:
                packet_lost = True
                res.problems.append(f"hardware reported packet loss at byte offset {off}")
            elif sub == MISC_SAVE_CONTEXT:
                for row in slots:
                    for ws in row:
                        if ws and ws[-1].end == 0:
                            ws[-1].trap = TRAP_REQUEST
        elif ty == REG:
            if not (v >> 15) & 1:
                continue  # write not enabled
            addr, data = (v >> 16) & 0xFFFF, (v >> 32) & 0xFFFFFFFF
            if addr == USERDATA_3:
                sample = instr.realtime_word(t, data)
                if sample:
                    res.realtime.append(sample)
            elif addr == USERDATA_2:
                instr.userdata2(data)
        elif ty in (WAVE_ALLOC, SHADERDATA):
            if (v >> 10) & 0xF > 9:
                res.problems.append(
                    f"{TOKEN_NAMES[ty]} for wave slot {(v >> 10) & 0xF} at byte "
                    f"offset {off}; the official decoder aborts here, decoding stopped"
                )
                break

    for row in slots:
        for ws in row:
            done.extend(ws)
    stitcher = make_stitcher(code)
    for w in done:
        res.waves.append(_to_wave(w, res.se, stitcher, seq))
    a = np.frombuffer(occ_front + occ, np.int64).reshape(-1, 6)
    o = np.zeros(len(a), OCCUPANCY_DTYPE)
    o["se"] = res.se
    o["cu"], o["simd"], o["wave_id"], o["start"], o["time"] = a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4]
    o["pc"] = a[:, 5].astype(np.uint64)
    res.occupancy = o


def _to_wave(w: _Wave, se: int, stitcher, seq: dict) -> Wave:
    """Stitch PCs onto a finished wave and turn it into the record model."""
    a = empty_insts(len(w.insts))
    if w.insts:
        arr = np.asarray(w.insts, dtype=np.int64)
        a["time"], a["category"], a["duration"], a["stall"] = arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]
    timeline = [(s, d) for s, d in w.timeline]
    if stitcher is not None and w.pc_infos:
        # the official walk runs before an unfinished wave's end time is filled in (end = 0 then)
        a, timeline = stitcher.stitch(a, [tuple(x) for x in w.pc_infos], timeline, w.begin, end=w.end)
    end = w.end
    if not w.complete and len(a):
        end = max(end, int((a["time"] + a["duration"]).max()) + 4)
    a["category"][a["category"] == C_NOT_FINISHED] = C_NONE
    key = (w.simd, w.slot)
    seq[key] = seq.get(key, -1) + 1
    return Wave(
        se=se,
        cu=w.cu,
        simd=w.simd,
        slot=w.slot,
        begin=w.begin,
        end=end,
        insts=a,
        timeline=timeline,
        seq=seq[key],
        contexts=w.contexts,
    )


def make_stitcher(code: CodeMap | None):
    """The shared PC walk (attdec/decoders/stitch.py) in its gfx9 mode, or None without code."""
    if code is None or not len(code):
        return None
    from attdec.decoders.stitch import Stitcher

    return Stitcher(code, 9)
