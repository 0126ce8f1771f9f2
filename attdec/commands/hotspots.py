"""`attdec hotspots PATH...`: which source lines / instructions / files lose the most cycles, and why."""

from __future__ import annotations

import click

from attdec.analysis import BY, CHARGES, FRAMES
from attdec.commands.common import FORMATS, TOP, input_options, make_wave_filter, open_dispatches, wave_filter_options


def run(
    paths,
    by=None,
    top=20,
    frame="inner",
    merge=False,
    fmt="table",
    wave_filter=None,
    input_format=None,
    code=(),
    arch=None,
    out=None,
    charge="wait",
):
    """Hotspots of the dispatches `paths` name, printed to `out` (default stdout) as `fmt`."""
    import sys

    from attdec.analysis.hotspots import hotspots
    from attdec.report import hotspots as rep

    dispatches = open_dispatches(paths, input_format, code, arch)
    if fmt == "folded":  # every chain, whatever --top; roots are kernels, so dispatches of one kernel merge
        from attdec.analysis.flame import stall_stacks

        rep.print_folded(stall_stacks(dispatches, by, wave_filter, charge), out or sys.stdout)
        return
    groups = [dispatches] if merge else [[d] for d in dispatches]
    reports = [hotspots(g, by=by, frame=frame, wave_filter=wave_filter, charge=charge) for g in groups]
    printers = {"table": rep.print_table, "json": rep.print_json, "csv": rep.print_csv, "md": rep.print_md}
    printers[fmt](reports, top, out or sys.stdout)


@click.command("hotspots")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--by",
    type=click.Choice(BY),
    default=None,
    help="Rank source lines (default; instructions when there are no source lines), single "
    "instructions, or whole source files.",
)
@click.option("--top", type=TOP, default=20, show_default=True, help="Rows to show (0 = all).")
@click.option(
    "--frame",
    type=click.Choice(FRAMES),
    default="inner",
    show_default=True,
    help="For inlined code (Source 'a.py:10 -> b.py:20'): charge the instruction's own line "
    "(inner, the first) or the outermost call site (outer, the last).",
)
@click.option(
    "--charge",
    type=click.Choice(CHARGES),
    default="wait",
    show_default=True,
    help="Where a wait's stall counts: on the wait (wait) or on the loads, stores and other operations it "
    "waited for (producer; `attdec waits` lists them). Totals are the same either way.",
)
@click.option("--merge", is_flag=True, help="Aggregate all dispatches into one report.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice([*FORMATS.choices, "md", "folded"]),
    default="table",
    show_default=True,
    help="md: markdown tables for a pull request; folded: stall by inline call chain as folded stacks "
    "(kernel;outer;...;inner stall) for flamegraph.pl, inferno or speedscope (all chains, --top and --frame "
    "do not apply; --by file: files as frames, --by instruction: the instruction as the leaf).",
)
@wave_filter_options
@input_options
def command(paths, by, top, frame, charge, merge, fmt, se, simd, slot, wave, cu, input_format, code, arch):
    """Rank source lines (or instructions, files) by stall cycles, with the dominant stall type.

    PATHS are ui_output dispatch folders, parents holding many, globs, or .tar.xz archives of a folder;
    or raw captures, decoded on the fly: rocprofv3 raw output (*_shader_engine_*.att + code objects),
    a tinygrad profile.pkl, a capture folder (capture.json), or .att blobs with --code FILE@LOADBASE.
    With --se/--simd/--slot/--wave/--cu the totals are recomputed from those waves only. With --charge
    producer the stall of each wait moves to the instructions whose results it waited for.
    """
    wave_filter = make_wave_filter(se, simd, slot, wave, cu)
    run(paths, by, top, frame, merge, fmt, wave_filter, input_format, code, arch, charge=charge)
