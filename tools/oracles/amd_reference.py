#!/usr/bin/env python3
"""What AMD's decoder library reports for one SE blob, as JSON: the reference `damage_run.py --decoder`
compares attdec with. The library is AMD's (end-user licence) and never part of attdec: point `--decoder`
at a folder that holds librocprof-trace-decoder.so.

The ISA callback answers from a PC table (one `pc ADDRESS SIZE TEXT` line per instruction, as in the job
files of ../shared/tools/peers/native/jobs; a job file's first kernel table, or the one `--kernel` names).
With no table (`--no-code`) every ISA query fails, as for a blob whose code object is missing.

A damaged blob can crash the library, so callers run this as a child process: the blob comes on stdin
(or as a file argument), the answer goes to stdout:

  {"status": int, "waves": [[cu, simd, slot, begin, end, contexts, [[type, dur], ...],
   [[pc, code_object_id, time, duration, stall, category], ...]], ...],
   "occupancy": [[cu, simd, slot, start, time, pc, code_object_id], ...], "info": [kind, ...],
   "realtime": [[shader_clock, realtime_clock], ...], "other_simd": [[time, cycles, wgp, category], ...]}

Usage: python3 tools/oracles/amd_reference.py --decoder DIR (--job FILE [--kernel I] | --no-code) [BLOB|-]
"""

from __future__ import annotations

import argparse
import ctypes as C
import json
import os
import sys

LIBRARY = "librocprof-trace-decoder.so"
OCCUPANCY, WAVE, INFO, REALTIME, OTHER_SIMD = 1, 3, 4, 7, 9  # record types the comparisons read
SUCCESS, OUT_OF_RESOURCES, INVALID_ARGUMENT = 0, 2, 3  # status codes the ISA callback answers with


class PC(C.Structure):
    _fields_ = [("address", C.c_uint64), ("code_object_id", C.c_uint64)]


class Occupancy(C.Structure):
    _fields_ = [
        ("pc", PC),
        ("time", C.c_uint64),
        ("reserved", C.c_uint8),
        ("cu", C.c_uint8),
        ("simd", C.c_uint8),
        ("wave_id", C.c_uint8),
        ("start", C.c_uint32, 1),
        ("rsvd", C.c_uint32, 31),
    ]


class WaveState(C.Structure):
    _fields_ = [("type", C.c_int32), ("duration", C.c_int32)]


class Inst(C.Structure):
    _fields_ = [
        ("category", C.c_uint32, 8),
        ("stall", C.c_uint32, 24),
        ("duration", C.c_int32),
        ("time", C.c_int64),
        ("pc", PC),
    ]


class Wave(C.Structure):
    _fields_ = [
        ("cu", C.c_uint8),
        ("simd", C.c_uint8),
        ("wave_id", C.c_uint8),
        ("contexts", C.c_uint8),
        ("rsvd", C.c_uint32 * 3),
        ("begin_time", C.c_int64),
        ("end_time", C.c_int64),
        ("timeline_size", C.c_uint64),
        ("instructions_size", C.c_uint64),
        ("timeline_array", C.POINTER(WaveState)),
        ("instructions_array", C.POINTER(Inst)),
    ]


class Realtime(C.Structure):
    _fields_ = [("shader_clock", C.c_int64), ("realtime_clock", C.c_uint64), ("reserved", C.c_uint64)]


class OtherSimd(C.Structure):
    _fields_ = [
        ("size", C.c_uint64),
        ("time", C.c_int64),
        ("cycles", C.c_uint16),
        ("wgp", C.c_uint8),
        ("category", C.c_uint8),
    ]


SE_DATA = C.CFUNCTYPE(C.c_uint64, C.POINTER(C.POINTER(C.c_uint8)), C.POINTER(C.c_uint64), C.c_void_p)
TRACE = C.CFUNCTYPE(C.c_int, C.c_int, C.c_void_p, C.c_uint64, C.c_void_p)
ISA = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(C.c_uint64), C.POINTER(C.c_uint64), PC, C.c_void_p)


def read_pc_table(job: str, kernel: int) -> dict[int, tuple[int, bytes]]:
    """pc -> (byte size to answer, instruction text) of kernel table `kernel` of a job file."""
    table: dict[int, tuple[int, bytes]] = {}
    current = -1
    with open(job) as f:
        for line in f:
            kw, _, rest = line.rstrip("\n").partition(" ")
            if kw == "kernel":
                current = int(rest.split(" ", 1)[0])
            elif kw == "pc" and current == kernel:
                pc, size, text = rest.split(" ", 2)
                table[int(pc)] = (int(size), text.encode())
    return table


def decode(library: str, blob: bytes, pcs: dict[int, tuple[int, bytes]] | None) -> dict:
    """One parse call over one blob; every record the comparison needs, copied out of the callbacks. The
    library may read a few bytes past the end of a cut blob: 8 zero bytes follow it in memory (not counted
    in its size) so that such a read finds zeros, as attdec reads the end, and runs repeat."""
    lib = C.CDLL(library)
    parse = lib.rocprof_trace_decoder_parse_data
    parse.restype = C.c_int
    parse.argtypes = [SE_DATA, TRACE, ISA, C.c_void_p]
    buf = (C.c_uint8 * (len(blob) + 8)).from_buffer_copy(blob + bytes(8))
    given = [False]
    out: dict = {"waves": [], "occupancy": [], "info": [], "realtime": [], "other_simd": []}

    def se_data(buffer, size, _ud):
        if given[0]:
            return 0
        given[0] = True
        buffer[0] = C.cast(buf, C.POINTER(C.c_uint8))
        size[0] = len(blob)
        return len(blob)

    def isa(text, memory_size, size, address, _ud):
        hit = pcs.get(address.address) if pcs is not None else None
        if hit is None:
            return INVALID_ARGUMENT
        answer_size, line = hit
        if len(line) > size[0]:
            size[0] = len(line)
            return OUT_OF_RESOURCES
        C.memmove(text, line + b"\0" if len(line) < size[0] else line, min(size[0], len(line) + 1))
        size[0] = len(line)
        memory_size[0] = answer_size
        return SUCCESS

    def trace(kind, events, n, _ud):
        if not events or not n:
            return SUCCESS
        if kind == WAVE:
            for w in C.cast(events, C.POINTER(Wave))[:n]:
                states = [[s.type, s.duration] for s in w.timeline_array[: w.timeline_size]]
                rows = [
                    [i.pc.address, i.pc.code_object_id, i.time, i.duration, i.stall, i.category]
                    for i in w.instructions_array[: w.instructions_size]
                ]
                out["waves"].append([w.cu, w.simd, w.wave_id, w.begin_time, w.end_time, w.contexts, states, rows])
        elif kind == OCCUPANCY:
            for o in C.cast(events, C.POINTER(Occupancy))[:n]:
                out["occupancy"].append([o.cu, o.simd, o.wave_id, o.start, o.time, o.pc.address, o.pc.code_object_id])
        elif kind == REALTIME:
            out["realtime"] += [[r.shader_clock, r.realtime_clock] for r in C.cast(events, C.POINTER(Realtime))[:n]]
        elif kind == OTHER_SIMD:
            rows = C.cast(events, C.POINTER(OtherSimd))[:n]
            out["other_simd"] += [[o.time, o.cycles, o.wgp, o.category] for o in rows]
        elif kind == INFO:
            out["info"] += C.cast(events, C.POINTER(C.c_int))[:n]
        return SUCCESS

    callbacks = SE_DATA(se_data), TRACE(trace), ISA(isa)  # kept alive for the call
    out["status"] = parse(*callbacks, None)
    return out


def library_path(folder: str) -> str | None:
    """The library in `folder` (or `folder` itself if it names the file), None if absent."""
    path = folder if folder.endswith(".so") else os.path.join(folder, LIBRARY)
    return path if os.path.isfile(path) else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("blob", nargs="?", default="-", help="SE blob file, or - for stdin (default)")
    ap.add_argument("--decoder", required=True, help="folder holding " + LIBRARY)
    ap.add_argument("--job", help="job file whose PC table answers the ISA callback")
    ap.add_argument("--kernel", type=int, default=0, help="kernel table of the job file (default 0)")
    ap.add_argument("--no-code", action="store_true", help="answer no ISA query (no code object)")
    a = ap.parse_args()
    library = library_path(a.decoder)
    if library is None:
        sys.exit(f"amd_reference: no {LIBRARY} in {a.decoder}")
    if not a.no_code and not a.job:
        sys.exit("amd_reference: give --job FILE or --no-code")
    blob = sys.stdin.buffer.read() if a.blob == "-" else open(a.blob, "rb").read()
    pcs = None if a.no_code else read_pc_table(a.job, a.kernel)
    json.dump(decode(library, blob, pcs), sys.stdout, separators=(",", ":"))


if __name__ == "__main__":
    main()
