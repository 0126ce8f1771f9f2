"""`attdec decode`: decode raw SQTT of one or more dispatches, blob by blob, into records.

    attdec decode --arch gfx1100 --code kernel.co@0x200001006000 kernel_se0.att kernel_se1.att [--format json]
    attdec decode captures/gfx1100/gemm_run0 --format json       (any raw input attdec reads)
    attdec decode --tokens kernel_se0.att [--format json]         (the token stream itself)

Each blob is decoded on its own. The JSON form is what ../shared/tools/conformance.py compares with AMD's
decoder; it is written as a stream, wave by wave.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from attdec.commands.common import (
    attdec_command,
    code_option,
    compat_option,
    echo,
    emit,
    format_option,
    input_format_option,
    inputs_of,
    jobs_option,
    lost,
    open_raw,
    output_option,
    paths_argument,
    read_paths,
    tune_allocator,
)
from attdec.errors import ArchError, AttdecError, ExitCode, InputError
from attdec.report.common import output_stream


@attdec_command(
    paths_argument(),
    click.option(
        "--arch",
        default=None,
        help="gfx1100, gfx1201, gfx942, ... (must match the trace; default: from the code object or the capture)",
    ),
    code_option("PATHS are .att blobs; this is a code object and the address it was loaded at (repeatable)"),
    click.option("--se", type=int, default=None, help="shader engine of a blob whose file name does not say (se<N>)"),
    click.option("--target-cu", type=int, default=None, help="gfx9: the CU whose waves get instruction detail"),
    input_format_option("input kind of PATHS when they are not bare blobs"),
    compat_option,
    jobs_option,
    click.option(
        "--tokens", is_flag=True, help="list every token of the blobs (offset, type, named fields, time) instead"
    ),
    format_option(
        ("text", "json", "npz"),
        "text",
        help="text: a summary per blob; json: every record (streamed); npz: every record as numpy columns, "
        "one array per column (docs/api.md, 'Columnar output'), to -o FILE.",
    ),
    output_option(),
)
def decode(a) -> int:
    """Decode raw SQTT (bare .att blobs with --code, or any raw capture attdec reads) into records.

    With --tokens, list each .att blob's token stream instead, as the decoders split it: byte offset,
    time, token type and its named fields (the format comes from the blob's header; --arch only checks it).

    The records are AMD's decoder's (docs/decode-json.md), as its build --compat decodes them: 0.1.6 by
    default; 0.1.6, 0.1.5 and 0.1.4 are each checked row for row.

    Exit status: 0 decoded cleanly; 1 nothing decoded (one error line); 3 decoded, but a blob was
    truncated, lost sync or does not match the code object: what could be decoded is printed and each
    problem is a warning on stderr with the file and byte offset. A PC walk that stops early (as AMD's
    decoder's does on some kernels) is a warning, not damage.
    """
    if a.tokens:
        if a.fmt == "npz":
            raise InputError("--tokens lists tokens as text or json, not npz", "--format")
        return list_token_streams(a.arch, a.paths, a.fmt)
    from attdec import api
    from attdec.report import records

    damaged = []

    def results(raw, decoded):
        for p in raw.problems:  # what the source repaired or doubts (e.g. a damaged .rgp container)
            echo(f"attdec: warning: {raw.path or raw.name}: {p}", err=True)
        try:
            for blob, res, dt in decoded:
                for p in res.problems + res.warnings:
                    echo(f"attdec: warning: {blob.label}: {p}", err=True)
                if res.damaged:
                    damaged.append(blob.label)
                yield blob.label, res, dt
        except AttdecError as e:
            if len(raws) == 1:
                raise
            lost(e)  # this dispatch has what was decoded before; the others are still decoded

    output = output_stream(a.output, binary=a.fmt == "npz", inputs=read_paths(a))
    options = inputs_of(a, target_cu=a.target_cu)
    raws = open_raw(a.paths, options, bare_blobs=True, se=a.se)
    tune_allocator(raws)
    reduce = records.summarize if a.fmt == "text" else None  # the summary reads a few numbers per blob
    decoded = api.decode_raw_blobs(raws, options.decode, reduce)
    dispatches = ((raw.name, results(raw, blobs)) for raw, blobs in zip(raws, decoded))
    try:
        with output as out:
            emit(dispatches, a.fmt, out, records.reporters())
    finally:
        decoded.close()  # the workers end here
    if damaged:
        sys.stdout.flush()
        return ExitCode.DAMAGED
    return ExitCode.OK


def list_token_streams(arch: str | None, paths, fmt: str) -> int:
    """`decode --tokens`: each blob's tokens on stdout, its problems as warnings (exit 3 if any)."""
    from attdec import api
    from attdec.model.target import target
    from attdec.report import tokens as report

    tgt = target(arch) if arch else None
    damaged = []

    def listings():
        for path in paths:
            if Path(path).is_dir():
                raise InputError("--tokens lists .att blobs, not folders", path)
            lst = api.tokens(path)
            if tgt is not None and lst.format != tgt.stream:
                raise ArchError(f"the trace is {lst.format}, not {tgt.display} (--arch)", path)
            yield path, lst
            for p in lst.problems:  # known once its rows are written
                echo(f"attdec: warning: {path}: {p}", err=True)
                damaged.append(path)

    emit(listings(), fmt, sys.stdout, report.reporters())
    if damaged:
        sys.stdout.flush()
        return ExitCode.DAMAGED
    return ExitCode.OK
