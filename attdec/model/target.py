"""Every per-architecture fact attdec uses, in one table: `target("gfx950")` -> `Target`.

A `Target` is a GPU as attdec sees it: the SQTT decoder family and generation, the ISA tables that
disassemble it, its ELF machine number and KFD `gfx_target_version`, the default wave size, the wait
counters its ISA has, what bounds occupancy on its compute units (`ComputeUnit`, docs/occupancy.md),
and the products it ships in (for display). Family-only targets (`gfx9`,
`gfx11`, `gfx12`) stand for "some chip of that family": rocprofv3's filenames.json only says `gfxip`.
Unknown names are an `ArchError` that lists the known ones.
"""

from __future__ import annotations

import re

from attdec.errors import ArchError
from attdec.model.record import Frozen

# Wait counters of each ISA family (LLVM SIInsertWaitcnts; docs/stall-classifier.md).
COUNTERS = {
    "gfx9": ("vmcnt", "lgkmcnt", "expcnt"),
    "gfx10": ("vmcnt", "vscnt", "lgkmcnt", "expcnt"),
    "gfx11": ("vmcnt", "vscnt", "lgkmcnt", "expcnt"),
    "gfx12": ("loadcnt", "storecnt", "samplecnt", "bvhcnt", "dscnt", "kmcnt", "expcnt"),
}


class StreamFormat(Frozen):
    """An SQTT stream format: what one generation's trace unit writes (its header says which, sqtt-format.md
    §1.2), and how far attdec reads it. Every "does attdec read this stream" question is answered here."""

    name: str  # "gfx9", "gfx11", "gfx12.5"
    generation: int  # the gfx generation whose chips write it
    decoded: bool = False  # decoded into waves and occupancy
    listed: bool = False  # its tokens are listed (`decode --tokens`) and its register writes scanned

    def __str__(self) -> str:
        return self.name


STREAM_FORMATS: dict[str, StreamFormat] = {
    f.name: f
    for f in (
        StreamFormat("gfx9", 9, decoded=True, listed=True),
        StreamFormat("gfx10", 10, listed=True),
        StreamFormat("gfx11", 11, decoded=True, listed=True),
        StreamFormat("gfx12", 12, decoded=True, listed=True),
        StreamFormat("gfx12.5", 12),
    )
}


def stream_names(decoded: bool = False) -> str:
    """The formats attdec lists (or decodes), for messages: "gfx9, gfx11 and gfx12"."""
    names = [f.name for f in STREAM_FORMATS.values() if f.decoded or (f.listed and not decoded)]
    return ", ".join(names[:-1]) + " and " + names[-1]


class ComputeUnit(Frozen):
    """What bounds how many waves one SIMD holds: the figures LLVM's AMDGPU backend computes occupancy
    with (sources and cross-checks in docs/occupancy.md). On gfx10+ a workgroup processor (WGP) is two
    CUs; kernels built for WGP mode (the default) pool both CUs' SIMDs, LDS and workgroup slots."""

    wave_slots: int  # waves per SIMD, the hardware limit (LLVM getMaxWavesPerEU)
    simds: int  # SIMDs per CU (LLVM getEUsPerCU in CU mode)
    vgpr_files: tuple[tuple[int, int, int], ...]  # (wave size, VGPRs per SIMD, allocation granule)
    lds: int  # LDS bytes per CU, also the most one workgroup may take
    sgpr_waves: tuple[tuple[int, int], ...] = ()  # (SGPRs up to, waves) steps; () = SGPRs never limit
    unified_agprs: bool = False  # AGPRs come out of the VGPR file (gfx90a+); gfx908 has its own AGPR file
    workgroups: int = 16  # workgroups of more than one wave per CU (barrier slots)
    cus_per_wgp: int = 1  # 2 on gfx10+

    def vgpr_file(self, wave_size: int) -> tuple[int, int]:
        """(VGPRs per SIMD, allocation granule) for waves of `wave_size` lanes."""
        for size, total, granule in self.vgpr_files:
            if size == wave_size:
                return total, granule
        raise ValueError(f"no wave{wave_size} VGPR file on this target")


# LLVM getOccupancyWithNumSGPRs, GFX8-GFX9 (SGPRs counted with VCC, flat scratch and XNACK)
_SGPR_GFX9 = ((80, 10), (88, 9), (100, 8), (112, 7))
# LLVM getVGPRAllocGranule / getTotalNumVGPRs / getMaxWavesPerEU / getAddressableLocalMemorySize per ISA
# version (AMDGPU.td feature sets); every row is checked against llc-22's "; Occupancy" by
# tests/fixtures/occupancy_llvm.json (tools/makers/make_occupancy_fixtures.py).
CU_GFX9 = ComputeUnit(10, 4, ((64, 256, 4),), 65536, _SGPR_GFX9)  # gfx908 (own 256-entry AGPR file)
CU_GFX90A = ComputeUnit(8, 4, ((64, 512, 8),), 65536, _SGPR_GFX9, unified_agprs=True)
CU_GFX950 = ComputeUnit(8, 4, ((64, 512, 8),), 163840, _SGPR_GFX9, unified_agprs=True)
CU_GFX10_1 = ComputeUnit(20, 2, ((32, 1024, 8), (64, 512, 4)), 65536, cus_per_wgp=2)
CU_GFX10_3 = ComputeUnit(16, 2, ((32, 1024, 16), (64, 512, 8)), 65536, cus_per_wgp=2)  # also gfx11 without
CU_1536 = ComputeUnit(16, 2, ((32, 1536, 24), (64, 768, 12)), 65536, cus_per_wgp=2)  # 1.5x VGPRs: gfx1100/1/51, gfx12


class Target(Frozen):
    """One GPU target (or a whole family when `chip_known` is False)."""

    name: str  # "gfx950", "gfx1201"; "gfx9" for a family-only target
    family: str  # ISA and SQTT family: "gfx9" (CDNA), "gfx10", "gfx11" (RDNA3/3.5), "gfx12" (RDNA4)
    mach: int | None = None  # EF_AMDGPU_MACH (ELF e_flags & 0xff), from LLVM's BinaryFormat/ELF.h
    version: int | None = None  # KFD gfx_target_version: major*10000 + minor*100 + stepping
    isa: str | None = None  # the target whose instruction tables decode it (None: not carried)
    products: tuple[str, ...] = ()
    chip_known: bool = True
    sqtt: str = ""  # SQTT stream format when it differs from the family ("gfx12.5")
    vgprs: int = 256  # VGPRs one wave may address (1024 on gfx1250)
    shown: str = ""  # how users read it when `name` alone would claim too much ("gfx10-12 (generation unknown)")
    cu: ComputeUnit | None = None  # occupancy figures; None: not known for this target (or family)
    pci_ids: tuple[int, ...] = ()  # PCI device ids (RGP ASIC info `device_id`), from libdrm's amdgpu.ids
    # ISA features the disassembler prints differently (LLVM's subtarget features)
    gfx90a_insts: bool = False  # VGPR/AGPR tuples start at an even register; 64-bit DPP takes row_newbcast only
    sc_cache_bits: bool = False  # memory cache-policy bits are sc0/nt/sc1 (gfx940+), not glc/slc/scc
    vop3_literal: bool = False  # VOP3 may carry a 32-bit literal (gfx10+, gfx950)

    @property
    def generation(self) -> int:
        """SQTT / gfx generation: 9, 10, 11 or 12 (what filenames.json calls `gfxip`)."""
        return self.stream.generation

    @property
    def stream(self) -> StreamFormat:
        """The SQTT stream format its trace unit writes (what decoders.detect_format reports)."""
        return STREAM_FORMATS[self.sqtt or self.family]

    def check_stream(self, got: StreamFormat, where: str | None = None) -> None:
        """Refuse a stream this target cannot have written (the user named the wrong --arch)."""
        if got != self.stream:
            raise ArchError(f"the trace is {got}, not {self.display} (--arch)", where)

    @property
    def traced_unit(self) -> str:
        """What a trace's `cu` numbers: a compute unit on gfx9, a workgroup processor (two CUs) on gfx10+."""
        return "CU" if self.family == "gfx9" else "WGP"

    def vgpr_encoding_granule(self, wave_size: int) -> int:
        """VGPRs per GRANULATED_WORKITEM_VGPR_COUNT step of a kernel descriptor (LLVM getVGPREncodingGranule)."""
        if self.cu is not None and self.cu.unified_agprs:
            return 8
        if self.vgprs > 256:
            return 16 if wave_size == 32 else 8
        return 8 if wave_size == 32 else 4

    @property
    def wave_size(self) -> int:
        """Default wave size: 64 on CDNA, 32 on RDNA (where kernels may also run wave64)."""
        return 64 if self.family == "gfx9" else 32

    @property
    def counters(self) -> tuple[str, ...]:
        return COUNTERS[self.family]

    @property
    def display(self) -> str:
        return self.shown or (self.name if self.chip_known else f"{self.name} (chip unknown)")

    def __str__(self) -> str:
        return self.display

    def __hash__(self) -> int:  # a cache key in the ISA rules: the name alone tells targets apart, and fast
        return hash(self.name)

    def __repr__(self) -> str:
        return f"Target({self.display!r})"


# PCI device ids of each chip (what RGP's ASIC info calls `device_id`), from libdrm's data/amdgpu.ids: the
# ids whose marketing names are the chip's products.
_PCI_IDS = {
    "gfx908": (0x738C,),
    "gfx90a": (0x7408, 0x740C, 0x740F),
    "gfx942": (0x74A0, 0x74A1, 0x74A5),
    "gfx1010": (0x731F,),
    "gfx1030": (0x73A3, 0x73A5, 0x73AF, 0x73BF),
    "gfx1100": (0x7448, 0x744A, 0x744C),
    "gfx1101": (0x747E,),
    "gfx1102": (0x7480,),
    "gfx1103": (0x15BF,),
    "gfx1150": (0x150E,),
    "gfx1151": (0x1586,),
    "gfx1201": (0x7550,),
}


def _t(name, family, mach, version, isa=None, products=(), sqtt="", cu=None, **features):
    features = {"vop3_literal": family != "gfx9", **features}  # every gfx10+ target has VOP3 literals
    pci_ids = _PCI_IDS.get(name, ())
    return Target(name, family, mach, version, isa, tuple(products), sqtt=sqtt, cu=cu, pci_ids=pci_ids, **features)


GFX940 = {"gfx90a_insts": True, "sc_cache_bits": True}


# name, family, EF_AMDGPU_MACH, gfx_target_version, ISA tables, products, compute unit, ISA features
TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        _t("gfx908", "gfx9", 0x030, 90008, None, ["MI100"], cu=CU_GFX9),
        _t("gfx90a", "gfx9", 0x03F, 90010, "gfx90a", ["MI210", "MI250", "MI250X"], cu=CU_GFX90A, gfx90a_insts=True),
        _t("gfx940", "gfx9", 0x040, 90400, "gfx942", ["MI300A (early)"], cu=CU_GFX90A, **GFX940),
        _t("gfx941", "gfx9", 0x04B, 90401, "gfx942", ["MI300X (early)"], cu=CU_GFX90A, **GFX940),
        _t("gfx942", "gfx9", 0x04C, 90402, "gfx942", ["MI300A", "MI300X", "MI325X"], cu=CU_GFX90A, **GFX940),
        _t("gfx950", "gfx9", 0x04F, 90500, "gfx950", ["MI350X", "MI355X"], cu=CU_GFX950, **GFX940, vop3_literal=True),
        _t("gfx1010", "gfx10", 0x033, 100100, None, ["RX 5700 XT"], cu=CU_GFX10_1),
        _t("gfx1030", "gfx10", 0x036, 100300, None, ["RX 6900 XT", "RX 6800 XT", "PRO W6800"], cu=CU_GFX10_3),
        _t("gfx1100", "gfx11", 0x041, 110000, "gfx1100", ["RX 7900 XTX", "RX 7900 XT", "PRO W7900"], cu=CU_1536),
        _t("gfx1101", "gfx11", 0x046, 110001, "gfx1101", ["RX 7800 XT", "RX 7700 XT"], cu=CU_1536),
        _t("gfx1102", "gfx11", 0x047, 110002, "gfx1102", ["RX 7600"], cu=CU_GFX10_3),
        _t("gfx1103", "gfx11", 0x044, 110003, "gfx1103", ["Radeon 780M"], cu=CU_GFX10_3),
        _t("gfx1150", "gfx11", 0x043, 110500, "gfx1150", ["Radeon 890M"], cu=CU_GFX10_3),
        _t("gfx1151", "gfx11", 0x04A, 110501, "gfx1151", ["Radeon 8060S"], cu=CU_1536),
        _t("gfx1152", "gfx11", 0x055, 110502, "gfx1151", cu=CU_GFX10_3),
        _t("gfx1153", "gfx11", 0x058, 110503, "gfx1151", cu=CU_GFX10_3),
        _t("gfx1200", "gfx12", 0x048, 120000, "gfx1200", ["RX 9060 XT"], cu=CU_1536),
        _t("gfx1201", "gfx12", 0x04E, 120001, "gfx1201", ["RX 9070 XT", "RX 9070", "AI PRO R9700"], cu=CU_1536),
        _t("gfx1250", "gfx12", 0x049, 120500, None, ["MI450 (preliminary)"], sqtt="gfx12.5", vgprs=1024),
        _t("gfx9-generic", "gfx9", 0x051, None, None, cu=CU_GFX9),
        _t("gfx9-4-generic", "gfx9", 0x05F, None, "gfx942", cu=CU_GFX90A, **GFX940),
        _t("gfx11-generic", "gfx11", 0x054, None, "gfx1100", cu=CU_GFX10_3),
        _t("gfx12-generic", "gfx12", 0x059, None, "gfx1200", cu=CU_1536),
    )
}
# A family as such: what a ui_output folder says when no agent table names the chip.
FAMILIES: dict[str, Target] = {
    f: Target(f, f, chip_known=False, vop3_literal=f != "gfx9") for f in ("gfx9", "gfx10", "gfx11", "gfx12")
}

# What a ui_output folder says without `gfxip` (rocprofv2 writes only `gfxv`): "vega" is the gfx9 family;
# "navi" is gfx10, 11 or 12 without saying which (its ISA is then read with gfx11's rules); nothing at all
# names no architecture (read with gfx9's rules). The display says what is not known.
UNDETERMINED: dict[str | None, Target] = {
    "vega": FAMILIES["gfx9"],
    "navi": Target("gfx10-12", "gfx11", chip_known=False, shown="gfx10-12 (generation unknown)", vop3_literal=True),
    None: Target("gfx?", "gfx9", chip_known=False, shown="unknown (the input does not say)"),
}

_BY_MACH = {t.mach: t for t in TARGETS.values() if t.mach is not None}
_BY_PCI = {i: t for t in TARGETS.values() for i in t.pci_ids}

# RGP (SQTT file) enums -> gfx generation: ASIC info `gfxip_level` and SQTT_DESC `sqtt_version` (Mesa ac_rgp.c).
RGP_GFXIP_LEVELS = {0x5: (9, 0), 0x7: (10, 1), 0x9: (10, 3), 0xC: (11, 0), 0xD: (11, 5), 0x10: (12, 0)}
SQTT_VERSIONS = {0x6: (9, "2.3"), 0x7: (10, "2.4"), 0xB: (11, "3.2"), 0xC: (12, "3.3")}
_BY_VERSION = {t.version: t for t in TARGETS.values() if t.version is not None}
_FEATURES = re.compile(r":.*$")  # "gfx942:sramecc+:xnack-" -> "gfx942"


def known_names() -> str:
    return ", ".join(list(TARGETS) + list(FAMILIES))


def target(name: str | Target, where: str | None = None) -> Target:
    """The Target named `name` ("gfx950", "GFX1201", "gfx942:sramecc+:xnack-", "amdgcn-amd-amdhsa--gfx90a",
    "gfx9", "gfx9 (chip unknown)"). Unknown names raise ArchError listing the known ones."""
    if isinstance(name, Target):
        return name
    t = _BY_NAME.get(name)
    if t is not None:  # (a name is looked up again for every blob of a capture)
        return t
    key = _FEATURES.sub("", str(name).strip().lower().removesuffix(" (chip unknown)")).rsplit("--", 1)[-1]
    t = TARGETS.get(key) or FAMILIES.get(key) or next((u for u in UNDETERMINED.values() if u.shown == name), None)
    if t is None:
        raise ArchError(f"unknown architecture {name!r} (known: {known_names()})", where)
    if isinstance(name, str) and len(_BY_NAME) < 256:
        _BY_NAME[name] = t
    return t


_BY_NAME: dict[str, Target] = {}  # `target`'s answers, by the name as given


def from_mach(mach: int) -> Target | None:
    """The target of an ELF's EF_AMDGPU_MACH, or None when attdec does not know it."""
    return _BY_MACH.get(mach)


def from_pci_id(device_id: int) -> Target | None:
    """The chip of a PCI device id (RGP ASIC info), or None when attdec does not know it."""
    return _BY_PCI.get(device_id)


def from_version(version: int, where: str | None = None) -> Target:
    """The target of a KFD gfx_target_version (tinygrad device props, rocprofv3 agent tables)."""
    t = _BY_VERSION.get(version)
    if t is None:
        major, minor, step = version // 10000, version // 100 % 100, version % 100
        raise ArchError(
            f"unknown gfx_target_version {version} (gfx{major}{minor:x}{step:x}; known: "
            f"{', '.join(str(v) for v in _BY_VERSION)})",
            where,
        )
    return t


def family_target(generation: int | str, where: str | None = None) -> Target:
    """The family-only Target of a generation (9, 11, 12; what filenames.json's `gfxip` says)."""
    t = FAMILIES.get(f"gfx{generation}")
    if t is None:
        raise ArchError(f"unknown gfx generation {generation!r} (known: 9, 10, 11, 12)", where)
    return t


def undetermined_target(gfxv: str | None) -> Target:
    """The target of a folder that has no `gfxip`, from its `gfxv` ("vega", "navi") if any."""
    return UNDETERMINED.get(gfxv.lower() if isinstance(gfxv, str) else None, UNDETERMINED[None])


def most_waves_per_simd(tgt: Target) -> int | None:
    """The most waves one SIMD of `tgt` can hold: its own limit, or for a family-only target the largest of
    the family's chips (None: no chip of it has occupancy figures). More resident waves than this on one
    SIMD is no measurement but damaged or repeated records."""
    if tgt.cu is not None:
        return tgt.cu.wave_slots
    slots = [t.cu.wave_slots for t in TARGETS.values() if t.cu is not None and t.family == tgt.family]
    return max(slots) if slots else None
