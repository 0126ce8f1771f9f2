"""DWARF .debug_line + inlined subroutines: vaddr -> 'file:line', or the inline chain.

The chain follows rocprofv3's code.json `Source` column: the instruction's own location first, then
each inlined call site outward, joined by " -> " ("./k.cl:2 -> ./k.cl:5 -> ./k.cl:10 -> ./k.cl:7",
the order llvm-symbolizer --inlining prints frames). Paths are the compiler's directory + file name,
unnormalised; an own location on line 0 prints as "path:?", call sites on line 0 are left out.
DWARF 4 file indices are 1-based, DWARF 5 ones 0-based.
attdec.isa.dwarf_tables reads the sections; a file it does not read as pyelftools does (it says so, never
guesses) is read with pyelftools here, the way it always was.
"""

from __future__ import annotations

import bisect
import io

from attdec.isa.dwarf_tables import file_path, read_tables


class LineIndex:
    """Sorted line rows and inlined-subroutine ranges of one code object, with each stretch of addresses
    that the same inlined ranges cover mapped to its chain of call sites, so a lookup is two bisections."""

    def __init__(self):
        self.starts: list[int] = []  # row start address
        self.rows: list[tuple] = []  # (end of validity, "file:line" or "")
        self.bounds: list[int] = []  # every inlined range's low and high, sorted
        self.sites: list[str] = []  # from bounds[k] to bounds[k + 1]: the call sites, innermost first

    @classmethod
    def build(cls, elf_bytes: bytes, where: str = "") -> LineIndex:
        if not elf_bytes:
            return cls()
        try:
            tables = read_tables(elf_bytes)
        except Exception:  # Unsupported (anything else would be a bug here): pyelftools decides
            tables = None
        try:
            return cls._of(*(_tables_by_pyelftools(elf_bytes) if tables is None else tables))
        except Exception:  # pyelftools' answer to garbage: no lines
            return cls()

    @classmethod
    def _of(cls, rows: list, inlined: list) -> LineIndex:
        """The index of line rows (start, end, loc) and inlined ranges (low, high, depth, call site)."""
        idx = cls()
        rows.sort()
        idx.starts = [r[0] for r in rows]
        idx.rows = [(r[1], r[2]) for r in rows]
        inlined.sort(key=lambda t: (t[2], t[0]))  # outermost first; the chain lists them innermost first
        idx.bounds = sorted({a for lo, hi, _, site in inlined if site and lo < hi for a in (lo, hi)})
        covering: list[list[str]] = [[] for _ in idx.bounds]
        for lo, hi, _, site in inlined:
            if site and lo < hi:
                for k in range(bisect.bisect_left(idx.bounds, lo), bisect.bisect_left(idx.bounds, hi)):
                    covering[k].append(site)
        idx.sites = [" -> ".join(reversed(c)) for c in covering]
        return idx

    def source_of(self, vaddr: int) -> str:
        i = bisect.bisect_right(self.starts, vaddr) - 1
        loc = ""
        if i >= 0 and vaddr < self.rows[i][0]:
            loc = self.rows[i][1]
        k = bisect.bisect_right(self.bounds, vaddr) - 1
        sites = self.sites[k] if k >= 0 else ""
        return f"{loc} -> {sites}" if loc and sites else loc or sites


def _tables_by_pyelftools(elf_bytes: bytes) -> tuple[list, list]:
    """(line rows, inlined ranges) as attdec.isa.dwarf_tables.read_tables gives them, read with pyelftools:
    for the files that reader leaves to it. Raises whatever pyelftools raises."""
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(elf_bytes))
    if not elf.has_dwarf_info():
        return [], []
    dwarf = elf.get_dwarf_info(relocate_dwarf_sections=elf["e_type"] != "ET_REL")
    rows: list = []
    inlined: list = []
    for cu in dwarf.iter_CUs():
        lp = dwarf.line_program_for_CU(cu)
        if lp is None:
            continue
        cd = cu.get_top_DIE().attributes.get("DW_AT_comp_dir")
        comp_dir = cd.value.decode("utf-8", "replace") if cd and isinstance(cd.value, bytes) else ""
        table = _file_table(lp)
        seq: list[tuple[int, str]] = []
        for entry in lp.get_entries():
            st = entry.state
            if st is None:
                continue
            if st.end_sequence:
                for (a, loc), nxt in zip(seq, [*seq[1:], (st.address, None)]):
                    rows.append((a, nxt[0], loc))
                seq = []
                continue
            loc = f"{file_path(table, st.file, comp_dir)}:{st.line if st.line else '?'}"
            if seq and seq[-1][0] == st.address:
                seq[-1] = (st.address, loc)
            else:
                seq.append((st.address, loc))
        _collect_inlined(dwarf, cu, table, comp_dir, inlined)
    return rows, inlined


def _collect_inlined(dwarf, cu, table, comp_dir, inlined):
    def ranges(die):
        at = die.attributes
        if "DW_AT_low_pc" in at and "DW_AT_high_pc" in at:
            lo = at["DW_AT_low_pc"].value
            hi = at["DW_AT_high_pc"]
            return [(lo, hi.value if hi.form == "DW_FORM_addr" else lo + hi.value)]
        if "DW_AT_ranges" in at:
            rl = dwarf.range_lists()
            if rl is None:
                return []
            base = cu.get_top_DIE().attributes.get("DW_AT_low_pc")
            base = base.value if base else 0
            out = []
            for r in rl.get_range_list_at_offset(at["DW_AT_ranges"].value, cu=cu):
                if hasattr(r, "begin_offset"):
                    out.append(
                        (base + r.begin_offset, base + r.end_offset)
                        if not getattr(r, "is_absolute", False)
                        else (r.begin_offset, r.end_offset)
                    )
                elif hasattr(r, "base_address"):
                    base = r.base_address
            return out
        return []

    def walk(die, depth):
        for child in die.iter_children():
            if child.tag == "DW_TAG_inlined_subroutine":
                at = child.attributes
                line = at["DW_AT_call_line"].value if "DW_AT_call_line" in at else 0
                file = file_path(table, at["DW_AT_call_file"].value, comp_dir) if "DW_AT_call_file" in at else "?"
                site = f"{file}:{line}" if line else ""
                for lo, hi in ranges(child):
                    inlined.append((lo, hi, depth, site))
                walk(child, depth + 1)
            else:
                walk(child, depth)

    walk(cu.get_top_DIE(), 0)


def _file_table(lp) -> tuple:
    """A pyelftools line program's file table as attdec.isa.dwarf_tables.file_path reads it: (DWARF 5?, (name,
    directory index) per file, directory names)."""

    def text(x) -> str:
        return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)

    # (an entry without a name or a directory index fails where it is used, not here, as it always did)
    files = [
        (text(fe.name) if hasattr(fe, "name") else None, getattr(fe, "dir_index", None)) for fe in lp["file_entry"]
    ]
    return lp.header["version"] >= 5, files, [text(d) for d in lp["include_directory"]]
