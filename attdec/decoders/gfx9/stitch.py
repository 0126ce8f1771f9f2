"""The gfx9 PC walk (sqtt-format.md §8.4, official `stitchWave` with gfxip 9; rules in docs/sqtt-gfx9.md):
`Gfx9Walker` and the timing changes its walk makes to a wave's records (swaps, v_mfma_scale widening,
s_barrier entry and exit made one record)."""

from __future__ import annotations

import numpy as np

from attdec.decoders.common import NOT_FINISHED
from attdec.decoders.compat import DEFAULT, Rules
from attdec.decoders.stitch import LineKind, PcWalker, Walk, common_kind, last_pc, matches_trivially
from attdec.model import Category, WaveState


class Gfx9Walker(PcWalker):
    """gfx9 (sqtt-format.md §8.4, official `stitchWave` with gfxip 9): one line at a time, adjacent
    records swapped when that makes both match, s_barrier entry/exit sharing a PC, v_mfma_scale records
    widened. The walk's decisions depend only on the record categories and the PC slots (no line keeps
    state from one wave to the next), so a wave's walk is memoised as its PCs and the swaps and widenings
    it made, which are replayed on the next wave with the same records."""

    # memo: (record categories, PC slots) -> (pcs, Walk, timing operations)

    @classmethod
    def line_kind(cls, text: str, rules: Rules = DEFAULT) -> LineKind:
        kind = common_kind(text, rules)
        if kind == LineKind.VALU and text.startswith("v_mfma_scale_"):
            return LineKind.MFMA_SCALE
        if kind == LineKind.IMMED and text.startswith("s_barrier"):
            return LineKind.GFX9_BARRIER
        return kind

    def stitch(self, insts, pc_infos, timeline, begin, *, exclude_barrier_wait=False, end=0):
        """`end`: the wave's end time so far (the v_mfma_scale widening looks at it)."""
        key = (insts["category"].tobytes(), tuple(map(tuple, pc_infos)))
        hit = self.memo.get(key)
        if hit is None:
            cats = insts["category"].tolist()
            ops: list[tuple[int, int]] = []
            pcs = [0] * len(cats)
            walked = min(self._walk(cats, pcs, pc_infos, ops), len(cats))
            hit = self.memo[key] = (np.array(pcs, np.uint64), Walk(len(cats), walked, last_pc(pcs, walked)), ops)
            self.state.grow(len(cats))
        pcs_a, walk, ops = hit
        if ops:
            insts = _gfx9_timing(insts, ops, begin, end)
        insts["pc"] = pcs_a
        merges = [i for op, i in ops if op == BARRIER_MERGE]
        if merges:
            insts, timeline = _merge_barriers(insts, merges, timeline, begin)
        return insts, timeline, walk

    def _walk(self, cats, pcs, pc_infos, ops) -> int:
        """Assign pcs[i] for each record; returns the records walked. The timing changes it asks for go to
        `ops` as (SWAP or MFMA_SCALE, record index), in order."""
        view = self.view
        get = view.get
        context, jump, valu, message, immed = (
            Category.CONTEXT, Category.JUMP, Category.VALU, Category.MESSAGE, Category.IMMED
        )  # fmt: skip
        n, npi = len(cats), len(pc_infos)
        i = pii = 0
        failed = 0
        nxt = None
        while i < n and failed < self.MAX_FAILED:
            if (pii < npi and pc_infos[pii][0] <= i) or pcs[i] or cats[i] == context:
                i, pii, nxt, end = self._known(cats, pcs, pc_infos, i, pii, nxt)
                if end is not None:
                    return end
                continue
            rec = cats[i]
            line, nxt = nxt, None
            if line is None or not line.text or rec == NOT_FINISHED:
                break
            nxt = get(line.next)
            lc = line.cat
            if lc in (LineKind.DONT_KNOW, LineKind.SKIP):
                continue
            matched = True
            if matches_trivially(rec, lc):
                pass
            elif lc == LineKind.BRANCH:
                if rec != jump:
                    break
                nxt = view.jump(line)
            elif lc == LineKind.MFMA_SCALE and rec == valu:
                ops.append((MFMA_SCALE, i))
            elif lc == LineKind.GFX9_BARRIER:
                if rec == message:  # barrier entry (MESSAGE) and exit (IMMED) share the PC
                    pcs[i] = line.addr
                    if i + 1 < n and cats[i + 1] == immed:
                        pcs[i + 1] = line.addr
                        if self.rules.gfx9_barrier_one_record:
                            ops.append((BARRIER_MERGE, i))
                    i += 2
                    failed = 0
                    continue
                matched = rec == immed
            else:
                matched = False
                if i + 1 < n and _swapped_match(cats, i, line, get):
                    cats[i], cats[i + 1] = cats[i + 1], cats[i]
                    pcs[i], pcs[i + 1] = pcs[i + 1], pcs[i]
                    ops.append((SWAP, i))
                    nxt = line
                elif (line.text.startswith("s_waitcnt") or "_load_" in line.text) and "scratch_" not in line.text:
                    break  # no skipped immediates on gfx9 to pay an s_waitcnt for
            if matched:
                pcs[i] = line.addr
                i += 1
                failed = 0
            else:
                failed += 1
        return i


SWAP, MFMA_SCALE, BARRIER_MERGE = 0, 1, 2  # the gfx9 walk's timing operations


def _swapped_match(cats, i, line, get) -> bool:
    """Records i and i + 1 match `line` and the line after it the other way round."""
    nxt = get(line.next)
    return nxt is not None and cats[i + 1] == line.cat and cats[i] == nxt.cat


def _gfx9_timing(insts: np.ndarray, ops, begin: int, end: int) -> np.ndarray:
    """The gfx9 walk's changes to a wave's records (sqtt-format.md §8.4), in the order it made them:
    SWAP i (records i and i + 1 trade places, all fields) and MFMA_SCALE i (a v_mfma_scale record: its
    scale load starts 4 cycles earlier and ends with the MFMA, if the neighbours leave room)."""
    t, d = insts["time"].tolist(), insts["duration"].tolist()
    order = list(range(len(t)))
    for op, i in ops:
        if op == BARRIER_MERGE:
            continue  # after the PCs are set: `_merge_barriers`
        if op == SWAP:
            for a in (t, d, order):
                a[i], a[i + 1] = a[i + 1], a[i]
            continue
        prev_end = t[i - 1] + d[i - 1] if i > 0 else begin
        next_start = t[i + 1] if i < len(t) - 1 else end
        d[i] += 4
        if t[i] > prev_end:
            t[i] -= 4
            if t[i] + d[i] < next_start:
                d[i] += 4
        elif t[i] + d[i] > next_start:
            d[i] -= 4
    out = insts[np.array(order, np.int64)]
    out["time"] = t
    out["duration"] = d
    return out


def _merge_barriers(insts: np.ndarray, entries: list[int], timeline, begin: int):
    """gfx9 s_barrier as AMD's 0.1.6 reports it: one IMMED record from the barrier's entry (the MESSAGE
    record at each index of `entries`, dropped) to its exit (the IMMED record after it), stalled for the
    whole wait, and one WAIT run in the state timeline where the entry's and the exit's met. Inferred from
    a rocprofv3 session's wave files (the source keeps both records); docs/sqtt-gfx9.md."""
    at = np.array(entries, np.int64)
    exits = set(insts["time"][at + 1].tolist())
    keep = np.ones(len(insts), bool)
    keep[at] = False
    out = insts.copy()
    gap = out["time"][at + 1] - out["time"][at]
    out["stall"][at + 1] += gap
    out["duration"][at + 1] += gap
    out["time"][at + 1] = out["time"][at]
    runs: list = []
    t = begin
    wait = int(WaveState.WAIT)
    for state, cycles in timeline:
        if runs and t in exits and state == wait and runs[-1][0] == wait:
            runs[-1] = (wait, runs[-1][1] + cycles)
        else:
            runs.append((state, cycles))
        t += cycles
    return out[keep], runs
