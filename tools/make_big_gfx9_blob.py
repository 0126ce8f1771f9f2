#!/usr/bin/env python3
"""A big gfx9 (CDNA) SQTT blob for speed and memory measurements: a real blob's body repeated after its header.

The default is the blob of issue 12's gfx9 target: gfx950 gemm_run0 SE0 (4,872 bytes: 4 traced waves, 232
instruction records, 32 wave starts) with its body repeated 2,000 times, 9.7 MB. Repeating the bytes
verbatim would not be a stream the hardware could write: every copy's TIMESTAMPs would send the time back to
the first copy's. So copy k adds k x `span` cycles to each TIMESTAMP (span = the body's timestamp range plus
the time after its last TIMESTAMP plus a gap), and the result is checked to be a valid stream: every copy
starts after the previous one ended, every copy ends all the waves it starts (so wave slots are reused),
and the decoder finds copies x the body's waves, records and occupancy rows, without problems.

    python3 tools/make_big_gfx9_blob.py OUT.att [--copies 2000] [--blob SRC.att]

Prints the output's size and sha256 (the same for the same arguments).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from attdec.decoders import gfx9
from attdec.decoders.common import CodeMap
from attdec.decoders.gfx9.packets import GFX9, HEADER_BYTES, OFFICIAL_TIME_BITS, TOKEN_NAMES
from attdec.decoders.gfx9.splitter import DELTA_LO, DELTA_MASK, TYPE_MASK, split_tokens

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BLOB = os.path.join(ROOT, "..", "shared", "captures", "gfx950", "gemm_run0", "r_32_32_16_2_1_se0.att")
GAP = 4096  # cycles between the end of one copy and the start of the next
TIMESTAMP = TOKEN_NAMES.index("TIMESTAMP")
TS = GFX9["TIMESTAMP"]["timestamp"]


def repeat(blob: bytes, copies: int) -> bytes:
    """Header + body x copies, each copy's TIMESTAMPs moved on by copy index x span cycles."""
    words = np.frombuffer(blob, "<u2", count=(len(blob) - HEADER_BYTES) // 2, offset=HEADER_BYTES)
    starts, types, truncated = split_tokens(words)
    if truncated is not None or (len(blob) - HEADER_BYTES) % 2:
        sys.exit(f"the source blob ends inside a token (word {truncated}): not a body to repeat")
    at = starts[types == TIMESTAMP].astype(np.int64)
    if not len(at):
        sys.exit("the source blob has no TIMESTAMP: its copies' times cannot be told apart")
    val = sum(words[at + k].astype(np.uint64) << np.uint64(16 * k) for k in range(4))  # whole tokens
    ts = TS.column(val).astype(np.int64)
    after = starts[starts > at[-1]]
    tail = int((((words[after] >> DELTA_LO) & DELTA_MASK[words[after] & TYPE_MASK]) * 4).sum())
    span = int(ts.max() - ts.min()) + tail + GAP
    span += -span % 4
    if int(ts.max()) + span * copies >= 1 << (OFFICIAL_TIME_BITS - 1):
        sys.exit(f"{copies} copies overflow the decoder's 46-bit time")
    out = np.tile(words, copies).reshape(copies, -1)
    shifted = val[None, :] + (np.arange(copies, dtype=np.uint64)[:, None] * np.uint64(span) << np.uint64(TS.lo))
    for j in range(4):
        out[:, at + j] = (shifted >> np.uint64(16 * j)) & np.uint64(0xFFFF)
    return blob[:HEADER_BYTES] + out.tobytes()


def check(blob: bytes, big: bytes, copies: int) -> None:
    """Exit with a message unless `big` decodes to `copies` x the body's results, copy after copy in time."""
    one = gfx9.decode(blob, "gfx950", CodeMap(), 0)
    r = gfx9.decode(big, "gfx950", CodeMap(), 0)
    if r.problems or one.problems:
        sys.exit(f"decoding found problems: {(one.problems + r.problems)[:3]}")
    per = len(one.waves)
    got = (len(r.waves), sum(len(w.insts) for w in r.waves), len(r.occupancy))
    want = (copies * per, copies * sum(len(w.insts) for w in one.waves), copies * len(one.occupancy))
    if got != want:
        sys.exit(f"waves, records, occupancy rows: {got}, expected {want}")
    if not all(w.end > w.begin for w in r.waves):
        sys.exit("a wave does not end after it begins")
    occ = r.occupancy
    if int(occ["start"].sum()) * 2 != len(occ):
        sys.exit("a copy leaves waves running: wave slots would not be reused")
    begins = np.array([w.begin for w in r.waves]).reshape(copies, per)
    ends = np.array([w.end for w in r.waves]).reshape(copies, per)
    if copies > 1 and not (begins[1:].min(axis=1) > ends[:-1].max(axis=1)).all():
        sys.exit("a copy's waves begin before the previous copy's end: times do not keep increasing")
    t = occ["time"].reshape(copies, -1)
    if copies > 1 and not (t[1:].min(axis=1) > t[:-1].max(axis=1)).all():
        sys.exit("a copy's occupancy begins before the previous copy's end: times do not keep increasing")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--copies", type=int, default=2000)
    ap.add_argument("--blob", default=DEFAULT_BLOB, help="the gfx9 blob whose body is repeated")
    ap.add_argument("--no-check", action="store_true", help="skip decoding the result (for very big blobs)")
    a = ap.parse_args()
    blob = open(a.blob, "rb").read()
    gfx9.parse_header(blob, a.blob)
    big = repeat(blob, a.copies)
    if not a.no_check:
        check(blob, big, a.copies)
    with open(a.out, "wb") as f:
        f.write(big)
    print(f"{a.out}: {len(big):,} bytes, sha256 {hashlib.sha256(big).hexdigest()}")


if __name__ == "__main__":
    main()
