"""`attdec cfg PATH...`: basic blocks and loops of each kernel, with hits, cycles and stall per block."""

from __future__ import annotations

import click

from attdec.analysis.aggregate import aggregate_lines
from attdec.analysis.cfg import block_stats, build_cfgs
from attdec.analysis.loops import loop_timings
from attdec.commands.common import input_options, make_wave_filter, open_dispatches, wave_filter_options
from attdec.report import cfg as rep


def reports(paths, wave_filter=None, input_format=None, code=(), arch=None) -> list[rep.CfgReport]:
    """Control-flow graphs with block statistics and loop timings for every dispatch the paths name."""
    out = []
    for d in open_dispatches(paths, input_format, code, arch):
        waves = d.waves if wave_filter is None else [w for w in d.waves if wave_filter(w)]
        totals = aggregate_lines(waves).as_dict() if wave_filter is not None else None
        cfgs = build_cfgs(d.code)
        for cfg in cfgs:
            block_stats(cfg, d.target.family, totals)
        out.append(rep.CfgReport(d, len(waves), cfgs, loop_timings(d, waves, cfgs)))
    return out


@click.command("cfg")
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "dot"]), default="table", show_default=True)
@wave_filter_options
@input_options
def command(paths, fmt, se, simd, slot, wave, input_format, code, arch):
    """Basic blocks and control-flow graph of each kernel, loops nested, from the disassembly listing.

    Per block: address, instructions, hits, cycles, stall, its share, dominant stall type, source line
    and successors; per loop: header, back edges and iteration timing (`attdec loops` has the per-wave
    detail). --format dot writes Graphviz (loops as clusters); json has every block and loop.
    """
    rs = reports(paths, make_wave_filter(se, simd, slot, wave), input_format, code, arch)
    if fmt == "json":
        rep.print_cfg_json(rs)
    elif fmt == "dot":
        rep.print_cfg_dot(rs)
    else:
        rep.print_cfg_table(rs)
