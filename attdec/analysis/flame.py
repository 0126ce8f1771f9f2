"""Stall cycles by source call chain: the stacks a flamegraph draws.

An instruction's source can be an inline chain (`a.py:10 -> b.py:20`, innermost first). Its stall is
charged to the whole chain, root first: kernel, outermost call site, ..., the instruction's own line,
so a flamegraph shows which inlined helper, called from where, loses the cycles. `by` picks the frame
granularity as `hotspots --by` does: source lines, files, or lines plus the instruction as a leaf.
"""

from __future__ import annotations

from attdec.analysis.hotspots import NO_FILE, NO_SOURCE, WaveFilter, file_of, frames, instruction_stats, resolve_by
from attdec.model import Dispatch
from attdec.model.record import Frozen


class Stack(Frozen):
    frames: tuple[str, ...]  # root (the kernel) first, the innermost frame last
    type: str  # stall type of the instructions charged here
    stall: int


def _frames(chain: str, by: str, text: str, vaddr: int) -> list[str]:
    fs = list(reversed(frames(chain)))  # outermost first
    if by == "file":
        files = [file_of(f) for f in fs] or [NO_FILE]
        return [f for i, f in enumerate(files) if i == 0 or f != files[i - 1]]  # a file calling itself is one frame
    if by == "instruction":
        return [*fs, f"0x{vaddr:x} {text}"]
    return fs or [NO_SOURCE]


def stall_stacks(
    dispatches: list[Dispatch], by: str | None = "line", wave_filter: WaveFilter | None = None, charge: str = "wait"
) -> list[Stack]:
    """Stall per (call chain, stall type), over all dispatches; zero-stall chains are left out.

    The root frame is the kernel name (the dispatch name when unknown), so dispatches of one kernel merge.
    `charge="producer"` puts a wait's stall on the chains of the operations it waited for (as hotspots does).
    """
    by, _ = resolve_by(dispatches, by)
    acc: dict[tuple[tuple[str, ...], str], int] = {}
    for d in dispatches:
        waves = None if wave_filter is None else [w for w in d.waves if wave_filter(w)]
        root = d.kernel or d.name
        for st in instruction_stats(d, waves, charge):
            chain = (root, *_frames(st.code.source, by, st.code.text, st.code.vaddr))
            for t, v in st.by_type.items():
                if v:
                    acc[(chain, t)] = acc.get((chain, t), 0) + v
    return [Stack(f, t, s) for (f, t), s in sorted(acc.items())]
