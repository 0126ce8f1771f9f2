"""`attdec kernel PATH...`: what each kernel asks of a compute unit, how many waves that allows, how many ran."""

from __future__ import annotations

from pathlib import Path

from attdec.commands.common import (
    attdec_command,
    emit,
    format_option,
    input_options,
    inputs,
    open_dispatches,
    paths_argument,
)


def _code_object(path: str, arch: str | None):
    """The loaded code object when `path` is a bare one (an AMDGPU ELF, or with --arch any file no input
    kind claims, such as tinygrad's minimal containers); else None."""
    from attdec.errors import FormatError, read_bytes
    from attdec.isa import load_code_object
    from attdec.sources.pipeline import kind_of

    p = Path(path)
    if not p.is_file():
        return None
    with open(p, "rb") as f:
        head = f.read(20)
    elf = head[:4] == b"\x7fELF" and head[18:20] == b"\xe0\x00"
    if not elf and kind_of(p) is not None:
        return None
    try:
        return load_code_object(read_bytes(p), path, arch=arch)
    except FormatError:
        if elf or arch:
            raise
        return None


def summaries(paths, input_format=None, code=(), arch=None, compat=None, jobs=None) -> list:
    """KernelSummary of every dispatch the paths name, and of every kernel in bare code objects."""
    from attdec import api
    from attdec.analysis.kernel import code_object_summaries

    if code:
        return [api.kernel(d) for d in open_dispatches(paths, input_format, code, arch, compat=compat, jobs=jobs)]
    out = []
    for p in paths:
        co = _code_object(p, arch) if input_format is None else None
        if co is not None:
            out += code_object_summaries(co)
        else:
            out += [api.kernel(d) for d in open_dispatches([p], input_format, compat=compat, jobs=jobs)]
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

    found = summaries(a.paths, **inputs(a))
    emit(found, a.fmt, sys.stdout, rep.reporters())
