"""Options and helpers several commands share: click options built once, the dispatches a command reads,
and its warning and error lines (its output stream is `report.common.output_stream`)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from types import SimpleNamespace

import click

from attdec.analysis import COMPARE_BY, FRAMES, METRICS
from attdec.decoders.compat import COMPAT
from attdec.errors import ExitCode
from attdec.model.options import DecodeOptions, InputOptions
from attdec.report import COMPARE_FORMATS
from attdec.sources import KINDS

FORMATS = ("table", "json", "csv")
COMPAT_HELP = (
    "Decode raw captures as this AMD decoder build does: 0.1.6 (rocprof-trace-decoder of ROCm 7.2; the "
    "default), 0.1.5 (ROCm 7.1) or 0.1.4 (ROCm 7.0), each reproduced row for row; or rocm-7.13, from "
    "reading the newest public source (ROCm >= 7.13), not checked against a binary. docs/compat.md lists "
    "every rule on which they differ."
)
COUNT = click.IntRange(min=0)  # --top and other row counts: 0 = all; negatives refused, not taken from the end
POSITIVE = click.IntRange(min=1)
FOLDER = click.Path(file_okay=False)  # a folder to write into: may not exist yet, not a file


def attdec_command(*params: Callable):
    """The click command of `fn(options)`: its docstring is the --help, `params` its click options and
    arguments (first is leftmost in --help), its options come as one namespace, and what it returns is the
    exit status (None = 0). Inputs it lost on the way (`lost`) make it exit 1 after reporting the rest;
    damage found in what it read (`opened`) is told once it is done and makes it exit 3."""

    def wrap(fn):
        @functools.wraps(fn)
        def callback(**options):
            ctx = click.get_current_context()
            failures = ctx.meta.setdefault(LOST, [])
            opened = ctx.meta.setdefault(OPENED, [])
            status = fn(SimpleNamespace(**options)) or ExitCode.OK
            damaged = tell_damage(opened)
            if failures:
                return ExitCode.INPUT_ERROR
            return ExitCode.DAMAGED if damaged and status == ExitCode.OK else status

        for param in reversed(params):
            callback = param(callback)
        return click.command()(callback)

    return wrap


def paths_argument(name: str = "paths", required: bool = True):
    return click.argument(
        name, nargs=-1, required=required, metavar=name.upper() + "...", type=click.Path(readable=False)
    )


def format_option(choices=FORMATS, default: str = "table", help: str | None = None):
    return click.option("--format", "fmt", type=click.Choice(list(choices)), default=default, help=help)


def _many(name: str, help: str):
    return click.option(name, type=int, multiple=True, help=help)


def wave_filter_options(fn):
    """--se/--simd/--slot/--wave/--cu (repeatable)."""
    for opt in reversed(
        (
            _many("--se", "Only waves of this shader engine (repeatable)."),
            _many("--simd", "Only waves of this SIMD (repeatable)."),
            _many("--slot", "Only waves in this wave slot (repeatable)."),
            _many("--wave", "Only the n-th wave of its slot, the wv<N> of the file name (repeatable)."),
            _many("--cu", "Only waves of this CU (repeatable)."),
        )
    ):
        fn = opt(fn)
    return fn


def wave_filter(a):
    """The wave filter the parsed --se/--simd/--slot/--wave/--cu ask for (None: every wave)."""
    return make_wave_filter(a.se, a.simd, a.slot, a.wave, a.cu)


def make_wave_filter(se=(), simd=(), slot=(), wave=(), cu=()):
    """A Wave -> bool predicate (a WaveSelection, which also filters folded waves as columns), or None when no
    restriction was asked for."""
    from attdec.model import WaveSelection

    return WaveSelection(se or (), simd or (), slot or (), wave or (), cu or ()) or None


def known_arch(ctx, param, value: str | None) -> str | None:
    """--arch: an unknown name is an error listing the known ones, whatever the command does with it."""
    if value is not None:
        from attdec.model.target import target

        target(value)
    return value


def input_format_option(help: str | None = None):
    return click.option(
        "--input-format",
        type=click.Choice(list(KINDS)),
        default=None,
        help=help or "Input kind, detected when omitted: " + "; ".join(f"{k}: {h}" for k, (_, h) in KINDS.items()),
    )


def code_option(help: str):
    return click.option("--code", multiple=True, metavar="FILE@LOADBASE", help=help)


def compat_option(fn):
    """--compat: which AMD decoder version raw captures are decoded as (docs/compat.md)."""
    return click.option("--compat", type=click.Choice(list(COMPAT)), default=DecodeOptions.compat, help=COMPAT_HELP)(fn)


def jobs_option(fn):
    """--jobs N: raw dispatches decoded on N processes (attdec.sources.parallel)."""
    return click.option(
        "--jobs",
        type=POSITIVE,
        default=DecodeOptions.jobs,
        metavar="N",
        help="Decode raw captures on N processes, this one and N-1 forked workers (default: one per core).",
    )(fn)


def input_options(fn):
    """--input-format (the kinds of attdec.sources.KINDS), --code/--arch for explicit SQTT blobs, --compat, --jobs."""
    fn = jobs_option(compat_option(fn))
    fn = click.option(
        "--arch", default=None, callback=known_arch, help="With --code: the GPU (default: from the code object)."
    )(fn)
    fn = code_option("PATHS are the .att blobs of one dispatch; this is a code object and its load base (repeatable).")(
        fn
    )
    return input_format_option()(fn)


compare_options = (
    click.option(
        "--by",
        type=click.Choice(COMPARE_BY),
        default=None,
        help="Rows per source line (default; instructions when there are no source lines), instruction, "
        "source file or stall type.",
    ),
    click.option(
        "--metric",
        type=click.Choice(METRICS),
        default="cycles",
        help="What rows are ranked by (and diff marks and --fail-above checks): cycles (Latency) or stall.",
    ),
    click.option("--top", type=COUNT, default=20, help="Rows per kernel (0 = all)."),
    click.option(
        "--frame",
        type=click.Choice(FRAMES),
        default="inner",
        help="For inlined code: the instruction's own line (inner) or the outermost call site (outer).",
    ),
    format_option(COMPARE_FORMATS),
)  # what `diff` and `noise` rows are and how they print


def inputs_of(a, **decode) -> InputOptions:
    """The parsed input options (`input_options`) as one record; `decode`: more DecodeOptions fields the
    command sets itself (fold, occupancy, ...)."""
    decode_options = DecodeOptions(compat=a.compat, jobs=a.jobs, **decode)
    return InputOptions(input_format=a.input_format, code=a.code, arch=a.arch, decode=decode_options)


def output_option(what: str = "Write to this file instead of stdout", required: bool = False):
    """-o/--output FILE ('-' = stdout)."""
    return click.option(
        "-o",
        "--output",
        default=None if required else "-",
        required=required,
        metavar="FILE",
        help=what,
        show_default=not required,
    )


def emit(result, fmt: str, out, reporters) -> None:
    """Write a command's `result` to `out` as `fmt` with the reporter its report module names for it: the
    one place a --format choice becomes a writer (report.base.Reporter)."""
    reporters[fmt].write(result, out)


def echo(text: str, err: bool = False) -> None:
    """One line to stdout (or stderr), control characters escaped."""
    from attdec.report.common import printable

    print(printable(text), file=sys.stderr if err else sys.stdout)


# Where a command's click context keeps the inputs and dispatches it could not read while it read the
# others: each was one `attdec: error:` line; the command still reports the rest, then exits 1
# (docs/reliability.md).
LOST = "attdec.lost"


# Where a command's click context keeps the `damage` lists of what it read (Dispatches and RawDispatches; the
# lists, not the dispatches, which the command may let go): what the sources found, and an analysis since, is
# told when the command is done, and it exits 3, "decoded with damage".
OPENED = "attdec.opened"


def opened(dispatches) -> None:
    """Remember the damage lists of dispatches the running command read (outside a command: nothing)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta.setdefault(OPENED, []).extend(d.damage for d in dispatches)


def tell_damage(damage_lists: list[list[str]]) -> bool:
    """One warning line for each damage in `damage_lists`, each told once; whether there was any."""
    told = dict.fromkeys(what for damage in damage_lists for what in damage)
    for what in told:
        echo(f"attdec: warning: {what}", err=True)
    return bool(told)


class _Reports:
    """What the pipeline reports (level, error), told on stderr once the progress bar is gone."""

    def __init__(self):
        self.items: list[tuple[str, Exception]] = []

    def __call__(self, level: str, e: Exception) -> None:
        self.items.append((level, e))

    def tell(self) -> None:
        for level, e in self.items:
            if level == "error":
                lost(e)
            else:
                echo(f"attdec: {level}: {e}", err=True)


def lost(e: Exception) -> None:
    """One input or dispatch this run could not read, the others being reported: its error line now, exit
    status 1 at the end."""
    echo(f"attdec: error: {e}", err=True)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta.setdefault(LOST, []).append(str(e))


def tell_problems(dispatches) -> None:
    """What the sources noted about each dispatch (wave files missing or left out, ...), one warning line
    each: for the commands whose output has no place for notes."""
    for d in dispatches:
        for p in d.problems:
            echo(f"attdec: warning: {d.path or d.name}: {p}", err=True)


def open_dispatches(paths, inputs: InputOptions = InputOptions(), need=()) -> list:
    """The dispatches the command line names (attdec.api.open_inputs), raw captures decoded, with a progress
    bar on a terminal. `need`: what the command will read of every dispatch that a folder defers ("waves"):
    loaded under the bar. One that fails is an error line and the others are still returned (the command
    exits 1 at its end)."""
    from attdec import api
    from attdec.report.progress import progress_bar

    reports = _Reports()
    try:
        with progress_bar() as progress:
            out = api.open_inputs(
                paths,
                inputs,
                progress=progress,
                need=need,
                report=reports,
                before_decode=lambda raws: tune_allocator(raws, inputs.decode.fold),
            )
        opened(out)
        return out
    finally:
        reports.tell()


def open_raw(paths, inputs: InputOptions = InputOptions(), bare_blobs: bool = False, se: int | None = None) -> list:
    """The raw (undecoded) dispatches the command line names (attdec.api.open_raw; with `bare_blobs`,
    attdec.api.open_blobs, which also takes blobs without code objects), failures as for `open_dispatches`."""
    from attdec import api

    reports = _Reports()
    try:
        if bare_blobs:
            out = api.open_blobs(
                paths, input_format=inputs.input_format, code=inputs.code, arch=inputs.arch, se=se, report=reports
            )
        else:
            out = api.open_raw(
                paths, input_format=inputs.input_format, code=inputs.code, arch=inputs.arch, report=reports
            )
        opened(out)
        return out
    finally:
        reports.tell()


def read_paths(a) -> list[str]:
    """The files and folders a command reads: its paths and the code objects of --code FILE@LOADBASE."""
    return [*a.paths, *(spec.rpartition("@")[0] or spec for spec in getattr(a, "code", ()) or ())]


# glibc's malloc, set for the decode ahead (commands.common.tune_allocator)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MALLOC_REUSE_BYTES = 32 << 20  # whole blobs: blocks up to this come from the heap (glibc's largest on 64-bit)
MALLOC_KEEP_BYTES = 128 << 20  # ... and this much freed heap is kept (64 MB let the gfx1200 gemm's go back)
MALLOC_RETURN_BYTES = 128 << 10  # windowed blobs: blocks above this, and freed heap above this, go back to the system


def tune_allocator(raws=(), fold=None) -> None:
    """Set glibc's malloc for the decode of `raws` (RawDispatch), before it starts. A process-wide setting,
    so the command line makes it for its own process (attdec does not touch a host process's allocator;
    a script may call this too: docs/api.md). A no-op off glibc.

    Whole blobs allocate and free the same big work arrays blob after blob, which glibc by default gives
    back to the system and page-faults in again (a fifth of the gfx1200 gemm decode's CPU time): freed
    blocks are kept for reuse. A big blob decoded in windows (`fold`: hotspots, waves) keeps small arrays
    between windows that would pin those blocks in the heap: there big blocks go back to the system
    (256 MB gfx950 blob: decode peak 345-402 -> 259 MB)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return
    if fold:
        from attdec.decoders.windowed import window_size

        if any(window_size(len(b.data)) is not None for r in raws for b in r.blobs):
            mallopt(M_MMAP_THRESHOLD, MALLOC_RETURN_BYTES)
            mallopt(M_TRIM_THRESHOLD, MALLOC_RETURN_BYTES)  # glibc's own, whatever an earlier call set
            return
    mallopt(M_TRIM_THRESHOLD, MALLOC_KEEP_BYTES)
    mallopt(M_MMAP_THRESHOLD, MALLOC_REUSE_BYTES)
