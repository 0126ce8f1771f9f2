"""Analyses over the record model (model in, results out, no I/O): stall classification, hotspots, waves.

The option vocabularies below live here, not in the modules that use them, so that the command line can
list them without importing numpy.
"""

import posixpath
import re

BY = ("line", "instruction", "file")  # what hotspots ranks
COMPARE_BY = (*BY, "type")  # the rows of `attdec diff` / `attdec noise` (per stall type as well)
METRICS = ("cycles", "stall")  # what diff ranks, marks and gates by
FRAMES = ("inner", "outer")  # which frame of an inline chain a line is charged to
CHARGES = ("wait", "producer")  # where a wait's stall counts: on the wait, or on what it waited for
COUNTER_BY = ("total", "se", "cu", "instance")  # how `counters` splits each counter
WAVE_SORT_KEYS = ("position", "begin", "end", "duration", "instructions", "stall", "stall_share", "share", "cu")
# Wave-table columns under an earlier name that is still accepted (sort keys, `Table` lookups): old -> current
RENAMED_COLUMNS = {"share": "stall_share"}

_SLASHES = re.compile(r"/{2,}")


def norm_path(path: str) -> str:
    """'/a/./b//c/../d.py' -> '/a/b/d.py': one spelling per file (compilers record paths unnormalised)."""
    if "/" not in path:
        return path
    return posixpath.normpath(_SLASHES.sub("/", path))
