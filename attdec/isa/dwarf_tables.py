"""A code object's DWARF line rows and inlined-subroutine ranges, read with `struct` (for attdec.isa.dwarf).

pyelftools read them before: importing it, opening a file and reading the DWARF cost far more than this
reader does (benchmarks/RESULTS.md), in every raw-capture command that asks for a source line. This reader knows
DWARF 4 and 5 as LLVM writes them for AMDGPU (32-bit DWARF, 8-byte addresses, DWARF 5's
strx/addrx/rnglistx/line_strp/implicit_const forms and their .debug_str_offsets/.debug_addr/.debug_rnglists
tables, DWARF 4's .debug_ranges) and reads them as pyelftools 0.33 does, so the index is the same. What it
does not know (DWARF64, other versions or unit types, DW_FORM_indirect, DW_LNE_define_file, relocated or
compressed sections, a value outside its section, an opcode table that is not the standard one...) raises
`Unsupported`: the caller then reads the file with pyelftools, so nothing here is guessed. The codes are those
of the DWARF 5 spec, section 7.
"""

from __future__ import annotations

import os
import struct

from attdec.errors import FormatError
from attdec.isa.elf import SHT_NOBITS, Elf

U16, U32, U64 = struct.Struct("<H"), struct.Struct("<I"), struct.Struct("<Q")
EM_AMDGPU, ET_REL, SHF_COMPRESSED = 224, 1, 0x800
DEBUG_SECTIONS = (
    *(".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_line_str", ".debug_str_offsets"),
    *(".debug_addr", ".debug_ranges", ".debug_rnglists", ".debug_loclists"),
)

TAG_INLINED_SUBROUTINE = 0x1D
AT_SIBLING, AT_STMT_LIST, AT_LOW_PC, AT_HIGH_PC, AT_COMP_DIR = 0x01, 0x10, 0x11, 0x12, 0x1B
AT_RANGES, AT_CALL_FILE, AT_CALL_LINE = 0x55, 0x58, 0x59
AT_STR_OFFSETS_BASE, AT_ADDR_BASE, AT_RNGLISTS_BASE, AT_LOCLISTS_BASE = 0x72, 0x73, 0x74, 0x8C

FORM_ADDR, FORM_DATA2, FORM_DATA4, FORM_DATA8, FORM_STRING = 0x01, 0x05, 0x06, 0x07, 0x08
FORM_BLOCK, FORM_DATA1, FORM_SDATA, FORM_STRP, FORM_UDATA = 0x09, 0x0B, 0x0D, 0x0E, 0x0F
FORM_REF_ADDR, FORM_REF1, FORM_REF2, FORM_REF4, FORM_REF8, FORM_REF_UDATA = 0x10, 0x11, 0x12, 0x13, 0x14, 0x15
FORM_SEC_OFFSET, FORM_STRX, FORM_ADDRX, FORM_DATA16, FORM_LINE_STRP = 0x17, 0x1A, 0x1B, 0x1E, 0x1F
FORM_IMPLICIT_CONST, FORM_LOCLISTX, FORM_RNGLISTX = 0x21, 0x22, 0x23
FORM_STRX1, FORM_ADDRX1 = 0x25, 0x29  # ...x2, x3, x4 follow each
# value bytes of the fixed-size forms (8-byte addresses, 4-byte offsets); 0x0C flag, 0x19 flag_present,
# 0x1C/0x24 ref_sup4/8, 0x1D strp_sup, 0x20 ref_sig8, 0x26-0x28 strx2-4, 0x2A-0x2C addrx2-4
FIXED = {
    FORM_ADDR: 8, FORM_DATA2: 2, FORM_DATA4: 4, FORM_DATA8: 8, FORM_DATA1: 1, 0x0C: 1, FORM_STRP: 4,
    FORM_REF_ADDR: 4, FORM_REF1: 1, FORM_REF2: 2, FORM_REF4: 4, FORM_REF8: 8, FORM_SEC_OFFSET: 4, 0x19: 0,
    0x1C: 4, 0x1D: 4, FORM_DATA16: 16, FORM_LINE_STRP: 4, 0x20: 8, FORM_IMPLICIT_CONST: 0, 0x24: 8,
    FORM_STRX1: 1, 0x26: 2, 0x27: 3, 0x28: 4, FORM_ADDRX1: 1, 0x2A: 2, 0x2B: 3, 0x2C: 4,
}  # fmt: skip
ULEB_FORMS = {FORM_UDATA, FORM_REF_UDATA, FORM_STRX, FORM_ADDRX, FORM_LOCLISTX, FORM_RNGLISTX}
BLOCK_FORMS = {0x0A: 1, 0x03: 2, 0x04: 4, FORM_BLOCK: 0, 0x18: 0}  # block1/2/4, block and exprloc (ULEB length)
STRX_FORMS = {FORM_STRX, FORM_STRX1, 0x26, 0x27, 0x28}
ADDRX_FORMS = {FORM_ADDRX, FORM_ADDRX1, 0x2A, 0x2B, 0x2C}
INT_FORMS = {FORM_DATA1, FORM_DATA2, FORM_DATA4, FORM_DATA8, FORM_UDATA, FORM_SDATA, FORM_IMPLICIT_CONST}
STRING_FORMS = {FORM_STRING, FORM_STRP, FORM_LINE_STRP} | STRX_FORMS
REF_FORMS = {FORM_REF1, FORM_REF2, FORM_REF4, FORM_REF8, FORM_REF_UDATA}
# operand counts of standard opcodes 1..12 (DW_LNS_copy ... DW_LNS_set_isa)
STANDARD_OPCODE_LENGTHS = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])
LNCT_PATH, LNCT_DIRECTORY_INDEX = 1, 2
LNCT_KNOWN = {1, 2, 3, 4, 5, 0x2001}  # path, directory index, timestamp, size, MD5, LLVM source


class Unsupported(Exception):
    """Something this reader does not read as pyelftools does; the caller reads the file with pyelftools."""


def read_tables(data: bytes) -> tuple[list, list]:
    """(line rows, inlined ranges) of an ELF code object, as attdec.isa.dwarf's pyelftools path collects them:
    rows (start, end, "file:line") of every line-table sequence, inlined (low, high, depth, "file:line" of the
    call site) of every DW_TAG_inlined_subroutine in DIE order. Both empty without .debug_info."""
    if data[:4] != b"\x7fELF":  # pyelftools refuses it: the index is empty either way
        return [], []
    try:
        elf = Elf(data, "")
    except FormatError as e:
        raise Unsupported(str(e)) from None
    if elf.e_machine != EM_AMDGPU:
        raise Unsupported(f"e_machine {elf.e_machine}")
    for s in elf.sections:
        if s.name.startswith((".zdebug", ".gnu_debugaltlink", ".debug_sup")) or (
            elf.e_type != ET_REL and s.name.startswith((".rel.debug", ".rela.debug"))
        ):
            raise Unsupported(f"section {s.name}")
    sections: dict[str, bytes] = {}
    for name in DEBUG_SECTIONS:
        sec = elf.section(name)
        if sec is None:
            continue
        if sec.type == SHT_NOBITS or sec.flags & SHF_COMPRESSED or sec.offset + sec.size > len(data):
            raise Unsupported(f"section {name}: type {sec.type}, flags {sec.flags:#x}")
        sections[name] = elf.contents(sec)
    if ".debug_info" not in sections:
        return [], []
    try:
        return _Reader(sections).read()
    except (IndexError, ValueError, KeyError, struct.error) as e:  # ran off a section, a string or a table
        raise Unsupported(f"{type(e).__name__}: {e}") from None


def _uleb(d: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = d[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _sleb(d: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = d[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return (value - (1 << shift) if b & 0x40 else value), pos


def _cstring(d: bytes, pos: int) -> tuple[bytes, int]:
    end = d.index(b"\0", pos)  # ValueError when unterminated
    return d[pos:end], end + 1


def file_path(table: tuple, index: int, comp_dir: str) -> str:
    """File name of line-table file `index` with its directory; DWARF 4 counts files and directories from
    1 (directory 0: the compilation directory), DWARF 5 from 0 (directory 0 is the compilation directory).
    A relative directory is relative to the compilation directory (DWARF 4 and 5, §6.2.4)."""
    v5, files, dirs = table
    i = index if v5 else index - 1
    if not 0 <= i < len(files):
        return "?"
    name, dir_index = files[i]
    if os.path.isabs(name):
        return name
    d = dir_index if v5 else dir_index - 1
    listed = 0 <= d < len(dirs)
    dn = dirs[d] if listed else ""
    if not (listed and v5 and d == 0):  # DWARF 5's directory 0 is the compilation directory itself
        dn = os.path.join(comp_dir, dn)  # (an absolute directory stays as it is)
    return os.path.join(dn, name) if dn else name


class _Reader:
    def __init__(self, sections: dict[str, bytes]):
        self.sec = sections
        self.info = sections[".debug_info"]
        self.abbrev_tables: dict[int, dict] = {}
        self.line_programs: dict[int, tuple] = {}

    def need(self, name: str) -> bytes:
        if name not in self.sec:
            raise Unsupported(f"no {name}")
        return self.sec[name]

    def read(self) -> tuple[list, list]:
        rows: list = []
        inlined: list = []
        info, pos = self.info, 0
        while pos < len(info):
            unit_length, version = U32.unpack_from(info, pos)[0], U16.unpack_from(info, pos + 4)[0]
            if unit_length >= 0xFFFFFFF0:
                raise Unsupported("64-bit DWARF")
            end = pos + 4 + unit_length
            if end > len(info):
                raise Unsupported(f"unit at {pos:#x} runs past .debug_info")
            if version == 5:
                unit_type, address_size, abbrev_at = info[pos + 6], info[pos + 7], U32.unpack_from(info, pos + 8)[0]
                if unit_type not in (1, 3):  # DW_UT_compile, DW_UT_partial
                    raise Unsupported(f"unit type {unit_type}")
                die_at = pos + 12
            elif version == 4:
                abbrev_at, address_size, die_at = U32.unpack_from(info, pos + 6)[0], info[pos + 10], pos + 11
            else:
                raise Unsupported(f"DWARF version {version}")
            if address_size != 8:
                raise Unsupported(f"address size {address_size}")
            _Unit(self, pos, version, end, self.abbrevs(abbrev_at)).read(die_at, rows, inlined)
            pos = end
        return rows, inlined

    def abbrevs(self, at: int) -> dict:
        """code -> (tag, has children, [(attribute, form, implicit constant)]) of the table at `at`."""
        if at in self.abbrev_tables:
            return self.abbrev_tables[at]
        d = self.need(".debug_abbrev")
        if at >= len(d):
            raise Unsupported(f"abbreviation table at {at:#x} past .debug_abbrev")
        table: dict = {}
        pos = at
        while True:
            code, pos = _uleb(d, pos)
            if code == 0:
                break
            tag, pos = _uleb(d, pos)
            children = d[pos]
            pos += 1
            if children > 1 or code in table:
                raise Unsupported(f"abbreviation {code}: DW_CHILDREN {children} or declared twice")
            specs = []
            while True:
                name, pos = _uleb(d, pos)
                form, pos = _uleb(d, pos)
                const = 0
                if form == FORM_IMPLICIT_CONST:
                    const, pos = _sleb(d, pos)
                if name == 0 and form == 0:
                    break
                if form not in FIXED and form not in ULEB_FORMS and form not in BLOCK_FORMS:
                    if form not in (FORM_SDATA, FORM_STRING):
                        raise Unsupported(f"DW_FORM {form:#x}")
                specs.append((name, form, const))
            table[code] = (tag, children == 1, specs)
        self.abbrev_tables[at] = table
        return table

    def string(self, section: str, at: int) -> bytes | None:
        """The NUL-terminated string at `at`; None past the end or unterminated (pyelftools' answer)."""
        d = self.need(section)
        end = d.find(b"\0", at)
        return d[at:end] if at < len(d) and end >= 0 else None

    def line_program(self, at: int) -> tuple:
        """((DWARF 5?, [(file name, directory index)], [directory]), [(address, file, line, end of sequence)])
        of the line program at `at` in .debug_line; decoded once per offset, as pyelftools caches it."""
        if at not in self.line_programs:
            self.line_programs[at] = self._line_program(at)
        return self.line_programs[at]

    def _line_program(self, at: int) -> tuple:
        d = self.need(".debug_line")
        unit_length, version = U32.unpack_from(d, at)[0], U16.unpack_from(d, at + 4)[0]
        if unit_length >= 0xFFFFFFF0 or version not in (4, 5):
            raise Unsupported(f"line table at {at:#x}: version {version}, length {unit_length:#x}")
        end = at + 4 + unit_length
        pos = at + 6
        if version == 5:
            if d[pos] != 8 or d[pos + 1] != 0:
                raise Unsupported(f"line table at {at:#x}: address size {d[pos]}, selector size {d[pos + 1]}")
            pos += 2
        header_length = U32.unpack_from(d, pos)[0]
        program = pos + 4 + header_length
        min_length, max_ops, _, line_base, line_range, opcode_base = struct.unpack_from("<BBBbBB", d, pos + 4)
        pos += 10
        lengths = d[pos : pos + opcode_base - 1]
        if (
            max_ops != 1
            or not line_range
            or not 1 <= opcode_base <= 13
            or STANDARD_OPCODE_LENGTHS[: len(lengths)] != lengths
        ):
            raise Unsupported(f"line table at {at:#x}: unusual header")
        pos += opcode_base - 1
        if version == 5:
            dir_format, pos = self._entry_format(d, pos)
            dir_entries, pos = self._entries(d, pos, dir_format)
            file_format, pos = self._entry_format(d, pos)
            file_entries, pos = self._entries(d, pos, file_format)
            if not dir_entries or not file_entries or LNCT_DIRECTORY_INDEX not in dict(file_format):
                raise Unsupported(f"line table at {at:#x}: no directories, files or directory indices")
            dirs = [e[LNCT_PATH].decode("utf-8", "replace") for e in dir_entries]
            files = [(e[LNCT_PATH].decode("utf-8", "replace"), e[LNCT_DIRECTORY_INDEX]) for e in file_entries]
        else:
            dirs = []
            while d[pos]:
                name, pos = _cstring(d, pos)
                dirs.append(name.decode("utf-8", "replace"))
            pos += 1
            files = []
            while d[pos]:
                name, pos = _cstring(d, pos)
                dir_index, pos = _uleb(d, pos)
                pos = _uleb(d, _uleb(d, pos)[1])[1]  # modification time, length
                files.append((name.decode("utf-8", "replace"), dir_index))
            pos += 1
        if pos != program or end > len(d):
            raise Unsupported(f"line table at {at:#x}: header ends at {pos:#x}, program at {program:#x}")
        return (version >= 5, files, dirs), self._states(
            d, program, end, min_length, line_base, line_range, opcode_base
        )

    def _entry_format(self, d: bytes, pos: int) -> tuple[list, int]:
        count = d[pos]
        pos += 1
        fmt = []
        for _ in range(count):
            content, pos = _uleb(d, pos)
            form, pos = _uleb(d, pos)
            fmt.append((content, form))
        kinds = [c for c, _ in fmt]
        if any(c not in LNCT_KNOWN for c in kinds) or len(set(kinds)) != len(kinds) or LNCT_PATH not in kinds:
            raise Unsupported(f"line table entry format {fmt}")
        return fmt, pos

    def _entries(self, d: bytes, pos: int, fmt: list) -> tuple[list, int]:
        count, pos = _uleb(d, pos)
        entries = []
        for _ in range(count):
            entry: dict[int, bytes | int | None] = {}
            for content, form in fmt:
                value: bytes | int | None
                if form == FORM_STRING:
                    value, pos = _cstring(d, pos)
                elif form in (FORM_LINE_STRP, FORM_STRP):
                    at = U32.unpack_from(d, pos)[0]
                    pos += 4
                    value = self.string(".debug_line_str" if form == FORM_LINE_STRP else ".debug_str", at)
                    if value is None and content == LNCT_PATH:
                        raise Unsupported(f"line table path at {at:#x} outside its string section")
                elif form == FORM_UDATA:
                    value, pos = _uleb(d, pos)
                elif form in (FORM_DATA1, FORM_DATA2, FORM_DATA4, FORM_DATA8):
                    size = FIXED[form]
                    value = int.from_bytes(d[pos : pos + size], "little")
                    pos += size
                elif form in (FORM_DATA16, FORM_BLOCK):  # an MD5, a blob: skipped
                    size, pos = (16, pos) if form == FORM_DATA16 else _uleb(d, pos)
                    value, pos = None, pos + size
                else:
                    raise Unsupported(f"line table form {form:#x}")
                if content == LNCT_PATH and not isinstance(value, bytes):
                    raise Unsupported(f"line table path in form {form:#x}")
                if content == LNCT_DIRECTORY_INDEX and not isinstance(value, int):
                    raise Unsupported(f"line table directory index in form {form:#x}")
                entry[content] = value
            entries.append(entry)
        return entries, pos

    @staticmethod
    def _states(d, pos, end, min_length, line_base, line_range, opcode_base) -> list:
        """The rows the line program appends: (address, file, line, end of sequence)."""
        states = []
        address, file, line = 0, 1, 1
        const_add = (255 - opcode_base) // line_range * min_length
        while pos < end:
            op = d[pos]
            pos += 1
            if op >= opcode_base:
                adjusted = op - opcode_base
                address += adjusted // line_range * min_length
                line += line_base + adjusted % line_range
                states.append((address, file, line, False))
            elif op == 0:  # extended: length, sub-opcode, operands
                length, pos = _uleb(d, pos)
                start, sub = pos, d[pos]
                if sub == 1:  # DW_LNE_end_sequence
                    states.append((address, file, line, True))
                    address, file, line = 0, 1, 1
                    pos += 1
                elif sub == 2:  # DW_LNE_set_address
                    address = U64.unpack_from(d, pos + 1)[0]
                    pos += 9
                elif sub == 3:  # DW_LNE_define_file
                    raise Unsupported("DW_LNE_define_file")
                elif sub == 4:  # DW_LNE_set_discriminator
                    pos = _uleb(d, pos + 1)[1]
                else:
                    pos += length
                if not length or pos != start + length:
                    raise Unsupported(f"extended opcode {sub} of length {length}")
            elif op == 1:  # DW_LNS_copy
                states.append((address, file, line, False))
            elif op == 2:  # DW_LNS_advance_pc
                n, pos = _uleb(d, pos)
                address += n * min_length
            elif op == 3:  # DW_LNS_advance_line
                n, pos = _sleb(d, pos)
                line += n
            elif op == 4:  # DW_LNS_set_file
                file, pos = _uleb(d, pos)
            elif op in (5, 12):  # DW_LNS_set_column, DW_LNS_set_isa
                pos = _uleb(d, pos)[1]
            elif op == 8:  # DW_LNS_const_add_pc
                address += const_add
            elif op == 9:  # DW_LNS_fixed_advance_pc
                address += U16.unpack_from(d, pos)[0]
                pos += 2
            # 6, 7, 10, 11: negate_stmt, basic_block, prologue_end, epilogue_begin change nothing read here
        if pos != end:
            raise Unsupported(f"line program ends at {pos:#x}, not {end:#x}")
        return states


class _Unit:
    """One compile unit of .debug_info: its DIEs read in order, values resolved as pyelftools resolves them."""

    def __init__(self, reader: _Reader, offset: int, version: int, end: int, abbrevs: dict):
        self.r, self.offset, self.version, self.end, self.abbrevs = reader, offset, version, end, abbrevs
        self.top: dict | None = None  # the top DIE's values, once read

    def die(self, pos: int) -> tuple:
        """(abbreviation or None for a null entry, {attribute: (form, raw value)}, position after it)."""
        d = self.r.info
        code, pos = _uleb(d, pos)
        if code == 0:
            return None, {}, pos
        decl = self.abbrevs.get(code)
        if decl is None:
            raise Unsupported(f"DIE at {pos:#x}: abbreviation {code} not declared")
        values = {}
        indexed = []
        for name, form, const in decl[2]:
            size = FIXED.get(form)
            if size is not None:
                raw = const if form == FORM_IMPLICIT_CONST else int.from_bytes(d[pos : pos + size], "little")
                pos += size
                if form in (FORM_STRP, FORM_LINE_STRP) or form in STRX_FORMS or form in ADDRX_FORMS:
                    indexed.append((form, raw))
            elif form in ULEB_FORMS:
                raw, pos = _uleb(d, pos)
                if form in (FORM_STRX, FORM_ADDRX, FORM_LOCLISTX, FORM_RNGLISTX):
                    indexed.append((form, raw))
            elif form == FORM_SDATA:
                raw, pos = _sleb(d, pos)
            elif form == FORM_STRING:
                raw, pos = _cstring(d, pos)
            else:
                n = BLOCK_FORMS[form]
                if n:
                    length = int.from_bytes(d[pos : pos + n], "little")
                    pos += n
                else:
                    length, pos = _uleb(d, pos)
                raw, pos = None, pos + length
            values[name] = (form, raw)
        if pos > self.end:
            raise Unsupported(f"DIE runs past its unit's end {self.end:#x}")
        if self.top is None:
            self.top = values
        for form, raw in indexed:  # what pyelftools resolves while it reads a DIE, and raises on
            if form in STRING_FORMS:
                self.text(form, raw)
            else:
                self.indexed(form, raw)
        return decl, values, pos

    def base(self, attribute: int) -> int:
        form, raw = (self.top or {}).get(attribute, (None, None))
        if form != FORM_SEC_OFFSET:
            raise Unsupported(f"unit at {self.offset:#x}: base attribute {attribute:#x} in form {form}")
        return raw

    def table_entry(self, section: str, base: int, index: int, size: int) -> int:
        d = self.r.need(section)
        at = base + index * size
        if at + size > len(d):
            raise Unsupported(f"{section} entry {index} past the end")
        return int.from_bytes(d[at : at + size], "little")

    def text(self, form: int, raw: int) -> bytes | None:
        """The string a DW_FORM_strp, line_strp or strx* value names."""
        if form == FORM_STRP:
            return self.r.string(".debug_str", raw)
        if form == FORM_LINE_STRP:
            return self.r.string(".debug_line_str", raw)
        at = self.table_entry(".debug_str_offsets", self.base(AT_STR_OFFSETS_BASE), raw, 4)
        return self.r.string(".debug_str", at)

    def indexed(self, form: int, raw: int) -> int:
        """The address a DW_FORM_addrx* value names, or the section offset of a loclistx/rnglistx one."""
        if form in ADDRX_FORMS:
            return self.table_entry(".debug_addr", self.base(AT_ADDR_BASE), raw, 8)
        attribute, section = (
            (AT_LOCLISTS_BASE, ".debug_loclists") if form == FORM_LOCLISTX else (AT_RNGLISTS_BASE, ".debug_rnglists")
        )
        base = self.base(attribute)
        return base + self.table_entry(section, base, raw, 4)

    def address(self, value: tuple) -> int:
        form, raw = value
        if form != FORM_ADDR and form not in ADDRX_FORMS:
            raise Unsupported(f"address in form {form:#x}")
        return raw if form == FORM_ADDR else self.indexed(form, raw)

    @staticmethod
    def number(value: tuple) -> int:
        form, raw = value
        if form not in INT_FORMS:
            raise Unsupported(f"number in form {form:#x}")
        return raw

    def read(self, pos: int, rows: list, inlined: list):
        decl, top, pos = self.die(pos)
        if decl is None or AT_STMT_LIST not in top:
            return  # no line table: pyelftools' reading skips the unit
        form, stmt_list = top[AT_STMT_LIST]
        if form != FORM_SEC_OFFSET:
            raise Unsupported(f"DW_AT_stmt_list in form {form:#x}")
        comp_dir = ""
        if AT_COMP_DIR in top:
            form, raw = top[AT_COMP_DIR]
            if form not in STRING_FORMS:
                raise Unsupported(f"DW_AT_comp_dir in form {form:#x}")
            name = raw if form == FORM_STRING else self.text(form, raw)
            comp_dir = name.decode("utf-8", "replace") if name is not None else ""
        table, states = self.r.line_program(stmt_list)
        paths: dict[int, str] = {}

        def path(index: int) -> str:
            if index not in paths:
                paths[index] = file_path(table, index, comp_dir)
            return paths[index]

        seq: list = []
        for address, file, line, end_sequence in states:
            if end_sequence:
                for (a, loc), nxt in zip(seq, [*seq[1:], (address, None)]):
                    rows.append((a, nxt[0], loc))
                seq = []
                continue
            loc = f"{path(file)}:{line if line else '?'}"
            if seq and seq[-1][0] == address:
                seq[-1] = (address, loc)
            else:
                seq.append((address, loc))
        if decl[1]:
            self.walk(pos, path, inlined)

    def walk(self, pos: int, path, inlined: list):
        """Every DIE under the unit's top one, in order; each inlined subroutine's ranges at its depth."""
        stack = [(0, None)]  # per open DIE: depth of inlined subroutines under it, where DW_AT_sibling says it ends
        while stack:
            decl, values, pos = self.die(pos)
            if decl is None:
                _, sibling = stack.pop()
                if sibling is not None and sibling != pos:
                    raise Unsupported(f"DW_AT_sibling {sibling:#x} where the children end at {pos:#x}")
                continue
            depth = stack[-1][0]
            if decl[0] == TAG_INLINED_SUBROUTINE:
                line = self.number(values[AT_CALL_LINE]) if AT_CALL_LINE in values else 0
                file = path(self.number(values[AT_CALL_FILE])) if AT_CALL_FILE in values else "?"
                site = f"{file}:{line}" if line else ""
                for lo, hi in self.ranges(values):
                    inlined.append((lo, hi, depth, site))
                depth += 1
            if decl[1]:
                sibling = None
                if AT_SIBLING in values:
                    form, raw = values[AT_SIBLING]
                    if form not in REF_FORMS:
                        raise Unsupported(f"DW_AT_sibling in form {form:#x}")
                    sibling = self.offset + raw
                stack.append((depth, sibling))

    def ranges(self, values: dict) -> list:
        """[(low, high)] of a DIE: DW_AT_low_pc with DW_AT_high_pc (an address, or an offset from low),
        else its DW_AT_ranges list."""
        if AT_LOW_PC in values and AT_HIGH_PC in values:
            lo = self.address(values[AT_LOW_PC])
            form, raw = values[AT_HIGH_PC]
            return [(lo, raw if form == FORM_ADDR else lo + self.number((form, raw)))]
        if AT_RANGES not in values:
            return []
        form, raw = values[AT_RANGES]
        if form not in (FORM_SEC_OFFSET, FORM_RNGLISTX):
            raise Unsupported(f"DW_AT_ranges in form {form:#x}")
        at = raw if form == FORM_SEC_OFFSET else self.indexed(form, raw)
        top = self.top or {}
        base = self.address(top[AT_LOW_PC]) if AT_LOW_PC in top else 0
        has_v4, has_v5 = ".debug_ranges" in self.r.sec, ".debug_rnglists" in self.r.sec
        if not has_v4 and not has_v5:
            return []
        if (has_v5 if self.version >= 5 else has_v4) is False:
            raise Unsupported(f"DWARF {self.version} range list without its section")
        if self.version >= 5:
            return self.rnglist(at, base)
        d = self.r.sec[".debug_ranges"]
        out: list[tuple[int, int]] = []
        while True:
            begin, end = struct.unpack_from("<QQ", d, at)
            at += 16
            if begin == 0 and end == 0:
                return out
            if begin == 0xFFFFFFFFFFFFFFFF:
                base = end
            else:
                out.append((base + begin, base + end))

    def rnglist(self, at: int, base: int) -> list:
        """A DWARF 5 range list (DW_RLE_* entries up to DW_RLE_end_of_list) from .debug_rnglists."""
        d = self.r.sec[".debug_rnglists"]
        out: list[tuple[int, int]] = []

        def addr(index: int) -> int:
            return self.table_entry(".debug_addr", self.base(AT_ADDR_BASE), index, 8)

        while True:
            kind = d[at]
            at += 1
            if kind == 0:  # end_of_list
                return out
            if kind == 1:  # base_addressx
                i, at = _uleb(d, at)
                base = addr(i)
            elif kind in (2, 3):  # startx_endx, startx_length
                i, at = _uleb(d, at)
                j, at = _uleb(d, at)
                out.append((addr(i), addr(j) if kind == 2 else addr(i) + j))
            elif kind == 4:  # offset_pair
                lo, at = _uleb(d, at)
                hi, at = _uleb(d, at)
                out.append((base + lo, base + hi))
            elif kind == 5:  # base_address
                base = U64.unpack_from(d, at)[0]
                at += 8
            elif kind == 6:  # start_end
                out.append(struct.unpack_from("<QQ", d, at))
                at += 16
            elif kind == 7:  # start_length
                lo = U64.unpack_from(d, at)[0]
                n, at = _uleb(d, at + 8)
                out.append((lo, lo + n))
            else:
                raise Unsupported(f"DW_RLE {kind}")
