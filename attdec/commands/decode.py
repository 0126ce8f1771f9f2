"""`attdec decode`: decode raw per-SE SQTT blobs of one dispatch against its code objects.

    attdec decode --arch gfx1100 --code kernel.co@0x200001006000 kernel_se0.att kernel_se1.att [--format json]
    attdec decode --tokens kernel_se0.att [--format json]      # the token stream itself

Each blob is decoded on its own (its SE from `se<N>` / `shader_engine_<N>` in the file name, or --se).
The JSON form is what tools/conformance.py compares with AMD's decoder; it is written as a stream, wave
by wave, so memory stays bounded by one wave's rows.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

import click

from attdec.decoders import CodeMap, decode_blob
from attdec.errors import ArchError, FormatError, InputError, read_bytes
from attdec.model import Category
from attdec.model.target import target

SE_RE = re.compile(r"(?:shader_engine_|se)(\d+)(?!.*(?:shader_engine_|se)\d)")


def se_of(path: str) -> int | None:
    m = SE_RE.search(os.path.basename(path))
    return int(m.group(1)) if m else None


def parse_code_spec(spec: str) -> tuple[str, int]:
    path, sep, base = spec.rpartition("@")
    if not sep or not path:
        raise InputError(f"--code wants FILE@LOADBASE, got {spec!r}")
    try:
        return path, int(base, 0)
    except ValueError:
        raise InputError(f"--code: load base {base!r} is not a number (e.g. 0x200001006000)") from None


def build_codemap(specs, arch: str) -> CodeMap:
    """Load and disassemble every --code FILE@LOADBASE into one absolute-PC map (as raw inputs do)."""
    from attdec.sources.raw import RawCodeObject, RawDispatch, load_code

    if not specs:
        return CodeMap()
    objs = []
    for spec in specs:
        path, base = parse_code_spec(spec)
        objs.append(RawCodeObject(read_bytes(path), base, path))
    return load_code(RawDispatch(name="decode", arch=arch, code_objects=objs)).codemap


def decode_files(arch: str, codes, blobs, se: int | None = None, target_cu: int | None = None):
    """Yield (path, BlobResult, seconds) for each blob."""
    code = build_codemap(codes, arch)
    for path in blobs:
        s = se if se is not None else se_of(path)
        if s is None:
            raise InputError("cannot tell the shader engine from the file name (no se<N>); pass --se", path)
        data = read_bytes(path)
        t0 = time.perf_counter()
        res = decode_blob(data, arch, code, s, where=path, target_cu=target_cu)
        yield path, res, time.perf_counter() - t0


@click.command("decode")
@click.option(
    "--arch", default=None, help="gfx1100, gfx1201, gfx942, ... (must match the trace; optional with --tokens)"
)
@click.option(
    "--code",
    "codes",
    multiple=True,
    metavar="FILE@LOADBASE",
    help="code object and the address it was loaded at; repeat for several",
)
@click.option("--se", type=int, default=None, help="shader engine of the blob(s), if not in the file name")
@click.option("--target-cu", type=int, default=None, help="gfx9: CU whose waves get instruction detail")
@click.option("--tokens", is_flag=True, help="list every token (offset, type, named fields, time) instead of decoding")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.argument("blobs", nargs=-1, required=True, type=click.Path(dir_okay=False))
def decode(arch, codes, se, target_cu, tokens, fmt, blobs):
    """Decode raw SQTT blobs (one per shader engine) of one dispatch.

    With --tokens, list each blob's token stream instead, as the decoders split it: byte offset, time,
    token type and its named fields (the format comes from the blob's header; --arch only checks it).

    Exit status: 0 decoded cleanly; 1 nothing decoded (one error line); 3 decoded, but a blob was
    truncated, lost sync or does not match the code object: what could be decoded is printed and each
    problem is a warning on stderr with the file and byte offset. A PC walk that stops early (as AMD's
    decoder's does on some kernels) is a warning, not damage.
    """
    if tokens:
        return list_token_streams(arch, blobs, fmt)
    if arch is None:
        raise InputError("--arch is required to decode (only --tokens works without it)")
    damaged = []

    def noting_problems(results):
        for path, res, dt in results:
            if res.damaged:
                damaged.append(path)
            yield path, res, dt

    results = noting_problems(decode_files(arch, codes, blobs, se, target_cu))
    if fmt == "json":
        write_json(results, sys.stdout)
    else:
        print_summary(results)
    if damaged:
        sys.stdout.flush()
        sys.exit(3)


def list_token_streams(arch: str | None, blobs, fmt: str) -> None:
    """`decode --tokens`: each blob's tokens on stdout, its problems as warnings (exit 3 if any)."""
    from attdec.decoders.tokens import list_tokens
    from attdec.report import tokens as report

    tgt = target(arch) if arch else None
    damaged = []

    def listings():
        for path in blobs:
            lst = list_tokens(read_bytes(path), where=path)
            if tgt is not None and lst.format != tgt.stream:
                raise ArchError(f"the trace is {lst.format}, not {tgt.display} (--arch)", path)
            yield path, lst
            for p in lst.problems:  # known once its rows are written
                click.echo(f"attdec: warning: {path}: {p}", err=True)
                damaged.append(path)

    (report.write_json if fmt == "json" else report.write_text)(listings(), sys.stdout)
    if damaged:
        sys.stdout.flush()
        sys.exit(3)


def _warn(path, res):
    for p in res.problems:
        click.echo(f"attdec: warning: {path}: {p}", err=True)


def write_json(results, out) -> None:
    """Stream {"dispatches": [{"waves": [...], "occupancy": [...], ...}]} wave by wave."""
    w = out.write
    w('{"dispatches": [{"waves": [')
    occ, realtime, other, problems = [], [], [], []
    first = True
    for path, res, _dt in results:
        _warn(path, res)
        problems += [f"{path}: {p}" for p in res.problems]
        for wave in res.waves:
            if not first:
                w(",\n")
            first = False
            _write_wave(w, wave)
        occ.append(res.occupancy)
        realtime += [[res.se, int(a), int(b)] for a, b in res.realtime]
        other += [[res.se, int(t), int(c), int(g)] for t, c, g in res.other_simd]
    w('],\n"occupancy": [')
    parts = []
    for o in occ:
        if len(o):
            cols = [o[k].tolist() for k in ("se", "cu", "simd", "wave_id", "start", "time", "pc")]
            parts.append(",".join(f"[{a},{b},{c},{d},{e},{f},{g}]" for a, b, c, d, e, f, g in zip(*cols)))
    w(",\n".join(p for p in parts if p))
    w('],\n"realtime": ' + json.dumps(realtime))
    w(',\n"inst_other_simd": ' + json.dumps([[s, t, c, Category(g).name] for s, t, c, g in other]))
    w(',\n"problems": ' + json.dumps(problems))
    w("}]}\n")


def _write_wave(w, wave) -> None:
    a = wave.insts
    w(
        f'{{"se": {wave.se}, "cu": {wave.cu}, "simd": {wave.simd}, "wave_id": {wave.slot}, '
        f'"begin_time": {wave.begin}, "end_time": {wave.end}, "contexts": {wave.contexts}, '
        f'"timeline": [{",".join(f"[{s},{d}]" for s, d in wave.timeline)}], "instructions": ['
    )
    if len(a):
        names = [f'"{c.name}"' for c in Category]
        w(
            ",".join(
                f"[{p},{t},{d},{s},{names[c]}]"
                for p, t, d, s, c in zip(
                    a["pc"].tolist(),
                    a["time"].tolist(),
                    a["duration"].tolist(),
                    a["stall"].tolist(),
                    a["category"].tolist(),
                )
            )
        )
    w("]}")


def print_summary(results) -> None:
    """One row per blob: waves, traced waves, instruction records (and how many lack a PC), stall."""
    from rich.table import Table

    from attdec.report.common import console

    t = Table(box=None, pad_edge=False)
    for col in ("blob", "se", "waves", "traced", "instructions", "no pc", "stall", "wave starts", "ms"):
        t.add_column(col, justify="left" if col == "blob" else "right")
    for path, res, dt in results:
        _warn(path, res)
        n_inst = sum(len(w.insts) for w in res.waves)
        nopc = sum(int((w.insts["pc"] == 0).sum()) for w in res.waves)
        stall = sum(int(w.insts["stall"].sum()) for w in res.waves)
        traced = sum(1 for w in res.waves if len(w.insts))
        starts = int((res.occupancy["start"] == 1).sum()) if len(res.occupancy) else 0
        t.add_row(
            os.path.basename(path),
            str(res.se),
            str(len(res.waves)),
            str(traced),
            f"{n_inst:,}",
            f"{nopc:,}",
            f"{stall:,}",
            f"{starts:,}",
            f"{dt * 1000:.0f}",
        )
    console().print(t)


__all__ = ["FormatError", "build_codemap", "decode", "decode_files", "se_of", "write_json"]
