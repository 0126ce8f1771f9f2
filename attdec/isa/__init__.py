"""AMDGPU code objects (ELF, metadata, DWARF lines) and a table-driven instruction decoder.

co = load_code_object(data, where="k.co")          # .arch .text .text_vaddr .symbols .kernels .source_of()
insts = disassemble(co.text, co.arch, co.text_vaddr)  # [Instruction(address, size, mnemonic, operands,
                                                      #               text, target, inst_class)]

The names below are imported from their modules on first use: `attdec.isa.categories` (what the stall
classifier needs) must not drag in the disassembler and its tables.
"""

import importlib

_HOME = {
    "ARCHES": "decoder",
    "CodeObject": "codeobj",
    "Instruction": "decoder",
    "Kernel": "codeobj",
    "Symbol": "codeobj",
    "disassemble": "decoder",
    "flow_of": "decoder",
    "load_code_object": "codeobj",
    "readings": "decoder",
    "tables_for": "decoder",
    "waitcnt_fields": "categories",
}
__all__ = [
    "ARCHES",
    "CodeObject",
    "Instruction",
    "Kernel",
    "Symbol",
    "disassemble",
    "flow_of",
    "load_code_object",
    "readings",
    "tables_for",
    "waitcnt_fields",
]


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"attdec.isa.{_HOME[name]}"), name)
    globals()[name] = value
    return value
