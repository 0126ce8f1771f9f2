"""attdec: decode AMD GPU thread traces (SQTT) and rank where kernels stall.

The public API (attdec.api, docs/api.md) is importable from here: `attdec.open`, `attdec.decode`,
`attdec.hotspots`, `attdec.waves`, `attdec.instructions`, `attdec.occupancy`, `attdec.open_raw`,
`attdec.save`. It is imported on first use, so that `import attdec` (and the command line's --help) stays cheap.
"""

__version__ = "0.2.0"

__all__ = ["__version__", "decode", "hotspots", "instructions", "occupancy", "open", "open_raw", "save", "waves"]
_API = frozenset(__all__[1:])


def __getattr__(name: str):
    if name in _API:
        from attdec import api

        return getattr(api, name)
    raise AttributeError(f"module 'attdec' has no attribute {name!r}")
