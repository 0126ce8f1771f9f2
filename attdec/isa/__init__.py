"""AMDGPU code objects (ELF, metadata, DWARF lines) and a table-driven instruction decoder.

co = load_code_object(data, where="k.co")          # .arch .text .text_vaddr .symbols .kernels .source_of()
insts = disassemble(co.text, co.arch, co.text_vaddr)  # [Instruction(address, size, mnemonic, operands,
                                                      #               text, target, category)]
"""

from attdec.isa.categories import waitcnt_fields
from attdec.isa.codeobj import CodeObject, Kernel, Symbol, load_code_object
from attdec.isa.decoder import ARCHES, Instruction, disassemble, flow_of, tables_for

__all__ = [
    "ARCHES",
    "CodeObject",
    "Instruction",
    "Kernel",
    "Symbol",
    "disassemble",
    "flow_of",
    "load_code_object",
    "tables_for",
    "waitcnt_fields",
]
