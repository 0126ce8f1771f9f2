"""Inputs -> `Dispatch`es (attdec.sources.pipeline), and the registry of input kinds.

An input kind is a module of this package with three functions: `detect(path) -> bool` (cheap, no side
effects), `load(path, tracker) -> [Dispatch | RawDispatch]` and `weight(path) -> int` (progress units
loading, and decoding, the path takes). Adding one is writing such a module and naming it below. Walking
a folder imports every kind's module to ask `detect` about each entry, so a kind's module imports at its
top only what detection needs, and what reading needs (pickle, csv, the raw model) in the functions
that read. This module is plain data so that `--help` can list the kinds without importing numpy.
"""

# --input-format name -> (module, what it is). Recognition order: the first kind whose detect() accepts
# a path claims it.
KINDS = {
    "ui_output": (
        "ui_output",
        "a rocprofv3 ui_output dispatch folder (filenames.json, or code.json and wave files) or a .zip/.tar.* of one",
    ),
    "tinygrad": ("tinygrad", "a tinygrad profile.pkl"),
    "rocprof-raw": (
        "rocprof_raw",
        "a rocprofv3 session folder (*_shader_engine_*.att files, with code objects or its ui_output code.json)",
    ),
    "capture": ("capture", "a capture folder (capture.json, per-SE .att blobs, code objects)"),
    "rgp": ("rgp", "a Radeon GPU Profiler .rgp file (SQTT file from Mesa RADV or tinygrad, or RGP 2.x RDF)"),
}
