"""attdec: decode AMD GPU thread traces (SQTT) and rank where kernels stall.

The public API (attdec.api, docs/api.md) is importable from here (`attdec.open`, `attdec.hotspots`,
...). It is imported on first use, so that `import attdec` (and the command line's --help) stays cheap.
"""

__version__ = "0.2.0"

__all__ = [
    "__version__",
    "advise",
    "cfg",
    "code_object_kernels",
    "control_flow",
    "counters",
    "decode",
    "decode_raw",
    "decode_raw_blobs",
    "describe",
    "diff",
    "disassemble",
    "hidden_latency",
    "hotspots",
    "html_report",
    "instructions",
    "kernel",
    "loops",
    "noise",
    "occupancy",
    "open",
    "open_blobs",
    "open_inputs",
    "open_raw",
    "prune_empty",
    "regressions",
    "save",
    "stall_stacks",
    "tokens",
    "waits",
    "wave_rows",
    "waves",
]
_API = frozenset(__all__[1:])


def __getattr__(name: str):
    if name in _API:
        from attdec import api

        return getattr(api, name)
    raise AttributeError(f"module 'attdec' has no attribute {name!r}")
