"""tinygrad's PMC sample buffers -> `CounterSamples`.

With PMC on, tinygrad programs a few hardware counters before each kernel and, after it, copies every
instance of each counter into a buffer (`pmc_read` in tinygrad/runtime/ops_amd.py). Its schedule (a
`PMCSample` per counter: name, block, xcc/inst/se/sa/wgp counts, byte offset and size) travels with the
buffer: `ProfilePMCEvent.sched` in a profile, `pmc[].sched` in a capture's capture.json. Each counter's
values are little-endian u64 at `off`, ordered xcc, inst, se, sa, wgp (the last varying fastest), one
per instance; a value is the counter's total over the dispatch. Instances of WGPs the chip has fused
off are skipped by tinygrad's writer, so their slots hold whatever the buffer held.
"""

from __future__ import annotations

import math

from attdec.errors import FormatError
from attdec.model import CounterSamples

SOURCE = "tinygrad PMC"
DIMS = ("xcc", "inst", "se", "sa", "wgp")
FIELDS = ("name", "block", *DIMS, "off", "size")  # what a schedule entry says


def _field(entry, name: str, where: str):
    v = entry.get(name) if isinstance(entry, dict) else getattr(entry, name, None)
    if name in ("name", "block"):
        if not isinstance(v, str) or not v:
            raise FormatError(f"PMC schedule entry without a {name}", where)
        return v
    if isinstance(v, bool) or not isinstance(v, int) or v < (1 if name in DIMS else 0):
        raise FormatError(f"PMC schedule entry {name} is {v!r}, expected a count", where)
    return v


def plain_entry(entry) -> dict:
    """A schedule entry (a dict, or a tinygrad PMCSample record rebuilt by the profile reader) as a dict of
    plain values, unchecked: it pickles, so a dispatch's counters travel back from a `--jobs` worker. A
    value that is not plain data is kept as its text, which the checks then refuse as before."""

    def plain(v):
        return v if v is None or isinstance(v, (bool, int, float, str)) else _Opaque(repr(v)[:80])

    return {f: plain(entry.get(f) if isinstance(entry, dict) else getattr(entry, f, None)) for f in FIELDS}


class _Opaque:
    """A schedule value that was not plain data, by its text."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def unpack_pmc(blob: bytes, sched, where: str) -> CounterSamples:
    """One dispatch's PMC buffer and its schedule (dicts or tinygrad PMCSample records) -> samples.
    A location split in only one part (a single SE, SA, ...) is stored as -1: the value is not per-that."""
    import numpy as np  # here, not with the module: reading a capture (before --jobs forks) needs no numpy

    from attdec.model import COUNTER_DTYPE

    if not isinstance(sched, (list, tuple)):
        raise FormatError(f"PMC schedule is {type(sched).__name__}, expected a list of counters", where)
    names, blocks, parts = [], [], []
    for i, entry in enumerate(sched):
        name, block = _field(entry, "name", where), _field(entry, "block", where)
        counts = [_field(entry, d, where) for d in DIMS]
        off, size = _field(entry, "off", where), _field(entry, "size", where)
        n = math.prod(counts)
        if size != n * 8 or off % 8 or off + size > len(blob):
            raise FormatError(
                f"PMC counter {name}: {n} instances need {n * 8} bytes at offset {off}, the schedule says "
                f"{size} and the buffer has {len(blob)}",
                where,
            )
        a = np.zeros(n, COUNTER_DTYPE)
        a["counter"] = i
        idx = np.indices(counts).reshape(len(DIMS), -1)  # xcc, inst, se, sa, wgp; the last fastest
        for col, dim, row, count in zip(("xcc", "inst", "se", "sa", "cu"), DIMS, idx, counts):
            a[col] = row if count > 1 or dim == "xcc" else -1
        a["time"] = -1
        a["value"] = np.frombuffer(blob, "<u8", n, off)
        names.append(name)
        blocks.append(block)
        parts.append(a)
    samples = np.concatenate(parts) if parts else np.zeros(0, COUNTER_DTYPE)
    return CounterSamples(SOURCE, names, blocks, samples)


class PendingPmc(CounterSamples):
    """A PMC buffer's `CounterSamples`, unpacked when a field is first read: `decode` never reads counters,
    and unpacking every buffer up front would cost it time for nothing. A damaged buffer or schedule raises its
    FormatError then."""

    def __init__(self, blob: bytes, sched, where: str):
        if isinstance(sched, (list, tuple)):
            sched = [plain_entry(e) for e in sched]
        self.__dict__["_pending"] = (blob, sched, where)

    def __getattr__(self, name: str):
        """Reached only while the fields are not set."""
        pending = self.__dict__.get("_pending")
        if pending is None or name not in self._fields:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.__dict__.update(unpack_pmc(*pending).__dict__)
        del self.__dict__["_pending"]
        return self.__dict__[name]
