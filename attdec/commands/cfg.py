"""`attdec cfg PATH...`: basic blocks and loops of each kernel, with hits, cycles and stall per block."""

from __future__ import annotations

from attdec.commands.common import (
    attdec_command,
    emit,
    format_option,
    input_options,
    inputs_of,
    open_dispatches,
    paths_argument,
    wave_filter,
    wave_filter_options,
)
from attdec.model.options import InputOptions


def run(paths, fmt="table", wave_filter=None, inputs: InputOptions = InputOptions(), out=None):
    """Control-flow graphs of the dispatches `paths` name, printed to `out` (default stdout) as `fmt`."""
    import sys

    from attdec import api
    from attdec.report import cfg as rep

    rs = api.control_flow(open_dispatches(paths, inputs, need=("waves",)), wave_filter)
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
    run(a.paths, a.fmt, wave_filter(a), inputs=inputs_of(a))
