"""AMDGPU code objects (ELF, metadata, DWARF lines) and a table-driven instruction decoder.

    co = load_code_object(data, where="k.co")          # .arch .text .text_vaddr .symbols .kernels .source_of()
    insts = disassemble(co.text, co.arch, co.text_vaddr)  # [Instruction(address, size, mnemonic, operands,
                                                          #               text, target, category)]
"""
from attdec.isa.arch import ARCHES, arch_from_target_version, canonical_arch, family_of
from attdec.isa.codeobj import CodeObject, Kernel, Symbol, load_code_object
from attdec.isa.decoder import Instruction, disassemble, flow_of
from attdec.isa.render import waitcnt_fields

__all__ = ["ARCHES", "CodeObject", "Instruction", "Kernel", "Symbol", "arch_from_target_version",
           "canonical_arch", "disassemble", "family_of", "flow_of", "load_code_object", "waitcnt_fields"]
