"""`attdec disasm CODE_OBJECT`: the instruction listing of an AMDGPU code object, as llvm-objdump prints it."""

from __future__ import annotations

import sys

import click

from attdec.commands.common import attdec_command, emit, format_option


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
    from attdec import api
    from attdec.report.disasm import reporters

    emit(api.disassemble(a.code_object, a.arch, a.kernel), a.fmt, sys.stdout, reporters())
