"""Options and helpers several commands share."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import click

from attdec.errors import InputError
from attdec.sources import KINDS

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
    """--input-format (the kinds of attdec.sources.KINDS), and --code/--arch for explicit SQTT blobs."""
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
    ]
    for o in reversed(opts):
        f = o(f)
    return f


# Inputs and dispatches this run could not read while it read the others: each was one `attdec: error:`
# line; the command still reports the rest, then exits 1 (cli.py). docs/reliability.md.
LOST: list[str] = []


class _Reports:
    """What the pipeline reports (level, error), told on stderr once the progress bar is gone."""

    def __init__(self):
        self.items: list[tuple[str, Exception]] = []

    def __call__(self, level: str, e: Exception) -> None:
        self.items.append((level, e))

    def tell(self) -> None:
        from attdec.report.common import printable

        for level, e in self.items:
            if level == "error":
                lost(e)
            else:
                click.echo(printable(f"attdec: {level}: {e}"), err=True)


def lost(e: Exception) -> None:
    """One input or dispatch this run could not read, the others being reported: its error line now, exit
    status 1 at the end."""
    from attdec.report.common import printable

    click.echo(printable(f"attdec: error: {e}"), err=True)
    LOST.append(str(e))


def open_dispatches(paths, input_format=None, code=(), arch=None, **decode_opts):
    """The dispatches the command line names, raw captures decoded, with a progress bar on a terminal. One
    that fails is an error line and the others are still returned (the command exits 1 at its end)."""
    from attdec.report.progress import progress_bar
    from attdec.sources.pipeline import open_dispatches as read

    reports = _Reports()
    try:
        with progress_bar() as progress:
            return read(paths, input_format, code, arch, progress=progress, report=reports, **decode_opts)
    finally:
        reports.tell()


def open_raw(paths, input_format=None, code=(), arch=None):
    """The raw (undecoded) dispatches the command line names (failures as for `open_dispatches`)."""
    from attdec.sources.pipeline import open_raw as read

    reports = _Reports()
    try:
        return read(paths, input_format, code, arch, report=reports)
    finally:
        reports.tell()


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
