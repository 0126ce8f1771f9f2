"""`attdec loops PATH...`: each loop's iterations per wave: count, first iteration, steady state, outliers."""

from __future__ import annotations

from attdec.commands.cfg import reports
from attdec.commands.common import add_input_options, add_paths, add_wave_filters, count, inputs, wave_filter


def run(
    paths,
    top=16,
    fmt="table",
    wave_filter=None,
    input_format=None,
    code=(),
    arch=None,
    compat=None,
    jobs=None,
    out=None,
):
    """Loop timings of the dispatches `paths` name, printed to `out` (default stdout) as `fmt`."""
    import sys

    from attdec.report import cfg as rep

    rs = reports(paths, wave_filter, input_format, code, arch, compat, jobs)
    if fmt == "json":
        rep.print_loops_json(rs, out or sys.stdout)
    else:
        rep.print_loops_table(rs, top, out or sys.stdout)


def arguments(p) -> None:
    add_paths(p)
    p.add_argument("--top", type=count, default=16, help="Waves listed per loop in the table (0 = all).")
    p.add_argument("--format", dest="fmt", choices=("table", "json"), default="table")
    add_wave_filters(p)
    add_input_options(p)


def command(a) -> None:
    """Loops (back edges of the control-flow graph) and their iterations in every wave.

    Per loop: header, depth, iterations per wave, the first iteration of each entry versus the steady
    state (p50, p95), and iterations beyond 3 MADs of the steady median; per wave the same, and in JSON
    every iteration's cycles. Iterations run from one execution of the header to the next or to the
    first instruction outside the loop, so a dropped or repeated branch record cannot shift the rest.
    """
    run(a.paths, a.top, a.fmt, wave_filter(a), **inputs(a))
