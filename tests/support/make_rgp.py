#!/usr/bin/env python3
"""Write .rgp files from a capture folder (../shared/captures/<gfx>/<example>, or a synthetic one), in the
two layouts ../shared/rgp has no real example of, so that attdec's reader can be tested on them, and in
the layout of tinygrad's rgptool that ../shared/rgp holds (`rgptool`, for a bare clone):

* `radv`: the SQTT file as Mesa RADV writes it (src/amd/common/ac_rgp.c `ac_sqtt_dump_data`): file
  version 1.6; CPU_INFO, ASIC_INFO (real device id and gfxip level), API_INFO (Vulkan); the code objects
  rebuilt as PAL ELFs (ac_rgp_elf_object_pack.c: ET_REL, OSABI AMDGPU_PAL, the family's representative
  EF_AMDGPU_MACH, `.text` + `_amdgpu_cs_main` + an NT_AMDGPU_METADATA note with `.internal_pipeline_hash`),
  records padded to 4 bytes; CODE_OBJECT_LOADER_EVENTS, PSO_CORRELATION, QUEUE_EVENT_TIMINGS and
  CLOCK_CALIBRATION; then per trace an SQTT_DESC + SQTT_DATA pair whose chunk index is the trace number.
* `rdf`: an RGP 2.x driver capture (GPUOpen libamdrdf docs/specification.md): "AMD_RDF " header, chunks
  AsicInfo, ApiInfo, SqttData (one per SE, PAL's SqttDataHeader), CodeObject (the capture's own code
  objects, hash in the header), COLoadEvent, PsoCorrelation, ClockCalibration, TraceConfig, and the
  64-byte index at the end; with `--zstd`, SqttData and CodeObject data zstd-compressed.

As in tinygrad's rgptool, every SE's trace is the capture's blobs of that SE concatenated in dispatch
order. Nothing is copied from Mesa or PAL: the layouts are attdec.sources.rgp.layouts.

    python3 -m tests.support.make_rgp ../shared/captures/gfx1100/sync_run0 -o /tmp/sync.rgp --layout radv
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
from pathlib import Path

import msgpack

from attdec.isa import load_code_object
from attdec.model.target import RGP_GFXIP_LEVELS, SQTT_VERSIONS, target
from attdec.sources.rgp import layouts as L

# Mesa ac_rgp.c ac_gfx_level_to_elf_gfxip_level: one EF_AMDGPU_MACH per RGP gfxip level, whatever the chip
MESA_ELF_MACH = {0x5: 0x02C, 0x7: 0x033, 0x9: 0x036, 0xC: 0x041, 0xD: 0x043, 0x10: 0x04E}
ELFOSABI_AMDGPU_PAL = 65
NT_AMDGPU_METADATA = 32


class Capture:
    """What a capture folder holds, in the order an .rgp wants it."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.cap = json.loads((folder / "capture.json").read_text())
        self.arch = target(self.cap["gfx_arch"])
        self.kernels = {k["name"]: k for k in self.cap["kernels"]}
        order = []
        for d in self.cap["dispatches"]:
            if d["kernel"] not in order:
                order.append(d["kernel"])
        self.programs = [self.kernels[k] for k in order]  # one code object per kernel, first use first
        blob_se = {b["file"]: b["se"] for b in self.cap["blobs"]}
        self.traces: dict[int, bytes] = {}  # SE -> its blobs of every dispatch, back to back
        for d in self.cap["dispatches"]:
            for f in d["blobs"]:
                se = blob_se[f]
                self.traces[se] = self.traces.get(se, b"") + (folder / f).read_bytes()

    def code(self, k) -> bytes:
        return (self.folder / k["code_object"]).read_bytes()

    @property
    def gfxip(self) -> tuple[int, int]:
        v = self.arch.version
        return v // 10000, v // 100 % 100

    @property
    def rgp_gfxip_level(self) -> int:
        """The SQTT file's enum: the exact major.minor, else the major alone (GFXIP_9 is every gfx9)."""
        exact = [lv for lv, mm in RGP_GFXIP_LEVELS.items() if mm == self.gfxip]
        return (exact or [lv for lv, mm in RGP_GFXIP_LEVELS.items() if mm[0] == self.gfxip[0]])[0]

    @property
    def sqtt_version(self) -> int:
        return next(v for v, (gen, _) in SQTT_VERSIONS.items() if gen == self.arch.generation)

    @property
    def device_id(self) -> int:
        return self.arch.pci_ids[0] if self.arch.pci_ids else 0

    @property
    def shader_engines(self) -> int:
        p = self.cap["device_props"]
        return p["array_count"] // p["simd_arrays_per_engine"]

    def api_pso_hash(self, k) -> int:
        """What tinygrad's pipeline-bind markers in the trace carry: the md5 of the code object, first 8 bytes."""
        return struct.unpack("<Q", hashlib.md5(self.code(k)).digest()[:8])[0]

    def pipeline_hash(self, k) -> tuple[int, int]:
        h = hashlib.sha256(self.code(k)).digest()
        return struct.unpack("<QQ", h[:16])


def chunk(typ: int, body: bytes, index: int = 0, major: int = 0, minor: int = 0) -> bytes:
    cid = typ | index << 8
    return L.CHUNK_HEADER.pack(chunk_id=cid, minor=minor, major=major, size=16 + len(body)) + body


def pal_elf(cap: Capture, k) -> bytes:
    """The kernel's code as Mesa rebuilds a pipeline for RGP: .text from the entry, one symbol, PAL metadata."""
    co = load_code_object(cap.code(k), k["code_object"], cap.arch.name)
    text = co.text[k["entry_vaddr"] - co.text_vaddr :]
    text += bytes(-len(text) % 256)
    h0, h1 = cap.pipeline_hash(k)
    wave = 64 if cap.arch.family == "gfx9" else 32
    meta = msgpack.packb(
        {
            "amdpal.version": [2, 1],
            "amdpal.pipelines": [
                {
                    ".spill_threshold": 0xFFFF,
                    ".user_data_limit": 32,
                    ".shaders": {
                        ".compute": {".api_shader_hash": [cap.api_pso_hash(k), 0], ".hardware_mapping": [".cs"]}
                    },
                    ".hardware_stages": {
                        ".cs": {
                            ".entry_point": "_amdgpu_cs_main",
                            ".sgpr_count": 0,
                            ".vgpr_count": 0,
                            ".scratch_memory_size": 0,
                            ".wavefront_size": wave,
                            ".lds_size": 0,
                        }
                    },
                    ".internal_pipeline_hash": [h0, h1],
                    ".api": "Vulkan",
                }
            ],
        }
    )
    meta += bytes(-len(meta) % 4)
    strtab = b"\0.strtab\0.text\0.symtab\0.note\0_amdgpu_cs_main\0"
    name = {s: strtab.index(s.encode()) for s in (".strtab", ".text", ".symtab", ".note", "_amdgpu_cs_main")}
    sym = bytes(24) + struct.pack("<IBBHQQ", name["_amdgpu_cs_main"], 2, 0, 2, 0, len(text))  # STT_FUNC in .text
    note = struct.pack("<III", 7, len(meta), NT_AMDGPU_METADATA) + b"AMDGPU\0\0" + meta
    off_str = 64
    off_text = off_str + len(strtab)
    off_sym = off_text + len(text)
    off_note = off_sym + len(sym)
    shoff = off_note + len(note)
    ident = b"\x7fELF" + bytes([2, 1, 1, ELFOSABI_AMDGPU_PAL]) + bytes(8)
    ehdr = ident + struct.pack(
        "<HHIQQQIHHHHHH", 1, 224, 1, 0, 0, shoff, MESA_ELF_MACH[cap.rgp_gfxip_level], 64, 0, 0, 64, 5, 1
    )
    sh = [bytes(64)]
    sh.append(struct.pack("<IIQQQQIIQQ", name[".strtab"], 3, 0, 0, off_str, len(strtab), 0, 0, 1, 0))
    sh.append(struct.pack("<IIQQQQIIQQ", name[".text"], 1, 6, 0, off_text, len(text), 0, 0, 256, 0))
    sh.append(struct.pack("<IIQQQQIIQQ", name[".symtab"], 2, 0, 0, off_sym, len(sym), 1, 1, 8, 24))
    sh.append(struct.pack("<IIQQQQIIQQ", name[".note"], 7, 0, 0, off_note, len(note), 0, 0, 4, 0))
    return ehdr + strtab + text + sym + note + b"".join(sh)


def asic_info_body(cap: Capture) -> dict:
    p = cap.cap["device_props"]
    se = cap.shader_engines
    return {
        "trace_shader_core_clock": 2_500_000_000,
        "trace_memory_clock": 1_250_000_000,
        "device_id": cap.device_id,
        "vgprs_per_simd": 1536,
        "sgprs_per_simd": 2048,
        "shader_engines": se,
        "compute_unit_per_shader_engine": p["simd_count"] // p["simd_per_cu"] // se,
        "simd_per_compute_unit": p["simd_per_cu"],
        "wavefronts_per_simd": p["max_waves_per_simd"],
        "lds_size": p["lds_size_in_kb"] * 1024,
        "gpu_name": cap.arch.name.encode(),
        "gpu_timestamp_frequency": 100_000_000,
    }


def radv(folder: Path, out: Path) -> Path:
    cap = Capture(folder)
    f = bytearray(L.FILE_HEADER.pack(magic=L.SQTT_MAGIC, version_major=1, version_minor=6, flags=1, chunk_offset=56))
    f += chunk(L.CPU_INFO, L.CPU_INFO_BODY.pack(cpu_timestamp_freq=1_000_000_000, num_logical_cores=1))
    f += chunk(L.ASIC_INFO, L.ASIC_INFO_BODY.pack(gfxip_level=cap.rgp_gfxip_level, **asic_info_body(cap)), minor=5)
    f += chunk(L.API_INFO, L.API_INFO_BODY.pack(api_type=1), minor=2)  # Vulkan, instruction trace off
    records = b""
    for k in cap.programs:
        elf = pal_elf(cap, k)
        size = len(elf) + (-len(elf) % 4)
        records += L.CODE_OBJECT_RECORD.pack(size=size) + elf + bytes(size - len(elf))
    db = L.CODE_OBJECT_DATABASE_BODY.pack(offset=len(f), size=16 + 16 + len(records), record_count=len(cap.programs))
    f += chunk(L.CODE_OBJECT_DATABASE, db + records)
    loads = b"".join(
        L.LOADER_EVENT.pack(base_address=k["base"] + k["entry_vaddr"], code_object_hash=cap.pipeline_hash(k))
        for k in cap.programs
    )
    table = L.RECORD_TABLE_BODY.pack(offset=len(f), record_size=L.LOADER_EVENT.size, record_count=len(cap.programs))
    f += chunk(L.CODE_OBJECT_LOADER_EVENTS, table + loads, major=1)
    pso = b"".join(
        L.PSO_RECORD.pack(api_pso_hash=cap.api_pso_hash(k), pipeline_hash=cap.pipeline_hash(k)) for k in cap.programs
    )
    table = L.RECORD_TABLE_BODY.pack(offset=len(f), record_size=L.PSO_RECORD.size, record_count=len(cap.programs))
    f += chunk(L.PSO_CORRELATION, table + pso)
    queue_info = struct.pack("<QQII", 1, 0, 0, 0)  # one queue, no events
    f += chunk(
        L.QUEUE_EVENT_TIMINGS,
        L.QUEUE_EVENT_TIMINGS_BODY.pack(queue_info_table_record_count=1, queue_info_table_size=len(queue_info))
        + queue_info,
        major=1,
        minor=1,
    )
    f += chunk(L.CLOCK_CALIBRATION, L.CLOCK_CALIBRATION_BODY.pack(cpu_timestamp=1_000_000, gpu_timestamp=2_000))
    for i, (se, trace) in enumerate(sorted(cap.traces.items())):
        desc = L.SQTT_DESC_BODY.pack(
            shader_engine_index=se,
            sqtt_version=cap.sqtt_version,
            instrumentation_spec_version=1,
            instrumentation_api_version=5,
        )
        f += chunk(L.SQTT_DESC, desc, index=i, minor=2)
        f += chunk(L.SQTT_DATA, L.SQTT_DATA_BODY.pack(offset=len(f) + 24, size=len(trace)) + trace, index=i)
    out.write_bytes(bytes(f))
    return out


def rgptool(folder: Path, out: Path) -> Path:
    """The SQTT file as tinygrad's rgptool (extra/sqtt/rgptool.py `create`) writes it from a profile: file
    version 1.5; CPU_INFO, ASIC_INFO (a 7900 XTX's name and clocks, the real device id, gfxip level and
    counts), API_INFO (HIP, instruction trace on); per SE an SQTT_DESC + SQTT_DATA pair whose chunk index is
    the SE; then, last, the code objects as loaded (records declared 4-aligned, written unpadded: its padding
    bug, which shows only for an object whose size is not a multiple of 4), CODE_OBJECT_LOADER_EVENTS at
    the load bases and PSO_CORRELATION, hashed with the md5 of each object."""
    cap = Capture(folder)
    f = bytearray(L.FILE_HEADER.pack(magic=L.SQTT_MAGIC, version_major=1, version_minor=5, flags=1, chunk_offset=56))
    f += chunk(L.CPU_INFO, L.CPU_INFO_BODY.pack(cpu_timestamp_freq=1_000_000_000, num_logical_cores=64))
    asic = asic_info_body(cap) | {"gpu_name": b"NAVI31"}
    f += chunk(L.ASIC_INFO, L.ASIC_INFO_BODY.pack(gfxip_level=cap.rgp_gfxip_level, **asic), minor=5)
    itrace = [b["itrace"] for b in cap.cap["blobs"]]
    mask = 0 if len(set(itrace)) == 1 else sum(1 << b["se"] for b in cap.cap["blobs"] if b["itrace"])
    api = L.API_INFO_BODY.pack(
        api_type=5, major_version=12, instruction_trace_mode=int(any(itrace)), instruction_trace_data=mask
    )
    f += chunk(L.API_INFO, api, minor=2)
    for se, trace in sorted(cap.traces.items()):
        desc = L.SQTT_DESC_BODY.pack(
            shader_engine_index=se, sqtt_version=cap.sqtt_version, instrumentation_spec_version=1
        )
        f += chunk(L.SQTT_DESC, desc, index=se, minor=2)
        f += chunk(L.SQTT_DATA, L.SQTT_DATA_BODY.pack(offset=len(f) + 24, size=len(trace)) + trace, index=se)
    objects = [cap.code(k) for k in cap.programs]
    declared = 16 + 16 + sum(4 + len(o) + (-len(o) % 4) for o in objects)
    db = L.CODE_OBJECT_DATABASE_BODY.pack(offset=len(f), size=declared, record_count=len(objects))
    records = b"".join(L.CODE_OBJECT_RECORD.pack(size=len(o) + (-len(o) % 4)) + o for o in objects)
    f += L.CHUNK_HEADER.pack(chunk_id=L.CODE_OBJECT_DATABASE, minor=0, major=0, size=declared) + db + records
    hashes = [struct.unpack("<Q", hashlib.md5(o).digest()[:8]) * 2 for o in objects]
    loads = b"".join(
        L.LOADER_EVENT.pack(base_address=k["base"], code_object_hash=h) for k, h in zip(cap.programs, hashes)
    )
    table = L.RECORD_TABLE_BODY.pack(offset=len(f), record_size=L.LOADER_EVENT.size, record_count=len(objects))
    f += chunk(L.CODE_OBJECT_LOADER_EVENTS, table + loads, major=1)
    pso = b"".join(L.PSO_RECORD.pack(api_pso_hash=h[0], pipeline_hash=h) for h in hashes)
    table = L.RECORD_TABLE_BODY.pack(offset=len(f), record_size=L.PSO_RECORD.size, record_count=len(objects))
    f += chunk(L.PSO_CORRELATION, table + pso)
    out.write_bytes(bytes(f))
    return out


def rdf(folder: Path, out: Path, zstd: bool = False) -> Path:
    cap = Capture(folder)
    if zstd:
        import zstandard

        squeeze = zstandard.ZstdCompressor(level=3).compress
    body, index = bytearray(bytes(L.RDF_HEADER.size)), []

    def add(ident: str, data: bytes, header: bytes = b"", version: int = 1, compress: bool = False) -> None:
        ho = len(body)
        body.extend(header)
        stored = squeeze(data) if compress and zstd else data
        do = len(body)
        body.extend(stored)
        index.append(
            L.RDF_INDEX_ENTRY.pack(
                chunk_id=ident.encode(),
                compression=1 if stored is not data else 0,
                version=version,
                header_offset=ho,
                header_size=len(header),
                data_offset=do,
                data_size=len(stored),
                uncompressed_size=len(data) if stored is not data else 0,
            )
        )

    major, minor = cap.gfxip
    pci = cap.device_id
    asic = dict(asic_info_body(cap))
    asic.pop("trace_shader_core_clock"), asic.pop("trace_memory_clock")
    add(
        "AsicInfo",
        L.RDF_ASIC_INFO.pack(pci_id=pci, gfxip_level=(major, minor, cap.arch.version % 100), **asic),
        version=3,
    )
    add("ApiInfo", struct.pack("<IHH", 8, 0, 0), version=2)  # HIP
    for se, trace in sorted(cap.traces.items()):
        head = L.RDF_SQTT_DATA_HEADER.pack(
            pci_id=pci,
            shader_engine=se,
            sqtt_version=cap.sqtt_version,
            instrumentation_spec_version=1,
            trace_buffer_size=len(trace),
            flags=1,
        )
        add("SqttData", trace, head + bytes(4), version=5, compress=True)  # + the C struct's tail padding
    for k in cap.programs:
        head = L.RDF_CODE_OBJECT_HEADER.pack(pci_id=pci, code_object_hash=cap.pipeline_hash(k))
        add("CodeObject", cap.code(k), head, version=2, compress=True)
    loads = b"".join(
        L.RDF_LOAD_EVENT.pack(pci_id=pci, base_address=k["base"], code_object_hash=cap.pipeline_hash(k))
        for k in cap.programs
    )
    add("COLoadEvent", loads, L.RDF_COUNT_HEADER.pack(count=len(cap.programs)), version=3)
    pso = b"".join(
        L.RDF_PSO_RECORD.pack(pci_id=pci, api_pso_hash=cap.api_pso_hash(k), pipeline_hash=cap.pipeline_hash(k))
        for k in cap.programs
    )
    add("PsoCorrelation", pso, L.RDF_COUNT_HEADER.pack(count=len(cap.programs)), version=3)
    add("ClockCalibration", struct.pack("<I4xQQ", pci, 1_000_000, 2_000), version=2)
    add("TraceConfig", b'{"controller":{"name":"renderop"}}')
    index_offset = len(body)
    body.extend(b"".join(index))
    body[: L.RDF_HEADER.size] = L.RDF_HEADER.pack(
        identifier=b"AMD_RDF ", version=L.RDF_VERSION, index_offset=index_offset, index_size=len(index) * 64
    )
    out.write_bytes(bytes(body))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", type=Path, help="a capture folder with capture.json")
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--layout", choices=["radv", "rdf", "rgptool"], default="radv")
    ap.add_argument("--zstd", action="store_true", help="rdf: compress SqttData and CodeObject data")
    a = ap.parse_args()
    if a.layout == "rdf":
        out = rdf(a.capture, a.output, a.zstd)
    else:
        out = (radv if a.layout == "radv" else rgptool)(a.capture, a.output)
    print(out)


if __name__ == "__main__":
    main()
