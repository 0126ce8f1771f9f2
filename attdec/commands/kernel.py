"""`attdec kernel PATH...`: what each kernel asks of a compute unit, how many waves that allows, how many ran."""

from __future__ import annotations

from attdec.commands.common import (
    attdec_command,
    emit,
    format_option,
    input_options,
    inputs_of,
    open_dispatches,
    paths_argument,
)
from attdec.model.options import InputOptions


def summaries(paths, inputs: InputOptions = InputOptions()) -> list:
    """KernelSummary of every dispatch the paths name, and of every kernel in bare code objects."""
    from attdec import api

    if inputs.code:
        return [api.kernel(d) for d in open_dispatches(paths, inputs)]
    out = []
    for p in paths:
        bare = api.code_object_kernels(p, inputs.arch) if inputs.input_format is None else None
        if bare is not None:
            out += bare
        else:  # --arch names a bare code object's GPU: an input's own says which it is
            out += [api.kernel(d) for d in open_dispatches([p], inputs.replace(arch=None))]
    return out


@attdec_command(paths_argument(), format_option(), input_options)
def kernel(a) -> None:
    """Kernel resources (VGPR, AGPR, SGPR, LDS, scratch, wave and workgroup size, kernarg, flags), the
    theoretical occupancy they allow on the GPU and which resource limits it, and the occupancy the
    trace achieved (mean, peak, time share of each wave count).

    PATHS are anything attdec reads (ui_output folders, raw captures, tinygrad profiles) or bare code
    objects (.co/.hsaco/.out); --arch names the GPU of a code object that does not say (tinygrad's
    hand-written kernels). ui_output folders carry no code object: registers are then read off the
    listing as lower bounds, and the occupancy shown is an upper bound.
    """
    import sys

    from attdec.report import kernel as rep

    found = summaries(a.paths, inputs=inputs_of(a))
    emit(found, a.fmt, sys.stdout, rep.reporters())
