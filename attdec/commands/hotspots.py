"""`attdec hotspots PATH...`: which source lines / instructions / files lose the most cycles, and why."""

from __future__ import annotations

import click

from attdec.analysis import BY, CHARGES, FRAMES
from attdec.commands.common import (
    COUNT,
    FORMATS,
    attdec_command,
    emit,
    format_option,
    input_options,
    inputs_of,
    open_dispatches,
    output_option,
    paths_argument,
    read_paths,
    wave_filter,
    wave_filter_options,
)
from attdec.model.options import InputOptions
from attdec.report.common import output_stream


def run(
    paths,
    by=None,
    top=20,
    frame="inner",
    merge=False,
    fmt="table",
    wave_filter=None,
    inputs: InputOptions = InputOptions(),
    out=None,
    charge="wait",
):
    """Hotspots of the dispatches `paths` name, printed to `out` (default stdout) as `fmt`."""
    import sys

    from attdec import api
    from attdec.report import hotspots as rep

    # the listing's totals are all a plain report reads; filters and producer charging replay the waves
    need = ("waves",) if wave_filter is not None or charge == "producer" else ()
    # the other reports read totals only: a big raw blob is decoded in windows, its waves counted, not kept
    fold = "totals" if not need and fmt != "folded" else False
    dispatches = open_dispatches(paths, inputs.replace(decode=inputs.decode.replace(fold=fold)), need=need)
    result: list
    if fmt == "folded":  # every chain, whatever --top; roots are kernels, so dispatches of one kernel merge
        result = api.stall_stacks(dispatches, by, wave_filter, charge)
    else:
        groups = [dispatches] if merge else [[d] for d in dispatches]
        result = [api.hotspots(g, by, frame=frame, wave_filter=wave_filter, charge=charge) for g in groups]
    emit(result, fmt, out or sys.stdout, rep.reporters(top, dispatches))


@attdec_command(
    paths_argument(),
    click.option(
        "--by",
        type=click.Choice(BY),
        default=None,
        help="Rank source lines (default; instructions when there are no source lines), single "
        "instructions, or whole source files.",
    ),
    click.option("--top", type=COUNT, default=20, help="Rows to show (0 = all)."),
    click.option(
        "--frame",
        type=click.Choice(FRAMES),
        default="inner",
        help="For inlined code (Source 'a.py:10 -> b.py:20'): charge the instruction's own line "
        "(inner, the first) or the outermost call site (outer, the last).",
    ),
    click.option(
        "--charge",
        type=click.Choice(CHARGES),
        default="wait",
        help="Where a wait's stall counts: on the wait (wait) or on the loads, stores and other operations it "
        "waited for (producer; `attdec waits` lists them). Totals are the same either way.",
    ),
    click.option("--merge", is_flag=True, help="Aggregate all dispatches into one report."),
    format_option(
        [*FORMATS, "md", "folded", "npz"],
        help="md: markdown tables for a pull request; npz: the rows, stall types and totals as numpy columns "
        "(docs/api.md, 'Columnar output'), to -o FILE; folded: stall by inline call chain as folded stacks "
        "(kernel;outer;...;inner stall) for flamegraph.pl, inferno or speedscope (all chains, --top and --frame "
        "do not apply; --by file: files as frames, --by instruction: the instruction as the leaf).",
    ),
    output_option(),
    wave_filter_options,
    input_options,
)
def hotspots(a) -> None:
    """Rank source lines (or instructions, files) by stall cycles, with the dominant stall type.

    PATHS are ui_output dispatch folders, parents holding many, globs, or .tar.xz archives of a folder;
    or raw captures, decoded on the fly: rocprofv3 raw output (*_shader_engine_*.att + code objects),
    a tinygrad profile.pkl, a capture folder (capture.json), or .att blobs with --code FILE@LOADBASE.
    With --se/--simd/--slot/--wave/--cu the totals are recomputed from those waves only. With --charge
    producer the stall of each wait moves to the instructions whose results it waited for.
    """
    with output_stream(a.output, binary=a.fmt == "npz", inputs=read_paths(a)) as out:
        run(
            a.paths, a.by, a.top, a.frame, a.merge, a.fmt, wave_filter(a), inputs=inputs_of(a), out=out, charge=a.charge
        )
