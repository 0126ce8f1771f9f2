"""Options and helpers several commands share."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import click

from attdec.decoders.compat import COMPAT
from attdec.errors import InputError
from attdec.sources import KINDS

COMPAT_HELP = (
    "Decode raw captures as this AMD decoder does: 0.1.6 (rocprof-trace-decoder of ROCm <= 7.2; the "
    "default, reproduced row for row) or rocm-7.13 (built from the newest public source, ROCm >= 7.13). "
    "docs/compat.md lists every rule on which they differ."
)
_COMPAT_KEY = "attdec.compat"


def _remember_compat(ctx, param, value):
    ctx.meta[_COMPAT_KEY] = value
    return value


def chosen_compat() -> str | None:
    """The decoder version --compat chose for the running command (None outside a command)."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_COMPAT_KEY) if ctx is not None else None


FORMATS = click.Choice(["table", "json", "csv"])
TOP = click.IntRange(min=0)  # --top: a row count, 0 = all; negatives are refused, not taken from the end


def wave_filter_options(f):
    """--se/--simd/--slot/--wave/--cu (repeatable)."""
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
        click.option("--cu", type=int, multiple=True, help="Only waves of this CU (repeatable)."),
    ]
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


def _known_arch(ctx, param, value):
    """An unknown --arch is an error listing the known names, whatever the command does with it."""
    if value is not None:
        from attdec.model.target import target

        target(value)
    return value


def input_options(f):
    """--input-format (the kinds of attdec.sources.KINDS), --code/--arch for explicit SQTT blobs, and
    --compat (which AMD decoder version raw captures are decoded as; read by `open_dispatches`)."""
    opts = [
        click.option(
            "--input-format",
            type=click.Choice(list(KINDS)),
            default=None,
            help="Input kind, detected when omitted: " + "; ".join(f"{k}: {h}" for k, (_, h) in KINDS.items()),
        ),
        click.option(
            "--code",
            multiple=True,
            metavar="FILE@LOADBASE",
            help="PATHS are the .att blobs of one dispatch; this is a code object and its load base (repeatable).",
        ),
        click.option(
            "--arch",
            default=None,
            callback=_known_arch,
            help="With --code: the GPU (default: from the code object).",
        ),
        click.option(
            "--compat",
            type=click.Choice(list(COMPAT)),
            default=next(iter(COMPAT)),
            show_default=True,
            expose_value=False,
            callback=_remember_compat,
            help=COMPAT_HELP,
        ),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def open_dispatches(paths, input_format=None, code=(), arch=None, **decode_opts):
    """The dispatches the command line names, raw captures decoded (as --compat says), with a progress bar
    on a terminal."""
    from attdec.report.progress import progress_bar
    from attdec.sources.pipeline import open_dispatches as read

    decode_opts.setdefault("compat", chosen_compat())
    with progress_bar() as progress:
        return read(paths, input_format, code, arch, progress=progress, **decode_opts)


def open_raw(paths, input_format=None, code=(), arch=None):
    """The raw (undecoded) dispatches the command line names."""
    from attdec.sources.pipeline import open_raw as read

    return read(paths, input_format, code, arch)


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
