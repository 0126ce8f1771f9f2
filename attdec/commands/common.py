"""Options and helpers several commands share."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import click

from attdec.errors import InputError

FORMATS = click.Choice(["table", "json", "csv"])


def wave_filter_options(f, cu: bool = False):
    """--se/--simd/--slot/--wave (repeatable) and optionally --cu."""
    opts = [
        click.option("--se", type=int, multiple=True, help="Only waves of this shader engine (repeatable)."),
        click.option("--simd", type=int, multiple=True, help="Only waves of this SIMD (repeatable)."),
        click.option("--slot", type=int, multiple=True, help="Only waves in this wave slot (repeatable)."),
        click.option(
            "--wave",
            type=int,
            multiple=True,
            help="Only the n-th wave of its slot, the wv<N> of the file name (repeatable).",
        ),
    ]
    if cu:
        opts.append(click.option("--cu", type=int, multiple=True, help="Only waves of this CU (repeatable)."))
    for o in reversed(opts):
        f = o(f)
    return f


def make_wave_filter(se=(), simd=(), slot=(), wave=(), cu=()):
    """A Wave -> bool predicate, or None when no restriction was asked for."""
    if not (se or simd or slot or wave or cu):
        return None

    def keep(w) -> bool:
        return (
            (not se or w.se in se)
            and (not simd or w.simd in simd)
            and (not slot or w.slot in slot)
            and (not wave or w.seq in wave)
            and (not cu or w.cu in cu)
        )

    return keep


INPUT_FORMATS = ["ui_output", "tinygrad", "rocprof-raw", "capture"]


def input_options(f):
    """--input-format, and --code/--arch for explicit SQTT blobs (as `attdec decode` takes them)."""
    opts = [
        click.option(
            "--input-format",
            type=click.Choice(INPUT_FORMATS),
            default=None,
            help="Input kind (ui_output folders/archives, tinygrad profile.pkl, rocprofv3 raw "
            ".att output, capture folder); detected when omitted.",
        ),
        click.option(
            "--code",
            multiple=True,
            metavar="FILE@LOADBASE",
            help="With explicit .att blobs as PATHS: a code object and its load base (repeatable).",
        ),
        click.option("--arch", default=None, help="With --code: the GPU (default: from the code object)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def open_dispatches(paths, input_format=None, code=(), arch=None):
    """The dispatches the command line names: explicit blobs with --code, else the input resolver."""
    from attdec.sources import open_inputs

    if code:
        from attdec.sources.raw_inputs import open_explicit

        return open_explicit(paths, code, arch)
    return open_inputs(paths, input_format=input_format)


@contextlib.contextmanager
def output_stream(path: str):
    """A text stream for the file the user named with -o ('-' = stdout); a bad path is one clear error.

    The file is written under a temporary name and renamed at the end, so a failed run leaves no half file.
    """
    if path == "-":
        yield sys.stdout
        return
    target = Path(path)
    if target.is_dir():
        raise InputError("is a directory; give a file name", path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        f = open(tmp, "w", encoding="utf-8")  # noqa: SIM115 (closed below, before the rename)
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", path) from None
    try:
        with f:
            yield f
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
