"""AMDGPU HSA code objects: target, .text, symbols, kernels, metadata note, kernel descriptors, DWARF lines.

Reads normal ELF code objects with attdec.isa.elf (DWARF with attdec.isa.dwarf, when a line is asked for),
and tinygrad's hand-written "minimal" containers (no e_machine, sometimes a zeroed e_ident; only section
headers) with a small section-header parser.
Facts and quirks: shared/docs/code-object.md and docs/isa.md.
"""

from __future__ import annotations

import os
import struct
from typing import TYPE_CHECKING

from attdec.errors import ArchError, FormatError
from attdec.isa.elf import SHN_ABS, SHN_UNDEF, SHT_NOBITS, SHT_NOTE, STT_FUNC, STT_OBJECT, SYMBOL_TABLES, Elf
from attdec.model import KernelResources
from attdec.model.record import Record, field
from attdec.model.target import Target, from_mach, target

if TYPE_CHECKING:
    from attdec.isa.dwarf import LineIndex

EM_AMDGPU = 224
NT_AMDGPU_METADATA = 32


class Symbol(Record):
    name: str
    vaddr: int
    size: int
    kind: str  # "func", "object", "other"


class Kernel(Record):
    """A kernel: its name and where its code starts (ELF vaddr), its descriptor and its metadata map
    (`CodeObject.resources` reads both)."""

    name: str
    entry: int
    size: int = 0  # code bytes (FUNC symbol size), 0 if unknown
    kd: int | None = None  # kernel descriptor vaddr
    descriptor: bytes | None = None  # the 64 kernel-descriptor bytes
    metadata: dict = field(default_factory=dict)  # this kernel's map in the NT_AMDGPU_METADATA note


class CodeObject(Record):
    arch: str  # "gfx1100"...; "" when the file does not say (minimal containers)
    text: bytes
    text_vaddr: int
    symbols: list = field(default_factory=list)
    kernels: list = field(default_factory=list)
    metadata: dict = field(default_factory=dict)  # the NT_AMDGPU_METADATA map, {} if none
    container: str = "elf"  # "elf" or "tinygrad-minimal"
    e_flags: int = 0
    abi_version: int = 0  # EI_ABIVERSION: 2 = code object V4, 3 = V5, 4 = V6
    where: str = ""
    target: Target | None = None  # the target `arch` names; None when it names none attdec knows
    _lines: LineIndex | None = None  # lazily built DWARF line/inline index
    _elf_bytes: bytes = b""

    @property
    def text_end(self) -> int:
        return self.text_vaddr + len(self.text)

    def kernel(self, name: str) -> Kernel | None:
        return next((k for k in self.kernels if k.name == name), None)

    def resources(self, kernel: Kernel, tgt: Target | None = None) -> KernelResources:
        """What `kernel` asks of a compute unit; `tgt` (default: this object's) tells how its descriptor
        reads, which matters for minimal containers that do not name their target."""
        from attdec.isa.resources import kernel_resources

        return kernel_resources(
            kernel.name, kernel.metadata, kernel.descriptor, tgt or self.target, self.e_flags, self.abi_version
        )

    def symbol_at(self, vaddr: int) -> Symbol | None:
        """The function symbol covering vaddr, if any."""
        for s in self.symbols:
            if s.kind == "func" and s.vaddr <= vaddr < s.vaddr + max(s.size, 1):
                return s
        return None

    def source_of(self, vaddr: int) -> str:
        """'file:line' of the instruction at vaddr; when inlined 'own:line -> call site -> ... outer call
        site' (rocprofv3's order); '' without debug info."""
        if self._lines is None:
            from attdec.isa.dwarf import LineIndex

            self._lines = LineIndex.build(self._elf_bytes, self.where)
        return self._lines.source_of(vaddr)


def load_code_object(data: bytes, where: str = "", arch: str | None = None) -> CodeObject:
    """Parse a code object. `arch` overrides / supplies the target (needed for minimal containers)."""
    where = where or "<code object>"
    if len(data) < 64:
        raise FormatError(f"too short for a code object ({len(data)} bytes)", where)
    e_machine = struct.unpack_from("<H", data, 18)[0]
    if data[:4] == b"\x7fELF" and data[4] == 2 and e_machine == EM_AMDGPU:
        co = _load_elf(data, where)
    else:
        co = _load_minimal(data, where)
    if arch:
        co.arch = arch
        try:
            co.target = target(arch)
        except ArchError:  # a name attdec does not know: the code object is still read
            co.target = None
    return co


# ---------------------------------------------------------------------------------------------
def _load_elf(data: bytes, where: str) -> CodeObject:
    elf = Elf(data, where)
    text = elf.section(".text")
    if text is None:
        raise FormatError("ELF has no .text section", where)
    mach = from_mach(elf.e_flags & 0xFF)
    co = CodeObject(
        mach.name if mach else "",
        elf.contents(text),
        text.addr,
        target=mach,
        e_flags=elf.e_flags,
        abi_version=data[8],
        where=where,
        _elf_bytes=data,
    )
    sections = [(s.addr, s.size, s.offset, s.type) for s in elf.sections if s.addr and s.type != SHT_NOBITS]
    seen = set()
    kinds = {STT_FUNC: "func", STT_OBJECT: "object"}
    for tabname in (".dynsym", ".symtab"):
        tab = elf.section(tabname)
        if tab is None or tab.type not in SYMBOL_TABLES:  # absent, or its type damaged
            continue
        for s in elf.symbols(tab):
            if not s.name or s.shndx in (SHN_UNDEF, SHN_ABS) or (s.name, s.value) in seen:
                continue
            seen.add((s.name, s.value))
            co.symbols.append(Symbol(s.name, s.value, s.size, kinds.get(s.type, "other")))
    co.symbols.sort(key=lambda s: (s.vaddr, s.name))
    note = next(
        (n for sec in elf.sections if sec.type == SHT_NOTE for n in elf.notes(sec) if _is_metadata(n)),
        None,
    )
    co.metadata = _metadata(note.desc, where) if note else {}
    co.kernels = _kernels(co, data, sections)
    return co


def _read_vaddr(data: bytes, sections, vaddr: int, size: int) -> bytes | None:
    for addr, sz, off, _ in sections:
        if addr <= vaddr and vaddr + size <= addr + sz:
            return data[off + vaddr - addr : off + vaddr - addr + size]
    return None


def _is_metadata(note) -> bool:
    return note.name == "AMDGPU" and note.type == NT_AMDGPU_METADATA


def _metadata(desc: bytes, where: str) -> dict:
    """The NT_AMDGPU_METADATA note's map (msgpack)."""
    import msgpack

    try:  # the first object: Mesa pads the note's msgpack to 4 bytes and counts the padding
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        unpacker.feed(desc)
        meta = unpacker.unpack()
    except Exception as e:
        raise FormatError(f"unreadable NT_AMDGPU_METADATA note: {e}", where) from None
    return meta if isinstance(meta, dict) else {}


def _kernels(co: CodeObject, data: bytes, sections) -> list:
    meta_by_symbol = {}
    listed = co.metadata.get("amdhsa.kernels")
    for k in listed if isinstance(listed, list) else []:  # a damaged note may hold anything
        if isinstance(k, dict):
            sym = k.get(".symbol")
            meta_by_symbol[sym if isinstance(sym, str) and sym else str(k.get(".name", "")) + ".kd"] = k
    funcs = {s.name: s for s in co.symbols if s.kind == "func"}
    out = []
    for s in co.symbols:
        if s.kind != "object" or not s.name.endswith(".kd"):
            continue
        name = s.name[:-3]
        kd = _read_vaddr(data, sections, s.vaddr, 64)
        if kd and len(kd) < 64:
            raise FormatError(f"bad ELF: kernel descriptor {s.name} lies past the end of the file", co.where)
        entry = s.vaddr + struct.unpack_from("<q", kd, 16)[0] if kd else None
        fn = funcs.get(name)
        if entry is None and fn is not None:
            entry = fn.vaddr
        if entry is None:
            continue
        m = meta_by_symbol.get(s.name, {})
        shown = m.get(".name")
        out.append(Kernel(shown if isinstance(shown, str) else name, entry, fn.size if fn else 0, s.vaddr, kd, m))
    if not out:  # no descriptors: every function symbol is an entry point
        out = [Kernel(f.name, f.vaddr, f.size) for f in funcs.values()]
    out.sort(key=lambda k: k.entry)
    return out


# ---------------------------------------------------------------------------------------------
def _load_minimal(data: bytes, where: str) -> CodeObject:
    """tinygrad's minimal container: ELF64 LE section headers only (e_ident/e_machine may be zero)."""
    try:
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        shentsize = shentsize or 64
        if not (0 < shnum < 256) or shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
            raise FormatError("not an ELF code object (no ELF magic and no readable section headers)", where)
        secs = []
        for i in range(shnum):
            name, typ, _flags, addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
            secs.append((name, typ, addr, off, size))
        _, _, _, stroff, strsize = secs[shstrndx]
        strtab = data[stroff : stroff + strsize]

        def nm(i):
            end = strtab.find(b"\0", i)
            return strtab[i : end if end >= 0 else None].decode("latin-1")

        named = {nm(s[0]): s for s in secs}
        t = named.get(".text")
        if t is None or t[3] + t[4] > len(data):
            raise FormatError("minimal container without a readable .text section", where)
    except struct.error:
        raise FormatError("not an ELF code object (truncated header)", where) from None
    text = data[t[3] : t[3] + t[4]]
    stem = os.path.splitext(os.path.basename(where))[0] if where and not where.startswith("<") else "kernel"
    co = CodeObject("", text, t[2], container="tinygrad-minimal", where=where)
    co.symbols = [Symbol(stem, t[2], len(text), "func")]
    # The KD in .rodata points (-len(.text)) at the code; the code starts at .text (docs/isa.md).
    ro = named.get(".rodata")
    if ro is not None and ro[4] >= 64 and ro[3] + 64 <= len(data):
        co.kernels = [Kernel(stem, t[2], len(text), ro[2], data[ro[3] : ro[3] + 64])]
    else:
        co.kernels = [Kernel(stem, t[2], len(text))]
    return co
