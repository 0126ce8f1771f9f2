"""Analyses over the record model (model in, results out, no I/O): stall classification, hotspots, waves.

The option vocabularies below live here, not in the modules that use them, so that the command line can
list them without importing numpy.
"""

import posixpath
import re

BY = ("line", "instruction", "file")  # what hotspots ranks
FRAMES = ("inner", "outer")  # which frame of an inline chain a line is charged to
WAVE_SORT_KEYS = ("position", "begin", "end", "duration", "instructions", "stall", "share", "cu")

_SLASHES = re.compile(r"/{2,}")


def norm_path(path: str) -> str:
    """'/a/./b//c/../d.py' -> '/a/b/d.py': one spelling per file (compilers record paths unnormalised)."""
    if "/" not in path:
        return path
    return posixpath.normpath(_SLASHES.sub("/", path))
