"""Byte layouts of RGP files, one table per C struct.

SQTT file format ("SQTT file", magic 0x50303042, versions 1.5 / 1.6): Mesa `src/amd/common/ac_rgp.c`
(the sizes it static_asserts are checked here too). RDF container ("AMD_RDF "): GPUOpen-Drivers/libamdrdf
`docs/specification.md`; the RGP 2.x chunk headers and payloads inside it: PAL's trace sources as
mirrored by ROCm CLR and Radeon GPU Detective (`SqttDataHeader`, `TraceChunk::AsicInfo`, `CodeObject`,
`COLoadEvent`, `PsoCorrelation`).
"""

from __future__ import annotations

from attdec.sources.rgp.magic import RDF_IDENTIFIERS as RDF_IDENTIFIERS
from attdec.sources.rgp.magic import SQTT_MAGIC as SQTT_MAGIC
from attdec.sources.rgp.structs import Struct

# ---------------------------------------------------------------- SQTT file format
FILE_HEADER = Struct(
    "FileHeader",
    [
        ("magic", "I"),
        ("version_major", "I"),
        ("version_minor", "I"),
        ("flags", "I"),
        ("chunk_offset", "i"),
        ("second", "i"),
        ("minute", "i"),
        ("hour", "i"),
        ("day_in_month", "i"),
        ("month", "i"),
        ("year", "i"),
        ("day_in_week", "i"),
        ("day_in_year", "i"),
        ("is_daylight_savings", "i"),
    ],
    56,
)
# chunk_id: type [0..7], index [8..15], reserved [16..31]
CHUNK_HEADER = Struct(
    "ChunkHeader", [("chunk_id", "I"), ("minor", "H"), ("major", "H"), ("size", "i"), ("padding", "i")], 16
)

ASIC_INFO, SQTT_DESC, SQTT_DATA, API_INFO, RESERVED = 0, 1, 2, 3, 4
QUEUE_EVENT_TIMINGS, CLOCK_CALIBRATION, CPU_INFO, SPM_DB = 5, 6, 7, 8
CODE_OBJECT_DATABASE, CODE_OBJECT_LOADER_EVENTS, PSO_CORRELATION, INSTRUMENTATION_TABLE = 9, 10, 11, 12
DERIVED_SPM_DB = 128
CHUNK_NAMES = {
    ASIC_INFO: "ASIC_INFO",
    SQTT_DESC: "SQTT_DESC",
    SQTT_DATA: "SQTT_DATA",
    API_INFO: "API_INFO",
    RESERVED: "RESERVED",
    QUEUE_EVENT_TIMINGS: "QUEUE_EVENT_TIMINGS",
    CLOCK_CALIBRATION: "CLOCK_CALIBRATION",
    CPU_INFO: "CPU_INFO",
    SPM_DB: "SPM_DB",
    CODE_OBJECT_DATABASE: "CODE_OBJECT_DATABASE",
    CODE_OBJECT_LOADER_EVENTS: "CODE_OBJECT_LOADER_EVENTS",
    PSO_CORRELATION: "PSO_CORRELATION",
    INSTRUMENTATION_TABLE: "INSTRUMENTATION_TABLE",
    DERIVED_SPM_DB: "DERIVED_SPM_DB",
}

# Chunk bodies, each after its 16-byte CHUNK_HEADER.
ASIC_INFO_BODY = Struct(
    "AsicInfo",
    [
        ("flags", "Q"),
        ("trace_shader_core_clock", "Q"),
        ("trace_memory_clock", "Q"),
        ("device_id", "i"),
        ("device_revision_id", "i"),
        ("vgprs_per_simd", "i"),
        ("sgprs_per_simd", "i"),
        ("shader_engines", "i"),
        ("compute_unit_per_shader_engine", "i"),
        ("simd_per_compute_unit", "i"),
        ("wavefronts_per_simd", "i"),
        ("minimum_vgpr_alloc", "i"),
        ("vgpr_alloc_granularity", "i"),
        ("minimum_sgpr_alloc", "i"),
        ("sgpr_alloc_granularity", "i"),
        ("hardware_contexts", "i"),
        ("gpu_type", "i"),
        ("gfxip_level", "i"),
        ("gpu_index", "i"),
        ("gds_size", "i"),
        ("gds_per_shader_engine", "i"),
        ("ce_ram_size", "i"),
        ("ce_ram_size_graphics", "i"),
        ("ce_ram_size_compute", "i"),
        ("max_number_of_dedicated_cus", "i"),
        ("vram_size", "q"),
        ("vram_bus_width", "i"),
        ("l2_cache_size", "i"),
        ("l1_cache_size", "i"),
        ("lds_size", "i"),
        ("gpu_name", "256s"),
        ("alu_per_clock", "f"),
        ("texture_per_clock", "f"),
        ("prims_per_clock", "f"),
        ("pixels_per_clock", "f"),
        ("gpu_timestamp_frequency", "Q"),
        ("max_shader_core_clock", "Q"),
        ("max_memory_clock", "Q"),
        ("memory_ops_per_clock", "I"),
        ("memory_chip_type", "i"),
        ("lds_granularity", "I"),
        ("cu_mask", "64H"),  # [32 SEs][2 SAs]
        ("", "128x"),
        ("active_pixel_packer_mask", "4I"),
        ("", "16x"),
        ("gl1_cache_size", "I"),
        ("instruction_cache_size", "I"),
        ("scalar_cache_size", "I"),
        ("mall_cache_size", "I"),
        ("", "4x"),
    ],
    768 - 16,
)
SQTT_DESC_BODY = Struct(
    "SqttDesc",
    [
        ("shader_engine_index", "i"),
        ("sqtt_version", "I"),
        ("instrumentation_spec_version", "h"),
        ("instrumentation_api_version", "h"),
        ("compute_unit_index", "i"),
    ],
    32 - 16,
)
SQTT_DATA_BODY = Struct("SqttData", [("offset", "i"), ("size", "i")], 24 - 16)
API_INFO_BODY = Struct(
    "ApiInfo",
    [
        ("api_type", "I"),
        ("major_version", "H"),
        ("minor_version", "H"),
        ("profiling_mode", "I"),
        ("", "4x"),
        ("profiling_mode_data", "512s"),
        ("instruction_trace_mode", "I"),
        ("", "4x"),
        ("instruction_trace_data", "Q"),  # API PSO filter, or the SE mask in its low 32 bits
    ],
    560 - 16,
)
CPU_INFO_BODY = Struct(
    "CpuInfo",
    [
        ("vendor_id", "16s"),
        ("processor_brand", "48s"),
        ("", "8x"),
        ("cpu_timestamp_freq", "Q"),
        ("clock_speed", "I"),
        ("num_logical_cores", "I"),
        ("num_physical_cores", "I"),
        ("system_ram_size", "I"),
    ],
    112 - 16,
)
# CODE_OBJECT_DATABASE, CODE_OBJECT_LOADER_EVENTS and PSO_CORRELATION: `offset` is the chunk's own file offset
CODE_OBJECT_DATABASE_BODY = Struct(
    "CodeObjectDatabase", [("offset", "I"), ("flags", "I"), ("size", "I"), ("record_count", "I")], 16
)
CODE_OBJECT_RECORD = Struct("CodeObjectRecord", [("size", "I")], 4)  # then `size` bytes (4-aligned) of ELF
RECORD_TABLE_BODY = Struct(
    "RecordTable", [("offset", "I"), ("flags", "I"), ("record_size", "I"), ("record_count", "I")], 16
)
LOADER_EVENT = Struct(
    "LoaderEvent",
    [("loader_event_type", "I"), ("", "4x"), ("base_address", "Q"), ("code_object_hash", "2Q"), ("time_stamp", "Q")],
    40,
)
PSO_RECORD = Struct(
    "PsoCorrelation", [("api_pso_hash", "Q"), ("pipeline_hash", "2Q"), ("api_level_obj_name", "64s")], 88
)
QUEUE_EVENT_TIMINGS_BODY = Struct(
    "QueueEventTimings",
    [
        ("queue_info_table_record_count", "I"),
        ("queue_info_table_size", "I"),
        ("queue_event_table_record_count", "I"),
        ("queue_event_table_size", "I"),
    ],
    32 - 16,
)
CLOCK_CALIBRATION_BODY = Struct(
    "ClockCalibration", [("cpu_timestamp", "Q"), ("gpu_timestamp", "Q"), ("", "8x")], 40 - 16
)
SPM_DB_BODY = Struct(
    "SpmDb",
    [
        ("flags", "I"),
        ("preamble_size", "I"),
        ("num_timestamps", "I"),
        ("num_spm_counter_info", "I"),
        ("spm_counter_info_size", "I"),
        ("sample_interval", "I"),
    ],
    40 - 16,
)
# The smallest chunk of each type Mesa and RGP write (its header plus fixed body).
MIN_CHUNK_SIZE = {
    ASIC_INFO: 16 + ASIC_INFO_BODY.size,
    SQTT_DESC: 16 + SQTT_DESC_BODY.size,
    SQTT_DATA: 16 + SQTT_DATA_BODY.size,
    API_INFO: 16 + API_INFO_BODY.size,
    QUEUE_EVENT_TIMINGS: 16 + QUEUE_EVENT_TIMINGS_BODY.size,
    CLOCK_CALIBRATION: 16 + CLOCK_CALIBRATION_BODY.size,
    CPU_INFO: 16 + CPU_INFO_BODY.size,
    SPM_DB: 16 + SPM_DB_BODY.size,
    CODE_OBJECT_DATABASE: 16 + CODE_OBJECT_DATABASE_BODY.size,
    CODE_OBJECT_LOADER_EVENTS: 16 + RECORD_TABLE_BODY.size,
    PSO_CORRELATION: 16 + RECORD_TABLE_BODY.size,
}
# Chunk types whose body starts with the chunk's own file offset (a strong check when re-synchronising).
SELF_OFFSET = {CODE_OBJECT_DATABASE, CODE_OBJECT_LOADER_EVENTS, PSO_CORRELATION}

# ---------------------------------------------------------------- RDF container
RDF_VERSION = 3
RDF_HEADER = Struct(
    "RdfHeader",
    [("identifier", "8s"), ("version", "I"), ("", "4x"), ("index_offset", "q"), ("index_size", "q")],
    32,
)
RDF_INDEX_ENTRY = Struct(
    "RdfIndexEntry",
    [
        ("chunk_id", "16s"),
        ("compression", "B"),  # 0 none, 1 zstd
        ("", "3x"),
        ("version", "I"),
        ("header_offset", "q"),
        ("header_size", "q"),
        ("data_offset", "q"),
        ("data_size", "q"),
        ("uncompressed_size", "q"),
    ],
    64,
)
RDF_SQTT_DATA_HEADER = Struct(
    "RdfSqttDataHeader",
    [
        ("pci_id", "I"),
        ("shader_engine", "I"),
        ("sqtt_version", "I"),
        ("instrumentation_spec_version", "I"),
        ("instrumentation_api_version", "I"),
        ("wgp_index", "I"),
        ("trace_buffer_size", "Q"),
        ("flags", "I"),  # bit 0: instruction timing enabled
    ],
    36,  # 40 with the C compiler's tail padding; older writers may stop at 36
)
RDF_CODE_OBJECT_HEADER = Struct("RdfCodeObjectHeader", [("pci_id", "I"), ("", "4x"), ("code_object_hash", "2Q")], 24)
RDF_COUNT_HEADER = Struct("RdfCountHeader", [("count", "I")], 4)  # COLoadEvent, PsoCorrelation
RDF_LOAD_EVENT = Struct(
    "RdfLoadEvent",
    [
        ("pci_id", "I"),
        ("loader_event_type", "I"),
        ("base_address", "Q"),
        ("code_object_hash", "2Q"),
        ("timestamp", "Q"),
    ],
    40,
)
RDF_PSO_RECORD = Struct(
    "RdfPsoCorrelation",
    [("pci_id", "I"), ("", "4x"), ("api_pso_hash", "Q"), ("pipeline_hash", "2Q"), ("api_level_obj_name", "64s")],
    96,
)
RDF_ASIC_INFO = Struct(
    "RdfAsicInfo",
    [
        ("pci_id", "I"),
        ("", "4x"),
        ("shader_core_clock_frequency", "Q"),
        ("memory_clock_frequency", "Q"),
        ("gpu_timestamp_frequency", "Q"),
        ("max_shader_core_clock", "Q"),
        ("max_memory_clock", "Q"),
        ("device_id", "i"),
        ("device_revision_id", "i"),
        ("vgprs_per_simd", "i"),
        ("sgprs_per_simd", "i"),
        ("shader_engines", "i"),
        ("compute_unit_per_shader_engine", "i"),
        ("simd_per_compute_unit", "i"),
        ("wavefronts_per_simd", "i"),
        ("minimum_vgpr_alloc", "i"),
        ("vgpr_alloc_granularity", "i"),
        ("minimum_sgpr_alloc", "i"),
        ("sgpr_alloc_granularity", "i"),
        ("hardware_contexts", "i"),
        ("gpu_type", "I"),
        ("gfxip_level", "3H"),  # major, minor, stepping
        ("", "2x"),
        ("gpu_index", "i"),
        ("ce_ram_size", "i"),
        ("ce_ram_size_graphics", "i"),
        ("ce_ram_size_compute", "i"),
        ("max_number_of_dedicated_cus", "i"),
        ("", "4x"),
        ("vram_size", "q"),
        ("vram_bus_width", "i"),
        ("l2_cache_size", "i"),
        ("l1_cache_size", "i"),
        ("lds_size", "i"),
        ("gpu_name", "256s"),
        ("alu_per_clock", "f"),
        ("texture_per_clock", "f"),
        ("prims_per_clock", "f"),
        ("pixels_per_clock", "f"),
        ("memory_ops_per_clock", "I"),
        ("memory_chip_type", "I"),
        ("lds_granularity", "I"),
        ("cu_mask", "64H"),
        ("pixel_packer_mask", "4I"),
        ("gl1_cache_size", "I"),
        ("inst_cache_size", "I"),
        ("scalar_cache_size", "I"),
        ("mall_cache_size", "I"),
        ("", "4x"),
    ],
    608,
)
