"""The RDNA PC walk (sqtt-format.md §8, official `stitchWave`; facts in docs/sqtt-rdna.md): `Gfx11Walker`,
`Gfx12Walker` (gfx11 plus its own line kinds, the first-record rule and the barrier-wait exclusion), and
`walker()`, which picks one for a generation."""

from __future__ import annotations

import numpy as np

from attdec.decoders.common import CodeMap
from attdec.decoders.compat import DEFAULT, Rules
from attdec.decoders.stitch import (
    LineKind,
    PcWalker,
    Walk,
    common_kind,
    last_pc,
    matches_elaborately,
    matches_trivially,
    skippable,
)
from attdec.model import Category, WaveState


class Gfx11Walker(PcWalker):
    """RDNA: records without PC information are matched by `_match`; its outcome depends only on (next
    line, skipped-immediate count, record category) unless it touched a gfx12 barrier-wait line, so it is
    memoised per blob, and so is a whole wave's walk (waves of one kernel repeat the same records)."""

    # gfx12: a wave whose first record has no PC from the trace is not walked at all
    needs_first_pc = False
    # memo: (barrier flag, next line pc, skipped immediates, record category) -> outcome
    # wave_memo: (record categories, PC slots, barrier flag) -> (pcs, Walk) of a wave; a walk that touched
    # barrier-wait lines: (..., excluded lines, matched lines before) -> (pcs, Walk, excluded, matched after)

    def stitch(self, insts, pc_infos, timeline, begin, *, exclude_barrier_wait=False, end=0):
        """`exclude_barrier_wait`: the gfx12 header bit 59 (s_barrier_wait may leave no token)."""
        pcs, walk = self.walk_pcs(insts["category"].tobytes(), pc_infos, exclude_barrier_wait)
        insts["pc"] = pcs
        insts, timeline = self.apply(insts, walk, timeline, begin)
        return insts, timeline, walk

    def walk_pcs(self, categories: bytes, pc_infos, exclude_barrier_wait: bool = False) -> tuple[np.ndarray, Walk]:
        """`stitch`'s walk alone, from the records' categories (a byte each): the records' PCs (read only: a
        memo's) and the Walk; `apply` then makes its timing changes. For a caller that writes the records
        after the walk, PCs and all (writing the pc field afterwards is one more pass over them)."""
        key = (categories, tuple(map(tuple, pc_infos)), exclude_barrier_wait)
        hit = self.wave_memo.get(key)
        line_key = None
        if hit is None and exclude_barrier_wait:
            # a walk that touched barrier-wait lines depends on the blob's line state before it, and changes it
            line_key = (*key, frozenset(self.excluded), frozenset(self.parsed))
            hit = self.wave_memo.get(line_key)
        if hit is not None:
            pcs_a, walk, *after = hit
            if after:
                self.excluded, self.parsed = set(after[0]), set(after[1])
            return pcs_a, walk
        cats = list(categories)
        pcs = [0] * len(cats)
        walk = self._walk(cats, pcs, pc_infos, exclude_barrier_wait)
        walk.last_pc = last_pc(pcs, walk.walked)
        pcs_a = np.array(pcs, np.uint64)
        pcs_a.flags.writeable = False  # (a memo's, shared by every wave that walks the same)
        if walk.cacheable and not walk.barriers:
            self.wave_memo[key] = (pcs_a, walk)
            self.state.grow(len(cats))
        elif line_key is not None:
            after = (frozenset(self.excluded), frozenset(self.parsed))
            self.wave_memo[line_key] = (pcs_a, walk, *after)
            self.state.grow(len(cats) + len(after[1]))
        return pcs_a, walk

    @staticmethod
    def apply(insts, walk: Walk, timeline, begin: int):
        """A walk's changes to the records' timing (v_mov_b64 widening, gfx12 barrier waits): (records,
        timeline)."""
        if walk.widened:
            w = np.array(walk.widened, np.int64)
            insts["duration"][w] = np.maximum(insts["duration"][w], insts["stall"][w] + 2)
        if walk.barriers:
            insts, timeline = _insert_barrier_waits(insts, timeline, walk.barriers, begin)
        return insts, timeline

    def _walk(self, cats, pcs, pc_infos, excl_bw) -> Walk:
        get = self.view.get
        memo = self.memo
        context = Category.CONTEXT
        n, npi = len(cats), len(pc_infos)
        i = pii = 0
        skipped = 0
        nxt = None
        barriers: list[tuple[int, int]] = []
        widened: list[int] = []
        cacheable = True
        while i < n:
            if (pii < npi and pc_infos[pii][0] <= i) or pcs[i] or cats[i] == context:
                i, pii, nxt, end = self._known(cats, pcs, pc_infos, i, pii, nxt)
                if end is not None:
                    i = end
                    break
                continue
            rec = cats[i]
            if self.needs_first_pc and i == 0:
                break
            if nxt is None:
                break
            key = (excl_bw, nxt.addr, skipped, rec)
            hit = memo.get(key)
            if hit is None:
                hit = self._match(cats, i, nxt, skipped, excl_bw, barriers)
                if hit[4]:
                    memo[key] = hit
                    self.state.grow(20)
                else:
                    cacheable = False
            pc, nxt_addr, skipped, widen, _ = hit
            if not pc:
                break
            if widen:
                widened.append(i)
            pcs[i] = pc
            i += 1
            nxt = get(nxt_addr) if nxt_addr else None
        return Walk(n, min(i, n), widened=widened, barriers=barriers, cacheable=cacheable)

    def _match(self, cats, i, nxt, skipped, excl_bw, barriers):
        """Walk lines from `nxt` until record i matches one (official stitchWave, one record).

        Returns (pc or 0 to stop, next line's pc or 0, skipped immediates, v_mov_b64 widening, cacheable).
        """
        view = self.view
        get = view.get
        excluded = self.excluded
        rec = cats[i]
        failed = 0
        cacheable = True
        while failed < self.MAX_FAILED:
            line, nxt = nxt, None
            if line is None or not line.text:
                return 0, 0, skipped, False, cacheable
            nxt = get(line.next)
            lc = line.cat
            if excluded and line.addr in excluded:
                lc = LineKind.BARRIER_WAIT_EXCLUDED
            if lc in (LineKind.DONT_KNOW, LineKind.SKIP):
                continue
            if excl_bw and (
                lc == LineKind.BARRIER_WAIT_EXCLUDED
                or (lc == LineKind.IMMED and line.text.startswith("s_barrier_wait"))
            ):
                cacheable = False
                if lc == LineKind.BARRIER_WAIT_EXCLUDED or line.addr not in self.parsed:
                    if rec != Category.IMMED or self._left_no_token(cats, i, nxt):
                        barriers.append((i, line.addr))
                        excluded.add(line.addr)
                        continue
            matched = True
            widen = False
            if matches_trivially(rec, lc):
                pass
            elif lc == LineKind.BRANCH:
                if rec != Category.JUMP:
                    return 0, 0, skipped, False, cacheable
                nxt = view.jump(line)
            elif lc == LineKind.V_MOV_B64 and rec == Category.VALU:
                widen = True
            else:
                matched = False
                if rec == Category.IMMED and skippable(lc):
                    matched = True
                    skipped += 1
                elif line.text.startswith("s_waitcnt") or "_load_" in line.text:
                    if skipped > 0 and line.text.startswith("s_waitcnt"):
                        matched = True
                        skipped -= 1
                    elif "scratch_" not in line.text:
                        return 0, 0, skipped, False, cacheable
            if matched:
                self.parsed.add(line.addr)
                return line.addr, (nxt.addr if nxt is not None else 0), skipped, widen, cacheable
            failed += 1
        return 0, 0, skipped, False, cacheable  # gave up: as deterministic as a match

    def _left_no_token(self, cats, i, look) -> bool:
        """Whether an s_barrier_wait line met by IMMED record i left no token: the official look-ahead from
        the line after it (`look`) matches the records from i on against the lines that follow."""
        get, excluded = self.view.get, self.excluded
        kind = 0
        idx = i
        add = True
        while idx < len(cats) and add and look is not None:
            l2, r2 = look.cat, cats[idx]
            if excluded and look.addr in excluded:
                l2 = LineKind.BARRIER_WAIT_EXCLUDED
            jumps = l2 == LineKind.BRANCH and r2 == Category.JUMP
            look = self.view.jump(look) if jumps else get(look.next)
            if l2 in (LineKind.DONT_KNOW, LineKind.SKIP):
                idx += 1
                continue
            add = matches_elaborately(r2, l2)
            if r2 != Category.IMMED and l2 != LineKind.VALU:
                if kind != 0 and kind != l2:
                    break
                kind = l2
            idx += 2  # the official look-ahead advances twice per matched line
        return add


class Gfx12Walker(Gfx11Walker):
    """gfx11's walk with gfx12's line kinds (v_mov_b64 widening, ds_bvh) and the first-record rule; the
    barrier-wait exclusion runs when the header asks for it."""

    needs_first_pc = True

    @classmethod
    def line_kind(cls, text: str, rules: Rules = DEFAULT) -> LineKind:
        kind = common_kind(text, rules)
        if kind == LineKind.VALU and text.startswith("v_mov_b64"):
            return LineKind.V_MOV_B64
        if kind == LineKind.LDS and rules.gfx12_ds_bvh_is_bvh and text.startswith("ds_bvh"):
            return LineKind.BVH
        return kind


WALKERS: dict[int, type[PcWalker]] = {11: Gfx11Walker, 12: Gfx12Walker}


def walker(code: CodeMap | None, generation: int, rules: Rules = DEFAULT, shared: bool = True) -> PcWalker | None:
    """The PC walker of a blob of this generation (11, 12), or None when there is no code to walk; `shared`:
    see PcWalker."""
    return WALKERS[generation].for_code(code, rules, shared)


def _insert_barrier_waits(insts: np.ndarray, timeline, barriers, begin: int):
    """gfx12 with excluded barrier waits: an `s_barrier_wait` that left no token gets a synthetic IMMED
    record from the previous record's end to the next record's start (official
    `insert_gfx12_barrier_wait`), and the state timeline a matching WAIT."""
    if not len(insts) or not barriers:
        return insts, timeline
    t = insts["time"].tolist()
    d = insts["duration"].tolist()
    rows: list[int] = []  # source record of each output record (a synthetic one: the record before it)
    t_out: list[int] = []
    d_out: list[int] = []
    added: list[int] = []  # output positions of the synthetic records
    added_pc: list[int] = []
    wst = []
    tl = [list(x) for x in timeline]
    prev = 0
    tli = 0
    cur_time = begin
    for index, pc in barriers:
        if index <= prev:
            continue
        it = t[index - 1] + d[index - 1]
        if t[index] == it and d[index] > 1:
            t[index] += 1
            d[index] -= 1
        idur = t[index] - it
        while cur_time <= it and tli < len(tl):
            cur_time += tl[tli][1]
            wst.append(list(tl[tli]))
            tli += 1
        if wst and wst[-1][1] >= cur_time - it and cur_time >= t[index]:
            wst[-1][1] -= cur_time - it
            typ = wst[-1][0]
            wst.append([int(WaveState.WAIT), idur])
            wst.append([typ, cur_time - it - idur])
        rows.extend(range(prev, index))
        t_out += t[prev:index]
        d_out += d[prev:index]
        added.append(len(rows))
        added_pc.append(pc)
        rows.append(index - 1)
        t_out.append(it)
        d_out.append(idur)
        prev = index
    rows.extend(range(prev, len(t)))
    t_out += t[prev:]
    d_out += d[prev:]
    wst.extend(list(x) for x in tl[tli:])
    new = insts[rows]
    new["time"], new["duration"] = t_out, d_out
    if added:
        new["stall"][added], new["pc"][added], new["line"][added] = 0, added_pc, -1
        new["category"][added] = Category.IMMED
    return new, [tuple(x) for x in wst]
