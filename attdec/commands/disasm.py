"""`attdec disasm CODE_OBJECT`: the instruction listing of an AMDGPU code object, as llvm-objdump prints it."""

from __future__ import annotations

import json
import sys

import click

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


def print_text(co, insts, labels, out) -> None:
    from rich.markup import escape  # symbol names and DWARF paths come from the file: no markup in them

    from attdec.report.common import SafeConsole

    console = SafeConsole(file=out, highlight=False, soft_wrap=True, force_terminal=None)
    last_src = None
    for i in insts:
        if i.address in labels:
            console.print(f"\n[bold]{escape(labels[i.address])}[/bold]:")
        src = co.source_of(i.address)
        if src and src != last_src:
            console.print(f"  [dim]; {escape(src)}[/dim]")
        last_src = src or last_src
        words = " ".join(f"{w:08X}" for w in i.words)
        tail = f"  [cyan]<{escape(labels[i.target])}>[/cyan]" if i.target in labels else ""
        style = "red" if i.mnemonic == ".long" else "default"
        console.print(f"  [dim]{i.address:8x}:[/dim] {words:<26} [{style}]{escape(i.text)}[/{style}]{tail}")


@click.command("disasm")
@click.argument("code_object")
@click.option(
    "--arch",
    help="Target (gfx90a, gfx942, gfx950, gfx1100..gfx1103, gfx1150, gfx1151, gfx1200, "
    "gfx1201); needed for tinygrad's minimal containers, overrides the ELF's.",
)
@click.option("--kernel", help="Only this kernel's instructions.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def command(code_object, arch, kernel, fmt):
    """Disassemble CODE_OBJECT (an AMDGPU ELF or a tinygrad container) like llvm-objdump, without LLVM."""
    co, insts, labels = listing(code_object, arch, kernel)
    if fmt == "json":
        json.dump({"instructions": [{"address": i.address, "size": i.size, "text": i.text} for i in insts]}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print_text(co, insts, labels, sys.stdout)
