#!/usr/bin/env python3
"""Build AMDGPU objects whose DWARF has what tests/fixtures/isa/dwarf*_gfx*.co lack, with Debian's llc-22.

The IR below (written for this) has two compile units (one with an absolute file name), an inlined helper
whose instructions are not contiguous (so DW_TAG_inlined_subroutine has DW_AT_ranges: DWARF 5 rnglistx into
.debug_rnglists, DWARF 4 .debug_ranges), a nested inline and a line-0 location. llc writes relocatable
objects (ET_REL, there is no ld.lld-22 here); their .rela.debug_* relocations (R_AMDGPU_ABS32/ABS64:
symbol value + addend) are applied to the section bytes, so that offsets and addresses read as a linker
would leave them (readers do not relocate an ET_REL's DWARF). Writes tests/fixtures/isa/dwarf_ir/
k{4,5}_O{0,2}.o and k5_dwarf64.o (64-bit DWARF, which attdec.isa.dwarf_tables leaves to pyelftools).
"""

from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from attdec.isa.elf import Elf  # noqa: E402

OUT = ROOT / "tests/fixtures/isa/dwarf_ir"
RELA = struct.Struct("<QQq")
R_AMDGPU_ABS64, R_AMDGPU_ABS32 = 3, 6
IR = """\
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @kern(ptr addrspace(1) %out, i32 %n) !dbg !10 {
entry:
  %id = call i32 @llvm.amdgcn.workitem.id.x(), !dbg !20
  %a = mul i32 %id, %n, !dbg !21
  %b = add i32 %id, 7, !dbg !22
  %c = mul i32 %a, %b, !dbg !24
  %d = xor i32 %c, %n, !dbg !21
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %id, !dbg !22
  store volatile i32 %d, ptr addrspace(1) %p, !dbg !23
  %e = shl i32 %d, 3, !dbg !24
  store volatile i32 %e, ptr addrspace(1) %out, !dbg !22
  ret void, !dbg !23
}

define amdgpu_kernel void @other(ptr addrspace(1) %out) !dbg !40 {
entry:
  %id = call i32 @llvm.amdgcn.workitem.id.x(), !dbg !41
  %a = mul i32 %id, 5, !dbg !42
  store volatile i32 %a, ptr addrspace(1) %out, !dbg !41
  ret void, !dbg !41
}

declare i32 @llvm.amdgcn.workitem.id.x()

!llvm.dbg.cu = !{!0, !50}
!llvm.module.flags = !{!1, !2}
!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !3, producer: "attdec", isOptimized: true, \
runtimeVersion: 0, emissionKind: FullDebug)
!50 = distinct !DICompileUnit(language: DW_LANG_C99, file: !51, producer: "attdec", isOptimized: true, \
runtimeVersion: 0, emissionKind: FullDebug)
!1 = !{i32 7, !"Dwarf Version", i32 VERSION}
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !DIFile(filename: "k.c", directory: "/src")
!4 = !DIFile(filename: "inc/h.h", directory: "/src")
!51 = !DIFile(filename: "/abs/o.c", directory: "/other")
!5 = !DISubroutineType(types: !{null})
!10 = distinct !DISubprogram(name: "kern", scope: !3, file: !3, line: 4, type: !5, scopeLine: 4, \
spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = distinct !DISubprogram(name: "helper", scope: !4, file: !4, line: 1, type: !5, scopeLine: 1, \
spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!12 = distinct !DISubprogram(name: "inner", scope: !4, file: !4, line: 10, type: !5, scopeLine: 10, \
spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!20 = !DILocation(line: 5, column: 3, scope: !10)
!21 = !DILocation(line: 2, column: 5, scope: !11, inlinedAt: !30)
!30 = distinct !DILocation(line: 6, column: 7, scope: !10)
!22 = !DILocation(line: 7, column: 3, scope: !10)
!23 = !DILocation(line: 0, column: 1, scope: !10)
!24 = !DILocation(line: 11, column: 2, scope: !12, inlinedAt: !31)
!31 = distinct !DILocation(line: 3, column: 4, scope: !11, inlinedAt: !30)
!40 = distinct !DISubprogram(name: "other", scope: !51, file: !51, line: 20, type: !5, scopeLine: 20, \
spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !50)
!60 = distinct !DISubprogram(name: "h2", scope: !51, file: !51, line: 30, type: !5, scopeLine: 30, \
spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !50)
!41 = !DILocation(line: 21, column: 3, scope: !40)
!42 = !DILocation(line: 31, column: 3, scope: !60, inlinedAt: !43)
!43 = distinct !DILocation(line: 22, column: 3, scope: !40)
""".replace("\\\n", "")
BUILDS = [
    ("k4_O0.o", 4, ["-O0"]),
    ("k4_O2.o", 4, ["-O2"]),
    ("k5_O0.o", 5, ["-O0"]),
    ("k5_O2.o", 5, ["-O2"]),
    ("k5_dwarf64.o", 5, ["-O0", "-dwarf64"]),
]


def relocate_debug_sections(data: bytes) -> bytes:
    """The object with its .rela.debug_* relocations written into the sections they apply to."""
    elf = Elf(data, "object")
    out = bytearray(data)
    symtab = next(s for s in elf.sections if s.name == ".symtab")
    symbols = elf.symbols(symtab)
    for rela in elf.sections:
        if not rela.name.startswith(".rela.debug_"):
            continue
        target = elf.section(rela.name[len(".rela") :])
        for at in range(rela.offset, rela.offset + rela.size, RELA.size):
            offset, info, addend = RELA.unpack_from(data, at)
            value = symbols[info >> 32].value + addend
            kind = info & 0xFFFFFFFF
            if kind == R_AMDGPU_ABS32:
                struct.pack_into("<I", out, target.offset + offset, value)
            elif kind == R_AMDGPU_ABS64:
                struct.pack_into("<Q", out, target.offset + offset, value)
            else:
                raise SystemExit(f"{rela.name}: relocation type {kind}")
    return bytes(out)


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, version, flags in BUILDS:
            ll = Path(tmp) / f"k{version}.ll"
            ll.write_text(IR.replace("VERSION", str(version)))
            obj = Path(tmp) / name
            subprocess.run(
                ["llc-22", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-filetype=obj", *flags, str(ll), "-o", obj],
                check=True,
            )
            (OUT / name).write_bytes(relocate_debug_sections(obj.read_bytes()))
            print(name, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
