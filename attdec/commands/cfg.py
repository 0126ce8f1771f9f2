"""`attdec cfg PATH...`: basic blocks and loops of each kernel, with hits, cycles and stall per block."""

from __future__ import annotations

from attdec.commands.common import (
    attdec_command,
    emit,
    format_option,
    input_options,
    inputs,
    open_dispatches,
    paths_argument,
    wave_filter,
    wave_filter_options,
)


def reports(paths, wave_filter=None, input_format=None, code=(), arch=None, compat=None, jobs=None) -> list:
    """A report.cfg.CfgReport (control-flow graphs with block statistics and loop timings) per dispatch."""
    from attdec.report.cfg import cfg_reports

    opened = open_dispatches(paths, input_format, code, arch, compat=compat, jobs=jobs, need=("waves",))
    return cfg_reports(opened, wave_filter)


def run(paths, fmt="table", wave_filter=None, input_format=None, code=(), arch=None, compat=None, jobs=None, out=None):
    """Control-flow graphs of the dispatches `paths` name, printed to `out` (default stdout) as `fmt`."""
    import sys

    from attdec.report import cfg as rep

    rs = reports(paths, wave_filter, input_format, code, arch, compat, jobs)
    emit(rs, fmt, out or sys.stdout, rep.cfg_reporters())


@attdec_command(
    paths_argument(),
    format_option(("table", "json", "dot")),
    wave_filter_options,
    input_options,
)
def cfg(a) -> None:
    """Basic blocks and control-flow graph of each kernel, loops nested, from the disassembly listing.

    Per block: address, instructions, hits, cycles, stall, its share, dominant stall type, source line
    and successors; per loop: header, back edges and iteration timing (`attdec loops` has the per-wave
    detail). --format dot writes Graphviz (loops as clusters); json has every block and loop.
    """
    run(a.paths, a.fmt, wave_filter(a), **inputs(a))
