"""A small ELF64 little-endian reader: header, section headers and their names, symbol tables, notes.

Code objects need only these, and reading them with `struct` costs nothing to import, where importing pyelftools
is slow (its construct library imports pdb, inspect, dataclasses...) in every command that decodes;
DWARF is read with `struct` too (attdec.isa.dwarf_tables), pyelftools only for what that reader declines.
The rules follow pyelftools' where a file is odd (the last section of a name wins; a name runs to the
first NUL in the file; e_shnum 0 / e_shstrndx SHN_XINDEX read from section 0), so both read a code
object the same way. Anything out of bounds is a FormatError "bad ELF: ...".
"""

from __future__ import annotations

import struct

from attdec.errors import FormatError
from attdec.model.record import Frozen

# the structs, declared once (ELF64, little-endian)
EHDR = struct.Struct("<16sHHIQQQIHHHHHH")  # e_ident type machine version entry phoff shoff flags ehsize ...
SHDR = struct.Struct("<IIQQQQIIQQ")  # sh_name type flags addr offset size link info addralign entsize
SYM = struct.Struct("<IBBHQQ")  # st_name info other shndx value size
NHDR = struct.Struct("<III")  # n_namesz n_descsz n_type

SHT_SYMTAB, SHT_STRTAB, SHT_NOTE, SHT_NOBITS, SHT_DYNSYM = 2, 3, 7, 8, 11
SHT_SUNW_LDYNSYM = 0x6FFFFFF3
SYMBOL_TABLES = (SHT_SYMTAB, SHT_DYNSYM, SHT_SUNW_LDYNSYM)
SHN_UNDEF, SHN_ABS, SHN_XINDEX = 0, 0xFFF1, 0xFFFF
STT_OBJECT, STT_FUNC = 1, 2


class Section(Frozen):
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    entsize: int


class ElfSymbol(Frozen):
    name: str
    value: int
    size: int
    type: int  # STT_*: st_info's low 4 bits
    shndx: int


class Note(Frozen):
    name: str | None  # None when n_namesz is 0
    type: int
    desc: bytes


class Elf:
    """One ELF64 LE file's header fields and sections; `where` names it in errors."""

    def __init__(self, data: bytes, where: str):
        self.data, self.where = data, where
        if len(data) < EHDR.size or data[:4] != b"\x7fELF":
            self._bad("no ELF header")
        if data[4] != 2 or data[5] != 1:
            self._bad(f"not ELF64 little-endian (EI_CLASS {data[4]}, EI_DATA {data[5]})")
        (_, self.e_type, self.e_machine, _, _, _, shoff, self.e_flags, _, _, _, shentsize, shnum, shstrndx) = (
            EHDR.unpack_from(data)
        )
        headers = []
        if shoff:
            if shentsize < SHDR.size:
                self._bad(f"too small e_shentsize: {shentsize}")
            if shnum == 0:  # 0xff00 sections or more: the count is section 0's sh_size
                shnum = self._header(shoff)[5]
            if shstrndx == SHN_XINDEX:  # and the names' section index is its sh_link
                shstrndx = self._header(shoff)[6]
            if shoff + shnum * shentsize > len(data):
                self._bad(f"{shnum} section headers at {shoff:#x} run past the end ({len(data)} bytes)")
            headers = [SHDR.unpack_from(data, shoff + i * shentsize) for i in range(shnum)]
            if shstrndx >= shnum:
                self._bad(f"section name table {shstrndx} of {shnum} sections")
            names = headers[shstrndx][4]
        self.sections = [Section(self.string(names + h[0]), h[1], h[2], h[3], h[4], h[5], h[6], h[9]) for h in headers]
        self._by_name = {s.name: s for s in self.sections}

    def _bad(self, what: str):
        raise FormatError(f"bad ELF: {what}", self.where)

    def _header(self, at: int) -> tuple:
        if at + SHDR.size > len(self.data):
            self._bad(f"section header at {at:#x} past the end ({len(self.data)} bytes)")
        return SHDR.unpack_from(self.data, at)

    def string(self, at: int) -> str:
        """The NUL-terminated string at file offset `at`; '' if empty or unterminated."""
        end = self.data.find(b"\0", at)
        return self.data[at:end].decode("utf-8", "replace") if end >= 0 else ""

    def section(self, name: str) -> Section | None:
        return self._by_name.get(name)

    def contents(self, sec: Section) -> bytes:
        """A section's bytes (zeros for SHT_NOBITS; cut short where the file ends)."""
        if sec.type == SHT_NOBITS:
            return bytes(sec.size)
        return self.data[sec.offset : sec.offset + sec.size]

    def symbols(self, sec: Section) -> list[ElfSymbol]:
        """The entries of a symbol table section, their names from its linked string table."""
        if not sec.entsize or sec.size % sec.entsize:
            self._bad(f"symbol table {sec.name} of {sec.size} bytes in entries of {sec.entsize}")
        if not sec.link < len(self.sections) or self.sections[sec.link].type != SHT_STRTAB:
            self._bad(f"symbol table {sec.name} links section {sec.link}, not a string table")
        strings = self.sections[sec.link].offset
        out = []
        for at in range(sec.offset, sec.offset + sec.size, sec.entsize):
            if at + SYM.size > len(self.data):
                self._bad(f"symbol at {at:#x} past the end ({len(self.data)} bytes)")
            name, info, _, shndx, value, size = SYM.unpack_from(self.data, at)
            out.append(ElfSymbol(self.string(strings + name), value, size, info & 0xF, shndx))
        return out

    def notes(self, sec: Section):
        """The notes of a note section, in order: names and descriptors 4-byte aligned."""
        at, end, data = sec.offset, sec.offset + sec.size, self.data
        while at + NHDR.size < end:
            if at + NHDR.size > len(data):
                self._bad(f"note at {at:#x} past the end ({len(data)} bytes)")
            namesz, descsz, ntype = NHDR.unpack_from(data, at)
            at += NHDR.size
            name = None
            if namesz:
                raw = data[at : at + _align4(namesz)]
                if b"\0" not in raw:
                    self._bad(f"note name at {at:#x} has no terminator")
                name = raw[: raw.index(b"\0")].decode("latin-1")
                at += _align4(namesz)
            yield Note(name, ntype, data[at : at + descsz])
            at += _align4(descsz)


def _align4(n: int) -> int:
    return (n + 3) & ~3
