"""Target names, ELF machine numbers and the three encoding families attdec decodes."""
from __future__ import annotations

from attdec.errors import ArchError

# EF_AMDGPU_MACH (e_flags & 0xff) -> processor, from LLVM's BinaryFormat/ELF.h (see shared/docs/code-object.md).
MACH_TO_ARCH = {
    0x03F: "gfx90a", 0x040: "gfx940", 0x04B: "gfx941", 0x04C: "gfx942", 0x04F: "gfx950", 0x030: "gfx908",
    0x041: "gfx1100", 0x046: "gfx1101", 0x047: "gfx1102", 0x044: "gfx1103", 0x043: "gfx1150",
    0x04A: "gfx1151", 0x055: "gfx1152", 0x058: "gfx1153", 0x048: "gfx1200", 0x04E: "gfx1201",
    0x049: "gfx1250", 0x051: "gfx9-generic", 0x05F: "gfx9-4-generic", 0x054: "gfx11-generic",
    0x059: "gfx12-generic",
}

# Targets whose instruction tables we carry.
ARCHES = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151",
          "gfx1200", "gfx1201")

# Close relatives decoded with a supported target's tables.
ALIASES = {"gfx940": "gfx942", "gfx941": "gfx942", "gfx1152": "gfx1151", "gfx1153": "gfx1151",
           "gfx9-4-generic": "gfx942", "gfx11-generic": "gfx1100", "gfx12-generic": "gfx1200"}


def canonical_arch(arch: str, where: str = "") -> str:
    """The supported target whose tables decode `arch` ("gfx1100", "GFX1201", "gfx942:sramecc+")."""
    a = (arch or "").strip().lower().split(":")[0]
    a = ALIASES.get(a, a)
    if a not in ARCHES:
        raise ArchError(f"unsupported architecture {arch!r} (known: {', '.join(ARCHES)})", where or None)
    return a


def family_of(arch: str) -> str:
    """'gfx9' (CDNA), 'gfx11' (RDNA3/3.5) or 'gfx12' (RDNA4): the encoding family of a target."""
    a = canonical_arch(arch)
    return "gfx9" if a.startswith("gfx9") else a[:5]


def arch_from_target_version(version: int) -> str:
    """tinygrad/KFD `gfx_target_version` (major*10000 + minor*100 + stepping) -> 'gfx1201' etc."""
    major, minor, step = version // 10000, version // 100 % 100, version % 100
    return f"gfx{major}{minor:x}{step:x}"
