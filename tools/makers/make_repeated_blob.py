#!/usr/bin/env python3
"""A big SQTT blob made from a real one: its header once, then its body repeated (issue 12's benchmark blobs).

    python3 tools/makers/make_repeated_blob.py OUT.att                         # gfx950 gemm SE0 x 2,000: 9.7 MB
    python3 tools/makers/make_repeated_blob.py OUT.att --capture gfx1200/gemm_gfx1200_run0 \\
        --blob r_32_16_8_16_4_4_256_4_3_se0.att --size 1G                # ~1 GB of RDNA

The body is everything after the stream's first `--header` bytes (default 8 on gfx9: its software header;
32 on RDNA, whose streams are whole 32-byte trace lines: the line holding the HEADER token); each copy
decodes like the original, so the records grow with the copies (gfx950 SE0 x 2,000: 8,000 waves, 464,000
instruction records; gfx1200 gemm SE0 x 4: 128 waves, 1,970,944). Prints the code-object spec
(`FILE@LOADBASE`) and the arch to decode it with. The output is the same bytes on every run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("ATTDEC_SHARED", os.path.join(ROOT, "..", "shared"))


def size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1:].upper() in units else int(text)


def kernel_of(cap: dict, blob: str) -> str:
    """The kernel whose trace `blob` is: its `blobs` entry names it, or else the dispatch that lists it
    (capture.json's blob entries may leave `kernel` out, as the demo's do)."""
    entry = next((b for b in cap["blobs"] if b["file"] == blob), None)
    if entry is None:
        raise SystemExit(f"make_repeated_blob: {blob} is not a blob of this capture")
    if "kernel" in entry:
        return entry["kernel"]
    return next(d["kernel"] for d in cap["dispatches"] if blob in d["blobs"])


def make(out: str, capture: str, blob: str, repeat: int | None, total: int | None, header: int | None = None) -> dict:
    """Write the blob; returns what decodes it: {"path", "bytes", "copies", "arch", "code"}."""
    folder = capture if os.path.isabs(capture) or os.path.isdir(capture) else os.path.join(SHARED, "captures", capture)
    cap = json.load(open(os.path.join(folder, "capture.json")))
    if header is None:
        header = 8 if cap["gfx_arch"].startswith("gfx9") else 32
    kernel = next(k for k in cap["kernels"] if k["name"] == kernel_of(cap, blob))
    data = open(os.path.join(folder, blob), "rb").read()
    head, body = data[:header], data[header:]
    copies = repeat if repeat is not None else max(1, ((total or len(data)) - header) // len(body))
    chunk = body * max(1, min(copies, (64 << 20) // len(body)))  # write in pieces of up to 64 MB
    with open(out, "wb") as f:
        f.write(head)
        left = copies
        while left:
            n = min(left, len(chunk) // len(body))
            f.write(chunk[: n * len(body)])
            left -= n
    code = f"{os.path.join(folder, kernel['code_object'])}@{kernel['base_hex']}"
    return {"path": out, "bytes": header + copies * len(body), "copies": copies, "arch": cap["gfx_arch"], "code": code}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--capture", default="gfx950/gemm_run0", help="capture folder under ../shared/captures")
    ap.add_argument("--blob", default="r_32_32_16_2_1_se0.att", help="the capture's blob to repeat")
    ap.add_argument("--repeat", type=int, default=None, help="copies of the body (default 2000, or from --size)")
    ap.add_argument("--size", type=size, default=None, help="about this many bytes instead (1G, 512M, ...)")
    ap.add_argument("--header", type=int, default=None, help="bytes kept once at the start (gfx9 8, RDNA 32)")
    a = ap.parse_args()
    repeat = a.repeat if a.repeat is not None or a.size is not None else 2000
    r = make(a.out, a.capture, a.blob, repeat, a.size, a.header)
    print(f"{r['path']}: {r['bytes']:,} bytes ({r['copies']:,} copies); decode with:", file=sys.stderr)
    print(f"attdec decode --arch {r['arch']} --code {r['code']} --se 0 {r['path']}", file=sys.stderr)


if __name__ == "__main__":
    main()
