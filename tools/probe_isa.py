#!/usr/bin/env python3
"""Probe LLVM's disassembler for the operand signature of every opcode (dev tool; needs llvm-objdump).

For each target table in attdec/isa/tables and each opcode, start from the register-only template
that enumerate_opcodes.py used (../shared/tools/isa_oracle), then
  * set each operand field alone to a distinctive register number: if LLVM still decodes the word,
    the opcode uses the field (LLVM rejects words whose unused operand fields are not zero);
  * set all used fields at once and record LLVM's operand text with each field's register replaced
    by a placeholder `{field:width:suffix}` (width in registers, suffix '.l' for true16 halves, or
    an LLVM comment it appended).
Also flips each modifier bit alone: a bit LLVM rejects must keep the template's value ("fixed"); a bit
that leaves the text unchanged is not printed for that opcode ("ignored").
Writes attdec/isa/tables/<table>.sig.json.gz (gzipped JSON): {"fields": {encoding: {field: [bit, width]}},
"ops": {encoding: {op: [fixed [[bit, width, value]...], signature, ignored [[bit, width, value]...]]}}}.
The result is a table of facts about the ISA (which fields an opcode reads, operand widths), like the
AMD XML's operand lists; the renderer fills in the real field values and the encoding's modifier bits.

    python3 tools/probe_isa.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLES = ROOT / "attdec/isa/tables"
SLOT = 32  # bytes per probe: the words, then s_nop padding so a stray dword cannot swallow the next probe
NOP = {"gfx9": 0xBF800000, "gfx11": 0xBF800000, "gfx12": 0xBF800000}

V = 256  # 9-bit source fields: VGPR n is 256 + n

# (field, bit offset in the instruction, width, probe value).  Probe values are distinct, aligned for
# register tuples, and map back to the field through the register number LLVM prints.
FIELDS = {
    "common": {
        "SOP1": [("sdst", 16, 7, 4), ("ssrc0", 0, 8, 8)],
        "SOP2": [("sdst", 16, 7, 4), ("ssrc0", 0, 8, 8), ("ssrc1", 8, 8, 12)],
        "SOPC": [("ssrc0", 0, 8, 8), ("ssrc1", 8, 8, 12)],
        "SOPK": [("sdst", 16, 7, 4)],
        "VOP1": [("vdst", 17, 8, 16), ("src0", 0, 9, V + 32)],
        "VOP2": [("vdst", 17, 8, 16), ("src0", 0, 9, V + 32), ("vsrc1", 9, 8, 48)],
        "VOPC": [("src0", 0, 9, V + 32), ("vsrc1", 9, 8, 48)],
        "VOP3": [("vdst", 0, 8, 16), ("src0", 32, 9, V + 32), ("src1", 41, 9, V + 48), ("src2", 50, 9, V + 64)],
        "VOP3P": [("vdst", 0, 8, 16), ("src0", 32, 9, V + 32), ("src1", 41, 9, V + 48), ("src2", 50, 9, V + 64)],
        "VINTERP": [("vdst", 0, 8, 16), ("src0", 32, 9, V + 32), ("src1", 41, 9, V + 48), ("src2", 50, 9, V + 64)],
        "LDSDIR": [("vdst", 0, 8, 16)],
        "VDSDIR": [("vdst", 0, 8, 16)],
        "DS": [("vdst", 56, 8, 16), ("addr", 32, 8, 32), ("data0", 40, 8, 48), ("data1", 48, 8, 64)],
        "FLAT": [("vdst", 56, 8, 16), ("addr", 32, 8, 32), ("data", 40, 8, 48), ("saddr", 48, 7, 4)],
        "SCRATCH": [("vdst", 56, 8, 16), ("addr", 32, 8, 32), ("data", 40, 8, 48), ("saddr", 48, 7, 4)],
        "GLOBAL": [("vdst", 56, 8, 16), ("addr", 32, 8, 32), ("data", 40, 8, 48), ("saddr", 48, 7, 4)],
        "MUBUF": [("vdata", 40, 8, 16), ("vaddr", 32, 8, 32), ("srsrc", 48, 5, 2), ("soffset", 56, 8, 12)],
        "MTBUF": [("vdata", 40, 8, 16), ("vaddr", 32, 8, 32), ("srsrc", 48, 5, 2), ("soffset", 56, 8, 12)],
        "SMEM": [("sdata", 6, 7, 20), ("sbase", 0, 6, 4)],
        "VFLAT": [("vdst", 32, 8, 16), ("vaddr", 64, 8, 32), ("vsrc", 55, 8, 48), ("saddr", 0, 7, 4)],
        "VSCRATCH": [("vdst", 32, 8, 16), ("vaddr", 64, 8, 32), ("vsrc", 55, 8, 48), ("saddr", 0, 7, 4)],
        "VGLOBAL": [("vdst", 32, 8, 16), ("vaddr", 64, 8, 32), ("vsrc", 55, 8, 48), ("saddr", 0, 7, 4)],
        "VBUFFER": [("vdata", 32, 8, 16), ("vaddr", 64, 8, 32), ("rsrc", 41, 9, 8), ("soffset", 0, 7, 12)],
    },
    "gfx9": {"SMEM": [("sdata", 6, 7, 20), ("sbase", 0, 6, 4)]},
}
# Modifier bits probed one at a time (bit offset, width, probe value): an opcode whose word LLVM rejects
# with the bit set must have it clear. Only feeds the "must equal the template" list, not the signature.
_VOP3_BITS = [(b, 1, 1) for b in [*list(range(8, 16)), 59, 60, 61, 62, 63]]
MODBITS = {
    "gfx9": {
        "SOPP": [(0, 16, 0x10)],
        "VOP3": _VOP3_BITS,
        "DS": [(0, 8, 0x10), (8, 8, 0x10), (16, 1, 1)],
        "FLAT": [(0, 12, 0x10), (13, 1, 1), (16, 1, 1), (17, 1, 1), (25, 1, 1)],
        "GLOBAL": [(0, 12, 0x10), (13, 1, 1), (16, 1, 1), (17, 1, 1), (25, 1, 1)],
        "SCRATCH": [(0, 12, 0x10), (13, 1, 1), (16, 1, 1), (17, 1, 1), (25, 1, 1)],
        "SMEM": [(14, 1, 1), (15, 1, 1), (16, 1, 1), (17, 1, 1)],
        "MUBUF": [(0, 12, 0x10)] + [(b, 1, 1) for b in range(12, 18)] + [(25, 1, 1)],
    },
    "gfx11": {
        "SOPP": [(0, 16, 0x10)],
        "VOP3": _VOP3_BITS,
        "VOP3P": _VOP3_BITS,
        "VINTERP": _VOP3_BITS,
        "DS": [(0, 8, 0x10), (8, 8, 0x10), (17, 1, 1)],
        "FLAT": [(0, 12, 0x10), (13, 1, 1), (14, 1, 1), (15, 1, 1), (55, 1, 1)],
        "GLOBAL": [(0, 12, 0x10), (13, 1, 1), (14, 1, 1), (15, 1, 1), (55, 1, 1)],
        "SCRATCH": [(0, 12, 0x10), (13, 1, 1), (14, 1, 1), (15, 1, 1), (55, 1, 1)],
        "SMEM": [(13, 1, 1), (14, 1, 1), (32, 21, 0x10)],
        "MUBUF": [(0, 12, 0x10)] + [(b, 1, 1) for b in range(12, 16)] + [(53, 1, 1), (54, 1, 1)],
    },
    "gfx12": {
        "SOPP": [(0, 16, 0x10)],
        "VOP3": _VOP3_BITS,
        "VOP3P": _VOP3_BITS,
        "VINTERP": _VOP3_BITS,
        "DS": [(0, 8, 0x10), (8, 8, 0x10)],
        "VFLAT": [(72, 24, 0x10), (49, 1, 1), (50, 2, 3), (52, 3, 7)],
        "VGLOBAL": [(72, 24, 0x10), (49, 1, 1), (50, 2, 3), (52, 3, 7)],
        "VSCRATCH": [(72, 24, 0x10), (49, 1, 1), (50, 2, 3), (52, 3, 7)],
        "SMEM": [(21, 2, 3), (23, 2, 3), (32, 24, 0x10)],
        "VBUFFER": [(72, 12, 0x10), (50, 2, 3), (52, 3, 7), (62, 1, 1), (63, 1, 1)],
    },
}

# VOP3 opcodes with a scalar carry/condition destination in bits [14:8] (VOP3b / VOP3SD).
SDST_VOP3 = re.compile(
    r"^v_(add|sub|subrev)_co_(ci_)?u32|^v_(addc|subb|subbrev)_co_u32|^v_div_scale_"
    r"|^v_mad_(co_)?[iu]64_[iu]32"
)

REG = re.compile(r"\b([vsa])(?:\[(\d+):(\d+)\]|(\d+))(\.[lh])?(/\*[^*]*\*/)?")


def compact_note(comment: str) -> str:
    """LLVM's operand note in table form: "imm" for /*Invalid immediate*/, the register class name for
    /*Invalid register, operand has 'X' register class*/, else the comment itself."""
    if comment == "/*Invalid immediate*/":
        return "imm"
    m = re.fullmatch(r"/\*Invalid register, operand has '(\w+)' register class\*/", comment)
    return m.group(1) if m else comment


def fields_for(gen: str, enc: str):
    return FIELDS.get(gen, {}).get(enc) or FIELDS["common"].get(enc, [])


def set_field(words, bit, width, value):
    w = list(words)
    idx, lsb = divmod(bit, 32)
    mask = ((1 << width) - 1) << lsb
    w[idx] = (w[idx] & ~mask) | ((value << lsb) & mask)
    return w


def field_of_reg(kind, base, fields_used):
    """Which probed field a printed register came from."""
    for name, _bit, _width, val in fields_used:
        if (
            kind == "v"
            and val in (base, V + base)
            and (name not in ("sdst", "ssrc0", "ssrc1", "sbase", "saddr", "srsrc", "soffset", "rsrc"))
        ):
            return name
        if kind == "a" and val in (base, V + base):
            return name
        if kind == "s":
            if name == "sbase" and base == 2 * val:
                return name
            if name == "srsrc" and base == 4 * val:
                return name
            if name == "rsrc" and base == val:
                return name
            if val == base and name in (
                "sdst",
                "ssrc0",
                "ssrc1",
                "sdata",
                "saddr",
                "soffset",
                "src0",
                "src1",
                "src2",
                "vdst",
            ):
                return name
            if name in ("src0", "src1", "src2", "sdst") and val == base:
                return name
    return None


def signature(text, fields_used):
    ops = text.split(" ", 1)[1] if " " in text else ""

    def sub(m):
        kind, lo, hi, one, half, comment = m.groups()
        base = int(lo if lo is not None else one)
        width = int(hi) - int(lo) + 1 if lo is not None else 1
        name = field_of_reg(kind, base, fields_used)
        if name is None:
            return m.group(0)
        return f"{{{name}:{kind}:{width}:{half or ''}{comment or ''}}}"

    return REG.sub(sub, ops)


def run(objdump, mcpu, mach, words_list):
    sys.path.insert(0, str(SHARED / "tools/isa_oracle"))
    from enumerate_opcodes import make_elf

    code = bytearray()
    for ws in words_list:
        blob = b"".join(struct.pack("<I", w & 0xFFFFFFFF) for w in ws)
        code += blob + b"\0" * 4 + struct.pack("<I", 0xBF800000) * ((SLOT - len(blob)) // 4 - 1)
    fd, path = tempfile.mkstemp(suffix=".o")
    with os.fdopen(fd, "wb") as f:
        f.write(make_elf(bytes(code), mach))
    try:
        out = subprocess.run(
            [objdump, "-d", "-z", f"--mcpu={mcpu}", path], capture_output=True, text=True, check=True
        ).stdout
    finally:
        os.unlink(path)
    line = re.compile(
        r"^\s*(?P<text>.*?)\s*//\s*(?P<addr>[0-9A-Fa-f]+):\s*(?P<words>[0-9A-Fa-f]{8}(?:\s+[0-9A-Fa-f]{8})*)"
    )
    at = {}
    for ln in out.splitlines():
        m = line.match(ln)
        if m:
            at[int(m.group("addr"), 16)] = (" ".join(m.group("text").split()), 4 * len(m.group("words").split()))
    return [at.get(i * SLOT) for i in range(len(words_list))]  # None: LLVM never started an instruction there


def ok(hit, size):
    return hit is not None and not hit[0].startswith(".long") and hit[1] == size


def operand_notes(objdump, mcpu, mach, all_words, used):
    """Pass 4: what LLVM appends to a source operand holding a constant or an SGPR, and to an odd register
    (the tuple alignment note), by (encoding, opcode) and field."""
    cands, keys = [], []
    for (enc, op), ws in all_words.items():
        for f in used.get((enc, op), []):
            if f[0] in ("src0", "src1", "src2", "ssrc0", "ssrc1"):
                for label, val in (("const", 129), ("sgpr", 3)):
                    cands.append(set_field(ws, f[1], f[2], val))
                    keys.append((enc, op, f[0], label))
            if f[0] not in ("sdst", "ssrc0", "ssrc1", "sbase", "saddr", "srsrc", "soffset", "rsrc", "sdata"):
                cands.append(set_field(ws, f[1], f[2], f[3] + 1))  # an odd register: tuple alignment note
                keys.append((enc, op, f[0], "odd"))
    res = run(objdump, mcpu, mach, cands)
    notes = {}
    for (enc, op, name, label), hit in zip(keys, res):
        if hit is None or hit[0].startswith(".long"):
            continue
        if label == "odd":
            val = next(f[3] + 1 for f in used[(enc, op)] if f[0] == name) % 256
            pat = rf"\b[va]\[{val}:\d+\]"
        else:
            pat = r"(?<![\w.])1" if label == "const" else r"\bs(?:3|\[\d+:\d+\])"
        m = re.search(pat + r"(/\*[^*]*\*/)", hit[0])
        if m:
            notes.setdefault((enc, op), {}).setdefault(name, {})[label] = compact_note(m.group(1))
    return notes


def extensions(objdump, mcpu, mach, gen, chosen):
    """Pass 5: does LLVM accept the opcode with a DPP16 / SDWA / DPP8 extension dword? By (encoding, opcode)
    and extension: "ok" = decoded as the extended form, "plain" = the marker is ignored (base-size
    instruction), absent = rejected (.long)."""
    cands, keys = [], []
    ext_markers = (
        [
            ("dpp", 250, 0xFF00E400),
            ("dpp_negabs", 250, 0xFFF0E400),
            ("sdwa", 249, 0x06060600),
            ("sdwa_negabs", 249, 0x36360600),
            ("sdwa_sext", 249, 0x0E0E0600),
        ]
        if gen == "gfx9"
        else [("dpp", 250, 0xFF00E400), ("dpp_negabs", 250, 0xFFF0E400), ("dpp8", 233, 0x00FAC688)]
    )
    for (enc, op), (ws, _mn, size) in chosen.items():
        if enc in ("VOP1", "VOP2", "VOPC") or (enc in ("VOP3", "VOP3P") and gen != "gfx9"):
            for ext, marker, dword in ext_markers:
                w = set_field(ws, 32 if enc in ("VOP3", "VOP3P") else 0, 9, marker)
                cands.append([*list(w[: 2 if enc in ("VOP3", "VOP3P") else 1]), dword | 5])
                keys.append((enc, op, ext, size))
    res = run(objdump, mcpu, mach, cands)
    exts = {}
    for (enc, op, ext, size), hit in zip(keys, res):
        if hit is None or hit[0].startswith(".long"):
            continue
        exts.setdefault((enc, op), {})[ext] = "ok" if hit[1] > size else "plain"
    return exts


def probe_target(mcpu, objdump):
    sys.path.insert(0, str(SHARED / "tools/isa_oracle"))
    import enumerate_opcodes as eo
    from dump import MACH_TO_GPU

    gen, formats = eo.generation(mcpu)
    mach = next((k for k, v in MACH_TO_GPU.items() if v == mcpu), 0)
    table = json.loads((TABLES / f"{mcpu}.json").read_text())
    fmt = {f[0]: f for f in formats}
    templates = {}
    for name, base, _lsb, _width, extra in formats:
        templates.setdefault(name, []).append((base, extra))
    for vname, ormask, vextra in eo.VARIANTS.get(gen, []):
        if vname in fmt:
            templates[vname].append((fmt[vname][1] | ormask, vextra))
    # pass 1: find the first template each opcode decodes with
    cands, keys = [], []
    for enc, e in table["encodings"].items():
        if enc in ("VOPD_X", "VOPD_Y") or enc not in templates:
            continue
        for op, (mn, size) in e["ops"].items():
            for t, (base, extra) in enumerate(templates[enc]):
                cands.append([base | int(op) << e["op_lsb"], *list(extra)])
                keys.append((enc, op, t, mn, size))
    res = run(objdump, mcpu, mach, cands)
    chosen = {}
    for k, hit, ws in zip(keys, res, cands):
        enc, op, t, mn, size = k
        if (enc, op) not in chosen and ok(hit, size) and hit[0].split()[0] == mn:
            chosen[(enc, op)] = (ws, mn, size)
    # pass 2: each field alone
    cands, keys = [], []
    for (enc, op), (ws, mn, _size) in chosen.items():
        flds = list(fields_for(gen, enc))
        if enc == "VOP3" and SDST_VOP3.match(mn):
            flds.append(("sdst", 8, 7, 4))
        for f in flds:
            cands.append(set_field(ws, f[1], f[2], f[3]))
            keys.append((enc, op, f))
        for bit, width, val in MODBITS.get(gen, {}).get(enc, []):
            if enc == "VOP3" and SDST_VOP3.match(mn) and 8 <= bit < 15:
                continue
            if width == 1:  # flip single bits relative to the template (some must stay set, e.g. gds)
                idx, lsb = divmod(bit, 32)
                val = ((ws[idx] >> lsb) & 1) ^ 1
            cands.append(set_field(ws, bit, width, val))
            keys.append((enc, op, ("mod", bit, width, val)))
    res = run(objdump, mcpu, mach, cands)
    base_text = dict(zip(list(chosen), run(objdump, mcpu, mach, [c[0] for c in chosen.values()])))
    used, badmods, ignored = {}, {}, {}
    for (enc, op, f), hit in zip(keys, res):
        ws, mn, size = chosen[(enc, op)]
        good = ok(hit, size) and hit[0].split()[0] == mn
        if f[0] == "mod":
            if not good:
                badmods.setdefault((enc, op), []).append(f[1:3])
            elif base_text[(enc, op)] is not None and hit[0] == base_text[(enc, op)][0]:
                ignored.setdefault((enc, op), []).append(f[1:3])
        elif good:
            used.setdefault((enc, op), []).append(f)
    # pass 3: all used fields together
    cands, keys = [], []
    for (enc, op), (ws, _mn, _size) in chosen.items():
        w = ws
        for f in used.get((enc, op), []):
            w = set_field(w, f[1], f[2], f[3])
        cands.append(w)
        keys.append((enc, op))
    res = run(objdump, mcpu, mach, cands)
    all_words = dict(zip(keys, cands))
    res3, keys3 = res, keys
    notes = operand_notes(objdump, mcpu, mach, all_words, used)
    exts = extensions(objdump, mcpu, mach, gen, chosen)
    ops, fields = {}, {}
    for (enc, op), hit in zip(keys3, res3):
        ws, mn, size = chosen[(enc, op)]
        flds = used.get((enc, op), [])
        allf = list(fields_for(gen, enc))
        if enc == "VOP3" and SDST_VOP3.match(mn):
            allf.append(("sdst", 8, 7, 4))
        fields.setdefault(enc, {}).update({f[0]: [f[1], f[2]] for f in allf})
        if not (ok(hit, size) and hit[0].split()[0] == mn):
            hit = run(objdump, mcpu, mach, [ws])[0]
            flds = []
        tmpl = 0
        for i, x in enumerate(ws):
            tmpl |= x << (32 * i)
        fixed = [[f[1], f[2]] for f in allf if f not in flds] + [list(b) for b in badmods.get((enc, op), [])]
        fixed = [[b, w, (tmpl >> b) & ((1 << w) - 1)] for b, w in fixed]
        ign = [[b, w, (tmpl >> b) & ((1 << w) - 1)] for b, w in ignored.get((enc, op), [])]
        ops.setdefault(enc, {})[op] = [
            fixed,
            signature(hit[0], flds),
            ign,
            notes.get((enc, op), {}),
            exts.get((enc, op), {}),
        ]
    return {"fields": fields, "ops": ops}


def main() -> int:
    global SHARED
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--objdump", default="llvm-objdump-22")
    ap.add_argument("--only")
    args = ap.parse_args()
    SHARED = Path(args.shared)
    index = json.loads((TABLES / "index.json").read_text())
    for mcpu in sorted({v[:-5] for v in index.values()}):
        if args.only and mcpu != args.only:
            continue
        sig = probe_target(mcpu, args.objdump)
        blob = (json.dumps(sig, sort_keys=True, separators=(",", ":")) + "\n").encode()
        (TABLES / f"{mcpu}.sig.json.gz").write_bytes(gzip.compress(blob, mtime=0))
        print(mcpu, sum(len(v) for v in sig.values()), "opcodes probed", file=sys.stderr)
    return 0


SHARED = ROOT.parent / "shared"
if __name__ == "__main__":
    sys.exit(main())
