"""`attdec disasm CODE_OBJECT`: the instruction listing of an AMDGPU code object, as llvm-objdump prints it."""

from __future__ import annotations

import sys

import click

from attdec.commands.common import attdec_command, emit, format_option
from attdec.errors import ArchError, InputError, read_bytes


def listing(path: str, arch: str | None = None, kernel: str | None = None):
    """(code object, instructions, labels {vaddr: name}) for the whole .text or one kernel."""
    from attdec.isa import disassemble, load_code_object, tables_for

    co = load_code_object(read_bytes(path), path, arch=arch)
    if not co.arch:
        raise ArchError("the code object does not name its target (tinygrad minimal container): pass --arch", path)
    tables_for(co.arch, path)
    start, end = co.text_vaddr, co.text_end
    if kernel is not None:
        k = co.kernel(kernel)
        if k is None:
            names = ", ".join(k.name for k in co.kernels) or "none"
            raise InputError(f"no kernel {kernel!r} (kernels: {names})", path)
        start = k.entry
        later = sorted(s.vaddr for s in co.symbols if s.kind == "func" and s.vaddr > k.entry)
        end = k.entry + k.size if k.size else (later[0] if later else co.text_end)
    code = co.text[start - co.text_vaddr : end - co.text_vaddr]
    insts = disassemble(code, co.arch, start)
    labels = {s.vaddr: s.name for s in co.symbols if s.kind == "func" and start <= s.vaddr < end}
    for k in co.kernels:
        if start <= k.entry < end:
            labels.setdefault(k.entry, k.name)
    for i in insts:
        if i.target is not None and start <= i.target < end and i.target not in labels:
            labels[i.target] = f".LBB_{i.target:x}"
    return co, insts, labels


@attdec_command(
    click.argument("code_object", metavar="CODE_OBJECT"),
    click.option(
        "--arch",
        default=None,
        help="Target (gfx90a, gfx942, gfx950, gfx1100..gfx1103, gfx1150, gfx1151, gfx1200, "
        "gfx1201); needed for tinygrad's minimal containers, overrides the ELF's.",
    ),
    click.option("--kernel", default=None, help="Only this kernel's instructions."),
    format_option(("text", "json"), "text"),
)
def disasm(a) -> None:
    """Disassemble CODE_OBJECT (an AMDGPU ELF or a tinygrad container) like llvm-objdump, without LLVM."""
    from attdec.report.disasm import reporters

    emit(listing(a.code_object, a.arch, a.kernel), a.fmt, sys.stdout, reporters())
