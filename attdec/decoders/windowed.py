"""What every family's windowed decoder shares: a big blob decoded a window of bytes at a time
(`hotspots`, `waves`: aggregates only), so that memory follows the window and not the blob. The family
drivers (rdna.windowed, gfx9.windowed) carry their own stream state from window to window; this module
holds the window's size, the fold callback's type and the release of a mapped blob's passed pages."""

from __future__ import annotations

import mmap
from collections.abc import Callable

from attdec.model import Wave, WaveTable

# Bytes of SQTT per window. A window's decode holds ~100 bytes per byte at its peak (splitter marks, tokens,
# records, the open waves' tokens decoded again): 4 MB windows peak near 0.5 GB of RSS whatever the blob's size
# (8 MB windows: 0.96 GB on 1 GB of gemm_gfx1200). A blob up to twice this is decoded whole.
WINDOW = 4 << 20

FOLDED_BLOCK = 4096  # folded waves gathered before they go into a WaveTable

# what the caller keeps of each stitched wave (sources.listing.Folder: its totals per PC); None: nothing
Fold = Callable[[Wave], Wave | None]
# told the bytes of the blob decoded so far, after each window (progress)
Progress = Callable[[int], None]


def window_size(nbytes: int, window: int | None = None, unit: int = 1) -> int | None:
    """The window a blob of `nbytes` is decoded in (a multiple of `unit` bytes), None: whole. Without an
    explicit `window`, blobs up to 2 * WINDOW are decoded whole."""
    w = WINDOW if window is None else window
    if nbytes <= (2 * w if window is None else w):
        return None
    return max(unit, w // unit * unit)


def release_before(data, end: int) -> None:
    """A mapped blob's pages before byte `end` are not read again: give them back (bytes: nothing to do)."""
    if isinstance(data, mmap.mmap):
        done = end // mmap.PAGESIZE * mmap.PAGESIZE
        if done:
            data.madvise(mmap.MADV_DONTNEED, 0, done)


def wave_table(tables: list[WaveTable], kept: list[Wave]) -> WaveTable | list[Wave]:
    """The waves `fold` kept: folded ones (`waves`) as one WaveTable, of `tables` and the `kept` waves after
    them (both emptied); whole ones as they are (a fold that keeps every record: the tests); none kept
    (`hotspots`: totals only) an empty list, as a whole blob's decode gives."""
    if kept and kept[0].folded is None:
        return list(kept)
    if kept:
        tables.append(WaveTable.of(kept))
        kept.clear()
    return WaveTable.join(tables) if tables else []
