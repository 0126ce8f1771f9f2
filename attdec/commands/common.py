"""Options and helpers several commands share."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attdec.decoders.compat import COMPAT
from attdec.sources import KINDS

FORMATS = ("table", "json", "csv")
COMPAT_HELP = (
    "Decode raw captures as this AMD decoder does: 0.1.6 (rocprof-trace-decoder of ROCm <= 7.2; the "
    "default, reproduced row for row) or rocm-7.13 (built from the newest public source, ROCm >= 7.13). "
    "docs/compat.md lists every rule on which they differ."
)


def count(text: str) -> int:
    """--top: a row count, 0 = all; negatives are refused, not taken from the end."""
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is not in the range x>=0")
    return n


def at_least(low: int):
    """An integer option type that refuses values below `low`."""

    def check(text: str) -> int:
        n = int(text)
        if n < low:
            raise argparse.ArgumentTypeError(f"{n} is not in the range x>={low}")
        return n

    check.__name__ = "integer"
    return check


count.__name__ = "integer"  # argparse's "invalid integer value: 'x'"


class Many(argparse.Action):
    """A repeatable option: the values given, as a tuple (() when none)."""

    def __init__(self, option_strings, dest, **kw):
        kw.setdefault("default", ())
        super().__init__(option_strings, dest, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, (*getattr(namespace, self.dest, ()), values))


def folder(text: str) -> str:
    """A folder to write into: it may not exist yet, but it must not be a file."""
    if Path(text).exists() and not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"'{text}' is a file")
    return text


def add_paths(p, name: str = "paths", required: bool = True) -> None:
    p.add_argument(name, nargs="+" if required else "*", metavar=name.upper())


def add_wave_filters(p) -> None:
    """--se/--simd/--slot/--wave/--cu (repeatable)."""
    p.add_argument("--se", type=int, action=Many, help="Only waves of this shader engine (repeatable).")
    p.add_argument("--simd", type=int, action=Many, help="Only waves of this SIMD (repeatable).")
    p.add_argument("--slot", type=int, action=Many, help="Only waves in this wave slot (repeatable).")
    p.add_argument(
        "--wave", type=int, action=Many, help="Only the n-th wave of its slot, the wv<N> of the file name (repeatable)."
    )
    p.add_argument("--cu", type=int, action=Many, help="Only waves of this CU (repeatable).")


def wave_filter(a):
    """The wave filter the parsed --se/--simd/--slot/--wave/--cu ask for (None: every wave)."""
    return make_wave_filter(a.se, a.simd, a.slot, a.wave, a.cu)


def make_wave_filter(se=(), simd=(), slot=(), wave=(), cu=()):
    """A Wave -> bool predicate (a WaveSelection, which also filters folded waves as columns), or None when no
    restriction was asked for."""
    from attdec.model import WaveSelection

    return WaveSelection(se or (), simd or (), slot or (), wave or (), cu or ()) or None


def known_arch(value: str) -> str:
    """--arch: an unknown name is an error listing the known ones, whatever the command does with it."""
    from attdec.model.target import target

    target(value)
    return value


def add_input_options(p) -> None:
    """--input-format (the kinds of attdec.sources.KINDS), and --code/--arch for explicit SQTT blobs."""
    p.add_argument(
        "--input-format",
        choices=list(KINDS),
        default=None,
        help="Input kind, detected when omitted: " + "; ".join(f"{k}: {h}" for k, (_, h) in KINDS.items()),
    )
    p.add_argument(
        "--code",
        action=Many,
        metavar="FILE@LOADBASE",
        help="PATHS are the .att blobs of one dispatch; this is a code object and its load base (repeatable).",
    )
    p.add_argument(
        "--arch", default=None, type=known_arch, help="With --code: the GPU (default: from the code object)."
    )
    add_compat(p)
    add_jobs(p)


def add_compat(p) -> None:
    """--compat: which AMD decoder version raw captures are decoded as (docs/compat.md)."""
    p.add_argument("--compat", choices=list(COMPAT), default=next(iter(COMPAT)), help=COMPAT_HELP)


def add_jobs(p) -> None:
    """--jobs N: raw dispatches decoded on N processes (attdec.sources.parallel)."""
    p.add_argument(
        "--jobs",
        type=at_least(1),
        default=None,
        metavar="N",
        help="Decode raw captures on N processes, this one and N-1 forked workers (default: one per core).",
    )


def inputs(a) -> dict:
    """The parsed input options, as open_dispatches takes them."""
    return {"input_format": a.input_format, "code": a.code, "arch": a.arch, "compat": a.compat, "jobs": a.jobs}


def echo(text: str, err: bool = False) -> None:
    """One line to stdout (or stderr), control characters escaped."""
    from attdec.report.common import printable

    print(printable(text), file=sys.stderr if err else sys.stdout)


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
        for level, e in self.items:
            if level == "error":
                lost(e)
            else:
                echo(f"attdec: {level}: {e}", err=True)


def lost(e: Exception) -> None:
    """One input or dispatch this run could not read, the others being reported: its error line now, exit
    status 1 at the end."""
    echo(f"attdec: error: {e}", err=True)
    LOST.append(str(e))


def tell_problems(dispatches) -> None:
    """What the sources noted about each dispatch (wave files missing or left out, ...), one warning line
    each: for the commands whose output has no place for notes."""
    for d in dispatches:
        for p in d.problems:
            echo(f"attdec: warning: {d.path or d.name}: {p}", err=True)


def open_dispatches(paths, input_format=None, code=(), arch=None, need=(), **decode_opts):
    """The dispatches the command line names, raw captures decoded, with a progress bar on a terminal.
    `need`: what the command will read of every dispatch that a folder defers ("waves"): loaded under the bar.
    One that fails is an error line and the others are still returned (the command exits 1 at its end)."""
    from attdec.report.progress import progress_bar
    from attdec.sources.pipeline import open_dispatches as read

    reports = _Reports()
    try:
        with progress_bar() as progress:
            return read(
                paths,
                input_format,
                code,
                arch,
                progress=progress,
                need=tuple(need),
                report=reports,
                before_decode=lambda raws: tune_allocator(raws, decode_opts.get("fold")),
                **decode_opts,
            )
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


def add_output(p, what: str = "Write to this file instead of stdout", required: bool = False) -> None:
    """-o/--output FILE ('-' = stdout)."""
    p.add_argument("-o", "--output", default=None if required else "-", required=required, metavar="FILE", help=what)


def output_stream(path: str, binary: bool = False, inputs=()):
    """The file the user named with -o ('-' = stdout), checked now (refused: a folder, a read-only file, one
    of `inputs`), written by `with` (attdec.report.output). Binary output (.npz) goes to a file only."""
    from attdec.report.output import open_output

    return open_output(path, binary, inputs)


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
