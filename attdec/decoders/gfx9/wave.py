"""One traced gfx9 wave while its tokens arrive: the official ISSUE/INST timing model (sqtt-format.md
§7.2; RTD `gfx9/gfx9wave.cpp` `apply_issue`, `apply_inst`, `mend_inst_time`), its trap states and PC slots."""

from __future__ import annotations

from collections import deque
from enum import IntEnum

import numpy as np

from attdec.decoders.common import NOT_FINISHED, Implausible, c_record_widths, implausible
from attdec.decoders.compat import DEFAULT, Rules
from attdec.decoders.gfx9.packets import INST_GO_TO_TRAP, INST_PC_TYPE, INST_TYPES, IssueStatus
from attdec.decoders.stitch import PcWalker
from attdec.model import Category, Wave, WaveState


class TrapStatus(IntEnum):
    """Trap state of a wave (official `WaveTrapStatus`)."""

    RESTORED = 0  # running normally
    REQUEST = 1  # MISC SAVE_CONTEXT seen: a context-save marker will put it in standby
    STANDBY = 2
    WAIT_FOR_NEW_PC = 3  # until an INST of type PC


# named once here, as plain ints: the methods below run once per token
RESTORED, ISSUED, STALLED = int(TrapStatus.RESTORED), int(IssueStatus.INST), int(IssueStatus.STALL)
IDLE, EXEC, WAIT, STALL = (int(s) for s in (WaveState.IDLE, WaveState.EXEC, WaveState.WAIT, WaveState.STALL))
IMMED, CONTEXT, MESSAGE = int(Category.IMMED), int(Category.CONTEXT), int(Category.MESSAGE)
START_PHASE = 15  # CYCLE_START_PHASE before the first INST
N_XNACK = 17  # size of the official last_inst_for_xnack table
# INST type -> (category or None, phase offset, type it replays or None), for every 5-bit type
_BY_TYPE = [
    (None if t.category is None else int(t.category), t.phase, t.replay_of) if t else (None, 0, None)
    for t in (INST_TYPES.get(k) for k in range(32))
]


class TracedWave:
    """One traced wave while it is being decoded (the official gfx9 `wave_t`)."""

    __slots__ = (
        "begin",
        "complete",
        "contexts",
        "cu",
        "end",
        "insts",
        "issued",
        "messages_untimed",
        "pc_infos",
        "pc_tail",
        "rules",
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

    def __init__(
        self, cu: int, simd: int, slot: int, begin: int, entry_pc: int, rules: Rules = DEFAULT, no_code: bool = False
    ) -> None:
        self.cu, self.simd, self.slot, self.begin, self.end = cu, simd, slot, begin, 0
        self.rules = rules
        # without code to walk, 0.1.6 leaves an OTHER_MSG untimed until the wave ends (`finish`)
        self.messages_untimed = no_code and rules.gfx9_message_as_immediate
        self.insts: list[list[int]] = []  # [time, category, duration, stall, pc]
        self.pc_infos = [[0, entry_pc]] if entry_pc else []  # [record index, pc]
        self.pc_tail = len(self.pc_infos)  # start of the trailing run of still-unknown PCs
        self.trap: int = TrapStatus.RESTORED
        self.state: int = WaveState.IDLE
        self.state_start = begin
        self.timeline: list[list[int]] = []  # [state, duration]
        # deques: adversarial streams must not make the pops quadratic
        self.stall_starts: deque[int] = deque()
        self.issued: deque[int] = deque()
        self.xnack = [0] * N_XNACK
        self.contexts = 0
        self.complete = self.trapping = False

    def _add_state(self, state, duration):
        if self.timeline and self.timeline[-1][0] == state:
            self.timeline[-1][1] += duration
        else:
            self.timeline.append([state, duration])

    def issue(self, status: int, t: int) -> None:
        """ISSUE status (`IssueStatus`) for this wave at time t."""
        if self.trap != RESTORED:
            return
        prev_state = self.state
        insts = self.insts
        tl = self.timeline
        if status == ISSUED:
            self.state = EXEC
            self.issued.append(len(insts))
            insts.append([t, NOT_FINISHED, 0, 0, 0])
        elif status == STALLED:
            self.state = STALL
            self.stall_starts.append(t)
        else:
            start = t
            if insts and insts[-1][1] != NOT_FINISHED:
                last = insts[-1]
                _mend(last, t)
                start = min(last[0] + last[2], t)
            cycles = 4 + max(0, t - start)
            insts.append([start, IMMED, cycles, cycles, 0])
            if self.state_start < start:
                self._add_state(prev_state, start - self.state_start)
            self.state = EXEC
            tl.append([WAIT, cycles])
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
        if self.trap == TrapStatus.WAIT_FOR_NEW_PC and itype == INST_PC_TYPE:
            self.pc_infos.append([len(insts), 0])
            self.trap = RESTORED
            if insts and insts[-1][1] == CONTEXT:
                insts[-1][2] = t + 4 - insts[-1][0]
            return None
        if self.trap != RESTORED or not self.issued:
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
        cat, offset, entry = _BY_TYPE[itype]
        if cat is None:
            if entry is not None and entry < N_XNACK:
                j = self.xnack[entry]
                self.xnack[entry] = 0
                if 0 < j < len(insts) and j < idx:
                    x = insts[j - 1]
                    old = x[2]
                    x[2] = max(x[2], t + 4 - x[0])
                    x[3] += x[2] - old
            del insts[idx]
            return None
        p[1] = cat
        phase += offset
        if cat == MESSAGE and self.rules.gfx9_message_as_immediate:
            if not self.messages_untimed:
                self._as_message(idx)
            return None
        if itype == INST_PC_TYPE:
            self.pc_infos.append([idx + 1, 0])
        elif itype == INST_GO_TO_TRAP:
            self.trap = TrapStatus.WAIT_FOR_NEW_PC
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
        """OTHER_MSG (s_endpgm, s_sendmsg...) as 0.1.6 times it: like an immediate that waited since the
        previous record (time = that record's end, duration = 4 + issue time - that, stall 0, a WAIT run in
        the timeline), after which the wave is IDLE. With no earlier record, or one that ends after the
        issue, there is no record at all (the wave just turns IDLE).

        Not in the published source (which times OTHER_MSG like any INST type): inferred from the official
        decoder's output on the gfx950 captures and, for the dropped record and the IDLE state, from 0.1.6
        on synthetic streams. See docs/sqtt-gfx9.md.
        """
        insts = self.insts
        p = insts[idx]
        t = p[0]
        q = insts[idx - 1] if idx > 0 else None
        self.state = IDLE
        if q is None or q[0] + q[2] > t:
            del insts[idx]  # as the replay path: later placeholder indices are not shifted
            return
        start = min(q[0] + q[2], t) if q[1] != NOT_FINISHED else t
        cycles = 4 + max(0, t - start)
        p[0], p[2], p[3] = start, cycles, 0
        back = t - start
        if back > 0 and self.timeline and self.timeline[-1][1] >= back:
            self.timeline[-1][1] -= back  # (a run left at 0 cycles stays: 0.1.6)
        self.timeline.append([WAIT, cycles])
        self.state_start = max(self.state_start, start + cycles)

    def _time_messages_at_end(self) -> None:
        """Without code, 0.1.6 times an OTHER_MSG only when it is the wave's last record (`_as_message`): an
        earlier one stays a 0-cycle record at its issue while the wave goes on (a later immediate waits
        from there), then is left out; a wave that had one ends IDLE from its last record on.

        Not in the published source: from 0.1.6 (0.1.5 and 0.1.4 alike) on synthetic gfx9 streams without an
        ISA and on the rocprofv3 session's gfx950 blobs. See docs/sqtt-gfx9.md."""
        insts = self.insts
        untimed = [i for i, p in enumerate(insts) if p[1] == MESSAGE and p[2] == 0]
        if not untimed:
            return
        if untimed[-1] == len(insts) - 1:
            self._as_message(untimed.pop())
        else:
            self.state = IDLE
        for i in reversed(untimed):
            del insts[i]

    def new_pc(self, pc: int) -> None:
        """INST_PC: fill the oldest slot of the trailing run of still-unknown PCs (or open one)."""
        if not self.pc_infos or self.trap != RESTORED:
            return
        i = self.pc_tail
        if i == len(self.pc_infos):
            self.pc_infos.append([len(self.insts), 0])
        self.pc_infos[i][1] = pc
        if pc:
            self.pc_tail = i + 1

    def finish(self, t: int) -> None:
        """WAVE_END at t: close the last state run.

        0.1.6 (the gfx950 captures' oracle) ends the wave at t and closes the run for every wave; the
        newest source ends it at t + 4 and closes the run only for waves with records and a timeline
        (`Rules.gfx9_end_at_token`).
        """
        if self.messages_untimed:
            self._time_messages_at_end()
        if not self.rules.gfx9_end_at_token:
            t += 4
            if not (self.insts and self.timeline):
                self.state, self.state_start, self.end = WaveState.EMPTY, t, t
                self.complete = True
                return
        if t > self.state_start:
            self.timeline.append([self.state, t - self.state_start])
        self.state, self.state_start, self.end = WaveState.EMPTY, t, t
        self.complete = True


class Carried:
    """What a blob decoded in segments (gfx9.windowed) carries from one segment to the next through both
    passes: the SE-wide CYCLE_START_PHASE, the stitched waves (`note_waves` runs once, at the end) and the
    implausible records left out. Given it, a pass leaves `note_waves`, `Implausible.note` and DATA_LOST to
    the caller."""

    def __init__(self) -> None:
        self.phase = [START_PHASE]
        self.stitched: list = []
        self.found = Implausible()


def _mend(prev: list, t: int) -> None:
    """Trim a record so that it ends no later than t (never below 4 cycles)."""
    if t < prev[0] + prev[2]:
        prev[2] = max(t - prev[0], 4)
        prev[3] = min(prev[3], prev[2])


def finish_wave(
    se: int,
    cu: int,
    simd: int,
    slot: int,
    begin: int,
    end: int,
    complete: bool,
    insts: np.ndarray,
    timeline: list,
    pc_infos: list,
    contexts: int,
    walk: PcWalker | None,
    seq: int,
    stitched: list,
    found: Implausible,
    trapping: bool = False,
    unfinished: bool = True,
    plausible: bool = False,
) -> Wave:
    """A decoded wave (its records as INST_DTYPE, `end` 0 if it never ended) stitched to PCs and turned
    into the record model; both passes end here. Implausible records (damage) are left out first: the walk
    may swap neighbours the hardware reported out of program order, so their order is checked before it.
    (wave, ended, trapping, walk, entry pc) goes to `stitched` (`note_waves`). `unfinished`: the wave may
    have placeholders no INST described (reported as category NONE). `plausible`: the caller checked the
    records (`plausible_waves`)."""
    entry = pc_infos[0][1] if pc_infos else 0
    found_here = None if plausible else implausible(insts["time"], begin, end)
    if found_here is not None:
        early, late = found_here
        bad = early | late
        found.add(Wave(se, cu, simd, slot, begin, end), int(early.sum()), int(late.sum()), 0)
        before = np.r_[0, np.cumsum(bad)]  # records left out before each index
        pc_infos = [(i - int(before[min(i, len(bad))]), pc) for i, pc in pc_infos]
        insts = insts[~bad]
    outcome = None
    if walk is not None and pc_infos:
        # the official walk runs before an unfinished wave's end time is filled in (end = 0 then)
        insts, timeline, outcome = walk.stitch(insts, pc_infos, timeline, begin, end=end)
    if not complete and len(insts):
        end = max(end, int((insts["time"] + insts["duration"]).max()) + 4)
    if unfinished:
        cat = insts["category"]
        cat[cat == NOT_FINISHED] = Category.NONE
    timeline = c_record_widths(insts, timeline, end - begin)
    wave = Wave(se, cu, simd, slot, begin, end, insts, timeline, seq, contexts)
    stitched.append((wave, complete, trapping, outcome, entry))
    return wave


def plausible_waves(time: np.ndarray, lo: np.ndarray, hi: np.ndarray, begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per wave, whether `implausible` finds nothing in its records time[lo:hi] (begin, end: the wave's; end
    0 if it never ended), for all waves at once."""
    n = hi - lo
    has = n > 0
    ok = np.ones(len(lo), bool)
    ok[has] = (time[lo[has]] >= begin[has]) & ((end[has] == 0) | (time[hi[has] - 1] <= end[has]))
    back = (time[1:] < time[:-1]).nonzero()[0] + 1  # records before the previous one (maybe of another wave)
    if len(back):
        order = np.argsort(lo, kind="stable")
        wave_of = np.repeat(order, n[order])  # the wave of each record
        inner = back[back > lo[wave_of[back]]]  # not a wave's first record
        ok[wave_of[inner]] = False
    return ok
